"""Thresholds: every expression form, parse errors, evaluation against a result document,
no-data behaviour, verdict lines, exit codes and aborts. No engine needed."""

from __future__ import annotations

import pytest

from surge.plan.thresholds import (
    ResultMetrics,
    ThresholdError,
    Verdict,
    due_aborts,
    evaluate,
    exit_code,
    goodput_bounds,
    goodput_share,
    parse_threshold,
    percentile_key,
    percentiles,
)


def _summary(scale: float = 1.0, count: int = 1000) -> dict:
    return {
        "count": count,
        "min_ms": 1.0 * scale,
        "mean_ms": 20.0 * scale,
        "p50_ms": 15.0 * scale,
        "p90_ms": 40.0 * scale,
        "p95_ms": 50.0 * scale,
        "p99_ms": 90.0 * scale,
        "p99_9_ms": 150.0 * scale,
        "max_ms": 200.0 * scale,
    }


RESULT = {
    "duration_s": 10.0,
    "requests": {"sent": 1000, "responses": 990, "succeeded": 980, "failed": 20, "failure_rate": 0.02},
    "latency": {
        "all": _summary(),
        "success": _summary(0.5),
        "service_time": _summary(0.25),
        "send_lag": _summary(0.01),
        "ttft": _summary(2.0),
    },
    "scenarios": [
        {
            "name": "reads",
            "duration_s": 5.0,
            "iterations": 600,
            "requests": {"sent": 600, "responses": 600, "succeeded": 600, "failed": 0, "failure_rate": 0.0},
            "latency": {"all": _summary(2.0, 600)},
        },
        {
            "name": "writes",
            "requests": {"sent": 400, "responses": 390, "succeeded": 380, "failed": 20},
            "latency": {"all": _summary(3.0, 400)},
        },
    ],
    "tags": [
        {
            "tag": "get task",
            "scenario": "reads",
            "requests": {"sent": 500, "responses": 500, "succeeded": 500, "failed": 0},
            "latency": _summary(4.0, 500),
        },
        {
            "tag": "get task",
            "scenario": "writes",
            "requests": {"sent": 100, "responses": 100, "succeeded": 90, "failed": 10},
            "latency": _summary(8.0, 100),
        },
        {
            "tag": "create",
            "scenario": "writes",
            "requests": {"sent": 300, "responses": 290, "succeeded": 290, "failed": 10},
            "latency": {"all": _summary(5.0, 290)},
        },
        {
            "tag": "rare",
            "scenario": "reads",
            "requests": {"sent": 0, "responses": 0, "succeeded": 0, "failed": 0},
            "latency": _summary(0.0, 0),
        },
    ],
    "checks": [
        {"name": "status in [200]", "tag": "get task", "scenario": "reads", "passes": 990, "fails": 10},
        {"name": "status in [201]", "tag": "create", "scenario": "writes", "passes": 290, "fails": 10},
    ],
}


