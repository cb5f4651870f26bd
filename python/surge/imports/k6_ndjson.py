"""k6's ``--out json`` NDJSON: one JSON object a line, ``Metric`` lines declaring metrics and
``Point`` lines with one sample each (docs/imports.md, "k6 NDJSON").

Each ``http_req_duration`` point is one request: ``data.time`` is when it ended (RFC 3339,
nanoseconds), ``data.value`` its duration in ms, ``data.tags.status`` its status ("0": no
response) and ``data.tags.expected_response`` whether k6 counted it a success (its
``http_req_failed`` is the opposite). Percentiles follow k6's TrendSink
(lib/metrics/sink.go, ``k6_percentile``), so that figures computed from per-request points
equal what k6 printed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from surge.imports.builder import Imported, Sample, document_from_samples
from surge.imports.source import Source, http_status
from surge.record.check import MAX_LATENCY_MS, MAX_SPAN_S, MAX_UNIX_S

LINE_TYPES = ("Metric", "Point")
"""LINE_TYPES are the values of ``type`` on k6's NDJSON lines."""

_TIME = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)")


def looks_like(first_line: str) -> bool:
    """looks_like is whether ``first_line`` is a k6 NDJSON line (an object with ``type``
    Metric or Point and a ``metric``)."""
    try:
        line = json.loads(first_line)
    except (ValueError, RecursionError):  # malformed, too deep or a number too long: not k6's
        return False
    return isinstance(line, dict) and line.get("type") in LINE_TYPES and "metric" in line


def _unix_s(text: Any) -> float | None:
    """_unix_s is an RFC 3339 time (k6 writes nanoseconds) from 1970 to 9999 as Unix seconds,
    or None (not such a time, or no date: month 13, year 0000)."""
    match = _TIME.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    zone = "+00:00" if match[3] == "Z" else match[3]
    try:
        when = datetime.fromisoformat(match[1] + zone).timestamp() + float("0" + (match[2] or ""))
    except (ValueError, OverflowError):
        return None
    return when if 0 <= when <= MAX_UNIX_S else None


def _status(tags: dict[str, Any]) -> int | str | None:
    """_status is a request's ``status`` tag: an HTTP status (100-599), None for "0" (k6: no
    response), or the tag as text when it is neither."""
    code = tags.get("status", "0")
    status = http_status(code)
    if status is not None or code in ("0", ""):
        return status
    return str(code)[:20]


def _ok(tags: dict[str, Any], status: int | None) -> bool:
    """_ok is k6's verdict on one request: its ``expected_response`` tag, or (k6 before v0.31
    had no such tag) a status from 200 to 399, k6's default expected statuses."""
    expected = tags.get("expected_response")
    if expected in ("true", "false"):
        return bool(expected == "true")
    return bool(status is not None and 200 <= status < 400)


def parse(source: Source) -> Imported:
    """parse reads k6's NDJSON: the requests from ``http_req_duration`` points, the run's
    start from the earliest point or request start; a malformed line names its line."""
    requests: list[tuple[float, float, int | None, bool]] = []  # (ended, ms, status, ok)
    earliest: float | None = None
    url = ""
    for number, text in enumerate(source.text.splitlines(), 1):
        if not text.strip():
            continue
        line = source.json_line(text, number)
        if not isinstance(line, dict) or line.get("type") not in LINE_TYPES:
            raise source.error("not a k6 JSON output line: expected an object with type Metric or Point", line=number)
        if line["type"] != "Point":
            continue
        data = line.get("data")
        when = _unix_s(data.get("time")) if isinstance(data, dict) else None
        if not isinstance(data, dict) or when is None:
            raise source.error("a Point needs data.time (an RFC 3339 time from 1970 to 9999)", line=number)
        earliest = when if earliest is None else min(earliest, when)
        if line.get("metric") != "http_req_duration":
            continue
        value = data.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_LATENCY_MS:
            raise source.error(
                f"data.value of http_req_duration must be a duration from 0 to {MAX_LATENCY_MS:,.0f} ms", line=number
            )
        tags: dict[str, Any] = data["tags"] if isinstance(data.get("tags"), dict) else {}
        status = _status(tags)
        if isinstance(status, str):
            raise source.error(
                f"data.tags.status: {status!r} is not an HTTP status (100-599, or 0: no response)", line=number
            )
        ok = _ok(tags, status)
        if ok and status is None:
            raise source.error(
                "data.tags: a request without a response (status 0) cannot be expected_response true", line=number
            )
        url = url or str(tags.get("url", ""))
        requests.append((when, float(value), status, ok))
    if earliest is None:
        raise source.error("no Point lines: nothing to import")
    started = min([earliest, *(end - ms / 1000 for end, ms, _, _ in requests)])
    latest = max((end for end, _, _, _ in requests), default=started)
    if latest - started > MAX_SPAN_S:
        raise source.error(
            f"the points span {latest - started:,.0f} s, more than the {MAX_SPAN_S:,} s (31 days) surge imports",
            key="data.time",
        )
    samples = [Sample(end_s=end - started, latency_ms=ms, status=status, ok=ok) for end, ms, status, ok in requests]
    doc = document_from_samples(
        samples, url=url, started_unix_s=started, percentile=k6_percentile, errors_kept=True, notes=[]
    )
    return Imported(tool="k6", format="k6-ndjson", document=doc, started_unix_s=started, target=url)


def k6_percentile(values: Sequence[float], percent: float) -> float | None:
    """k6_percentile is k6's ``TrendSink.P``: with n sorted values, i = p × (n − 1) and the
    value linearly interpolated between indexes floor(i) and ceil(i); ``med`` is p = 0.5."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    i = percent / 100 * (len(values) - 1)
    low, high = values[math.floor(i)], values[math.ceil(i)]
    return low + (high - low) * (i - math.floor(i))
