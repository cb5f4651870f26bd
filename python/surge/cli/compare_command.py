"""``surge compare``: one test against variants, each repeated n times in a balanced order
(A B, B A, ...) or shuffled per round (seeded, recorded), or groups of runs already in the
history; variants × loads (``--variant`` with ``--vus``/``--rates``, or ``--group`` with
``--loads KEY=L1,L2``); per figure each variant's mean and CI, every pair of variants with
the difference, a bootstrap CI on the ratio, Welch's and Mann–Whitney's p-values and a verdict
(and "may be drift" when a figure trends with run order); between load levels, the scaling
line. Recorded as an experiment of kind ``compare``."""

from __future__ import annotations

from dataclasses import fields

import click

from surge.analysis.significance import ALPHA
from surge.cli.exit import finish
from surge.cli.options import cooldown_option, json_option
from surge.cli.repeat_command import MAX_RUNS, report_experiment
from surge.cli.test_options import optional_test_options
from surge.core.errors import BadInput
from surge.core.units import duration_flag
from surge.experiments.compare_experiment import compare_history, reference_cell, run_compare, variants_of
from surge.experiments.recorder import check_experiment_test
from surge.experiments.variants import ORDERS, check_names, parse_group, parse_loads, parse_runs
from surge.run.spec import TestSpec

DEFAULT_REPEATS = 5
"""DEFAULT_REPEATS is how many runs each variant gets unless told (-n)."""

HISTORY_FLAGS = "--group/--runs"
"""HISTORY_FLAGS names the flags of a comparison of runs from the history in errors."""


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 0.5:
        raise BadInput("--alpha", f"expected a significance level between 0 and 0.5 such as 0.05, got '{text}'")
    return value


def _check_no_test_flags(test: TestSpec) -> None:
    """_check_no_test_flags refuses, in a comparison of recorded runs, a flag describing a test to run."""
    bare = TestSpec(target="")
    for f in fields(TestSpec):
        if f.name not in ("target", "out", "db", "tags", "no_save", "flags") and getattr(test, f.name) != getattr(
            bare, f.name
        ):
            raise BadInput(
                test.flag(f.name),
                f"describes a test to run; a comparison of runs from the history ({HISTORY_FLAGS}) runs none",
            )


@click.command("compare")
@optional_test_options
@click.option(
    "--variant",
    "variant_specs",
    multiple=True,
    metavar="SPEC",
    help="A variant of the test: NAME=URL (another base URL), NAME:KEY=VALUE,... (-e pairs of its own, "
    "for a scenario file) or NAME (the test as given); repeatable, the first is the reference.",
)
@click.option(
    "--vus",
    help="Closed-model load levels to compare, e.g. 35,75: one variant per level (and the scaling between them).",
)
@click.option(
    "--rates",
    help="Open-model arrival rates to compare, e.g. 100,200: one variant per level (and the scaling between them).",
)
@click.option(
    "--group",
    "group_specs",
    multiple=True,
    metavar="[NAME:]KEY=VALUE,...",
    help="A group of runs from the history: every run with all these tags; repeatable (no FILE|URL).",
)
@click.option(
    "--runs",
    "runs_specs",
    multiple=True,
    metavar="[NAME:]RUN,RUN,...",
    help="A group of runs from the history, each an id, a unique prefix or a results directory; "
    "repeatable (no FILE|URL).",
)
@click.option(
    "--loads",
    help="With --group/--runs: each group's load level (VUs or rate), in the groups' order, "
    "increasing: adds the scaling between them; or KEY=L1,L2,... (e.g. vus=35,75): every "
    "group at every level, a run's level its tag KEY (variants × loads).",
)
@click.option(
    "-n",
    "--repeats",
    type=int,
    default=DEFAULT_REPEATS,
    show_default=True,
    help="How many runs each variant gets (one a round).",
)
@click.option(
    "--order",
    type=click.Choice(ORDERS),
    default="balanced",
    show_default=True,
    help="Run order of each round: balanced (A B, then B A, ...) or shuffle (seeded, recorded).",
)
@click.option(
    "--order-seed",
    type=int,
    help="With --order shuffle: the seed of the shuffles (default: a random "
    "one, recorded and shown so that the order can be made again).",
)
@cooldown_option("0s", "Pause between two runs (nothing sent), e.g. 10s.")
@click.option("--reference", help="The variant the others are compared with (default: the first).")
@click.option("--alpha", default=str(ALPHA), show_default=True, help="Significance level of the verdicts.")
@json_option(
    "Print the experiment (parameters, every run's figures, the comparisons, the scaling, the "
    "findings) as one JSON document on stdout."
)
def compare_command(
    test: TestSpec,
    variant_specs: tuple[str, ...],
    vus: str | None,
    rates: str | None,
    group_specs: tuple[str, ...],
    runs_specs: tuple[str, ...],
    loads: str | None,
    repeats: int,
    order: str,
    order_seed: int | None,
    cooldown: str,
    reference: str | None,
    alpha: str,
    json_output: bool,
) -> None:
    """Compare variants of a test (FILE|URL with --variant, --vus or --rates, or --variant with
    --vus/--rates for variants × loads), each run n times in a balanced or shuffled order, or
    groups of runs from the history (--group, --runs): per figure each variant's mean and 95%
    CI, every pair of variants with the difference, the ratio with its bootstrap CI, Welch's and
    Mann-Whitney's p-values, and better / worse / no significant difference (may be drift when
    a figure trends with run order). Exit code as surge repeat's."""
    level = _alpha(alpha)
    if order_seed is not None and order != "shuffle":
        raise BadInput("--order-seed", "only with --order shuffle (a balanced order has no seed)")
    if group_specs or runs_specs:
        for flag, given in (
            ("--variant", variant_specs),
            ("--vus", vus),
            ("--rates", rates),
            ("--order", order != "balanced"),
            ("--order-seed", order_seed is not None),
        ):
            if given:
                raise BadInput(flag, f"compares new runs; {HISTORY_FLAGS} compare runs from the history: give one")
        if test.target:
            raise BadInput("FILE|URL", f"{HISTORY_FLAGS} compare runs from the history: give no test to run")
        _check_no_test_flags(test)
        _compare_history(test, group_specs, runs_specs, loads, reference, level, json_output)
        return
    if not test.target:
        raise BadInput("FILE|URL", f"give the test to run with --variant, --vus or --rates, or {HISTORY_FLAGS}")
    if loads is not None:
        raise BadInput("--loads", f"only with {HISTORY_FLAGS} (--vus and --rates give the loads of new runs)")
    _compare_runs(
        test, variant_specs, vus, rates, repeats, (order, order_seed), cooldown, reference, level, json_output
    )


