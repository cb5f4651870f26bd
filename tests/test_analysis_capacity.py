"""Capacity search against a simulated target (an M/D/c queue: c workers, service time s,
capacity c/s): it lands within ±5 % of capacity; unsteady, late and dropping steps are
rejected with their evidence; bounds, failed confirmations and interruptions are said."""

from __future__ import annotations

import math

import numpy as np
import pytest

from surge.analysis.capacity import CapacitySearch, SearchStep
from surge.analysis.slo import parse_slo
from surge.analysis.steadiness import Step, judge_step, latency_trend

WINDOW = 10
"""WINDOW is the simulated step's measured window: 10 intervals of 1 s."""


def queue(workers: int, service_ms: float, seed: int = 0):
    """queue is a fake ``measure``: below capacity latency is steady (Sakasegawa's M/D/c
    waiting time, p99 ≈ s + 4.6 Wq) with 3 % noise; above it the backlog grows each second, so
    latency climbs through the window, and achieved = capacity."""
    capacity = workers * 1000 / service_ms

    def measure(rate: float) -> Step:
        rng = np.random.default_rng([seed, int(rate * 1000)])
        rho = rate / capacity
        if rho < 1:
            wait = service_ms * rho ** (math.sqrt(2 * (workers + 1)) - 1) / (2 * workers * (1 - rho))
            p95 = [service_ms + 3.0 * wait * (1 + rng.normal(0, 0.03)) for _ in range(WINDOW)]
            achieved = rate * (1 - abs(rng.normal(0, 0.001)))
        else:
            backlog_ms_per_s = (rate - capacity) / capacity * 1000
            p95 = [service_ms * 20 + backlog_ms_per_s * (t + 1) * (1 + rng.normal(0, 0.03)) for t in range(WINDOW)]
            achieved = capacity
        figures = {"responses_per_s": achieved, "p95_ms": float(np.median(p95)), "p99_ms": max(p95) * 1.5,
                   "failure_rate": 0.0}
        sent = int(rate * WINDOW)
        return Step(rate, figures, p95, sent=sent, late=sent // 1000)

    return measure


@pytest.mark.parametrize("workers, service_ms, start", [(1, 10.0, 7.0), (4, 5.0, 45.0), (8, 2.0, 130.0),
                                                        (32, 10.0, 900.0)])
def test_search_lands_within_five_percent_of_capacity(workers, service_ms, start):
    capacity = workers * 1000 / service_ms
    seen: list[SearchStep] = []
    search = CapacitySearch(parse_slo(["p(99) < 1s", "failure_rate < 0.1%"]), start, on_step=seen.append)
    result = search.run(queue(workers, service_ms))
    assert result.stop_reason == "found" and result.confirmed, result.notes
    assert result.rate is not None and abs(result.rate / capacity - 1) <= 0.05, (result.rate, capacity)
    assert result.high is not None and (result.high - result.rate) / result.rate <= 0.02
    assert seen == result.steps and [s.number for s in seen] == list(range(1, len(seen) + 1))
    assert result.steps[-1].phase == "confirm" and result.steps[-1].passed
    phases = [s.phase for s in result.steps]
    assert phases == sorted(phases, key=["bracket", "bisect", "confirm"].index)
    # every failing step says why, every passing one shows its evidence
    assert all(s.verdict.failures for s in result.steps if not s.passed)
    assert all(not s.verdict.failures and s.verdict.evidence for s in result.steps if s.passed)


def test_a_start_above_capacity_brackets_downwards():
    result = CapacitySearch(parse_slo(["p(99) < 1s"]), 5000.0).run(queue(4, 5.0))
    assert result.confirmed and abs(result.rate / 800 - 1) <= 0.05
    assert [s.rate for s in result.steps[:4]] == [5000.0, 2500.0, 1250.0, 625.0]


def _steady(rate: float, **changes) -> Step:
    values = dict(figures={"responses_per_s": rate, "p95_ms": 10.0, "p99_ms": 20.0, "failure_rate": 0.0},
                  interval_p95_ms=[10.0, 10.3, 9.8, 10.1, 9.9, 10.2, 10.0, 9.7, 10.1, 10.0], sent=int(rate * 10))
    return Step(rate, **{**values, **changes})


SLO = parse_slo(["p(99) < 100ms", "failure_rate < 0.1%"])


def test_a_steady_step_passes_with_its_evidence():
    verdict = judge_step(_steady(1000.0), SLO)
    assert verdict.passed and verdict.failures == ()
    assert any(e.startswith("SLO met: p(99) < 100ms (observed 20.00ms)") for e in verdict.evidence)
    assert "achieved 1,000.0/s = 100.0% of offered 1,000.0/s" in verdict.evidence


def test_latency_trending_up_within_the_window_is_rejected_although_the_slo_holds():
    rising = [10.0 + 1.0 * i for i in range(10)]  # 10 → 19 ms: +90 % across the window
    verdict = judge_step(_steady(1000.0, interval_p95_ms=rising), SLO)
    assert not verdict.passed and verdict.trend.rising
    assert len(verdict.failures) == 1 and verdict.failures[0].startswith("latency trending up: p95 slope +1.00ms")
    assert verdict.trend.rise == pytest.approx(9 / 14.5)


def test_noise_and_a_small_drift_are_not_a_trend():
    assert not latency_trend([10.0, 12.0, 9.0, 11.5, 8.5, 12.5, 9.5, 11.0, 10.0, 10.5]).rising
    assert not latency_trend([10.0 + 0.1 * i for i in range(10)]).rising  # +9 %: within 25 %
    few = latency_trend([10.0, 50.0, 90.0])
    assert few.slope_ms is None and not few.rising and few.intervals == 3


@pytest.mark.parametrize("changes, says", [
    ({"late": 2000}, "generator late on 20.0% of 10,000 sends (> 5%: it did not keep its schedule)"),
    ({"dropped": 100}, "100 dropped of 10,100 due (0.99%) (> 0.1%: the load was not all offered)"),
    ({"achieved_per_s": 950.0}, "achieved 950.0/s = 95.0% of offered 1,000.0/s (< 99%)"),
    ({"figures": {"responses_per_s": 1000.0, "p99_ms": 150.0, "failure_rate": 0.0}},
     "SLO missed: p(99) < 100ms (observed 150.00ms)"),
    ({"figures": {"responses_per_s": 1000.0, "failure_rate": 0.0}}, "SLO missed: p(99) < 100ms (observed n/a)"),
])
def test_late_dropping_slow_or_unmeasured_steps_are_rejected(changes, says):
    verdict = judge_step(_steady(1000.0, **changes), SLO)
    assert not verdict.passed and verdict.failures == (says,)


def test_a_failed_confirmation_steps_down_and_says_so():
    calls: dict[float, int] = {}

    def flaky(rate: float) -> Step:
        calls[rate] = calls.get(rate, 0) + 1
        ok = rate <= 700 and not (calls[rate] == 2 and rate > 690)  # the second run at the found rate fails
        return _steady(rate) if ok else _steady(rate, achieved_per_s=rate * 0.9)

    result = CapacitySearch(SLO, 100.0).run(flaky)
    assert result.confirmed and result.stop_reason == "found"
    confirms = [s for s in result.steps if s.phase == "confirm"]
    assert [s.passed for s in confirms] == [False, True]
    assert confirms[1].rate == pytest.approx(confirms[0].rate * 0.98)
    assert any("failed: stepping down" in n for n in result.notes)
    assert result.rate == confirms[1].rate and result.high == confirms[0].rate


def test_bounds_end_the_search_and_say_why():
    unlimited = CapacitySearch(SLO, 100.0, max_rate=1000.0).run(lambda r: _steady(r))
    assert unlimited.stop_reason == "max_rate" and unlimited.rate == 1000.0 and unlimited.confirmed
    assert [s.rate for s in unlimited.steps] == [100.0, 200.0, 400.0, 800.0, 1000.0, 1000.0]
    assert "at least that" in unlimited.notes[0]
    nothing = CapacitySearch(SLO, 100.0, min_rate=10.0).run(lambda r: _steady(r, late=r * 10))
    assert nothing.stop_reason == "nothing_passed" and nothing.rate is None
    assert [s.rate for s in nothing.steps] == [100.0, 50.0, 25.0, 12.5]
    short = CapacitySearch(SLO, 100.0, max_steps=5).run(queue(4, 5.0))
    assert short.stop_reason == "max_steps" and len(short.steps) == 5 and not short.confirmed
    assert short.rate == 600.0 and "budget" in short.notes[-1]


def test_an_interrupted_search_keeps_its_steps():
    def interrupted(rate: float) -> Step:
        if rate > 300:
            raise KeyboardInterrupt
        return _steady(rate)

    search = CapacitySearch(SLO, 100.0)
    with pytest.raises(KeyboardInterrupt):
        search.run(interrupted)
    result = search.result("interrupted")
    assert [s.rate for s in result.steps] == [100.0, 200.0] and result.rate == 200.0 and not result.confirmed


@pytest.mark.parametrize("args, kwargs", [((SLO, 0.0), {}), ((SLO, 10.0), {"max_rate": 5.0}),
                                          ((SLO, 10.0), {"precision": 0.0}), ((SLO, 10.0), {"max_steps": 0})])
def test_impossible_searches_are_refused(args, kwargs):
    with pytest.raises(ValueError):
        CapacitySearch(*args, **kwargs)
