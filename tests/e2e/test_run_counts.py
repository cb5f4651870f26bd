"""surge run end to end: what surge reports sent equals what the target received."""

from __future__ import annotations

import pytest

from conftest import surge


@pytest.mark.parametrize(
    "args, expected",
    [
        (["-n", "1", "-c", "1"], 1),
        (["-n", "500", "-c", "8"], 500),
        (["-n", "2001", "-c", "7", "--threads", "2"], 2001),
        (["-n", "300", "-r", "600"], 300),  # open model: n requests at the rate
    ],
)
def test_request_count_runs_send_exactly_n(fresh_target, args, expected):
    run = surge("run", f"{fresh_target.url}/health", *args, "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["requests"]["sent"] == expected
    assert doc["requests"]["succeeded"] == expected
    assert fresh_target.received() == expected


@pytest.mark.parametrize("threads", ["1", "2"])
def test_timed_run_sent_count_equals_server_count(fresh_target, threads):
    run = surge("run", f"{fresh_target.url}/health", "-d", "1s", "-c", "16", "--threads", threads, "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    requests = doc["requests"]
    assert requests["sent"] > 100
    assert requests["sent"] == fresh_target.received()
    assert requests["sent"] == requests["responses"] + requests["unanswered"] + requests["interrupted"]
    assert doc["stop_reason"] == "duration"


def test_open_model_rate_is_exact(fresh_target):
    run = surge("run", f"{fresh_target.url}/health", "-r", "2000", "-d", "3s", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["requests"]["sent"] == 6000
    assert fresh_target.received() == 6000
    assert doc["throughput"]["sent_per_s"] == pytest.approx(2000, rel=0.005)
    assert doc["requests"]["dropped"] == 0


def test_json_latency_sections_have_units_in_keys(fresh_target):
    doc = surge("run", f"{fresh_target.url}/health", "-n", "200", "-c", "4", "--json").json()
    for section in ("all", "success", "service_time"):
        summary = doc["latency"][section]
        for key in ("p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99_9_ms", "max_ms", "mean_ms", "min_ms"):
            assert key in summary, (section, key)
        assert summary["count"] == 200
        assert 0 < summary["p50_ms"] <= summary["p99_ms"] <= summary["max_ms"]
    assert doc["throughput"]["responses_per_s"] > 0
    assert doc["duration_s"] > 0
    assert doc["requests"]["success_rate"] == 1.0
    assert doc["histograms"]["latency"], "the full histogram travels with the summary"


def test_failures_by_status_are_counted_and_shed_labelled(fresh_target):
    # /delay/0 goes through the service model; a plain target answers it with 200.
    run = surge("run", f"{fresh_target.url}/tasks/does-not-exist", "-n", "20", "-c", "2", "--json")
    doc = run.json()
    assert doc["requests"]["status_codes"] == {"404": 20}
    assert doc["requests"]["failed"] == 20
    assert doc["requests"]["shed"] == 0


def test_summary_shows_the_sections(fresh_target):
    run = surge("run", f"{fresh_target.url}/health", "-n", "300", "-c", "4")
    assert run.code == 0, run.stderr
    for needle in (
        "Requests",
        "300 sent",
        "Outcome",
        "100.000% succeeded",
        "Latency (ms",
        "p99.9",
        "success",
        "Status codes",
        "200 × 300",
        "Generator",
    ):
        assert needle in run.stdout, needle


def test_head_requests_expect_no_body(fresh_target):
    # /health answers HEAD with Content-Length but no body; reading a body would hang
    # until the timeout or misparse the next response.
    run = surge("run", f"{fresh_target.url}/health", "-m", "HEAD", "-n", "200", "-c", "2", "--timeout", "2s", "--json")
    doc = run.json()
    assert doc["requests"]["succeeded"] == 200, doc["requests"]
    assert doc["requests"]["connections_opened"] == 2
    assert fresh_target.received() == 200
