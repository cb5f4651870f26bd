"""``surge import FILE...``: runs made by k6, hey or oha recorded as surge runs (docs/imports.md):
each file parsed (every file checked before anything is written), then recorded through the
same RecordWriter as a surge run, its summary printed."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from surge.cli.options import db_option, tag_option
from surge.core.errors import BadInput
from surge.record import check_out, create_directory, run_name
from surge.run.session import open_run_history, write_reports


@click.command("import")
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option(
    "--tool",
    type=click.Choice(["auto", "k6", "hey", "oha"]),
    default="auto",
    show_default=True,
    help="The tool that made the files; auto tells by their content.",
)
@click.option("--name", help="The run's name (default: the file's name without its extension).")
@tag_option
@click.option(
    "--out",
    "out",
    metavar="DIR",
    help="Write the record here (one FILE only; default: results/<UTC start of the imported run>-<name>/).",
)
@db_option
def import_command(
    files: tuple[str, ...], tool: str, name: str | None, tags: dict[str, str], out: str | None, db: str | None
) -> None:
    """Record runs made by k6, hey or oha (FILE...) as surge runs, and print their summaries."""
    from surge.imports import Source, load  # start-up: the importers (hdrh) only when importing
    from surge.present.terminal.summary import print_imported_summary  # start-up: Rich only once the files are read
    from surge.record.writer import RecordWriter  # start-up: the writer (hashlib) only when importing

    if out is not None and len(files) > 1:
        raise BadInput("--out", f"names one record's directory: give one FILE, not {len(files)}")
    check_out(out)
    sources = [Source.read(path) for path in files]
    imported = [load(source, tool) for source in sources]  # every file checked before anything is written
    history = open_run_history(db, sys.stderr)
    for source, run in zip(sources, imported, strict=True):
        started, from_file = run.started_unix_s, run.started_unix_s is None
        if started is None:  # the source has no start: its file was written when the run ended
            started = Path(source.path).stat().st_mtime - (run.document.get("elapsed_s") or 0.0)
            run.document["started_at_unix_s"] = started
        run_label = name or run_name("", Path(source.path))
        directory = create_directory(out, run_label, datetime.fromtimestamp(started, UTC))
        writer = RecordWriter(
            directory,
            name=run_label,
            target_url=run.target,
            scenario_file=None,
            tool=run.tool,
            history=history,
            tags=tags,
            started_unix_s=started,
            source={
                "file": source.name,
                "sha256": source.sha256,
                "format": run.format,
                "start_from": "file-mtime" if from_file else "source",
            },
        )
        writer.begin()
        for interval in run.document["intervals"]:
            writer.on_interval(interval)
        document = {
            **run.document,
            "intervals": [{k: v for k, v in i.items() if k != "latency_histogram"} for i in run.document["intervals"]],
        }
        writer.finish(document, interrupted=False)
        write_reports(writer, sys.stderr)
        print_imported_summary(document, writer.meta)
        print(f"results: {directory}", file=sys.stderr, flush=True)
