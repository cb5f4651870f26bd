"""What report.md and report.html show of a run's event streams and token streams (docs/record.md,
"Streams" and "Goodput"): the latency rows only streams have, and one line of their counts,
tokens and goodput. From the record alone; both formats share it."""

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
