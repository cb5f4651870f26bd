"""The run session: the one path of every run, a ``surge run`` or a run inside an experiment.
Given a test (``run_test``: a TestSpec, checked and prepared here) or a prepared one
(``run_prepared``) and its RunOptions, it opens the record (results directory + history), runs
the phases streaming each interval to the record and to the sinks it is handed
(``surge.run.sinks``), attaches the diagnosis, finishes the record, and only then writes the
reports (report.md, report.html: outside the load, after summary.json is complete) and the JUnit
file. It prints nothing but its warnings, on the ``stderr`` it is handed; it returns a RunEnd,
what the caller prints (the summary, the JSON document, where the results are)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from surge.core import signals
from surge.core.errors import BadInput
from surge.core.exit_codes import Outcome
from surge.core.redact import redact_text
from surge.diagnosis.findings import attach_diagnosis, watch_process
from surge.engine.execute import UnreachableError, result_document
from surge.plan.heading import heading
from surge.plan.url import NOTHING_SENT
from surge.record.directory import RESULTS_DIR, check_out
from surge.run.flags import check_no_save
from surge.run.phases import NOTHING_SENT as FILE_NOTHING_SENT
from surge.run.phases import RunOutcome, StopRule, unreachable_outcome
from surge.run.sinks import COMMAND_VIEW, LOCAL, IntervalSink, PhaseRunner, run_streamed
from surge.run.spec import PreparedRun, TestSpec

if TYPE_CHECKING:
    from surge.diagnosis.watch import TargetWatch
    from surge.history import History
    from surge.record import RecordWriter
    from surge.run.export import ExportSink


@dataclass(frozen=True)
class RunOptions:
    """RunOptions: how a run is kept, besides the test itself. ``save`` False (--no-save) writes
    nothing; ``out`` is its results directory (else a new one under ``results``, default
    ``results/``, named after ``name`` or the target), recorded in the history ``db`` names
    (--db), labelled with ``tags``; ``watch_pid`` is the process sampled during the run
    (--watch-pid); ``junit`` the JUnit file (--junit). An experiment's run sets ``experiment``
    (its ``meta.experiment``: with --no-save the run then keeps its ``meta`` without writing
    anything), ``lock`` False (its directory sits inside the experiment's locked one) and
    ``reports`` False for a warm-up run (no report.md or report.html)."""

    save: bool = True
    out: str | None = None
    db: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    watch_pid: int | None = None
    junit: str | Path | None = None
    name: str | None = None
    results: Path | None = None
    reports: bool = True
    lock: bool = True
    experiment: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, test: TestSpec, **more: Any) -> RunOptions:
        """of are the options ``test``'s own flags give (--no-save, --out, --db, --tag,
        --watch-pid), with ``more`` (junit, name...) on top."""
        return cls(
            save=not test.no_save,
            out=test.out,
            db=test.db,
            tags=test.tag_dict,
            watch_pid=test.watch_pid,
            **more,
        )


@dataclass(frozen=True)
class RunEnd:
    """RunEnd: a finished run, as its caller prints it: the ``prepared`` run, its ``run``
    (phases, verdicts), its result ``document`` (secrets masked, as summary.json holds it less
    ``meta``), the ``outcome`` (exit code and why), its record's ``meta`` and results
    ``directory`` (None: nothing written), whether the history holds it (``in_history``), and
    ``error``, the UnreachableError when its target was not reachable at the start (the record
    and the JUnit file are complete all the same)."""

    prepared: PreparedRun
    run: RunOutcome
    document: dict[str, Any]
    outcome: Outcome
    meta: dict[str, Any] | None
    directory: Path | None
    in_history: bool
    error: UnreachableError | None = None


def run_test(
    test: TestSpec,
    options: RunOptions,
    *,
    stderr: IO[str],
    sinks: Sequence[IntervalSink] = (),
    runner: PhaseRunner | None = None,
) -> RunEnd:
    """run_test checks the run's flags (BadInput naming the flag, before anything is written:
    --out or --db with --no-save, --out, --junit, --watch-pid), prepares ``test`` and runs it
    (``run_prepared``) with ``runner``: by default the test's own (``TestSpec.runner``: this
    machine, or with --ray a Ray cluster's generators, connected before anything is written)."""
    check_no_save(not options.save, {"--out": options.out, "--db": options.db})
    check_out(options.out)
    junit = check_junit(options.junit)
    watch = watch_process(options.watch_pid)
    prepared = test.prepare()
    if runner is None:
        runner = test.runner()
    return run_prepared(prepared, replace(options, junit=junit), stderr=stderr, sinks=sinks, runner=runner, watch=watch)


