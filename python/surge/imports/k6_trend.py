"""k6's trend statistics: the percentile method of k6's TrendSink (lib/metrics/sink.go), so
that figures computed from per-request points equal what k6 printed."""

from __future__ import annotations

import math
from collections.abc import Sequence


def k6_percentile(values: Sequence[float], percent: float) -> float | None:
    """k6_percentile is k6's ``TrendSink.P``: with n sorted values, i = p × (n − 1) and the
    value linearly interpolated between indexes floor(i) and ceil(i); ``med`` is p = 0.5."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    i = percent / 100 * (len(values) - 1)
    low, high = values[math.floor(i)], values[math.ceil(i)]
    return low + (high - low) * (i - math.floor(i))
