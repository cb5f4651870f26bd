"""The dashboard's event streams (surge.run.dashboard): a stream starts from the whole state and
then gets every event in order, a stream opened late starts from the state then, the server
keeps only what an open stream has not sent, and the end reaches every stream."""

from __future__ import annotations

import json
from typing import Any

from surge.run.dashboard import Dashboard


def _interval(i: int) -> dict[str, Any]:
    latency = {
        "count": 1,
        "min_ms": 1.0,
        "mean_ms": 1.0,
        **{f"{p}_ms": 1.0 for p in ("p50", "p90", "p95", "p99", "max")},
    }
    return {
        "index": i,
        "end_s": float(i + 1),
        "requests": {"sent": 10, "responses": 10, "succeeded": 10, "failed": 0, "shed": 0, "failure_classes": {}},
        "latency": {"all": latency},
        "responses_per_s": 10.0,
        "sent_per_s": 10.0,
        "target_rate_per_s": None,
        "in_flight": 0,
        "peak_concurrency": 1,
        "open_connections": 1,
        "scenarios": [{"name": "default", "active_vus": 1, "responses_per_s": 10.0}],
    }


def _kinds(events: list[bytes]) -> list[tuple[str, str, int]]:
    return [(e["kind"], e["event"], e["seq"]) for e in map(json.loads, events)]


def test_streams_get_every_event_in_order_from_their_snapshot_and_the_log_keeps_only_what_is_unsent():
    dashboard = Dashboard.listen("127.0.0.1", 0)
    try:
        with dashboard.stream() as early:
            assert json.loads(early.first)["seq"] == 0
            sink = dashboard.run_sink("run")
            sink.start(3.0)
            for i in range(3):
                sink.on_interval(_interval(i))
            events, done = early.next(0)
            assert _kinds(events) == [
                ("state", "run", 1),
                ("state", "interval", 2),  # the first interval: the charts built
                ("append", "interval", 3),
                ("append", "interval", 4),
            ]
            assert not done and dashboard._log == []  # every open stream has sent them
            with dashboard.stream() as late:
                first = json.loads(late.first)
                assert first["seq"] == 4 and first["state"]["run"]["intervals"] == 3
                sink.on_interval(_interval(3))
                assert _kinds(late.next(0)[0]) == _kinds(early.next(0)[0]) == [("append", "interval", 5)]
                dashboard.close()
                for stream in (early, late):
                    events, done = stream.next(0)
                    assert done and _kinds(events) == [("state", "end", 6)]
                    assert json.loads(events[-1])["state"]["done"] is True
    finally:
        dashboard._server.server_close()


def test_an_interval_the_views_cannot_read_is_an_error_event_never_the_runs():
    dashboard = Dashboard.listen("127.0.0.1", 0)
    try:
        with dashboard.stream() as stream:
            sink = dashboard.run_sink("run")
            sink.start(1.0)
            sink.on_interval({"index": 0})  # no requests, no latency: the sink does not raise
            sink.on_interval(_interval(1))
            events = [json.loads(e) for e in stream.next(0)[0]]
            assert [e["kind"] for e in events] == ["state", "error", "state"]
            assert events[1]["error"].startswith("KeyError")
            dashboard.close()
    finally:
        dashboard._server.server_close()
