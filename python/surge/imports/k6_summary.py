"""k6's end-of-test summary as JSON: ``--summary-export`` (one flat object per metric) and
the data ``handleSummary()`` receives (``metrics.<name>.values``) (docs/imports.md, "k6
summaries"). Neither keeps a histogram, intervals, status codes or the start time; trend
statistics are those of ``summaryTrendStats`` (by default avg, min, med, max, p(90), p(95):
no p(99)). Whatever is not there is None.

In both, ``http_req_failed`` is a rate whose true values are *failed* requests: its
``passes`` counts failed requests and its ``fails`` the others. ``http_reqs`` counts every
request that ended (k6 counts it when the request is done, an HTTP response or an error): its
count is ``responses`` and its rate ``responses_per_s`` (k6's own figure, over the test's
duration), as a summary cannot tell a request without a response from an HTTP error.
"""

from __future__ import annotations

from typing import Any

from surge.imports.builder import Imported, base_document, missing_latency, requests_block
from surge.imports.source import Source, count, mapping, number
from surge.record.check import MAX_COUNT, MAX_LATENCY_MS, MAX_SPAN_S

TREND_FIELDS = (
    ("min_ms", "min"),
    ("mean_ms", "avg"),
    ("p50_ms", "med"),
    ("p90_ms", "p(90)"),
    ("p95_ms", "p(95)"),
    ("p99_ms", "p(99)"),
    ("p99_9_ms", "p(99.9)"),
    ("max_ms", "max"),
)
"""TREND_FIELDS map the document's latency fields to k6's trend statistics."""

SUCCESS_SUBMETRIC = "http_req_duration{expected_response:true}"
"""SUCCESS_SUBMETRIC is k6's http_req_duration of the requests it counted a success."""


def is_handle_summary(doc: dict[str, Any]) -> bool:
    """is_handle_summary is whether a k6 summary is ``handleSummary`` data (metrics hold
    ``values``) rather than ``--summary-export``."""
    metrics = doc.get("metrics")
    return "state" in doc or (
        isinstance(metrics, dict) and any(isinstance(m, dict) and "values" in m for m in metrics.values())
    )


def looks_like(doc: Any) -> bool:
    """looks_like is whether a JSON document is a k6 summary: a ``metrics`` object holding
    ``http_reqs`` or ``http_req_duration``."""
    metrics = doc.get("metrics") if isinstance(doc, dict) else None
    return isinstance(metrics, dict) and ("http_reqs" in metrics or "http_req_duration" in metrics)


def _values(
    source: Source, metrics: dict[str, Any], name: str, handle: bool, *, required: bool
) -> dict[str, Any] | None:
    """_values is one metric's statistics (``metrics.NAME`` or ``metrics.NAME.values``)."""
    if name not in metrics and not required:
        return None
    metric = mapping(source, metrics.get(name), f"metrics.{name}")
    return mapping(source, metric.get("values"), f"metrics.{name}.values") if handle else metric


def _latency(source: Source, trend: dict[str, Any] | None, key: str) -> dict[str, Any]:
    """_latency is a latency summary from a k6 trend's statistics (ms); absent ones are None."""
    latency = missing_latency()
    if trend is None:
        return latency
    for field, stat in TREND_FIELDS:
        latency[field] = number(source, trend.get(stat), f"{key}.{stat}", optional=True, high=MAX_LATENCY_MS)
    if "count" in trend:
        latency["count"] = count(source, trend["count"], f"{key}.count")
    return latency


def parse(source: Source, doc: dict[str, Any]) -> Imported:
    """parse reads either k6 summary; a missing or mistyped figure names its key."""
    handle = is_handle_summary(doc)
    metrics = mapping(source, doc.get("metrics"), "metrics")
    prefix = "values." if handle else ""
    reqs = _values(source, metrics, "http_reqs", handle, required=True)
    assert reqs is not None
    sent = count(source, reqs.get("count"), f"metrics.http_reqs.{prefix}count")
    failed_rate = _values(source, metrics, "http_req_failed", handle, required=False)
    if failed_rate is None:
        raise source.error(
            "missing (k6 before v0.31 did not count failed requests, so successes cannot be told from failures)",
            key="metrics.http_req_failed",
        )
    # The rate's "passes" are its true values: failed requests.
    failed = count(source, failed_rate.get("passes"), f"metrics.http_req_failed.{prefix}passes")
    succeeded = count(source, failed_rate.get("fails"), f"metrics.http_req_failed.{prefix}fails")
    if failed + succeeded > sent:
        raise source.error(
            f"{failed:,} failed + {succeeded:,} not failed is more than the {sent:,} requests of metrics.http_reqs",
            key=f"metrics.http_req_failed.{prefix}passes",
        )
    received = _values(source, metrics, "data_received", handle, required=False)
    requests = requests_block(
        sent=sent,
        responses=sent,
        succeeded=succeeded,
        failed=failed,
        status_codes=None,
        bytes_received=None
        if received is None
        else count(source, received.get("count"), f"metrics.data_received.{prefix}count"),
    )
    rate = number(source, reqs.get("rate"), f"metrics.http_reqs.{prefix}rate", optional=True, high=MAX_COUNT)
    if handle:
        state = mapping(source, doc.get("state"), "state")
        duration_ms = number(source, state.get("testRunDurationMs"), "state.testRunDurationMs", high=MAX_LATENCY_MS)
        window = None if duration_ms is None else duration_ms / 1000
    else:  # k6 computed the rate as count / the test's duration: the duration is count / rate.
        window = sent / rate if rate else None
        if window is not None and window > MAX_SPAN_S:
            raise source.error(
                f"{rate!r}: {sent:,} requests at this rate span more than {MAX_SPAN_S:,} s (31 days)",
                key="metrics.http_reqs.rate",
            )
    trend = _values(source, metrics, "http_req_duration", handle, required=False)
    success = _values(source, metrics, SUCCESS_SUBMETRIC, handle, required=False)
    latency = {
        "all": _latency(source, trend, f"metrics.http_req_duration{'.values' if handle else ''}"),
        "success": _latency(source, success, f"metrics.{SUCCESS_SUBMETRIC}{'.values' if handle else ''}"),
        "service_time": missing_latency(),
        "send_lag": missing_latency(),
    }
    notes = ["a k6 summary keeps no histogram, intervals, status codes or start time"]
    doc_out = base_document(
        url="", started_unix_s=None, elapsed_s=window, requests=requests, latency=latency, notes=notes
    )
    if rate is not None and window:  # k6's own rate, not count / window rounded again
        doc_out["throughput"]["responses_per_s"] = rate
    return Imported(
        tool="k6", format="k6-handle-summary" if handle else "k6-summary-export", document=doc_out, started_unix_s=None
    )
