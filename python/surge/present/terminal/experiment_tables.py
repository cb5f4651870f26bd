"""Printing an experiment from its experiment.json document alone, so that the command and
``surge show EXPERIMENT`` print the same thing: PRINTERS maps each kind to its printer; a kind
without one gets the table of its runs.

- repeat and stats: the runs, the statistics, the flags and the verdicts;
- sweep: Printing a sweep from its experiment.json document alone (``surge sweep`` and ``surge show``
print the same): the curve table with zones, each zone's reason, a bar chart of throughput
against load, the peak, the knee, the USL fit and the SLO.
- capacity: Printing a capacity search from its experiment.json document alone (``surge capacity`` and
``surge show`` print the same): the rate found with its bracket, the step table as evidence,
each step's reasons, the notes and the SLO.
- compare: Printing a comparison (experiment kind ``compare``) from its experiment.json document alone:
the runs, one table per pair of variants, the verdicts in a line (saying when a difference may
be drift), the notes, the trends with run order, the variants × loads table, the scaling lines
with their warnings, the runs left out and the thresholds' verdict.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from surge.analysis.capacity_search import OUTCOME_WORDS, answer_text
from surge.analysis.curve import findings, offered_text
from surge.analysis.over_runs import verdict_line
from surge.core.redact import redact_text
from surge.diagnosis.findings import PREFIX
from surge.present import numbers as fmt
from surge.present.experiment_cells import (
    ID_CHARS,
    STAT_COLUMNS,
    comparison_sides,
    interval,
    level_cells,
    statistics_cells,
)
from surge.present.numbers import figure_with_spread, spread_decimals
from surge.present.terminal.summary import summary_console, summary_table
from surge.record.directory import KEPT, NOT_KEPT
from surge.record.figures import FIGURE_TITLES, KEY_FIGURES

RUN_COLUMNS = ("run", "id", "req/s", "p50 ms", "p95 ms", "p99 ms", "failure rate", "verdict")
"""RUN_COLUMNS are the columns of an experiment's table of runs."""


def cell(value: float | None, figure: str, spread: float | None = None) -> str:
    """cell formats a figure's value for a table: a key figure by its unit (with ``spread``, its
    SD over the runs, with the decimals the spread supports: report.numbers.figure_with_spread),
    a threshold's in six digits."""
    if figure not in KEY_FIGURES:
        return fmt.general(value)
    if spread is not None and figure != "failure_rate":
        return figure_with_spread(value, figure, spread)
    return fmt.figure(value, figure)


def runs_table(document: Mapping[str, Any]) -> Any:
    """runs_table is the table of the experiment's runs: label, id prefix, key figures, verdict
    (and how a run ended when its record is incomplete)."""
    runs = document["runs"]
    table = summary_table(f"Runs ({len(runs)})", RUN_COLUMNS, left=("run", "id", "verdict"))
    for entry in runs:
        f = entry.get("figures") or {}
        ended = "" if entry.get("complete") else f" (incomplete: {entry.get('stop_reason') or 'no result'})"
        table.add_row(
            str(entry["label"]),
            str(entry.get("run_id") or "")[:ID_CHARS],
            *(fmt.figure(f.get(k), k) for k in ("responses_per_s", "p50_ms", "p95_ms", "p99_ms", "failure_rate")),
            f"{entry.get('verdict') or 'none'}{ended}",
        )
    return table


def statistics_table(analysis: Mapping[str, Any]) -> Any:
    """statistics_table is one row per figure: n, mean, SD, the CI on the mean, median, min,
    max, CV (``-`` where it cannot be computed)."""
    level = fmt.level(analysis["confidence"])
    table = summary_table(
        f"Statistics over the runs (CI: {level} on the mean, Student's t)", STAT_COLUMNS, left=("figure",)
    )
    for figure, data in analysis["statistics"].items():
        table.add_row(*statistics_cells(figure, data, cell))
    return table


