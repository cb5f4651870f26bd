"""Sweep analysis: peak, knee (Kneedle), zones by the documented rules (with and without an
SLO), --stop-when broken, and the USL fit in the closed model only."""

from __future__ import annotations

import pytest

from surge.analysis.curve import (
    Level,
    ZoneRules,
    analyse_sweep,
    classify,
    find_knee,
    find_peak,
    marginal_efficiency,
    stop_when_broken,
)
from surge.analysis.slo import parse_slo
from surge.analysis.usl import UslFit, UslRefusal, usl_throughput
from surge.plan.thresholds import Verdict


def _level(load: float, x: float | None, p95: float | None, failures: float = 0.0, **classes: int) -> Level:
    return Level(
        load,
        {
            "responses_per_s": x,
            "successes_per_s": None if x is None else x * (1 - failures),
            "p50_ms": None if p95 is None else p95 / 2,
            "p95_ms": p95,
            "p99_ms": None if p95 is None else p95 * 2,
            "failure_rate": failures,
        },
        classes,
    )


# Seed 003's shape: throughput peaks at 1,000 connections, then falls with timeouts.
PROXY = [
    _level(100, 1000, 10.0),
    _level(200, 1950, 11.0),
    _level(500, 4200, 15.0),
    _level(1000, 5000, 40.0, 0.002),
    _level(2000, 4300, 200.0, 0.05, request_timeout=900),
    _level(5000, 2500, 900.0, 0.38, request_timeout=9000, connection_reset=100),
]


def test_default_zones_follow_the_rules_with_their_numbers():
    zones = classify(list(reversed(PROXY)))  # any order: sorted by load
    assert [(z.load, z.zone) for z in zones] == [
        (100, "optimal"),
        (200, "optimal"),
        (500, "optimal"),
        (1000, "stress"),
        (2000, "degraded"),
        (5000, "broken"),
    ]
    assert "marginal efficiency 19% < 50%" in zones[3].reason
    assert "p95 200.0ms > 5× the lightest level's 10.0ms (default SLO)" in zones[4].reason
    assert zones[5].reason == "failure rate 38.0% ≥ 10%, mostly request_timeout"


def test_slo_zones_use_the_slo_instead_of_the_defaults():
    rules = ZoneRules(slo=parse_slo(["p(95) < 30ms", "failure_rate < 1%"]))
    zones = classify(PROXY, rules)
    assert [z.zone for z in zones] == ["optimal", "optimal", "optimal", "degraded", "degraded", "broken"]
    assert zones[3].reason == "SLO missed: p(95) < 30ms (observed 40.00ms)"
    assert "failure_rate < 1% (observed 5%)" in zones[4].reason


def test_verdicts_judged_on_the_run_itself_take_precedence_over_the_figures():
    slo = parse_slo(["p(99.9) < 50ms"])  # not among the figures: judged by the run
    level = Level(
        100, {"responses_per_s": 100.0, "p95_ms": 5.0, "failure_rate": 0.0}, verdicts=[Verdict(slo[0], "fail", 80.0)]
    )
    assert classify([level], ZoneRules(slo=slo))[0].zone == "degraded"
    without = Level(100, {"responses_per_s": 100.0, "p95_ms": 5.0, "failure_rate": 0.0})
    # a figure the level lacks is no evidence of a miss
    assert classify([without], ZoneRules(slo=slo))[0].zone == "optimal"


def test_throughput_falling_below_the_best_lighter_level_is_broken():
    levels = [_level(10, 1000, 5.0), _level(20, 1900, 6.0), _level(40, 1500, 7.0)]
    zones = classify(levels)
    assert zones[2].zone == "broken"
    assert "21% below the best lighter level's 1,900.0/s" in zones[2].reason
    assert classify([_level(10, 1000, 5.0), _level(20, None, None)])[1].reason == "no responses measured"


