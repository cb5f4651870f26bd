"""The ``surge history`` table: one line per run, newest first."""

from __future__ import annotations

from rich.console import Console

from surge.core.redact import redact_text
from surge.history.queries import RunRow
from surge.present.terminal.summary import summary_console, summary_table

ID_CHARS = 8
"""ID_CHARS is how much of a run's id the table shows (any unique prefix names the run)."""

COLUMNS = (
    "id",
    "time (UTC)",
    "name",
    "tool",
    "target",
    "requests",
    "resp/s",
    "success",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "verdict",
    "complete",
)
"""COLUMNS are the table's columns, in order."""


def _number(value: float | None, form: str) -> str:
    return "-" if value is None else format(value, form)


def row_cells(run: RunRow) -> list[str]:
    """row_cells are one run's cells (``-`` for a figure that is missing or not yet known)."""
    return [
        run.id[:ID_CHARS],
        run.started_at[:19].replace("T", " "),
        run.name,
        run.tool,
        redact_text(run.target or ""),
        _number(run.requests, ","),
        _number(run.responses_per_s, ",.1f"),
        "-" if run.success_rate is None else f"{run.success_rate:.2%}",
        _number(run.p50_ms, ",.2f"),
        _number(run.p95_ms, ",.2f"),
        _number(run.p99_ms, ",.2f"),
        run.verdict,
        "yes" if run.complete else "no",
    ]


def print_runs(runs: list[RunRow], console: Console | None = None) -> None:
    """print_runs prints the runs as a table."""
    table = summary_table(
        f"Runs ({len(runs):,}, newest first)",
        COLUMNS,
        left=("id", "time (UTC)", "name", "tool", "target", "verdict", "complete"),
    )
    for run in runs:
        table.add_row(*row_cells(run))
    (console or summary_console()).print(table)
