"""``surge baseline set`` and ``surge baseline check``: name a run, several runs or an
experiment's runs as a baseline, and compare runs with it, exiting 99 on a regression: beyond
the tolerance, and significant too when both sides have repeats (``surge.analysis.baseline``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich.text import Text

from surge.analysis.baseline import (
    DEFAULT_METRICS,
    DEFAULT_TOLERANCE,
    METRICS,
    Comparison,
    baseline_significance,
    compare,
)
from surge.analysis.compare import ALPHA
from surge.cli.errors import finish
from surge.cli.options import db_option
from surge.core import exit_codes
from surge.core.errors import BadInput
from surge.core.exit_codes import Outcome
from surge.history import StoredRun, load_run, lookup, lookup_id, open_history
from surge.history.baselines import load_baseline, parse_tolerance, set_baseline_runs
from surge.history.store import History
from surge.present import numbers as fmt
from surge.record.figures import has_result

F = TypeVar("F", bound=Callable[..., Any])


@click.group("baseline")
def baseline_command() -> None:
    """Name runs as baselines, and check runs against them."""


def _require_result(run: StoredRun, ref: str) -> None:
    if not has_result(run.summary):
        raise BadInput("RUN", f"{ref}: run {run.run_id[:8]} has no result (it did not finish): nothing to compare")


def _experiment_runs(history: History, ref: str, variant: str | None) -> tuple[str, list[StoredRun]]:
    """_experiment_runs are the id of the experiment ``ref`` names and its runs with a complete
    record (of ``variant`` for a comparison, which needs one)."""
    from surge.history.experiments import experiment_runs, load_experiment, resolve_experiment

    experiment_id = resolve_experiment(history, ref, where="--experiment")
    document = load_experiment(history, experiment_id)
    variants = list(dict.fromkeys(e.get("variant") for e in document["runs"] if e.get("variant")))
    if document["kind"] in ("sweep", "capacity"):
        raise BadInput(
            "--experiment",
            f"{ref}: a {document['kind']}'s runs are at different loads: name the runs of one load instead (RUN...)",
        )
    if variants and variant is None:
        raise BadInput("--variant", f"experiment {experiment_id[:8]} compares {', '.join(variants)}: choose one")
    if variant is not None and variant not in variants:
        raise BadInput(
            "--variant",
            f"'{variant}' is not a variant of experiment {experiment_id[:8]}"
            + (f" ({', '.join(variants)})" if variants else " (it has none)"),
        )
    runs = [
        load_run(history, link.run_id)
        for link in experiment_runs(history, experiment_id)
        if variant is None or link.variant == variant
    ]
    runs = [r for r in runs if has_result(r.summary) and r.meta.get("complete")]
    if not runs:
        raise BadInput("--experiment", f"{ref}: no run of it has a complete record")
    return experiment_id, runs


def _chosen_runs(
    db: str | None, refs: tuple[str, ...], experiment: str | None, variant: str | None
) -> tuple[str | None, list[StoredRun]]:
    """_chosen_runs are the runs RUN... (each a run id, prefix, 'last' or a results directory)
    or ``--experiment`` [``--variant``] name, with the experiment's id (None for RUN...)."""
    if refs and experiment is not None:
        raise BadInput("--experiment", "give either RUN... or --experiment, not both")
    if not refs and experiment is None:
        raise BadInput("RUN", "give the runs (RUN...) or --experiment ID")
    if variant is not None and experiment is None:
        raise BadInput("--variant", "only with --experiment")
    if experiment is not None:
        with open_history(db) as history:
            return _experiment_runs(history, experiment, variant)
    runs = [lookup(ref, db) for ref in refs]
    for ref, run in zip(refs, runs):
        _require_result(run, ref)
    ids = [r.run_id for r in runs]
    twice = next((i for i in ids if ids.count(i) > 1), None)
    if twice is not None:
        raise BadInput("RUN", f"run {twice[:12]} is named twice")
    return None, runs


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
    experiment_id, runs = _chosen_runs(db, refs, experiment, variant)
    with open_history(db) as history:
        ids = [lookup_id(history, r.run_id or str(r.directory)) for r in runs]  # each must be in the history
        set_baseline_runs(history, name, ids, experiment_id)
    source = f" (experiment {experiment_id[:8]}{f', variant {variant}' if variant else ''})" if experiment_id else ""
    print(
        f"baseline '{name}': run {ids[0]}"
        if len(ids) == 1 and not experiment_id
        else f"baseline '{name}': {len(ids)} run(s){source}: {', '.join(i[:8] for i in ids)}"
    )


def _value(metric: str, value: float | None) -> str:
    if value is None:
        return fmt.MISSING
    if metric in ("success_rate", "failure_rate"):
        return fmt.percent(value)
    if metric == "responses_per_s":
        return f"{fmt.rate(value)}/s"
    return f"{fmt.ms(value)} ms"