def test_latency_rise_alone_is_stress_and_zones_do_not_go_back():
    levels = [_level(10, 100, 5.0), _level(20, 200, 11.0), _level(40, 400, 12.0)]
    zones = classify(levels)
    assert zones[1].zone == "stress" and "p95 11.0ms > 2× the lightest level's 5.0ms" in zones[1].reason
    noisy = [_level(10, 100, 5.0), _level(20, 110, 5.0), _level(40, 300, 5.0)]
    zones = classify(noisy)
    assert [z.zone for z in zones] == ["optimal", "stress", "stress"]
    assert "zones do not go back" in zones[2].reason and "by itself: optimal" in zones[2].reason


def test_marginal_efficiency_is_relative_gain_over_relative_load():
    assert marginal_efficiency(_level(35, 21.88, 1.0), _level(75, 52.60, 1.0)) == pytest.approx(
        (52.60 / 21.88 - 1) / (75 / 35 - 1)
    )
    assert marginal_efficiency(_level(10, 100, 1.0), _level(20, 100, 1.0)) == 0.0
    assert marginal_efficiency(_level(10, None, 1.0), _level(20, 100, 1.0)) is None


def test_stop_when_broken_looks_at_the_heaviest_level_so_far():
    assert not stop_when_broken([])
    for measured in range(1, len(PROXY)):
        assert not stop_when_broken(PROXY[:measured])
    assert stop_when_broken(PROXY)
    # the zones of the levels measured before never change with later levels
    assert [z.zone for z in classify(PROXY[:4])] == [z.zone for z in classify(PROXY)[:4]]


def test_peak_and_knee_of_the_proxy_curve():
    analysis = analyse_sweep(PROXY, "open")
    assert analysis.peak is not None and (analysis.peak.load, analysis.peak.throughput) == (1000, 5000)
    assert analysis.knee.load == 500 and analysis.knee.throughput == 4200
    assert analysis.usl is None  # open model: no USL
    assert [lv.load for lv in analysis.levels] == [z.load for z in analysis.zones]


@pytest.mark.parametrize(
    "loads, throughput, reason",
    [
        ([1, 2, 3, 4, 5], [10, 20, 30, 40, 50], "rises about in proportion"),
        ([1, 2, 3, 4], [40, 30, 20, 10], "the peak is at level 1"),
        ([], [], "no levels measured"),
    ],
)
def test_no_knee_comes_with_a_reason(loads, throughput, reason):
    knee = find_knee(loads, throughput)
    assert knee.load is None and reason in knee.reason


def test_closed_sweep_fits_the_usl_and_finds_its_peak():
    vus = [1, 2, 4, 8, 16, 32, 64, 128]
    levels = [_level(n, usl_throughput(n, 0.05, 5e-4, 100.0), 10.0 * n) for n in vus]
    analysis = analyse_sweep(levels, "closed")
    assert isinstance(analysis.usl, UslFit) and analysis.usl.peak_n == pytest.approx(43.6, rel=0.01)
    assert analysis.peak is not None and analysis.peak.load == 32  # the measured level nearest N*
    few = analyse_sweep(levels[:3], "closed")
    assert isinstance(few.usl, UslRefusal)
    assert find_peak([_level(1, None, None)]) is None


def test_repeated_loads_are_an_error():
    with pytest.raises(ValueError, match="distinct loads"):
        analyse_sweep([_level(10, 1.0, 1.0), _level(10, 2.0, 1.0)], "closed")


def test_an_over_saturated_level_is_broken_and_stops_the_sweep():
    """A level whose run the over-saturation rule stopped is broken, for that reason, whatever
    its figures (the window it measured was short and still climbing): --stop-when broken ends
    the sweep there."""
    why = "over-saturated after 6.0 s: concurrency 120 → 342, TTFT p50 710.7 ms → 2.7 s; stopped early"
    levels = [_level(28, 28, 150.0), Level(112, _level(112, 55, 2900.0).figures, over_saturated=why)]
    zones = classify(levels)
    assert [z.zone for z in zones] == ["optimal", "broken"] and zones[1].reason == why
    assert stop_when_broken(levels)
