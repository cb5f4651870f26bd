"""Writing report.md and its charts (``charts/*.svg``: surge.present.svg of the same chart
descriptions report.html draws) into a directory, for a run or an experiment; and the guarded
form the recorders call at the end of every run and experiment, where a failed report costs one
warning line, never the run. ``export_run`` rebuilds a run's whole results directory from the
history (``surge export``): the same files the run wrote, summary.json equal as JSON,
timeseries.csv, latency.hlog and the inputs byte for byte, report.md with its charts and
report.html rendered again from the same record."""

from __future__ import annotations

import sys
from pathlib import Path

from surge.core import signals
from surge.core.errors import BadInput
from surge.core.redact import redact_text
from surge.present.charts import Chart
from surge.present.report_source import ExperimentSource, Source
from surge.present.svg import write_svg
from surge.record.directory import RESULTS_DIR
from surge.record.hlog import header_lines
from surge.record.stored import StoredRun
from surge.record.timeseries import csv_text
from surge.record.writer import write_summary

REPORT_FILE = "report.md"
"""REPORT_FILE is the Markdown report's name in a results directory."""

HTML_FILE = "report.html"
"""HTML_FILE is the self-contained HTML report's name in a results directory (docs/report-html.md)."""


CHARTS_DIR = "charts"
"""CHARTS_DIR is the folder beside report.md that holds its charts."""

STATIC_CHARTS = {
    "throughput": "throughput.svg",
    "latency": "latency.svg",
    "spectrum": "spectrum.svg",
    "sweep-throughput": "sweep.svg",
    "capacity-path": "capacity.svg",
    "compare-responses_per_s": "compare-responses_per_s.svg",
    "compare-p95_ms": "compare-p95_ms.svg",
    "figure-responses_per_s": "repeat-responses_per_s.svg",
    "figure-p95_ms": "repeat-p95_ms.svg",
}
"""STATIC_CHARTS are the charts report.md draws, by chart id (report.html draws them all): each
one's SVG file under CHARTS_DIR."""


def write_charts(charts: list[Chart], directory: Path) -> dict[str, str]:
    """write_charts writes those of ``charts`` report.md draws (STATIC_CHARTS) as SVGs into
    ``directory``/charts and returns title → path relative to ``directory``, in ``charts``' order."""
    drawn = {}
    for chart in charts:
        name = STATIC_CHARTS.get(chart.id)
        if name is not None:
            write_svg(chart, directory / CHARTS_DIR / name)
            drawn[chart.title] = f"{CHARTS_DIR}/{name}"
    return drawn


def write_markdown(source: Source, directory: Path) -> Path:
    """write_markdown writes report.md (and its charts) of ``source`` into ``directory``
    (created if missing) and returns report.md's path."""
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(source, ExperimentSource):
        # start-up: a run's report loads no experiment renderer
        from surge.present.experiment_charts import experiment_charts
        from surge.present.markdown.experiment_report import render_experiment_md

        text = render_experiment_md(source, write_charts(experiment_charts(source.document), directory))
    else:
        # start-up: an experiment's report loads no run renderer
        from surge.present.markdown.run_report import render_run_md
        from surge.present.run_charts import run_charts

        text = render_run_md(source, write_charts(run_charts(source), directory))
    path = directory / REPORT_FILE
    path.write_text(text, encoding="utf-8")
    return path


def write_html(source: Source, directory: Path) -> Path:
    """write_html writes report.html of ``source`` into ``directory`` (created if missing) and
    returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(source, ExperimentSource):
        # start-up: a run's page loads no experiment's (numpy, the terminal's tables)
        from surge.present.html.experiment_page import render_experiment_html

        text = render_experiment_html(source.document, source.runs)
    else:
        from surge.present.html.run_page import render_run_html  # start-up: an experiment's page loads no run's

        text = render_run_html(source)
    path = directory / HTML_FILE
    path.write_text(text, encoding="utf-8")
    return path


def write_report_quietly(source: Source, directory: Path) -> None:
    """write_report_quietly is write_markdown and write_html for the end of a run or experiment: any failure
    (a full disk, a record it cannot draw) is one warning line on stderr; the caller goes on."""
    try:
        with signals.deferred():  # a first Ctrl-C now is noted (the exit code says so), the report finishes
            write_markdown(source, directory)
            write_html(source, directory)
    except Exception as e:
        print(redact_text(f"surge: warning: cannot write the report in {directory}: {e}"), file=sys.stderr, flush=True)


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
    written.append(write_markdown(run, directory))
    written.append(write_html(run, directory))
    return written
