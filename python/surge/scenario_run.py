"""Running a scenario file end to end: setup, the measured run, teardown; thresholds judged
at the end (and, for ``abort_on_fail``, while the run goes); summary or JSON; exit code.

Setup and teardown are separate engine runs whose requests are not in the measured
results; what setup captures into pools (e.g. the ids of the tasks it created) is handed
to the main run's variables.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from surge import _engine, exit_codes, signals
from surge.document import result_document
from surge.errors import BadInput
from surge.exit_codes import Outcome
from surge.redact import redact_text
from surge.thresholds import Threshold, Verdict, due_aborts, evaluate
from surge.thresholds import exit_code as thresholds_exit_code

Plan = dict[str, Any]
"""Plan is an engine plan as compiled from a scenario file (see docs/plan.md)."""


NOTHING_SENT = "no scenario sent a request before the run ended (check durations, start times and --time-scale)"
"""NOTHING_SENT says why a scenario file's run that sent nothing exits 3."""


@dataclass
class ScenarioRun:
    """ScenarioRun: the results of one scenario file's phases and its threshold verdicts.
    ``interrupted_in`` names the phase a stop signal ended ("setup", "main", "teardown"), after
    which no phase started; when it is "setup", ``main`` is an empty result (nothing measured)."""

    main: dict[str, Any]
    setup: dict[str, Any] | None = None
    teardown: dict[str, Any] | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    aborted_by: list[Verdict] = field(default_factory=list)
    interrupted_in: str | None = None

    def outcome(self) -> Outcome:
        """outcome: 128 + signal when stopped by one (130 for Ctrl-C), 3 when the run measured
        nothing, 99 when a threshold failed or aborted the run, else 0; with the reason."""
        if self.interrupted_in is not None:
            detail = ("the measured run did not start" if self.interrupted_in == "setup"
                      else "results are partial" if self.main["stop_reason"] == "interrupted" else "")
            return exit_codes.stopped(self.interrupted_in, detail)
        ran = exit_codes.run_outcome(self.main["stop_reason"], self.main["requests"], nothing_sent=NOTHING_SENT)
        if ran.code != exit_codes.OK:
            return ran
        if self.aborted_by:
            return Outcome(exit_codes.THRESHOLDS_FAILED, "run aborted by threshold " + "; ".join(
                f"{v.threshold.expr} [{v.threshold.scope()}]" for v in self.aborted_by))
        failed = [v for v in self.verdicts if not v.passed]
        if thresholds_exit_code(self.verdicts) != exit_codes.OK:
            return Outcome(exit_codes.THRESHOLDS_FAILED, f"{len(failed)} of {len(self.verdicts)} thresholds failed: "
                           + "; ".join(f"{v.threshold.expr} [{v.threshold.scope()}]" for v in failed))
        return Outcome(exit_codes.OK)

    def exit_code(self) -> int:
        """exit_code is ``outcome().code``."""
        return self.outcome().code

    def document(self) -> dict[str, Any]:
        """document is the ``--json`` output: the main result plus setup/teardown summaries,
        the threshold verdicts, the phase a stop signal ended (``interrupted_in``) and which
        signal (``stop_signal``)."""
        doc = result_document(self.main)
        for interval in doc.get("intervals", []):
            interval.pop("totals", None)
        doc["thresholds"] = [_verdict_document(v) for v in self.verdicts]
        doc["aborted_by_threshold"] = [v.threshold.expr for v in self.aborted_by]
        doc["interrupted_in"] = self.interrupted_in
        for name, phase in (("setup", self.setup), ("teardown", self.teardown)):
            if phase is not None:
                doc[name] = {"requests": phase["requests"], "duration_s": phase["duration_s"],
                             "stop_reason": phase["stop_reason"], "checks": phase.get("checks", []),
                             "pools": {k: len(v) for k, v in phase.get("pools", {}).items()}}
        return doc


def _verdict_document(v: Verdict) -> dict[str, Any]:
    t = v.threshold
    return {"expr": t.expr, "tag": t.tag, "scenario": t.scenario, "status": v.status, "passed": v.passed,
            "observed": v.observed, "observed_text": v.observed_text(), "note": v.note}


IntervalHook = Callable[[dict[str, Any]], None]
"""IntervalHook receives each interval of the main run (as a dict), e.g. for a progress display."""


def run_compiled(compiled: Any, *, threads: int | None = None, on_interval: IntervalHook | None = None,
                 on_phase: Callable[[str, dict[str, Any]], None] | None = None) -> ScenarioRun:
    """run_compiled runs a compiled scenario file (``surge.scenario.CompiledRun``): setup,
    main (stopped early when an ``abort_on_fail`` threshold fails after its delay), teardown.
    ``on_phase(name, result)`` is told when setup or teardown ends. A stop signal (Ctrl-C,
    SIGTERM, SIGHUP) in any phase ends that phase keeping its results and starts no other."""
    thresholds: list[Threshold] = list(compiled.thresholds)
    abort_rules = [t for t in thresholds if t.abort_on_fail]
    aborted_by: list[Verdict] = []

    def interval_hook(interval: dict[str, Any]) -> bool:
        if on_interval is not None:
            on_interval(interval)
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

    run = ScenarioRun(main=empty_result(compiled.main))
    phase = "setup"
    try:
        if compiled.setup is not None:
            run.setup = _run_plan(_with_threads(compiled.setup, threads))
            if on_phase:
                on_phase("setup", run.setup)
            _stop_if_interrupted(run.setup)
            compiled = compiled.with_pools(run.setup.get("pools", {}))
        phase = "main"
        main_plan = dict(_with_threads(compiled.main, threads), interval_totals=bool(abort_rules))
        run.main = _run_plan(main_plan, interval_hook)
        run.verdicts = evaluate(thresholds, run.main)
        run.aborted_by = aborted_by
        _stop_if_interrupted(run.main)
        if compiled.teardown is not None:
            phase = "teardown"
            run.teardown = _run_plan(_with_threads(compiled.teardown, threads))
            if on_phase:
                on_phase("teardown", run.teardown)
            _stop_if_interrupted(run.teardown)
    except KeyboardInterrupt:  # a stop signal: in the engine (its results kept) or between runs
        run.interrupted_in = phase
    return run


