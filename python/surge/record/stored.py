"""StoredRun: one run's record as the history (or its results directory) keeps it: the summary
document, the inputs, and each interval's timeseries.csv lines and latency.hlog line."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from surge.record.read import check_hlog, check_timeseries, read_summary, read_text
from surge.record.timeseries import ALL_SCENARIOS, COLUMNS

INPUT_FILES = ("scenario.yaml", "command.txt")
"""INPUT_FILES are the names a record's inputs may have (a scenario file run's, a URL run's)."""


@dataclass
class StoredRun:
    """StoredRun: a run's record. ``timeseries`` is timeseries.csv without its header line,
    ``hlog_lines`` latency.hlog's interval lines (without the header, which
    ``hlog_start_unix_s`` dates: None when the log has none), ``directory`` the results
    directory the run wrote (None when unknown)."""

    summary: dict[str, Any]
    directory: str | None = None
    inputs_name: str | None = None
    inputs: str | None = None
    hlog_start_unix_s: float | None = None
    timeseries: str = ""
    hlog_lines: list[str] = field(default_factory=list)

    @property
    def meta(self) -> dict[str, Any]:
        """meta is the record's ``meta`` block."""
        meta: dict[str, Any] = self.summary.get("meta", {})
        return meta

    @property
    def run_id(self) -> str:
        """run_id is the record's ``meta.run_id`` ("" when it has none)."""
        return str(self.meta.get("run_id", ""))

    def interval_rows(self) -> list[dict[str, str]]:
        """interval_rows are the time series' ``all`` rows (one per interval), as read from the CSV."""
        rows = csv.DictReader(io.StringIO(self.timeseries), fieldnames=COLUMNS)
        return [row for row in rows if row["scenario"] == ALL_SCENARIOS]

    @classmethod
    def from_directory(cls, path: Path, *, written_here: bool = False) -> StoredRun:
        """from_directory reads a results directory (``surge show DIR``) with bounded,
        regular-file-only reads, every file checked (surge.record.read): BadInput naming the
        directory when it holds no summary.json, or the file and the line or field at fault.
        ``written_here``: the record this process has just written (the run session's reports),
        whose summary.json is read as JSON without checking it against the schema again."""
        if written_here:
            text = read_text(path / "summary.json")
            summary = json.loads(text or "{}")
        else:
            summary = read_summary(path)
        inputs_name = next((n for n in INPUT_FILES if (path / n).is_file()), None)
        timeseries = read_text(path / "timeseries.csv", missing_ok=True) or ""
        hlog = read_text(path / "latency.hlog", missing_ok=True) or ""
        return cls(
            summary=summary,
            directory=str(path),
            inputs_name=inputs_name,
            inputs=read_text(path / inputs_name, missing_ok=True) if inputs_name else None,
            timeseries=check_timeseries(timeseries, str(path / "timeseries.csv")),
            hlog_lines=check_hlog(hlog, str(path / "latency.hlog")),
        )