def _compare_runs(
    test: TestSpec,
    variant_specs: tuple[str, ...],
    vus: str | None,
    rates: str | None,
    repeats: int,
    order: tuple[str, int | None],
    cooldown: str,
    reference: str | None,
    alpha: float,
    json_output: bool,
) -> None:
    if not 1 <= repeats <= MAX_RUNS:
        raise BadInput("-n/--repeats", f"must be from 1 to {MAX_RUNS:,}, got {repeats}")
    pause_s = duration_flag("--cooldown", cooldown, positive=False)
    variants, cells = variants_of(variant_specs, vus, rates)
    chosen = reference_cell(reference, variants, cells)
    check_experiment_test(test)
    experiment, outcome = run_compare(test, variants, cells, chosen, repeats, order, pause_s, alpha)
    report_experiment(experiment.document, json_output)
    finish(outcome)


def _compare_history(
    test: TestSpec,
    group_specs: tuple[str, ...],
    runs_specs: tuple[str, ...],
    loads: str | None,
    reference: str | None,
    alpha: float,
    json_output: bool,
) -> None:
    if group_specs and runs_specs:
        raise BadInput("--runs", "give the groups either by tags (--group) or by runs (--runs), not both")
    groups = [parse_group(s) for s in group_specs] or [parse_runs(s, i) for i, s in enumerate(runs_specs)]
    flag = "--group" if group_specs else "--runs"
    check_names([g.name for g in groups], flag)
    levels = _history_loads(loads, len(groups))
    check_experiment_test(test, reads_history=True)
    experiment, outcome = compare_history(test, groups, flag, levels, reference, alpha)
    report_experiment(experiment.document, json_output)
    finish(outcome)


def _history_loads(loads: str | None, groups: int) -> tuple[str | None, list[float]]:
    """_history_loads reads --loads of a comparison of history runs: (None, one level per
    group) or, for ``KEY=L1,L2,...``, (KEY, the levels every group is split into)."""
    if loads is None:
        return None, []
    key, sep, rest = loads.partition("=")
    if sep:
        if not key.strip() or not rest:
            raise BadInput("--loads", f"expected a tag and its levels such as vus=35,75, got '{loads}'")
        return key.strip(), parse_loads("--loads", rest, whole=False)
    levels = parse_loads("--loads", loads, whole=False)
    if len(levels) != groups:
        raise BadInput(
            "--loads",
            f"give one load level per group: {groups} groups, {len(levels)} levels (or a "
            "tag and its levels such as vus=35,75, to split every group by that tag of its runs)",
        )
    return None, levels