@pytest.mark.parametrize(
    ("expr", "metric", "stat", "quantile", "op", "limit"),
    [
        ("p(95) < 300ms", "latency", "p", 95.0, "<", 300.0),
        ("p(99)<1.5s", "latency", "p", 99.0, "<", 1500.0),
        ("p(99.9) <= 800us", "latency", "p", 99.9, "<=", 0.8),
        ("p(75) < 200ms", "latency", "p", 75.0, "<", 200.0),
        ("p(99.99) < 2s", "latency", "p", 99.99, "<", 2000.0),
        ("p( 50 ) > 1ms", "latency", "p", 50.0, ">", 1.0),
        ("med < 50ms", "latency", "p", 50.0, "<", 50.0),
        ("avg < 100ms", "latency", "avg", None, "<", 100.0),
        ("min >= 1ms", "latency", "min", None, ">=", 1.0),
        ("max < 2s", "latency", "max", None, "<", 2000.0),
        ("max < 1m", "latency", "max", None, "<", 60000.0),
        ("service_time.p(95) < 10ms", "service_time", "p", 95.0, "<", 10.0),
        ("success.avg < 10ms", "success", "avg", None, "<", 10.0),
        ("send_lag.p(99) != 0ms", "send_lag", "p", 99.0, "!=", 0.0),
        # token streams' figures, the metric named with a dot or a blank (vLLM's `--goodput` reads)
        ("ttft p(95) < 500ms", "ttft", "p", 95.0, "<", 500.0),
        ("tpot.p(95) < 50ms", "tpot", "p", 95.0, "<", 50.0),
        ("itl  avg<20ms", "itl", "avg", None, "<", 20.0),
        ("latency.p(100) == 5ms", "latency", "p", 100.0, "==", 5.0),
        ("failure_rate < 0.001", "failure_rate", "failure_rate", None, "<", 0.001),
        ("failure_rate < 0.1%", "failure_rate", "failure_rate", None, "<", 0.001),
        ("rate > 1000", "rate", "rate", None, ">", 1000.0),
        ("rate > 1000/s", "rate", "rate", None, ">", 1000.0),
        ("rate >= 60000/m", "rate", "rate", None, ">=", 1000.0),
        ("checks > 0.99", "checks", "checks", None, ">", 0.99),
        ("checks > 99%", "checks", "checks", None, ">", 0.99),
        ("dropped == 0", "dropped", "dropped", None, "==", 0.0),
        ("dropped < 10", "dropped", "dropped", None, "<", 10.0),
    ],
)
def test_every_form_parses(expr, metric, stat, quantile, op, limit):
    t = parse_threshold(expr)
    assert (t.metric, t.stat, t.quantile, t.op) == (metric, stat, quantile, op)
    assert t.limit == pytest.approx(limit)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("p95 < 300ms", "unknown statistic 'p95'"),
        ("p(95) < 300", "a latency needs a duration (add a unit, e.g. 300ms"),
        ("p(95) < 300kg", "'kg' is not a time unit"),
        ("p(0) < 1ms", "outside 0 < N <= 100"),
        ("p(101) < 1ms", "outside 0 < N <= 100"),
        ("p(x) < 1ms", "p(...) takes a percentage"),
        ("p(95) 300ms", "is not a threshold: write STATISTIC OPERATOR VALUE"),
        ("", "is not a threshold"),
        ("duration.p(95) < 1ms", "unknown metric 'duration'"),
        ("latency.failure_rate < 0.1", "takes no metric prefix"),
        ("failure_rate < 5", "a fraction between 0 and 1"),
        ("dropped < 1ms", "dropped is a count of iterations"),
        ("dropped < -1", "dropped is a count of iterations"),
        ("latency.dropped == 0", "takes no metric prefix"),
        ("failure_rate < 1ms", "is a fraction: write 0.001 or 0.1%"),
        ("checks > 120%", "a fraction between 0 and 1"),
        ("rate > 10/d", "a rate is responses per second"),
        ("rate > 10ms", "a rate is responses per second"),
    ],
)
def test_parse_errors_name_the_expression_and_the_valid_forms(expr, message):
    with pytest.raises(ThresholdError) as err:
        parse_threshold(expr)
    assert message in str(err.value)
    assert f"'{expr}'" in str(err.value)


