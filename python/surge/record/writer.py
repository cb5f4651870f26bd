"""RecordWriter writes one run's results directory as the run goes: ``begin`` before the
run (summary.json marked incomplete, the inputs), ``on_interval`` as each interval arrives
(timeseries.csv, latency.hlog, flushed), ``finish`` with the result (summary.json replaced
in one step)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from surge import __version__
from surge.record.environment import environment
from surge.record.hlog import HlogWriter
from surge.record.timeseries import TimeseriesWriter
from surge.redact import MASK, is_secret_name, redact_text, redact_url

SCHEMA = "surge.record/1"
"""SCHEMA is the version of the record's ``meta`` block (docs/record.md)."""

COMPLETE_STOP_REASONS = frozenset({"duration", "iterations", "aborted"})
"""COMPLETE_STOP_REASONS are the ways a run ends with its record complete (not a stop signal)."""


def command_line(argv: list[str] | None = None) -> str:
    """command_line is how surge was started (``surge`` and its arguments, shell-quoted),
    secrets masked."""
    args = sys.argv[1:] if argv is None else argv
    return redact_text(" ".join(["surge", *(shlex.quote(a) for a in args)]))


_QUOTED_VALUE = re.compile(r"""(?P<name>[A-Za-z0-9_.-]{1,100})[ \t]*:[ \t]*(?P<quote>["'])(?P<value>.*?)(?P=quote)""")
"""_QUOTED_VALUE finds a YAML ``key: "quoted value"`` (which ``redact_text`` leaves to the quotes)."""


def masked_lines(text: str) -> str:
    """masked_lines is ``text`` (a scenario file) with the secrets of each line masked:
    ``surge.redact``'s, and quoted values of secret-named keys (``Authorization: "Bearer x"``)."""
    def quoted(match: re.Match[str]) -> str:
        if not is_secret_name(match["name"]) or match["value"] == MASK:
            return match[0]
        return f"{match['name']}: {match['quote']}{MASK}{match['quote']}"

    return "".join(redact_text(_QUOTED_VALUE.sub(quoted, line)) for line in text.splitlines(keepends=True))


def iso_utc(unix_s: float) -> str:
    """iso_utc is a time as UTC ISO 8601 (``2026-11-23T22:15:33.123+00:00``)."""
    return datetime.fromtimestamp(unix_s, timezone.utc).isoformat(timespec="milliseconds")


class RecordWriter:
    """RecordWriter: the results directory ``directory`` of one run called ``name`` against
    ``target_url``, from ``scenario_file`` (None for a URL run), labelled with the user's
    ``tags`` (``surge.tags.parse_tags``: secret-keyed values already masked)."""

    def __init__(self, directory: Path, *, name: str, target_url: str, scenario_file: Path | None,
                 argv: list[str] | None = None, tags: dict[str, str] | None = None) -> None:
        self.directory = directory
        self._scenario_file = scenario_file
        self._started = time.time()
        scenario_bytes = scenario_file.read_bytes() if scenario_file is not None else None
        self._scenario_text = scenario_bytes.decode("utf-8", errors="replace") if scenario_bytes is not None else None
        self.meta: dict[str, Any] = {
            "schema": SCHEMA, "surge_version": __version__, "run_id": uuid.uuid4().hex, "name": name,
            "started_at": iso_utc(self._started), "ended_at": None, "command": command_line(argv),
            "scenario_sha256": hashlib.sha256(scenario_bytes).hexdigest() if scenario_bytes is not None else None,
            "environment": environment(), "target": redact_url(target_url),
            "tags": dict(tags or {}), "tool": "surge", "source": None, "complete": False,
        }
        self._files: list[IO[str]] = []
        self._timeseries: TimeseriesWriter | None = None
        self._hlog: HlogWriter | None = None

    def begin(self) -> None:
        """begin writes what is known before the run: summary.json (``meta`` only, incomplete),
        the inputs (scenario.yaml or command.txt), and the time series' and log's files."""
        self._write_summary({"meta": self.meta})
        if self._scenario_text is not None:
            (self.directory / "scenario.yaml").write_text(masked_lines(self._scenario_text))
        else:
            (self.directory / "command.txt").write_text(self.meta["command"] + "\n")
        self._timeseries = TimeseriesWriter(self._open("timeseries.csv"))
        self._hlog = HlogWriter(self._open("latency.hlog"))

    def on_interval(self, interval: dict[str, Any]) -> None:
        """on_interval appends one engine interval (with its histogram) to the time series and
        the log, flushed."""
        if self._timeseries is not None and self._hlog is not None:
            self._timeseries.write(interval)
            self._hlog.write(interval, time.time())

    def finish(self, document: dict[str, Any], *, interrupted: bool) -> None:
        """finish replaces summary.json with the result ``document`` (secrets already masked)
        and ``meta``, complete when the run ended by its plan or a threshold (not
        ``interrupted`` by a stop signal); closes the files."""
        if self._hlog is not None:
            self._hlog.start(float(document.get("started_at_unix_s") or self._started))
        self.meta["ended_at"] = iso_utc(time.time())
        self.meta["complete"] = not interrupted and document.get("stop_reason") in COMPLETE_STOP_REASONS
        self._write_summary({**document, "meta": self.meta})
        for file in self._files:
            file.close()
        self._files.clear()

    def _open(self, name: str) -> IO[str]:
        file = open(self.directory / name, "w", encoding="utf-8", newline="")
        self._files.append(file)
        return file

    def _write_summary(self, summary: dict[str, Any]) -> None:
        """_write_summary replaces summary.json in one step (a temporary file, then os.replace),
        so a reader never sees half of it."""
        path = self.directory / "summary.json"
        temporary = path.with_name(path.name + ".tmp")
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(summary, file, indent=2)
            file.write("\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
