"""``surge experiments``: the experiments of the history (repeat, sweep, capacity, compare,
stats), newest first."""

from __future__ import annotations

import json
import sys

import click

from surge.cli.options import db_option, json_option
from surge.history import open_history
from surge.history.experiment_rows import KINDS, ExperimentRow, list_experiments
from surge.history.queries import DEFAULT_LIMIT, check_limit

COLUMNS = ("id", "time (UTC)", "kind", "name", "runs", "complete", "directory")
"""COLUMNS are the columns of the experiments' table."""


def _cells(row: ExperimentRow) -> list[str]:
    return [
        row.id[:8],
        row.started_at[:19].replace("T", " "),
        row.kind,
        row.name,
        f"{row.runs:,}",
        "yes" if row.complete else "no",
        row.directory or "-",
    ]


@click.command("experiments")
@click.option("--kind", type=click.Choice(KINDS), help="Only experiments of this kind.")
@click.option("--limit", type=int, default=DEFAULT_LIMIT, show_default=True, help="List at most this many experiments.")
@json_option("Print the experiments as a JSON list of objects.")
@db_option
def experiments_command(kind: str | None, limit: int, json_output: bool, db: str | None) -> None:
    """List the experiments of the history, newest first (surge show ID prints one again)."""
    check_limit(limit)
    with open_history(db) as history:
        rows = list_experiments(history, kind=kind, limit=limit)
        path = history.path
    if json_output:
        sys.stdout.write(json.dumps([r.to_dict() for r in rows]) + "\n")
        return
    if not rows:
        print(f"no experiments {'of kind ' + kind if kind else 'in the history'} ({path})")
        return
    # start-up: Rich only for a terminal table (not --json)
    from surge.present.terminal.summary import summary_console, summary_table

    table = summary_table(
        f"Experiments ({len(rows):,}, newest first)",
        COLUMNS,
        left=("id", "time (UTC)", "kind", "name", "complete", "directory"),
    )
    for row in rows:
        table.add_row(*_cells(row))
    summary_console().print(table)