def print_over_runs(document: Mapping[str, Any], console: Console) -> None:
    """print_over_runs prints a repeat's or stats' record: the runs, the statistics, each flag
    with its advice, the runs left out and the thresholds' verdict."""
    console.print(runs_table(document))
    analysis = document.get("analysis")
    if not analysis:
        return
    console.print(statistics_table(analysis))
    advice_given: set[str] = set()
    for finding in document.get("findings") or []:
        console.print(Text.assemble(("flag ", "bold yellow"), finding["text"]))
        if finding["advice"] not in advice_given:  # each advice once, after the first flag it follows
            advice_given.add(finding["advice"])
            console.print(f"     {finding['advice']}")
    for left in analysis.get("left_out") or []:
        console.print(f"run {left['label']} is not in the statistics: {left['why']}")
    failed = [str(e["label"]) for e in document["runs"] if e.get("verdict") == "failed"]
    console.print(Text.assemble(("thresholds ", "bold"), verdict_line(analysis["verdicts"], failed)))


def heading(document: Mapping[str, Any]) -> str:
    """heading is the experiment's first line: kind, name, id prefix and what it was asked."""
    params = document.get("parameters") or {}
    asked = ", ".join(
        f"{k}={v}" for k, v in params.items() if k != "test" and v is not None and not isinstance(v, (dict, list))
    )  # None: not asked
    return f"{document['kind']} {document['name']} · experiment {document['experiment_id'][:ID_CHARS]}" + (
        f" · {asked}" if asked else ""
    )


def print_runs_only(document: Mapping[str, Any], console: Console) -> None:
    """print_runs_only prints the runs (a kind without a printer of its own)."""
    console.print(runs_table(document))


CURVE_COLUMNS = (
    "level",
    "throughput/s",
    "goodput/s",
    "success",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "failures",
    "zone",
    "run",
)
"""CURVE_COLUMNS are the columns of a sweep's curve table (docs/experiments.md)."""

CHART_WIDTH = 40
"""CHART_WIDTH is the length of the longest bar of the throughput chart, in characters."""

ZONE_STYLES = {"optimal": "green", "stress": "yellow", "degraded": "magenta", "broken": "red"}
"""ZONE_STYLES colour each zone on a terminal."""


def curve_table(analysis: Mapping[str, Any]) -> Any:
    """curve_table is one row per measured level: offered load, throughput, goodput, success
    rate, p50/p95/p99, failure classes, zone and the measured run's id prefix."""
    model = analysis["model"]
    table = summary_table(
        f"Sweep ({len(analysis['levels'])} of {len(analysis['planned'])} levels measured)",
        CURVE_COLUMNS,
        left=("level", "failures", "zone", "run"),
    )
    for level in analysis["levels"]:
        table.add_row(
            offered_text(model, level["load"]),
            *level_cells(level),
            Text(level["zone"], style=ZONE_STYLES.get(level["zone"], "")),
            str(level["run_id"])[:ID_CHARS],
        )
    return table


def chart_lines(analysis: Mapping[str, Any]) -> list[Text]:
    """chart_lines are a horizontal bar chart of throughput (and its zone) against load, one
    bar per measured level, the longest CHART_WIDTH characters."""
    levels = analysis["levels"]
    top = max((lv["responses_per_s"] or 0.0 for lv in levels), default=0.0)
    labels = [offered_text(analysis["model"], lv["load"]) for lv in levels]
    width = max((len(label) for label in labels), default=0)
    lines = []
    for label, level in zip(labels, levels, strict=True):
        x = level["responses_per_s"] or 0.0
        bar = "█" * (round(CHART_WIDTH * x / top) if top > 0 else 0)
        lines.append(
            Text.assemble(
                f"{label:>{width}} │", (bar, ZONE_STYLES.get(level["zone"], "")), f" {fmt.rate(x)}/s {level['zone']}"
            )
        )
    return lines


def slo_text(slo: Mapping[str, Any]) -> str:
    """slo_text says which SLO judged the levels: the conditions and where they came from."""
    conditions = ", ".join(
        f"{c['expr']}" + ("" if c["scope"] == "all" else f" [{c['scope']}]") for c in slo["conditions"]
    )
    if slo["source"] == "default":
        return (
            "SLO: none given (no --slo, no thresholds): the default SLO, p95 within 5× the lightest level's "
            "and failure rate ≤ 1%"
        )
    return f"SLO ({'the scenario thresholds' if slo['source'] == 'thresholds' else '--slo'}): {conditions}"


