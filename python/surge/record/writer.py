"""RecordWriter writes one run's results directory as the run goes: ``begin`` before the
run (summary.json marked incomplete, the inputs), ``on_interval`` as each interval arrives
(timeseries.csv, latency.hlog, flushed), ``finish`` with the result (summary.json replaced
in one step). It writes the record only: the reports are rendered from the finished record by
the run session (``surge.run.session``). With a ``history`` (any RunHistory: the SQLite store of
``surge.history``), each step is also recorded there (docs/history.md), and an error writing the
history costs one warning line, never the run or its directory. ``environment`` describes the
machine the run ran on (the record's ``meta.environment``)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shlex
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

from surge import __version__
from surge.core.redact import masked_lines, redact_document, redact_text, redact_url
from surge.record.hlog import HlogWriter, interval_line
from surge.record.timeseries import CpuMeter, TimeseriesWriter, csv_text, interval_rows


class RunHistory(Protocol):
    """RunHistory is where a RecordWriter records a run besides its directory, step by step
    (``surge.history.History`` is one): ``begin`` with its ``meta`` and inputs, ``add_interval``
    for each interval, ``finish`` with its summary. ``waited`` tells whether a write waited for
    another process's lock; ``path`` names it in warnings."""

    path: Path
    waited: bool

    def begin(self, meta: Mapping[str, Any], *, directory: str | None, inputs_name: str, inputs: str) -> None:
        """begin records the run's start."""

    def add_interval(
        self,
        run_id: str,
        index: int,
        end_s: float,
        *,
        timeseries: str,
        hlog: str,
        hlog_start_unix_s: float,
        wait: bool = True,
    ) -> None:
        """add_interval records one interval."""

    def finish(self, summary: Mapping[str, Any], *, hlog_start_unix_s: float | None = None) -> None:
        """finish records the run's end."""

    def close(self) -> None:
        """close closes it."""


SCHEMA = "surge.record/1"
"""SCHEMA is the version of the record's ``meta`` block (docs/record.md)."""

T = TypeVar("T")

COMPLETE_STOP_REASONS = frozenset({"duration", "iterations", "aborted", "imported"})
"""COMPLETE_STOP_REASONS are the ways a run ends with its record complete (not a stop signal)."""


def command_line(argv: list[str] | None = None) -> str:
    """command_line is how surge was started (``surge`` and its arguments, shell-quoted),
    secrets masked."""
    args = sys.argv[1:] if argv is None else argv
    return redact_text(" ".join(["surge", *(shlex.quote(a) for a in args)]))


