"""A capacity search (docs/experiments.md, "surge capacity"): surge.analysis.capacity_search's
CapacitySearch, each step one short open-model run through the runner (recorded, role ``step
N``), its Step read from the run's summary over the load window; a cooldown before each step
(longer while requests cut off at the end of the last may still be at the target); each step
printed with its verdict as it is judged. The result and every step's evidence go in
experiment.json, so ``surge show`` reprints it from the document alone."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from surge.analysis.capacity_search import OUTCOME_WORDS, CapacityResult, CapacitySearch, SearchStep, findings
from surge.analysis.steadiness import Steadiness, Step, judge_step
from surge.core.errors import BadInput
from surge.core.exit_codes import Outcome
from surge.core.limits import MAX_RATE
from surge.core.redact import redact_text
from surge.experiments import runner
from surge.experiments.outcome import capacity_outcome
from surge.experiments.recorder import ExperimentRecord
from surge.experiments.saturation_watch import SaturationWatch, stopped_text
from surge.experiments.slo_choice import Slo, choose_slo, verdicts_document, with_slo_percentiles
from surge.plan.model import ConstantArrivalRate
from surge.present import numbers as fmt
from surge.run.sinks import COMMAND_VIEW
from surge.run.spec import Overrides, PreparedRun, TestSpec

BRACKET_FRACTION = 0.5
"""BRACKET_FRACTION of the step duration is the length of a bracketing step (at least
MIN_BRACKET_S, at most the step duration): far from the capacity a shorter run tells pass from
fail, and a pass it gets wrong is caught by the full-length confirmation."""

MIN_BRACKET_S = 2.0
"""MIN_BRACKET_S is the shortest bracketing step (the served rate needs a whole interval)."""


def bracket_s(step_s: float) -> float:
    """bracket_s is a bracketing step's length for steps of ``step_s``."""
    return min(step_s, max(MIN_BRACKET_S, step_s * BRACKET_FRACTION))


DEFAULT_COOLDOWN_S = 1.0
"""DEFAULT_COOLDOWN_S is the pause before each step after the first, unless --cooldown says otherwise."""

DEFAULT_STEADINESS = Steadiness()
"""DEFAULT_STEADINESS are the steady-state rules of a step unless --max-late says otherwise."""

MAX_SETTLE_S = 30.0
"""MAX_SETTLE_S bounds the extra wait for the target to finish requests cut off at a step's end."""

GENERATOR_RETRIES = 1
"""GENERATOR_RETRIES is how many times at least a step is measured again (more with --retries)
when the generator limited it (it says nothing about the target) or when it failed by a margin
(the SLO alone, or a served rate within 5 % of the rate alone, latency not rising: a pause of a
shared machine looks the same)."""

OVERLOADED = 0.05
"""OVERLOADED: a step served short of the rate sent by more than this fraction (more than a
pause of a shared machine makes) was overloaded; its first interval's latency is then queue."""

TREND_POINTS = 4
"""TREND_POINTS: with at least this many counts of requests in flight over the load window, a
count above rate × latency that stopped growing is the target's own level (its latency grew as it
filled, as an inference server's batch does), not a queue: what it fell behind by is at most the
count's Theil–Sen slope (see served)."""

EDGE_S = 1e-6
"""EDGE_S is the tolerance when comparing an interval's bounds with the load window's."""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _latency(entry: Mapping[str, Any], metric: str, stat: str) -> float | None:
    latency = (entry.get("latency") or {}).get(metric) or {}
    return _number(latency.get(stat)) if latency.get("count") else None


def load_window_s(summary: Mapping[str, Any]) -> float | None:
    """load_window_s is how long the step offered load: ``throughput.window_s`` when the
    record's rates are over the load window (it has a ``drain``), else ``duration_s``."""
    if isinstance(summary.get("drain"), Mapping):
        window = _number((summary.get("throughput") or {}).get("window_s"))
        if window:
            return window
    return _number(summary.get("duration_s"))


