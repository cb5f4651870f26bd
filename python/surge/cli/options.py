"""Options several commands share, declared once: ``--db`` (the run history), ``--tag`` and
``--no-save``; the RATE type of every rate flag."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from surge.core.errors import BadInput
from surge.core.tags import parse_tags
from surge.core.units import parse_rate

F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = (
    "The run history's database file (default: $SURGE_DB, else history.db in the user's data directory, "
    "e.g. ~/.local/share/surge/history.db)."
)
"""DB_HELP is the help of ``--db``, the same on every command."""


class RateType(click.ParamType):
    """RateType reads a rate flag per second as a scenario file's rate reads
    (``surge.core.units.parse_rate``: ``300``, ``300/s``, ``18000/m``); its bounds are the command's."""

    name = "rate"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        """convert is the rate per second ``value`` stands for; a usage error naming the flag otherwise."""
        try:
            return parse_rate(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


RATE = RateType()
"""RATE is the click type of a rate flag (``-r/--rate``, ``--start-rate``, ``--max-rate``)."""


def db_option(command: F) -> F:
    """db_option adds ``--db PATH`` (parameter ``db``: str or None) to a command that reads or
    writes the run history; ``surge.history.open_history(db)`` opens the one it names."""
    return click.option("--db", "db", metavar="PATH", help=DB_HELP)(command)


def _tags(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    return parse_tags(values)


def tag_option(command: F) -> F:
    """tag_option adds ``--tag key=value`` (repeatable) to a command, passed to it as ``tags``:
    a dict, checked by ``surge.core.tags.parse_tags`` (errors name --tag, exit 2)."""
    return click.option(
        "--tag",
        "tags",
        multiple=True,
        metavar="KEY=VALUE",
        callback=_tags,
        help="Label the run (e.g. arch=scale-out, build=abc123) for the history; repeatable. "
        "Keys: letters, digits, _ . - (up to 64); values up to 256 printable characters.",
    )(command)


NO_SAVE_HELP = "Write no results directory, and record nothing in the history."
"""NO_SAVE_HELP is the help of ``--no-save``, the same on every command."""


def no_save_option(command: F) -> F:
    """no_save_option adds ``--no-save`` (parameter ``no_save``: bool) to a command that records
    a run or an experiment: with it, nothing is written to disk or to the history."""
    return click.option("--no-save", "no_save", is_flag=True, help=NO_SAVE_HELP)(command)


def check_no_save(no_save: bool, recording_flags: Mapping[str, object]) -> None:
    """check_no_save refuses, with ``--no-save``, each flag of ``recording_flags`` (flag -> its
    value, None when not given) that was given: flags that only say where to record (``--out``;
    ``--db`` where the command only writes the history). BadInput names the flag."""
    for flag, value in recording_flags.items():
        if no_save and value is not None:
            raise BadInput(flag, "cannot be used with --no-save")
