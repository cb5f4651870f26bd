"""Baseline significance: ``surge baseline check`` when both the baseline and the current
side have repeated runs: a figure regressed only if it is significantly worse (Welch, α) AND
worse by more than the tolerance. See docs/analysis.md ("Baseline check with repeats")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from surge.analysis.bootstrap import RESAMPLES
from surge.analysis.compare import ALPHA, FigureComparison, compare_figure
from surge.analysis.direction import better
from surge.analysis.slo import Figures
from surge.history.baselines import relative_change

Finding = Literal["regressed", "improved", "ok", "missing"]
"""Finding is a figure's verdict against the baseline (``surge.history.baselines``' words)."""


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
    p = f"Welch p = {comparison.welch_p:.3g}" if comparison.welch_p is not None else "no p-value"
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
