"""The ``timeout_cascade`` finding: a burst of request timeouts from requests that waited in a
queue longer than the timeout (seed 004: 38 % of requests timed out at 10 s while the served ones
took 1.7 ms). Rules: docs/diagnosis.md."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from surge.diagnosis.finding import ERROR, Finding, grouped, percent
from surge.record.figures import count, ended, number

TIMEOUT_CASCADE = "timeout_cascade"
"""TIMEOUT_CASCADE is the kind of the finding that requests timed out in a burst."""

TIMEOUT_SHARE_THRESHOLD = 0.01
"""TIMEOUT_SHARE_THRESHOLD: at least this share of the run's ended requests timed out."""

BURST_SHARE_THRESHOLD = 0.10
"""BURST_SHARE_THRESHOLD: in at least one interval, timeouts were at least this share of the
requests that ended in it (a burst, not a trickle)."""

BURST_MIN_TIMEOUTS = 5
"""BURST_MIN_TIMEOUTS: that interval held at least this many timeouts."""


def timeout_cascade(document: Mapping[str, Any], timeout_s: float | None) -> Finding | None:
    """timeout_cascade: timeouts ≥ TIMEOUT_SHARE_THRESHOLD of the ended requests, and an interval
    (the burst's peak) in which they were ≥ BURST_SHARE_THRESHOLD of its ended requests and at
    least BURST_MIN_TIMEOUTS. ``timeout_s`` is the request timeout when the plan is known."""
    requests = document.get("requests") or {}
    timed_out, total = count(requests, "timed_out"), ended(requests)
    if not total or timed_out / total < TIMEOUT_SHARE_THRESHOLD:
        return None
    bursts = []
    for interval in document.get("intervals") or []:
        r = interval.get("requests") or {}
        n, of = count(r, "timed_out"), ended(r)
        if of and n >= BURST_MIN_TIMEOUTS and n / of >= BURST_SHARE_THRESHOLD:
            bursts.append((n, n / of, interval))
    if not bursts:
        return None
    peak_n, peak_share, peak = max(bursts, key=lambda b: b[0])
    first = bursts[0][2]
    success = (document.get("latency") or {}).get("success") or {}
    peak_in_flight = max((count(i, "in_flight") for i in document.get("intervals") or []), default=0)
    at = (
        f"at the {grouped(timeout_s, 1 if timeout_s % 1 else 0)} s timeout"
        if timeout_s is not None
        else "at the request timeout"
    )
    served = (
        f", while the successful ones took p95 {grouped(number(success, 'p95_ms'), 2)} ms"
        if count(success, "count")
        else ", and none succeeded"
    )
    message = (
        f"A timeout cascade: {grouped(timed_out)} of {grouped(total)} requests ({percent(timed_out / total)}) "
        f"timed out {at}, in a burst from {grouped(float(first['start_s']), 0)} s into the run (peak "
        f"{grouped(peak_n)} in the second ending at {grouped(float(peak['end_s']), 0)} s, "
        f"{percent(peak_share)} of that second's requests){served}; in flight peaked at "
        f"{grouped(peak_in_flight)}. Requests waited in a queue longer than the timeout and then failed "
        f"together: the target ran out of capacity, not speed. Lower the load, or have the server refuse "
        f"early (429/503) rather than queue."
    )
    return Finding(
        TIMEOUT_CASCADE,
        ERROR,
        message,
        {
            "timed_out": timed_out,
            "ended": total,
            "timed_out_share": timed_out / total,
            "timeout_s": timeout_s,
            "burst_start_s": float(first["start_s"]),
            "burst_intervals": len(bursts),
            "peak_timeouts": peak_n,
            "peak_end_s": float(peak["end_s"]),
            "peak_share": peak_share,
            "peak_in_flight": peak_in_flight,
            "success_p95_ms": number(success, "p95_ms") if count(success, "count") else None,
            "timeout_share_threshold": TIMEOUT_SHARE_THRESHOLD,
            "burst_share_threshold": BURST_SHARE_THRESHOLD,
        },
    )
