"""How an experiment ends: the exit code of each kind and why, from what its runs found (``repeat``
and ``compare`` by their runs' verdicts, ``sweep`` by the levels measured, ``capacity`` by the rate
the search found, a baseline check by the figures that regressed). The CLI ends with the
Outcome; ``surge.core.exit_codes`` lists the codes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from surge.analysis.capacity_search import CapacityResult
from surge.core import exit_codes
from surge.core.exit_codes import Outcome
from surge.experiments.baseline_check import BaselineCheck
from surge.present.terminal.baseline_table import change_text


def experiment_outcome(entries: Sequence[Mapping[str, Any]], stopped: int | None, planned: int, kept: str) -> Outcome:
    """experiment_outcome is the exit code of an experiment of ``planned`` runs (experiment.json's
    run ``entries``) and why: 128 + the stop signal when one ended it (130 Ctrl-C, 143 SIGTERM;
    ``kept`` says where the completed runs are), else 3 when a run measured nothing, else 99
    when a run failed a threshold, else 0."""
    if stopped is not None:
        completed = sum(1 for e in entries if e.get("complete"))
        return exit_codes.stopped(None, f"experiment incomplete: {completed} of {planned} runs completed ({kept})")
    empty = [str(e["label"]) for e in entries if e.get("exit_code") == exit_codes.UNREACHABLE]
    if empty:
        return Outcome(exit_codes.UNREACHABLE, f"run {', '.join(empty)} measured nothing (exit code 3)")
    failed = [str(e["label"]) for e in entries if e.get("verdict") == "failed"]
    if failed:
        return Outcome(
            exit_codes.THRESHOLDS_FAILED,
            f"{len(failed)} of {len(entries)} runs failed a threshold (run {', '.join(failed)})",
        )
    return Outcome(exit_codes.OK)


def baseline_outcome(check: BaselineCheck, against: str) -> Outcome:
    """baseline_outcome is the exit code of a check against baseline ``against`` and why: 99
    naming each regressed metric with its change and the tolerance, else 0."""
    regressed = check.regressed()
    if not regressed:
        return Outcome(exit_codes.OK)
    return Outcome(
        exit_codes.THRESHOLDS_FAILED,
        f"regression against baseline '{against}': "
        + ", ".join(f"{metric} {change_text(change)}" for metric, change in regressed)
        + f" (tolerance {check.tolerance:.1%})",
    )


def sweep_outcome(stopped: int | None, measured: int, planned: int, any_throughput: bool, kept: str) -> Outcome:
    """sweep_outcome is the sweep's exit code and why: 128 + the stop signal when one ended it
    (``kept`` says where the levels measured are), 3 when no level measured any response, else
    0 (broken levels are the sweep's finding, not a failure)."""
    if stopped is not None:
        return exit_codes.stopped(None, f"experiment incomplete: {measured} of {planned} levels measured ({kept})")
    if not any_throughput:
        return Outcome(exit_codes.UNREACHABLE, "no level measured any response")
    return Outcome(exit_codes.OK)


def capacity_outcome(stopped: int | None, result: CapacityResult, kept: str) -> Outcome:
    """capacity_outcome is the search's exit code and why: 128 + the stop signal when one ended
    it (``kept`` says where the completed steps are); 0 when it found a confirmed rate (or the
    maximum rate passed); 99 when no rate passed the SLO, none was confirmed, or the generator
    or a client cap, not the target, bounded the search (the reason says which)."""
    if stopped is not None:
        return exit_codes.stopped(None, f"experiment incomplete: {len(result.steps)} completed step(s) ({kept})")
    if result.stop_reason in ("found", "max_rate") and result.rate is not None:
        return Outcome(exit_codes.OK)
    return Outcome(
        exit_codes.THRESHOLDS_FAILED,
        {
            "nothing_passed": "no rate passed the SLO",
            "unconfirmed": "no rate was confirmed",
            "max_steps": "the step budget ran out: the rate is unconfirmed",
            "generator_limit": "the generator could not keep its schedule: the target's capacity was not reached",
            "client_limit": "a client cap limited the search: the target's capacity was not reached",
        }.get(result.stop_reason, result.stop_reason),
    )
