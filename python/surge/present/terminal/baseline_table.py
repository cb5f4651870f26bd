"""The tables of ``surge baseline``: each metric of runs against a baseline (one run on each side:
baseline, current, change, verdict; with repeats: both means and their n, the change, Welch's p,
the verdict and why), the line naming the rule that judged them, and the line of ``baseline set``."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.text import Text

from surge.analysis.regression import BaselineFinding, Comparison
from surge.present import numbers as fmt
from surge.present.terminal.summary import summary_console, summary_table

STYLE = {"regressed": "bold red", "improved": "green", "missing": "yellow"}
"""STYLE is the style of each verdict in the tables (none for ok)."""


def value_text(metric: str, value: float | None) -> str:
    """value_text is a metric's value as the baseline tables show it, by the one number formatter
    (surge.present.numbers): rates as percents, throughput per second, latencies in ms; its
    missing mark when not recorded."""
    if value is None:
        return fmt.MISSING
    if metric in ("success_rate", "failure_rate"):
        return fmt.percent(value)
    if metric == "responses_per_s":
        return f"{fmt.rate(value)}/s"
    return f"{fmt.ms(value)} ms"


def change_text(change: float | None) -> str:
    """change_text is a relative change as a signed percent with 1 decimal, ±∞ from a baseline
    of 0, '-' when a side lacks the figure."""
    if change is None:
        return fmt.MISSING
    if math.isinf(change):
        return "+∞" if change > 0 else "-∞"
    return f"{change:+.1%}"


def print_comparisons(comparisons: Sequence[Comparison], title: str) -> None:
    """print_comparisons prints each metric's baseline, current value, change and verdict."""
    table = summary_table(title, ("metric", "baseline", "current", "change", "verdict"), left=("metric", "verdict"))
    for c in comparisons:
        table.add_row(
            c.metric,
            value_text(c.metric, c.baseline),
            value_text(c.metric, c.current),
            change_text(c.change),
            Text(c.verdict, style=STYLE.get(c.verdict, "")),
        )
    summary_console().print(table)


def print_findings(findings: Sequence[BaselineFinding], metric_of: dict[str, str], title: str) -> None:
    """print_findings prints each metric judged over repeats (``metric_of`` maps a finding's
    figure to its metric): both sides' mean and n, the change, Welch's p, the verdict and why."""
    table = summary_table(
        title,
        ("metric", "baseline mean", "n", "current mean", "n", "change", "Welch p", "verdict", "why"),
        left=("metric", "verdict", "why"),
    )
    for f in findings:
        metric, c = metric_of[f.figure], f.comparison
        table.add_row(
            metric,
            value_text(metric, c.reference.mean if c.reference else None),
            str(c.reference.n if c.reference else 0),
            value_text(metric, c.variant.mean if c.variant else None),
            str(c.variant.n if c.variant else 0),
            change_text(f.change),
            fmt.general(c.welch_p),
            Text(f.verdict, style=STYLE.get(f.verdict, "")),
            f.reason,
        )
    summary_console().print(table)


def rule_text(base: int, current: int, tolerance: float, alpha: float) -> str:
    """rule_text says which rule judged the figures of ``base`` baseline runs against
    ``current`` runs: significance and the tolerance with repeats on both sides, the tolerance
    alone otherwise."""
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


def baseline_set_line(name: str, ids: Sequence[str], experiment_id: str | None, variant: str | None) -> str:
    """baseline_set_line is what ``surge baseline set`` prints: the one run stored as baseline
    ``name``, else how many runs, from which experiment (and variant), with their short ids."""
    source = f" (experiment {experiment_id[:8]}{f', variant {variant}' if variant else ''})" if experiment_id else ""
    if len(ids) == 1 and not experiment_id:
        return f"baseline '{name}': run {ids[0]}"
    return f"baseline '{name}': {len(ids)} run(s){source}: {', '.join(i[:8] for i in ids)}"
