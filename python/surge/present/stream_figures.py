"""What report.md, report.html and the terminal show of a run's streams (docs/record.md, "Streams",
"Goodput" and "HTTP/2"): the latency rows only event streams have, one line of their counts,
tokens and goodput, and one of how HTTP/2 connections carried the requests' streams. From the
record alone; every format shares it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from surge.present import numbers as fmt

STREAM_LATENCY_ROWS = (
    ("first event (streams)", "first_event"),
    ("gap between events", "event_gap"),
    ("stream (first event to end)", "stream_duration"),
    ("time to first token", "ttft"),
    ("inter-token latency", "itl"),
    ("time per output token", "tpot"),
)
"""STREAM_LATENCY_ROWS are the latency summaries of streams: label, key of ``latency``."""


def stream_lines(summary: Mapping[str, Any]) -> list[str]:
    """stream_lines says what a run's streams were, in sentences: the event streams and their
    events, the token streams, their output tokens (and where the count came from) and tokens/s,
    and the goodput when the run had bounds; empty for a run without streams or goodput."""
    requests = summary.get("requests") or {}
    throughput = summary.get("throughput") or {}
    lines = []
    if requests.get("streams"):
        lines.append(
            f"{fmt.count(requests.get('streams'))} event streams, {fmt.count(requests.get('events'))} events, "
            f"{fmt.count(requests.get('empty_streams'))} without an event."
        )
    if requests.get("token_streams"):
        streams, usage = int(requests.get("token_streams") or 0), int(requests.get("usage_streams") or 0)
        source = (
            "all counted from the usage"
            if usage == streams
            else f"{fmt.count(usage)} counted from the usage, the rest from the deltas"
            if usage
            else "counted from the deltas"
        )
        lines.append(
            f"{fmt.count(streams)} token streams, {fmt.count(requests.get('output_tokens'))} output tokens ({source}), "
            f"{fmt.rate(throughput.get('output_tokens_per_s'))} output tokens/s."
        )
    http2 = summary.get("http2")
    if isinstance(http2, Mapping):
        lines.append(f"HTTP/2: {http2_line(http2)}.")
    bounds = summary.get("goodput")
    if isinstance(bounds, Mapping) and bounds:
        each = " and ".join(f"{str(k).removesuffix('_s')} ≤ {float(v) * 1000:g} ms" for k, v in bounds.items())
        responses = int(requests.get("responses") or 0)
        share = (requests.get("good") or 0) / responses if responses else None
        lines.append(
            f"Goodput: {fmt.rate(throughput.get('good_per_s'))} good responses/s, {fmt.count(requests.get('good'))} "
            f"of {fmt.count(responses)} ({fmt.percent(share)}) met {each}."
        )
    return lines


def http2_line(http2: Mapping[str, Any]) -> str:
    """http2_line says how a run's HTTP/2 connections carried its streams (the record's
    ``http2``): streams over connections, per connection (mean, most), in flight on a connection
    at once (mean, most), GOAWAYs and the server's stream limit."""
    limit = http2.get("server_max_concurrent_streams")
    connections = http2.get("connections")
    return (
        f"{fmt.count(http2.get('streams'))} streams on {fmt.count(connections)} "
        f"connection{'' if connections == 1 else 's'} "
        f"({fmt.mean(http2.get('streams_per_connection_mean'))} per connection, at most "
        f"{fmt.count(http2.get('streams_per_connection_max'))}) · in flight on a connection "
        f"{fmt.mean(http2.get('concurrent_streams_mean'))} mean, {fmt.count(http2.get('concurrent_streams_max'))} "
        f"most · {fmt.count(http2.get('goaways'))} GOAWAY · "
        + (f"server limit {fmt.count(limit)} streams" if limit is not None else "no stream limit from the server")
    )