def _change(change: float | None) -> str:
    if change is None:
        return fmt.MISSING
    if math.isinf(change):
        return "+∞" if change > 0 else "-∞"
    return f"{change:+.1%}"


def print_comparisons(comparisons: list[Comparison], title: str) -> None:
    """print_comparisons prints each metric's baseline, current value, change and verdict."""
    from surge.present.terminal.summary import summary_console, summary_table

    table = summary_table(title, ("metric", "baseline", "current", "change", "verdict"), left=("metric", "verdict"))
    style = {"regressed": "bold red", "improved": "green", "missing": "yellow"}
    for c in comparisons:
        table.add_row(
            c.metric,
            _value(c.metric, c.baseline),
            _value(c.metric, c.current),
            _change(c.change),
            Text(c.verdict, style=style.get(c.verdict, "")),
        )
    summary_console().print(table)


def _rule(base: int, current: int, tolerance: float, alpha: float) -> str:
    """_rule says which rule judged the figures: significance and the tolerance with repeats on
    both sides, the tolerance alone otherwise."""
    if base >= 2 and current >= 2:
        return (
            f"rule: significance and tolerance (baseline {base} runs, current {current} runs): a figure regressed "
            f"only when Welch's test finds it worse (p < {alpha:g}) and its mean is worse by more than "
            f"{tolerance:.1%}"
        )
    single = (
        "each side has one run"
        if base == current == 1
        else f"the {'baseline' if base == 1 else 'current side'} has one run"
    )
    return (
        f"rule: tolerance alone ({single}: no test of significance): a figure regressed when its "
        f"{'value' if base == current == 1 else 'mean'} is worse by more than {tolerance:.1%}"
    )


def _check_repeats(
    base: list[StoredRun], current: list[StoredRun], chosen: list[str], tolerance: float, title: str
) -> list[tuple[str, str]]:
    """_check_repeats judges each metric by baseline_significance over the runs of each side,
    prints the table, and returns the regressed metrics with their change."""
    from surge.present.terminal.summary import summary_console, summary_table
    from surge.record.figures import figures

    metric_of = {METRICS[m][0]: m for m in chosen}
    found = baseline_significance(
        [figures(r.summary) for r in base], [figures(r.summary) for r in current], list(metric_of), tolerance
    )
    table = summary_table(
        title,
        ("metric", "baseline mean", "n", "current mean", "n", "change", "Welch p", "verdict", "why"),
        left=("metric", "verdict", "why"),
    )
    style = {"regressed": "bold red", "improved": "green", "missing": "yellow"}
    for f in found:
        metric, c = metric_of[f.figure], f.comparison
        table.add_row(
            metric,
            _value(metric, c.reference.mean if c.reference else None),
            str(c.reference.n if c.reference else 0),
            _value(metric, c.variant.mean if c.variant else None),
            str(c.variant.n if c.variant else 0),
            _change(f.change),
            fmt.general(c.welch_p),
            Text(f.verdict, style=style.get(f.verdict, "")),
            f.reason,
        )
    summary_console().print(table)
    return [(metric_of[f.figure], _change(f.change)) for f in found if f.verdict == "regressed"]


def _sides(runs: list[StoredRun], experiment_id: str | None) -> str:
    if experiment_id is not None:
        return f"experiment {experiment_id[:8]} ({len(runs)} runs)"
    return f"run {runs[0].run_id[:8]}" if len(runs) == 1 else f"{len(runs)} runs"


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
    allowed = parse_tolerance(tolerance)
    with open_history(db) as history:
        baseline = load_baseline(history, against)
        base = [load_run(history, run_id) for run_id in baseline.run_ids]
    experiment_id, current = _chosen_runs(db, refs, experiment, variant)
    chosen = list(dict.fromkeys(metrics)) or list(DEFAULT_METRICS)
    title = (
        f"{_sides(current, experiment_id)} against baseline '{against}' ({_sides(base, baseline.experiment_id)}), "
        f"tolerance {allowed:.1%}"
    )
    if len(base) == 1 and len(current) == 1:
        comparisons = compare(base[0].summary, current[0].summary, chosen, allowed)
        print_comparisons(comparisons, title.replace("run ", "Run ", 1))
        regressed = [(c.metric, _change(c.change)) for c in comparisons if c.verdict == "regressed"]
    else:
        regressed = _check_repeats(base, current, chosen, allowed, title)
    print(_rule(len(base), len(current), allowed, ALPHA))
    if regressed:
        finish(
            Outcome(
                exit_codes.THRESHOLDS_FAILED,
                f"regression against baseline '{against}': "
                + ", ".join(f"{metric} {change}" for metric, change in regressed)
                + f" (tolerance {allowed:.1%})",
            )
        )
    print(f"no regression beyond {allowed:.1%} against baseline '{against}'")
