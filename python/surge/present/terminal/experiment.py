"""Printing an experiment from its experiment.json document alone, so that the command and
``surge show EXPERIMENT`` print the same thing: PRINTERS maps each kind to its printer (repeat
and stats: the runs, the statistics, the flags and the verdicts); a kind without one gets the
table of its runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from surge.analysis.describe import Description
from surge.analysis.over_runs import verdict_line
from surge.core.redact import redact_text
from surge.present.numbers import figure_with_spread
from surge.present.terminal.summary import summary_console, summary_table
from surge.record.directory import KEPT, NOT_KEPT
from surge.record.figures import FIGURE_TITLES, KEY_FIGURES

ID_CHARS = 8
"""ID_CHARS is how much of a run's id tables show (any unique prefix names it)."""

RUN_COLUMNS = ("run", "id", "req/s", "p50 ms", "p95 ms", "p99 ms", "failure rate", "verdict")
"""RUN_COLUMNS are the columns of an experiment's table of runs."""

STAT_COLUMNS = ("figure", "n", "mean", "SD", "CI low", "CI high", "median", "min", "max", "CV")
"""STAT_COLUMNS are the columns of the statistics table (the CI's level is in the title)."""


def _number(value: float | None, figure: str) -> str:
    if value is None:
        return "-"
    if figure == "failure_rate":
        return f"{value:.3%}"
    return f"{value:,.3f}" if figure.endswith("_ms") else f"{value:,.1f}"


def _threshold_value(value: float | None, key: str) -> str:
    return "-" if value is None else f"{value:,.6g}"


def cell(value: float | None, figure: str, spread: float | None = None) -> str:
    """cell formats a figure's value for a table: a key figure by its unit (with ``spread``, its
    SD over the runs, with the decimals the spread supports: report.numbers.figure_with_spread),
    a threshold's in six digits."""
    if figure not in KEY_FIGURES:
        return _threshold_value(value, figure)
    if spread is not None and figure != "failure_rate":
        return figure_with_spread(value, figure, spread)
    return _number(value, figure)


def runs_table(document: Mapping[str, Any]) -> Any:
    """runs_table is the table of the experiment's runs: label, id prefix, key figures, verdict
    (and how a run ended when its record is incomplete)."""
    runs = document["runs"]
    table = summary_table(f"Runs ({len(runs)})", RUN_COLUMNS, left=("run", "id", "verdict"))
    for entry in runs:
        f = entry.get("figures") or {}
        ended = "" if entry.get("complete") else f" (incomplete: {entry.get('stop_reason') or 'no result'})"
        table.add_row(
            str(entry["label"]),
            str(entry.get("run_id") or "")[:ID_CHARS],
            *(_number(f.get(k), k) for k in ("responses_per_s", "p50_ms", "p95_ms", "p99_ms", "failure_rate")),
            f"{entry.get('verdict') or 'none'}{ended}",
        )
    return table


def statistics_table(analysis: Mapping[str, Any]) -> Any:
    """statistics_table is one row per figure: n, mean, SD, the CI on the mean, median, min,
    max, CV (``-`` where it cannot be computed)."""
    level = f"{analysis['confidence']:.0%}"
    table = summary_table(
        f"Statistics over the runs (CI: {level} on the mean, Student's t)", STAT_COLUMNS, left=("figure",)
    )
    for figure, data in analysis["statistics"].items():
        d = Description.from_dict(data)
        values = (d.mean, d.sd, d.ci_low, d.ci_high, d.median, d.min, d.max)
        table.add_row(
            FIGURE_TITLES.get(figure, figure),
            str(d.n),
            *(cell(v, figure, d.sd) for v in values),
            "-" if d.cv is None else f"{d.cv:.1%}",
        )
    return table


def print_over_runs(document: Mapping[str, Any], console: Console) -> None:
    """print_over_runs prints a repeat's or stats' record: the runs, the statistics, each flag
    with its advice, the runs left out and the thresholds' verdict."""
    console.print(Text.assemble(("surge ", "bold cyan"), redact_text(heading(document))))
    console.print(runs_table(document))
    analysis = document.get("analysis")
    if not analysis:
        return
    console.print(statistics_table(analysis))
    advice_given: set[str] = set()
    for finding in document.get("findings") or []:
        console.print(Text.assemble(("flag ", "bold yellow"), finding["text"]))
        if finding["advice"] not in advice_given:  # each advice once, after the first flag it follows
            advice_given.add(finding["advice"])
            console.print(f"     {finding['advice']}")
    for left in analysis.get("left_out") or []:
        console.print(f"run {left['label']} is not in the statistics: {left['why']}")
    failed = [str(e["label"]) for e in document["runs"] if e.get("verdict") == "failed"]
    console.print(Text.assemble(("thresholds ", "bold"), verdict_line(analysis["verdicts"], failed)))


def heading(document: Mapping[str, Any]) -> str:
    """heading is the experiment's first line: kind, name, id prefix and what it was asked."""
    params = document.get("parameters") or {}
    asked = ", ".join(
        f"{k}={v}" for k, v in params.items() if k != "test" and v is not None and not isinstance(v, (dict, list))
    )  # None: not asked
    return f"{document['kind']} {document['name']} · experiment {document['experiment_id'][:ID_CHARS]}" + (
        f" · {asked}" if asked else ""
    )


def print_runs_only(document: Mapping[str, Any], console: Console) -> None:
    """print_runs_only prints the heading and the runs (a kind without a printer of its own)."""
    console.print(Text.assemble(("surge ", "bold cyan"), redact_text(heading(document))))
    console.print(runs_table(document))


def _print_sweep(document: Mapping[str, Any], console: Console) -> None:
    from surge.present.terminal.sweep import print_sweep  # it imports this module

    print_sweep(document, console)


def _print_capacity(document: Mapping[str, Any], console: Console) -> None:
    from surge.present.terminal.capacity import print_capacity  # it imports this module

    print_capacity(document, console)


def _print_comparison(document: Mapping[str, Any], console: Console) -> None:
    from surge.present.terminal.compare import print_comparison  # it builds on this module's tables

    print_comparison(document, console)


PRINTERS: dict[str, Callable[[Mapping[str, Any], Console], None]] = {
    "repeat": print_over_runs,
    "stats": print_over_runs,
    "sweep": _print_sweep,
    "capacity": _print_capacity,
    "compare": _print_comparison,
}
"""PRINTERS maps an experiment kind to the function printing its record (sweep, capacity and
compare add theirs here)."""


def print_experiment(document: Mapping[str, Any], console: Console | None = None) -> None:
    """print_experiment prints the experiment as its command did, then a line when it is incomplete."""
    console = console or summary_console()
    PRINTERS.get(str(document.get("kind")), print_runs_only)(document, console)
    if not document.get("complete"):
        signal = document.get("stop_signal")
        why = f"stopped by {signal}" if signal else "it did not finish"
        done = sum(1 for e in document["runs"] if e.get("complete"))
        kept = KEPT if document.get("directory") else NOT_KEPT  # no directory: --no-save
        console.print(Text(f"experiment incomplete: {why}; {done} completed run(s) {kept}", style="bold yellow"))
