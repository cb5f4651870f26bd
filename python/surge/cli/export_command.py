"""``surge export RUN [DIR]``: rebuild a run's results directory from the history."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from surge.cli.options import db_option
from surge.history import load_run, lookup_id, open_history
from surge.present.write import default_directory, export_run


@click.command("export")
@click.argument("run", metavar="RUN")
@click.argument("directory", metavar="DIR", required=False)
@db_option
def export_command(run: str, directory: str | None, db: str | None) -> None:
    """Rebuild RUN's results directory from the history in DIR (default: results/<the directory
    name the run had>). RUN is a run id, a unique prefix of one, or 'last'."""
    with open_history(db) as history:
        stored = load_run(history, lookup_id(history, run))
    out = Path(directory) if directory is not None else default_directory(stored)
    export_run(stored, out)
    print(f"results: {out}", file=sys.stderr, flush=True)
