"""Printing a stored run (``surge show``): its summary as it was printed after the run, from
the record alone; for a record without a result (a run killed outright) the intervals it
recorded; and a line saying so when the record is incomplete."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from surge.core.errors import BadInput
from surge.core.redact import redact_text
from surge.engine.result import RunResult
from surge.plan.heading import Heading
from surge.plan.thresholds import Verdict, parse_threshold
from surge.present import numbers as fmt
from surge.present.terminal.summary import (
    print_imported_summary,
    print_scenario_summary,
    print_summary,
    render_head,
    summary_console,
    summary_table,
)
from surge.record.figures import has_result
from surge.record.stored import StoredRun

NOT_FINISHED = "incomplete: the run did not finish"
"""NOT_FINISHED is the line ``surge show`` ends an incomplete record with (a stop signal's name
replaces it when one stopped the run)."""


def record_heading(run: StoredRun) -> Heading:
    """record_heading is the heading the record keeps (``meta.plan``), or for a record without
    one (an import) its tool and target."""
    meta = run.meta
    if isinstance(meta.get("plan"), dict):
        return Heading.from_dict(meta["plan"])
    target = meta.get("target") or run.summary.get("url") or ""
    return Heading(redact_text(f"{meta.get('tool') or 'surge'} {target}".strip()), False)


def stored_verdict(doc: dict[str, Any]) -> Verdict:
    """stored_verdict rebuilds a threshold's Verdict from its entry in a summary's ``thresholds``."""
    no_data: Literal["fail", "pass"] = "pass" if doc["status"] == "no-data" and doc.get("passed") else "fail"
    threshold = parse_threshold(
        doc["expr"],
        tag=doc.get("tag"),
        scenario=doc.get("scenario"),
        abort_on_fail=bool(doc.get("abort_on_fail")),
        delay_s=float(doc.get("delay_s") or 0.0),
        no_data=no_data,
    )
    return Verdict(threshold, doc["status"], doc.get("observed"), doc.get("note") or "")


def incomplete_line(run: StoredRun) -> str | None:
    """incomplete_line says why the record is incomplete, or None when it is complete."""
    if run.meta.get("complete"):
        return None
    signal = run.summary.get("stop_signal")
    if has_result(run.summary) and signal:
        return f"incomplete: stopped by {signal}: results are partial"
    return NOT_FINISHED


def _intervals_table(run: StoredRun) -> Any:
    rows = run.interval_rows()
    if not rows:
        return Text("no interval was recorded")
    table = summary_table(
        f"Intervals recorded ({fmt.count(len(rows))})",
        ("time s", "sent/s", "responses/s", "successes", "failures", "p50 ms", "p95 ms", "p99 ms", "max ms"),
    )
    for row in rows:
        table.add_row(
            row["time_s"],
            *(
                row[k]
                for k in (
                    "sent_per_s",
                    "responses_per_s",
                    "successes",
                    "failures",
                    "p50_ms",
                    "p95_ms",
                    "p99_ms",
                    "max_ms",
                )
            ),
        )
    return table


def _result(run: StoredRun) -> Any:
    """_result is the record's RunResult; BadInput naming summary.json and the field when the
    record (checked against the schema already) still does not make one."""
    try:
        return RunResult.model_validate(run.summary)
    except ValidationError as e:
        error = e.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        where = f"{run.directory}/summary.json" if run.directory else f"run {run.run_id}"
        raise BadInput(where, f"{field}: {error['msg']}") from None


def print_record(run: StoredRun, console: Console | None = None) -> None:
    """print_record prints ``run``'s summary as printed after it ran (the recorded intervals
    when it has no result), then a line when the record is incomplete."""
    console = console or summary_console()
    doc, plan = run.summary, record_heading(run)
    if run.meta.get("tool", "surge") != "surge" and has_result(doc):  # an import: printed as `surge import` did
        print_imported_summary(doc, run.meta, console)
    elif not has_result(doc):
        console.print(render_head(plan))
        console.print(_intervals_table(run))
    else:
        result = _result(run)
        verdicts = [stored_verdict(v) for v in doc.get("thresholds") or []]
        aborted = set(doc.get("aborted_by_threshold") or [])
        aborted_by = [v for v in verdicts if v.threshold.expr in aborted]
        if "thresholds" in doc and run.meta.get("scenario_sha256") is not None:  # a scenario file's document
            print_scenario_summary(
                result, plan, verdicts, aborted_by, console=console, interrupted_in=doc.get("interrupted_in")
            )
        else:  # a URL run's, with its --slo thresholds when it had some
            print_summary(result, plan, console, verdicts, aborted_by)
    line = incomplete_line(run)
    if line is not None:
        console.print(Text(line, style="bold yellow"))
