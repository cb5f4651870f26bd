"""``surge run URL`` and ``surge run FILE.yaml``: the flags parsed, one call to the run session
(``surge.run.session.run_test``: checks each flag, runs, records), then its summary or JSON
document, where the results are, and its exit code."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

import click

from surge.cli.exit import finish
from surge.cli.options import json_option
from surge.cli.test_options import test_options
from surge.core import signals
from surge.core.redact import redact_text
from surge.run.session import RunEnd, RunOptions, run_test
from surge.run.sinks import IntervalSink, TerminalProgress
from surge.run.spec import TestSpec


class PhaseLines:
    """PhaseLines is the IntervalSink that says on stderr how each unmeasured phase (setup,
    teardown) went, as it ends; above the live view when ``live`` is drawing it."""

    def __init__(self, live: TerminalProgress | None = None) -> None:
        self.live = live

    def start(self, planned_s: float) -> None:
        """start says nothing."""

    def on_phase(self, name: str, result: Mapping[str, Any]) -> None:
        """on_phase prints the phase's line: requests, failures, what it captured."""
        # Function-local: Rich loads only when a scenario file has a setup or teardown.
        from rich.console import Console
        from rich.text import Text

        r = result["requests"]
        pools = ", ".join(f"{k} ({len(v):,} values)" for k, v in result.get("pools", {}).items())
        stopped = {"interrupted": " · interrupted", "unreachable": " · did not run: target not reachable"}.get(
            result["stop_reason"], ""
        )
        console = self.live.console() if self.live is not None else None
        (console or Console(stderr=True)).print(
            Text.assemble(
                (name, "bold"),
                redact_text(
                    f": {r['sent']:,} requests, {r['failed']:,} failed{stopped}"
                    f"{' · captured ' + pools if pools else ''} (not in the measured results)"
                ),
            )
        )

    def on_interval(self, interval: Mapping[str, Any]) -> None:
        """on_interval says nothing: the live view shows the measured run."""

    def finish(self) -> None:
        """finish says nothing."""


def print_run(end: RunEnd, json_output: bool) -> None:
    """print_run prints a finished run: its JSON document on stdout (``json_output``), else its
    summary (a URL run's with its --slo thresholds, or a scenario file's with its scenarios, tags,
    checks and thresholds);
    then where its results are, on stderr. A target not reachable prints only where."""
    if end.error is None:
        if json_output:
            sys.stdout.write(json.dumps(end.document) + "\n")
            sys.stdout.flush()
        else:
            # Function-local: Rich and the result models load once the engine has returned.
            from surge.engine.result import RunResult
            from surge.present.terminal.summary import print_scenario_summary, print_summary

            result, run = RunResult.model_validate(end.run.main), end.run
            if end.prepared.url_plan is not None:
                print_summary(result, end.prepared.url_plan, verdicts=run.verdicts, aborted_by=run.aborted_by)
            else:
                print_scenario_summary(
                    result, end.prepared.heading, run.verdicts, run.aborted_by, interrupted_in=run.interrupted_in
                )
    if end.directory is not None:
        print(f"results: {end.directory}", file=sys.stderr, flush=True)


@click.command("run")
@test_options
@json_option("Print the summary as one JSON document on stdout.")
@click.option(
    "--junit",
    "junit",
    metavar="FILE",
    help="Write the thresholds' and checks' verdicts to FILE as JUnit XML (for CI), also when a threshold "
    "fails or the run is stopped.",
)
def run_command(test: TestSpec, json_output: bool, junit: str | None) -> None:
    """Run a load test against URL, or the scenarios of a YAML file, and print a summary."""
    sinks: list[IntervalSink] = []
    if not json_output:
        live = TerminalProgress() if sys.stderr.isatty() else None
        sinks.append(PhaseLines(live))
        if live is not None:
            sinks.append(live)
    end = run_test(test, RunOptions.of(test, junit=junit), stderr=sys.stderr, sinks=sinks)
    # The record is complete before anything is printed: a print that fails or blocks (a closed
    # pipe, a full disk) costs the output, never the record (surge.core.streams).
    with signals.deferred():
        print_run(end, json_output)
    if end.error is not None:
        raise end.error
    finish(end.outcome)
