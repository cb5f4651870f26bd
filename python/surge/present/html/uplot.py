"""uplot: a chart description (surge.present.charts) as the spec report.js draws with uPlot in
report.html: {id, title, x, xlabel, xlog, xcats, xticks, ylabel, yzero, y2label, note, rules,
series: [{label, values, style, axis, unit, colour}], zones, zoneColours, marks, band, whiskers}.
Nothing is added or dropped: every value of the description is in the spec, so report.md's SVG
of the same description draws the same data."""

from __future__ import annotations

from typing import Any

from surge.present.charts import ZONE_COLOURS, Chart, Series


def _series(series: Series) -> dict[str, Any]:
    spec: dict[str, Any] = {"label": series.label, "values": list(series.values)}
    if series.style != "line":
        spec["style"] = series.style
    if series.axis != "y":
        spec["axis"] = series.axis
    if series.unit:
        spec["unit"] = series.unit
    if series.colour:
        spec["colour"] = series.colour
    return spec


def spec(chart: Chart) -> dict[str, Any]:
    """spec is ``chart`` as report.js's chart spec (a JSON-able dict; series indices in ``band``
    and ``whiskers`` count the x column first, as uPlot does)."""
    out: dict[str, Any] = {"id": chart.id, "title": chart.title, "x": list(chart.x), "xlabel": chart.x_axis.label}
    if chart.x_axis.log:
        out["xlog"] = chart.x_axis.log
    if chart.x_axis.categories is not None:
        out["xcats"] = list(chart.x_axis.categories)
    if chart.x_axis.ticks is not None:
        out["xticks"] = list(chart.x_axis.ticks)
    out["ylabel"] = chart.y_axis.label
    if chart.y2_axis is not None:
        out["y2label"] = chart.y2_axis.label
    out["yzero"] = chart.y_axis.zero
    out["note"] = chart.note
    if chart.limits is not None:
        out["rules"] = [{"value": r.value, "label": r.label, "colour": r.colour} for r in chart.limits]
    out["series"] = [_series(s) for s in chart.series]
    if chart.zones:
        out["zones"] = [{"from": z.start, "to": z.end, "zone": z.zone} for z in chart.zones]
        out["zoneColours"] = ZONE_COLOURS
    if chart.marks:
        out["marks"] = [{"x": m.x, "label": m.label, "colour": m.colour} for m in chart.marks]
    if chart.band is not None:
        out["band"] = [chart.band[0] + 1, chart.band[1] + 1]
    if chart.whiskers:
        out["whiskers"] = [{"low": low + 1, "high": high + 1} for low, high in chart.whiskers]
    return out


def specs(charts: list[Chart]) -> list[dict[str, Any]]:
    """specs are ``charts`` as report.js's chart specs, in the same order."""
    return [spec(c) for c in charts]
