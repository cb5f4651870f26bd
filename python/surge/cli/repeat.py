"""``surge repeat FILE|URL -n 10 [--cooldown 10s]``: the same test n times as one experiment,
then the runs, the statistics of every key figure, the flags and the thresholds' verdicts."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click

from surge.cli.errors import finish
from surge.cli.options import check_no_save
from surge.cli.test_options import experiment_test_options
from surge.core import exit_codes, signals
from surge.core.errors import BadInput
from surge.core.exit_codes import Outcome
from surge.experiments import runner
from surge.experiments.recorder import ExperimentRecord, check_experiment_out
from surge.plan.url import duration_flag
from surge.record.directory import check_out
from surge.run.spec import TestSpec

MAX_RUNS = 1000
"""MAX_RUNS bounds -n/--runs."""

DEFAULT_RUNS = 10
"""DEFAULT_RUNS is how many runs ``surge repeat`` makes unless told."""


def parse_percent(flag: str, text: str) -> float:
    """parse_percent reads a percentage flag (``10%`` or ``10``) as a fraction above 0; BadInput names ``flag``."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise BadInput(flag, f"expected a percentage above 0 such as 10%, got '{text}'")
    return value / 100


def check_experiment_test(test: TestSpec, reads_history: bool = False) -> None:
    """check_experiment_test refuses, before any run, an ``--out`` that is a file or holds an
    experiment already, a --watch-pid that is no running process, and with --no-save the flags
    that say where to record: ``--out``, and ``--db`` unless the experiment ``reads_history``
    (its runs come from there)."""
    from surge.diagnosis.findings import watch_process

    check_no_save(test.no_save, {"--out": test.out, "--db": None if reads_history else test.db})
    check_out(test.out)
    check_experiment_out(test.out)
    watch_process(test.watch_pid)


def experiment_outcome(entries: Sequence[Mapping[str, Any]], stopped: int | None, planned: int, kept: str) -> Outcome:
    """experiment_outcome is the exit code of an experiment of ``planned`` runs (experiment.json's
    run ``entries``) and why: 128 + the stop signal when one ended it (130 Ctrl-C, 143 SIGTERM;
    ``kept`` says where the completed runs are), else 3 when a run measured nothing, else 99
    when a run failed a threshold, else 0."""
    if stopped is not None:
        completed = sum(1 for e in entries if e.get("complete"))
        return exit_codes.stopped(None, f"experiment incomplete: {completed} of {planned} runs completed ({kept})")
    empty = [str(e["label"]) for e in entries if e.get("exit_code") == exit_codes.UNREACHABLE]
    if empty:
        return Outcome(exit_codes.UNREACHABLE, f"run {', '.join(empty)} measured nothing (exit code 3)")
    failed = [str(e["label"]) for e in entries if e.get("verdict") == "failed"]
    if failed:
        return Outcome(
            exit_codes.THRESHOLDS_FAILED,
            f"{len(failed)} of {len(entries)} runs failed a threshold (run {', '.join(failed)})",
        )
    return Outcome(exit_codes.OK)


def report_experiment(document: Mapping[str, Any], json_output: bool) -> None:
    """report_experiment prints the experiment's record: experiment.json's document on stdout
    with --json, else its tables (a stop signal now waits for the output to complete)."""
    with signals.deferred():
        if json_output:
            sys.stdout.write(json.dumps(document) + "\n")
            sys.stdout.flush()
            return
        from surge.present.terminal.experiment_tables import print_experiment

        print_experiment(document)


@click.command("repeat")
@experiment_test_options
@click.option(
    "-n", "--runs", "runs", type=int, default=DEFAULT_RUNS, show_default=True, help="How many times to run the test."
)
@click.option(
    "--cooldown",
    default="0s",
    show_default=True,
    help="Pause between two runs (nothing sent), e.g. 10s: lets the target settle.",
)
@click.option(
    "--cv-limit",
    "cv_limit",
    default="10%",
    show_default=True,
    help="Flag a figure whose coefficient of variation (SD / mean) is above this.",
)
@click.option(
    "--json",
    "json_output",
    is_flag=True,
    help="Print the experiment (parameters, every run's figures and ids, statistics, flags) as one "
    "JSON document on stdout.",
)
def repeat_command(test: TestSpec, runs: int, cooldown: str, cv_limit: str, json_output: bool) -> None:
    """Run the test (URL, or a scenario file) n times and describe every key figure over the
    runs: mean, SD, 95% CI, median, min, max, CV, outliers. Exit code 99 when a run failed a
    threshold, 130 (143 for SIGTERM) when stopped, 3 when a run measured nothing."""
    if not 1 <= runs <= MAX_RUNS:
        raise BadInput("-n/--runs", f"must be from 1 to {MAX_RUNS:,}, got {runs}")
    pause_s = duration_flag("--cooldown", cooldown, positive=False)
    limit = parse_percent("--cv-limit", cv_limit)
    check_experiment_test(test)
    prepared = test.prepare()
    experiment = ExperimentRecord.for_test(
        "repeat", test, {"runs": runs, "cooldown_s": pause_s, "cv_limit": limit, "test": test.describe()}
    )
    with experiment.running():
        for i in range(1, runs + 1):
            if i > 1:
                runner.cooldown(pause_s)
            runner.run_one(experiment, test, prepared, role=f"repeat {i}/{runs}", label=str(i))
    from surge.analysis.over_runs import analyse

    experiment.conclude(lambda: analyse(experiment.runs, cv_limit=limit))
    report_experiment(experiment.document, json_output)
    finish(experiment_outcome(experiment.runs, experiment.stopped, runs, experiment.kept))
