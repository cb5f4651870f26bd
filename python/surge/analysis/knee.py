"""Knee: the load after which throughput stops growing in proportion, found by Kneedle
(Satopää, Albrecht, Irwin, Raghavan, "Finding a 'Kneedle' in a Haystack", ICDCS workshops
2011) through the ``kneed`` package, on throughput against load."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

MIN_POINTS = 3
"""MIN_POINTS is the fewest levels (up to and including the peak) Kneedle is given: with two
points every curve is a line."""


@dataclass(frozen=True)
class Knee:
    """Knee is the knee's load and throughput, or None for both with ``reason`` saying why
    there is none."""

    load: float | None
    throughput: float | None
    reason: str = ""


def find_knee(loads: Sequence[float], throughput: Sequence[float], sensitivity: float = 1.0) -> Knee:
    """find_knee runs Kneedle (concave, increasing; ``S`` = ``sensitivity``) on the levels up
    to and including the peak throughput (``loads`` ascending, distinct): the falling part
    after the peak is a collapse, not a knee. The knee is one of the measured loads."""
    from kneed import KneeLocator  # type: ignore[import-untyped]  # lazy: 0.5 s of start-up

    if len(loads) != len(throughput):
        raise ValueError("find_knee: loads and throughput differ in length")
    if not loads:
        return Knee(None, None, "no levels measured")
    peak = max(range(len(throughput)), key=lambda i: (throughput[i], -i))
    xs, ys = list(loads[: peak + 1]), list(throughput[: peak + 1])
    if len(xs) < MIN_POINTS:
        return Knee(None, None, f"the peak is at level {peak + 1}: Kneedle needs {MIN_POINTS} levels up to it")
    if ys[-1] <= ys[0]:
        return Knee(None, None, "throughput does not rise with load")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kneed warns 'No knee/elbow found' and we say so ourselves
        locator = KneeLocator(xs, ys, S=sensitivity, curve="concave", direction="increasing")
    if locator.knee is None:
        return Knee(None, None, "throughput rises about in proportion to load up to the peak: no knee")
    load = float(locator.knee)
    return Knee(load, float(ys[xs.index(load)]))
