"""The live dashboard's views (surge.present.html.dashboard_page): an engine interval reduced to
what the charts need, a run's view as intervals arrive and once it ended, an experiment's view."""

from __future__ import annotations

from typing import Any

import pytest

from surge.present.html.dashboard_page import RunView, experiment_view, reduce_interval


def _latency(p95: float) -> dict[str, Any]:
    return {
        "count": 10,
        "min_ms": p95 / 4,
        "mean_ms": p95 / 2,
        "p50_ms": p95 / 2,
        "p90_ms": p95 * 0.9,
        "p95_ms": p95,
        "p99_ms": p95 * 1.2,
        "max_ms": p95 * 2,
    }


def _interval(index: int, sent: int, failed: int = 0, p95: float = 4.0) -> dict[str, Any]:
    return {
        "index": index,
        "start_s": float(index),
        "end_s": float(index + 1),
        "requests": {
            "sent": sent,
            "responses": sent,
            "succeeded": sent - failed,
            "failed": failed,
            "shed": 0,
            "failure_classes": {"connect_timeout": failed},
        },
        "latency": {"all": _latency(p95)},
        "latency_histogram": "HISTF...",  # left out by the reduction
        "responses_per_s": float(sent),
        "sent_per_s": float(sent),
        "successes_per_s": float(sent - failed),
        "target_rate_per_s": 50.0,
        "in_flight": 1,
        "peak_concurrency": 2,
        "open_connections": 2,
        "scenarios": [{"name": "default", "active_vus": 2, "responses_per_s": float(sent)}],
    }


def test_reduce_interval_keeps_the_rows_and_counts_the_charts_need():
    reduced = reduce_interval(_interval(2, 50, failed=3, p95=7.5))
    assert reduced["index"] == 2 and reduced["end_s"] == 3.0
    assert (reduced["sent"], reduced["failed"], reduced["p95_ms"], reduced["responses_per_s"]) == (50, 3, 7.5, 50.0)
    all_row, scenario_row = reduced["rows"]
    assert all_row["scenario"] == "all" and all_row["failed_connect_timeout"] == 3 and all_row["p95_ms"] == 7.5
    assert scenario_row == {"time_s": 3.0, "scenario": "default", "active_vus": 2, "responses_per_s": 50.0}
    assert "HISTF" not in repr(reduced)


def _points(charts: list[dict[str, Any]]) -> dict[str, int]:
    return {c["id"]: len(c["x"]) for c in charts}


def test_run_view_grows_one_point_per_interval_and_ends_with_the_summary():
    view = RunView("run", 3.0)
    view.add(reduce_interval(_interval(0, 40, p95=3.0)))
    first = view.to_json()
    view.add(reduce_interval(_interval(1, 60, failed=2, p95=9.0)))
    second = view.to_json()
    assert _points(first["charts"]) == {"throughput": 2, "latency": 2, "failures": 2}
    assert _points(second["charts"]) == {"throughput": 3, "latency": 3, "failures": 3}
    assert second["totals"] == {"sent": 100, "failed": 2, "p95_ms": 9.0, "responses_per_s": 60.0}
    assert not second["ended"] and "verdict" not in second and "100" in second["headline"]
    view.summary = {
        "requests": {"sent": 101, "failed": 2, "connections_opened": 2, "status_codes": {"200": 99}},
        "latency": {"all": {"count": 99, "p95_ms": 6.25}},
        "throughput": {"responses_per_s": 50.5},
        "thresholds": [{"expr": "p(95) < 5ms", "passed": False, "status": "fail", "observed_text": "6.25ms"}],
    }
    ended = view.to_json()
    assert ended["ended"] and ended["totals"] == {"sent": 101, "failed": 2, "p95_ms": 6.25, "responses_per_s": 50.5}
    assert "FAILED" in ended["verdict"] and "p(95) &lt; 5ms" in ended["verdict"]
    assert "status" in _points(ended["charts"])  # the summary's charts join, as in report.html
    latency = next(c for c in ended["charts"] if c["id"] == "latency")
    assert [r["value"] for r in latency["rules"]] == [5.0]  # the threshold drawn with its verdict


def _full(view: RunView) -> list[dict[str, Any]]:
    """_full are the time charts built at once from every interval the view holds."""
    from surge.present.html.dashboard_page import _line
    from surge.present.html.uplot import specs
    from surge.present.run_charts import time_charts

    return specs(time_charts(_line(view.rows, view.scenario_rows, view.ends), []))


def test_charts_grown_one_point_at_a_time_equal_the_charts_built_at_once():
    """Failures of a class come, go and come back; the offered rate is there from the start: each
    interval's column is the one the whole run's charts have, and a new series rebuilds them."""
    view, rebuilt = RunView("run", 10.0), []
    for i, failed in enumerate([0, 0, 3, 0, 0, 5, 0, 2, 0, 0]):
        column = view.add(reduce_interval(_interval(i, 40 + i, failed=failed, p95=2.0 + i)))
        full = _full(view)
        assert view.time_charts == full, i
        if column is None:
            rebuilt.append(i)
        else:
            assert column == {c["id"]: [c["x"][-1], *(s["values"][-1] for s in c["series"])] for c in full}
    assert rebuilt == [0, 2]  # the first interval, and the first failure of its class


