"""``surge show RUN``: one run's summary, as printed after it ran."""

from __future__ import annotations

import json
import sys
from typing import Optional

import click

from surge.cli.options import db_option
from surge.history import lookup


@click.command("show")
@click.argument("run", metavar="RUN")
@click.option("--json", "json_output", is_flag=True, help="Print the run's summary.json document.")
@db_option
def show_command(run: str, json_output: bool, db: Optional[str]) -> None:
    """Print RUN's summary as it was printed after it ran. RUN is a run id, a unique prefix of
    one, 'last', or a results directory."""
    stored = lookup(run, db)
    if json_output:
        sys.stdout.write(json.dumps(stored.summary) + "\n")
        return
    from surge.history.show import print_record

    print_record(stored)
