"""experiment_charts: the descriptions of an experiment's charts (surge.present.charts), from its
experiment.json document alone: per-run values with the CI on the mean (repeat, stats),
throughput and latency against load with zones, peak, knee and the USL curve (sweep), the search
path and latency per step (capacity), the variants' means with their CIs (compare)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any

from surge.plan.thresholds import ThresholdError, parse_threshold
from surge.present import numbers as fmt
from surge.present.charts import BLUE, GREEN, GREY, RED, Axis, Chart, Limit, Mark, Series, Zone
from surge.record.figures import FIGURE_TITLES

USL_POINTS = 60
"""USL_POINTS is how many loads the USL curve is drawn through, spread evenly on the x axis."""


def _title(figure: str) -> str:
    return FIGURE_TITLES.get(figure, figure)


def over_runs_charts(document: Mapping[str, Any]) -> list[Chart]:
    """over_runs_charts: one chart per figure of a repeat's or stats' statistics (id
    ``figure-NAME``): each run's value (points), the mean, and the CI on the mean as a band."""
    analysis = document.get("analysis") or {}
    runs = document.get("runs") or []
    labels = tuple(str(r.get("label")) for r in runs)
    charts = []
    for figure, stats in (analysis.get("statistics") or {}).items():
        values = tuple((r.get("figures") or {}).get(figure) for r in runs)
        if not any(v is not None for v in values):
            continue
        mean, low, high = (stats.get(k) for k in ("mean", "ci_low", "ci_high"))
        series = [Series("run", values, "points"), Series("mean", (mean,) * len(runs), colour=GREY)]
        ci = low is not None and high is not None
        if ci:
            series += [
                Series("CI high", (high,) * len(runs), "dash", colour=BLUE),
                Series("CI low", (low,) * len(runs), "dash", colour=BLUE),
            ]
        charts.append(
            Chart(
                f"figure-{figure}",
                f"{_title(figure)}: each run, mean and {analysis.get('confidence', 0.95):.0%} CI",
                tuple(range(len(runs))),
                Axis("run", categories=labels),
                Axis(_title(figure), zero=figure.endswith("_per_s")),
                tuple(series),
                band=(2, 3) if ci else None,
            )
        )
    return charts


def _zones(loads: list[float], zones: list[str], log: bool) -> tuple[Zone, ...]:
    """Each level's zone spans half the way to each neighbouring level (on the axis's scale: a
    geometric midpoint on a log axis); the outermost levels mirror their inner half."""
    pos = [math.log(v) for v in loads] if log else list(loads)
    halves = [(b - a) / 2 for a, b in itertools.pairwise(pos)] or [math.log(2) / 2 if log else 0.5]
    spans = []
    for i, zone in enumerate(zones):
        low = pos[i] - (halves[i - 1] if i else halves[0])
        high = pos[i] + (halves[i] if i < len(halves) else halves[-1])
        spans.append(Zone(math.exp(low) if log else low, math.exp(high) if log else high, zone))
    return tuple(spans)


def _usl(usl: Mapping[str, Any] | None, n: float) -> float | None:
    """_usl is the fitted USL's throughput X(n) = λn / (1 + σ(n−1) + κn(n−1)), None when not fitted."""
    if not usl or "sigma" not in usl:
        return None
    return float(usl["lambda"] * n / (1 + usl["sigma"] * (n - 1) + usl["kappa"] * n * (n - 1)))


def sweep_charts(document: Mapping[str, Any]) -> list[Chart]:
    """sweep_charts: throughput and goodput against load, with the USL curve (closed model),
    the peak and knee marked and each level's zone shaded (``sweep-throughput``); and
    p50/p95/p99 against load (``sweep-latency``)."""
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

    def column(key: str) -> tuple[float | None, ...]:
        return tuple(at[v][key] if v in at else None for v in x)

    x_axis = Axis(
        "VUs" if analysis.get("model") == "closed" else "offered rate /s",
        log=2 if log else None,
        ticks=tuple(sorted(set(loads))),
    )
    zones = _zones(loads, [lv["zone"] for lv in levels], log)
    marks = []
    peak, knee = analysis.get("peak") or {}, analysis.get("knee") or {}
    if peak.get("load") is not None:
        marks.append(Mark(peak["load"], f"peak {fmt.rate(peak.get('throughput'))}/s", GREEN))
    if knee.get("load") is not None:
        marks.append(Mark(knee["load"], f"knee {fmt.rate(knee.get('throughput'))}/s", RED))
    series = [
        Series("throughput/s", column("responses_per_s"), unit="/s"),
        Series("goodput/s", column("successes_per_s"), unit="/s"),
    ]
    if usl is not None and _usl(usl, 1.0) is not None:
        curve = tuple(_usl(usl, n) for n in x)
        series.append(Series(f"USL fit (R² {fmt.general(usl.get('r_squared'))})", curve, "dash", "y", "/s", "#9467bd"))

    def against_load(chart_id: str, title: str, y_label: str, drawn: tuple[Series, ...]) -> Chart:
        return Chart(
            chart_id, title, tuple(x), x_axis, Axis(y_label, zero=True), drawn, marks=tuple(marks), zones=zones
        )

    throughput = against_load(
        "sweep-throughput",
        "Throughput against load (zones shaded, peak and knee marked, USL curve)",
        "per second",
        tuple(series),
    )
    latency = against_load(
        "sweep-latency",
        "Latency against load (zones shaded)",
        "latency ms",
        tuple(Series(k.removesuffix("_ms"), column(k), unit=" ms") for k in ("p50_ms", "p95_ms", "p99_ms")),
    )
    return [throughput, latency]


