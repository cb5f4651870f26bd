"""svg: a chart description (surge.present.charts) as a static SVG document, report.md's charts
(``charts/*.svg`` beside it). Written by hand, no plotting library: the axes (linear, log or
categories) with ticks and labels, the series as lines, steps, points or bars, the limits,
marks, zones, bands and whiskers, a title and a legend. Deterministic: the same description
gives the same bytes (no date, no random id). The root carries the chart's data as attributes
(``data-x``, ``data-xlabel``, ``data-ylabel``, ``data-y2label``) and each series' group its own
(``data-label``, ``data-style``, ``data-axis``, ``data-values``), so a reader (the tests) can
check it against report.html's spec of the same description."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from surge.present.charts import BAND_COLOUR, ZONE_COLOURS, Axis, Chart, Series

WIDTH = 800
"""WIDTH is every chart's width in pixels."""

PLOT_TOP, PLOT_HEIGHT, LEFT = 40, 300, 80
"""The plot area: its top, its height and the left margin (the y axis's ticks and label)."""

LEGEND_ROW = 18
"""LEGEND_ROW is the height of a row of the legend, under the x axis."""

CHAR_WIDTH = 6.6
"""CHAR_WIDTH is the width assumed for a character of 12 px sans-serif (the legend's layout)."""


def escape(text: str) -> str:
    """escape is ``text`` fit for an SVG text node: ``&``, ``<`` and ``>`` escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(value: object) -> str:
    return escape(str(value)).replace('"', "&quot;")


def _json(values: Sequence[float | None] | Sequence[str]) -> str:
    return _attr(json.dumps(list(values), separators=(",", ":"), allow_nan=False))


def _n(v: float) -> str:
    return f"{v:.1f}"


def _nice_step(span: float, count: int = 5) -> float:
    """_nice_step is the round step (1, 2 or 5 times a power of ten) giving about ``count`` ticks."""
    raw = span / count if span > 0 else 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-9))


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-9))


def _number(v: float, decimals: int = 0) -> str:
    return f"{v:,.{decimals}f}"


@dataclass(frozen=True)
class _Scale:
    """_Scale maps values from [low, high] (on a log scale of ``log`` when set) to pixels."""

    low: float
    high: float
    start: float
    end: float
    log: int | None = None

    def _f(self, v: float) -> float:
        return math.log(v, self.log) if self.log else v

    def __call__(self, v: float) -> float:
        share = (self._f(v) - self._f(self.low)) / (self._f(self.high) - self._f(self.low))
        return self.start + share * (self.end - self.start)

    def holds(self, v: float) -> bool:
        return (not self.log or v > 0) and min(self.low, self.high) - 1e-9 <= v <= max(self.low, self.high) + 1e-9


def _ticks(axis: Axis, low: float, high: float) -> list[tuple[float, str]]:
    """_ticks are an axis's (value, label) ticks between low and high: its categories, its fixed
    ticks, powers of its log base, or round steps."""
    if axis.categories is not None:
        return [(float(i), name) for i, name in enumerate(axis.categories)]
    if axis.ticks is not None:
        return [(v, f"{v:,g}") for v in axis.ticks if low <= v <= high]
    if axis.log:
        first, last = math.ceil(math.log(low, axis.log) - 1e-9), math.floor(math.log(high, axis.log) + 1e-9)
        every = max(1, math.ceil((last - first + 1) / 10))
        powers = [float(axis.log**k) for k in range(first, last + 1, every)]
        return [(v, f"{v:,.0f}" if v >= 1 else f"{v:g}") for v in powers]
    step = _nice_step(high - low)
    first = math.ceil(low / step - 1e-9)
    values = [k * step for k in range(first, math.floor(high / step + 1e-9) + 1)]
    return [(v, _number(v, _decimals(step))) for v in values]


def _x_range(chart: Chart) -> tuple[float, float]:
    axis = chart.x_axis
    if axis.categories is not None:
        return -0.6, len(axis.categories) - 0.4
    xs = [v for v in chart.x if math.isfinite(v) and (not axis.log or v > 0)] or [0.0, 1.0]
    low, high = min(xs), max(xs)
    if low == high:
        return (low / 2, high * 2) if axis.log else (low - 0.5, high + 0.5)
    return low, high


def _y_range(chart: Chart, axis: Axis, name: str) -> tuple[float, float]:
    """_y_range is an axis's range as report.js draws it: from 0 to 8 % above the highest value
    (and limit) when it starts at 0, else the values' span with a margin."""
    values = [float(v) for s in chart.series if s.axis == name for v in s.values if v is not None]
    if axis.zero:
        top = max([*values, *(lim.value for lim in chart.limits or () if name == "y")], default=0.0)
        return 0.0, (top if top > 0 else 1.0) * 1.08
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    margin = (high - low) * 0.05 if high > low else abs(low) * 0.1 or 1.0
    return low - margin, high + margin


