"""spectrum: the latency percentile spectrum (HdrHistogram's percentile plot) of a run, from its
summary's ``histograms.latency`` (a V2-encoded, base64 HdrHistogram in microseconds, decoded with
the ``hdrhistogram`` package): the one reading both report formats chart."""

from __future__ import annotations

from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]

TICKS_PER_HALF_DISTANCE = 5
"""TICKS_PER_HALF_DISTANCE is HdrHistogram's percentile iteration step: 5 points each time the
distance to 100 % halves (the standard percentile distribution output)."""

UNITS_PER_MS = 1000.0
"""UNITS_PER_MS: the record's histograms count microseconds (docs/record.md)."""


def spectrum_points(encoded: str | None) -> list[tuple[float, float]]:
    """spectrum_points are (1/(1−p), latency ms) pairs along the histogram's percentiles, p a
    fraction; the last (p = 1, the maximum) is placed at x = the count, where 1/(1−p) would be
    infinite. Empty when there is no histogram, it cannot be decoded, or it counts nothing."""
    if not encoded:
        return []
    try:
        histogram = HdrHistogram.decode(encoded)
    except Exception:  # an import or an old record may hold no valid histogram: no spectrum
        return []
    count = histogram.get_total_count()
    if count <= 0:
        return []
    points: list[tuple[float, float]] = []
    for step in histogram.get_percentile_iterator(TICKS_PER_HALF_DISTANCE):
        p = step.percentile_level_iterated_to / 100.0
        x = float(count) if p >= 1.0 else min(1.0 / (1.0 - p), float(count))
        if points and x <= points[-1][0]:
            continue  # the log axis needs x strictly rising
        points.append((x, step.value_iterated_to / UNITS_PER_MS))
    return points
