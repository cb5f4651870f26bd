"""Bootstrap: the confidence interval of a ratio of two means from independent samples
(Kalibera & Jones's ratio of means), by scipy's BCa bootstrap, percentile when BCa is
undefined. See docs/analysis.md ("Ratio of means")."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

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
