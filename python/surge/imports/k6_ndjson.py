"""k6's ``--out json`` NDJSON: one JSON object a line, ``Metric`` lines declaring metrics and
``Point`` lines with one sample each (docs/imports.md, "k6 NDJSON").

Each ``http_req_duration`` point is one request: ``data.time`` is when it ended (RFC 3339,
nanoseconds), ``data.value`` its duration in ms, ``data.tags.status`` its status ("0": no
response) and ``data.tags.expected_response`` whether k6 counted it a success (its
``http_req_failed`` is the opposite).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from surge.imports.builder import Imported, Sample, document_from_samples
from surge.imports.k6_trend import k6_percentile
from surge.imports.source import Source

LINE_TYPES = ("Metric", "Point")
"""LINE_TYPES are the values of ``type`` on k6's NDJSON lines."""

_TIME = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)")


def looks_like(first_line: str) -> bool:
    """looks_like is whether ``first_line`` is a k6 NDJSON line (an object with ``type``
    Metric or Point and a ``metric``)."""
    try:
        line = json.loads(first_line)
    except json.JSONDecodeError:
        return False
    return isinstance(line, dict) and line.get("type") in LINE_TYPES and "metric" in line


def _unix_s(text: Any) -> float | None:
    """_unix_s is an RFC 3339 time (k6 writes nanoseconds) as Unix seconds, or None."""
    match = _TIME.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    zone = "+00:00" if match[3] == "Z" else match[3]
    return datetime.fromisoformat(match[1] + zone).timestamp() + float("0" + (match[2] or ""))


def _ok(tags: dict[str, Any], status: int | None) -> bool:
    """_ok is k6's verdict on one request: its ``expected_response`` tag, or (k6 before v0.31
    had no such tag) a status from 200 to 399, k6's default expected statuses."""
    expected = tags.get("expected_response")
    if expected in ("true", "false"):
        return expected == "true"
    return status is not None and 200 <= status < 400


def parse(source: Source) -> Imported:
    """parse reads k6's NDJSON: the requests from ``http_req_duration`` points, the run's
    start from the earliest point or request start; a malformed line names its line."""
    requests: list[tuple[float, float, int | None, bool]] = []  # (ended, ms, status, ok)
    earliest: float | None = None
    url = ""
    for number, text in enumerate(source.text.splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as e:
            raise source.error(f"not valid JSON: {e.msg} (column {e.colno})", line=number) from None
        if not isinstance(line, dict) or line.get("type") not in LINE_TYPES:
            raise source.error("not a k6 JSON output line: expected an object with type Metric or Point", line=number)
        if line["type"] != "Point":
            continue
        data = line.get("data")
        when = _unix_s(data.get("time")) if isinstance(data, dict) else None
        if not isinstance(data, dict) or when is None:
            raise source.error("a Point needs data.time (RFC 3339)", line=number)
        earliest = when if earliest is None else min(earliest, when)
        if line.get("metric") != "http_req_duration":
            continue
        value = data.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise source.error("data.value of http_req_duration must be a duration in ms", line=number)
        tags: dict[str, Any] = data["tags"] if isinstance(data.get("tags"), dict) else {}
        code = str(tags.get("status", ""))
        status = int(code) if code.isdigit() and code != "0" else None
        url = url or str(tags.get("url", ""))
        requests.append((when, float(value), status, _ok(tags, status)))
    if earliest is None:
        raise source.error("no Point lines: nothing to import")
    started = min([earliest, *(end - ms / 1000 for end, ms, _, _ in requests)])
    samples = [Sample(end_s=end - started, latency_ms=ms, status=status, ok=ok) for end, ms, status, ok in requests]
    doc = document_from_samples(samples, url=url, started_unix_s=started, percentile=k6_percentile, errors_kept=True,
                                notes=[])
    return Imported(tool="k6", format="k6-ndjson", document=doc, started_unix_s=started, target=url)