def print_run_findings(document: Mapping[str, Any], console: Console) -> None:
    """print_run_findings prints the findings lifted from the experiment's runs (their
    diagnosis: a saturated generator, queueing...), each with its advice."""
    for finding in document.get("findings") or []:
        if str(finding.get("kind", "")).startswith(PREFIX):
            console.print(Text.assemble(("finding ", "bold yellow"), finding["text"]))
            console.print(f"     {finding.get('advice', '')}")


def print_sweep(document: Mapping[str, Any], console: Console) -> None:
    """print_sweep prints a sweep's record: curve table, zone reasons, chart, the
    peak, knee, USL and SLO lines, the runs' findings (the runs' table when there is no analysis)."""
    analysis = document.get("analysis")
    if not analysis:
        console.print(runs_table(document))
        return
    model = analysis["model"]
    console.print(curve_table(analysis))
    for level in analysis["levels"]:
        console.print(
            Text.assemble(
                ("zone ", "bold"),
                f"{offered_text(model, level['load'])} ",
                (level["zone"], ZONE_STYLES.get(level["zone"], "")),
                f": {level['zone_reason']}",
            )
        )
    if analysis["levels"]:
        console.print(Text(f"Throughput against {'VUs' if model == 'closed' else 'offered rate'}", style="bold"))
        for line in chart_lines(analysis):
            console.print(line)
    for finding in findings(analysis):
        if finding["kind"] != "zones":
            console.print(finding["text"])
    console.print(Text.assemble(("slo ", "bold"), slo_text(analysis["slo"])))
    print_run_findings(document, console)


STEP_COLUMNS = (
    "step",
    "phase",
    "offered/s",
    "served/s",
    "served",
    "p95 ms",
    "p99 ms",
    "failure rate",
    "late",
    "verdict",
    "run",
)
"""STEP_COLUMNS are the columns of a capacity search's step table (docs/experiments.md)."""


def _verdict(step: Mapping[str, Any]) -> Text:
    # pass, fail (the target's), or the limit that was not the target's (older documents: pass/fail).
    outcome = step.get("outcome") or ("pass" if step["passed"] else "target")
    return Text(OUTCOME_WORDS.get(outcome, outcome), style={"pass": "green", "target": "red"}.get(outcome, "yellow"))


def steps_table(analysis: Mapping[str, Any]) -> Any:
    """steps_table is one row per step: number, phase, offered and achieved rate (and their
    ratio), p95, p99, failure rate, the share of late sends, the verdict (pass; fail: the
    target's; generator-limited or client-capped: not counted against the target) and the run's
    id prefix."""
    table = summary_table(f"Steps ({len(analysis['steps'])})", STEP_COLUMNS, left=("phase", "verdict", "run"))
    for step in analysis["steps"]:
        achieved = step["achieved_per_s"]
        share = achieved / step["rate"] if achieved is not None and step["rate"] > 0 else None
        table.add_row(
            str(step["number"]),
            step["phase"],
            fmt.rate(step["rate"]),
            fmt.rate(achieved),
            fmt.percent(share),
            fmt.ms(step["p95_ms"]),
            fmt.ms(step["p99_ms"]),
            fmt.percent(step["failure_rate"]),
            fmt.percent(step["late_share"]),
            _verdict(step),
            str(step["run_id"] or "")[:ID_CHARS],
        )
    return table


def print_capacity(document: Mapping[str, Any], console: Console) -> None:
    """print_capacity prints a capacity search's record: the answer (rate, bracket),
    the steps table, each step's reasons, the notes, the SLO and the runs' findings (the runs'
    table when there is no analysis)."""
    analysis = document.get("analysis")
    if not analysis:
        console.print(runs_table(document))
        return
    console.print(
        Text.assemble(
            ("capacity ", "bold green" if analysis["rate"] is not None else "bold red"),
            answer_text(analysis).removeprefix("capacity "),
        )
    )
    console.print(steps_table(analysis))
    for step in analysis["steps"]:
        reasons = step["failures"] if not step["passed"] else step["evidence"]
        console.print(
            Text.assemble((f"step {step['number']} ", "bold"), _verdict(step).plain, f": {'; '.join(reasons)}")
        )
    for note in analysis["notes"]:
        console.print(Text.assemble(("note ", "bold"), note))
    console.print(Text.assemble(("slo ", "bold"), slo_text(analysis["slo"])))
    print_run_findings(document, console)


