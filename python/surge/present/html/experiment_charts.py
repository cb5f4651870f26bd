"""experiment_charts: the chart specs of an experiment's report.html, from its experiment.json
document alone: per-run values with the CI on the mean (repeat, stats), throughput and latency
against load with zones, peak, knee and the USL curve (sweep), the search path (capacity), the
variants' means with their CIs (compare)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from surge.present import numbers as fmt
from surge.record.figures import FIGURE_TITLES

USL_POINTS = 60
"""USL_POINTS is how many loads the USL curve is drawn through, spread evenly on the x axis."""

RED, GREEN, GREY = "#d62728", "#2ca02c", "#7f7f7f"

ZONE_COLOURS = {
    "optimal": "rgba(46,160,67,0.16)",
    "stress": "rgba(233,196,106,0.30)",
    "degraded": "rgba(231,111,81,0.26)",
    "broken": "rgba(198,40,40,0.24)",
}
"""ZONE_COLOURS shade a sweep's zones (docs/analysis.md, "Zones"): the charts and the legend
under them take their colours from here, so they cannot disagree."""


def _title(figure: str) -> str:
    return FIGURE_TITLES.get(figure, figure)


def _chart_id(prefix: str, index: int) -> str:
    return f"{prefix}-{index}"


def over_runs_charts(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """over_runs_charts: one chart per figure of a repeat's or stats' statistics: each run's
    value (points), the mean, and the CI on the mean as a shaded band."""
    analysis = document.get("analysis") or {}
    runs = document.get("runs") or []
    labels = [str(r.get("label")) for r in runs]
    charts = []
    for i, (figure, stats) in enumerate((analysis.get("statistics") or {}).items()):
        values = [(r.get("figures") or {}).get(figure) for r in runs]
        if not any(v is not None for v in values):
            continue
        flat = [stats.get(k) for k in ("mean", "ci_low", "ci_high")]
        series = [
            {"label": "run", "values": values, "style": "points"},
            {"label": "mean", "values": [flat[0]] * len(runs), "colour": GREY},
        ]
        chart: dict[str, Any] = {
            "id": _chart_id("figure", i),
            "title": f"{_title(figure)}: each run, mean and {analysis.get('confidence', 0.95):.0%} CI",
            "x": list(range(len(runs))),
            "xcats": labels,
            "xlabel": "run",
            "ylabel": _title(figure),
            "series": series,
            "yzero": figure.endswith("_per_s"),
        }
        if flat[1] is not None and flat[2] is not None:
            series += [
                {"label": "CI high", "values": [flat[2]] * len(runs), "style": "dash", "colour": "#1f77b4"},
                {"label": "CI low", "values": [flat[1]] * len(runs), "style": "dash", "colour": "#1f77b4"},
            ]
            chart["band"] = [3, 4]
        charts.append(chart)
    return charts


def _zones(loads: list[float], zones: list[str], log: bool) -> list[dict[str, Any]]:
    """Each level's zone spans half the way to each neighbouring level (on the axis's scale: a
    geometric midpoint on a log axis); the outermost levels mirror their inner half."""
    pos = [math.log(v) for v in loads] if log else list(loads)
    halves = [(b - a) / 2 for a, b in zip(pos, pos[1:])] or [math.log(2) / 2 if log else 0.5]
    spans = []
    for i, zone in enumerate(zones):
        low = pos[i] - (halves[i - 1] if i else halves[0])
        high = pos[i] + (halves[i] if i < len(halves) else halves[-1])
        spans.append({"from": math.exp(low) if log else low, "to": math.exp(high) if log else high, "zone": zone})
    return spans


def _usl(usl: Mapping[str, Any] | None, n: float) -> float | None:
    if not usl or "sigma" not in usl:
        return None
    return usl["lambda"] * n / (1 + usl["sigma"] * (n - 1) + usl["kappa"] * n * (n - 1))


def sweep_charts(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """sweep_charts: throughput and goodput against load, with the USL curve (closed model),
    the peak and knee marked and each level's zone shaded; and p50/p95/p99 against load."""
    analysis = document.get("analysis") or {}
    levels = analysis.get("levels") or []
    if not levels:
        return []
    loads = [float(lv["load"]) for lv in levels]
    log = len(loads) > 1 and min(loads) > 0 and max(loads) / min(loads) >= 8
    usl = analysis.get("usl")
    x = sorted(set(loads))
    if _usl(usl, 1.0) is not None:
        lo, hi = min(loads), max(loads)
        dense = [
            lo * (hi / lo) ** (k / (USL_POINTS - 1)) if log else lo + (hi - lo) * k / (USL_POINTS - 1)
            for k in range(USL_POINTS)
        ]
        x = sorted(set(x) | set(dense))
    at = {lv["load"]: lv for lv in levels}

    def column(key: str) -> list[float | None]:
        return [at[v][key] if v in at else None for v in x]

    unit = "VUs" if analysis.get("model") == "closed" else "offered rate /s"
    zones = _zones(loads, [lv["zone"] for lv in levels], log)
    marks = []
    peak, knee = analysis.get("peak") or {}, analysis.get("knee") or {}
    if peak.get("load") is not None:
        marks.append({"x": peak["load"], "label": f"peak {fmt.rate(peak.get('throughput'))}/s", "colour": GREEN})
    if knee.get("load") is not None:
        marks.append({"x": knee["load"], "label": f"knee {fmt.rate(knee.get('throughput'))}/s", "colour": RED})
    series: list[dict[str, Any]] = [
        {"label": "throughput/s", "values": column("responses_per_s"), "unit": "/s"},
        {"label": "goodput/s", "values": column("successes_per_s"), "unit": "/s"},
    ]
    if usl is not None and _usl(usl, 1.0) is not None:
        series.append(
            {
                "label": f"USL fit (R² {fmt.general(usl.get('r_squared'))})",
                "values": [_usl(usl, n) for n in x],
                "style": "dash",
                "colour": "#9467bd",
                "unit": "/s",
            }
        )
    base = {
        "x": x,
        "xlabel": unit,
        "xlog": 2 if log else None,
        "xticks": sorted(set(loads)),
        "zones": zones,
        "zoneColours": ZONE_COLOURS,
        "marks": marks,
        "yzero": True,
    }
    throughput = {
        **base,
        "id": "sweep-throughput",
        "title": "Throughput against load (zones shaded, peak and knee marked, USL curve)",
        "ylabel": "per second",
        "series": series,
    }
    latency = {
        **base,
        "id": "sweep-latency",
        "title": "Latency against load (zones shaded)",
        "ylabel": "latency ms",
        "series": [
            {"label": k.removesuffix("_ms"), "values": column(k), "unit": " ms"} for k in ("p50_ms", "p95_ms", "p99_ms")
        ],
    }
    return [throughput, latency]


