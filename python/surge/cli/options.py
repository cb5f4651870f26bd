"""Options several commands share, declared once: ``--db`` (the run history) and ``--tag``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from surge.tags import parse_tags

F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = ("The run history's database file (default: $SURGE_DB, else history.db in the user's data directory, "
           "e.g. ~/.local/share/surge/history.db).")
"""DB_HELP is the help of ``--db``, the same on every command."""


def db_option(command: F) -> F:
    """db_option adds ``--db PATH`` (parameter ``db``: str or None) to a command that reads or
    writes the run history; ``surge.history.open_history(db)`` opens the one it names."""
    return click.option("--db", "db", metavar="PATH", help=DB_HELP)(command)


def _tags(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    return parse_tags(values)


def tag_option(command: F) -> F:
    """tag_option adds ``--tag key=value`` (repeatable) to a command, passed to it as ``tags``:
    a dict, checked by ``surge.tags.parse_tags`` (errors name --tag, exit 2)."""
    return click.option("--tag", "tags", multiple=True, metavar="KEY=VALUE", callback=_tags,
                        help="Label the run (e.g. arch=scale-out, build=abc123) for the history; repeatable. "
                             "Keys: letters, digits, _ . - (up to 64); values up to 256 printable characters.")(
        command)
