"""charts: one description per chart (docs/reports.md, "Charts"), built once from the record and
drawn by two renderers that read nothing else: report.html's uPlot specs
(``surge.present.html.uplot``) and report.md's static SVGs (``surge.present.svg``), so both draw
the same axes, series and data points. The builders are ``surge.present.run_charts`` (a run's
timeseries rows and summary) and ``surge.present.experiment_charts`` (an experiment.json
document)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Style = Literal["line", "interval", "step", "points", "dash", "bars"]
"""Style is how a series is drawn: ``line`` through its points; ``interval`` a step over each
interval (a value holds from the previous x to its own); ``step`` a step holding each value up to
the next x; ``points`` markers alone; ``dash`` a dashed line; ``bars`` a bar at each x."""

PALETTE = (
    "#1f77b4",
    "#2ca02c",
    "#ff7f0e",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#17becf",
    "#bcbd22",
)
"""PALETTE colours the series that name no colour, by their place in the chart (report.js has the
same list): the i-th series is PALETTE[i % 10] in both renderers."""

RED, GREEN, GREY, BLUE = "#d62728", "#2ca02c", "#7f7f7f", "#1f77b4"

RULE_COLOURS = {True: GREEN, False: RED}
"""RULE_COLOURS: a threshold's line is green when it passed, red when it failed."""

ZONE_COLOURS = {
    "optimal": "rgba(46,160,67,0.16)",
    "stress": "rgba(233,196,106,0.30)",
    "degraded": "rgba(231,111,81,0.26)",
    "broken": "rgba(198,40,40,0.24)",
}
"""ZONE_COLOURS shade a sweep's zones (docs/analysis.md, "Zones"): both renderers and the legends
(report.html's under the levels table, the SVG's own) take their colours from here, so they
cannot disagree."""

BAND_COLOUR = "rgba(31,119,180,0.12)"
"""BAND_COLOUR fills the band between two series (a CI on the mean)."""


@dataclass(frozen=True)
class Axis:
    """Axis: its ``label`` (with the unit), a log scale of base ``log`` (None: linear), ``zero``
    (the axis starts at 0 and reaches up to every limit drawn on it), fixed ``ticks`` (None: the
    renderer's own) and ``categories`` (an x axis of names, the i-th at x = i)."""

    label: str
    log: int | None = None
    zero: bool = False
    ticks: tuple[float, ...] | None = None
    categories: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Series:
    """Series: one line of a chart, a value (or None: no point) per x of the chart, drawn in its
    ``style`` against the left axis (``y``) or the right one (``y2``); ``unit`` follows its values
    in a legend; ``colour`` None takes PALETTE's colour for its place."""

    label: str
    values: tuple[float | None, ...]
    style: Style = "line"
    axis: Literal["y", "y2"] = "y"
    unit: str = ""
    colour: str | None = None


@dataclass(frozen=True)
class Limit:
    """Limit: a horizontal line across the plot at ``value`` of the left axis (a threshold, an
    SLO's limit), ``label`` written beside it, ``legend`` its entry in a static legend."""

    value: float
    label: str
    colour: str
    legend: str


@dataclass(frozen=True)
class Mark:
    """Mark: a vertical line at ``x`` (a sweep's peak or knee), ``label`` written beside it."""

    x: float
    label: str
    colour: str


@dataclass(frozen=True)
class Zone:
    """Zone: the x span from ``start`` to ``end`` shaded in ZONE_COLOURS[``zone``]."""

    start: float
    end: float
    zone: str


@dataclass(frozen=True)
class Chart:
    """Chart: one chart's description. ``x`` holds the x values, every series a value for each;
    ``limits`` None means the chart draws no limit lines at all (a tuple, even empty, that it
    would); ``band`` fills between two series (indices into ``series``); each ``whiskers`` pair
    (low, high series indices) is a vertical bar at every x; ``note`` says what the chart leaves
    out (said under it)."""

    id: str
    title: str
    x: tuple[float, ...]
    x_axis: Axis
    y_axis: Axis
    series: tuple[Series, ...]
    y2_axis: Axis | None = None
    limits: tuple[Limit, ...] | None = None
    marks: tuple[Mark, ...] = ()
    zones: tuple[Zone, ...] = ()
    band: tuple[int, int] | None = None
    whiskers: tuple[tuple[int, int], ...] = ()
    note: str = ""

    def colour(self, index: int) -> str:
        """colour is the colour series ``index`` is drawn in (its own, else PALETTE's)."""
        return self.series[index].colour or PALETTE[index % len(PALETTE)]

    def points(self) -> int:
        """points is how many values the chart's series hold (None values not counted)."""
        return sum(1 for s in self.series for v in s.values if v is not None)
