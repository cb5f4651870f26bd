"""A sweep (docs/experiments.md, "surge sweep"): the test at each load level, lightest first,
each level an unmeasured warm-up run (recorded with role ``warmup ...``, left out of the
analysis) and then a measured run (role ``level ...``); after each level its figures, its zone
and a progress line; ``--stop-when broken`` ends the sweep at the first broken level. The
analysis (surge.analysis.curve: peak, knee, USL, zones) is stored in experiment.json with every
number the printer shows, so ``surge show`` reprints it from the document alone."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from surge.analysis.curve import (
    Knee,
    Level,
    Model,
    SweepAnalysis,
    ZoneRules,
    analyse_sweep,
    classify,
    failure_classes_text,
    findings,
    offered_text,
    stop_when_broken,
)
from surge.analysis.usl import UslFit, UslRefusal
from surge.core.exit_codes import Outcome
from surge.core.redact import redact_text
from surge.experiments import runner
from surge.experiments.outcome import sweep_outcome
from surge.experiments.recorder import ExperimentRecord
from surge.experiments.runner import RunReport
from surge.experiments.saturation_watch import SaturationWatch, stopped_text
from surge.experiments.settle import Settled, Settler
from surge.experiments.slo_choice import Slo, choose_slo, verdicts_document, with_slo_percentiles
from surge.present import numbers as fmt
from surge.run.sinks import COMMAND_VIEW
from surge.run.spec import Overrides, PreparedRun, TestSpec


@dataclass(frozen=True)
class SweepPlan:
    """SweepPlan: what a sweep runs: the ``model`` (closed: ``loads`` are VUs; open: arrival
    rates per second), each level's ``warmup_s`` (0: none) and measured ``duration_s``, the
    ``cooldown_s`` between levels, whether to stop at the first broken level, the ``slo``,
    ``drain_wait_s``, the bound of each wait for the target to drain the last level (0: none),
    and ``oversaturation_stop``: whether an open-model level's run stops early once over-saturated
    (a broken level; --no-oversaturation-stop turns it off)."""

    model: Model
    loads: list[float]
    duration_s: float
    warmup_s: float
    cooldown_s: float
    stop_when_broken: bool
    slo: Slo
    drain_wait_s: float = 0.0
    oversaturation_stop: bool = True

    def overrides(self, load: float, duration_s: float) -> Overrides:
        """overrides are one run's at ``load`` for ``duration_s``."""
        if self.model == "closed":
            return Overrides(vus=int(load), duration_s=duration_s)
        return Overrides(rate=load, duration_s=duration_s)

    def rules(self) -> ZoneRules:
        """rules are the zone rules: the SLO's conditions, or the default SLO without any."""
        return ZoneRules(slo=tuple(self.slo.conditions))


def level_label(model: str, load: float) -> str:
    """level_label names a level in roles and folders: ``vus=500``, ``rate=400``."""
    return f"vus={load:g}" if model == "closed" else f"rate={load:g}"


@dataclass(frozen=True)
class LevelRun:
    """LevelRun: one measured level: its ``level`` for the analysis, the measured run's
    ``report``, the warm-up run's id (None without a warm-up), and the wait for the target to
    drain the level before it (None for the first)."""

    level: Level
    report: RunReport
    warmup_run_id: str | None
    settled: Settled | None = None


def target_failures(summary: Mapping[str, Any]) -> tuple[float | None, dict[str, int]]:
    """target_failures are a level's failure rate and failure classes without the requests cut
    off at its end (``drain.interrupted``: still in flight when the grace period ran out): the
    level ended them, not the target. Interruptions within the load (a stop) still count."""
    requests, drain = summary.get("requests") or {}, summary.get("drain") or {}
    classes = {k: int(v) for k, v in (requests.get("failure_classes") or {}).items()}
    cut = int(drain.get("interrupted") or 0)
    if classes.get("interrupted"):
        classes["interrupted"] -= min(cut, classes["interrupted"])
        if not classes["interrupted"]:
            del classes["interrupted"]
    succeeded, failed = requests.get("succeeded"), requests.get("failed")
    if not isinstance(succeeded, int) or not isinstance(failed, int) or not requests.get("sent"):
        return None, classes
    interrupted = int(requests.get("interrupted") or 0) - min(cut, int(requests.get("interrupted") or 0))
    ended = succeeded + failed + interrupted
    return (failed + interrupted) / ended if ended else None, classes


def _level(load: float, report: RunReport, slo: Slo) -> Level:
    verdicts = slo.judge(report.summary) if slo.conditions and report.summary.get("requests") else None
    failure_rate, classes = target_failures(report.summary)
    figures = dict(report.figures)
    if report.summary.get("drain") is not None:
        figures["failure_rate"] = failure_rate
    return Level(load, figures, classes, verdicts, stopped_text(report.summary))


