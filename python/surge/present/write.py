"""Writing report.md and its charts (``charts/*.svg``) into a directory, for a run or an
experiment; and the guarded form the recorders call at the end of every run and experiment,
where a failed report costs one warning line, never the run."""

from __future__ import annotations

import sys
from pathlib import Path

from surge.core.redact import redact_text
from surge.history import StoredRun
from surge.present.report_source import ExperimentSource, Source

REPORT_FILE = "report.md"
"""REPORT_FILE is the Markdown report's name in a results directory."""

HTML_FILE = "report.html"
"""HTML_FILE is the self-contained HTML report's name in a results directory (docs/report-html.md)."""


def run_charts(run: StoredRun, directory: Path) -> dict[str, str]:
    """run_charts draws a run's charts into ``directory``/charts: title → relative path (those
    the record has data for)."""
    from surge.present.charts import latency_chart, spectrum_chart, throughput_chart

    drawn = {
        "Throughput per interval": throughput_chart(run, directory),
        "Latency percentiles per interval": latency_chart(run, directory),
        "Latency by percentile": spectrum_chart(run, directory),
    }
    return {title: path for title, path in drawn.items() if path}


def write_markdown(source: Source, directory: Path) -> Path:
    """write_markdown writes report.md (and its charts) of ``source`` into ``directory``
    (created if missing) and returns report.md's path."""
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(source, ExperimentSource):
        from surge.present.markdown.experiment_report import experiment_charts, render_experiment_md

        text = render_experiment_md(source, experiment_charts(source.document, directory))
    else:
        from surge.present.markdown.run_report import render_run_md

        text = render_run_md(source, run_charts(source, directory))
    path = directory / REPORT_FILE
    path.write_text(text, encoding="utf-8")
    return path


def write_html(source: Source, directory: Path) -> Path:
    """write_html writes report.html of ``source`` into ``directory`` (created if missing) and
    returns its path."""
    from surge.present import html

    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(source, ExperimentSource):
        text = html.render_experiment_html(source.document, source.runs)
    else:
        text = html.render_run_html(source)
    path = directory / HTML_FILE
    path.write_text(text, encoding="utf-8")
    return path


def write_report_quietly(source: Source, directory: Path) -> None:
    """write_report_quietly is write_markdown and write_html for the end of a run or experiment: any failure
    (a full disk, a record it cannot draw) is one warning line on stderr; the caller goes on."""
    from surge.core import signals

    try:
        with signals.deferred():  # a first Ctrl-C now is noted (the exit code says so), the report finishes
            write_markdown(source, directory)
            write_html(source, directory)
    except Exception as e:
        print(redact_text(f"surge: warning: cannot write the report in {directory}: {e}"), file=sys.stderr, flush=True)
