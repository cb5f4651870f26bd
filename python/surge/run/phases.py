"""One path for every run: a URL's flags and a scenario file both compile to a CompiledRun
(setup, main and teardown plans, thresholds), which ``run_phases`` executes: setup, the
measured run (stopped early when an ``abort_on_fail`` threshold fails), teardown; thresholds
judged at the end; one RunOutcome back. A caller's StopRule may end the measured run early too
(an experiment's over-saturation rule), the same way: the record is complete and says why.

Setup and teardown are separate engine runs whose requests are not in the measured
results; what setup captures into pools (e.g. the ids of the tasks it created) is handed
to the main run's variables. Every finished phase's result passes through ``finished_phase``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from surge.core import exit_codes, signals
from surge.core.exit_codes import Outcome
from surge.diagnosis.machine import MachineCpu
from surge.engine.execute import UnreachableError, result_document
from surge.engine.execute import run_plan as run_engine_plan
from surge.plan.compiled import CompiledRun
from surge.plan.model import Plan
from surge.plan.thresholds import Threshold, Verdict, due_aborts, evaluate
from surge.plan.thresholds import exit_code as thresholds_exit_code

NOTHING_SENT = "no scenario sent a request before the run ended (check durations, rates, start times and --time-scale)"
"""NOTHING_SENT says why a scenario file's run that sent nothing exits 3."""


@dataclass
class RunOutcome:
    """RunOutcome: the results of one run's phases and its threshold verdicts.
    ``interrupted_in`` names the phase a stop signal ended ("setup", "main", "teardown"), after
    which no phase started; when it is "setup", ``main`` is an empty result (nothing measured)."""

    main: dict[str, Any]
    setup: dict[str, Any] | None = None
    teardown: dict[str, Any] | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    aborted_by: list[Verdict] = field(default_factory=list)
    interrupted_in: str | None = None
    error: str | None = None
    """error says why the run could not start (its target not reachable), else None."""
    stopped_early: dict[str, Any] | None = None
    """stopped_early is why a StopRule ended the measured run (also in ``main``), else None."""

    def outcome(self, *, nothing_sent: str = NOTHING_SENT, name_phase: bool = True) -> Outcome:
        """outcome: 128 + signal when stopped by one (130 for Ctrl-C), 3 when the run measured
        nothing (``nothing_sent`` says why when nothing was sent), 99 when a threshold failed or
        aborted the run, else 0; with the reason. ``name_phase`` False leaves the phase out of
        the reason (a URL run has only the measured one); 3 with ``error`` when the run could
        not start."""
        if self.error is not None:
            return Outcome(exit_codes.UNREACHABLE, self.error)
        if self.interrupted_in is not None:
            detail = (
                "the measured run did not start"
                if self.interrupted_in == "setup"
                else "results are partial"
                if self.main["stop_reason"] == "interrupted"
                else ""
            )
            return exit_codes.stopped(self.interrupted_in if name_phase else None, detail)
        ran = exit_codes.run_outcome(self.main["stop_reason"], self.main["requests"], nothing_sent=nothing_sent)
        if ran.code != exit_codes.OK:
            return ran
        if self.aborted_by:
            return Outcome(
                exit_codes.THRESHOLDS_FAILED,
                "run aborted by threshold "
                + "; ".join(f"{v.threshold.expr} [{v.threshold.scope()}]" for v in self.aborted_by),
            )
        failed = [v for v in self.verdicts if not v.passed]
        if thresholds_exit_code(self.verdicts) != exit_codes.OK:
            return Outcome(
                exit_codes.THRESHOLDS_FAILED,
                f"{len(failed)} of {len(self.verdicts)} thresholds failed: "
                + "; ".join(f"{v.threshold.expr} [{v.threshold.scope()}]" for v in failed),
            )
        return Outcome(exit_codes.OK)

    def exit_code(self) -> int:
        """exit_code is ``outcome().code``."""
        return self.outcome().code

    def document(self) -> dict[str, Any]:
        """document is a scenario file's ``--json`` output: the main result plus setup/teardown
        summaries, the threshold verdicts, the phase a stop signal ended (``interrupted_in``)
        and which signal (``stop_signal``)."""
        doc = result_document(self.main)
        for interval in doc.get("intervals", []):
            interval.pop("totals", None)
        doc["thresholds"] = [_verdict_document(v) for v in self.verdicts]
        doc["aborted_by_threshold"] = [v.threshold.expr for v in self.aborted_by]
        doc["interrupted_in"] = self.interrupted_in
        for name, phase in (("setup", self.setup), ("teardown", self.teardown)):
            if phase is not None:
                doc[name] = {
                    "requests": phase["requests"],
                    "duration_s": phase["duration_s"],
                    "stop_reason": phase["stop_reason"],
                    "checks": phase.get("checks", []),
                    "pools": {k: len(v) for k, v in phase.get("pools", {}).items()},
                }
        return doc


