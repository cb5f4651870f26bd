"""Over-saturation: whether an open-model run's target has stopped keeping up, from its live
per-interval figures (docs/analysis.md, "Over-saturation"). A target that keeps up holds about
rate × latency requests outstanding (Little's law), steady from interval to interval; one that
does not queues the excess, so the requests outstanding and the time to the first token (or
the latency, without token streams) both climb for as long as the load lasts. The rule asks
for both: concurrency rising with latency flat is a pipeline still filling (long requests);
latency rising with concurrency flat is a slower target that still keeps up.

Each figure is tested over the last ``window_intervals`` intervals after the warm-up: Kendall's
τ between time and value (one-sided, the rise) must be significant at ``alpha`` and the
Theil–Sen line must rise across the window by at least ``min_relative_rise`` of the window's
median and by an absolute floor, so that noise, however ordered, is too small to count. GuideLLM's
over-saturation detector has the same two figures (a least-squares slope with its margin of
error); rank statistics are used here since a shared machine's pauses make outliers."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SaturationRule:
    """SaturationRule holds the limits of the over-saturation rule: intervals ending within
    ``warmup_s`` of the start are left out (the run filling up); the last ``window_intervals``
    after it are tested, at least ``min_intervals`` (4 one-second intervals span 3 s: Kendall's
    exact one-sided p of a perfect rise is then 1/24 = 0.042); each figure's rise must be
    significant at ``alpha`` and reach ``min_relative_rise`` of its median over the window, and
    at least ``min_concurrency_rise`` requests and ``min_latency_rise_ms``; and it must hold
    after each of the last ``persist`` intervals (a pause of the machine in the last interval
    lifts both figures at once, and they fall back in the next)."""

    warmup_s: float = 1.0
    min_intervals: int = 4
    window_intervals: int = 8
    alpha: float = 0.05
    min_relative_rise: float = 0.5
    min_concurrency_rise: float = 4.0
    min_latency_rise_ms: float = 20.0
    persist: int = 2


DEFAULT_RULE = SaturationRule()
"""DEFAULT_RULE is the over-saturation rule sweeps and capacity searches stop a run by."""


@dataclass(frozen=True)
class IntervalPoint:
    """IntervalPoint is what the rule reads of one interval: its end (``end_s``, seconds since
    the measured run started), the requests outstanding (``concurrency``), and the median time
    to the first token (``ttft_ms``) and median latency (``latency_ms``) of its responses; None
    where the interval has none."""

    end_s: float
    concurrency: float | None
    ttft_ms: float | None = None
    latency_ms: float | None = None


@dataclass(frozen=True)
class Rise:
    """Rise is one figure's trend over the window: its ``points``, the Theil–Sen ``slope`` per
    second, Kendall's ``tau`` with the one-sided ``p`` of a rise, the ``first`` and ``last``
    values observed, the ``rise`` the slope makes across the window and its ``relative`` size
    (over the window's median); ``rising`` when it passed every test of the rule."""

    points: int
    slope: float
    tau: float
    p: float
    first: float
    last: float
    rise: float
    relative: float
    rising: bool

    def document(self) -> dict[str, Any]:
        """document is the rise as a record holds it."""
        return {
            "points": self.points,
            "slope_per_s": self.slope,
            "tau": self.tau,
            "p": self.p,
            "first": self.first,
            "last": self.last,
            "rise": self.rise,
            "relative": self.relative,
            "rising": self.rising,
        }


def rise(times: Sequence[float], values: Sequence[float], floor: float, rule: SaturationRule = DEFAULT_RULE) -> Rise:
    """rise tests whether ``values`` (at ``times``, in order) rise: Kendall's τ one-sided p below
    ``rule.alpha``, and the Theil–Sen rise across the window at least ``rule.min_relative_rise``
    of the median and at least ``floor``. Fewer than two points: not rising."""
    # Function-local: scipy loads only once a run is watched.
    from scipy.stats import kendalltau, theilslopes  # type: ignore[import-untyped]

    n = len(values)
    if n < 2 or n != len(times):
        return Rise(n, 0.0, 0.0, 1.0, values[0] if values else 0.0, values[-1] if values else 0.0, 0.0, 0.0, False)
    slope = float(theilslopes(values, times).slope)
    if len(set(values)) == 1:  # no order at all: τ is undefined, and there is no rise
        tau, p = 0.0, 1.0
    else:
        result = kendalltau(times, values, alternative="greater")
        tau, p = float(result.statistic), float(result.pvalue)
    gain = slope * (times[-1] - times[0])
    median = statistics.median(values)
    relative = gain / median if median > 0 else (math.inf if gain > 0 else 0.0)
    half = n // 2  # the later half of the window lies wholly above the earlier half: no spike made the rise
    separated = min(values[n - half :]) > max(values[:half])
    rising = p < rule.alpha and separated and gain >= floor and relative >= rule.min_relative_rise
    return Rise(n, slope, tau, p, float(values[0]), float(values[-1]), gain, relative, rising)


@dataclass(frozen=True)
class OverSaturation:
    """OverSaturation is the rule's finding: at ``at_s`` (seconds into the measured run) the
    ``concurrency`` and the ``latency`` (named ``latency_name``: ``TTFT p50`` or ``latency
    p50``) had both been rising over the window."""

    at_s: float
    concurrency: Rise
    latency: Rise
    latency_name: str

    def text(self) -> str:
        """text says it in one line: ``over-saturated after 5.0 s: concurrency 12 → 95, TTFT
        p50 312.0 ms → 2.1 s``."""
        return (
            f"over-saturated after {self.at_s:.1f} s: concurrency {self.concurrency.first:,.0f} → "
            f"{self.concurrency.last:,.0f}, {self.latency_name} {_ms(self.latency.first)} → {_ms(self.latency.last)}"
        )

    def document(self) -> dict[str, Any]:
        """document is the finding as a record holds it (``stopped_early``'s evidence)."""
        return {
            "at_s": self.at_s,
            "latency_name": self.latency_name,
            "concurrency": self.concurrency.document(),
            "latency": self.latency.document(),
        }


def _ms(value: float) -> str:
    return f"{value:,.1f} ms" if value < 1000 else f"{value / 1000:,.1f} s"


def _series(points: Sequence[IntervalPoint], key: str) -> tuple[list[float], list[float]]:
    found = [(p.end_s, getattr(p, key)) for p in points]
    kept = [(t, float(v)) for t, v in found if v is not None and math.isfinite(v)]
    return [t for t, _ in kept], [v for _, v in kept]


def over_saturation(points: Sequence[IntervalPoint], rule: SaturationRule = DEFAULT_RULE) -> OverSaturation | None:
    """over_saturation applies the rule to a run's intervals so far (in order): the finding when
    the requests outstanding and the TTFT (the latency when the window has too few intervals
    with a first token) have both been rising over the last ``rule.window_intervals`` intervals
    after the warm-up, as they had after each of the ``rule.persist`` − 1 intervals before;
    else None."""
    found = None
    for end in range(len(points) - rule.persist + 1, len(points) + 1):
        found = _rising_both(points[:end], rule) if end > 0 else None
        if found is None:
            return None
    return found


def _rising_both(points: Sequence[IntervalPoint], rule: SaturationRule) -> OverSaturation | None:
    window = [p for p in points if p.end_s > rule.warmup_s][-rule.window_intervals :]
    times, concurrency = _series(window, "concurrency")
    if len(concurrency) < rule.min_intervals:
        return None
    load = rise(times, concurrency, rule.min_concurrency_rise, rule)
    if not load.rising:
        return None
    name, key = "TTFT p50", "ttft_ms"
    latency_times, latency = _series(window, key)
    if len(latency) < rule.min_intervals:
        name, key = "latency p50", "latency_ms"
        latency_times, latency = _series(window, key)
    if len(latency) < rule.min_intervals:
        return None
    wait = rise(latency_times, latency, rule.min_latency_rise_ms, rule)
    if not wait.rising:
        return None
    return OverSaturation(window[-1].end_s, load, wait, name)