@pytest.mark.parametrize(
    ("expr", "tag", "scenario", "status", "observed"),
    [
        ("p(95) < 300ms", None, None, "pass", 50.0),
        ("p(95) < 40ms", None, None, "fail", 50.0),
        ("p(99.9) < 200ms", None, None, "pass", 150.0),
        ("med < 15ms", None, None, "fail", 15.0),
        ("p(100) <= 200ms", None, None, "pass", 200.0),
        ("avg < 30ms", None, None, "pass", 20.0),
        ("min > 0.5ms", None, None, "pass", 1.0),
        ("max < 0.1s", None, None, "fail", 200.0),
        ("success.p(95) < 30ms", None, None, "pass", 25.0),
        ("service_time.p(99) < 30ms", None, None, "pass", 22.5),
        ("send_lag.max < 1ms", None, None, "fail", 2.0),
        ("ttft p(95) < 200ms", None, None, "pass", 100.0),
        ("failure_rate < 0.01", None, None, "fail", 0.02),
        ("failure_rate < 3%", None, None, "pass", 0.02),
        ("rate > 90", None, None, "pass", 99.0),
        ("checks > 0.99", None, None, "fail", 1280 / 1300),
        # scenario scope: its own counters and latency; rate over the scenario's duration_s
        ("p(95) < 200ms", None, "reads", "pass", 100.0),
        ("failure_rate == 0", None, "reads", "pass", 0.0),
        ("rate > 100/s", None, "reads", "pass", 120.0),
        ("rate > 100/s", None, "writes", "fail", 39.0),  # no duration_s of its own: the run's
        ("failure_rate < 0.05", None, "writes", "fail", 0.05),
        ("checks > 0.9", None, "writes", "pass", 290 / 300),
        # tag scope: one entry, or several combined (sums, weighted means, extremes)
        ("p(95) < 300ms", "get task", "reads", "pass", 200.0),
        ("p(99) < 300ms", "create", None, "fail", 450.0),
        ("avg < 100ms", "get task", None, "pass", (80.0 * 500 + 160.0 * 100) / 600),
        ("max < 2s", "get task", None, "pass", 1600.0),
        ("failure_rate < 0.01", "get task", None, "fail", 10 / 600),
        ("checks >= 0.99", "get task", None, "pass", 0.99),
        ("rate > 50", "get task", None, "pass", 60.0),
    ],
)
def test_evaluate_reads_every_scope(expr, tag, scenario, status, observed):
    [verdict] = evaluate([parse_threshold(expr, tag=tag, scenario=scenario)], RESULT)
    assert verdict.status == status
    assert verdict.observed == pytest.approx(observed)
    assert verdict.passed is (status == "pass")


@pytest.mark.parametrize(
    ("expr", "tag", "scenario"),
    [
        ("p(95) < 300ms", "rare", None),  # a tag that never matched a request
        ("p(95) < 300ms", "nowhere", None),  # a tag absent from the result
        ("failure_rate < 0.01", "rare", None),
        ("rate > 1", "rare", None),
        ("checks > 0.99", "list", None),  # checks that never ran
        ("avg < 1s", None, "absent"),
        ("checks > 0.9", "get task", "writes"),
    ],
)
def test_no_data_fails_unless_the_threshold_allows_it(expr, tag, scenario):
    [strict] = evaluate([parse_threshold(expr, tag=tag, scenario=scenario)], RESULT)
    [lenient] = evaluate([parse_threshold(expr, tag=tag, scenario=scenario, no_data="pass")], RESULT)
    assert (strict.status, strict.observed, strict.passed) == ("no-data", None, False)
    assert (lenient.status, lenient.passed) == ("no-data", True)
    assert "no data (fails)" in strict.line() and "no data (passes)" in lenient.line()


def test_a_run_without_checks_or_scenarios_has_no_data_for_them():
    bare = {k: v for k, v in RESULT.items() if k not in ("checks", "scenarios", "tags")}
    verdicts = evaluate([parse_threshold("checks > 0.99"), parse_threshold("p(95) < 1s", scenario="reads")], bare)
    assert [v.status for v in verdicts] == ["no-data", "no-data"]


def test_a_percentile_over_several_scenarios_fails_with_a_reason():
    [verdict] = evaluate([parse_threshold("p(95) < 1s", tag="get task")], RESULT)
    assert verdict.status == "fail" and not verdict.passed
    assert "scope it with scenario" in verdict.note


def test_the_evaluator_reads_through_any_metric_source():
    class Histogram:
        def percentile(self, metric, q):
            return q * 2  # a percentile the document lacks

        def stat(self, metric, name):
            return None

        def failure_rate(self):
            return 0.0

        def rate(self):
            return 5.0

        def checks(self):
            return None

    t = parse_threshold("p(99) < 300ms")
    [verdict] = evaluate([t], lambda tag, scenario: Histogram())
    assert (verdict.status, verdict.observed) == ("pass", 198.0)
    assert ResultMetrics(RESULT).scope(None, None).percentile("latency", 95.0) == 50.0


