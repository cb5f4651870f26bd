"""Charts of report.md as SVG files (``charts/*.svg`` beside it), drawn with matplotlib's Agg
backend, imported only when a chart is drawn. Each ``*_chart`` function draws from the record
alone and returns the file's path relative to the report, or None when the record has nothing
to draw (no intervals, no histogram). SVGs are written reproducibly (no date, a fixed id salt),
so the same record gives the same files."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from surge.history import StoredRun
from surge.present.spectrum import latency_spectrum, nines, spectrum_x
from surge.present.timeline import Rule, Timeline, load_profiles, threshold_rules, timeline

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

CHARTS_DIR = "charts"
"""CHARTS_DIR is the folder beside report.md that holds its charts."""

ZONE_COLOURS = {"optimal": "#d9f2d9", "stress": "#fff0c2", "degraded": "#fbd9c4", "broken": "#f8d0d0"}
"""ZONE_COLOURS shade a sweep's zones (docs/analysis.md, "Zones"); the chart's legend takes its
patches from here, so the two cannot disagree."""

RULE_COLOURS = {True: "#2ca02c", False: "#d62728"}
"""RULE_COLOURS: a threshold's line is green when it passed, red when it failed."""

PERCENTILE_COLUMNS = ("p50_ms", "p95_ms", "p99_ms")
"""PERCENTILE_COLUMNS are the latency percentiles drawn over time."""


def _figure() -> tuple[Figure, Axes]:
    import matplotlib

    matplotlib.use("Agg", force=True)
    matplotlib.rcParams["svg.hashsalt"] = "surge"  # element ids the same from one render to the next
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as text: small files, searchable
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 4))
    return figure, figure.add_subplot()


def _save(figure: Figure, directory: Path, name: str) -> str:
    (directory / CHARTS_DIR).mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(directory / CHARTS_DIR / name, format="svg", metadata={"Date": None})
    return f"{CHARTS_DIR}/{name}"


def _floats(rows: Sequence[Mapping[str, str]], column: str) -> list[float]:
    """_floats is a timeseries.csv column as numbers, NaN (a gap in the line) where empty."""
    return [float(r[column]) if r.get(column) not in (None, "") else math.nan for r in rows]


def _labelled(axes: Axes, x: str, y: str, title: str) -> str:
    """_labelled names the axes, starts y at 0, adds the legend and returns the title."""
    axes.set_xlabel(x)
    axes.set_ylabel(y)
    axes.set_ylim(bottom=0)
    axes.legend()
    return title


def _drawn(draw: Callable[[Axes], str], directory: Path, name: str) -> str:
    figure, axes = _figure()
    axes.set_title(draw(axes))
    axes.grid(True, alpha=0.3)
    return _save(figure, directory, name)


def _rules(axes: Axes, rules: list[Rule], chart: str) -> None:
    """_rules draws each threshold bounding ``chart`` as a dashed horizontal line, labelled."""
    for rule in rules:
        if rule.chart == chart:
            axes.axhline(
                rule.value,
                linestyle="--",
                linewidth=1.2,
                color=RULE_COLOURS[rule.passed],
                label=f"threshold {rule.label}",
            )


def _time_axes(line: Timeline, axes: Axes, title: str) -> str:
    """_time_axes labels a time chart's x axis and says in its title when an interval is left out."""
    axes.set_xlim(left=0)
    return title + (" (partial last interval left out)" if line.partial else "")


