"""ExperimentRecord: one experiment's record as it goes (docs/experiments.md, "The record"): a
results directory ``results/<UTC yyyymmdd-HHMMSS>-<kind>-<name>/`` (or ``--out``) holding
``experiment.json`` (rewritten in one step after every change), each run's own results
directory under ``runs/`` and, at the end, ``report.md`` with its charts (docs/reports.md); and
the same in the history (``experiments``, ``experiment_runs``). A failed write to either costs
one warning line, never the experiment. ``check_experiment_test`` and ``check_load_flags``
refuse, before any run, what an experiment cannot record or run."""

from __future__ import annotations

import re
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from surge import __version__
from surge.core import signals
from surge.core.errors import BadInput
from surge.core.redact import redact_document, redact_text
from surge.diagnosis.findings import run_findings, watch_process
from surge.history.experiment_rows import add_experiment_run, begin_experiment, finish_experiment
from surge.record.directory import KEPT, NOT_KEPT, RESULTS_DIR, check_out, create_directory
from surge.record.writer import command_line, iso_utc, write_summary
from surge.run.flags import check_no_save
from surge.run.session import open_run_history

if TYPE_CHECKING:
    from surge.history import History
    from surge.history.experiment_rows import ExperimentRun
    from surge.run.spec import TestSpec

SCHEMA = "surge.experiment/1"
"""SCHEMA is the version of experiment.json (schemas/surge.experiment-1.schema.json)."""

FILE_NAME = "experiment.json"
"""FILE_NAME is the experiment's document in its results directory."""

RUNS_DIR = "runs"
"""RUNS_DIR is the folder of the experiment's directory that holds its runs' directories."""


