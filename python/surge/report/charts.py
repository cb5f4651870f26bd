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
from surge.report.spectrum import latency_spectrum, nines, spectrum_x

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

CHARTS_DIR = "charts"
"""CHARTS_DIR is the folder beside report.md that holds its charts."""

ZONE_COLOURS = {"optimal": "#d9f2d9", "stress": "#fff0c2", "broken": "#f8d0d0"}
"""ZONE_COLOURS shade a sweep's zones (docs/analysis.md, "Zones")."""

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


def throughput_chart(run: StoredRun, directory: Path) -> str | None:
    """throughput_chart draws responses/s and successes/s per interval (timeseries.csv's
    ``all`` rows) with the offered rate in the open model: ``charts/throughput.svg``."""
    rows = run.interval_rows()
    if not rows:
        return None

    def draw(axes: Axes) -> str:
        times = _floats(rows, "time_s")
        # an interval's length is the time since the previous one's end (the last may be short)
        lengths = [end - start for start, end in zip([0.0, *times], times)]
        axes.plot(times, _floats(rows, "responses_per_s"), marker="o", label="responses/s")
        axes.plot(times, [n / d if d > 0 else math.nan for n, d in zip(_floats(rows, "successes"), lengths)],
                  marker=".", label="successes/s")
        offered = _floats(rows, "offered_rate_per_s")
        if not all(math.isnan(v) for v in offered):
            axes.plot(times, offered, linestyle="--", label="offered rate/s")
        return _labelled(axes, "time since start (s)", "per second", "Throughput per interval")

    return _drawn(draw, directory, "throughput.svg")


def latency_chart(run: StoredRun, directory: Path) -> str | None:
    """latency_chart draws p50, p95 and p99 of every response per interval: ``charts/latency.svg``."""
    rows = run.interval_rows()
    if not rows:
        return None

    def draw(axes: Axes) -> str:
        times = _floats(rows, "time_s")
        for column in PERCENTILE_COLUMNS:
            axes.plot(times, _floats(rows, column), marker=".", label=column.removesuffix("_ms"))
        return _labelled(axes, "time since start (s)", "latency (ms)", "Latency percentiles per interval")

    return _drawn(draw, directory, "latency.svg")


def spectrum_chart(run: StoredRun, directory: Path) -> str | None:
    """spectrum_chart draws the latency percentile spectrum (surge.report.spectrum):
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
        loads = [float(lv["load"]) for lv in levels]
        for i, lv in enumerate(levels):
            low = (loads[i - 1] + loads[i]) / 2 if i else loads[i] * 0.9
            high = (loads[i] + loads[i + 1]) / 2 if i + 1 < len(loads) else loads[i] * 1.1
            axes.axvspan(low, high, color=ZONE_COLOURS.get(str(lv.get("zone")), "#eeeeee"), alpha=0.8, lw=0)
        axes.plot(loads, [lv["responses_per_s"] for lv in levels], marker="o", color="C0", label="responses/s")
        usl = analysis.get("usl") or {}
        if "sigma" in usl:
            from surge.analysis.usl import usl_throughput

            grid = [loads[0] + (loads[-1] - loads[0]) * k / 100 for k in range(101)]
            axes.plot(grid, [usl_throughput(n, usl["sigma"], usl["kappa"], usl["lambda"]) for n in grid],
                      linestyle="--", color="C2", label="USL fit")
        for key, marker in (("peak", "*"), ("knee", "D")):
            point = analysis.get(key)
            if point and point.get("load") is not None:
                axes.plot([point["load"]], [point["throughput"]], marker=marker, markersize=12, linestyle="",
                          color="C3" if key == "peak" else "C4", label=key)
        axes.set_xlabel("VUs" if closed else "arrival rate (/s)")
        axes.set_ylabel("responses/s")
        axes.set_ylim(bottom=0)
        p95 = axes.twinx()
        p95.plot(loads, [lv.get("p95_ms") for lv in levels], marker="s", color="C1", label="p95 ms")
        p95.set_ylabel("p95 latency (ms)")
        p95.set_ylim(bottom=0)
        handles, labels = axes.get_legend_handles_labels()
        more_handles, more_labels = p95.get_legend_handles_labels()
        axes.legend(handles + more_handles, labels + more_labels, loc="upper left")
        return "Throughput and p95 against load (zones shaded: green optimal, yellow stress, red broken)"

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
                axes.plot([s["number"] for s in chosen], [s["rate"] for s in chosen], marker="o", linestyle="",
                          color=colour, label=label)
        if analysis.get("rate") is not None:
            axes.axhline(analysis["rate"], linestyle="--", color="C0", label="rate found")
        return _labelled(axes, "step", "offered rate (/s)", "Capacity search path")

    return _drawn(draw, directory, "capacity.svg")


def estimates_chart(estimates: Mapping[str, Mapping[str, Any]], figure: str, directory: Path, name: str,
                    title: str) -> str | None:
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