def _marker(x: float, y: float, r: float) -> str:
    return f"M{_n(x - r)},{_n(y)}a{r},{r} 0 1,0 {2 * r},0a{r},{r} 0 1,0 {-2 * r},0Z"


class _Drawing:
    """_Drawing collects one chart's SVG elements."""

    def __init__(self, chart: Chart) -> None:
        self.chart = chart
        self.right = WIDTH - (80 if chart.y2_axis is not None else 24)
        self.bottom = PLOT_TOP + PLOT_HEIGHT
        self.x = _Scale(*_x_range(chart), LEFT, self.right, chart.x_axis.log)
        self.y = _Scale(*_y_range(chart, chart.y_axis, "y"), self.bottom, PLOT_TOP)
        self.y2 = (
            _Scale(*_y_range(chart, chart.y2_axis, "y2"), self.bottom, PLOT_TOP) if chart.y2_axis is not None else None
        )
        self.parts: list[str] = []

    def add(self, text: str) -> None:
        self.parts.append(text)

    def path(self, d: str, stroke: str = "none", width: float = 1.0, extra: str = "") -> None:
        self.add(f'<path d="{d}" fill="none" stroke="{stroke}" stroke-width="{width}"{extra}/>')

    def text(self, x: float, y: float, words: str, extra: str = "") -> None:
        self.add(f'<text x="{_n(x)}" y="{_n(y)}"{extra}>{escape(words)}</text>')

    def axes(self) -> None:
        chart, right, bottom = self.chart, self.right, self.bottom
        for value, label in _ticks(chart.x_axis, min(self.x.low, self.x.high), max(self.x.low, self.x.high)):
            px = self.x(value)
            self.add(f'<g class="xtick" data-value="{_attr(value)}">')
            self.path(f"M{_n(px)},{PLOT_TOP}V{bottom}", "#e6e6e6")
            self.path(f"M{_n(px)},{bottom}v5", "#333")
            self.text(px, bottom + 18, label, ' text-anchor="middle"')
            self.add("</g>")
        for value, label in _ticks(chart.y_axis, self.y.low, self.y.high):
            py = self.y(value)
            self.add(f'<g class="ytick" data-value="{_attr(value)}">')
            self.path(f"M{LEFT},{_n(py)}H{right}", "#e6e6e6")
            self.path(f"M{LEFT},{_n(py)}h-5", "#333")
            self.text(LEFT - 8, py + 4, label, ' text-anchor="end"')
            self.add("</g>")
        if chart.y2_axis is not None and self.y2 is not None:
            for value, label in _ticks(chart.y2_axis, self.y2.low, self.y2.high):
                py = self.y2(value)
                self.path(f"M{right},{_n(py)}h5", "#333")
                self.text(right + 8, py + 4, label)
            self.text(WIDTH - 12, PLOT_TOP + PLOT_HEIGHT / 2, chart.y2_axis.label, _rotated(WIDTH - 12, bottom))
            self.path(f"M{right},{PLOT_TOP}V{bottom}", "#333")
        self.path(f"M{LEFT},{PLOT_TOP}V{bottom}H{right}", "#333")
        self.text((LEFT + right) / 2, bottom + 38, chart.x_axis.label, ' text-anchor="middle"')
        self.text(18, PLOT_TOP + PLOT_HEIGHT / 2, chart.y_axis.label, _rotated(18, bottom))
        self.text(WIDTH / 2, 24, chart.title, ' text-anchor="middle" font-size="14" font-weight="bold"')

    def zones(self) -> None:
        for zone in self.chart.zones:
            low, high = sorted((self.x(zone.start), self.x(zone.end)))
            fill = ZONE_COLOURS.get(zone.zone, "rgba(0,0,0,0.05)")
            self.add(
                f'<rect class="zone" data-zone="{_attr(zone.zone)}" x="{_n(low)}" y="{PLOT_TOP}" '
                f'width="{_n(high - low)}" height="{PLOT_HEIGHT}" style="fill: {fill}"/>'
            )

    def points(self, series: Series) -> list[tuple[float, float]]:
        scale = self.y2 if series.axis == "y2" and self.y2 is not None else self.y
        return [
            (self.x(x), scale(float(v)))
            for x, v in zip(self.chart.x, series.values, strict=False)
            if v is not None and self.x.holds(x) and math.isfinite(v)
        ]

    def band(self) -> None:
        if self.chart.band is None:
            return
        upper, lower = (self.points(self.chart.series[i]) for i in self.chart.band)
        if upper and lower:
            outline = "L".join(f"{_n(x)},{_n(y)}" for x, y in [*upper, *reversed(lower)])
            self.add(f'<path class="band" d="M{outline}Z" style="fill: {BAND_COLOUR}"/>')

    def series(self) -> None:
        for i, series in enumerate(self.chart.series):
            colour, drawn = self.chart.colour(i), self.points(series)
            self.add(
                f'<g class="series" data-label="{_attr(series.label)}" data-style="{series.style}" '
                f'data-axis="{series.axis}" data-values="{_json(series.values)}">'
            )
            if drawn and series.style in ("line", "dash", "interval", "step"):
                dash = ' stroke-dasharray="8,5"' if series.style == "dash" else ""
                self.path(_line(drawn, series.style), colour, 1.5 if series.style == "dash" else 2.0, dash)
            if series.style == "bars":
                half = min(40.0, 0.3 * abs(self.x(1.0) - self.x(0.0)))
                base = self.y(max(self.y.low, 0.0))
                for x, y in drawn:
                    self.add(
                        f'<path d="M{_n(x - half)},{_n(base)}V{_n(y)}H{_n(x + half)}V{_n(base)}Z" fill="{colour}"/>'
                    )
            elif series.style == "points" or (series.style in ("line", "step") and len(drawn) <= 60):
                radius = 4.5 if series.style == "points" else 2.5
                for x, y in drawn:
                    self.add(f'<path d="{_marker(x, y, radius)}" fill="{colour}"/>')
            self.add("</g>")

    def whiskers(self) -> None:
        for low, high in self.chart.whiskers:
            lows, highs = self.chart.series[low].values, self.chart.series[high].values
            for x, a, b in zip(self.chart.x, lows, highs, strict=False):
                if a is None or b is None or not self.x.holds(x):
                    continue
                px, y0, y1 = self.x(x), self.y(float(a)), self.y(float(b))
                self.path(f"M{_n(px)},{_n(y0)}V{_n(y1)}M{_n(px - 6)},{_n(y0)}h12M{_n(px - 6)},{_n(y1)}h12", "#444", 2)

    def limits(self) -> None:
        for limit in self.chart.limits or ():
            if not self.y.holds(limit.value):
                continue
            py = self.y(limit.value)
            self.add(f'<g class="limit" data-value="{_attr(limit.value)}">')
            self.path(f"M{LEFT},{_n(py)}H{self.right}", limit.colour, 1.5, ' stroke-dasharray="10,5"')
            self.text(LEFT + 6, py - 4, limit.label, f' fill="{limit.colour}"')
            self.add("</g>")

    def marks(self) -> None:
        for mark in self.chart.marks:
            if not self.x.holds(mark.x):
                continue
            px = self.x(mark.x)
            self.path(f"M{_n(px)},{PLOT_TOP}V{self.bottom}", mark.colour, 1, ' stroke-dasharray="6,4"')
            self.text(px + 4, PLOT_TOP + 14, mark.label, f' fill="{mark.colour}"')

    def legend(self) -> float:
        """legend draws a legend entry per series, limit and zone shaded, under the x axis, and
        returns the document's height."""
        entries: list[tuple[str, Callable[[float, float], str]]] = []
        for i, series in enumerate(self.chart.series):
            entries.append((series.label, _sample(series, self.chart.colour(i))))
        for limit in self.chart.limits or ():
            entries.append((limit.legend, _sample(Series("", (), "dash"), limit.colour)))
        shown = {z.zone for z in self.chart.zones}
        for zone, fill in ZONE_COLOURS.items():
            if zone in shown:
                entries.append((f"zone {zone}", _patch(fill)))
        x, y = float(LEFT), self.bottom + 62.0
        for label, sample in entries:
            width = 30 + CHAR_WIDTH * len(label) + 14
            if x + width > WIDTH and x > LEFT:
                x, y = float(LEFT), y + LEGEND_ROW
            self.add(f'<g class="legend">{sample(x, y)}')
            self.text(x + 28, y + 4, label)
            self.add("</g>")
            x += width
        return y + LEGEND_ROW


