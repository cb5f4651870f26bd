"""run_charts: the descriptions of a run's charts (surge.present.charts), from its timeseries.csv
rows (one per interval; surge.present.timeline says which are whole and what the load profiles
are) and its summary (status codes, the latency spectrum, the thresholds drawn as lines, the
watched target's and the generator's CPU). report.html draws them all; report.md the throughput,
latency and spectrum charts."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]

from surge.present.charts import RULE_COLOURS, Axis, Chart, Limit, Series
from surge.present.timeline import Rule, Timeline, load_profiles, threshold_rules, timeline
from surge.record.stored import StoredRun
from surge.record.timeseries import FAILURE_COLUMNS

RUN_CHART_TITLES = {
    "throughput": "Throughput over time (load profile on the right axis)",
    "latency": "Latency percentiles over time (load profile on the right axis)",
    "failures": "Failures by class and shed over time",
    "cpu": "CPU over time: the generator and the watched target",
    "spectrum": "Latency percentile spectrum (HdrHistogram percentile plot)",
    "status": "Status codes",
}
"""RUN_CHART_TITLES are the run charts' titles by id, in page order."""

LATENCY_COLUMNS = ("p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms")
"""LATENCY_COLUMNS are the per-interval latency percentiles the latency chart draws."""

PROFILE_COLOURS = ("#7f7f7f", "#8c564b", "#17becf", "#bcbd22", "#e377c2")
"""PROFILE_COLOURS draw the load profiles (one per scenario), dashed on the right axis."""

TIME = Axis("time s")
"""TIME is the time charts' x axis: seconds since the start, the first interval's start at 0."""


def _limits(rules: list[Rule], chart: str) -> tuple[Limit, ...]:
    return tuple(
        Limit(r.value, r.label, RULE_COLOURS[r.passed], f"threshold {r.label}") for r in rules if r.chart == chart
    )


def _interval(values: list[float | None]) -> tuple[float | None, ...]:
    """An interval's figure is drawn as a step over the whole interval: the x axis starts with 0
    (the first interval's start), where the first value is repeated (the renderers step back)."""
    return (values[0] if values else None, *values)


def _rate(label: str, values: list[float | None]) -> Series:
    return Series(label, _interval(values), "interval", unit="/s")


def run_charts(run: StoredRun) -> list[Chart]:
    """run_charts are the run's charts in page order, those its record has data for: the time
    charts (time_charts), the latency spectrum and the status codes."""
    line = timeline(run)
    charts = time_charts(line, threshold_rules(run.summary)) if line is not None else []
    for extra in (spectrum_chart(run.summary), status_chart(run.summary)):
        if extra is not None:
            charts.append(extra)
    return charts


def time_charts(line: Timeline, rules: list[Rule]) -> list[Chart]:
    """time_charts are the time-series charts of ``line`` (throughput, latency percentiles,
    failures and shed, and CPU when measured). Rates are steps over each interval, every axis of
    a rate or a latency starts at 0, the partial last interval is left out (``note`` says so),
    each scenario's load profile is drawn on the right axis, and each threshold of ``rules`` is
    a line on the chart it bounds."""
    x = (0.0, *line.ends)
    load_label, profiles = load_profiles(line)
    load = tuple(
        Series(label, (None, *values), "dash", "y2", colour=PROFILE_COLOURS[i % len(PROFILE_COLOURS)])
        for i, (label, values) in enumerate(profiles)
    )
    load_axis = Axis(load_label, zero=True)
    note = line.partial_note()
    per_second = Axis("per second", zero=True)
    throughput = Chart(
        "throughput",
        RUN_CHART_TITLES["throughput"],
        x,
        TIME,
        per_second,
        (
            _rate("sent/s", line.column("sent_per_s")),
            _rate("responses/s", line.column("responses_per_s")),
            _rate("successes/s", line.per_second("successes")),
            *load,
        ),
        load_axis,
        _limits(rules, "throughput"),
        note=note,
    )
    latency = Chart(
        "latency",
        RUN_CHART_TITLES["latency"],
        x,
        TIME,
        Axis("latency ms", zero=True),
        (*(Series(c.removesuffix("_ms"), (None, *line.column(c)), unit=" ms") for c in LATENCY_COLUMNS), *load),
        load_axis,
        _limits(rules, "latency"),
        note=note,
    )
    failures = [_rate("failures/s (all)", line.per_second("failures"))]
    for name in (*FAILURE_COLUMNS, "interrupted", "shed"):
        if any(v for v in line.column(name)):
            failures.append(_rate(name.removeprefix("failed_") + "/s", line.per_second(name)))
    failed = Chart("failures", RUN_CHART_TITLES["failures"], x, TIME, per_second, tuple(failures), note=note)
    charts = [throughput, latency, failed]
    cpu = [("generator CPU (cores)", line.column("cpu_cores")), ("target CPU (cores)", line.column("target_cpu_cores"))]
    drawn = tuple(
        Series(label, _interval(values), "interval", unit=" cores")
        for label, values in cpu
        if any(v is not None for v in values)
    )
    if drawn:
        charts.append(Chart("cpu", RUN_CHART_TITLES["cpu"], x, TIME, Axis("cores", zero=True), drawn, note=note))
    return charts


