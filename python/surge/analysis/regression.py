"""Baseline arithmetic: ``surge baseline check``'s comparison of a run with its baseline (each
figure's relative change, and whether it worsened by more than the tolerance) and, when both
sides have repeated runs, its significance: a figure regressed only if it is significantly
worse (Welch, α) AND worse by more than the tolerance. See docs/analysis.md ("Baseline check
with repeats"); the baselines themselves are stored by surge.history.baselines."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from surge.analysis.significance import ALPHA, RESAMPLES, FigureComparison, better, compare_figure
from surge.analysis.slo import Figures
from surge.record.figures import figures as summary_figures

Finding = Literal["regressed", "improved", "ok", "missing"]
"""Finding is a figure's verdict against the baseline (the words ``compare`` uses too)."""


@dataclass(frozen=True)
class BaselineFinding:
    """BaselineFinding is one figure against the baseline: the ``comparison`` (means, intervals,
    p-values), ``change`` ((current mean − baseline mean) / |baseline mean|; None when a side
    lacks it, ±inf from a baseline of 0), the ``verdict`` and its ``reason`` in words."""

    figure: str
    comparison: FigureComparison
    change: float | None
    verdict: Finding
    reason: str


def _finding(figure: str, comparison: FigureComparison, tolerance: float) -> BaselineFinding:
    if comparison.reference is None or comparison.variant is None:
        return BaselineFinding(figure, comparison, None, "missing", comparison.note)
    change = relative_change(comparison.reference.mean, comparison.variant.mean)
    direction = better(figure)
    worsened = change if direction == "lower" else -change
    beyond = f"{abs(change):.1%} {'>' if abs(worsened) > tolerance else '≤'} tolerance {tolerance:.1%}"
    if comparison.verdict == "not tested":
        verdict: Finding = "regressed" if worsened > tolerance else "improved" if worsened < -tolerance else "ok"
        return BaselineFinding(figure, comparison, change, verdict, f"{comparison.note}; tolerance only: {beyond}")
    if comparison.welch_p is not None:
        p = f"Welch p = {comparison.welch_p:.3g}"
    elif comparison.mann_whitney_p is not None:  # no variation on either side: the exact rank test decided
        p = f"exact rank-test p = {comparison.mann_whitney_p:.3g}"
    else:
        p = "no p-value"
    if comparison.verdict not in ("better", "worse"):
        return BaselineFinding(figure, comparison, change, "ok", f"within noise ({p} ≥ α = {comparison.alpha:g})")
    if abs(worsened) <= tolerance:
        return BaselineFinding(figure, comparison, change, "ok", f"significant ({p}) but {beyond}")
    verdict = "regressed" if comparison.verdict == "worse" else "improved"
    return BaselineFinding(figure, comparison, change, verdict, f"significant ({p}) and {beyond}")


def baseline_significance(
    baseline_runs: Sequence[Figures],
    current_runs: Sequence[Figures],
    figures: Sequence[str],
    tolerance: float,
    *,
    alpha: float = ALPHA,
    resamples: int = RESAMPLES,
    seed: int | None = None,
) -> list[BaselineFinding]:
    """baseline_significance judges each figure (a key of the runs' figures) of the current
    runs against the baseline runs: ``regressed`` when significantly worse at ``alpha`` and
    worse by more than ``tolerance`` (a fraction of the baseline mean), ``improved`` the other
    way, ``ok`` otherwise, ``missing`` when a side lacks the figure; a side with one run is
    judged by the tolerance alone, and its reason says so. ValueError for a figure with no
    known better direction."""
    unknown = [f for f in figures if better(f) is None]
    if unknown:
        raise ValueError(f"no better direction known for {', '.join(unknown)}")
    return [
        _finding(
            f,
            compare_figure(
                f,
                [r.get(f) for r in baseline_runs],
                [r.get(f) for r in current_runs],
                alpha=alpha,
                resamples=resamples,
                seed=seed,
            ),
            tolerance,
        )
        for f in figures
    ]


METRICS: dict[str, tuple[str, str]] = {
    "p50": ("p50_ms", "higher"),
    "p95": ("p95_ms", "higher"),
    "p99": ("p99_ms", "higher"),
    "responses_per_s": ("responses_per_s", "lower"),
    "success_rate": ("success_rate", "lower"),
    "failure_rate": ("failure_rate", "higher"),
}
"""METRICS maps each metric ``--metric`` accepts to its figure (``surge.record.figures``) and
the direction that is worse."""


DEFAULT_METRICS = ("p95", "p99", "responses_per_s", "failure_rate")
"""DEFAULT_METRICS are the metrics ``surge baseline check`` compares unless told."""


DEFAULT_TOLERANCE = 0.05
"""DEFAULT_TOLERANCE is the relative worsening allowed unless told (5%)."""


@dataclass(frozen=True)
class Comparison:
    """Comparison: one metric of a run against its baseline. ``change`` is (current - baseline)
    / baseline (None when either is missing; ±inf from a baseline of 0); ``verdict`` is
    ``regressed`` (worse by more than the tolerance), ``improved`` (better by more), ``ok``, or
    ``missing`` (a figure not recorded: never counted as a regression)."""

    metric: str
    baseline: float | None
    current: float | None
    change: float | None
    verdict: str


def relative_change(baseline: float, current: float) -> float:
    """relative_change is (current − baseline) / |baseline|; 0 or ±inf from a baseline of 0."""
    if baseline == 0:
        return 0.0 if current == 0 else math.copysign(math.inf, current)
    return (current - baseline) / abs(baseline)


def compare(
    baseline: Mapping[str, Any], current: Mapping[str, Any], metrics: list[str], tolerance: float
) -> list[Comparison]:
    """compare compares the ``metrics`` of two summary documents, allowing ``tolerance``
    (a fraction) of relative worsening."""
    before, after = summary_figures(baseline), summary_figures(current)
    found = []
    for metric in metrics:
        figure, worse = METRICS[metric]
        b, c = before[figure], after[figure]
        if b is None or c is None:
            found.append(Comparison(metric, b, c, None, "missing"))
            continue
        change = relative_change(float(b), float(c))
        worsened = change if worse == "higher" else -change
        verdict = "regressed" if worsened > tolerance else "improved" if worsened < -tolerance else "ok"
        found.append(Comparison(metric, float(b), float(c), change, verdict))
    return found