def _rotated(x: float, bottom: float) -> str:
    return f' text-anchor="middle" transform="rotate(-90 {_n(x)} {_n(PLOT_TOP + (bottom - PLOT_TOP) / 2)})"'


def _sample(series: Series, colour: str) -> Callable[[float, float], str]:
    def draw(x: float, y: float) -> str:
        if series.style == "points":
            return f'<path d="{_marker(x + 11, y, 4.5)}" fill="{colour}"/>'
        if series.style == "bars":
            return f'<path d="M{_n(x)},{_n(y - 5)}h22v10h-22Z" fill="{colour}"/>'
        dash = ' stroke-dasharray="8,5"' if series.style == "dash" else ""
        return f'<path d="M{_n(x)},{_n(y)}h22" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'

    return draw


def _patch(fill: str) -> Callable[[float, float], str]:
    def draw(x: float, y: float) -> str:
        return f'<rect x="{_n(x)}" y="{_n(y - 6)}" width="22" height="12" style="fill: {fill}"/>'

    return draw


def _line(points: list[tuple[float, float]], style: str) -> str:
    """_line is the path through ``points``: straight, a step back over each interval (the value
    from the previous x to its own) or a step forward (held up to the next x)."""
    (x0, y0), rest = points[0], points[1:]
    d = [f"M{_n(x0)},{_n(y0)}"]
    previous = (x0, y0)
    for x, y in rest:
        if style == "interval":
            d.append(f"L{_n(previous[0])},{_n(y)}L{_n(x)},{_n(y)}")
        elif style == "step":
            d.append(f"L{_n(x)},{_n(previous[1])}L{_n(x)},{_n(y)}")
        else:
            d.append(f"L{_n(x)},{_n(y)}")
        previous = (x, y)
    return "".join(d)