def drain_of(summary: Mapping[str, Any]) -> tuple[float | None, int]:
    """drain_of is the drain after the load: its length in seconds (the record's
    ``drain.seconds``, else the run's elapsed time past its load window) and the requests cut
    off in it (``drain.interrupted``, else ``requests.interrupted``)."""
    drain = summary.get("drain")
    if isinstance(drain, Mapping):
        return _number(drain.get("seconds")), int(drain.get("interrupted") or 0)
    window, elapsed = load_window_s(summary), _number(summary.get("elapsed_s"))
    seconds = max(0.0, elapsed - window) if window is not None and elapsed is not None else None
    return seconds, int((summary.get("requests") or {}).get("interrupted") or 0)


def load_intervals(summary: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """load_intervals are the run's intervals of the load window, in order: those that start
    before it ends (the engine ends the last one when the load stops, a few ms after the window's
    nominal end; the drain's start at or after it)."""
    window = load_window_s(summary)
    return [
        i for i in summary.get("intervals") or [] if window is None or float(i.get("start_s") or 0.0) < window - EDGE_S
    ]


def interval_p95(summary: Mapping[str, Any]) -> list[float | None]:
    """interval_p95 is the p95 of the responses of each interval of the load window, in order
    (None for an interval without responses), timed from the actual send when the record has
    it (a queue at the target, not the generator's lateness), else from the intended time."""
    found: list[float | None] = []
    for interval in load_intervals(summary):
        p95 = _latency(interval, "service_time", "p95_ms")
        found.append(p95 if p95 is not None else _latency(interval, "all", "p95_ms"))
    return found


def served(summary: Mapping[str, Any], lead_ms: float | None = None) -> tuple[float | None, float | None]:
    """served is the rate the target answered the step's requests at, and the rate the
    generator sent them at over the load window (None, None without one). By Little's law a
    target that keeps up has about rate × latency requests in flight; the queue above that at
    the end of an interval, over the time since the start, is how far the target fell behind
    the rate sent: served = sent rate − the median of that over the load window's whole
    intervals, or − the count's growth per second when that is less and there are TREND_POINTS
    counts or more (a level that stopped growing is the target's, not a queue)
    (in flight counted by the engine at each interval's end; the latency: the first
    interval's median; when that makes the target clearly overloaded, short by more than
    OVERLOADED of the rate sent, at most ``lead_ms``, the lowest median latency of a step
    that passed, a request that did not queue: such a target queues within its first
    interval already, and that queue is not latency it is owed); with a ``drain`` in the
    record, also at the load's end (the drain's responses and cut-off requests). A few requests stuck at the end weigh
    nothing. A window without a whole interval: every response over the load window plus the
    drain's excess over the first interval's p99."""
    window = load_window_s(summary)
    if not window:
        return None, None
    requests = summary.get("requests") or {}
    sent_rate = float(requests.get("sent") or 0) / window
    intervals = summary.get("intervals") or []
    in_flight = [
        (float(i["end_s"]), float(i["in_flight"]))
        for i in load_intervals(summary)
        if isinstance(i.get("in_flight"), (int, float)) and i.get("end_s")
    ]
    drain = summary.get("drain")
    if in_flight and isinstance(drain, Mapping) and "responses" in drain:  # what was in flight when the load ended
        in_flight.append((window, float(drain.get("responses") or 0) + float(drain.get("interrupted") or 0)))
    if in_flight:

        def behind(lead_s: float) -> float:
            return max(0.0, statistics.median((n - sent_rate * lead_s) / t for t, n in in_flight))

        first_ms = _latency(intervals[0], "all", "p50_ms") or 0.0
        served_rate = sent_rate - behind(first_ms / 1000)
        if lead_ms is not None and lead_ms < first_ms and served_rate < sent_rate * (1 - OVERLOADED):
            served_rate = sent_rate - behind(lead_ms / 1000)
        if len(in_flight) >= TREND_POINTS and served_rate < sent_rate:
            served_rate = max(served_rate, sent_rate - max(0.0, _growth_per_s(in_flight)))
        return served_rate, sent_rate
    drain_s, _ = drain_of(summary)
    p99_ms = _latency(intervals[0], "all", "p99_ms") if intervals else None
    excess = max(0.0, (drain_s or 0.0) - (p99_ms or 0.0) / 1000)
    return float(requests.get("responses") or 0) / (window + excess), sent_rate


def _growth_per_s(in_flight: Sequence[tuple[float, float]]) -> float:
    """_growth_per_s is how fast the count of requests in flight grew over the load window: the
    Theil–Sen slope of (time, count), robust to a pause's bump."""
    from scipy.stats import theilslopes  # type: ignore[import-untyped]  # function-local: 0.5 s of start-up

    times, counts = zip(*in_flight, strict=True)
    return float(theilslopes(counts, times).slope)


def from_actual_send(summary: Mapping[str, Any]) -> dict[str, Any]:
    """from_actual_send is the summary with every response's latency timed from its actual
    send (``latency.service_time``) in place of the intended time (``latency.all``), at the
    run, scenario and tag levels: the SLO judged on it tells the generator's lateness from
    the target's wait."""

    def swap(entry: Mapping[str, Any]) -> dict[str, Any]:
        latency = entry.get("latency")
        if not isinstance(latency, Mapping) or "service_time" not in latency:
            return dict(entry)
        return {**entry, "latency": {**latency, "all": latency["service_time"]}}

    return {**swap(summary), **{key: [swap(e) for e in summary.get(key) or []] for key in ("scenarios", "tags")}}


def client_cap(prepared: PreparedRun, test: TestSpec) -> tuple[int | None, str | None]:
    """client_cap is the step's client-side cap on requests in flight and its name: the
    arrival-rate executors' ``max_vus`` summed (``--max-in-flight N`` for a URL test, the
    default cap when none was given; ``max_vus N`` for a scenario file)."""
    caps = [
        s.executor.max_vus
        for s in prepared.compiled.main.scenarios
        if isinstance(s.executor, ConstantArrivalRate) and s.executor.max_vus
    ]
    if not caps:
        return None, None
    cap = sum(caps)
    if test.is_file:
        return cap, f"max_vus {cap:,}"
    return (
        cap,
        f"--max-in-flight {cap}" if test.max_in_flight is not None else f"the in-flight cap {cap:,} (--max-in-flight)",
    )


def step_of(
    rate: float,
    summary: Mapping[str, Any],
    figures: Mapping[str, float | None],
    slo: Slo,
    cap: tuple[int | None, str | None] = (None, None),
    lead_ms: float | None = None,
) -> Step:
    """step_of is what a step's run measured, from its summary document: the key figures, the
    per-interval p95 of the load window, the generator's sent, late and dropped counts, the
    rate served (and the rate sent; ``lead_ms``: the lowest median latency of a step that
    passed, see served), the load window and the drain, the SLO judged on the run's own result
    and on latency from the actual send, the client cap with the peak in flight, and why the
    over-saturation rule stopped the run early, if it did."""
    requests = summary.get("requests") or {}
    achieved, sending = served(summary, lead_ms)
    drain_s, _ = drain_of(summary)
    peak = summary.get("peak_concurrency")
    return Step(
        rate,
        dict(figures),
        interval_p95(summary),
        int(requests.get("sent") or 0),
        int(requests.get("late") or 0),
        int(requests.get("dropped") or 0),
        achieved if achieved is not None else figures.get("responses_per_s"),
        slo.judge(summary) if requests else None,
        duration_s=load_window_s(summary),
        drain_s=drain_s,
        sending_per_s=sending,
        sent_verdicts=slo.judge(from_actual_send(summary)) if requests else None,
        in_flight_cap=cap[0],
        cap_name=cap[1],
        peak_in_flight=int(peak) if isinstance(peak, int) else None,
        over_saturated=stopped_text(summary),
    )


def settle_s(summary: Mapping[str, Any], achieved: float | None) -> float:
    """settle_s is how long the target may still be busy after a step: the requests cut off at
    its end, at the rate it served them (at most MAX_SETTLE_S; 0 when none were cut off)."""
    _, cut_off = drain_of(summary)
    if cut_off <= 0:
        return 0.0
    return MAX_SETTLE_S if not achieved or achieved <= 0 else min(MAX_SETTLE_S, cut_off / achieved)


def measure_with(
    experiment: ExperimentRecord,
    test: TestSpec,
    slo: Slo,
    step_s: float,
    runs: list[list[str]],
    *,
    retries: int = 0,
    steadiness: Steadiness = DEFAULT_STEADINESS,
    cooldown_s: float = DEFAULT_COOLDOWN_S,
    oversaturation_stop: bool = True,
) -> Callable[[float, float | None], Step]:
    """measure_with is the search's ``measure(rate, duration_s=None)``: one recorded open-model
    run of ``duration_s`` (else ``step_s``) at the rate (role ``step N``), after ``cooldown_s``
    (none before the first run) plus the time the target may still spend on requests cut off at the end of the last run
    (settle_s, said on stderr); when it fails (judged as the search will judge it) it is run
    again, up to ``retries`` times, and at least GENERATOR_RETRIES times when the generator
    limited it or it failed by a margin (StepVerdict.marginal) (role ``step N retry K``); the
    first attempt that passes, else the last, is the step; with ``oversaturation_stop`` a run
    stops early once over-saturated (SaturationWatch), and its step fails. Each step's run ids,
    in order, are appended to ``runs``."""
    owed: list[float] = []  # the wait before the next run (empty before the first)
    medians: list[float] = []  # the median latency of each step that passed

    def run(rate: float, prepared: PreparedRun, role: str, cap: tuple[int | None, str | None]) -> tuple[Step, str]:
        if owed:
            if owed[0] > 0:
                print(
                    redact_text(
                        f"waiting {cooldown_s + owed[0]:,.1f} s before {role}: requests cut off at the end "
                        f"of the last run may still be at the target"
                    ),
                    file=sys.stderr,
                    flush=True,
                )
            runner.cooldown(cooldown_s + owed[0])
        watch = SaturationWatch(prepared.planned_s) if oversaturation_stop else None
        label = role.removeprefix("step ")
        report = runner.run_one(experiment, test, prepared, role=role, label=label, level=rate, stop_rule=watch)
        step = step_of(rate, report.summary, report.figures, slo, cap, min(medians, default=None))
        owed[:] = [settle_s(report.summary, step.achieved())]
        return step, report.run_id

    def measure(rate: float, duration_s: float | None = None) -> Step:
        prepared = with_slo_percentiles(test.prepare(Overrides(rate=rate, duration_s=duration_s or step_s)), slo)
        cap = client_cap(prepared, test)
        number, ids, attempt = len(runs) + 1, [], 0
        while True:
            step, run_id = run(rate, prepared, f"step {number}" + (f" retry {attempt}" if attempt else ""), cap)
            ids.append(run_id)
            verdict = judge_step(step, slo.conditions, steadiness)
            experiment.judged[run_id] = "passed" if verdict.passed else "failed"
            median = step.figures.get("p50_ms")
            if verdict.passed and median is not None:
                medians.append(median)
            suspect = verdict.outcome == "generator" or verdict.marginal
            allowed = max(retries, GENERATOR_RETRIES) if suspect else retries
            if verdict.passed or attempt >= allowed:
                break
            attempt += 1
            why = {"generator": "the generator could not keep its schedule"}.get(
                verdict.outcome,
                "it failed by a margin a pause of the machine also makes" if verdict.marginal else "it failed",
            )
            print(
                redact_text(
                    f"step {number} {fmt.rate(rate)}/s: {why}: measuring it again ({attempt} of {allowed} retries)"
                ),
                file=sys.stderr,
                flush=True,
            )
        runs.append(ids)
        return step

    return measure


def step_line(step: SearchStep) -> str:
    """step_line is a judged step's progress line: number, phase, rate, verdict and why."""
    why = "; ".join(step.verdict.failures if not step.passed else step.verdict.evidence)
    return redact_text(
        f"step {step.number} ({step.phase}) {fmt.rate(step.rate)}/s: {OUTCOME_WORDS[step.verdict.outcome]} — {why}"
    )


def print_step(step: SearchStep) -> None:
    """print_step prints a judged step's line on stderr (the search's ``on_step``)."""
    print(step_line(step), file=sys.stderr, flush=True)


def _step_document(step: SearchStep, run_ids: list[str]) -> dict[str, Any]:
    f, s, trend = step.step.figures, step.step, step.verdict.trend
    due = s.sent + s.dropped
    return {
        "number": step.number,
        "phase": step.phase,
        "rate": step.rate,
        "run_id": run_ids[-1] if run_ids else None,
        "attempts": run_ids,
        "passed": step.passed,
        "outcome": step.verdict.outcome,
        "limit": step.verdict.limit,
        "failures": list(step.verdict.failures),
        "evidence": list(step.verdict.evidence),
        "achieved_per_s": s.achieved(),
        "sent_per_s": s.sent_per_s(),
        **{k: f.get(k) for k in ("p50_ms", "p95_ms", "p99_ms", "failure_rate")},
        "sent": s.sent,
        "late": s.late,
        "dropped": s.dropped,
        "late_share": s.late / s.sent if s.sent else None,
        "dropped_share": s.dropped / due if due else None,
        "load_s": s.duration_s,
        "drain_s": s.drain_s,
        "in_flight_cap": s.in_flight_cap,
        "peak_in_flight": s.peak_in_flight,
        "over_saturated": s.over_saturated,
        "trend": {
            "intervals": trend.intervals,
            "slope_ms": trend.slope_ms,
            "slope_low_ms": trend.slope_low_ms,
            "slope_high_ms": trend.slope_high_ms,
            "rise": trend.rise,
            "rising": trend.rising,
        },
        "slo": verdicts_document(step.verdict.verdicts),
    }


def analysis_document(
    result: CapacityResult,
    slo: Slo,
    runs: list[list[str]],
    *,
    start_rate: float,
    max_rate: float | None,
    precision: float,
    step_s: float,
    cooldown_s: float = DEFAULT_COOLDOWN_S,
) -> dict[str, Any]:
    """analysis_document is the search as experiment.json holds it: the rate found and whether
    it was confirmed, the bracket and what limited its top when not the target (``limit``), the
    best passing step (``best``: rate, step number, evidence; confirmed or not), how it ended,
    the notes, the SLO, the seconds of load the steps offered, and every step with its
    outcome, verdict, figures, evidence and runs (``attempts``: the step's runs, retries
    included; ``run_id``: the one that counts)."""
    best = result.best
    return {
        "rate": result.rate,
        "high": result.high,
        "confirmed": result.confirmed,
        "limit": result.limit,
        "best": None
        if best is None
        else {"rate": best.rate, "step": best.number, "evidence": list(best.verdict.evidence)},
        "stop_reason": result.stop_reason,
        "notes": list(result.notes),
        "slo": slo.to_dict(),
        "start_rate": start_rate,
        "max_rate": max_rate,
        "precision": precision,
        "step_duration_s": step_s,
        "cooldown_s": cooldown_s,
        "bracket_duration_s": bracket_s(step_s),
        "load_s": sum(s.step.duration_s or step_s for s in result.steps),
        "steps": [_step_document(s, runs[i] if i < len(runs) else []) for i, s in enumerate(result.steps)],
    }


@dataclass(frozen=True)
class CapacityPlan:
    """CapacityPlan is what a capacity search runs: the first step's rate, the ceiling
    (``max_rate``; None: MAX_RATE), the ``precision`` at which bisecting stops ((high − low) /
    low), each step's length ``step_s``, the step budget, the fraction of late sends pointed out
    (``max_late``), the ``cooldown_s`` before each step after the first, how many times a
    failed step is measured again (``retries``), and whether a step's run stops early once
    over-saturated (``oversaturation_stop``; --no-oversaturation-stop turns it off)."""

    start_rate: float
    max_rate: float | None
    precision: float
    step_s: float
    max_steps: int
    max_late: float
    cooldown_s: float
    retries: int
    oversaturation_stop: bool = True


def run_capacity(test: TestSpec, plan: CapacityPlan, slo: Sequence[str]) -> tuple[ExperimentRecord, Outcome]:
    """run_capacity runs the capacity search of ``plan`` on ``test`` under the SLO ``slo``
    chooses (threshold expressions, else the scenario's thresholds; none at all: BadInput
    naming --slo, before anything is sent), each step printed as it is judged; it returns the
    concluded record (every step's run, verdict and evidence, the rate found) and the outcome
    (capacity_outcome)."""
    test = replace(test, slo=())  # the SLO judges the steps, not each run as its thresholds would
    choice = choose_slo(slo, test.prepare(Overrides(rate=plan.start_rate, duration_s=plan.step_s)))
    if not choice.conditions:
        raise BadInput(
            "--slo",
            "no SLO: give one, e.g. --slo 'p(99) < 100ms' --slo 'failure_rate < 0.1%', or a "
            "scenario file with thresholds",
        )
    parameters = {
        "start_rate": plan.start_rate,
        "max_rate": plan.max_rate,
        "precision": plan.precision,
        "step_duration_s": plan.step_s,
        "max_steps": plan.max_steps,
        "max_late": plan.max_late,
        "cooldown_s": plan.cooldown_s,
        "retries": plan.retries,
        "oversaturation_stop": plan.oversaturation_stop,
        "slo": choice.to_dict(),
        "test": test.describe(),
    }
    experiment = ExperimentRecord.for_test("capacity", test, parameters)
    steadiness = Steadiness(max_late=plan.max_late)
    run_ids: list[list[str]] = []

    def document(result: CapacityResult) -> dict[str, Any]:
        return analysis_document(
            result,
            choice,
            run_ids,
            start_rate=plan.start_rate,
            max_rate=plan.max_rate,
            precision=plan.precision,
            step_s=plan.step_s,
            cooldown_s=plan.cooldown_s,
        )

    def judged(step: SearchStep) -> None:
        print_step(step)
        if (view := COMMAND_VIEW.get()) is not None:  # --dashboard: the search path so far
            view.on_step(experiment.document, lambda: document(search.result("interrupted")))

    search = CapacitySearch(
        choice.conditions,
        plan.start_rate,
        max_rate=plan.max_rate if plan.max_rate is not None else MAX_RATE,
        precision=plan.precision,
        max_steps=plan.max_steps,
        steadiness=steadiness,
        on_step=judged,
    )
    result = None
    with experiment.running():
        measure = measure_with(
            experiment,
            test,
            choice,
            plan.step_s,
            run_ids,
            retries=plan.retries,
            steadiness=steadiness,
            cooldown_s=plan.cooldown_s,
            oversaturation_stop=plan.oversaturation_stop,
        )
        result = search.run(lambda rate: measure(rate, None), lambda rate: measure(rate, bracket_s(plan.step_s)))
    if result is None:
        result = search.result("interrupted")

    def analyse() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        analysis = document(result)
        return analysis, findings(analysis)

    experiment.conclude(analyse)
    return experiment, capacity_outcome(experiment.stopped, result, experiment.kept)
