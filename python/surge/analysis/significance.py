"""Compare: whether variants differ, figure by figure, over repeated runs: each side's mean
with its t interval, the difference, a bootstrap interval on the ratio of means, Welch's
t-test (on log values when all are positive) and Mann–Whitney U, and a verdict at α. See
docs/analysis.md ("Compare"). The interval on the ratio is Kalibera & Jones's ratio of means
by scipy's BCa bootstrap (percentile when BCa is undefined; docs/analysis.md, "Ratio of
means"); which way a figure is better (lower latency and failure rate, higher throughput) is
``better``."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from surge.analysis.describe import Estimate, estimate, finite
from surge.analysis.slo import Figures
from surge.plan.thresholds import ThresholdError, parse_threshold
from surge.record.figures import KEY_FIGURES  # the figures compared unless told

RESAMPLES = 9999
"""RESAMPLES is how many bootstrap resamples an interval is computed from by default."""


def _ratio(numerator: np.ndarray, denominator: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.mean(numerator, axis=axis) / np.mean(denominator, axis=axis))


def ratio_of_means_ci(
    numerator: Sequence[float],
    denominator: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int | None = None,
) -> tuple[float, float] | None:
    """ratio_of_means_ci is the ``confidence`` interval of mean(numerator) / mean(denominator),
    each side resampled on its own (``seed`` fixes the resamples); the point itself when both
    sides are constant; None with fewer than two values a side, a denominator mean of 0, no
    finite interval, or ``resamples`` 0 (no bootstrap wanted)."""
    from scipy.stats import bootstrap  # type: ignore[import-untyped]  # lazy: 0.5 s of start-up

    top, bottom = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    if len(top) < 2 or len(bottom) < 2 or np.mean(bottom) == 0 or resamples <= 0:
        return None
    if np.ptp(top) == 0 and np.ptp(bottom) == 0:
        point = float(np.mean(top) / np.mean(bottom))
        return point, point
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # degenerate or infinite resamples: judged below
            found = bootstrap(
                (top, bottom),
                _ratio,
                n_resamples=resamples,
                confidence_level=confidence,
                method=method,
                vectorized=True,
                rng=np.random.default_rng(seed),
            )
        low, high = float(found.confidence_interval.low), float(found.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high
    return None


Better = Literal["higher", "lower"]
"""Better is the direction in which a figure improves."""

HIGHER_IS_BETTER = frozenset({"responses_per_s", "successes_per_s", "success_rate", "checks"})
"""HIGHER_IS_BETTER are the key figures where more is better (throughput, goodput, success)."""

LOWER_IS_BETTER = frozenset(
    {"p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99_9_ms", "mean_ms", "max_ms", "failure_rate", "dropped"}
)
"""LOWER_IS_BETTER are the key figures where less is better (latency, failures, dropped)."""


def better(figure: str) -> Better | None:
    """better is the direction ``figure`` improves in: the sets above, then by its unit (``_ms``
    lower, ``_per_s`` higher), then a threshold expression by its operator (``p(99) < 100ms``:
    lower); None when unknown."""
    if figure in HIGHER_IS_BETTER or figure.endswith("_per_s"):
        return "higher"
    if figure in LOWER_IS_BETTER or figure.endswith("_ms"):
        return "lower"
    try:
        op = parse_threshold(figure).op
    except ThresholdError:
        return None
    return "lower" if op in ("<", "<=") else "higher" if op in (">", ">=") else None


ALPHA = 0.05
"""ALPHA is the significance level of the verdicts unless told."""


Outcome = Literal["better", "worse", "different", "no significant difference", "not tested"]
"""Outcome is a comparison's verdict on the variant against the reference: ``different`` is a
significant difference in a figure with no better direction; ``not tested`` lacks repeats."""


Scale = Literal["log", "linear"]
"""Scale is what Welch's test compares: the logs of the values or the values."""


@dataclass(frozen=True)
class FigureComparison:
    """FigureComparison is one figure of a variant against the reference: both ``Estimate``\\ s
    (None without values), ``difference`` (variant mean − reference mean), ``ratio`` (variant
    mean / reference mean, None when the reference mean is 0) with its bootstrap ``ratio_ci``,
    the two-sided p-values ``welch_p`` and ``mann_whitney_p`` (None when not tested), the
    ``verdict`` at ``alpha`` (decided by Welch's test) and a ``note`` in words. ``welch_scale``
    is the scale Welch's test was on: ``log`` when every value on both sides is positive (a
    ratio of geometric means), ``linear`` otherwise."""

    figure: str
    reference: Estimate | None
    variant: Estimate | None
    difference: float | None
    ratio: float | None
    ratio_ci: tuple[float, float] | None
    welch_p: float | None
    mann_whitney_p: float | None
    verdict: Outcome
    note: str = ""
    alpha: float = ALPHA
    welch_scale: Scale = "linear"


def welch_scale(ref: Sequence[float], var: Sequence[float]) -> Scale:
    """welch_scale is ``log`` when every value on both sides is positive, else ``linear``. A run's
    throughput and latency vary by factors (a slower moment of the machine scales them): a
    variant 8× faster has 8× the spread, which on the linear scale alone can hide the
    difference (993 ± 3 req/s against 7,988 ± 4,471 over 4 runs each, every run of the one
    above every run of the other: p = 0.052; on logs about 0.008)."""
    return "log" if min(ref) > 0 and min(var) > 0 else "linear"


