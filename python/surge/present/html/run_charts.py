"""run_charts: the chart specs of a run's report.html, from its timeseries.csv rows (one per
interval; surge.present.timeline says which are whole and what the load profiles are) and its
summary (status codes, the latency spectrum, the thresholds drawn as lines, the watched target's
and the generator's CPU)."""

from __future__ import annotations

from typing import Any

from surge.present.timeline import Rule, Timeline, load_profiles, threshold_rules, timeline
from surge.record.stored import StoredRun
from surge.record.timeseries import FAILURE_COLUMNS

LATENCY_COLUMNS = ("p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms")
"""LATENCY_COLUMNS are the per-interval latency percentiles the latency chart draws."""

RULE_COLOURS = {True: "#2ca02c", False: "#d62728"}
"""RULE_COLOURS: a threshold's line is green when it passed, red when it failed."""

PROFILE_COLOURS = ("#7f7f7f", "#8c564b", "#17becf", "#bcbd22", "#e377c2")
"""PROFILE_COLOURS draw the load profiles (one per scenario), dashed on the right axis."""


def _rules(rules: list[Rule], chart: str) -> list[dict[str, Any]]:
    return [{"value": r.value, "label": r.label, "colour": RULE_COLOURS[r.passed]} for r in rules if r.chart == chart]


def _interval(values: list[float | None]) -> list[float | None]:
    """An interval's figure is drawn as a step over the whole interval: the x axis starts with 0
    (the first interval's start), where the first value is repeated (report.js steps back)."""
    return [values[0] if values else None, *values]


def time_charts(run: StoredRun) -> list[dict[str, Any]]:
    """time_charts are the time-series charts (throughput, latency percentiles, failures and
    shed, and CPU when measured), empty when the record has no intervals (an import that kept
    none). Rates are steps over each interval, every axis of a rate or a latency starts at 0,
    the partial last interval is left out (``note`` says so), each scenario's load profile is
    drawn, and each threshold is a line on the chart it bounds (``rules``)."""
    line = timeline(run)
    if line is None:
        return []
    return time_charts_of(line, threshold_rules(run.summary))


def time_charts_of(line: Timeline, rules: list[Rule]) -> list[dict[str, Any]]:
    """time_charts_of is time_charts for a timeline and the threshold lines to draw."""
    x = [0.0, *line.ends]
    load_label, profiles = load_profiles(line)
    load = [
        {
            "label": label,
            "values": [None, *values],
            "axis": "y2",
            "style": "dash",
            "colour": PROFILE_COLOURS[i % len(PROFILE_COLOURS)],
        }
        for i, (label, values) in enumerate(profiles)
    ]
    note = line.partial_note()
    throughput = {
        "id": "throughput",
        "x": x,
        "xlabel": "time s",
        "ylabel": "per second",
        "y2label": load_label,
        "yzero": True,
        "note": note,
        "rules": _rules(rules, "throughput"),
        "series": [
            {"label": "sent/s", "values": _interval(line.column("sent_per_s")), "unit": "/s", "style": "interval"},
            {
                "label": "responses/s",
                "values": _interval(line.column("responses_per_s")),
                "unit": "/s",
                "style": "interval",
            },
            {
                "label": "successes/s",
                "values": _interval(line.per_second("successes")),
                "unit": "/s",
                "style": "interval",
            },
            *load,
        ],
    }
    latency = {
        "id": "latency",
        "x": x,
        "xlabel": "time s",
        "ylabel": "latency ms",
        "y2label": load_label,
        "yzero": True,
        "note": note,
        "rules": _rules(rules, "latency"),
        "series": [
            *(
                {"label": c.removesuffix("_ms"), "values": [None, *line.column(c)], "unit": " ms"}
                for c in LATENCY_COLUMNS
            ),
            *load,
        ],
    }
    failures = [
        {
            "label": "failures/s (all)",
            "values": _interval(line.per_second("failures")),
            "unit": "/s",
            "style": "interval",
        }
    ]
    for name in (*FAILURE_COLUMNS, "interrupted", "shed"):
        values = line.column(name)
        if any(v for v in values):
            failures.append(
                {
                    "label": name.removeprefix("failed_") + "/s",
                    "values": _interval(line.per_second(name)),
                    "unit": "/s",
                    "style": "interval",
                }
            )
    failed = {
        "id": "failures",
        "x": x,
        "xlabel": "time s",
        "ylabel": "per second",
        "yzero": True,
        "note": note,
        "series": failures,
    }
    charts = [throughput, latency, failed]
    cpu = [("generator CPU (cores)", line.column("cpu_cores")), ("target CPU (cores)", line.column("target_cpu_cores"))]
    drawn = [(label, values) for label, values in cpu if any(v is not None for v in values)]
    if drawn:
        charts.append(
            {
                "id": "cpu",
                "x": x,
                "xlabel": "time s",
                "ylabel": "cores",
                "yzero": True,
                "note": note,
                "series": [
                    {"label": label, "values": _interval(values), "unit": " cores", "style": "interval"}
                    for label, values in drawn
                ],
            }
        )
    return charts


def status_chart(summary: dict[str, Any]) -> dict[str, Any] | None:
    """status_chart is a bar per HTTP status code (responses), None when the run has none."""
    codes = (summary.get("requests") or {}).get("status_codes") or {}
    if not codes:
        return None
    names = sorted(codes, key=str)
    return {
        "id": "status",
        "x": list(range(len(names))),
        "xcats": [str(n) for n in names],
        "xlabel": "status",
        "ylabel": "responses",
        "yzero": True,
        "series": [{"label": "responses", "values": [codes[n] for n in names], "style": "bars"}],
    }