@pytest.mark.parametrize(
    ("expr", "observed", "text"),
    [
        ("p(95) < 300ms", 212.4, "212.40ms"),
        ("max < 3s", 2500.0, "2.500s"),
        ("failure_rate < 0.1%", 0.0005, "0.050%"),
        ("checks > 0.99", 1.0, "100%"),
        ("rate > 10", 1234.5, "1,234.5/s"),
        ("dropped == 0", 3.0, "3 dropped"),
    ],
)
def test_verdict_lines_show_value_with_unit_scope_and_outcome(expr, observed, text):
    t = parse_threshold(expr, tag="get task")
    line = Verdict(t, "pass" if t.holds(observed) else "fail", observed).line()
    assert text in line and expr in line and "[tag 'get task']" in line


def test_exit_code_is_99_when_any_threshold_fails():
    ok = Verdict(parse_threshold("p(95) < 1s"), "pass", 1.0)
    bad = Verdict(parse_threshold("p(95) < 1s"), "fail", 2000.0)
    allowed = Verdict(parse_threshold("checks > 0.9", no_data="pass"), "no-data", None)
    assert exit_code([ok, allowed]) == 0
    assert exit_code([ok, bad]) == 99
    assert exit_code([Verdict(parse_threshold("checks > 0.9"), "no-data", None)]) == 99


def test_aborts_are_due_after_the_delay_and_only_on_failures():
    abort = parse_threshold("p(95) < 1ms", abort_on_fail=True, delay_s=10.0)
    failed, no_data = Verdict(abort, "fail", 5.0), Verdict(abort, "no-data", None)
    plain = Verdict(parse_threshold("p(95) < 1ms"), "fail", 5.0)
    assert due_aborts([failed, no_data, plain], elapsed_s=9.9) == []
    assert due_aborts([failed, no_data, plain], elapsed_s=10.0) == [failed]


@pytest.mark.parametrize(
    ("q", "key"),
    [
        (50, "p50_ms"),
        (99.9, "p99_9_ms"),
        (75, "p75_ms"),
        (99.99, "p99_99_ms"),
        (12.5, "p12_5_ms"),
        (100, "max_ms"),
    ],
)
def test_percentile_keys_follow_the_engines_naming(q, key):
    assert percentile_key(q) == key


def test_only_non_standard_percentiles_are_asked_of_the_engine():
    rules = [
        parse_threshold(e)
        for e in (
            "p(95) < 1s",
            "p(75) < 1s",
            "success.p(75) < 1s",
            "p(99.99) < 1s",
            "p(100) < 1s",
            "med < 1s",
            "avg < 1s",
        )
    ]
    assert percentiles(rules) == [75.0, 99.99]


def test_dropped_counts_what_was_due_and_not_started_per_scope():
    doc = {
        "duration_s": 2.0,
        "requests": {"sent": 34, "dropped": 166},
        "scenarios": [
            {"name": "open", "requests": {"sent": 34, "dropped": 166}},
            {"name": "closed", "requests": {"sent": 500, "dropped": 0}},
            {"name": "idle", "requests": {"sent": 0, "dropped": 0}},
        ],
    }
    rules = [
        parse_threshold("dropped == 0"),
        parse_threshold("dropped < 200", scenario="open"),
        parse_threshold("dropped == 0", scenario="closed"),
        parse_threshold("dropped == 0", scenario="idle"),
    ]
    assert [(v.status, v.observed) for v in evaluate(rules, doc)] == [
        ("fail", 166.0),
        ("pass", 166.0),
        ("pass", 0.0),
        ("no-data", None),
    ]


