"""Options several commands share: ``--db`` (the run history), and the KEY=VALUE pairs of ``--tag``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from surge.errors import BadInput

F = TypeVar("F", bound=Callable[..., object])

DB_HELP = ("The run history's database file (default: $SURGE_DB, else history.db in the user's data directory, "
           "e.g. ~/.local/share/surge/history.db).")
"""DB_HELP is the help of ``--db``, the same on every command."""


def db_option(command: F) -> F:
    """db_option adds ``--db PATH`` (parameter ``db``: str or None) to a command that reads or
    writes the run history; ``surge.history.open_history(db)`` opens the one it names."""
    return click.option("--db", "db", metavar="PATH", help=DB_HELP)(command)


def parse_tags(values: tuple[str, ...] | list[str], flag: str = "--tag") -> tuple[tuple[str, str], ...]:
    """parse_tags reads repeated ``--tag KEY=VALUE`` values; BadInput naming ``flag`` for one
    without ``=`` or with an empty KEY."""
    pairs = []
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key.strip():
            raise BadInput(flag, f"expected a label such as arch=scale-out, got '{value}'")
        pairs.append((key.strip(), rest))
    return tuple(pairs)