def throughput_chart(run: StoredRun, directory: Path) -> str | None:
    """throughput_chart draws responses/s and successes/s per interval (timeseries.csv's
    ``all`` rows) as steps over each interval from a y axis at 0, the offered rate in the open
    model and each scenario's VUs on the right axis, and ``rate`` thresholds as lines; a
    partial last interval is left out: ``charts/throughput.svg``."""
    line = timeline(run)
    if line is None:
        return None
    rules = threshold_rules(run.summary)

    def draw(axes: Axes) -> str:
        times = [0.0, *line.ends]

        def steps(values: list[float | None]) -> list[float]:
            drawn = [math.nan if v is None else v for v in values]
            return [drawn[0] if drawn else math.nan, *drawn]

        axes.plot(times, steps(line.column("responses_per_s")), drawstyle="steps-pre", label="responses/s")
        axes.plot(times, steps(line.per_second("successes")), drawstyle="steps-pre", label="successes/s")
        _rules(axes, rules, "throughput")
        label, profiles = load_profiles(line)
        handles, labels = axes.get_legend_handles_labels()
        if profiles:
            load = axes.twinx()
            for i, (name, values) in enumerate(profiles):
                load.plot(
                    line.ends,
                    [math.nan if v is None else v for v in values],
                    linestyle=":",
                    marker=".",
                    color=f"C{(i + 4) % 10}",
                    label=name,
                )
            load.set_ylabel(label)
            load.set_ylim(bottom=0)
            more_handles, more_labels = load.get_legend_handles_labels()
            handles, labels = handles + more_handles, labels + more_labels
        axes.set_xlabel("time since start (s)")
        axes.set_ylabel("per second")
        axes.set_ylim(bottom=0)
        axes.legend(handles, labels, loc="lower left", fontsize="small")
        return _time_axes(line, axes, "Throughput per interval")

    return _drawn(draw, directory, "throughput.svg")


def latency_chart(run: StoredRun, directory: Path) -> str | None:
    """latency_chart draws p50, p95 and p99 of every response per interval, with each latency
    threshold of every response as a line (a partial last interval left out): ``charts/latency.svg``."""
    line = timeline(run)
    if line is None:
        return None
    rules = threshold_rules(run.summary)

    def draw(axes: Axes) -> str:
        for column in PERCENTILE_COLUMNS:
            axes.plot(
                line.ends,
                [math.nan if v is None else v for v in line.column(column)],
                marker=".",
                label=column.removesuffix("_ms"),
            )
        _rules(axes, rules, "latency")
        title = _time_axes(line, axes, "Latency percentiles per interval")
        return _labelled(axes, "time since start (s)", "latency (ms)", title)

    return _drawn(draw, directory, "latency.svg")


def spectrum_chart(run: StoredRun, directory: Path) -> str | None:
    """spectrum_chart draws the latency percentile spectrum (surge.present.spectrum):
    ``charts/spectrum.svg``."""
    points = latency_spectrum(run.summary)
    if not points:
        return None

    def draw(axes: Axes) -> str:
        xs = [spectrum_x(p) for p, _ in points]
        axes.plot(xs, [v for _, v in points], marker="o", drawstyle="steps-post")
        axes.set_xscale("log")
        ticks: list[float] = [x for x in (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000) if x <= max(xs)]
        labels = [nines(x) if x > 1 else "0%" for x in ticks]
        if max(xs) > ticks[-1]:
            ticks, labels = [*ticks, max(xs)], [*labels, "max"]
        axes.set_xticks(ticks, labels)
        axes.set_xlabel("percentile")
        axes.set_ylabel("latency (ms)")
        return "Latency by percentile (every response)"

    return _drawn(draw, directory, "spectrum.svg")


