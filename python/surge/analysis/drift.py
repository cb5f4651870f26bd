"""Drift: whether one variant's figure trends with the order the runs ran in, so that a
difference between variants may come from the machine or the target changing over the
experiment (warming up, filling up, throttling) rather than from the variants. Kendall's τ
between the run order and the values (a trend of any shape, robust to an outlier run) and the
Theil–Sen slope (the trend's size). See docs/experiments.md ("Drift")."""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

DRIFT_ALPHA = 0.05
"""DRIFT_ALPHA: a trend is flagged only when Kendall's τ has a two-sided p-value below it."""

DRIFT_MIN_CHANGE = 0.10
"""DRIFT_MIN_CHANGE: a trend is flagged only when the Theil–Sen line changes by at least this
fraction of the figure's median from the variant's first run to its last."""

DRIFT_MIN_RUNS = 5
"""DRIFT_MIN_RUNS: with fewer runs a side no trend is judged (with 4, Kendall's exact p is at
least 0.083, never below DRIFT_ALPHA)."""


@dataclass(frozen=True)
class Trend:
    """Trend is one figure of one variant against run order: ``n`` runs, Kendall's ``tau`` and
    its two-sided ``p``, the Theil–Sen ``slope`` per run of the experiment, ``change`` (the
    line's rise from the variant's first run to its last, in the figure's unit), ``relative``
    (change / |median|, None when the median is 0) and ``flagged``: p < DRIFT_ALPHA and
    |relative| ≥ DRIFT_MIN_CHANGE with at least DRIFT_MIN_RUNS runs."""

    n: int
    tau: float | None
    p: float | None
    slope: float | None
    change: float | None
    relative: float | None
    flagged: bool

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the trend as experiment.json holds it."""
        return asdict(self)


def trend(order: Sequence[float], values: Sequence[float | None]) -> Trend:
    """trend judges ``values`` (None: the run lacks the figure, left out) against ``order``
    (each run's place in the experiment, 1 for the first run that ran)."""
    from scipy.stats import kendalltau, theilslopes  # type: ignore[import-untyped]  # lazy: 0.5 s of start-up

    pairs = [(float(x), float(v)) for x, v in zip(order, values, strict=False) if v is not None and math.isfinite(v)]
    n = len(pairs)
    if n < DRIFT_MIN_RUNS or len({v for _, v in pairs}) < 2:
        return Trend(n, None, None, None, None, None, False)
    xs, ys = [x for x, _ in pairs], [v for _, v in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ties: scipy warns, the statistic stands
        tau = kendalltau(xs, ys)
        slope = float(theilslopes(ys, xs).slope)
    p = float(tau.pvalue) if math.isfinite(tau.pvalue) else None
    change = slope * (max(xs) - min(xs))
    median = statistics.median(ys)
    relative = change / abs(median) if median != 0 else None
    flagged = p is not None and p < DRIFT_ALPHA and relative is not None and abs(relative) >= DRIFT_MIN_CHANGE
    return Trend(n, float(tau.statistic), p, slope, change, relative, flagged)
