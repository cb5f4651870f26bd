"""``surge baseline set`` and ``surge baseline check``: name a run, several runs or an
experiment's runs as a baseline, and compare runs with it, exiting 99 on a regression: beyond
the tolerance, and significant too when both sides have repeats (``surge.analysis.regression``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from surge.analysis.regression import DEFAULT_METRICS, DEFAULT_TOLERANCE, METRICS
from surge.analysis.significance import ALPHA
from surge.cli.exit import finish
from surge.cli.options import db_option
from surge.core import exit_codes
from surge.core.errors import BadInput
from surge.core.units import percent_flag
from surge.experiments.baseline_check import check_baseline, store_baseline
from surge.experiments.outcome import baseline_outcome
from surge.present.terminal.baseline_table import baseline_set_line, print_comparisons, print_findings, rule_text

F = TypeVar("F", bound=Callable[..., Any])


@click.group("baseline")
def baseline_command() -> None:
    """Name runs as baselines, and check runs against them."""


def _runs_options(command: F) -> F:
    """_runs_options adds RUN... and --experiment/--variant: the runs a baseline command works on."""
    command = click.option("--variant", help="With --experiment: the variant of a comparison whose runs to take.")(
        command
    )
    command = click.option(
        "--experiment",
        metavar="ID",
        help="Take the runs of this experiment (an id, a unique prefix or 'last'): a repeat's, "
        "or one variant's of a comparison.",
    )(command)
    return click.argument("refs", nargs=-1, metavar="RUN...")(command)


@baseline_command.command("set")
@_runs_options
@click.option("--name", required=True, help="The baseline's name (an existing one is replaced).")
@db_option
def set_command(refs: tuple[str, ...], experiment: str | None, variant: str | None, name: str, db: str | None) -> None:
    """Store RUN... (run ids, unique prefixes, 'last' or results directories of recorded runs), or
    the runs of --experiment [--variant], as baseline NAME."""
    if not name.strip():
        raise BadInput("--name", "must not be empty")
    ids, experiment_id = store_baseline(db, name, refs, experiment, variant)
    print(baseline_set_line(name, ids, experiment_id, variant))


@baseline_command.command("check")
@_runs_options
@click.option("--against", "against", required=True, metavar="NAME", help="The baseline to compare with.")
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    type=click.Choice(list(METRICS)),
    help=f"A figure to compare; repeatable (default: {', '.join(DEFAULT_METRICS)}).",
)
@click.option(
    "--tolerance",
    default=f"{DEFAULT_TOLERANCE:.0%}",
    show_default=True,
    help="How much worse (relative to the baseline) a figure may be before it is a regression.",
)
@db_option
def check_command(
    refs: tuple[str, ...],
    experiment: str | None,
    variant: str | None,
    against: str,
    metrics: tuple[str, ...],
    tolerance: str,
    db: str | None,
) -> None:
    """Compare RUN... (run ids, prefixes, 'last' or results directories), or the runs of
    --experiment [--variant], with baseline NAME; exit 99 when a figure regressed beyond the
    tolerance (with repeats on both sides: only when the regression is also significant)."""
    allowed = percent_flag("--tolerance", tolerance, above_zero=False, example="5%")
    chosen = list(dict.fromkeys(metrics)) or list(DEFAULT_METRICS)
    check = check_baseline(db, against, refs, experiment, variant, chosen, allowed)
    if check.single:
        print_comparisons(check.comparisons, check.title.replace("run ", "Run ", 1))
    else:
        print_findings(check.findings, check.metric_of, check.title)
    print(rule_text(check.baseline_runs, check.current_runs, allowed, ALPHA))
    outcome = baseline_outcome(check, against)
    if outcome.code != exit_codes.OK:
        finish(outcome)
    print(f"no regression beyond {allowed:.1%} against baseline '{against}'")