def sweep_chart(analysis: Mapping[str, Any], directory: Path) -> str | None:
    """sweep_chart draws a sweep's throughput and p95 against load, each level's zone shaded,
    peak and knee marked, and the USL curve when it was fitted: ``charts/sweep.svg``."""
    levels = [lv for lv in analysis.get("levels") or [] if lv.get("responses_per_s") is not None]
    if not levels:
        return None
    closed = analysis.get("model") == "closed"

    def draw(axes: Axes) -> str:
        from matplotlib.patches import Patch
        from matplotlib.ticker import FixedLocator, NullLocator

        loads = [float(lv["load"]) for lv in levels]
        log = len(loads) > 1 and min(loads) > 0 and max(loads) / min(loads) >= 8
        if log:
            axes.set_xscale("log")
        position = [math.log(v) if log else v for v in loads]

        def back(p: float) -> float:
            return math.exp(p) if log else p

        half = [(b - a) / 2 for a, b in zip(position, position[1:])] or [0.1 * abs(position[0]) or 0.5]
        for i, lv in enumerate(levels):
            low = back(position[i] - (half[i - 1] if i else half[0]))
            high = back(position[i] + (half[i] if i < len(half) else half[-1]))
            axes.axvspan(low, high, color=ZONE_COLOURS.get(str(lv.get("zone")), "#eeeeee"), lw=0)
        axes.plot(loads, [lv["responses_per_s"] for lv in levels], marker="o", color="C0", label="responses/s")
        usl = analysis.get("usl") or {}
        if "sigma" in usl:
            from surge.analysis.usl import usl_throughput

            grid = [loads[0] + (loads[-1] - loads[0]) * k / 100 for k in range(101)]
            axes.plot(
                grid,
                [usl_throughput(n, usl["sigma"], usl["kappa"], usl["lambda"]) for n in grid],
                linestyle="--",
                color="C2",
                label="USL fit",
            )
        for key, marker in (("peak", "*"), ("knee", "D")):
            point = analysis.get(key)
            if point and point.get("load") is not None:
                axes.plot(
                    [point["load"]],
                    [point["throughput"]],
                    marker=marker,
                    markersize=12,
                    linestyle="",
                    color="C3" if key == "peak" else "C4",
                    label=key,
                )
        axes.set_xlabel("VUs" if closed else "arrival rate (/s)")
        axes.xaxis.set_major_locator(FixedLocator(loads))
        axes.xaxis.set_minor_locator(NullLocator())
        axes.set_xticks(loads, [f"{v:,g}" for v in loads])
        axes.set_ylabel("responses/s")
        axes.set_ylim(bottom=0)
        p95 = axes.twinx()
        p95.plot(loads, [lv.get("p95_ms") for lv in levels], marker="s", color="C1", label="p95 ms")
        p95.set_ylabel("p95 latency (ms)")
        p95.set_ylim(bottom=0)
        handles, labels = axes.get_legend_handles_labels()
        more_handles, more_labels = p95.get_legend_handles_labels()
        zones = [z for z in ZONE_COLOURS if any(lv.get("zone") == z for lv in levels)]
        patches: list[Any] = [Patch(facecolor=ZONE_COLOURS[z], label=f"zone {z}") for z in zones]
        axes.legend(
            [*handles, *more_handles, *patches],
            [*labels, *more_labels, *(f"zone {z}" for z in zones)],
            loc="upper left",
            fontsize="small",
        )
        return "Throughput and p95 against load (zones shaded)"

    return _drawn(draw, directory, "sweep.svg")


def capacity_chart(analysis: Mapping[str, Any], directory: Path) -> str | None:
    """capacity_chart draws a capacity search's path: each step's offered rate by step number,
    passed or failed, and the rate found: ``charts/capacity.svg``."""
    steps = analysis.get("steps") or []
    if not steps:
        return None

    def draw(axes: Axes) -> str:
        numbers = [s["number"] for s in steps]
        axes.plot(numbers, [s["rate"] for s in steps], color="grey", linewidth=1)
        for passed, colour, label in ((True, "C2", "passed"), (False, "C3", "failed")):
            chosen = [s for s in steps if bool(s.get("passed")) is passed]
            if chosen:
                axes.plot(
                    [s["number"] for s in chosen],
                    [s["rate"] for s in chosen],
                    marker="o",
                    linestyle="",
                    color=colour,
                    label=label,
                )
        if analysis.get("rate") is not None:
            axes.axhline(analysis["rate"], linestyle="--", color="C0", label="rate found")
        return _labelled(axes, "step", "offered rate (/s)", "Capacity search path")

    return _drawn(draw, directory, "capacity.svg")


def estimates_chart(
    estimates: Mapping[str, Mapping[str, Any]], figure: str, directory: Path, name: str, title: str
) -> str | None:
    """estimates_chart draws one figure's mean with its CI bar per group (a compare's variants,
    a repeat's single group): ``charts/NAME``."""
    groups = [(g, e[figure]) for g, e in estimates.items() if (e.get(figure) or {}).get("mean") is not None]
    if not groups:
        return None

    def draw(axes: Axes) -> str:
        xs = list(range(len(groups)))
        means = [float(e["mean"]) for _, e in groups]
        low = [m - float(e["ci_low"]) if e.get("ci_low") is not None else 0.0 for m, (_, e) in zip(means, groups)]
        high = [float(e["ci_high"]) - m if e.get("ci_high") is not None else 0.0 for m, (_, e) in zip(means, groups)]
        axes.bar(xs, means, color="C0", alpha=0.6)
        axes.errorbar(xs, means, yerr=[low, high], fmt="none", ecolor="black", capsize=6)
        axes.set_xticks(xs, [g for g, _ in groups])
        axes.set_ylabel(figure)
        return title

    return _drawn(draw, directory, name)