def test_phase_requests_show_apart_from_the_measured_run():
    view = RunView("run", 1.0)
    view.add_phase("setup", {"requests": {"sent": 3, "failed": 1}})
    assert view.phases == {"setup": {"sent": 3, "failed": 1}}
    assert view.to_json()["totals"]["sent"] == 0 and "setup requests" in view.to_json()["headline"]


def test_experiment_view_lists_each_completed_run_and_draws_nothing_before_the_analysis():
    document = {
        "kind": "sweep",
        "name": "t",
        "runs": [{"label": "vus=1", "role": "level vus=1", "verdict": "none", "figures": {"responses_per_s": 10.0}}],
        "analysis": None,
    }
    view = experiment_view(document, ended=False)
    assert view["runs"][0]["label"] == "vus=1" and view["runs"][0]["figures"]["responses_per_s"] == 10.0
    assert view["charts"] == [] and "verdict" not in view and "runs completed (1)" in view["table"]
    assert "verdict" in experiment_view(document, ended=True)


def _histogram(*values_us: int) -> str:
    from hdrh.histogram import HdrHistogram

    h = HdrHistogram(1, 60_000_000, 3)
    for v in values_us:
        h.record_value(v)
    return h.encode().decode()


def test_live_thresholds_judge_the_run_so_far_as_the_end_would_and_leave_scoped_ones_to_the_end():
    from surge.plan.thresholds import parse_threshold
    from surge.present.html.dashboard_page import LATER, LiveThresholds

    thresholds = [
        parse_threshold("p(95) < 50ms"),
        parse_threshold("failure_rate < 10%"),
        parse_threshold("rate > 40"),
        parse_threshold("p(99) < 1s", scenario="a"),
        parse_threshold("checks > 0.5"),
    ]
    judge = LiveThresholds(thresholds)
    first = _interval(0, 50, failed=2, p95=4.0)
    first["latency_histogram"] = _histogram(*([4_000] * 48), 9_000, 9_000)
    judge.add(first)
    verdicts = judge.verdicts()
    assert [(v.threshold.expr, v.status) for v in verdicts] == [
        ("p(95) < 50ms", "pass"),
        ("failure_rate < 10%", "pass"),
        ("rate > 40", "pass"),
    ]
    second = _interval(1, 50, failed=20, p95=90.0)
    second["latency_histogram"] = _histogram(*([90_000] * 50))
    judge.add(second)
    verdicts = judge.verdicts()
    # 100 responses: 48 at 4 ms, 2 at 9 ms, 50 at 90 ms: p95 is 90 ms (the merged histograms');
    # 22 of 100 failed; 100 responses over 2 s.
    assert [v.status for v in verdicts] == ["fail", "fail", "pass"]
    assert abs(verdicts[0].observed - 90.0) < 0.1 and verdicts[1].observed == 0.22 and verdicts[2].observed == 50.0
    html = judge.table(verdicts)
    assert html.count(LATER) == 2 and "scenario &#x27;a&#x27;" in html
    latency_rule = [r for r in judge.rules(verdicts) if r.chart == "latency"]
    assert [(r.value, r.passed) for r in latency_rule] == [(50.0, False)]


def test_a_threshold_verdict_that_flips_redraws_the_charts_with_its_line_recoloured():
    from surge.plan.thresholds import parse_threshold
    from surge.present.html.dashboard_page import LiveThresholds

    view = RunView("run", 3.0, judge=LiveThresholds([parse_threshold("p(95) < 50ms")]))
    columns = []
    for i, p95_us in enumerate([4_000, 5_000, 90_000]):
        interval = _interval(i, 50)
        interval["latency_histogram"] = _histogram(*([p95_us] * 50))
        columns.append(view.add_interval(interval))
        latency = next(c for c in view.time_charts if c["id"] == "latency")
        assert view.time_charts == _full_with(view), i
    assert columns[0] is None and columns[1] is not None and columns[2] is None  # first, then the flip
    assert [r["colour"] for r in latency["rules"]] == ["#d62728"] and "fail" in view.thresholds


def _full_with(view: RunView) -> list[dict[str, Any]]:
    from surge.present.html.dashboard_page import _line
    from surge.present.html.uplot import specs
    from surge.present.run_charts import time_charts

    return specs(time_charts(_line(view.rows, view.scenario_rows, view.ends), view.rules))


@pytest.mark.parametrize("q", [0.0, 1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0])
def test_value_at_percentile_is_hdrhistograms_own(q):
    from hdrh.histogram import HdrHistogram

    from surge.present.html.dashboard_page import value_at_percentile

    merged = HdrHistogram.decode(_histogram(*range(100, 5_000_000, 997)))
    merged.add(HdrHistogram.decode(_histogram(*([42_000] * 300), 9_999_999)))
    assert value_at_percentile(merged, q) == merged.get_value_at_percentile(q)
