"""Running a scenario file end to end: setup, the measured run, teardown; thresholds judged
at the end (and, for ``abort_on_fail``, while the run goes); summary or JSON; exit code.

Setup and teardown are separate engine runs whose requests are not in the measured
results; what setup captures into pools (e.g. the ids of the tasks it created) is handed
to the main run's variables.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from surge import _engine, exit_codes
from surge.document import result_document
from surge.thresholds import Threshold, Verdict, due_aborts, evaluate
from surge.thresholds import exit_code as thresholds_exit_code

Plan = dict[str, Any]
"""Plan is an engine plan as compiled from a scenario file (see docs/plan.md)."""


@dataclass
class ScenarioRun:
    """ScenarioRun: the results of one scenario file's phases and its threshold verdicts."""

    main: dict[str, Any]
    setup: dict[str, Any] | None = None
    teardown: dict[str, Any] | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    aborted_by: list[Verdict] = field(default_factory=list)

    def exit_code(self) -> int:
        """exit_code: 130 interrupted, 3 target never reached, 99 a threshold failed, else 0."""
        if self.main["stop_reason"] == "interrupted":
            return exit_codes.INTERRUPTED
        requests = self.main["requests"]
        if requests["connections_opened"] == 0 and requests["sent"] == 0:
            return exit_codes.UNREACHABLE
        if self.aborted_by:
            return exit_codes.THRESHOLDS_FAILED
        return thresholds_exit_code(self.verdicts)

    def document(self) -> dict[str, Any]:
        """document is the ``--json`` output: the main result plus setup/teardown summaries
        and the threshold verdicts."""
        doc = result_document(self.main)
        for interval in doc.get("intervals", []):
            interval.pop("totals", None)
        doc["thresholds"] = [_verdict_document(v) for v in self.verdicts]
        doc["aborted_by_threshold"] = [v.threshold.expr for v in self.aborted_by]
        for name, phase in (("setup", self.setup), ("teardown", self.teardown)):
            if phase is not None:
                doc[name] = {"requests": phase["requests"], "duration_s": phase["duration_s"],
                             "checks": phase.get("checks", []),
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
    ``on_phase(name, result)`` is told when setup or teardown ends."""
    thresholds: list[Threshold] = list(compiled.thresholds)
    setup = None
    if compiled.setup is not None:
        setup = _run_plan(_with_threads(compiled.setup, threads))
        if on_phase:
            on_phase("setup", setup)
        compiled = compiled.with_pools(setup.get("pools", {}))
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

    main_plan = dict(_with_threads(compiled.main, threads), interval_totals=bool(abort_rules))
    main = _run_plan(main_plan, interval_hook)
    teardown = None
    if compiled.teardown is not None and main["stop_reason"] != "interrupted":
        teardown = _run_plan(_with_threads(compiled.teardown, threads))
        if on_phase:
            on_phase("teardown", teardown)
    return ScenarioRun(main=main, setup=setup, teardown=teardown, verdicts=evaluate(thresholds, main),
                       aborted_by=aborted_by)


def _with_threads(plan: Plan, threads: int | None) -> Plan:
    return dict(plan, threads=threads) if threads is not None else plan


def _run_plan(plan: Plan, on_interval: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
    callback = None
    if on_interval is not None:
        def callback(text: str) -> bool:
            return on_interval(json.loads(text))
    return json.loads(_engine.run(json.dumps(plan), callback))


def run_file(path: Path, *, time_scale: float = 1.0, threads: int | None = None, target: str | None = None,
             json_output: bool = False, env: Mapping[str, str] | None = None,
             overrides: Mapping[str, Any] | None = None) -> int:
    """run_file is ``surge run FILE.yaml``: loads and validates the file (every mistake,
    with its line, before anything runs), runs its phases, prints the summary (or the JSON
    document) and returns the exit code. ``env`` replaces the process environment for the
    file's ``env`` variables (``-e NAME=VALUE``); ``overrides`` are ``ScenarioFile.with_overrides``'
    arguments (``--timeout``, ``--grace``, ``--insecure``)."""
    from surge.scenario import load

    scenario_file = load(path, env=env)
    if target is not None:
        scenario_file = scenario_file.with_target(target)
    scenario_file = scenario_file.with_overrides(**(overrides or {}))
    compiled = scenario_file.compile(time_scale=time_scale, env=env)
    if json_output:
        outcome = run_compiled(compiled, threads=threads)
        sys.stdout.write(json.dumps(outcome.document()) + "\n")
        return outcome.exit_code()
    from rich.console import Console

    from surge.result import Interval, RunResult
    from surge.summary import print_scenario_summary

    err = Console(stderr=True)

    def on_phase(name: str, result: dict[str, Any]) -> None:
        r = result["requests"]
        pools = ", ".join(f"{k} ({len(v):,} values)" for k, v in result.get("pools", {}).items())
        err.print(f"[bold]{name}[/bold]: {r['sent']:,} requests, {r['failed']:,} failed"
                  f"{' · captured ' + pools if pools else ''} (not in the measured results)")

    if sys.stderr.isatty():
        from surge.progress import Progress

        planned_s = max((s["start_time_s"] + _planned_s(s["executor"]) for s in compiled.main["scenarios"]),
                        default=0.0)
        with Progress(planned_s) as progress:
            outcome = run_compiled(compiled, threads=threads, on_phase=on_phase,
                                   on_interval=lambda i: progress.update(Interval.model_validate(i)))
    else:
        outcome = run_compiled(compiled, threads=threads, on_phase=on_phase)
    print_scenario_summary(RunResult.model_validate(outcome.main), compiled.main, outcome.verdicts,
                           outcome.aborted_by)
    return outcome.exit_code()


def _planned_s(executor: dict[str, Any]) -> float:
    if "stages" in executor:
        return float(sum(s["duration_s"] for s in executor["stages"]))
    if executor["type"] in ("shared-iterations", "per-vu-iterations"):
        return 0.0
    return float(executor.get("duration_s", 0.0))
