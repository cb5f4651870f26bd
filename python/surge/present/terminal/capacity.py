"""Printing a capacity search from its experiment.json document alone (``surge capacity`` and
``surge show`` print the same): the rate found with its bracket, the step table as evidence,
each step's reasons, the notes and the SLO."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from surge.analysis.capacity import OUTCOME_WORDS, answer_text
from surge.core.redact import redact_text
from surge.present.terminal.experiment import ID_CHARS, heading
from surge.present.terminal.summary import summary_table
from surge.present.terminal.sweep import print_run_findings, slo_text

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


def _num(value: float | None, form: str) -> str:
    return "-" if value is None else format(value, form)


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
            _num(step["rate"], ",.1f"),
            _num(achieved, ",.1f"),
            _num(share, ".1%"),
            _num(step["p95_ms"], ",.3f"),
            _num(step["p99_ms"], ",.3f"),
            _num(step["failure_rate"], ".3%"),
            _num(step["late_share"], ".1%"),
            _verdict(step),
            str(step["run_id"] or "")[:ID_CHARS],
        )
    return table


def print_capacity(document: Mapping[str, Any], console: Console) -> None:
    """print_capacity prints a capacity search's record: heading, the answer (rate, bracket),
    the steps table, each step's reasons, the notes, the SLO and the runs' findings (the runs' table when there is no analysis)."""
    console.print(Text.assemble(("surge ", "bold cyan"), redact_text(heading(document))))
    analysis = document.get("analysis")
    if not analysis:
        from surge.present.terminal.experiment import runs_table

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
