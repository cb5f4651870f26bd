"""What surge counts, end to end against the reference target: sent, responses, unanswered
and interrupted add up, the target's own count lies between responses and sent, and every
rate is over the window the result states."""

from __future__ import annotations

import pytest

from conftest import surge, write
from surge.engine.target import TargetProcess


def assert_adds_up(requests: dict) -> None:
    """assert_adds_up checks the identities README's "What is counted" states for a run."""
    r = requests
    assert r["sent"] == r["responses"] + r["unanswered"] + r["retried"] + r["interrupted"] - r["interrupted_unsent"], r
    assert_rates(r)


def assert_rates(r: dict) -> None:
    """assert_rates checks success and failure rates over every request that ended (an
    interval's too: a request is counted where it ended, so sent need not add up there)."""
    ended = r["succeeded"] + r["failed"] + r["interrupted"]
    if ended:
        assert r["failure_rate"] == pytest.approx((r["failed"] + r["interrupted"]) / ended), r
        assert r["success_rate"] == pytest.approx(r["succeeded"] / ended), r


def assert_rates_over_the_load_window(doc: dict) -> None:
    """assert_rates_over_the_load_window checks that the rates are over the load window
    (``duration_s``) and count what ended within it, and that the drain holds the rest."""
    r, t, d = doc["requests"], doc["throughput"], doc["drain"]
    assert t["window_s"] == pytest.approx(doc["duration_s"], abs=1e-6), (t, doc["duration_s"])
    assert round(t["responses_per_s"] * t["window_s"]) + d["responses"] == r["responses"], (t, d, r)
    assert round(t["successes_per_s"] * t["window_s"]) + d["succeeded"] == r["succeeded"], (t, d, r)
    assert round(t["sent_per_s"] * t["window_s"]) <= r["sent"], (t, r)
    assert d["failed"] <= r["failed"] and d["interrupted"] <= r["interrupted"], (d, r)
    intervals_end = doc["intervals"][-1]["end_s"] if doc["intervals"] else t["window_s"]
    assert intervals_end == pytest.approx(t["window_s"] + d["seconds"], abs=1e-6), (intervals_end, t, d)


def test_more_connections_than_the_target_keeps_sent_unanswered_and_its_count_between():
    # The target keeps 20 connections; surge's other 40 VUs connect, write, and find their
    # connection closed: what they wrote counts as sent and unanswered, never as answered.
    with TargetProcess(max_connections=20) as target:
        run = surge("run", f"{target.url}/tasks", "-c", "60", "-d", "2s", "--json")
        assert run.code == 0, run.stderr
        received = target.received()
    doc = run.json()
    r, _t = doc["requests"], doc["throughput"]
    assert_adds_up(r)
    assert r["unanswered"] > 0, r
    assert r["responses"] <= received <= r["sent"], (r["responses"], received, r["sent"])
    assert_rates_over_the_load_window(doc)
    for interval in doc["intervals"]:
        assert_rates(interval["requests"])
    for key in ("sent", "responses", "unanswered", "interrupted"):
        assert sum(i["requests"][key] for i in doc["intervals"]) == r[key], key


def test_https_to_a_plain_target_counts_nothing_as_sent(fresh_target):
    https = fresh_target.url.replace("http://", "https://")
    run = surge("run", f"{https}/health", "-c", "2", "-d", "1s", "--insecure", "--json")
    doc = run.json()
    r = doc["requests"]
    assert (r["sent"], r["bytes_sent"], r["responses"], r["connections_opened"]) == (0, 0, 0, 0), r
    assert r["failure_classes"].get("tls_failure", 0) > 0, r
    assert doc["throughput"]["sent_per_s"] == 0
    assert_adds_up(r)
    assert fresh_target.stats()["received_by_route"].get("GET /health", 0) == 0


def test_the_summary_leads_with_responses_and_successes_per_second(fresh_target):
    run = surge("run", f"{fresh_target.url}/health", "-n", "300", "-c", "4")
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    headline = next(line for line in lines if line.startswith("Throughput"))
    assert "responses/s" in headline and "successes/s (goodput)" in headline, headline
    assert lines.index(headline) < next(i for i, line in enumerate(lines) if line.startswith("Requests"))


