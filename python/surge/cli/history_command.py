"""``surge history``: the runs of the history, newest first, filtered."""

from __future__ import annotations

import json
import sys

import click

from surge.cli.options import db_option, json_option
from surge.core.tags import parse_tags
from surge.history import TOOLS, RunQuery, list_runs, open_history
from surge.history.queries import DEFAULT_LIMIT, check_limit, parse_since


@click.command("history")
@click.option("--name", help="Only runs of this name (exactly).")
@click.option(
    "--tag", "tags", multiple=True, metavar="KEY=VALUE", help="Only runs with this tag; repeatable (all must match)."
)
@click.option("--tool", type=click.Choice(TOOLS), help="Only runs made by this tool (surge, or an import's).")
@click.option("--target", help="Only runs whose target URL contains this text.")
@click.option(
    "--since",
    help="Only runs started since: a date or time (2026-11-23, 2026-11-23T14:00, UTC unless "
    "it says otherwise) or a duration back from now (30m, 2h, 7d).",
)
@click.option("--limit", type=int, default=DEFAULT_LIMIT, show_default=True, help="List at most this many runs.")
@json_option("Print the runs as a JSON list of objects.")
@db_option
def history_command(
    name: str | None,
    tags: tuple[str, ...],
    tool: str | None,
    target: str | None,
    since: str | None,
    limit: int,
    json_output: bool,
    db: str | None,
) -> None:
    """List the runs of the history, newest first."""
    check_limit(limit)
    query = RunQuery(
        name=name,
        tool=tool,
        target=target,
        tags=tuple(parse_tags(tags).items()),
        since=parse_since(since) if since is not None else None,
        limit=limit,
    )
    with open_history(db) as history:
        runs = list_runs(history, query)
        path = history.path
    if json_output:
        sys.stdout.write(json.dumps([r.to_dict() for r in runs]) + "\n")
        return
    if not runs:
        filtered = any(v is not None for v in (name, tool, target, since)) or tags
        print(f"no runs {'match' if filtered else 'in the history'} ({path})")
        return
    from surge.present.terminal.history_table import print_runs  # start-up: Rich only for a terminal table (not --json)

    print_runs(runs)
