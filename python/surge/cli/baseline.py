"""``surge baseline set`` and ``surge baseline check``: name a run as a baseline, and compare a
run with it, exiting 99 on a regression beyond the tolerance."""

from __future__ import annotations

import math
from typing import Optional

import click
from rich.text import Text

from surge import exit_codes
from surge.cli.errors import finish
from surge.cli.options import db_option
from surge.errors import BadInput
from surge.exit_codes import Outcome
from surge.history import (
    DEFAULT_METRICS,
    METRICS,
    Comparison,
    StoredRun,
    baseline_run,
    compare,
    load_run,
    lookup,
    lookup_id,
    open_history,
    set_baseline,
)
from surge.history.baselines import DEFAULT_TOLERANCE, parse_tolerance
from surge.history.figures import has_result


@click.group("baseline")
def baseline_command() -> None:
    """Name runs as baselines, and check runs against them."""


def _require_result(run: StoredRun, ref: str) -> None:
    if not has_result(run.summary):
        raise BadInput("RUN", f"{ref}: run {run.run_id[:8]} has no result (it did not finish): nothing to compare")


@baseline_command.command("set")
@click.argument("run", metavar="RUN")
@click.option("--name", required=True, help="The baseline's name (an existing one is replaced).")
@db_option
def set_command(run: str, name: str, db: Optional[str]) -> None:
    """Store RUN (a run id, a unique prefix, 'last' or a results directory of a recorded run) as
    baseline NAME."""
    if not name.strip():
        raise BadInput("--name", "must not be empty")
    with open_history(db) as history:
        run_id = lookup_id(history, run)
        _require_result(load_run(history, run_id), run)
        set_baseline(history, name, run_id)
    print(f"baseline '{name}': run {run_id}")


def _value(metric: str, value: float | None) -> str:
    if value is None:
        return "missing"
    if metric in ("success_rate", "failure_rate"):
        return f"{value:.3%}"
    if metric == "responses_per_s":
        return f"{value:,.1f}/s"
    return f"{value:,.2f} ms"


def _change(change: float | None) -> str:
    if change is None:
        return "-"
    if math.isinf(change):
        return "+∞" if change > 0 else "-∞"
    return f"{change:+.1%}"


def print_comparisons(comparisons: list[Comparison], title: str) -> None:
    """print_comparisons prints each metric's baseline, current value, change and verdict."""
    from surge.summary import summary_console, summary_table

    table = summary_table(title, ("metric", "baseline", "current", "change", "verdict"), left=("metric", "verdict"))
    style = {"regressed": "bold red", "improved": "green", "missing": "yellow"}
    for c in comparisons:
        table.add_row(c.metric, _value(c.metric, c.baseline), _value(c.metric, c.current), _change(c.change),
                      Text(c.verdict, style=style.get(c.verdict, "")))
    summary_console().print(table)


@baseline_command.command("check")
@click.argument("run", metavar="RUN")
@click.option("--against", "against", required=True, metavar="NAME", help="The baseline to compare with.")
@click.option("--metric", "metrics", multiple=True, type=click.Choice(list(METRICS)),
              help=f"A figure to compare; repeatable (default: {', '.join(DEFAULT_METRICS)}).")
@click.option("--tolerance", default=f"{DEFAULT_TOLERANCE:.0%}", show_default=True,
              help="How much worse (relative to the baseline) a figure may be before it is a regression.")
@db_option
def check_command(run: str, against: str, metrics: tuple[str, ...], tolerance: str, db: Optional[str]) -> None:
    """Compare RUN (a run id, a unique prefix, 'last' or a results directory) with baseline NAME;
    exit 99 when a figure worsened beyond the tolerance."""
    allowed = parse_tolerance(tolerance)
    with open_history(db) as history:
        base_id = baseline_run(history, against)
        base = load_run(history, base_id)
    current = lookup(run, db)
    _require_result(current, run)
    chosen = list(dict.fromkeys(metrics)) or list(DEFAULT_METRICS)
    comparisons = compare(base.summary, current.summary, chosen, allowed)
    print_comparisons(comparisons, f"Run {current.run_id[:8]} against baseline '{against}' (run {base_id[:8]}), "
                                   f"tolerance {allowed:.1%}")
    regressed = [c for c in comparisons if c.verdict == "regressed"]
    if regressed:
        finish(Outcome(exit_codes.THRESHOLDS_FAILED, f"regression against baseline '{against}': " + ", ".join(
            f"{c.metric} {_change(c.change)}" for c in regressed) + f" (tolerance {allowed:.1%})"))
    print(f"no regression beyond {allowed:.1%} against baseline '{against}'")