WINDOWED = {
    "duration_s": 10.0,
    "throughput": {"window_s": 12.0, "responses_per_s": 50.0, "successes_per_s": 40.0, "sent_per_s": 60.0},
    "requests": {
        "sent": 720,
        "responses": 600,
        "succeeded": 480,
        "failed": 150,
        "interrupted": 90,
        "failure_rate": 240 / 720,
    },
    "scenarios": [
        {
            "name": "a",
            "duration_s": 10.0,
            "throughput": {"window_s": 12.0, "responses_per_s": 30.0},
            "requests": {"sent": 400, "responses": 360, "succeeded": 300, "failed": 60, "interrupted": 40},
        },
        {
            "name": "b",
            "duration_s": 4.0,
            "throughput": {"window_s": 6.0, "responses_per_s": 40.0},
            "requests": {"sent": 320, "responses": 240, "succeeded": 180, "failed": 90, "interrupted": 50},
        },
    ],
    "tags": [
        {
            "tag": "t",
            "scenario": "a",
            "throughput": {"window_s": 12.0, "responses_per_s": 30.0},
            "requests": {"sent": 400, "responses": 360, "succeeded": 300, "failed": 60, "interrupted": 40},
        },
        {
            "tag": "t",
            "scenario": "b",
            "throughput": {"window_s": 6.0, "responses_per_s": 40.0},
            "requests": {"sent": 320, "responses": 240, "succeeded": 180, "failed": 90, "interrupted": 50},
        },
    ],
}


@pytest.mark.parametrize(
    ("expr", "tag", "scenario", "observed"),
    [
        ("failure_rate < 1", None, None, 240 / 720),  # the engine's own figure, interrupted included
        ("failure_rate < 1", "t", None, 240 / 720),  # combined entries: (failed + interrupted) / ended
        ("rate > 1", None, None, 50.0),  # responses per second of the run's window
        ("rate > 1", None, "b", 40.0),  # the scenario's window, not the run's duration
        ("rate > 1", "t", None, 70.0),  # each tag entry over its own window, summed
    ],
)
def test_failure_rate_counts_interrupted_and_rate_is_over_each_scopes_window(expr, tag, scenario, observed):
    [verdict] = evaluate([parse_threshold(expr, tag=tag, scenario=scenario)], WINDOWED)
    assert verdict.observed == pytest.approx(observed)


@pytest.mark.parametrize(
    ("exprs", "bounds", "share"),
    [
        (["ttft p(95) < 500ms", "tpot p(99) <= 50ms"], {"ttft_s": 0.5, "tpot_s": 0.05}, 0.99),
        (["p(99) < 1s", "failure_rate < 1%", "max < 3s"], {"latency_s": 1.0}, 1.0),
        (["ttft.med < 200ms", "ttft p(90) < 400ms"], {"ttft_s": 0.2}, 0.9),  # the tightest bound
        # Not a bound on each request: a mean, a lower bound, a scoped one, other metrics.
        (["avg < 100ms", "p(95) > 1ms", "service_time.p(99) < 9ms", "itl p(99) < 30ms"], None, None),
    ],
)
def test_latency_upper_bounds_become_goodputs_bounds_per_request(exprs, bounds, share):
    thresholds = [parse_threshold(e) for e in exprs]
    assert goodput_bounds(thresholds) == bounds
    assert goodput_share(thresholds) == share
    scoped = [parse_threshold("ttft p(95) < 1s", tag="chat")]
    assert goodput_bounds(scoped) is None and goodput_share(scoped) is None


def test_goodput_is_the_share_of_responses_that_met_every_bound():
    [verdict] = evaluate(
        [parse_threshold("goodput >= 95%")],
        {**RESULT, "goodput": {"ttft_s": 0.5}, "requests": {**RESULT["requests"], "good": 950}},
    )
    assert (verdict.status, verdict.observed) == ("pass", pytest.approx(950 / 990))
    # Without bounds the run measured no goodput: no data (which fails unless the threshold says so).
    [verdict] = evaluate([parse_threshold("goodput >= 95%")], RESULT)
    assert verdict.status == "no-data"
