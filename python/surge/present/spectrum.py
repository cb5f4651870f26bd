"""The latency percentile spectrum (HdrHistogram's percentile plot) of a run, decoded from the
record's V2 histogram (``histograms.latency``, microseconds) with the ``hdrhistogram`` package."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

SPECTRUM_PERCENTILES = (
    0.0,
    10.0,
    25.0,
    50.0,
    75.0,
    90.0,
    95.0,
    99.0,
    99.5,
    99.9,
    99.95,
    99.99,
    99.995,
    99.999,
    99.9999,
    100.0,
)
"""SPECTRUM_PERCENTILES are the percentiles the spectrum is read at (those a histogram of n
samples resolves: 1/(1−p) up to n)."""


def latency_spectrum(summary: Mapping[str, Any]) -> list[tuple[float, float]]:
    """latency_spectrum is [(percentile, latency ms)] of the run's every-response histogram,
    the percentiles its sample count resolves (and 100); [] when the record has no histogram
    (an import without one, a run that measured nothing)."""
    encoded = (summary.get("histograms") or {}).get("latency")
    if not encoded:
        return []
    from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]

    histogram = HdrHistogram.decode(encoded)
    total = histogram.get_total_count()
    if total == 0:
        return []
    found = []
    for p in SPECTRUM_PERCENTILES:
        if p < 100.0 and 1.0 / (1.0 - p / 100.0) > total:
            continue
        found.append((p, histogram.get_value_at_percentile(p) / 1000.0))
    return found


def spectrum_x(percentile: float, total_cap: float = 1e7) -> float:
    """spectrum_x places a percentile on the spectrum's axis: 1/(1−p), drawn on a log scale
    (100 % at ``total_cap``)."""
    return total_cap if percentile >= 100.0 else 1.0 / (1.0 - percentile / 100.0)


def nines(x: float) -> str:
    """nines labels the axis position ``x`` = 1/(1−p) as its percentile: 10 → ``90%``."""
    p = 100.0 * (1.0 - 1.0 / x)
    digits = max(0, round(math.log10(x)) - 2)
    return f"{p:.{digits}f}%"