TICKS_PER_HALF_DISTANCE = 5
"""TICKS_PER_HALF_DISTANCE is HdrHistogram's percentile iteration step: 5 points each time the
distance to 100 % halves (the standard percentile distribution output)."""

UNITS_PER_MS = 1000.0
"""UNITS_PER_MS: the record's histograms count microseconds (docs/record.md)."""


def spectrum_points(encoded: str | None) -> list[tuple[float, float]]:
    """spectrum_points are (1/(1−p), latency ms) pairs along the histogram's percentiles, p a
    fraction; the last (p = 1, the maximum) is placed at x = the count, where 1/(1−p) would be
    infinite. Empty when there is no histogram, it cannot be decoded, or it counts nothing."""
    if not encoded:
        return []
    try:
        histogram = HdrHistogram.decode(encoded)
    except Exception:  # an import or an old record may hold no valid histogram: no spectrum
        return []
    count = histogram.get_total_count()
    if count <= 0:
        return []
    points: list[tuple[float, float]] = []
    for step in histogram.get_percentile_iterator(TICKS_PER_HALF_DISTANCE):
        p = step.percentile_level_iterated_to / 100.0
        x = float(count) if p >= 1.0 else min(1.0 / (1.0 - p), float(count))
        if points and x <= points[-1][0]:
            continue  # the log axis needs x strictly rising
        points.append((x, step.value_iterated_to / UNITS_PER_MS))
    return points


def spectrum_chart(summary: Mapping[str, Any]) -> Chart | None:
    """spectrum_chart is the latency percentile spectrum (spectrum_points) on a log x axis,
    None when the run holds no latency histogram."""
    return _spectrum_chart((summary.get("histograms") or {}).get("latency"))


@functools.lru_cache(maxsize=4)
def _spectrum_chart(encoded: str | None) -> Chart | None:
    """_spectrum_chart is spectrum_chart of one encoded histogram, kept: report.md and
    report.html draw the same chart, and walking the histogram's percentiles in pure Python is
    half of what the two reports cost (~45 ms CPU a walk). A Chart is frozen: sharing is safe."""
    points = spectrum_points(encoded)
    if not points:
        return None
    return Chart(
        "spectrum",
        RUN_CHART_TITLES["spectrum"],
        tuple(x for x, _ in points),
        Axis("percentile, as 1/(1−p): 10 = p90, 100 = p99", log=10),
        Axis("latency ms"),
        (Series("latency", tuple(y for _, y in points), "step", unit=" ms"),),
    )


def status_chart(summary: Mapping[str, Any]) -> Chart | None:
    """status_chart is a bar per HTTP status code (responses), None when the run has none."""
    codes = (summary.get("requests") or {}).get("status_codes") or {}
    if not codes:
        return None
    names = sorted(codes, key=str)
    return Chart(
        "status",
        RUN_CHART_TITLES["status"],
        tuple(range(len(names))),
        Axis("status", categories=tuple(str(n) for n in names)),
        Axis("responses", zero=True),
        (Series("responses", tuple(codes[n] for n in names), "bars"),),
    )
