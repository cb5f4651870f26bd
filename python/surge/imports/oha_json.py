"""oha's JSON output (``--output-format json``; ``-j``/``--json`` before v1.5) (docs/imports.md,
"oha"). Times are seconds. oha keeps per-request data only in memory: the file has its
summary, its percentiles (p10 … p99.99), status codes, errors and a coarse 11-bucket
histogram, no intervals; the latency statistics cover requests that got a response.
"""

from __future__ import annotations

from typing import Any

from surge.imports.builder import PERCENTILES, Imported, base_document, missing_latency, requests_block
from surge.imports.source import Source, count, http_status, mapping, number
from surge.record.check import MAX_SPAN_S


def looks_like(doc: Any) -> bool:
    """looks_like is whether a JSON document is oha's: ``summary`` and ``latencyPercentiles``."""
    return isinstance(doc, dict) and isinstance(doc.get("summary"), dict) and "latencyPercentiles" in doc


def status(source: Source, code: str) -> str:
    """status is a key of ``statusCodeDistribution`` once it is an HTTP status (100-599), else
    BadInput naming it."""
    if http_status(code) is None:
        raise source.error(f"{code[:20]!r} is not an HTTP status (100-599)", key="statusCodeDistribution")
    return code


def _ms(source: Source, table: dict[str, Any], key: str, where: str) -> float | None:
    seconds = number(source, table.get(key), f"{where}.{key}", optional=True, high=MAX_SPAN_S)
    return None if seconds is None else round(seconds * 1000, 6)  # oha: nanoseconds


def _latency(
    source: Source, percentiles: dict[str, Any] | None, where: str, responses: int, summary: dict[str, Any] | None
) -> dict[str, Any]:
    """_latency maps oha's percentiles (and, for all responses, its fastest/average/slowest)."""
    latency = missing_latency()
    if percentiles is None:
        return latency
    for field, percent in PERCENTILES:
        latency[field] = _ms(source, percentiles, f"p{percent:g}", where)
    if summary is not None:
        latency.update(
            count=responses,
            min_ms=_ms(source, summary, "fastest", "summary"),
            mean_ms=_ms(source, summary, "average", "summary"),
            max_ms=_ms(source, summary, "slowest", "summary"),
        )
    return latency


def parse(source: Source, doc: dict[str, Any]) -> Imported:
    """parse reads oha's JSON; a missing or mistyped figure names its key."""
    summary = mapping(source, doc.get("summary"), "summary")
    codes = {
        status(source, k): count(source, v, f"statusCodeDistribution.{k[:20]}")
        for k, v in mapping(source, doc.get("statusCodeDistribution", {}), "statusCodeDistribution").items()
    }
    errors = {
        str(k): count(source, v, f"errorDistribution.{k}")
        for k, v in mapping(source, doc.get("errorDistribution", {}), "errorDistribution").items()
    }
    responses = sum(codes.values())
    succeeded = sum(n for code, n in codes.items() if int(code) < 400)
    sent = responses + sum(errors.values())
    requests = requests_block(
        sent=sent,
        responses=responses,
        succeeded=succeeded,
        failed=sent - succeeded,
        status_codes=dict(sorted(codes.items())),
        failure_classes=errors,
    )
    percentiles = mapping(source, doc.get("latencyPercentiles"), "latencyPercentiles")
    successful = doc.get("latencyPercentilesSuccessful")
    # oha's "successful" is a 2xx status; surge's success is a status below 400: the same
    # requests only when no 3xx came back.
    same_success = isinstance(successful, dict) and not any(code.startswith("3") for code in codes)
    latency = {
        "all": _latency(source, percentiles, "latencyPercentiles", responses, summary),
        "success": _latency(
            source, successful if same_success else None, "latencyPercentilesSuccessful", succeeded, None
        ),
        "service_time": missing_latency(),
        "send_lag": missing_latency(),
    }
    if same_success:
        latency["success"]["count"] = succeeded
    window = number(source, summary.get("total"), "summary.total", high=MAX_SPAN_S)
    notes = ["oha's JSON keeps no per-request data: no histogram, no intervals, no start time"]
    out = base_document(url="", started_unix_s=None, elapsed_s=window, requests=requests, latency=latency, notes=notes)
    return Imported(tool="oha", format="oha-json", document=out, started_unix_s=None)
