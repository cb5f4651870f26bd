"""run_charts: the chart specs of a run's report.html, from its timeseries.csv rows (one per
interval, scenario ``all``) and its summary (status codes, the latency spectrum)."""

from __future__ import annotations

from typing import Any

from surge.history.stored import StoredRun
from surge.record.timeseries import FAILURE_COLUMNS

LATENCY_COLUMNS = ("p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms")
"""LATENCY_COLUMNS are the per-interval latency percentiles the latency chart draws."""


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def _per_second(counts: list[float | None], lengths: list[float]) -> list[float | None]:
    return [None if c is None or n <= 0 else c / n for c, n in zip(counts, lengths)]


def _load_series(rows: list[dict[str, str]]) -> tuple[str, list[float | None]]:
    """The load profile: the offered rate when the run had one (open model), else active VUs."""
    rate = [_float(r.get("offered_rate_per_s")) for r in rows]
    if any(v is not None for v in rate):
        return "offered rate /s", rate
    return "active VUs", [_float(r.get("active_vus")) for r in rows]


def time_charts(run: StoredRun) -> list[dict[str, Any]]:
    """time_charts are the time-series charts (throughput, latency percentiles, failures and
    shed), empty when the record has no intervals (an import that kept none)."""
    rows = run.interval_rows()
    if not rows:
        return []
    x = [_float(r["time_s"]) or 0.0 for r in rows]
    lengths = [t - (x[i - 1] if i else 0.0) for i, t in enumerate(x)]
    lengths = [n if n > 0 else 1.0 for n in lengths]
    col = {name: [_float(r.get(name)) for r in rows] for name in rows[0]}
    load_label, load = _load_series(rows)
    load_series = {"label": load_label, "values": load, "axis": "y2", "style": "dash", "colour": "#7f7f7f"}
    throughput = {"id": "throughput", "x": x, "xlabel": "time s", "ylabel": "per second", "y2label": load_label,
                  "series": [{"label": "sent/s", "values": col["sent_per_s"], "unit": "/s"},
                             {"label": "responses/s", "values": col["responses_per_s"], "unit": "/s"},
                             {"label": "successes/s", "values": _per_second(col["successes"], lengths),
                              "unit": "/s"},
                             load_series]}
    latency = {"id": "latency", "x": x, "xlabel": "time s", "ylabel": "latency ms", "y2label": load_label,
               "series": [*({"label": c.removesuffix("_ms"), "values": col[c], "unit": " ms"} for c in LATENCY_COLUMNS),
                          load_series]}
    failures = [{"label": "failures/s (all)", "values": _per_second(col["failures"], lengths), "unit": "/s"}]
    for name in (*FAILURE_COLUMNS, "interrupted", "shed"):
        values = col.get(name) or []
        if any(v for v in values):
            failures.append({"label": name.removeprefix("failed_") + "/s", "values": _per_second(values, lengths),
                             "unit": "/s"})
    failed = {"id": "failures", "x": x, "xlabel": "time s", "ylabel": "per second", "series": failures}
    return [throughput, latency, failed]


def status_chart(summary: dict[str, Any]) -> dict[str, Any] | None:
    """status_chart is a bar per HTTP status code (responses), None when the run has none."""
    codes = (summary.get("requests") or {}).get("status_codes") or {}
    if not codes:
        return None
    names = sorted(codes, key=str)
    return {"id": "status", "x": list(range(len(names))), "xcats": [str(n) for n in names], "xlabel": "status",
            "ylabel": "responses", "series": [{"label": "responses", "values": [codes[n] for n in names],
                                               "style": "bars"}]}
