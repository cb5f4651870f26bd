"""Estimate: the mean of repeated runs' values of one figure with its Student's t confidence
interval (the run is the unit of analysis)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Estimate:
    """Estimate is ``n`` values' ``mean``, sample standard deviation ``sd`` (n − 1) and the
    ``confidence`` interval ``ci_low``–``ci_high`` of the mean, mean ± t(1 − (1 − confidence)/2,
    n − 1) · sd / √n; ``sd`` and the interval are None with one value."""

    n: int
    mean: float
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float = 0.95


def finite(values: Iterable[float | None]) -> list[float]:
    """finite keeps the values that are numbers (a run without the figure has None)."""
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def estimate(values: Iterable[float | None], confidence: float = 0.95) -> Estimate | None:
    """estimate is the Estimate of the finite values, None when there are none."""
    from scipy.stats import t as student_t  # type: ignore[import-untyped]  # lazy: 0.5 s of start-up

    xs = finite(values)
    if not xs:
        return None
    mean = statistics.fmean(xs)
    if len(xs) < 2:
        return Estimate(1, mean, None, None, None, confidence)
    sd = statistics.stdev(xs)
    half = float(student_t.ppf(1 - (1 - confidence) / 2, len(xs) - 1)) * sd / math.sqrt(len(xs))
    return Estimate(len(xs), mean, sd, mean - half, mean + half, confidence)
