"""Printing a comparison (experiment kind ``compare``) from its experiment.json document alone:
the runs, one table per pair of variants, the verdicts in a line (saying when a difference may
be drift), the notes, the trends with run order, the variants × loads table, the scaling lines
with their warnings, the runs left out and the thresholds' verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from surge.analysis.over_runs import verdict_line
from surge.core.redact import redact_text
from surge.present.numbers import spread_decimals
from surge.present.terminal.experiment import cell, heading, runs_table
from surge.present.terminal.summary import summary_table
from surge.record.figures import FIGURE_TITLES, KEY_FIGURES

VERDICT_STYLES = {"better": "green", "worse": "bold red", "different": "yellow"}
"""VERDICT_STYLES colours a verdict on a terminal."""


def _signed(value: float | None, figure: str, spread: float | None = None) -> str:
    if value is None:
        return "-"
    if figure == "failure_rate":
        return f"{value:+.3%}"
    if figure in KEY_FIGURES:
        return f"{value:+,.{spread_decimals(spread, 3 if figure.endswith('_ms') else 1)}f}"
    return f"{value:+,.6g}"


def _interval(low: float | None, high: float | None, form: Any) -> str:
    return "-" if low is None or high is None else f"{form(low)} – {form(high)}"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def comparison_table(pair: Mapping[str, Any], confidence: float) -> Any:
    """comparison_table is one variant against the reference, a row per figure: each side's
    mean and CI, the difference, the ratio and its bootstrap CI, both p-values, the verdict."""
    ref, var = pair["reference"], pair["variant"]
    level = f"{confidence:.0%}"
    columns = (
        "figure",
        f"{ref} mean",
        f"{ref} CI",
        f"{var} mean",
        f"{var} CI",
        "difference",
        "ratio",
        "ratio CI",
        "Welch p",
        "MW p",
        "verdict",
    )
    alpha = pair["alpha"]
    table = summary_table(
        f"{var} against {ref} (reference): means with {level} CI (Student's t), difference "
        f"{var} − {ref}, ratio {var} / {ref} with {level} CI (bootstrap), α = {alpha:g}",
        columns,
        left=("figure", "verdict"),
    )
    for c in pair["figures"]:
        f = c["figure"]
        sides = []
        for side in (c["reference"], c["variant"]):
            sd = None if side is None else side.get("sd")
            sides += (
                ["-", "-"]
                if side is None
                else [
                    cell(side["mean"], f, sd),
                    _interval(side["ci_low"], side["ci_high"], lambda v, f=f, sd=sd: cell(v, f, sd)),
                ]
            )
        ratio_ci = c["ratio_ci"] or [None, None]
        verdict = c["verdict"] if c["verdict"] != "no significant difference" else "~ no significant difference"
        if c.get("may_be_drift"):
            verdict += " (may be drift)"
        spreads = [side["sd"] for side in (c["reference"], c["variant"]) if side and side.get("sd")]
        table.add_row(
            FIGURE_TITLES.get(f, f),
            *sides,
            _signed(c["difference"], f, min(spreads, default=None)),
            "-" if c["ratio"] is None else f"{c['ratio']:.3f}",
            _interval(ratio_ci[0], ratio_ci[1], lambda v: f"{v:.3f}"),
            _p(c["welch_p"]),
            _p(c["mann_whitney_p"]),
            Text(verdict, style=VERDICT_STYLES.get(c["verdict"], "")),
        )
    return table


def verdicts_line(pair: Mapping[str, Any]) -> str:
    """verdicts_line sums up one variant against the reference: the figures better, worse,
    different, and how many show no significant difference or were not tested."""
    parts = []
    for verdict in ("better", "worse", "different"):
        figures = [FIGURE_TITLES.get(c["figure"], c["figure"]) for c in pair["figures"] if c["verdict"] == verdict]
        if figures:
            parts.append(f"{verdict} in {', '.join(figures)}")
    for verdict in ("no significant difference", "not tested"):
        count = sum(1 for c in pair["figures"] if c["verdict"] == verdict)
        if count:
            parts.append(f"{verdict} in {count} figure(s)")
    line = f"{pair['variant']} against {pair['reference']}: " + "; ".join(parts)
    if pair.get("drift") and any(c.get("may_be_drift") for c in pair["figures"]):
        line += " — the difference may be drift: " + "; ".join(pair["drift"])
    return line


def _mean_sd(estimate: Mapping[str, Any] | None, figure: str) -> str:
    if not estimate:
        return "-"
    sd = estimate.get("sd")
    mean = cell(estimate.get("mean"), figure, sd)
    return mean if sd is None else f"{mean} ± {cell(sd, figure, sd)}"


def grid_table(grid: Mapping[str, Any]) -> Any:
    """grid_table is the variants × loads table: a row per variant, per load its throughput
    (mean ± SD) and p95 (mean ± SD), then its scaling between consecutive loads (throughput
    ratio and efficiency = ratio / load ratio)."""
    loads = [f"{load:g}" for load in grid["loads"]]
    steps = [f"{a}→{b}" for a, b in zip(loads, loads[1:])]
    columns = (
        "variant",
        *(f"{head} @{load}" for load in loads for head in ("req/s", "p95 ms")),
        *(f"{head} {step}" for step in steps for head in ("throughput", "efficiency")),
    )
    table = summary_table(
        "Variants × loads (means ± SD over each cell's runs; efficiency = throughput ratio / load ratio)",
        columns,
        left=("variant",),
    )
    for row in grid["rows"]:
        figures = [_mean_sd(c.get(f), f) for c in row["cells"] for f in ("responses_per_s", "p95_ms")]
        scaling = []
        for s in row["scaling"]:
            scaling += [
                "-" if s["throughput_ratio"] is None else f"{s['throughput_ratio']:.2f}×",
                "-" if s["efficiency"] is None else f"{s['efficiency']:.0%}".replace("%", " %"),
            ]
        scaling += ["-"] * (2 * len(steps) - len(scaling))
        table.add_row(str(row["variant"]), *figures, *scaling)
    return table


def print_comparison(document: Mapping[str, Any], console: Console) -> None:
    """print_comparison prints a compare experiment's record (the command's output)."""
    console.print(Text.assemble(("surge ", "bold cyan"), redact_text(heading(document))))
    console.print(runs_table(document))
    analysis = document.get("analysis")
    if not analysis:
        return
    for pair in analysis["comparisons"]:
        console.print(comparison_table(pair, analysis["confidence"]))
    if analysis.get("grid"):
        console.print(grid_table(analysis["grid"]))
    for pair in analysis["comparisons"]:
        console.print(Text.assemble(("verdict ", "bold"), verdicts_line(pair)))
        floor = pair.get("mann_whitney_floor")
        for c in pair["figures"]:
            if floor is not None and floor >= pair["alpha"] and "disagree" in c["note"]:
                continue  # said once, in the few_runs flag below
            if c["note"] and c["verdict"] != "not tested":
                console.print(f"note {pair['variant']} {FIGURE_TITLES.get(c['figure'], c['figure'])}: {c['note']}")
    for s in analysis["scaling"]:
        ci = s["efficiency_ci"]
        interval = f" (efficiency {analysis['confidence']:.0%} CI {ci[0]:.0%}–{ci[1]:.0%})" if ci else ""
        console.print(Text.assemble(("scaling ", "bold"), f"{s['light']} → {s['heavy']}: {s['text']}{interval}"))
        for warning in s["warnings"]:
            console.print(Text.assemble(("warning ", "bold yellow"), warning))
    for finding in document.get("findings") or []:
        if finding["kind"] in ("not_tested", "few_runs", "drift"):
            console.print(Text.assemble(("flag ", "bold yellow"), finding["text"]))
    for left in analysis.get("left_out") or []:
        console.print(f"run {left['label']} is not in the comparison: {left['why']}")
    failed = [str(e["label"]) for e in document["runs"] if e.get("verdict") == "failed"]
    console.print(Text.assemble(("thresholds ", "bold"), verdict_line(analysis["verdicts"], failed)))
