"""A capacity search (docs/experiments.md, "surge capacity"): surge.analysis.capacity's
CapacitySearch, each step one short open-model run through the runner (recorded, role ``step
N``), its Step read from the run's summary; each step printed with its verdict as it is
judged. The result and every step's evidence go in experiment.json, so ``surge show`` reprints
it from the document alone."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from surge.analysis.capacity import CapacityResult, SearchStep
from surge.analysis.steadiness import Steadiness, Step, judge_step
from surge.experiments import runner
from surge.experiments.record import ExperimentRecord
from surge.experiments.slo_choice import Slo, verdicts_document, with_slo_percentiles
from surge.experiments.spec import Overrides, TestSpec
from surge.redact import redact_text


def interval_p95(summary: Mapping[str, Any]) -> list[float | None]:
    """interval_p95 is the p95 of every response in each interval of the run, in order (None
    for an interval without responses)."""
    found: list[float | None] = []
    for interval in summary.get("intervals") or []:
        latency = ((interval.get("latency") or {}).get("all") or {})
        p95 = latency.get("p95_ms") if latency.get("count") else None
        found.append(None if p95 is None else float(p95))
    return found


def step_of(rate: float, summary: Mapping[str, Any], figures: Mapping[str, float | None], slo: Slo) -> Step:
    """step_of is what a step's run measured, from its summary document: the key figures, the
    per-interval p95, the generator's sent, late and dropped counts, the achieved rate
    (responses per second) and the SLO judged on the run's own result."""
    requests = summary.get("requests") or {}
    return Step(rate, dict(figures), interval_p95(summary), int(requests.get("sent") or 0),
                int(requests.get("late") or 0), int(requests.get("dropped") or 0), figures.get("responses_per_s"),
                slo.judge(summary) if requests else None)


def measure_with(experiment: ExperimentRecord, test: TestSpec, slo: Slo, step_s: float, runs: list[list[str]], *,
                 retries: int = 0, steadiness: Steadiness = Steadiness()) -> Callable[[float], Step]:
    """measure_with is the search's ``measure(rate)``: one recorded open-model run of
    ``step_s`` at the rate (role ``step N``); when it fails (judged as the search will judge
    it) it is run again, up to ``retries`` times (role ``step N retry K``), and the first
    attempt that passes, else the last, is the step. Each step's run ids, in order, are
    appended to ``runs``."""
    def measure(rate: float) -> Step:
        prepared = with_slo_percentiles(test.prepare(Overrides(rate=rate, duration_s=step_s)), slo)
        number, ids = len(runs) + 1, []
        for attempt in range(retries + 1):
            role = f"step {number}" + (f" retry {attempt}" if attempt else "")
            report = runner.run_one(experiment, test, prepared, role=role, label=role.removeprefix("step "),
                                    level=rate)
            ids.append(report.run_id)
            step = step_of(rate, report.summary, report.figures, slo)
            if attempt < retries and not judge_step(step, slo.conditions, steadiness).passed:
                print(redact_text(f"step {number} {rate:,.1f}/s failed: measuring it again "
                                  f"({attempt + 1} of {retries} retries)"), file=sys.stderr, flush=True)
                continue
            break
        runs.append(ids)
        return step

    return measure


def step_line(step: SearchStep) -> str:
    """step_line is a judged step's progress line: number, phase, rate, verdict and why."""
    verdict = "pass" if step.passed else "fail"
    why = "; ".join(step.verdict.failures if not step.passed else step.verdict.evidence)
    return redact_text(f"step {step.number} ({step.phase}) {step.rate:,.1f}/s: {verdict} — {why}")


def print_step(step: SearchStep) -> None:
    """print_step prints a judged step's line on stderr (the search's ``on_step``)."""
    print(step_line(step), file=sys.stderr, flush=True)


def _step_document(step: SearchStep, run_ids: list[str]) -> dict[str, Any]:
    f, s, trend = step.step.figures, step.step, step.verdict.trend
    due = s.sent + s.dropped
    return {"number": step.number, "phase": step.phase, "rate": step.rate,
            "run_id": run_ids[-1] if run_ids else None, "attempts": run_ids,
            "passed": step.passed, "failures": list(step.verdict.failures), "evidence": list(step.verdict.evidence),
            "achieved_per_s": s.achieved(), **{k: f.get(k) for k in ("p50_ms", "p95_ms", "p99_ms", "failure_rate")},
            "sent": s.sent, "late": s.late, "dropped": s.dropped,
            "late_share": s.late / s.sent if s.sent else None, "dropped_share": s.dropped / due if due else None,
            "trend": {"intervals": trend.intervals, "slope_ms": trend.slope_ms, "slope_low_ms": trend.slope_low_ms,
                      "slope_high_ms": trend.slope_high_ms, "rise": trend.rise, "rising": trend.rising},
            "slo": verdicts_document(step.verdict.verdicts)}


def analysis_document(result: CapacityResult, slo: Slo, runs: list[list[str]], *, start_rate: float,
                      max_rate: float | None, precision: float, step_s: float) -> dict[str, Any]:
    """analysis_document is the search as experiment.json holds it: the rate found and whether
    it was confirmed, the bracket, how it ended, the notes, the SLO and every step with its
    verdict, figures, evidence and runs (``attempts``: the step's runs, retries included;
    ``run_id``: the one that counts)."""
    return {"rate": result.rate, "high": result.high, "confirmed": result.confirmed,
            "stop_reason": result.stop_reason, "notes": list(result.notes), "slo": slo.to_dict(),
            "start_rate": start_rate, "max_rate": max_rate, "precision": precision, "step_duration_s": step_s,
            "steps": [_step_document(s, runs[i] if i < len(runs) else []) for i, s in enumerate(result.steps)]}


def answer_text(analysis: Mapping[str, Any]) -> str:
    """answer_text is the search's answer in one sentence: the rate found (confirmed or not)
    and its bracket, or why there is none."""
    rate, high, reason = analysis["rate"], analysis["high"], analysis["stop_reason"]
    bracket = f"bracket [{rate:,.1f}, {high:,.1f}]/s" if rate is not None and high is not None else None
    if reason == "max_rate" and rate is not None:
        return f"capacity ≥ {rate:,.1f}/s: the maximum rate passed (--max-rate)"
    if rate is None:
        return {"nothing_passed": "no rate passed the SLO", "unconfirmed": "no rate was confirmed",
                "interrupted": "interrupted before any step passed",
                "max_steps": "the step budget ran out before any step passed"}.get(reason, f"no rate found ({reason})")
    state = "confirmed" if analysis["confirmed"] else "unconfirmed"
    why = {"interrupted": ", interrupted", "max_steps": ", step budget spent"}.get(reason, "")
    return f"capacity {rate:,.1f}/s ({state}{why})" + (f" · {bracket}" if bracket else "")


def findings(analysis: Mapping[str, Any]) -> list[dict[str, Any]]:
    """findings are the search's answer and its notes, in sentences."""
    return [{"kind": "capacity", "text": answer_text(analysis)}] + \
        [{"kind": "note", "text": note} for note in analysis["notes"]]