VERDICT_STYLES = {"better": "green", "worse": "bold red", "different": "yellow"}
"""VERDICT_STYLES colours a verdict on a terminal."""


def _signed(value: float | None, figure: str, spread: float | None = None) -> str:
    if value is None:
        return fmt.MISSING
    if figure == "failure_rate":
        return f"{value:+.3%}"
    if figure in KEY_FIGURES:
        return f"{value:+,.{spread_decimals(spread, 3 if figure.endswith('_ms') else 1)}f}"
    return f"{value:+,.6g}"


def comparison_table(pair: Mapping[str, Any], confidence: float) -> Any:
    """comparison_table is one variant against the reference, a row per figure: each side's
    mean and CI, the difference, the ratio and its bootstrap CI, both p-values, the verdict."""
    ref, var = pair["reference"], pair["variant"]
    level = fmt.level(confidence)
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
        ratio_ci = c["ratio_ci"] or [None, None]
        verdict = c["verdict"] if c["verdict"] != "no significant difference" else "~ no significant difference"
        if c.get("may_be_drift"):
            verdict += " (may be drift)"
        spreads = [side["sd"] for side in (c["reference"], c["variant"]) if side and side.get("sd")]
        table.add_row(
            FIGURE_TITLES.get(f, f),
            *comparison_sides(c, cell),
            _signed(c["difference"], f, min(spreads, default=None)),
            fmt.general(c["ratio"]),
            interval(ratio_ci[0], ratio_ci[1], fmt.general),
            fmt.general(c["welch_p"]),
            fmt.general(c["mann_whitney_p"]),
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
        return fmt.MISSING
    sd = estimate.get("sd")
    mean = cell(estimate.get("mean"), figure, sd)
    return mean if sd is None else f"{mean} ± {cell(sd, figure, sd)}"


def grid_table(grid: Mapping[str, Any]) -> Any:
    """grid_table is the variants × loads table: a row per variant, per load its throughput
    (mean ± SD) and p95 (mean ± SD), then its scaling between consecutive loads (throughput
    ratio and efficiency = ratio / load ratio)."""
    loads = [f"{load:g}" for load in grid["loads"]]
    steps = [f"{a}→{b}" for a, b in itertools.pairwise(loads)]
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
                fmt.times(s["throughput_ratio"]),
                fmt.efficiency(s["efficiency"]),
            ]
        scaling += [fmt.MISSING] * (2 * len(steps) - len(scaling))
        table.add_row(str(row["variant"]), *figures, *scaling)
    return table


def print_comparison(document: Mapping[str, Any], console: Console) -> None:
    """print_comparison prints a compare experiment's record (the command's output)."""
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
        interval = (
            f" (efficiency {fmt.level(analysis['confidence'])} CI {fmt.efficiency(ci[0])}–{fmt.efficiency(ci[1])})"
            if ci
            else ""
        )
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


PRINTERS: dict[str, Callable[[Mapping[str, Any], Console], None]] = {
    "repeat": print_over_runs,
    "stats": print_over_runs,
    "sweep": print_sweep,
    "capacity": print_capacity,
    "compare": print_comparison,
}
"""PRINTERS maps an experiment kind to the function printing its record after its heading
(print_experiment prints that line)."""


def print_experiment(document: Mapping[str, Any], console: Console | None = None) -> None:
    """print_experiment prints the experiment as its command did: its heading (kind, name, id
    prefix, what was asked), its kind's printer (PRINTERS), then a line when it is incomplete."""
    console = console or summary_console()
    console.print(Text.assemble(("surge ", "bold cyan"), redact_text(heading(document))))
    PRINTERS.get(str(document.get("kind")), print_runs_only)(document, console)
    if not document.get("complete"):
        signal = document.get("stop_signal")
        why = f"stopped by {signal}" if signal else "it did not finish"
        done = sum(1 for e in document["runs"] if e.get("complete"))
        kept = KEPT if document.get("directory") else NOT_KEPT  # no directory: --no-save
        console.print(Text(f"experiment incomplete: {why}; {done} completed run(s) {kept}", style="bold yellow"))
