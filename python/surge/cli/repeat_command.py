"""``surge repeat FILE|URL -n 10 [--cooldown 10s]``: the same test n times as one experiment,
then the runs, the statistics of every key figure, the flags and the thresholds' verdicts."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

import click

from surge.cli.exit import finish
from surge.cli.options import cooldown_option, cv_limit_option, json_option
from surge.cli.test_options import experiment_test_options
from surge.core import signals
from surge.core.errors import BadInput
from surge.core.units import duration_flag, percent_flag
from surge.experiments.recorder import check_experiment_test
from surge.experiments.repeat import run_repeat
from surge.present.terminal.experiment_tables import print_experiment
from surge.run.spec import TestSpec

MAX_RUNS = 1000
"""MAX_RUNS bounds -n/--runs."""

DEFAULT_RUNS = 10
"""DEFAULT_RUNS is how many runs ``surge repeat`` makes unless told."""


def report_experiment(document: Mapping[str, Any], json_output: bool) -> None:
    """report_experiment prints the experiment's record: experiment.json's document on stdout
    with --json, else its tables (a stop signal now waits for the output to complete)."""
    with signals.deferred():
        if json_output:
            sys.stdout.write(json.dumps(document) + "\n")
            sys.stdout.flush()
            return

        print_experiment(document)


@click.command("repeat")
@experiment_test_options
@click.option(
    "-n", "--runs", "runs", type=int, default=DEFAULT_RUNS, show_default=True, help="How many times to run the test."
)
@cooldown_option("0s", "Pause between two runs (nothing sent), e.g. 10s: lets the target settle.")
@cv_limit_option
@json_option(
    "Print the experiment (parameters, every run's figures and ids, statistics, flags) as one JSON document on stdout."
)
def repeat_command(test: TestSpec, runs: int, cooldown: str, cv_limit: str, json_output: bool) -> None:
    """Run the test (URL, or a scenario file) n times and describe every key figure over the
    runs: mean, SD, 95% CI, median, min, max, CV, outliers. Exit code 99 when a run failed a
    threshold, 130 (143 for SIGTERM) when stopped, 3 when a run measured nothing."""
    if not 1 <= runs <= MAX_RUNS:
        raise BadInput("-n/--runs", f"must be from 1 to {MAX_RUNS:,}, got {runs}")
    pause_s = duration_flag("--cooldown", cooldown, positive=False)
    limit = percent_flag("--cv-limit", cv_limit, above_zero=True, example="10%")
    check_experiment_test(test)
    experiment, outcome = run_repeat(test, runs, pause_s, limit)
    report_experiment(experiment.document, json_output)
    finish(outcome)
