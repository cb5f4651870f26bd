"""``surge show RUN``: one run's summary, as printed after it ran; or an experiment's tables, as
its command printed them (an experiment id, a unique prefix, its directory, or ``--experiment
last``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from surge.cli.options import db_option, json_option
from surge.core.errors import BadInput
from surge.experiments.recorder import FILE_NAME as EXPERIMENT_FILE
from surge.history import LAST, lookup, open_history, resolve_run
from surge.history.experiment_rows import find_experiments, load_experiment, resolve_experiment
from surge.record.read import read_json_object


def _experiment_document(ref: str, db: str | None, only_experiments: bool) -> dict[str, Any] | None:
    """_experiment_document is the experiment ``ref`` names, or None when it names a run: an
    experiment's directory, an id or prefix only an experiment has, or with --experiment any
    ref (``last`` the newest experiment). BadInput when a prefix names both a run and an experiment."""
    if Path(ref).is_dir():
        if not (Path(ref) / EXPERIMENT_FILE).is_file():
            return None

        return read_json_object(Path(ref) / EXPERIMENT_FILE)
    with open_history(db) as history:
        if only_experiments:
            return load_experiment(history, resolve_experiment(history, ref, where="RUN"))
        if ref == LAST or not find_experiments(history, ref):
            return None
        try:
            resolve_run(history, ref)
        except BadInput:  # no run by that prefix: the experiment it is
            return load_experiment(history, resolve_experiment(history, ref, where="RUN"))
        raise BadInput("RUN", f"'{ref}' names both a run and an experiment: give more of the id")


@click.command("show")
@click.argument("run", metavar="RUN")
@json_option("Print the run's summary.json (an experiment's experiment.json) document.")
@click.option(
    "--experiment",
    "only_experiments",
    is_flag=True,
    help="RUN names an experiment (an id, a unique prefix, or 'last': the newest experiment).",
)
@db_option
def show_command(run: str, json_output: bool, only_experiments: bool, db: str | None) -> None:
    """Print RUN's summary as it was printed after it ran. RUN is a run id, a unique prefix of
    one, 'last', or a results directory; or an experiment's id, prefix or directory."""
    experiment = _experiment_document(run, db, only_experiments)
    if experiment is not None:
        if json_output:
            sys.stdout.write(json.dumps(experiment) + "\n")
            return
        # start-up: the experiment tables (numpy, Rich) only without --json
        from surge.present.terminal.experiment_tables import print_experiment

        print_experiment(experiment)
        return
    stored = lookup(run, db)
    if json_output:
        sys.stdout.write(json.dumps(stored.summary) + "\n")
        return
    # start-up: Rich and the result models only without --json
    from surge.present.terminal.stored_run import print_record

    print_record(stored)
