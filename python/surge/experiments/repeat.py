"""The repeat experiment (``surge repeat``, docs/experiments.md): the same test n times as one
recorded experiment, a pause between two runs, then the statistics of every key figure over the
runs (``surge.analysis.over_runs``); and the same statistics over runs already in the history
(``surge stats``: surge's own or imported, chosen by reference or by a selection), recorded as an
experiment of kind ``stats`` that runs nothing."""

from __future__ import annotations

from typing import Any

from surge.analysis.over_runs import analyse
from surge.core import exit_codes
from surge.core.errors import BadInput
from surge.core.exit_codes import Outcome
from surge.experiments import runner
from surge.experiments.outcome import experiment_outcome
from surge.experiments.recorder import ExperimentRecord
from surge.experiments.runner import run_entry
from surge.history import RunQuery, list_runs, load_run, lookup_id, open_history
from surge.history.experiment_rows import ExperimentRun
from surge.history.store import History
from surge.record.stored import StoredRun
from surge.run.sinks import COMMAND_VIEW
from surge.run.spec import TestSpec


def run_repeat(test: TestSpec, runs: int, cooldown_s: float, cv_limit: float) -> tuple[ExperimentRecord, Outcome]:
    """run_repeat prepares ``test`` (every BadInput before any run), runs it ``runs`` times with
    ``cooldown_s`` between two runs, and returns the concluded record (every run and the
    statistics, a figure flagged when its coefficient of variation is above ``cv_limit``, a
    fraction) and the outcome (experiment_outcome). A stop signal ends it early with the runs
    completed so far."""
    prepared = test.prepare()
    experiment = ExperimentRecord.for_test(
        "repeat", test, {"runs": runs, "cooldown_s": cooldown_s, "cv_limit": cv_limit, "test": test.describe()}
    )
    experiment.planned_s = [prepared.planned_s] * runs
    with experiment.running():
        for i in range(1, runs + 1):
            if i > 1:
                runner.cooldown(cooldown_s)
            runner.run_one(experiment, test, prepared, role=f"repeat {i}/{runs}", label=str(i))
            if (view := COMMAND_VIEW.get()) is not None:  # --dashboard: the statistics so far
                view.on_step(experiment.document, lambda: analyse(experiment.runs, cv_limit=cv_limit)[0])
    experiment.conclude(lambda: analyse(experiment.runs, cv_limit=cv_limit))
    return experiment, experiment_outcome(experiment.runs, experiment.stopped, runs, experiment.kept)


MAX_SELECTED = 10_000
"""MAX_SELECTED bounds how many runs a selection (--name/--tag/--tool) may describe."""

SELECTION = "--name/--tag/--tool"
"""SELECTION names the selection flags in errors."""


def _chosen(history: History, refs: tuple[str, ...]) -> list[str]:
    ids: list[str] = []
    for ref in refs:
        run_id = lookup_id(history, ref)
        if run_id in ids:
            raise BadInput("RUN", f"'{ref}' names run {run_id[:12]} a second time")
        ids.append(run_id)
    return ids


def _selected(history: History, query: RunQuery) -> list[str]:
    rows = list_runs(history, query)
    if not rows:
        raise BadInput(SELECTION, f"no run in the history matches ({history.path})")
    return [r.id for r in reversed(rows)]  # oldest first: the order they ran


def stored_runs(
    db: str | None, refs: tuple[str, ...], name: str | None, tool: str | None, tags: tuple[tuple[str, str], ...]
) -> tuple[list[str], list[StoredRun]]:
    """stored_runs are the ids and the records, from history ``db``, of the runs ``refs`` name
    (ids, unique prefixes, 'last' or results directories; a run named twice is refused,
    BadInput naming RUN) or, without refs, of every run of ``name``, ``tool`` and all of ``tags``, oldest first, at most
    MAX_SELECTED (none matching: BadInput naming the selection flags)."""
    with open_history(db) as history:
        ids = (
            _chosen(history, refs)
            if refs
            else _selected(history, RunQuery(name=name, tool=tool, tags=tags, limit=MAX_SELECTED))
        )
        return ids, [load_run(history, run_id) for run_id in ids]


def run_stats(
    ids: list[str],
    stored: list[StoredRun],
    title: str | None,
    cv_limit: float,
    selection: dict[str, Any] | None,
    out: str | None,
    db: str | None,
    save: bool,
) -> tuple[ExperimentRecord, Outcome]:
    """run_stats records ``stored`` (the runs ``ids`` name, in that order) as an experiment of
    kind ``stats`` named ``title`` (default: the runs' name when they share one, else 'runs')
    and returns it concluded with repeat's statistics, a figure flagged when its coefficient of
    variation is above ``cv_limit``, and outcome 0 (it runs nothing); ``selection`` is the
    selection that chose the runs, None for refs."""
    names = {str(s.meta.get("name")) for s in stored}
    experiment = ExperimentRecord(
        "stats",
        title or (names.pop() if len(names) == 1 else "runs"),
        {"runs": len(ids), "cv_limit": cv_limit, "run_ids": ids, "selection": selection},
        out=out,
        db=db,
        save=save,
    )
    with experiment.running():
        for position, run in enumerate(stored, 1):
            role = f"run {position}/{len(ids)}"
            experiment.add_run(
                run_entry(
                    run.summary,
                    position=position,
                    role=role,
                    label=str(position),
                    directory=run.directory,
                    exit_code=None,
                ),
                ExperimentRun(run.run_id, position, role, str(position)),
            )
    experiment.conclude(lambda: analyse(experiment.runs, cv_limit=cv_limit))
    return experiment, Outcome(exit_codes.OK)
