"""SLO conditions judged against a run's key figures: standard figures, a threshold's own
figure stored under its expression, missing figures and scoped conditions."""

from __future__ import annotations

import pytest

from surge.analysis.slo import broken, judge, parse_slo
from surge.plan.thresholds import ThresholdError, parse_threshold

FIGURES = {
    "responses_per_s": 950.0,
    "p50_ms": 5.0,
    "p95_ms": 40.0,
    "p99_ms": 120.0,
    "failure_rate": 0.002,
    "p(99.9) < 1s": 1500.0,
}


@pytest.mark.parametrize(
    "expr, status, observed",
    [
        ("p(99) < 100ms", "fail", 120.0),
        ("p(95) < 100ms", "pass", 40.0),
        ("med < 10ms", "pass", 5.0),
        ("failure_rate < 0.1%", "fail", 0.002),
        ("rate > 900/s", "pass", 950.0),
        ("p(99.9) < 1s", "fail", 1500.0),  # read from the figure stored under its expression
    ],
)
def test_conditions_read_their_figures(expr, status, observed):
    [verdict] = judge(parse_slo([expr]), FIGURES)
    assert (verdict.status, verdict.observed) == (status, observed)


def test_missing_figures_and_scoped_conditions_fail_with_a_note_but_are_not_broken():
    scoped = parse_threshold("p(95) < 10ms", tag="login")
    verdicts = judge([*parse_slo(["p(90) < 10ms", "avg < 10ms"]), scoped], {"p95_ms": 5.0})
    assert [v.status for v in verdicts] == ["fail", "fail", "fail"]
    assert verdicts[0].note == "the run's figures hold no latency p(90) (need 'p90_ms')"
    assert verdicts[1].note == "the run's figures hold no latency avg (need 'mean_ms')"
    assert verdicts[2].note == "a scoped condition needs the run's result document"
    assert broken(verdicts) == []
    [none] = judge(parse_slo(["failure_rate < 1%"]), {"failure_rate": None})
    assert none.status == "no-data"


def test_a_bad_condition_names_itself():
    with pytest.raises(ThresholdError, match="'p99 < 1ms'"):
        parse_slo(["p(99) < 1s", "p99 < 1ms"])
