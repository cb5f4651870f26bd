"""hey's ``-o csv``: one row per request that got a response (docs/imports.md, "hey").

hey (github.com/rakyll/hey v0.1.5, requester/report.go) writes a row only for a result
without an error, and only for the first 1,000,000: requests that ended in an error (timeout,
connection refused) are counted in its text report's "Error distribution" but are not in the
CSV, so how many requests were sent is unknown. Times are seconds with four decimals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from surge.imports.builder import Imported, Sample, document_from_samples
from surge.imports.source import Source, http_status
from surge.record.check import MAX_SPAN_S

HEADER = "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset"
"""HEADER is the first line of hey's CSV (requester/print.go's csvTmpl)."""

MAX_ROWS = 1_000_000
"""MAX_ROWS is hey's maxRes: it keeps no more results for its report than this."""

COLUMNS = len(HEADER.split(","))


def looks_like(text: str) -> bool:
    """looks_like is whether ``text`` starts with hey's CSV header."""
    return text.lstrip("\ufeff").split("\n", 1)[0].strip() == HEADER


def hey_percentile(values: Sequence[float], percent: float) -> float | None:
    """hey_percentile is hey's report.go ``latencies()``: the first sorted value at index i
    with ``i * 100 / n >= percent`` in integer arithmetic (for 99.9: ``i * 1000 / n >= 999``),
    that is index ceil(percent × n / 100); None where hey prints nothing (past the end)."""
    scale = 10 if percent != int(percent) else 1
    index = -(-round(percent * scale) * len(values) // (100 * scale))
    return values[index] if index < len(values) else None


def parse(source: Source) -> Imported:
    """parse reads hey's CSV into an imported run; a malformed row names its line."""
    lines = source.text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != HEADER:
        raise source.error(f"not hey's CSV: the first line must be {HEADER}", line=1)
    samples = []
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        cells = line.split(",")
        if len(cells) != COLUMNS:
            raise source.error(f"expected {COLUMNS} comma-separated columns, found {len(cells)}", line=number)
        try:
            response_s, offset_s = float(cells[0]), float(cells[7])
        except ValueError:
            raise source.error("response-time and offset must be numbers (seconds)", line=number) from None
        for name, value, cell in (("response-time", response_s, cells[0]), ("offset", offset_s, cells[7])):
            if not (math.isfinite(value) and 0 <= value <= MAX_SPAN_S):
                raise source.error(
                    f"{name}: {cell[:20]} is not a time from 0 to {MAX_SPAN_S:,} s (31 days)", line=number
                )
        status = http_status(cells[6])
        if status is None:
            raise source.error(f"status-code: {cells[6][:20]!r} is not an HTTP status (100-599)", line=number)
        samples.append(
            Sample(end_s=offset_s + response_s, latency_ms=round(response_s * 1000, 1), status=status, ok=status < 400)
        )
    notes = [
        "hey's CSV has only requests that got a response: requests that ended in an error are not in it, "
        "so the number sent is unknown",
        "latencies are rounded to 0.1 ms (hey writes seconds with four decimals)",
    ]
    if len(samples) >= MAX_ROWS:
        notes.append(f"hey keeps at most {MAX_ROWS:,} results: later requests are not in the file")
    doc = document_from_samples(
        samples, url="", started_unix_s=None, percentile=hey_percentile, errors_kept=False, notes=notes
    )
    return Imported(tool="hey", format="hey-csv", document=doc, started_unix_s=None)