def iso_utc(unix_s: float) -> str:
    """iso_utc is a time as UTC ISO 8601 (``2026-11-23T22:15:33.123+00:00``)."""
    return datetime.fromtimestamp(unix_s, UTC).isoformat(timespec="milliseconds")


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    """write_summary writes summary.json (or experiment.json) at ``path`` in one step (a
    temporary file, then os.replace), so a reader never sees half of it, secrets masked
    (``surge.core.redact.redact_document``) whatever the caller passed."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        with temporary.open("w", encoding="utf-8") as file:
            json.dump(redact_document(summary), file, indent=2, allow_nan=False)
            file.write("\n")
            file.flush()
            os.fsync(file.fileno())
        temporary.replace(path)
    except (OSError, ValueError):  # ValueError: a NaN or an infinity, which JSON has not
        temporary.unlink(missing_ok=True)  # never leave half a summary beside the last whole one
        raise


def environment() -> dict[str, Any]:
    """environment describes this machine: CPU model, cores, memory, OS, kernel, Python."""
    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "os": platform.system(),
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def _proc_field(path: str, key: str) -> str | None:
    """_proc_field is the value of the first ``key: value`` line of a /proc file, or None."""
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        name, sep, value = line.partition(":")
        if sep and name.strip() == key:
            return value.strip()
    return None


def _cpu_model() -> str | None:
    return _proc_field("/proc/cpuinfo", "model name") or platform.processor() or None


def _memory_bytes() -> int | None:
    value = _proc_field("/proc/meminfo", "MemTotal")  # "16318040 kB"
    if value is None or not value.split()[0].isdigit():
        return None
    return int(value.split()[0]) * 1024


class RecordWriter:
    """RecordWriter: the results directory ``directory`` of one run called ``name`` against
    ``target_url``, from ``scenario_file`` (None for a URL run), labelled with the user's
    ``tags`` (``surge.core.tags.parse_tags``: secret-keyed values already masked), also recorded in
    ``history`` when given. Without a ``directory`` (an experiment's run with --no-save) it
    writes nothing and keeps only ``meta``, completed by ``finish`` as for a saved run."""

    def __init__(
        self,
        directory: Path | None,
        *,
        name: str,
        target_url: str,
        scenario_file: Path | None,
        argv: list[str] | None = None,
        tags: dict[str, str] | None = None,
        history: RunHistory | None = None,
        tool: str = "surge",
        started_unix_s: float | None = None,
        source: dict[str, Any] | None = None,
        stderr: IO[str] | None = None,
    ) -> None:
        """An imported run (docs/imports.md) passes the ``tool`` that made it, its own start
        (``started_unix_s``) and its ``source`` file (name, sha256); its environment is unknown.
        Warnings go to ``stderr`` (None: the process's)."""
        self.directory = directory
        self.history = history
        self._stderr = stderr
        self._scenario_file = scenario_file
        self._imported = tool != "surge"
        self._started = time.time() if started_unix_s is None else started_unix_s
        scenario_bytes = scenario_file.read_bytes() if scenario_file is not None else None
        self._scenario_text = scenario_bytes.decode("utf-8", errors="replace") if scenario_bytes is not None else None
        self.meta: dict[str, Any] = {
            "schema": SCHEMA,
            "surge_version": __version__,
            "run_id": uuid.uuid4().hex,
            "name": redact_text(name),
            "started_at": iso_utc(self._started),
            "ended_at": None,
            "command": command_line(argv),
            "scenario_sha256": hashlib.sha256(scenario_bytes).hexdigest() if scenario_bytes is not None else None,
            "environment": None if self._imported else environment(),
            "target": redact_url(target_url),
            "tags": dict(tags or {}),
            "tool": tool,
            "source": source,
            "complete": False,
        }
        self._files: list[IO[str]] = []
        self._timeseries: TimeseriesWriter | None = None
        self._hlog: HlogWriter | None = None
        self._cpu = CpuMeter()
        self._hlog_start_unix_s: float | None = None
        self.target_sample: Callable[[], Mapping[str, Any] | None] | None = None
        """target_sample gives the watched target process's latest sample for each interval's
        row (``surge.diagnosis.TargetWatch.latest``), or is None when nothing is watched."""
        self.write_error: str | None = None
        """write_error is the first failed write (``PATH: reason``), after which nothing more
        is written to the directory; None while every write succeeded."""

    def begin(self) -> None:
        """begin writes what is known before the run: summary.json (``meta`` only, incomplete),
        the inputs (scenario.yaml or command.txt), and the time series' and log's files."""
        self._guarded("summary.json", lambda: self._write_summary({"meta": self.meta}))
        if self._scenario_text is not None:
            inputs_name, inputs = "scenario.yaml", masked_lines(self._scenario_text)
        else:
            inputs_name, inputs = "command.txt", self.meta["command"] + "\n"
        self._guarded(inputs_name, lambda: self._path(inputs_name).write_text(inputs))
        self._timeseries = self._guarded("timeseries.csv", lambda: TimeseriesWriter(self._open("timeseries.csv")))
        self._hlog = self._guarded("latency.hlog", lambda: HlogWriter(self._open("latency.hlog")))
        hlog = self._hlog
        if self._imported and hlog is not None:  # its intervals arrive all at once, long after the run
            self._guarded("latency.hlog", lambda: hlog.start(self._started))
        self._cpu.restart()
        # The history is written beside the directory, never behind its guard: a full results
        # directory does not stop the history.
        self._to_history(
            lambda h: h.begin(self.meta, directory=str(self.directory), inputs_name=inputs_name, inputs=inputs)
        )
        if self.history is not None and self.history.waited and not self._imported:
            self._started = time.time()  # the run starts now: the wait for a locked history is not in its times
            self.meta["started_at"] = iso_utc(self._started)

    def on_phase(self, name: str, result: dict[str, Any]) -> None:
        """on_phase is told when an unmeasured phase (setup) ends, so that the first interval's
        generator CPU counts from there."""
        self._cpu.restart()

    def on_interval(self, interval: dict[str, Any]) -> None:
        """on_interval appends one engine interval (with its histogram) to the time series and
        the log, flushed, and records it in the history (committed)."""
        now = time.time()
        cpu_cores = None if self._imported else self._cpu.cores()
        target = self.target_sample() if self.target_sample is not None else None
        hlog_start = self._hlog_start(now, interval)
        timeseries, hlog = self._timeseries, self._hlog
        if timeseries is not None and hlog is not None:
            self._guarded("timeseries.csv", lambda: timeseries.write(interval, cpu_cores, target))
            self._guarded("latency.hlog", lambda: hlog.write(interval, now))
        self._to_history(
            lambda h: h.add_interval(
                self.meta["run_id"],
                int(interval["index"]),
                float(interval["end_s"]),
                timeseries=csv_text(interval_rows(interval, cpu_cores, target)),
                hlog=interval_line(interval),
                hlog_start_unix_s=hlog_start,
                wait=False,
            )
        )

    def _hlog_start(self, now: float, interval: dict[str, Any]) -> float:
        """_hlog_start is latency.hlog's start time: an imported run's own, else the time the
        first interval arrived less its end (HlogWriter.write's rule), kept from then on."""
        if self._hlog_start_unix_s is None:
            self._hlog_start_unix_s = self._started if self._imported else now - interval["end_s"]
        return self._hlog_start_unix_s

    def finish(self, document: dict[str, Any], *, interrupted: bool) -> None:
        """finish replaces summary.json with the result ``document`` (secrets already masked)
        and ``meta``, complete when the run ended by its plan or a threshold (not
        ``interrupted`` by a stop signal) and every write succeeded; closes the files. After a
        failed write it still tries summary.json once, quietly, marked incomplete."""
        start = float(document.get("started_at_unix_s") or self._started)
        hlog = self._hlog
        if hlog is not None:
            self._guarded("latency.hlog", lambda: hlog.start(start))
        elapsed = document.get("elapsed_s")
        self.meta["ended_at"] = iso_utc(
            self._started + elapsed if self._imported and elapsed is not None else time.time()
        )
        self.meta["complete"] = (
            not interrupted and document.get("stop_reason") in COMPLETE_STOP_REASONS and self.write_error is None
        )
        summary = {**document, "meta": self.meta}
        if self.write_error is None:
            self._guarded("summary.json", lambda: self._write_summary(summary))
        else:
            with contextlib.suppress(OSError):  # already warned: the directory is incomplete either way
                self._write_summary(summary)
        for file in self._files:
            with contextlib.suppress(OSError):  # what a failed write left in the buffer cannot go anywhere
                file.close()
        self._files.clear()
        self._to_history(lambda h: h.finish(summary, hlog_start_unix_s=start))

    def _warn(self, line: str) -> None:
        print(line, file=self._stderr or sys.stderr, flush=True)

    def _to_history(self, step: Callable[[RunHistory], None]) -> None:
        """_to_history records a step in the history; when that fails (disk full, unwritable
        path), says so in one line on stderr and records nothing more of this run there: the
        run and its results directory go on."""
        if self.history is None:
            return
        try:
            step(self.history)
        except Exception as e:
            self._warn(
                redact_text(
                    f"surge: warning: history {self.history.path}: {e}; this run is recorded only in {self.directory}"
                )
            )
            self.history = None

    def _guarded(self, name: str, write: Callable[[], T]) -> T | None:
        """_guarded runs ``write`` (of the file ``name``) unless a write has failed before. The
        first OSError (a full disk, EIO, a read-only file system) is one warning on stderr and
        stops the directory's writing; the run goes on. Returns what ``write`` returned, or None
        (also without a directory: nothing is written)."""
        if self.write_error is not None or self.directory is None:
            return None
        try:
            return write()
        except OSError as e:
            self.write_error = f"{self._path(name)}: {e.strerror or e}"
            self._warn(
                f"surge: warning: cannot write {self.write_error}; the results directory is left incomplete "
                "(the run goes on)"
            )
            return None

    def _open(self, name: str) -> IO[str]:
        file = self._path(name).open("w", encoding="utf-8", newline="")
        self._files.append(file)
        return file

    def _write_summary(self, summary: dict[str, Any]) -> None:
        write_summary(self._path("summary.json"), summary)

    def _path(self, name: str) -> Path:
        """_path is the file ``name`` of the results directory (only called by a write that
        ``_guarded`` let through, which needs a directory)."""
        if self.directory is None:
            raise RuntimeError("RecordWriter: a write without a results directory")
        return self.directory / name