def prepare_levels(test: TestSpec, plan: SweepPlan) -> list[tuple[PreparedRun | None, PreparedRun]]:
    """prepare_levels prepares every level's warm-up (None without one) and measured run before
    anything is sent, so a level the test cannot take is refused (BadInput) up front."""
    prepared = []
    for load in plan.loads:
        warmup = test.prepare(plan.overrides(load, plan.warmup_s)) if plan.warmup_s > 0 else None
        prepared.append((warmup, test.prepare(plan.overrides(load, plan.duration_s))))
    return prepared


def run_levels(
    experiment: ExperimentRecord,
    test: TestSpec,
    plan: SweepPlan,
    prepared: Sequence[tuple[PreparedRun | None, PreparedRun]],
    done: list[LevelRun],
    settler: Settler | None = None,
) -> str | None:
    """run_levels runs the levels in order, appending each measured level to ``done`` (kept
    when a stop signal ends the sweep: KeyboardInterrupt passes through) and printing its
    line; before each level after the first, ``settler`` waits for the target to drain (None:
    a Settler of the plan's ``drain_wait_s``); it returns why it stopped early (``--stop-when
    broken``), or None."""
    settler = settler or Settler(test, plan.drain_wait_s)
    settler.measure_baseline()
    for i, (load, (warmup, measured)) in enumerate(zip(plan.loads, prepared, strict=True)):
        settled = None
        if i:
            runner.cooldown(plan.cooldown_s)
            settled = settler.wait()
            print(redact_text(f"before level {i + 1}/{len(plan.loads)}: {settled.text()}"), file=sys.stderr, flush=True)
        label = level_label(plan.model, load)
        warmup_id = None
        if warmup is not None:
            warmup_id = runner.run_one(  # left out of the analysis: its record only, no report
                experiment, test, warmup, role=f"warmup {label}", label=f"warmup {label}", level=load, reports=False
            ).run_id
        watch = SaturationWatch(measured.planned_s) if plan.model == "open" and plan.oversaturation_stop else None
        report = runner.run_one(
            experiment, test, measured, role=f"level {label}", label=label, level=load, stop_rule=watch
        )
        done.append(LevelRun(_level(load, report, plan.slo), report, warmup_id, settled))
        levels = [d.level for d in done]
        zone = classify(levels, plan.rules())[-1]
        experiment.judged[report.run_id] = f"zone {zone.zone}"
        if (stopped := done[-1].level.over_saturated) is not None:
            line = f"level {i + 1}/{len(plan.loads)} · {offered_text(plan.model, load)}: {stopped}"
            print(redact_text(line), file=sys.stderr, flush=True)
        print(
            redact_text(level_line(i + 1, len(plan.loads), plan.model, done[-1], zone.zone)),
            file=sys.stderr,
            flush=True,
        )
        if (view := COMMAND_VIEW.get()) is not None:  # --dashboard: the curve so far
            view.on_step(experiment.document, lambda: analyse(plan, done, None, settler))
        if plan.stop_when_broken and stop_when_broken(levels, plan.rules()) and i + 1 < len(plan.loads):
            rest = ", ".join(offered_text(plan.model, x) for x in plan.loads[i + 1 :])
            return (
                f"level {offered_text(plan.model, load)} is broken ({zone.reason}): --stop-when broken "
                f"ended the sweep; not run: {rest}"
            )
    return None


def level_line(number: int, total: int, model: str, done: LevelRun, zone: str) -> str:
    """level_line is a measured level's progress line: offered load, throughput, goodput,
    success rate, p50/p95/p99, failure classes and zone."""
    f, requests = done.level.figures, done.report.summary.get("requests") or {}
    x, good = f.get("responses_per_s"), f.get("successes_per_s")
    return (
        f"level {number}/{total} · {offered_text(model, done.level.load)}: "
        f"throughput {fmt.rate(x)}/s · goodput {fmt.rate(good)}/s · "
        f"success {fmt.percent(requests.get('success_rate'))} · p50 {fmt.ms(f.get('p50_ms'))} · "
        f"p95 {fmt.ms(f.get('p95_ms'))} · p99 {fmt.ms(f.get('p99_ms'))} ms · "
        f"failures {failure_classes_text(done.level.failure_classes)} · zone {zone}"
    )


def _usl_document(usl: UslFit | UslRefusal | None) -> dict[str, Any] | None:
    if usl is None:
        return None
    if isinstance(usl, UslRefusal):
        return {"refused": usl.reason}
    return {
        "sigma": usl.sigma,
        "kappa": usl.kappa,
        "lambda": usl.lambda_,
        "peak_n": usl.peak_n,
        "peak_throughput": usl.peak_throughput,
        "r_squared": usl.r_squared,
        "levels": usl.levels,
        "warnings": list(usl.warnings),
    }


def _knee_document(knee: Knee) -> dict[str, Any]:
    return {"load": knee.load, "throughput": knee.throughput, "reason": knee.reason}