def _verdict_document(v: Verdict) -> dict[str, Any]:
    t = v.threshold
    return {
        "expr": t.expr,
        "tag": t.tag,
        "scenario": t.scenario,
        "status": v.status,
        "passed": v.passed,
        "observed": v.observed,
        "observed_text": v.observed_text(),
        "note": v.note,
        "abort_on_fail": t.abort_on_fail,
        "delay_s": t.delay_s,
    }


class Engines(Protocol):
    """Engines run a CompiledRun's plans: the engine on this machine (``LOCAL_ENGINES``), or a
    distributed run's generators (``surge.run.distributed``). ``local`` tells whether the
    measured run's load comes from this machine (its CPU is then sampled for the diagnosis)."""

    local: bool

    def run_once(self, plan: dict[str, Any]) -> dict[str, Any]:
        """run_once runs an unmeasured phase (setup, teardown) once, and returns its result."""

    def run_main(self, plan: dict[str, Any], on_interval: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """run_main runs the measured run, each interval to ``on_interval`` (True: abort), and
        returns its result."""


class _LocalEngines:
    """_LocalEngines run every phase on this machine's engine."""

    local = True

    def run_once(self, plan: dict[str, Any]) -> dict[str, Any]:
        return run_engine_plan(plan)

    def run_main(self, plan: dict[str, Any], on_interval: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        return run_engine_plan(plan, on_interval)


LOCAL_ENGINES: Engines = _LocalEngines()
"""LOCAL_ENGINES run every phase on this machine."""

IntervalHook = Callable[[dict[str, Any]], None]
"""IntervalHook receives each interval of the main run (as a dict), e.g. for the live view."""

PhaseHook = Callable[[str, dict[str, Any]], None]
"""PhaseHook is told the name and result of each phase (setup, main, teardown) as it ends."""

StopRule = Callable[[dict[str, Any]], dict[str, Any] | None]
"""StopRule is told each interval of the measured run and returns why to stop it now (a
document with at least ``rule`` and ``message``), else None; the run then stops as an
``abort_on_fail`` threshold stops it, and its result keeps the document as ``stopped_early``."""


def run_phases(
    compiled: CompiledRun,
    *,
    threads: int | None = None,
    on_interval: IntervalHook | None = None,
    on_phase: PhaseHook | None = None,
    engines: Engines = LOCAL_ENGINES,
    stop_rule: StopRule | None = None,
) -> RunOutcome:
    """run_phases runs a CompiledRun (a scenario file's, or a URL's flags'): setup, main
    (stopped early when an ``abort_on_fail`` threshold fails after its delay), teardown, each
    on ``engines`` (this machine's engine, or a distributed run's generators).
    ``on_phase(name, result)`` is told when each phase ends (setup, main, teardown); ``stop_rule``
    may end the measured run early (its result's ``stopped_early`` says why). A stop signal (Ctrl-C,
    SIGTERM, SIGHUP) in any phase ends that phase keeping its results and starts no other."""
    thresholds: list[Threshold] = list(compiled.thresholds)
    abort_rules = [t for t in thresholds if t.abort_on_fail]
    aborted_by: list[Verdict] = []
    run = RunOutcome(main={})

    machine: MachineCpu | None = None

    def interval_hook(interval: dict[str, Any]) -> bool:
        if machine is not None:
            machine.sample(interval.get("end_s"))
        if on_interval is not None:
            on_interval(interval)
        if stop_rule is not None:
            if run.stopped_early is not None:
                return True  # already stopping; the last intervals still arrive
            run.stopped_early = stop_rule(interval)
            if run.stopped_early is not None:
                return True
        totals = interval.get("totals")
        if not abort_rules or totals is None:
            return False
        if aborted_by:
            return True  # already stopping; the last intervals still arrive
        due = due_aborts(evaluate(abort_rules, totals), float(totals.get("duration_s", 0.0)))
        if due:
            aborted_by.extend(due)
            return True
        return False

    phase = "setup"
    try:
        if compiled.setup is not None:
            setup_plan = _with_threads(compiled.setup, threads).to_dict()
            setup = finished_phase(run, "setup", engines.run_once(setup_plan), on_phase)
            compiled = compiled.with_pools(setup.get("pools", {}))
        phase = "main"
        main_plan = replace(_with_threads(compiled.main, threads), interval_totals=bool(abort_rules))
        if engines.local:
            machine = MachineCpu()  # the whole machine's CPU during the measured run (docs/diagnosis.md)
        main = with_send_slack(engines.run_main(main_plan.to_dict(), interval_hook), main_plan)
        if machine is not None and (machine_document := machine.document()) is not None:
            main["machine"] = machine_document
        if run.stopped_early is not None:
            main["stopped_early"] = run.stopped_early
        run.verdicts = evaluate(thresholds, main)
        run.aborted_by = aborted_by
        finished_phase(run, "main", main, on_phase)
        if compiled.teardown is not None:
            phase = "teardown"
            teardown = _teardown(run, _with_threads(compiled.teardown, threads), engines)
            finished_phase(run, "teardown", teardown, on_phase)
    except KeyboardInterrupt:  # a stop signal: in the engine (its results kept) or between runs
        run.interrupted_in = phase
    if not run.main:  # the measured run never started (or never returned)
        run.main = empty_result(compiled.main)
    return run


def with_send_slack(result: dict[str, Any], plan: Plan) -> dict[str, Any]:
    """with_send_slack adds to a main run's ``result`` the send slack its open-model scenarios ran
    with (``send_slack_s``: the plan's, else the engine's default); nothing when none is open-model."""
    slack = plan.open_model_send_slack_s()
    if slack is not None:
        result["send_slack_s"] = slack
    return result


def _teardown(run: RunOutcome, plan: Plan, engines: Engines) -> dict[str, Any]:
    """_teardown runs the teardown plan; a target gone by then (it died during the measured run)
    costs the teardown, not the measured results: its result says ``unreachable`` and a note
    on the measured run says the teardown did not run."""
    try:
        return engines.run_once(plan.to_dict())
    except UnreachableError as e:
        run.main.setdefault("notes", []).append(f"teardown did not run: {e.args[0] if e.args else e}")
        return dict(empty_result(plan), stop_reason=UNREACHABLE)


def finished_phase(run: RunOutcome, name: str, result: dict[str, Any], on_phase: PhaseHook | None) -> dict[str, Any]:
    """finished_phase is the one place every finished phase's result passes through: kept in
    ``run`` under ``name`` ("setup", "main", "teardown"), told to ``on_phase``; raises
    KeyboardInterrupt when a stop signal ended it (the engine keeps the results and swallows the
    exception), so no later phase starts."""
    setattr(run, name, result)
    if on_phase is not None:
        on_phase(name, result)
    if result["stop_reason"] == "interrupted" or signals.received() is not None:
        raise KeyboardInterrupt
    return result


def empty_result(plan: Plan) -> dict[str, Any]:
    """empty_result is the result document of a main run that never started (a stop signal
    during setup): every count zero, no histograms (null), ``stop_reason`` "interrupted"."""
    # start-up: engine.result's typed models (pydantic) only for a run that never started
    from surge.engine.result import Generator, LatencySummaries, Requests, RunResult, Throughput

    return RunResult(
        schema="surge.result/1",
        url=plan.target.url,
        started_at_unix_s=time.time(),
        duration_s=0.0,
        elapsed_s=0.0,
        threads=plan.threads or 0,
        stop_reason="interrupted",
        requests=Requests(),
        latency=LatencySummaries(),
        throughput=Throughput(),
        histograms=None,
        generator=Generator(cpu={"user_s": 0.0, "system_s": 0.0}),
    ).model_dump(by_alias=True)


UNREACHABLE = "unreachable"
"""UNREACHABLE is the ``stop_reason`` of a run whose target was not reachable at the start."""


def unreachable_outcome(compiled: CompiledRun, error: str) -> RunOutcome:
    """unreachable_outcome is the outcome of a run whose target was not reachable when a phase
    started (``error`` says so): nothing measured, ``stop_reason`` "unreachable", every
    threshold judged on no data."""
    main = dict(empty_result(compiled.main), stop_reason=UNREACHABLE)
    return RunOutcome(main=main, verdicts=evaluate(compiled.thresholds, main), error=error)


def _with_threads(plan: Plan, threads: int | None) -> Plan:
    return replace(plan, threads=threads) if threads is not None else plan
