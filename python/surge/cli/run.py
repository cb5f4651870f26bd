"""``surge run URL`` and ``surge run FILE.yaml``: flags checked (each error naming its flag),
then the run, its summary or JSON document, and its exit code."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from surge.cli.errors import finish
from surge.cli.options import check_no_save
from surge.cli.test_options import test_options
from surge.core import signals
from surge.core.errors import BadInput, UnreachableError
from surge.core.exit_codes import Outcome
from surge.core.redact import redact_text
from surge.diagnosis.findings import watch_process
from surge.engine.document import result_document
from surge.plan.url import NOTHING_SENT
from surge.record.directory import check_out
from surge.run.phases import NOTHING_SENT as FILE_NOTHING_SENT
from surge.run.phases import CompiledRun, RunOutcome, planned_s, unreachable_outcome
from surge.run.spec import TestSpec

if TYPE_CHECKING:
    from surge.diagnosis.watch import TargetWatch
    from surge.history import History
    from surge.plan.heading import PlanLike
    from surge.plan.model import Plan
    from surge.record import RecordWriter


RunHook = Callable[[RunOutcome], None]
"""RunHook is given a finished run's outcome after its summary is printed (``surge demo``'s
per-second view)."""

DocumentHook = Callable[[dict[str, Any]], None]
"""DocumentHook is given a finished run's result document (secrets masked, as summary.json holds
it less ``meta``), also for a target not reachable (an experiment's runner keeps it)."""


def execute(
    compiled: CompiledRun,
    *,
    threads: int | None,
    json_output: bool,
    url_plan: Plan | None = None,
    recorder: RecordWriter | None = None,
    junit: Path | None = None,
    after_summary: RunHook | None = None,
    quiet: bool = False,
    on_document: DocumentHook | None = None,
    watch: TargetWatch | None = None,
) -> Outcome:
    """execute runs ``compiled`` (a scenario file's, or with ``url_plan`` the one a URL's flags
    made) with progress display and summary (or the JSON document); returns the Outcome (exit
    code and why). ``url_plan`` describes a URL run in its summary. ``recorder`` (unless
    --no-save) writes the results directory as the run goes and is named on stderr at the end;
    ``junit`` is where the thresholds' and checks' verdicts go as JUnit XML; ``after_summary``
    sees the outcome once the summary is printed; ``watch`` samples the target's process during
    the run (--watch-pid, docs/diagnosis.md). Every finished run gets its findings
    (``surge.diagnosis``). A target not reachable at the start still completes the record and
    the JUnit file (nothing sent) before UnreachableError goes on. ``quiet`` (an experiment's
    runs) prints neither the summary, the phase lines nor where the results are (the progress
    display on a terminal stays); ``on_document`` gets the result document before the record
    is finished."""
    nothing_sent = NOTHING_SENT if url_plan is not None else FILE_NOTHING_SENT
    if recorder is not None:
        recorder.begin()
        if watch is not None:
            recorder.target_sample = watch.latest
    try:
        if watch is not None:
            watch.start()
        try:
            outcome = _run(compiled, threads, json_output, recorder, quiet)
        finally:
            if watch is not None:
                watch.stop()
    except UnreachableError as e:
        with signals.deferred():
            outcome = unreachable_outcome(compiled, str(e.args[0]) if e.args else str(e))
            doc = _document(outcome, url_plan)
            if on_document is not None:
                on_document(doc)
            _finish_record(recorder, outcome, doc, quiet)
            _write_junit(junit, recorder, doc, outcome, error=doc["error"])
        raise
    # Once the engine has returned, a stop signal waits for the results to be recorded and printed.
    with signals.deferred():
        from surge.diagnosis.findings import attach_diagnosis

        attach_diagnosis(outcome.main, url_plan if url_plan is not None else compiled.main, watch)
        # The record is complete before anything is printed: a print that fails or blocks (a
        # closed pipe, a full disk) costs the output, never the record (surge.core.streams).
        doc = _document(outcome, url_plan)  # masked, without the per-interval histograms
        if on_document is not None:
            on_document(doc)
        _finish_record(recorder, outcome, doc, quiet=True)
        _write_junit(junit, recorder, doc, outcome)  # after the record: a FIFO may keep it waiting
        if json_output:
            sys.stdout.write(json.dumps(doc) + "\n")
            sys.stdout.flush()
        elif not quiet:
            _print_summary(outcome, compiled, url_plan)
        if after_summary is not None:
            after_summary(outcome)
        if recorder is not None and not quiet:
            _say_where(recorder)
    return outcome.outcome(nothing_sent=nothing_sent, name_phase=url_plan is None)


def _run(
    compiled: CompiledRun, threads: int | None, json_output: bool, recorder: RecordWriter | None, quiet: bool = False
) -> RunOutcome:
    """_run runs the phases, telling the recorder, the progress display (when stderr is a
    terminal and the output is not --json) and stderr's phase lines (unless ``quiet``) as it goes."""
    from surge.run.phases import run_phases

    def on_phase(name: str, result: dict[str, Any]) -> None:
        if recorder is not None:
            recorder.on_phase(name, result)
        if not (json_output or quiet):
            _print_phase(name, result)

    record_interval = recorder.on_interval if recorder is not None else None
    # Rich and the result models load only once the engine has returned (they would count in
    # the run's peak RSS), or before when a terminal shows the progress display.
    if json_output or not sys.stderr.isatty():
        return run_phases(compiled, threads=threads, on_phase=on_phase, on_interval=record_interval)
    from surge.engine.result import Interval
    from surge.present.terminal.progress import Progress

    with Progress(planned_s(compiled.main)) as progress:

        def on_interval(interval: dict[str, Any]) -> None:
            if record_interval is not None:
                record_interval(interval)
            progress.update(Interval.model_validate(interval))

        return run_phases(compiled, threads=threads, on_phase=on_phase, on_interval=on_interval)


def _print_summary(outcome: RunOutcome, compiled: CompiledRun, url_plan: Plan | None) -> None:
    """_print_summary prints the run's summary: a URL run's, or a scenario file's with its
    scenarios, tags, checks and thresholds."""
    from surge.engine.result import RunResult
    from surge.present.terminal.summary import print_scenario_summary, print_summary

    result = RunResult.model_validate(outcome.main)
    if url_plan is not None:
        print_summary(result, url_plan)
    else:
        print_scenario_summary(
            result, compiled.main, outcome.verdicts, outcome.aborted_by, interrupted_in=outcome.interrupted_in
        )


def _document(outcome: RunOutcome, url_plan: Plan | None) -> dict[str, Any]:
    """_document is the run's ``--json`` document: a URL run's is the engine's result as it is
    (secrets masked); a scenario file's adds thresholds and the setup/teardown summaries."""
    doc = result_document(outcome.main) if url_plan is not None else outcome.document()
    if outcome.error is not None:
        doc["error"] = redact_text(outcome.error)
    return doc


def _write_junit(
    junit: Path | None,
    recorder: RecordWriter | None,
    doc: dict[str, Any],
    outcome: RunOutcome,
    *,
    error: str | None = None,
) -> None:
    """_write_junit writes the --junit file, if asked; a failure to write it is one warning."""
    if junit is None:
        return
    from surge.run.junit import write_junit

    name = recorder.meta["name"] if recorder is not None else "surge run"
    try:
        write_junit(junit, name, doc, outcome.verdicts, error=error)
    except OSError as e:
        print(f"surge: warning: --junit: cannot write {junit}: {e.strerror or e}", file=sys.stderr, flush=True)


def _finish_record(
    recorder: RecordWriter | None, outcome: RunOutcome, doc: dict[str, Any], quiet: bool = False
) -> None:
    """_finish_record completes the results directory with the result and says where it is
    (unless ``quiet``)."""
    if recorder is None:
        return
    recorder.finish(doc, interrupted=outcome.interrupted_in is not None or signals.received() is not None)
    if not quiet:
        _say_where(recorder)


def _say_where(recorder: RecordWriter) -> None:
    """_say_where names the run's results directory on stderr (``results: DIR``)."""
    print(f"results: {recorder.directory}", file=sys.stderr, flush=True)


def check_junit(junit: str | None) -> Path | None:
    """check_junit refuses, before the run, a --junit path that is a directory or whose
    directory does not exist."""
    if junit is None:
        return None
    path = Path(junit)
    if path.is_dir():
        raise BadInput("--junit", f"{junit} is a directory")
    if not path.parent.is_dir():
        raise BadInput("--junit", f"{path.parent} does not exist (create it, or choose another file)")
    return path


def make_recorder(
    out: str | None,
    no_save: bool,
    target: str,
    scenario_file: Path | None,
    target_url: str,
    tags: dict[str, str] | None = None,
    *,
    name: str | None = None,
    results: Path | None = None,
    db: str | None = None,
    plan: PlanLike | None = None,
    keep_meta: bool = False,
    lock: bool = True,
) -> RecordWriter | None:
    """make_recorder creates the run's results directory (``--out``, or a new one under
    ``results`` (default ``results/``) named after ``name`` or the target) and its RecordWriter
    (with the user's ``tags``), recording into the history ``db`` names too (--db). With
    --no-save: None, or with ``keep_meta`` (an experiment's run, whose entry is made of its
    ``meta``) a RecordWriter that writes nothing, neither directory nor history. ``plan``'s
    heading is kept (``meta.plan``) for ``surge show``. ``lock`` False leaves ``out`` unlocked
    (an experiment's run, inside the experiment's locked directory)."""
    if no_save and not keep_meta:
        return None
    from datetime import datetime

    from surge.plan.heading import heading
    from surge.record import RecordWriter, create_directory, run_name
    from surge.record.directory import RESULTS_DIR

    history = None if no_save else open_run_history(db)
    name = name or run_name(target, scenario_file)
    directory = (
        None if no_save else create_directory(out, name, datetime.now(UTC), results or Path(RESULTS_DIR), lock=lock)
    )
    recorder = RecordWriter(
        directory, name=name, target_url=target_url, scenario_file=scenario_file, tags=tags, history=history
    )
    if plan is not None:
        recorder.meta["plan"] = heading(plan).to_dict()
    return recorder


def open_run_history(db: str | None) -> History | None:
    """open_run_history opens the history a run (or an import) records into; one a newer surge
    wrote refuses the run (exit 2), one that cannot be opened costs a warning line, not the run."""
    from surge.history import HistoryUnavailable, open_history

    try:
        return open_history(db)
    except HistoryUnavailable as e:
        print(
            redact_text(f"surge: warning: {e}; this run is recorded only in its results directory"),
            file=sys.stderr,
            flush=True,
        )
        return None


def _print_phase(name: str, result: dict[str, Any]) -> None:
    """_print_phase says on stderr how an unmeasured phase (setup, teardown) went."""
    from rich.console import Console
    from rich.text import Text

    r = result["requests"]
    pools = ", ".join(f"{k} ({len(v):,} values)" for k, v in result.get("pools", {}).items())
    stopped = {"interrupted": " · interrupted", "unreachable": " · did not run: target not reachable"}.get(
        result["stop_reason"], ""
    )
    Console(stderr=True).print(
        Text.assemble(
            (name, "bold"),
            redact_text(
                f": {r['sent']:,} requests, {r['failed']:,} failed{stopped}"
                f"{' · captured ' + pools if pools else ''} (not in the measured results)"
            ),
        )
    )


@click.command("run")
@test_options
@click.option("--json", "json_output", is_flag=True, help="Print the summary as one JSON document on stdout.")
@click.option(
    "--junit",
    "junit",
    metavar="FILE",
    help="Write the thresholds' and checks' verdicts to FILE as JUnit XML (for CI), also when a threshold "
    "fails or the run is stopped.",
)
def run_command(test: TestSpec, json_output: bool, junit: str | None) -> None:
    """Run a load test against URL, or the scenarios of a YAML file, and print a summary."""
    check_no_save(test.no_save, {"--out": test.out, "--db": test.db})
    check_out(test.out)
    junit_path = check_junit(junit)
    watch = watch_process(test.watch_pid)
    prepared = test.prepare()
    recorder = make_recorder(
        test.out,
        test.no_save,
        test.target,
        prepared.scenario_file,
        prepared.target_url,
        test.tag_dict,
        db=test.db,
        plan=prepared.heading,
    )
    finish(
        execute(
            prepared.compiled,
            threads=prepared.threads,
            json_output=json_output,
            url_plan=prepared.url_plan,
            junit=junit_path,
            recorder=recorder,
            watch=watch,
        )
    )