def analysis_document(
    plan: SweepPlan,
    done: Sequence[LevelRun],
    analysis: SweepAnalysis,
    stopped_early: str | None,
    baseline: Settler | None = None,
) -> dict[str, Any]:
    """analysis_document is the sweep's analysis as experiment.json holds it: the model, the
    SLO, the levels planned, each measured level (figures, success rate, failure classes, SLO
    verdicts, zone and why), the peak, the knee, the USL fit (closed model) and why the sweep
    stopped early."""
    by_load = {d.level.load: d for d in done}
    levels = []
    for zone in analysis.zones:
        d = by_load[zone.load]
        f, requests = d.level.figures, d.report.summary.get("requests") or {}
        levels.append(
            {
                "load": d.level.load,
                "label": level_label(plan.model, d.level.load),
                "run_id": d.report.run_id,
                "position": d.report.position,
                "warmup_run_id": d.warmup_run_id,
                **{
                    k: f.get(k)
                    for k in ("responses_per_s", "successes_per_s", "p50_ms", "p95_ms", "p99_ms", "failure_rate")
                },
                "success_rate": requests.get("success_rate"),
                "failure_classes": dict(d.level.failure_classes),
                "drain": d.report.summary.get("drain"),
                "settled": None if d.settled is None else d.settled.document(),
                "slo": verdicts_document(d.level.verdicts or []),
                "zone": zone.zone,
                "zone_reason": zone.reason,
                "over_saturation": d.report.summary.get("stopped_early"),
            }
        )
    peak = analysis.peak
    return {
        "model": plan.model,
        "slo": plan.slo.to_dict(),
        "planned": list(plan.loads),
        "duration_s": plan.duration_s,
        "warmup_s": plan.warmup_s,
        "levels": levels,
        "peak": None if peak is None else {"load": peak.load, "throughput": peak.throughput},
        "knee": _knee_document(analysis.knee),
        "usl": _usl_document(analysis.usl),
        "stopped_early": stopped_early,
        "drain_wait_s": plan.drain_wait_s,
        "idle_probe": None
        if baseline is None
        else {"p50_ms": baseline.baseline_ms, "probe_requests": baseline.baseline_sent},
    }


def analyse(
    plan: SweepPlan, done: Sequence[LevelRun], stopped_early: str | None, baseline: Settler | None = None
) -> dict[str, Any]:
    """analyse is the analysis document of the levels measured so far (``baseline``: the
    settler whose idle probe preceded them)."""
    analysis = analyse_sweep([d.level for d in done], plan.model, plan.rules())
    return analysis_document(plan, done, analysis, stopped_early, baseline)


def run_sweep(test: TestSpec, plan: SweepPlan, slo: Sequence[str]) -> tuple[ExperimentRecord, Outcome]:
    """run_sweep runs the sweep experiment: ``test`` (its own duration dropped: each run's length is
    the level's) at each level of ``plan``, under the SLO ``slo`` chooses (threshold
    expressions; none: the scenario's thresholds, else the default SLO; it replaces the plan's),
    every level prepared before anything is sent (BadInput); it returns the concluded record
    (every run, the curve, zones, peak, knee, USL) and the outcome (sweep_outcome)."""
    # Each run's length is the level's (an override), also for a file; the SLO judges the levels
    # (their zones), not each run as its thresholds would.
    test = replace(test, duration=None, slo=())
    levels = prepare_levels(test, plan)
    choice = choose_slo(slo, levels[0][1])
    plan = replace(plan, slo=choice)
    prepared = [
        (None if w is None else with_slo_percentiles(w, choice), with_slo_percentiles(m, choice)) for w, m in levels
    ]
    parameters = {
        "model": plan.model,
        "levels": plan.loads,
        "duration_s": plan.duration_s,
        "warmup_s": plan.warmup_s,
        "cooldown_s": plan.cooldown_s,
        "drain_wait_s": plan.drain_wait_s,
        "stop_when": "broken" if plan.stop_when_broken else None,
        "oversaturation_stop": plan.oversaturation_stop and plan.model == "open",
        "slo": choice.to_dict(),
        "test": test.describe(),
    }
    experiment = ExperimentRecord.for_test("sweep", test, parameters)
    experiment.planned_s = [run.planned_s for pair in prepared for run in pair if run is not None]
    done: list[LevelRun] = []
    stopped_early = None
    settler = Settler(test, plan.drain_wait_s)
    with experiment.running():
        stopped_early = run_levels(experiment, test, plan, prepared, done, settler)

    def analysed() -> tuple[Any, list[dict[str, Any]]]:
        analysis = analyse(plan, done, stopped_early, settler)
        return analysis, findings(analysis)

    experiment.conclude(analysed)
    outcome = sweep_outcome(
        experiment.stopped,
        len(done),
        len(plan.loads),
        any(d.level.figure("responses_per_s") for d in done),
        experiment.kept,
    )
    return experiment, outcome