def slo_rules(analysis: Mapping[str, Any]) -> list[dict[str, Any]]:
    """slo_rules are the SLO's latency limits of every response (``p(99) < 1s``), drawn as lines
    on the capacity search's latency chart."""
    from surge.plan.thresholds import ThresholdError, parse_threshold

    rules = []
    for condition in (analysis.get("slo") or {}).get("conditions") or []:
        try:
            parsed = parse_threshold(str(condition.get("expr") or ""))
        except ThresholdError:
            continue
        if parsed.is_latency() and parsed.metric == "latency":
            rules.append({"value": parsed.limit, "label": f"SLO {parsed.expr}", "colour": RED})
    return rules


def capacity_charts(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """capacity_charts: the search path, step by step: the offered rate (green a pass, red a
    fail), the achieved rate, and the rate found."""
    analysis = document.get("analysis") or {}
    steps = analysis.get("steps") or []
    if not steps:
        return []
    x = [s["number"] for s in steps]
    series = [
        {
            "label": "offered/s (pass)",
            "values": [s["rate"] if s["passed"] else None for s in steps],
            "style": "points",
            "colour": GREEN,
            "unit": "/s",
        },
        {
            "label": "offered/s (fail)",
            "values": [None if s["passed"] else s["rate"] for s in steps],
            "style": "points",
            "colour": RED,
            "unit": "/s",
        },
        {"label": "achieved/s", "values": [s.get("achieved_per_s") for s in steps], "unit": "/s", "colour": "#1f77b4"},
    ]
    if analysis.get("rate") is not None:
        series.append(
            {
                "label": "capacity found",
                "values": [analysis["rate"]] * len(steps),
                "style": "dash",
                "colour": GREY,
                "unit": "/s",
            }
        )
    path = {
        "id": "capacity-path",
        "title": "Search path: rate per step (pass or fail)",
        "x": x,
        "xlabel": "step",
        "ylabel": "per second",
        "series": series,
        "yzero": True,
    }
    latency = {
        "id": "capacity-latency",
        "title": "Latency per step (the SLO's latency limits as lines)",
        "x": x,
        "xlabel": "step",
        "ylabel": "latency ms",
        "yzero": True,
        "rules": slo_rules(analysis),
        "series": [
            {"label": k.removesuffix("_ms"), "values": [s.get(k) for s in steps], "unit": " ms"}
            for k in ("p50_ms", "p95_ms", "p99_ms")
        ],
    }
    return [path, latency]


def compare_charts(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """compare_charts: one chart per figure, the variants side by side: each run's value, each
    variant's mean and its CI (whiskers)."""
    analysis = document.get("analysis") or {}
    variants = list(analysis.get("variants") or [])
    estimates = analysis.get("estimates") or {}
    runs = document.get("runs") or []
    charts = []
    for i, figure in enumerate(analysis.get("figures") or []):
        sides = [(estimates.get(v) or {}).get(figure) or {} for v in variants]
        means = [s.get("mean") for s in sides]
        if not any(m is not None for m in means):
            continue
        width = max((sum(1 for r in runs if r.get("variant") == v) for v in variants), default=1)
        # each run's value sits beside its variant's mean: x = variant index ± a small offset
        xs: list[float] = []
        for k in range(len(variants)):
            xs += [k + 0.25 * (j + 1) / (width + 1) for j in range(width)]
        x = sorted(set(range(len(variants))) | set(xs))
        at_mean = {float(k): k for k in range(len(variants))}
        run_values: dict[float, float | None] = {}
        for k, v in enumerate(variants):
            values = [(r.get("figures") or {}).get(figure) for r in runs if r.get("variant") == v]
            for j, value in enumerate(values):
                run_values[k + 0.25 * (j + 1) / (width + 1)] = value

        def by_variant(key: str) -> list[float | None]:
            return [sides[at_mean[p]].get(key) if p in at_mean else None for p in x]

        charts.append(
            {
                "id": _chart_id("compare", i),
                "title": f"{_title(figure)}: variants' means with "
                f"{analysis.get('confidence', 0.95):.0%} CI, and each run",
                "x": x,
                "xcats": variants,
                "xlabel": "variant",
                "ylabel": _title(figure),
                "yzero": figure.endswith("_per_s"),
                "series": [
                    {"label": "mean", "values": by_variant("mean"), "style": "points"},
                    {"label": "CI low", "values": by_variant("ci_low"), "style": "points", "colour": GREY},
                    {"label": "CI high", "values": by_variant("ci_high"), "style": "points", "colour": GREY},
                    {"label": "run", "values": [run_values.get(p) for p in x], "style": "points", "colour": "#ff7f0e"},
                ],
                "whiskers": [{"low": 2, "high": 3}],
            }
        )
    return charts


CHARTS = {
    "repeat": over_runs_charts,
    "stats": over_runs_charts,
    "sweep": sweep_charts,
    "capacity": capacity_charts,
    "compare": compare_charts,
}
"""CHARTS maps an experiment kind to the function making its chart specs."""
