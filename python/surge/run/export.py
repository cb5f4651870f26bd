"""Rebuilding a results directory from the history (``surge export``): the same files the run
wrote, summary.json equal as JSON, timeseries.csv, latency.hlog and the inputs byte for byte,
report.md with its charts and report.html rendered again from the same record."""

from __future__ import annotations

from pathlib import Path

from surge.core.errors import BadInput
from surge.record.directory import RESULTS_DIR
from surge.record.hlog import header_lines
from surge.record.stored import StoredRun
from surge.record.timeseries import csv_text
from surge.record.writer import write_summary


def default_directory(run: StoredRun) -> Path:
    """default_directory is where ``surge export`` rebuilds a run without a DIR:
    ``results/<the name of the directory the run wrote>`` (``results/<run id>`` if it wrote none)."""
    name = Path(run.directory).name if run.directory else run.run_id
    return Path(RESULTS_DIR) / name


def export_run(run: StoredRun, directory: Path) -> list[Path]:
    """export_run writes ``run``'s results directory at ``directory`` (created; refused, with
    BadInput, when it exists and is not an empty directory) and returns the files written."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise BadInput(str(directory), "exists and is not an empty directory (choose another DIR)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BadInput(str(directory), f"cannot create it: {e.strerror or e}") from None
    files: list[tuple[str, str]] = []
    if run.inputs_name is not None and run.inputs is not None:
        files.append((run.inputs_name, run.inputs))
    files.append(("timeseries.csv", csv_text([], header=True) + run.timeseries))
    hlog = [] if run.hlog_start_unix_s is None else [*header_lines(run.hlog_start_unix_s), *run.hlog_lines]
    files.append(("latency.hlog", "".join(line + "\n" for line in hlog)))
    written = [directory / "summary.json"]
    write_summary(written[0], run.summary)
    for name, text in files:
        (directory / name).write_text(text, encoding="utf-8", newline="")
        written.append(directory / name)
    from surge.present.write import write_html, write_markdown  # the reports the run wrote beside its record

    written.append(write_markdown(run, directory))
    written.append(write_html(run, directory))
    return written
