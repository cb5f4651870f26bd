"""The source of a report: what ``surge report REF`` names, read from the history alone (or a
results directory): one run's record, or an experiment's document with its runs' records.
Incomplete and imported runs are records like any other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from surge.core.errors import BadInput
from surge.history import LAST, StoredRun, load_run, open_history, resolve_run
from surge.history.experiment_rows import experiment_runs, find_experiments, load_experiment, resolve_experiment
from surge.history.store import History
from surge.record.read import read_json_object

EXPERIMENT_FILE = "experiment.json"
"""EXPERIMENT_FILE is an experiment's document in its results directory."""


@dataclass
class ExperimentSource:
    """ExperimentSource: an experiment's experiment.json ``document`` and the records of its
    runs (``runs``, by position; a run the history or the directory no longer holds is missing)."""

    document: dict[str, Any]
    runs: list[StoredRun] = field(default_factory=list)

    @property
    def directory(self) -> str | None:
        """directory is the experiment's results directory as recorded (None when unknown)."""
        directory = self.document.get("directory")
        return str(directory) if directory else None


Source = StoredRun | ExperimentSource
"""Source is what a report renders: a run's record or an experiment."""


def experiment_from_directory(path: Path) -> ExperimentSource:
    """experiment_from_directory reads an experiment's results directory: experiment.json and
    each run's results directory (its entry's ``directory``, relative to the experiment's or
    absolute); a run whose directory is gone is left out."""
    document = read_json_object(path / EXPERIMENT_FILE)
    runs = []
    for entry in document.get("runs") or []:
        run_dir = path / str(entry.get("directory") or "")
        if entry.get("directory") and (run_dir / "summary.json").is_file():
            runs.append(StoredRun.from_directory(run_dir))
    return ExperimentSource(document, runs)


def _experiment_from_history(history: History, experiment_id: str) -> ExperimentSource:
    document = load_experiment(history, experiment_id)
    runs = []
    for link in experiment_runs(history, experiment_id):
        try:
            runs.append(load_run(history, link.run_id))
        except BadInput:  # a run deleted from the history: the report says what it can without it
            continue
    return ExperimentSource(document, runs)


def _last(history: History) -> Source:
    """_last is what was done last: the newest experiment when the newest run is one of its runs
    or older than its start (``surge stats`` makes no run), else the newest run."""
    newest = history.conn.execute(
        "SELECT id, started_at FROM experiments ORDER BY started_at DESC, rowid DESC LIMIT 1"
    ).fetchone()
    run = history.conn.execute(
        "SELECT id, started_at FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1"
    ).fetchone()
    if newest is not None and (
        run is None
        or newest[1] >= run[1]
        or history.conn.execute(
            "SELECT 1 FROM experiment_runs WHERE experiment_id = ? AND run_id = ?", (newest[0], run[0])
        ).fetchone()
    ):
        return _experiment_from_history(history, str(newest[0]))
    return load_run(history, resolve_run(history, LAST, where="RUN|EXPERIMENT"))


def load_source(ref: str, db: str | None) -> Source:
    """load_source is what REF names: a results directory (an experiment's when it holds
    experiment.json, else a run's); ``last`` (what was done last: the newest experiment when the
    newest run is one of its runs or older than its start, else the newest run);
    a run id or unique prefix; else an experiment id or unique prefix. BadInput naming
    RUN|EXPERIMENT when none (or several) match."""
    where = "RUN|EXPERIMENT"
    path = Path(ref)
    if ref != LAST and path.is_dir():
        return experiment_from_directory(path) if (path / EXPERIMENT_FILE).is_file() else StoredRun.from_directory(path)
    with open_history(db) as history:
        if ref == LAST:
            return _last(history)
        try:
            run_id = resolve_run(history, ref, where=where)
        except BadInput:
            if not find_experiments(history, ref):
                raise
            return _experiment_from_history(history, resolve_experiment(history, ref, where=where))
        if find_experiments(history, ref):
            raise BadInput(where, f"'{ref}' names both a run and an experiment: give more of the id")
        return load_run(history, run_id)
