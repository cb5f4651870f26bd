"""The shared builder: an imported run as the same ``surge.result/1`` document a surge run
produces (docs/imports.md), from per-request samples or from a tool's summary figures. A
figure the source did not keep is None, never estimated."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]

LOWEST_US = 1
"""LOWEST_US, HIGHEST_US and SIGNIFICANT_DIGITS are the engine's histogram configuration
(crates/surge-engine/src/measure/histogram.rs): microseconds, 1 µs to one hour, three digits."""
HIGHEST_US = 3_600_000_000
SIGNIFICANT_DIGITS = 3

INTERVAL_S = 1.0
"""INTERVAL_S is the length of the intervals rebuilt from per-request timestamps."""

NO_HISTOGRAMS = {"latency": None, "latency_success": None, "service_time": None}
"""NO_HISTOGRAMS are a summary source's ``histograms``: it kept none."""

STOP_REASON = "imported"
"""STOP_REASON is an imported run's ``stop_reason``."""

Percentile = Callable[[Sequence[float], float], "float | None"]
"""Percentile is a tool's percentile method: (values sorted ascending, percent 0-100) -> value
(None where the tool reports none)."""

PERCENTILES = (("p50_ms", 50.0), ("p90_ms", 90.0), ("p95_ms", 95.0), ("p99_ms", 99.0), ("p99_9_ms", 99.9))
"""PERCENTILES are the document's percentile fields and the percent each stands for."""


@dataclass(frozen=True)
class Sample:
    """Sample is one request of a per-request source: when it ended (seconds since the run
    started), its latency (ms), its status (None: no response) and whether the tool counted it
    a success."""

    end_s: float
    latency_ms: float
    status: int | None
    ok: bool


@dataclass
class Imported:
    """Imported is one parsed file: the tool and format that made it, its result document
    (``latency_histogram`` kept in each interval for latency.hlog), the run's start (Unix
    seconds) when the source records it, and its target URL when known."""

    tool: str
    format: str
    document: dict[str, Any]
    started_unix_s: float | None
    target: str = ""
    notes: list[str] = field(default_factory=list)


def missing_latency() -> dict[str, Any]:
    """missing_latency is a latency summary whose source kept nothing: every field None."""
    return {
        "count": None,
        "min_ms": None,
        "mean_ms": None,
        "stdev_ms": None,
        **{name: None for name, _ in PERCENTILES},
        "max_ms": None,
    }


def empty_latency() -> dict[str, Any]:
    """empty_latency is the summary of no values (as the engine writes it: count 0, zeros)."""
    return {key: 0 if key == "count" else 0.0 for key in missing_latency()}


def latency_from_values(values: Sequence[float], percentile: Percentile) -> dict[str, Any]:
    """latency_from_values summarises per-request latencies (ms, sorted) with the tool's own
    percentile method; the mean and population standard deviation are exact."""
    if not values:
        return empty_latency()
    mean = math.fsum(values) / len(values)
    stdev = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    return {
        "count": len(values),
        "min_ms": values[0],
        "mean_ms": mean,
        "stdev_ms": stdev,
        **{name: percentile(values, p) for name, p in PERCENTILES},
        "max_ms": values[-1],
    }


def encode_histogram(values_ms: Sequence[float]) -> str:
    """encode_histogram is an HdrHistogram (the engine's configuration) of ``values_ms``,
    recorded in whole microseconds (at least 1, at most an hour), V2-compressed, base64."""
    histogram = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)
    for value in values_ms:
        histogram.record_value(min(max(round(value * 1000), LOWEST_US), HIGHEST_US))
    encoded: bytes = histogram.encode()
    return encoded.decode("ascii")


def requests_block(
    *,
    sent: int | None,
    responses: int | None,
    succeeded: int,
    failed: int,
    status_codes: dict[str, int] | None,
    failure_classes: dict[str, int] | None = None,
    bytes_received: int | None = None,
) -> dict[str, Any]:
    """requests_block is a ``requests`` object; counts a tool does not keep (shed, late,
    bytes sent...) are None. Rates are over the requests that ended (succeeded + failed)."""
    ended = succeeded + failed
    return {
        "sent": sent,
        "responses": responses,
        "unanswered": None,
        "succeeded": succeeded,
        "failed": failed,
        "shed": None,
        "timed_out": None,
        "interrupted": None,
        "interrupted_unsent": None,
        "retried": None,
        "dropped": None,
        "late": None,
        "late_dispatched": None,
        "bytes_sent": None,
        "bytes_received": bytes_received,
        "connections_opened": None,
        "status_codes": status_codes,
        "failure_classes": failure_classes or {},
        "success_rate": succeeded / ended if ended else 0.0,
        "failure_rate": failed / ended if ended else 0.0,
    }


def _status_codes(samples: Sequence[Sample]) -> dict[str, int]:
    codes: dict[str, int] = {}
    for s in samples:
        if s.status is not None:
            codes[str(s.status)] = codes.get(str(s.status), 0) + 1
    return dict(sorted(codes.items()))


