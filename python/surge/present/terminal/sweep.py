"""Printing a sweep from its experiment.json document alone (``surge sweep`` and ``surge show``
print the same): the curve table with zones, each zone's reason, a bar chart of throughput
against load, the peak, the knee, the USL fit and the SLO."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from surge.analysis.sweep import failure_classes_text, findings, offered_text
from surge.core.redact import redact_text
from surge.diagnosis.findings import PREFIX
from surge.present.terminal.experiment import ID_CHARS, heading
from surge.present.terminal.summary import summary_table

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


def _num(value: float | None, form: str = ",.1f") -> str:
    return "-" if value is None else format(value, form)


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
        success = level.get("success_rate")
        table.add_row(
            offered_text(model, level["load"]),
            _num(level["responses_per_s"]),
            _num(level["successes_per_s"]),
            "-" if success is None else f"{success:.2%}",
            *(_num(level[k], ",.3f") for k in ("p50_ms", "p95_ms", "p99_ms")),
            failure_classes_text(level["failure_classes"]),
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
    for label, level in zip(labels, levels):
        x = level["responses_per_s"] or 0.0
        bar = "█" * (round(CHART_WIDTH * x / top) if top > 0 else 0)
        lines.append(
            Text.assemble(
                f"{label:>{width}} │", (bar, ZONE_STYLES.get(level["zone"], "")), f" {x:,.1f}/s {level['zone']}"
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
    """print_sweep prints a sweep's record: heading, curve table, zone reasons, chart, the
    peak, knee, USL and SLO lines, the runs' findings (the runs' table when there is no analysis)."""
    console.print(Text.assemble(("surge ", "bold cyan"), redact_text(heading(document))))
    analysis = document.get("analysis")
    if not analysis:
        from surge.present.terminal.experiment import runs_table

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
