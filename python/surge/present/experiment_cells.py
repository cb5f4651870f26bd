"""The cells of an experiment's tables, computed once from its experiment.json document for the
terminal (surge.present.terminal.experiment_tables) and report.html (surge.present.html), and,
where report.md writes the same table, for it too: the columns, and the cells as text written by
surge.present.numbers. A renderer adds only what is its own (a colour, an HTML class, a column
of its own)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from surge.analysis.curve import failure_classes_text
from surge.analysis.describe import Description
from surge.present import numbers as fmt
from surge.record.figures import FIGURE_TITLES

ID_CHARS = 8
"""ID_CHARS is how much of a run's id tables show (any unique prefix names it)."""

STAT_COLUMNS = ("figure", "n", "mean", "SD", "CI low", "CI high", "median", "min", "max", "CV")
"""STAT_COLUMNS are the columns of the statistics table (the CI's level is in the title)."""

Cell = Callable[[Any, str, Any], str]
"""Cell writes a figure's value by the figure's name, with the spread (an SD over runs, or None)
it is shown with: how a renderer writes the figures described over runs."""


def interval(low: Any, high: Any, form: Callable[[Any], str]) -> str:
    """interval writes a confidence interval ``low – high`` by ``form``, MISSING without both bounds."""
    return fmt.MISSING if low is None or high is None else f"{form(low)} – {form(high)}"


def statistics_cells(figure: str, data: Mapping[str, Any], cell: Cell) -> list[str]:
    """statistics_cells is a figure's row of the statistics table (STAT_COLUMNS): its title, n,
    mean, SD, the CI on the mean, median, min, max (written by ``cell`` with the SD as spread)
    and the CV."""
    d = Description.from_dict(data)
    values = (d.mean, d.sd, d.ci_low, d.ci_high, d.median, d.min, d.max)
    return [FIGURE_TITLES.get(figure, figure), str(d.n), *(cell(v, figure, d.sd) for v in values), fmt.percent(d.cv)]


def level_cells(level: Mapping[str, Any]) -> list[str]:
    """level_cells are a sweep level's measured figures, as its curve table shows them after the
    load: throughput, goodput, success rate, p50, p95, p99 and the failure classes."""
    return [
        fmt.rate(level.get("responses_per_s")),
        fmt.rate(level.get("successes_per_s")),
        fmt.percent(level.get("success_rate")),
        *(fmt.ms(level.get(k)) for k in ("p50_ms", "p95_ms", "p99_ms")),
        failure_classes_text(level.get("failure_classes") or {}),
    ]


def comparison_sides(comparison: Mapping[str, Any], cell: Cell) -> list[str]:
    """comparison_sides are the cells of one figure's comparison (an entry of a pair's
    ``figures``) for the reference, then the variant: each side's mean and CI (written by
    ``cell`` with the side's SD as spread), MISSING for a side without the figure."""
    figure = comparison["figure"]
    cells: list[str] = []
    for side in (comparison["reference"], comparison["variant"]):
        if side is None:
            cells += [fmt.MISSING, fmt.MISSING]
            continue
        sd = side.get("sd")

        def write(value: Any, sd: Any = sd) -> str:
            return cell(value, figure, sd)

        cells += [write(side["mean"]), interval(side["ci_low"], side["ci_high"], write)]
    return cells
