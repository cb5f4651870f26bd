"""Baselines (``surge baseline set`` and ``surge baseline check``, docs/history.md): the runs a
baseline command names (RUN..., or an experiment's runs, of one variant for a comparison), a
baseline stored from them, and a check of runs against a baseline: each figure beyond the
tolerance, and significant too when both sides have repeats (``surge.analysis.regression``)."""

from __future__ import annotations

from dataclasses import dataclass

from surge.analysis.regression import METRICS, BaselineFinding, Comparison, baseline_significance, compare
from surge.core.errors import BadInput
from surge.history import StoredRun, load_run, lookup, lookup_id, open_history
from surge.history.baselines import load_baseline, set_baseline_runs
from surge.history.experiment_rows import experiment_runs, load_experiment, resolve_experiment
from surge.history.store import History
from surge.record.figures import figures, has_result


def _require_result(run: StoredRun, ref: str) -> None:
    if not has_result(run.summary):
        raise BadInput("RUN", f"{ref}: run {run.run_id[:8]} has no result (it did not finish): nothing to compare")


def _experiment_runs(history: History, ref: str, variant: str | None) -> tuple[str, list[StoredRun]]:
    """_experiment_runs are the id of the experiment ``ref`` names and its runs with a complete
    record (of ``variant`` for a comparison, which needs one)."""
    experiment_id = resolve_experiment(history, ref, where="--experiment")
    document = load_experiment(history, experiment_id)
    variants = list(dict.fromkeys(e.get("variant") for e in document["runs"] if e.get("variant")))
    if document["kind"] in ("sweep", "capacity"):
        raise BadInput(
            "--experiment",
            f"{ref}: a {document['kind']}'s runs are at different loads: name the runs of one load instead (RUN...)",
        )
    if variants and variant is None:
        raise BadInput("--variant", f"experiment {experiment_id[:8]} compares {', '.join(variants)}: choose one")
    if variant is not None and variant not in variants:
        raise BadInput(
            "--variant",
            f"'{variant}' is not a variant of experiment {experiment_id[:8]}"
            + (f" ({', '.join(variants)})" if variants else " (it has none)"),
        )
    runs = [
        load_run(history, link.run_id)
        for link in experiment_runs(history, experiment_id)
        if variant is None or link.variant == variant
    ]
    runs = [r for r in runs if has_result(r.summary) and r.meta.get("complete")]
    if not runs:
        raise BadInput("--experiment", f"{ref}: no run of it has a complete record")
    return experiment_id, runs


def chosen_runs(
    db: str | None, refs: tuple[str, ...], experiment: str | None, variant: str | None
) -> tuple[str | None, list[StoredRun]]:
    """chosen_runs are the runs RUN... (each a run id, prefix, 'last' or a results directory)
    or ``--experiment`` [``--variant``] name, with the experiment's id (None for RUN...); each
    with a result, none twice (else BadInput naming the flag)."""
    if refs and experiment is not None:
        raise BadInput("--experiment", "give either RUN... or --experiment, not both")
    if not refs and experiment is None:
        raise BadInput("RUN", "give the runs (RUN...) or --experiment ID")
    if variant is not None and experiment is None:
        raise BadInput("--variant", "only with --experiment")
    if experiment is not None:
        with open_history(db) as history:
            return _experiment_runs(history, experiment, variant)
    runs = [lookup(ref, db) for ref in refs]
    for ref, run in zip(refs, runs, strict=True):
        _require_result(run, ref)
    ids = [r.run_id for r in runs]
    twice = next((i for i in ids if ids.count(i) > 1), None)
    if twice is not None:
        raise BadInput("RUN", f"run {twice[:12]} is named twice")
    return None, runs


def store_baseline(
    db: str | None, name: str, refs: tuple[str, ...], experiment: str | None, variant: str | None
) -> tuple[list[str], str | None]:
    """store_baseline stores the runs chosen_runs names as baseline ``name`` (an existing one is
    replaced; each run must be in history ``db``) and returns their ids and the experiment's."""
    experiment_id, runs = chosen_runs(db, refs, experiment, variant)
    with open_history(db) as history:
        ids = [lookup_id(history, r.run_id or str(r.directory)) for r in runs]  # each must be in the history
        set_baseline_runs(history, name, ids, experiment_id)
    return ids, experiment_id


@dataclass(frozen=True)
class BaselineCheck:
    """BaselineCheck is runs checked against a baseline: its ``title`` (both sides, the
    tolerance), how many runs each side has, the ``tolerance`` (a fraction), and per metric
    either a ``comparisons`` entry (one run on each side: the tolerance alone) or a ``findings``
    entry (repeats on either side: ``metric_of`` maps each finding's figure to its metric)."""

    title: str
    baseline_runs: int
    current_runs: int
    tolerance: float
    comparisons: list[Comparison]
    findings: list[BaselineFinding]
    metric_of: dict[str, str]

    @property
    def single(self) -> bool:
        """single is whether each side has one run (then ``comparisons`` holds the metrics)."""
        return self.baseline_runs == 1 and self.current_runs == 1

    def regressed(self) -> list[tuple[str, float | None]]:
        """regressed are the regressed metrics with their change, in the metrics' order."""
        if self.single:
            return [(c.metric, c.change) for c in self.comparisons if c.verdict == "regressed"]
        return [(self.metric_of[f.figure], f.change) for f in self.findings if f.verdict == "regressed"]


def _sides(runs: list[StoredRun], experiment_id: str | None) -> str:
    if experiment_id is not None:
        return f"experiment {experiment_id[:8]} ({len(runs)} runs)"
    return f"run {runs[0].run_id[:8]}" if len(runs) == 1 else f"{len(runs)} runs"


def check_baseline(
    db: str | None,
    against: str,
    refs: tuple[str, ...],
    experiment: str | None,
    variant: str | None,
    metrics: list[str],
    tolerance: float,
) -> BaselineCheck:
    """check_baseline compares the runs chosen_runs names with baseline ``against`` of history
    ``db`` on ``metrics``, allowing ``tolerance`` (a fraction) of worsening: with one run on
    each side by the tolerance alone (``surge.history.compare``), else by significance and the
    tolerance (``surge.analysis.regression.baseline_significance``)."""
    with open_history(db) as history:
        baseline = load_baseline(history, against)
        base = [load_run(history, run_id) for run_id in baseline.run_ids]
    experiment_id, current = chosen_runs(db, refs, experiment, variant)
    title = (
        f"{_sides(current, experiment_id)} against baseline '{against}' ({_sides(base, baseline.experiment_id)}), "
        f"tolerance {tolerance:.1%}"
    )
    if len(base) == 1 and len(current) == 1:
        comparisons = compare(base[0].summary, current[0].summary, metrics, tolerance)
        return BaselineCheck(title, 1, 1, tolerance, comparisons, [], {})
    metric_of = {METRICS[m][0]: m for m in metrics}
    found = baseline_significance(
        [figures(r.summary) for r in base], [figures(r.summary) for r in current], list(metric_of), tolerance
    )
    return BaselineCheck(title, len(base), len(current), tolerance, [], found, metric_of)
