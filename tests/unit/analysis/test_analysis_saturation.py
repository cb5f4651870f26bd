"""The over-saturation rule (surge.analysis.saturation; docs/analysis.md, "Over-saturation") on
synthetic interval series: a steady run, however noisy, never triggers it; concurrency rising
with latency flat (a pipeline filling) or latency rising with concurrency flat (a slower target
keeping up) does not either; both rising does, within a few intervals, and says so."""

from __future__ import annotations

import numpy as np
import pytest

from surge.analysis.saturation import DEFAULT_RULE, IntervalPoint, over_saturation, rise


def _points(concurrency, latency_ms, *, ttft: bool = True) -> list[IntervalPoint]:
    return [
        IntervalPoint(float(i + 1), c, ttft_ms=lat if ttft else None, latency_ms=lat * 3)
        for i, (c, lat) in enumerate(zip(concurrency, latency_ms, strict=True))
    ]


def _noisy(rng: np.random.Generator, level: float, n: int, spread: float, outliers: float = 0.1) -> list[float]:
    """_noisy is a steady series of ``n`` values around ``level``, lognormal noise of ``spread``,
    with a share of ``outliers`` made 3 to 10 times larger (a pause of a shared machine)."""
    values = level * rng.lognormal(0.0, spread, n)
    hit = rng.random(n) < outliers
    values[hit] *= rng.uniform(3, 10, int(hit.sum()))
    return [float(v) for v in values]


def _every_prefix(points: list[IntervalPoint]):
    """_every_prefix is the rule's answer after each interval, as a run asks it live."""
    return [over_saturation(points[: i + 1]) for i in range(len(points))]


@pytest.mark.parametrize("seed", range(200))
def test_a_steady_noisy_run_never_triggers_it(seed):
    """200 steady runs of 60 intervals (concurrency about 4, TTFT about 20 ms: half the inference
    target's capacity), with lognormal noise and one interval in ten a pause 3-10× longer, asked
    after every interval as a live run is: never over-saturated."""
    rng = np.random.default_rng(seed)
    latency = _noisy(rng, 20.0, 60, 0.3)
    concurrency = [max(0.0, c) for c in _noisy(rng, 4.0, 60, 0.4)]
    assert not any(_every_prefix(_points(concurrency, latency)))


@pytest.mark.parametrize("seed", range(50))
def test_a_steady_busy_level_never_triggers_it(seed):
    """Near capacity on a busy machine: a hundred in flight and 500 ms, with wide noise."""
    rng = np.random.default_rng(1000 + seed)
    latency = _noisy(rng, 500.0, 30, 0.5, outliers=0.2)
    concurrency = _noisy(rng, 100.0, 30, 0.5, outliers=0.2)
    assert not any(_every_prefix(_points(concurrency, latency)))


def test_rising_concurrency_with_flat_latency_does_not_trigger_it():
    """Requests longer than the run so far: the outstanding ones pile up while each takes as long
    as the first (a pipeline filling, not a queue)."""
    rng = np.random.default_rng(7)
    concurrency = [10.0 * (i + 1) for i in range(12)]
    latency = _noisy(rng, 300.0, 12, 0.05, outliers=0.0)
    assert not any(_every_prefix(_points(concurrency, latency)))


def test_rising_latency_with_flat_concurrency_does_not_trigger_it():
    rng = np.random.default_rng(8)
    concurrency = _noisy(rng, 8.0, 12, 0.05, outliers=0.0)
    latency = [50.0 * (i + 1) for i in range(12)]
    assert not any(_every_prefix(_points(concurrency, latency)))


def test_both_rising_triggers_it_once_the_rise_has_held_twice():
    """Twice the capacity of a target serving 56/s with 8 in service: the queue, and the wait for
    the first token, grow every second. The first interval is warm-up; four more make the
    window (a rise at 5 s), and it still holds after the next: over-saturated at 6 s, said in
    one line."""
    rng = np.random.default_rng(9)
    concurrency = [8 + 56 * t + float(rng.normal(0, 3)) for t in range(1, 9)]
    ttft = [1000.0 * t + float(rng.normal(0, 30)) for t in range(1, 9)]
    found = _every_prefix(_points(concurrency, ttft))
    first = next(i for i, f in enumerate(found) if f is not None)
    finding = found[first]
    assert finding is not None and finding.at_s == 6.0, found
    assert finding.latency_name == "TTFT p50" and finding.concurrency.rising and finding.latency.rising
    text = (
        f"over-saturated after 6.0 s: concurrency {concurrency[1]:,.0f} → {concurrency[5]:,.0f}, "
        f"TTFT p50 {ttft[1] / 1000:.1f} s → {ttft[5] / 1000:.1f} s"
    )
    assert finding.text() == text
    assert finding.document()["concurrency"]["points"] == 5


@pytest.mark.parametrize("seed", range(100))
def test_pauses_that_lift_both_figures_together_do_not_trigger_it(seed):
    """A shared machine's pause of one or two intervals lifts the requests outstanding and the
    latency together, then both fall back: steady all the same."""
    rng = np.random.default_rng(2000 + seed)
    n = 40
    lift = np.ones(n)
    for start in rng.choice(n - 2, size=6, replace=False):
        lift[start : start + int(rng.integers(1, 3))] *= rng.uniform(3, 10)
    concurrency = [float(c) for c in 6.0 * rng.lognormal(0, 0.2, n) * lift]
    latency = [float(v) for v in 40.0 * rng.lognormal(0, 0.2, n) * lift]
    assert not any(_every_prefix(_points(concurrency, latency)))


def test_without_token_streams_the_latency_is_read():
    concurrency = [10.0 * t for t in range(1, 9)]
    latency = [100.0 * t for t in range(1, 9)]
    finding = over_saturation(_points(concurrency, latency, ttft=False))
    assert finding is not None and finding.latency_name == "latency p50"


def test_a_rise_below_the_floor_is_not_counted():
    """Perfectly ordered but tiny: 1 → 3 requests outstanding is noise at any significance."""
    found = rise([2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 2.0, 3.0], DEFAULT_RULE.min_concurrency_rise)
    assert found.p < DEFAULT_RULE.alpha and not found.rising
    assert not rise([2.0, 3.0], [5.0, 5.0], 1.0).rising
