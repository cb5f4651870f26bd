"""``surge report RUN|EXPERIMENT [--format md|html|both] [--out DIR]``: write a run's or an
experiment's report from its record alone (the history, or a results directory), the results
directory being there or not (docs/reports.md, "surge report")."""

from __future__ import annotations

from pathlib import Path

import click

from surge.cli.options import db_option
from surge.core.errors import BadInput
from surge.present.report_source import ExperimentSource, Source, load_source
from surge.present.write import write_html, write_markdown
from surge.record.directory import RESULTS_DIR


def default_out(ref: str, source: Source) -> Path:
    """default_out is where a report goes without --out: the directory REF names when it is one;
    else the record's results directory when it still exists; else ``results/<the name that
    directory had>`` under the current directory (``results/<id>`` when none is recorded)."""
    if Path(ref).is_dir():
        return Path(ref)
    if isinstance(source, ExperimentSource):
        recorded, ident = source.directory, str(source.document.get("experiment_id") or "experiment")
    else:
        recorded, ident = source.directory, source.run_id or "run"
    if recorded and Path(recorded).is_dir():
        return Path(recorded)
    return Path(RESULTS_DIR) / (Path(recorded).name if recorded else ident)


@click.command("report")
@click.argument("ref", metavar="RUN|EXPERIMENT")
@click.option(
    "--format",
    "format_",
    type=click.Choice(["md", "html", "both"]),
    default="md",
    show_default=True,
    help="report.md with charts/*.svg, report.html, or both.",
)
@click.option(
    "--out",
    "out",
    metavar="DIR",
    help="Write the report here (default: the record's results directory, or results/<its name> when it is gone).",
)
@db_option
def report_command(ref: str, format_: str, out: str | None, db: str | None) -> None:
    """Write the report of RUN|EXPERIMENT from its record alone: a run or experiment id, a
    unique prefix of one, 'last' (the newest run, or the newest experiment when that run is
    one of its runs or older than it), or a results directory. Prints the path of each report written, the
    last one last."""
    source = load_source(ref, db)
    directory = Path(out) if out is not None else default_out(ref, source)
    if directory.exists() and not directory.is_dir():
        raise BadInput("--out" if out is not None else "RUN|EXPERIMENT", f"{directory} exists and is not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        if format_ in ("html", "both"):
            html_path = write_html(source, directory)
        if format_ in ("md", "both"):
            written.append(write_markdown(source, directory))
        if format_ in ("html", "both"):
            written.append(html_path)
    except OSError as e:
        raise BadInput(
            "--out" if out is not None else str(directory), f"cannot write the report: {e.strerror or e}"
        ) from None
    for path in written:
        click.echo(str(path))
