"""The HTTP/2 line of a run's summary, report.md and report.html: from the record's ``http2``."""

from __future__ import annotations

from surge.present.markdown.run_report import _requests
from surge.present.stream_figures import http2_line, stream_lines

HTTP2 = {
    "connections": 4,
    "streams": 1000,
    "streams_per_connection_mean": 250.0,
    "streams_per_connection_max": 300,
    "concurrent_streams_mean": 7.85,
    "concurrent_streams_max": 8,
    "goaways": 1,
    "server_max_concurrent_streams": 128,
}


def test_the_line_says_streams_connections_multiplexing_goaways_and_the_server_limit() -> None:
    assert http2_line(HTTP2) == (
        "1,000 streams on 4 connections (250.0 per connection, at most 300) · in flight on a connection "
        "7.8 mean, 8 most · 1 GOAWAY · server limit 128 streams"
    )
    assert http2_line({**HTTP2, "server_max_concurrent_streams": None}).endswith(
        "1 GOAWAY · no stream limit from the server"
    )


def test_reports_show_it_only_for_an_http2_run() -> None:
    summary = {"requests": {"responses": 1000, "sent": 1000}, "throughput": {}}
    assert not any("HTTP/2" in line for line in stream_lines(summary))
    assert not any("### HTTP/2" in part for part in _requests(summary))
    with_h2 = {**summary, "http2": HTTP2}
    assert [line for line in stream_lines(with_h2) if line.startswith("HTTP/2: 1,000 streams")]
    assert any(part.startswith("### HTTP/2\n\n1,000 streams on 4 connections") for part in _requests(with_h2))