def svg(chart: Chart) -> str:
    """svg is ``chart`` as a standalone SVG document (UTF-8 text)."""
    drawing = _Drawing(chart)
    drawing.add(f'<defs><clipPath id="plot"><rect x="{LEFT}" y="{PLOT_TOP}" width="{drawing.right - LEFT}" ')
    drawing.add(f'height="{PLOT_HEIGHT}"/></clipPath></defs>')
    drawing.add('<g clip-path="url(#plot)">')
    drawing.zones()
    drawing.add("</g>")
    drawing.axes()  # the axes' ranges hold every value, limit and mark drawn: no clip (a point at the edge stays whole)
    drawing.band()
    drawing.series()
    drawing.whiskers()
    drawing.limits()
    drawing.marks()
    height = drawing.legend()
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{_n(height)}" '
        f'viewBox="0 0 {WIDTH} {_n(height)}" font-family="sans-serif" font-size="12" '
        f'data-chart="{_attr(chart.id)}" data-x="{_json(chart.x)}" data-xlabel="{_attr(chart.x_axis.label)}" '
        f'data-ylabel="{_attr(chart.y_axis.label)}" '
        f'data-y2label="{_attr(chart.y2_axis.label if chart.y2_axis else "")}">'
    )
    body = "\n".join(drawing.parts)
    return (
        f'<?xml version="1.0" encoding="utf-8"?>\n{head}\n<title>{escape(chart.title)}</title>\n'
        f'<rect width="100%" height="100%" fill="white"/>\n{body}\n</svg>\n'
    )


def write_svg(chart: Chart, path: Path) -> None:
    """write_svg writes ``chart``'s SVG to ``path`` (its folder created if missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg(chart), encoding="utf-8")