def _requests_of(samples: Sequence[Sample], *, errors_kept: bool) -> dict[str, Any]:
    """_requests_of counts samples; ``errors_kept`` says whether requests without a response
    are in the source (if not, how many were sent is unknown)."""
    succeeded = sum(1 for s in samples if s.ok)
    no_response = sum(1 for s in samples if s.status is None)
    return requests_block(
        sent=len(samples) if errors_kept else None,
        responses=len(samples) - no_response,
        succeeded=succeeded,
        failed=len(samples) - succeeded,
        status_codes=_status_codes(samples),
        failure_classes={"no_response": no_response} if no_response else {},
    )


def _latencies(samples: Sequence[Sample], percentile: Percentile) -> dict[str, Any]:
    every = sorted(s.latency_ms for s in samples)
    ok = sorted(s.latency_ms for s in samples if s.ok)
    return {
        "all": latency_from_values(every, percentile),
        "success": latency_from_values(ok, percentile),
        "service_time": missing_latency(),
        "send_lag": missing_latency(),
    }


def _interval(index: int, samples: Sequence[Sample], percentile: Percentile, errors_kept: bool) -> dict[str, Any]:
    requests = _requests_of(samples, errors_kept=errors_kept)
    return {
        "index": index,
        "start_s": index * INTERVAL_S,
        "end_s": (index + 1) * INTERVAL_S,
        "requests": requests,
        "latency": _latencies(samples, percentile),
        "responses_per_s": requests["responses"] / INTERVAL_S,
        "successes_per_s": requests["succeeded"] / INTERVAL_S,
        "sent_per_s": None if requests["sent"] is None else requests["sent"] / INTERVAL_S,
        "target_rate_per_s": None,
        "open_connections": None,
        "in_flight": None,
        "peak_concurrency": None,
        "latency_histogram": encode_histogram([s.latency_ms for s in samples]),
        "scenarios": [],
    }


def kept_intervals(filled: set[int]) -> list[int]:
    """kept_intervals are the indexes of the intervals an import records, given those a request
    ended in (``filled``): each of them, and of each run of empty intervals before or between
    them its first and its last (a chart draws the gap as zero throughout). At most three per
    filled interval (and interval 0 when none is filled), however long the time the file spans."""
    kept = set(filled) or {0}
    previous = -1
    for index in sorted(filled):
        if index - previous > 1:
            kept.update((previous + 1, index - 1))
        previous = index
    return sorted(kept)


def document_from_samples(
    samples: Sequence[Sample],
    *,
    url: str,
    started_unix_s: float | None,
    percentile: Percentile,
    errors_kept: bool,
    notes: list[str],
) -> dict[str, Any]:
    """document_from_samples builds the document of a per-request source: totals, latency
    with the tool's percentile method, one-second intervals by the time each request ended
    (those kept_intervals keeps: memory and output grow with the requests, not the time they
    span), and the histograms (all and successful) for latency.hlog."""
    window = max((s.end_s for s in samples), default=0.0)
    last = max(1, math.ceil(window / INTERVAL_S)) - 1
    buckets: dict[int, list[Sample]] = {}
    for s in samples:
        buckets.setdefault(min(int(s.end_s // INTERVAL_S), last), []).append(s)
    requests = _requests_of(samples, errors_kept=errors_kept)
    doc = base_document(
        url=url,
        started_unix_s=started_unix_s,
        elapsed_s=window,
        requests=requests,
        latency=_latencies(samples, percentile),
        notes=notes,
    )
    doc["histograms"] = {
        **NO_HISTOGRAMS,
        "latency": encode_histogram([s.latency_ms for s in samples]),
        "latency_success": encode_histogram([s.latency_ms for s in samples if s.ok]),
    }
    doc["intervals"] = [_interval(i, buckets.get(i, []), percentile, errors_kept) for i in kept_intervals(set(buckets))]
    return doc


def throughput(window_s: float | None, requests: dict[str, Any]) -> dict[str, Any]:
    """throughput is responses, successes and sent requests per second over ``window_s``
    (None when the window or the count is unknown)."""

    def per_s(count: int | None) -> float | None:
        return None if count is None or not window_s else count / window_s

    return {
        "window_s": window_s,
        "responses_per_s": per_s(requests["responses"]),
        "successes_per_s": per_s(requests["succeeded"]),
        "sent_per_s": per_s(requests["sent"]),
    }


def base_document(
    *,
    url: str,
    started_unix_s: float | None,
    elapsed_s: float | None,
    requests: dict[str, Any],
    latency: dict[str, Any],
    notes: list[str],
) -> dict[str, Any]:
    """base_document is the ``surge.result/1`` document of an imported run without intervals
    or histograms (a summary source has neither)."""
    return {
        "schema": "surge.result/1",
        "url": url,
        "addresses": [],
        "started_at_unix_s": started_unix_s,
        "duration_s": elapsed_s,
        "elapsed_s": elapsed_s,
        "threads": None,
        "stop_reason": STOP_REASON,
        "requests": requests,
        "latency": latency,
        "throughput": throughput(elapsed_s, requests),
        "histograms": dict(NO_HISTOGRAMS),
        "peak_open_connections": None,
        "peak_concurrency": None,
        "generator": None,
        "scenarios": [],
        "tags": [],
        "checks": [],
        "captures": [],
        "pools": {},
        "intervals": [],
        "notes": notes,
        "stop_signal": None,
    }