def _p_values(ref: list[float], var: list[float], scale: Scale) -> tuple[float | None, float | None, str]:
    from scipy.stats import mannwhitneyu, ttest_ind  # lazy: 0.5 s of start-up

    if max(ref) == min(ref) and max(var) == min(var):
        if ref[0] == var[0]:
            return 1.0, 1.0, "every run gave the same value"
        # Welch's t is undefined without variation. The rank test's exact p for two groups that do
        # not overlap is the chance of that split among all C(n+m, n): a figure that moves in
        # steps (400 or 396 responses in a 1 s run of 4 workers) splits so by chance, often.
        separated = min(1.0, 2.0 / math.comb(len(ref) + len(var), len(ref)))
        return (
            None,
            separated,
            "no run-to-run variation on either side: Welch's test is undefined; the exact rank test "
            f"(p = 2 / C({len(ref) + len(var)}, {len(ref)}) = {separated:.3g}) decides",
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny samples: scipy warns, the p-values stand
        if scale == "log":
            welch = float(ttest_ind(np.log(var), np.log(ref), equal_var=False).pvalue)
        else:
            welch = float(ttest_ind(var, ref, equal_var=False).pvalue)
        mann_whitney = float(mannwhitneyu(var, ref, alternative="two-sided").pvalue)
    return (welch if math.isfinite(welch) else None), mann_whitney, ""


def _verdict(significant: bool, difference: float, direction: Better | None) -> Outcome:
    if not significant or difference == 0:
        return "no significant difference"
    if direction is None:
        return "different"
    return "better" if (difference > 0) == (direction == "higher") else "worse"


def compare_figure(
    figure: str,
    reference: Sequence[float | None],
    variant: Sequence[float | None],
    *,
    alpha: float = ALPHA,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int | None = None,
    direction: Better | None = None,
) -> FigureComparison:
    """compare_figure compares one figure's values over the variant's runs with the
    reference's (None values are left out); ``direction`` defaults to ``better(figure)``.
    With fewer than two runs a side nothing is tested and the verdict is ``not tested``."""
    ref, var = finite(reference), finite(variant)
    ref_estimate, var_estimate = estimate(ref, confidence), estimate(var, confidence)

    def not_tested(note: str, difference: float | None = None, ratio: float | None = None) -> FigureComparison:
        return FigureComparison(
            figure, ref_estimate, var_estimate, difference, ratio, None, None, None, "not tested", note, alpha
        )

    if ref_estimate is None or var_estimate is None:
        return not_tested(f"the {'reference' if ref_estimate is None else 'variant'} has no {figure}")
    difference = var_estimate.mean - ref_estimate.mean
    ratio = var_estimate.mean / ref_estimate.mean if ref_estimate.mean != 0 else None
    if len(ref) < 2 or len(var) < 2:
        note = f"{min(len(ref), len(var))} run on one side: no test (repeat the runs to test the difference)"
        return not_tested(note, difference, ratio)
    scale = welch_scale(ref, var)
    welch, mann_whitney, note = _p_values(ref, var, scale)
    decisive = welch if welch is not None else mann_whitney  # Welch decides where it is defined
    significant = decisive is not None and decisive < alpha
    if welch is not None and mann_whitney is not None and significant != (mann_whitney < alpha):
        note = (
            f"Welch (p = {welch:.3g}) and Mann–Whitney (p = {mann_whitney:.3g}) disagree at α = {alpha:g}: "
            "skewed values or an outlier run; the verdict follows Welch"
        )
    ratio_ci = ratio_of_means_ci(var, ref, confidence=confidence, resamples=resamples, seed=seed)
    return FigureComparison(
        figure,
        ref_estimate,
        var_estimate,
        difference,
        ratio,
        ratio_ci,
        welch,
        mann_whitney,
        _verdict(significant, difference, direction or better(figure)),
        note,
        alpha,
        scale,
    )


@dataclass(frozen=True)
class VariantComparison:
    """VariantComparison is one variant against the reference, figure by figure."""

    reference: str
    variant: str
    figures: list[FigureComparison]


def compare_variants(
    variants: Mapping[str, Sequence[Figures]],
    *,
    reference: str | None = None,
    figures: Sequence[str] = KEY_FIGURES,
    alpha: float = ALPHA,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int | None = None,
) -> list[VariantComparison]:
    """compare_variants compares every pair of variants (name → its runs' figures, in order):
    the ``reference`` (default: the first) with each other, then each later pair in order (B
    with C ...), each figure on its own and at ``alpha`` (no correction for the number of
    comparisons); ValueError with fewer than two variants or an unknown reference."""
    if len(variants) < 2:
        raise ValueError(f"a comparison needs two variants or more, got {len(variants)}")
    name = reference if reference is not None else next(iter(variants))
    if name not in variants:
        raise ValueError(f"the reference '{name}' is not one of the variants ({', '.join(variants)})")
    ordered = [name] + [other for other in variants if other != name]
    return [
        VariantComparison(
            a,
            b,
            [
                compare_figure(
                    f,
                    [run.get(f) for run in variants[a]],
                    [run.get(f) for run in variants[b]],
                    alpha=alpha,
                    confidence=confidence,
                    resamples=resamples,
                    seed=seed,
                )
                for f in figures
            ],
        )
        for i, a in enumerate(ordered)
        for b in ordered[i + 1 :]
    ]
