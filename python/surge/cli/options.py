"""Options several commands share, declared once: ``--db`` (the run history), ``--tag``,
``--no-save``, ``--json``, an experiment's ``--cooldown``, ``--cv-limit`` and
``--no-oversaturation-stop``; the RATE type of
every rate flag; ``check_no_save`` (``surge.run.flags``) refuses what --no-save excludes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from surge.core.tags import parse_tags
from surge.core.units import parse_rate
from surge.run.flags import DB_HELP, NO_SAVE_HELP, TAG_HELP, check_no_save

F = TypeVar("F", bound=Callable[..., Any])


class RateType(click.ParamType[float, Any]):
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


def tags_callback(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    """tags_callback is ``--tag``'s click callback: the values as a dict (``parse_tags``)."""
    return parse_tags(values)


def tag_option(command: F) -> F:
    """tag_option adds ``--tag key=value`` (repeatable) to a command, passed to it as ``tags``:
    a dict, checked by ``surge.core.tags.parse_tags`` (errors name --tag, exit 2)."""
    return click.option(
        "--tag",
        "tags",
        multiple=True,
        metavar="KEY=VALUE",
        callback=tags_callback,
        help=TAG_HELP,
    )(command)


def json_option(help_text: str) -> Callable[[F], F]:
    """json_option adds ``--json`` (parameter ``json_output``: bool) to a command that can print
    its result as JSON on stdout; ``help_text`` says what the document holds."""
    return click.option("--json", "json_output", is_flag=True, help=help_text)


def cooldown_option(default: str, help_text: str) -> Callable[[F], F]:
    """cooldown_option adds ``--cooldown DURATION`` (parameter ``cooldown``: the text, read by
    ``surge.run.flags.duration_flag``) to an experiment that pauses between its runs."""
    return click.option("--cooldown", default=default, show_default=True, help=help_text)


def cv_limit_option(command: F) -> F:
    """cv_limit_option adds ``--cv-limit PERCENT`` (parameter ``cv_limit``: the text, read by
    ``surge.run.flags.percent_flag``) to a command describing figures over runs (repeat, stats)."""
    return click.option(
        "--cv-limit",
        "cv_limit",
        default="10%",
        show_default=True,
        help="Flag a figure whose coefficient of variation (SD / mean) is above this.",
    )(command)


def oversaturation_option(what: str) -> Callable[[F], F]:
    """oversaturation_option adds ``--no-oversaturation-stop`` (parameter
    ``no_oversaturation_stop``: bool) to an experiment whose open-model runs (``what``: its
    levels or steps) stop early once over-saturated (surge.experiments.saturation_watch)."""
    return click.option(
        "--no-oversaturation-stop",
        "no_oversaturation_stop",
        is_flag=True,
        help=f"Run {what} to the end even once over-saturated (by default an open-model run stops early when "
        "the requests outstanding and the TTFT, else the latency, have both been rising for 4 s, and counts "
        "as broken).",
    )


def no_save_option(command: F) -> F:
    """no_save_option adds ``--no-save`` (parameter ``no_save``: bool) to a command that records
    a run or an experiment: with it, nothing is written to disk or to the history."""
    return click.option("--no-save", "no_save", is_flag=True, help=NO_SAVE_HELP)(command)


__all__ = [
    "check_no_save",
    "cooldown_option",
    "cv_limit_option",
    "db_option",
    "json_option",
    "no_save_option",
    "oversaturation_option",
    "tag_option",
    "tags_callback",
]