class ExperimentRecord:
    """ExperimentRecord: the record of one experiment of ``kind`` (repeat, sweep, capacity,
    compare, stats) called ``name``, asked to do ``parameters`` (JSON), labelled with ``tags``;
    its directory is ``out`` or a new one under ``results``, its history the one ``db`` names
    (--db, $SURGE_DB...); without ``save`` (--no-save) it has neither: nothing is written, the
    document is only held (and printed). ``document`` is experiment.json as it stands;
    ``stopped`` becomes the stop signal's number when one ended the experiment early (``running``)."""

    def __init__(
        self,
        kind: str,
        name: str,
        parameters: Mapping[str, Any],
        *,
        out: str | None = None,
        db: str | None = None,
        tags: Mapping[str, str] | None = None,
        results: Path = Path(RESULTS_DIR),
        save: bool = True,
    ) -> None:
        self.kind = kind
        self.save = save
        self._out, self._db, self._results = out, db, results
        self.directory: Path | None = None
        self.history: History | None = None
        self.stopped: int | None = None
        self.write_error: str | None = None
        self.failed = False
        self.planned_s: list[float] = []
        """planned_s is the planned duration of each of the experiment's runs, in order, when the
        experiment knows them in advance (empty: it does not, as a capacity search): the live
        view's time left."""
        self.judged: dict[str, str] = {}
        """judged is how the experiment judged a run (by run id: a sweep level's zone, a capacity
        step's passed or failed) where its own thresholds do not say it: the live view's runs done."""
        self.document: dict[str, Any] = {
            "schema": SCHEMA,
            "experiment_id": uuid.uuid4().hex,
            "kind": kind,
            "name": name,
            "surge_version": __version__,
            "command": command_line(),
            "started_at": iso_utc(time.time()),
            "ended_at": None,
            "complete": False,
            "stop_signal": None,
            "directory": None,
            "parameters": dict(parameters),
            "tags": dict(tags or {}),
            "runs": [],
            "analysis": None,
            "findings": [],
        }

    @property
    def id(self) -> str:
        """id is the experiment's id (32 hex digits)."""
        return str(self.document["experiment_id"])

    @property
    def runs(self) -> list[dict[str, Any]]:
        """runs are experiment.json's run entries so far, by position."""
        runs: list[dict[str, Any]] = self.document["runs"]
        return runs

    @classmethod
    def for_test(
        cls, kind: str, test: TestSpec, parameters: Mapping[str, Any], name: str | None = None
    ) -> ExperimentRecord:
        """for_test is the record of an experiment of ``test`` (named ``name``, else the test's),
        kept where the test's ``--out``, ``--db`` and ``--no-save`` say, labelled with its ``--tag``s."""
        return cls(
            kind, name or test.name(), parameters, out=test.out, db=test.db, tags=test.tag_dict, save=not test.no_save
        )

    @property
    def kept(self) -> str:
        """kept says where the experiment's completed runs are, for the line an early stop ends with."""
        return KEPT if self.save else NOT_KEPT

    def begin(self) -> None:
        """begin creates the results directory (BadInput when it cannot be: exit 2 before any
        run), writes experiment.json (incomplete) and records the experiment in the history;
        without ``save`` it does nothing."""
        if not self.save:
            return
        name = f"{self.kind}-{self.document['name']}"
        self.directory = create_directory(self._out, name, datetime.now(UTC), self._results)
        self.document["directory"] = str(self.directory)
        self._write()
        self.history = open_run_history(self._db, sys.stderr)
        self._to_history(lambda h: begin_experiment(h, self.document))

    def run_directory(self, position: int, role: str) -> Path | None:
        """run_directory is where the run at ``position`` writes its results directory:
        ``runs/<position, two digits>-<role as a slug>`` inside the experiment's
        (``runs/03-repeat-3-10``); None without ``save`` (the run writes none)."""
        if not self.save:
            return None
        if self.directory is None:
            raise RuntimeError("ExperimentRecord.run_directory before begin")
        slug = re.sub(r"[^A-Za-z0-9._=]+", "-", role).strip("-.")[:60] or "run"
        return self.directory / RUNS_DIR / f"{position:02d}-{slug}"

    def add_run(self, entry: dict[str, Any], link: ExperimentRun | None) -> None:
        """add_run appends a run's ``entry`` to experiment.json (rewritten) and, with ``link``
        (a run the history holds), records it as the experiment's in the history."""
        self.runs.append(entry)
        self._write()
        if link is not None:
            self._to_history(lambda h: add_experiment_run(h, self.id, link, self.document))

    def finish(self, *, analysis: Any = None, findings: list[dict[str, Any]] | None = None) -> None:
        """finish writes the experiment's ``analysis`` and ``findings`` (with those its runs had,
        ``surge.diagnosis.findings``), when it ended and
        whether it is complete (no stop signal or error ended it early, every write succeeded), in
        experiment.json and the history."""
        with signals.deferred():
            self.document.update(
                analysis=analysis,
                findings=[*(findings or []), *run_findings(self.runs)],
                ended_at=iso_utc(time.time()),
                complete=self.stopped is None and self.write_error is None and not self.failed,
                stop_signal=signals.signal_name(self.stopped) if self.stopped else None,
            )
            self._write()
            self._to_history(lambda h: finish_experiment(h, self.document))
            self._write_report()
            if self.history is not None:
                self.history.close()
                self.history = None

    def conclude(self, analyse: Callable[[], tuple[Any, list[dict[str, Any]]]]) -> None:
        """conclude runs ``analyse`` (the experiment's analysis and findings over its runs) and
        ``finish``es the record with them: report.md always follows. A first stop signal during
        the analysis lets it complete (it is recorded: the exit code names it); a second one
        ends it, and the record is finished without an analysis, with the report of what ran."""
        try:
            with signals.deferred():
                analysis, findings = analyse()
        except KeyboardInterrupt:
            self.stopped = self.stopped or signals.received() or signal.SIGINT
            signals.note(self.stopped)
            analysis, findings = None, []
        self.finish(analysis=analysis, findings=findings)

    def _write_report(self) -> None:
        """_write_report writes report.md and its charts (docs/reports.md) into the experiment's
        directory from what it holds; a failure is one warning line."""
        if self.directory is None or self.write_error is not None:
            return
        # start-up: the renderers only for an experiment that saves
        from surge.present.report_source import ExperimentSource, experiment_from_directory
        from surge.present.write import write_report_quietly

        try:
            source = experiment_from_directory(self.directory)
        except Exception:
            source = ExperimentSource(redact_document(self.document))
        write_report_quietly(source, self.directory)

    @contextmanager
    def running(self) -> Iterator[None]:
        """running wraps the experiment's runs: ``begin`` first; a stop signal (Ctrl-C, SIGTERM)
        in a run or between runs ends the block early with ``stopped`` set (the runs so far are
        kept, the command goes on to finish and report them); any other error (an unreachable
        target) finishes the record incomplete and goes on."""
        self.begin()
        try:
            yield
        except KeyboardInterrupt:
            self.stopped = signals.received() or signal.SIGINT
            signals.note(self.stopped)
        except BaseException:
            self.stopped, self.failed = signals.received(), True
            self.finish(analysis=None, findings=[])
            raise

    def _write(self) -> None:
        if self.directory is None or self.write_error is not None:
            return
        path = self.directory / FILE_NAME
        try:
            write_summary(path, self.document)
        except OSError as e:
            self.write_error = f"{path}: {e.strerror or e}"
            print(
                f"surge: warning: cannot write {self.write_error}; the experiment's directory is left incomplete",
                file=sys.stderr,
                flush=True,
            )

    def _to_history(self, step: Callable[[History], None]) -> None:
        if self.history is None:
            return
        try:
            step(self.history)
        except Exception as e:
            print(
                redact_text(
                    f"surge: warning: history {self.history.path}: {e}; this experiment is recorded "
                    f"only in {self.directory}"
                ),
                file=sys.stderr,
                flush=True,
            )
            self.history = None


def check_experiment_out(out: str | None) -> None:
    """check_experiment_out refuses, before any run, an ``--out`` that holds an experiment already."""
    if out is not None and (Path(out) / FILE_NAME).exists():
        raise BadInput("--out", f"{out} holds an experiment already (choose another directory)")


def check_experiment_test(test: TestSpec, reads_history: bool = False) -> None:
    """check_experiment_test refuses, before any run, an ``--out`` that is a file or holds an
    experiment already, a --watch-pid that is no running process, and with --no-save the flags
    that say where to record: ``--out``, and ``--db`` unless the experiment ``reads_history``
    (its runs come from there)."""
    check_no_save(test.no_save, {"--out": test.out, "--db": None if reads_history else test.db})
    check_out(test.out)
    check_experiment_out(test.out)
    watch_process(test.watch_pid)


def check_load_flags(test: TestSpec, level_flag: str, closed: bool) -> None:
    """check_load_flags refuses the test's own load flags an experiment's levels replace:
    ``-r`` always (each run's rate or VUs is the experiment's), ``-c`` with VU levels."""
    if test.rate is not None:
        raise BadInput(test.flag("rate"), f"the experiment sets each run's load ({level_flag}): drop it")
    if closed and test.connections is not None:
        raise BadInput(test.flag("connections"), f"the experiment sets each run's VUs ({level_flag}): drop it")