def run_prepared(
    prepared: PreparedRun,
    options: RunOptions,
    *,
    stderr: IO[str],
    sinks: Sequence[IntervalSink] = (),
    runner: PhaseRunner = LOCAL,
    watch: TargetWatch | None = None,
    stop_rule: StopRule | None = None,
) -> RunEnd:
    """run_prepared runs ``prepared`` (the module's steps) with ``runner`` (the engine here, by
    default), handing its stream to ``sinks``, to its --export pushes and to the command's
    CommandView, when one follows it (``surge.run.sinks.COMMAND_VIEW``); ``watch`` samples the
    target's process (None: the one ``options.watch_pid`` names, or none); ``stop_rule`` may
    end the measured run early (an experiment's over-saturation rule). A stop signal ends
    the run keeping its results (``run.interrupted_in``); once the engine has returned, a stop
    signal waits for the record, the reports and the JUnit file."""
    url_plan = prepared.url_plan
    view = COMMAND_VIEW.get()
    if view is not None:  # --dashboard: the run followed live, its thresholds judged as it sends
        label = str(options.experiment["role"]) if options.experiment is not None else options.name or prepared.name
        sinks = [*sinks, view.run_sink(label, prepared.compiled.thresholds)]
    recorder = _recorder(prepared, options, stderr)
    exporters = _export_sinks(prepared, recorder, stderr)
    history_kept = False
    if watch is None and options.watch_pid is not None:
        watch = watch_process(options.watch_pid)
    if recorder is not None:
        recorder.begin()
        if watch is not None:
            recorder.target_sample = watch.latest
    error: UnreachableError | None = None
    try:
        try:
            if watch is not None:
                watch.start()
            try:
                streamed = [_RecordSink(recorder), *sinks] if recorder is not None else list(sinks)
                streamed += exporters
                run = run_streamed(runner, prepared.compiled, prepared.threads, prepared.planned_s, streamed, stop_rule)
            finally:
                if watch is not None:
                    watch.stop()
        except UnreachableError as e:
            error = e
            run = unreachable_outcome(prepared.compiled, str(e.args[0]) if e.args else str(e))
        # Once the engine has returned, a stop signal waits for the results to be recorded.
        with signals.deferred():
            if error is None:
                attach_diagnosis(run.main, url_plan if url_plan is not None else prepared.compiled.main, watch)
            # masked, without the per-interval histograms; a URL run with thresholds (--slo) has its verdicts
            doc = _document(run, url_plan is not None and not prepared.compiled.thresholds)
            if recorder is not None:
                interrupted = run.interrupted_in is not None or signals.received() is not None
                recorder.finish(doc, interrupted=interrupted)
                history_kept = recorder.history is not None
                if options.reports and options.save:
                    write_reports(recorder, stderr)
            # After the record: a slow receiver never delays it.
            for exporter in exporters:  # the figures per scenario and tag, which the stream has not
                exporter.push_result(doc)
            # After the record and its reports: a FIFO may keep the JUnit file waiting.
            junit = None if options.junit is None else Path(options.junit)
            _write_junit(junit, recorder, doc, run, stderr, error=doc.get("error") if error else None)
    finally:
        if recorder is not None and recorder.history is not None:
            recorder.history.close()
    nothing_sent = NOTHING_SENT if url_plan is not None else FILE_NOTHING_SENT
    end = RunEnd(
        prepared,
        run,
        doc,
        run.outcome(nothing_sent=nothing_sent, name_phase=url_plan is None),
        recorder.meta if recorder is not None else None,
        recorder.directory if recorder is not None else None,
        history_kept,
        error,
    )
    if view is not None:
        view.run_ended(end)
    return end


class _RecordSink:
    """_RecordSink hands the stream to the run's RecordWriter (first of the sinks: an interval
    is on disk before it is shown)."""

    def __init__(self, recorder: RecordWriter) -> None:
        self.recorder = recorder

    def start(self, planned_s: float) -> None:
        """start: the record began before the run (``RecordWriter.begin``)."""

    def on_phase(self, name: str, result: Mapping[str, Any]) -> None:
        """on_phase restarts the generator CPU meter after setup."""
        self.recorder.on_phase(name, dict(result))

    def on_interval(self, interval: Mapping[str, Any]) -> None:
        """on_interval appends the interval to the time series, the log and the history."""
        self.recorder.on_interval(dict(interval))

    def finish(self) -> None:
        """finish: the record is finished with the result (``RecordWriter.finish``)."""


