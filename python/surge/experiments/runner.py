"""Running one run of an experiment (docs/experiments.md, "The runner"): through the one path
every run takes (the run session, ``surge.run.session.run_prepared``, recorded by a RecordWriter
in the experiment's ``runs/`` folder and the history; with --no-save a RecordWriter that writes
nothing, for the run's ``meta``), quietly: one progress line on stderr instead of the summary.
The run's record says which experiment it belongs to and its role (``meta.experiment``); the
experiment's record gets its entry and key figures.

A stop signal during a run ends that run as ``surge run`` does (its record kept, marked
incomplete) and is raised on as KeyboardInterrupt once the run is in the experiment's record,
so ``ExperimentRecord.running`` ends the experiment there; during ``cooldown`` it is raised at once.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from surge.core import exit_codes, signals
from surge.core.errors import BadInput
from surge.core.exit_codes import Outcome
from surge.core.redact import redact_text
from surge.diagnosis.findings import compact, watch_process
from surge.experiments.recorder import ExperimentRecord
from surge.history.experiment_rows import ExperimentRun
from surge.present import numbers as fmt
from surge.record.figures import Figures, has_result, key_figures, verdict
from surge.run.phases import StopRule
from surge.run.session import RunOptions, run_prepared
from surge.run.sinks import COMMAND_VIEW, TerminalProgress
from surge.run.spec import PreparedRun, TestSpec

if TYPE_CHECKING:
    from surge.diagnosis.watch import TargetWatch
    from surge.present.terminal.live import ExperimentProgress


@dataclass(frozen=True)
class RunReport:
    """RunReport: one finished run of an experiment. ``summary`` is its summary.json document
    (result and ``meta``, secrets masked); ``figures`` its key figures; ``verdict`` its
    thresholds' (passed, failed, none); ``outcome`` the exit code ``surge run`` would have ended
    with and why; ``complete`` whether its record is complete (a stop signal or a failed write
    leaves it incomplete, an unreachable target too)."""

    position: int
    role: str
    label: str
    run_id: str
    summary: dict[str, Any]
    figures: Figures
    verdict: str
    outcome: Outcome
    complete: bool
    level: float | None = None
    variant: str | None = None

    def entry(self, directory: str | None) -> dict[str, Any]:
        """entry is the run as experiment.json lists it (``directory`` relative to the experiment's)."""
        return run_entry(
            self.summary,
            position=self.position,
            role=self.role,
            label=self.label,
            directory=directory,
            exit_code=self.outcome.code,
            level=self.level,
            variant=self.variant,
        )


def run_entry(
    summary: Mapping[str, Any],
    *,
    position: int,
    role: str,
    label: str,
    directory: str | None,
    exit_code: int | None,
    level: float | None = None,
    variant: str | None = None,
) -> dict[str, Any]:
    """run_entry is a run's entry in experiment.json, from its summary document: where it sits
    (position, role, label, level, variant), which run it is (run_id, name, tool, started_at,
    directory), how it ended (complete, stop_reason, verdict, exit_code: None for a run not
    made by this experiment), its key figures and its findings (docs/diagnosis.md)."""
    meta = summary.get("meta") or {}
    return {
        "position": position,
        "role": role,
        "label": label,
        "level": level,
        "variant": variant,
        "run_id": meta.get("run_id"),
        "name": meta.get("name"),
        "tool": meta.get("tool") or "surge",
        "started_at": meta.get("started_at"),
        "directory": directory,
        "complete": bool(meta.get("complete")),
        "stop_reason": summary.get("stop_reason"),
        "verdict": verdict(summary) if has_result(summary) else "none",
        "exit_code": exit_code,
        "figures": key_figures(summary) if has_result(summary) else {},
        "findings": compact(summary.get("findings")),
    }


def _watch(test: TestSpec) -> TargetWatch | None:
    """_watch is a sampler of the process --watch-pid names, for one run; a process gone since
    the experiment started costs a warning, not the experiment (its runs go on unwatched)."""
    try:
        return watch_process(test.watch_pid)
    except BadInput as e:
        print(redact_text(f"surge: warning: {e}; this run is not watched"), file=sys.stderr, flush=True)
        return None


def run_one(
    experiment: ExperimentRecord,
    test: TestSpec,
    prepared: PreparedRun,
    *,
    role: str,
    label: str,
    level: float | None = None,
    variant: str | None = None,
    reports: bool = True,
    stop_rule: StopRule | None = None,
) -> RunReport:
    """run_one runs ``prepared`` (``test`` prepared, with an experiment's overrides or not) as the
    experiment's next run, playing ``role`` (``repeat 3/10``, ``level vus=500``, ``variant A``;
    ``label`` is its short name in tables and its folder's name); records it; prints its progress
    line; returns its report. ``reports`` False (a warm-up run) writes no report.md or report.html
    in its directory; ``stop_rule`` may end it early (its summary's ``stopped_early`` says why).
    A stop signal: the run is recorded, then KeyboardInterrupt. An
    unreachable target: the run is recorded, then UnreachableError."""
    position = len(experiment.runs) + 1
    out = experiment.run_directory(position, role)
    options = RunOptions(
        save=experiment.save,
        out=None if out is None else str(out),
        db=test.db,
        tags=test.tag_dict,
        name=test.name(),
        reports=reports,
        lock=False,
        experiment={"id": experiment.id, "kind": experiment.kind, "position": position, "role": role},
    )
    # The live view on a terminal, as for ``surge run``, with the experiment's progress; no summary, no phase lines.
    sinks = [TerminalProgress(experiment_progress(experiment, position, role))] if sys.stderr.isatty() else []
    end = run_prepared(
        prepared, options, stderr=sys.stderr, sinks=sinks, runner=test.runner(), watch=_watch(test), stop_rule=stop_rule
    )
    meta = end.meta or {}
    summary = {**end.document, "meta": meta}
    with signals.deferred():
        report = RunReport(
            position,
            role,
            label,
            meta["run_id"],
            summary,
            key_figures(summary),
            verdict(summary) if has_result(summary) else "none",
            end.outcome,
            bool(meta["complete"]),
            level,
            variant,
        )
        directory = (
            str(out.relative_to(experiment.directory)) if out is not None and experiment.directory is not None else None
        )
        link = ExperimentRun(report.run_id, position, role, label, level, variant) if end.in_history else None
        experiment.add_run(report.entry(directory), link)
        if (view := COMMAND_VIEW.get()) is not None:  # --dashboard: the experiment's runs so far
            view.on_step(experiment.document)
        print(progress_line(report), file=sys.stderr, flush=True)
    if end.error is not None:
        raise end.error
    if signals.received() is not None:
        raise KeyboardInterrupt
    return report


def experiment_progress(experiment: ExperimentRecord, position: int, role: str) -> ExperimentProgress:
    """experiment_progress is where ``experiment`` stands as its run at ``position`` (``role``)
    starts, for the live view: its planned runs and the runs finished, with their figures."""
    # Function-local: the live view (Rich) loads only when a terminal shows it.
    from surge.present.terminal.live import ExperimentProgress, FinishedRun

    finished = [
        FinishedRun(
            str(entry.get("label")),
            entry["figures"].get("responses_per_s"),
            entry["figures"].get("p95_ms"),
            experiment.judged.get(str(entry.get("run_id")), str(entry.get("verdict"))),
        )
        for entry in experiment.runs
    ]
    return ExperimentProgress(experiment.kind, role, position, tuple(experiment.planned_s), tuple(finished))


def progress_line(report: RunReport) -> str:
    """progress_line is a finished run's one line: role, run id prefix, throughput, p50/p95/p99,
    failure rate, verdict, and how it ended when not by its plan."""
    f = report.figures
    ended = (
        ""
        if report.outcome.code == exit_codes.OK or report.outcome.code == exit_codes.THRESHOLDS_FAILED
        else f" · {report.outcome.reason}"
    )
    return redact_text(
        f"{report.role}: {report.run_id[:8]} · {fmt.rate(f.get('responses_per_s'))} req/s · "
        f"p50 {fmt.ms(f.get('p50_ms'))} · p95 {fmt.ms(f.get('p95_ms'))} · "
        f"p99 {fmt.ms(f.get('p99_ms'))} ms · failures {fmt.percent(f.get('failure_rate'))} · "
        f"{report.verdict}{ended}"
    )


def cooldown(seconds: float) -> None:
    """cooldown waits ``seconds`` between two runs (nothing sent); a stop signal ends it at once
    (StopRequested, a KeyboardInterrupt)."""
    if seconds > 0:
        time.sleep(seconds)