def test_a_timed_run_has_one_interval_per_second_and_none_after_its_end(fresh_target):
    doc = surge("run", f"{fresh_target.url}/health", "-c", "4", "-d", "2s", "--json").json()
    ends = [(i["start_s"], i["end_s"]) for i in doc["intervals"]]
    assert len(ends) == 2, ends
    assert ends[0] == (0.0, 1.0) and ends[1][0] == 1.0
    assert ends[1][1] == pytest.approx(doc["throughput"]["window_s"] + doc["drain"]["seconds"], abs=1e-6)
    assert ends[1][1] - doc["duration_s"] < 0.5, "only the drain of requests in flight follows the load"


def test_requests_cut_off_at_the_end_count_in_the_failure_rate(tmp_path, fresh_target):
    # Every request takes 600 ms and the graceful stop is 100 ms: each VU's second request,
    # due at 0.6 s, is still out at 1.1 s and is cut off. The failure rate (and its threshold) counts them.
    path = write(
        tmp_path,
        """\
        target: @URL@
        graceful_stop: 100ms
        scenarios:
          slow:
            executor: {type: constant-vus, vus: 3, duration: 1s}
            flow: [{name: slow, request: {path: /delay/600}}]
        thresholds:
          - "failure_rate < 10%"
        """,
        URL=fresh_target.url,
    )
    run = surge("run", str(path), "--json")
    doc = run.json()
    r = doc["requests"]
    assert (r["succeeded"], r["failed"], r["interrupted"]) == (3, 0, 3), r
    assert r["failure_rate"] == pytest.approx(0.5)
    for scope in (doc["scenarios"][0], doc["tags"][0]):
        assert scope["requests"]["failure_rate"] == pytest.approx(0.5), scope
    assert_adds_up(r)
    assert run.code == 99 and doc["thresholds"][0]["status"] == "fail", doc["thresholds"]
    assert doc["thresholds"][0]["observed"] == pytest.approx(0.5)


def test_requests_hanging_past_the_load_are_counted_in_the_drain_not_in_the_rate(tmp_path, fresh_target):
    # 3 fast VUs and one slow one (1.8 s a request) for 2 s: the slow VU's second request,
    # sent at 1.8 s, ends at ~3.6 s. The rates are over the 2 s of load and count what ended in
    # it (the intervals up to 2 s say how much); the slow request finishes in the drain,
    # counted but never diluting the rate (it used to stretch the window to ~3.6 s).
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        graceful_stop: 10s
        scenarios:
          fast:
            executor: {type: constant-vus, vus: 3, duration: 2s}
            flow: [{name: fast, request: {path: /delay/0}}]
          slow:
            executor: {type: constant-vus, vus: 1, duration: 2s}
            flow: [{name: slow, request: {path: /delay/1800}}]
        """,
    )
    run = surge("run", str(path), "--target", fresh_target.url, "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert_rates_over_the_load_window(doc)
    t, d, r = doc["throughput"], doc["drain"], doc["requests"]
    in_load = sum(i["requests"]["responses"] for i in doc["intervals"] if i["end_s"] <= doc["duration_s"] + 1e-6)
    assert round(t["responses_per_s"] * t["window_s"]) == in_load, (t, in_load)
    assert d["responses"] >= 1 and 1.2 < d["seconds"] < 2.5, d
    assert r["responses"] == fresh_target.received() and r["interrupted"] == 0, r
    slow = next(s for s in doc["scenarios"] if s["name"] == "slow")
    assert slow["drain"]["responses"] == 1 and round(slow["throughput"]["responses_per_s"] * 2) == 1, slow
    summary = surge("run", str(path), "--target", fresh_target.url)
    drain_line = next(line for line in summary.stdout.splitlines() if line.startswith("Drain"))
    assert "long" in drain_line, drain_line