def _export_sinks(prepared: PreparedRun, recorder: RecordWriter | None, stderr: IO[str]) -> list[ExportSink]:
    """_export_sinks are the sinks of the run's --export pushes, their series labelled with the
    record's run id (none without --export)."""
    if not prepared.exports:
        return []
    # Function-local: the exporters load only with --export.
    from surge.run.export import export_sinks

    testid = recorder.meta["run_id"] if recorder is not None else None
    return export_sinks(prepared.exports, testid, stderr, prepared.compiled.main)


def _document(run: RunOutcome, url: bool) -> dict[str, Any]:
    """_document is the run's ``--json`` document: a URL run's without thresholds (``url``) is
    the engine's result as it is (secrets masked); any other adds the thresholds' verdicts and
    the setup/teardown summaries."""
    doc = result_document(run.main) if url else run.document()
    if run.error is not None:
        doc["error"] = redact_text(run.error)
    return doc


def write_reports(recorder: RecordWriter, stderr: IO[str]) -> None:
    """write_reports writes report.md (with its charts) and report.html from the results
    directory just completed (docs/reports.md); nothing after a failed write to it; a failure
    is one warning line."""
    directory = recorder.directory
    if directory is None or recorder.write_error is not None:
        return
    # Function-local: the renderers (and their chart library) load after the record is complete.
    from surge.present.write import write_report_quietly
    from surge.record.stored import StoredRun

    try:
        stored = StoredRun.from_directory(directory, written_here=True)
    except Exception as e:
        print(f"surge: warning: cannot write {directory / 'report.md'}: {e}", file=stderr, flush=True)
        return
    write_report_quietly(stored, directory)


def _write_junit(
    junit: Path | None,
    recorder: RecordWriter | None,
    doc: dict[str, Any],
    run: RunOutcome,
    stderr: IO[str],
    *,
    error: str | None = None,
) -> None:
    """_write_junit writes the --junit file, if asked; a failure to write it is one warning."""
    if junit is None:
        return
    # Function-local: the JUnit writer loads only with --junit.
    from surge.run.junit import write_junit

    name = recorder.meta["name"] if recorder is not None else "surge run"
    try:
        write_junit(junit, name, doc, run.verdicts, error=error)
    except OSError as e:
        print(f"surge: warning: --junit: cannot write {junit}: {e.strerror or e}", file=stderr, flush=True)


def check_junit(junit: str | Path | None) -> Path | None:
    """check_junit refuses, before the run, a --junit path that is a directory or whose
    directory does not exist; it is the path to write, None without --junit."""
    if junit is None:
        return None
    path = Path(junit)
    if path.is_dir():
        raise BadInput("--junit", f"{junit} is a directory")
    if not path.parent.is_dir():
        raise BadInput("--junit", f"{path.parent} does not exist (create it, or choose another file)")
    return path


def _recorder(prepared: PreparedRun, options: RunOptions, stderr: IO[str]) -> RecordWriter | None:
    """_recorder creates the run's results directory (``options.out``, or a new one under
    ``options.results`` named after ``options.name`` or the target) and its RecordWriter,
    recording into the history too. With --no-save: None, or for an experiment's run a
    RecordWriter that writes nothing, neither directory nor history, and keeps its ``meta``."""
    if not options.save and options.experiment is None:
        return None
    # Function-local: ``surge run --no-save`` never needs the writer (~4 ms of CPU with hashlib).
    from surge.record import RecordWriter, create_directory

    history = open_run_history(options.db, stderr) if options.save else None
    name = options.name or prepared.name
    directory = (
        create_directory(options.out, name, datetime.now(UTC), options.results or Path(RESULTS_DIR), lock=options.lock)
        if options.save
        else None
    )
    recorder = RecordWriter(
        directory,
        name=name,
        target_url=prepared.target_url,
        scenario_file=prepared.scenario_file,
        tags=dict(options.tags),
        history=history,
        stderr=stderr,
    )
    recorder.meta["plan"] = heading(prepared.heading).to_dict()
    if options.experiment is not None:
        recorder.meta["experiment"] = dict(options.experiment)
    return recorder


def open_run_history(db: str | None, stderr: IO[str]) -> History | None:
    """open_run_history opens the history a run (or an import, an experiment) records into; one a
    newer surge wrote refuses the run (exit 2), one that cannot be opened costs a warning line
    on ``stderr``, not the run."""
    # Function-local: the history (sqlite3) loads only for a run that saves.
    from surge.history.store import HistoryUnavailable, open_history

    try:
        return open_history(db)
    except HistoryUnavailable as e:
        print(
            redact_text(f"surge: warning: {e}; this run is recorded only in its results directory"),
            file=stderr,
            flush=True,
        )
        return None


__all__ = ["RunEnd", "RunOptions", "check_junit", "open_run_history", "run_prepared", "run_test", "write_reports"]