def slo_limits(analysis: Mapping[str, Any]) -> tuple[Limit, ...]:
    """slo_limits are the SLO's latency limits of every response (``p(99) < 1s``), drawn as lines
    on the capacity search's latency chart."""
    limits = []
    for condition in (analysis.get("slo") or {}).get("conditions") or []:
        try:
            parsed = parse_threshold(str(condition.get("expr") or ""))
        except ThresholdError:
            continue
        if parsed.is_latency() and parsed.metric == "latency":
            label = f"SLO {parsed.expr}"
            limits.append(Limit(parsed.limit, label, RED, label))
    return tuple(limits)


def capacity_charts(document: Mapping[str, Any]) -> list[Chart]:
    """capacity_charts: the search path, step by step (``capacity-path``): the offered rate
    (green a pass, red a fail), the achieved rate, and the rate found; and the latency per step
    with the SLO's latency limits as lines (``capacity-latency``)."""
    analysis = document.get("analysis") or {}
    steps = analysis.get("steps") or []
    if not steps:
        return []
    x = tuple(s["number"] for s in steps)
    series = [
        Series(
            "offered/s (pass)", tuple(s["rate"] if s["passed"] else None for s in steps), "points", "y", "/s", GREEN
        ),
        Series("offered/s (fail)", tuple(None if s["passed"] else s["rate"] for s in steps), "points", "y", "/s", RED),
        Series("achieved/s", tuple(s.get("achieved_per_s") for s in steps), unit="/s", colour=BLUE),
    ]
    if analysis.get("rate") is not None:
        series.append(Series("capacity found", (analysis["rate"],) * len(steps), "dash", "y", "/s", GREY))
    step = Axis("step")
    path = Chart(
        "capacity-path",
        "Search path: rate per step (pass or fail)",
        x,
        step,
        Axis("per second", zero=True),
        tuple(series),
    )
    latency = Chart(
        "capacity-latency",
        "Latency per step (the SLO's latency limits as lines)",
        x,
        step,
        Axis("latency ms", zero=True),
        tuple(
            Series(k.removesuffix("_ms"), tuple(s.get(k) for s in steps), unit=" ms")
            for k in ("p50_ms", "p95_ms", "p99_ms")
        ),
        limits=slo_limits(analysis),
    )
    return [path, latency]


def compare_charts(document: Mapping[str, Any]) -> list[Chart]:
    """compare_charts: one chart per figure (id ``compare-NAME``), the variants side by side:
    each run's value, each variant's mean and its CI (whiskers)."""
    analysis = document.get("analysis") or {}
    variants = list(analysis.get("variants") or [])
    estimates = analysis.get("estimates") or {}
    runs = document.get("runs") or []
    charts = []
    for figure in analysis.get("figures") or []:
        sides = [(estimates.get(v) or {}).get(figure) or {} for v in variants]
        if not any(s.get("mean") is not None for s in sides):
            continue
        width = max((sum(1 for r in runs if r.get("variant") == v) for v in variants), default=1)
        # each run's value sits beside its variant's mean: x = variant index ± a small offset
        run_values: dict[float, float | None] = {}
        for k, v in enumerate(variants):
            values = [(r.get("figures") or {}).get(figure) for r in runs if r.get("variant") == v]
            for j, value in enumerate(values):
                run_values[k + 0.25 * (j + 1) / (width + 1)] = value
        offsets = [k + 0.25 * (j + 1) / (width + 1) for k in range(len(variants)) for j in range(width)]
        x = sorted(set(range(len(variants))) | set(offsets))
        at_mean = {float(k): k for k in range(len(variants))}

        def by_variant(
            key: str, sides: list[dict[str, Any]] = sides, at_mean: dict[float, int] = at_mean, x: list[float] = x
        ) -> tuple[float | None, ...]:
            return tuple(sides[at_mean[p]].get(key) if p in at_mean else None for p in x)

        charts.append(
            Chart(
                f"compare-{figure}",
                f"{_title(figure)}: variants' means with {analysis.get('confidence', 0.95):.0%} CI, and each run",
                tuple(x),
                Axis("variant", categories=tuple(variants)),
                Axis(_title(figure), zero=figure.endswith("_per_s")),
                (
                    Series("mean", by_variant("mean"), "points"),
                    Series("CI low", by_variant("ci_low"), "points", colour=GREY),
                    Series("CI high", by_variant("ci_high"), "points", colour=GREY),
                    Series("run", tuple(run_values.get(p) for p in x), "points", colour="#ff7f0e"),
                ),
                whiskers=((1, 2),),
            )
        )
    return charts


CHARTS: dict[str, Callable[[Mapping[str, Any]], list[Chart]]] = {
    "repeat": over_runs_charts,
    "stats": over_runs_charts,
    "sweep": sweep_charts,
    "capacity": capacity_charts,
    "compare": compare_charts,
}
"""CHARTS maps an experiment kind to the function describing its charts."""


def experiment_charts(document: Mapping[str, Any]) -> list[Chart]:
    """experiment_charts are the charts of ``document``'s kind, [] for a kind without charts or
    a document without an analysis (an experiment stopped early)."""
    kind = str(document.get("kind", ""))
    return CHARTS[kind](document) if kind in CHARTS and document.get("analysis") else []