def _stop_if_interrupted(result: dict[str, Any]) -> None:
    """_stop_if_interrupted raises KeyboardInterrupt when a stop signal ended ``result``'s run
    (the engine keeps the results and swallows the exception), so no later phase starts."""
    if result["stop_reason"] == "interrupted" or signals.received() is not None:
        raise KeyboardInterrupt


def empty_result(plan: Plan) -> dict[str, Any]:
    """empty_result is the result document of a main run that never started (a stop signal
    during setup): every count zero, ``stop_reason`` "interrupted"."""
    from surge.result import LatencySummaries, Requests, RunResult, Throughput

    return RunResult(schema="surge.result/1", url=plan["target"]["url"], started_at_unix_s=time.time(),
                     duration_s=0.0, elapsed_s=0.0, threads=plan.get("threads") or 0, stop_reason="interrupted",
                     requests=Requests(), latency=LatencySummaries(), throughput=Throughput()
                     ).model_dump(by_alias=True)


def _with_threads(plan: Plan, threads: int | None) -> Plan:
    return dict(plan, threads=threads) if threads is not None else plan


def _run_plan(plan: Plan, on_interval: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
    callback = None
    if on_interval is not None:
        def callback(text: str) -> bool:
            return on_interval(json.loads(text))
    text = _engine.run(json.dumps(plan), callback)
    with signals.deferred():  # a stop signal now only keeps the next phase from starting
        result: dict[str, Any] = json.loads(text)
        return result


def run_file(path: Path, *, time_scale: float = 1.0, threads: int | None = None, target: str | None = None,
             json_output: bool = False, env: Mapping[str, str] | None = None,
             overrides: Mapping[str, Any] | None = None) -> Outcome:
    """run_file is ``surge run FILE.yaml``: loads and validates the file (every mistake,
    with its line, before anything runs), runs its phases, prints the summary (or the JSON
    document) and returns the Outcome (exit code and why). ``env`` replaces the process
    environment for the file's ``env`` variables (``-e NAME=VALUE``); ``overrides`` are
    ``ScenarioFile.with_overrides``' arguments (``--timeout``, ``--grace``, ``--insecure``)."""
    from surge.scenario import load

    scenario_file = load(path, env=env)
    if target is not None:
        try:
            scenario_file = scenario_file.with_target(target)
        except ValueError as e:  # pydantic's PydanticCustomError: the message says what is wrong
            raise BadInput("--target", str(e)) from None
    scenario_file = scenario_file.with_overrides(**(overrides or {}))
    compiled = scenario_file.compile(time_scale=time_scale, env=env)
    if json_output:
        outcome = run_compiled(compiled, threads=threads)
        with signals.deferred():
            sys.stdout.write(json.dumps(outcome.document()) + "\n")
            sys.stdout.flush()
        return outcome.outcome()
    from rich.console import Console
    from rich.text import Text

    from surge.result import Interval, RunResult
    from surge.summary import print_scenario_summary

    err = Console(stderr=True)

    def on_phase(name: str, result: dict[str, Any]) -> None:
        r = result["requests"]
        pools = ", ".join(f"{k} ({len(v):,} values)" for k, v in result.get("pools", {}).items())
        stopped = " · interrupted" if result["stop_reason"] == "interrupted" else ""
        err.print(Text.assemble((name, "bold"), redact_text(
            f": {r['sent']:,} requests, {r['failed']:,} failed{stopped}"
            f"{' · captured ' + pools if pools else ''} (not in the measured results)")))

    if sys.stderr.isatty():
        from surge.progress import Progress

        planned_s = max((s["start_time_s"] + _planned_s(s["executor"]) for s in compiled.main["scenarios"]),
                        default=0.0)
        with Progress(planned_s) as progress:
            outcome = run_compiled(compiled, threads=threads, on_phase=on_phase,
                                   on_interval=lambda i: progress.update(Interval.model_validate(i)))
    else:
        outcome = run_compiled(compiled, threads=threads, on_phase=on_phase)
    with signals.deferred():
        print_scenario_summary(RunResult.model_validate(outcome.main), compiled.main, outcome.verdicts,
                               outcome.aborted_by, interrupted_in=outcome.interrupted_in)
    return outcome.outcome()


def _planned_s(executor: dict[str, Any]) -> float:
    if "stages" in executor:
        return float(sum(s["duration_s"] for s in executor["stages"]))
    if executor["type"] in ("shared-iterations", "per-vu-iterations"):
        return 0.0
    return float(executor.get("duration_s", 0.0))
