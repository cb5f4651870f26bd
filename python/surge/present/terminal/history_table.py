"""The ``surge history`` table: one line per run, newest first."""

from __future__ import annotations

from rich.console import Console

from surge.core.redact import redact_text
from surge.history.queries import RunRow
from surge.present import numbers as fmt
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


def row_cells(run: RunRow) -> list[str]:
    """row_cells are one run's cells, written by surge.present.numbers (MISSING for a figure that
    is missing or not yet known)."""
    return [
        run.id[:ID_CHARS],
        run.started_at[:19].replace("T", " "),
        run.name,
        run.tool,
        redact_text(run.target or ""),
        fmt.count(run.requests),
        fmt.rate(run.responses_per_s),
        fmt.percent(run.success_rate),
        fmt.ms(run.p50_ms),
        fmt.ms(run.p95_ms),
        fmt.ms(run.p99_ms),
        run.verdict,
        "yes" if run.complete else "no",
    ]


def print_runs(runs: list[RunRow], console: Console | None = None) -> None:
    """print_runs prints the runs as a table."""
    table = summary_table(
        f"Runs ({fmt.count(len(runs))}, newest first)",
        COLUMNS,
        left=("id", "time (UTC)", "name", "tool", "target", "verdict", "complete"),
    )
    for run in runs:
        table.add_row(*row_cells(run))
    (console or summary_console()).print(table)
