"""The CLI's one way to end: one line on stderr (secrets masked) and a documented exit code.

Every error a user can cause is one line ``surge: error: WHERE: message`` and exit code 2;
see ``surge.exit_codes`` for the others.
"""

from __future__ import annotations

import re
import sys

import click

from surge import exit_codes
from surge.exit_codes import Outcome
from surge.redact import redact_text


def finish(outcome: Outcome) -> None:
    """finish ends the command with the outcome's exit code, after one line on stderr saying
    why for every code but 0."""
    if outcome.code != exit_codes.OK:
        say(outcome.reason or f"exit code {outcome.code}")
    raise click.exceptions.Exit(outcome.code)


def say(line: str) -> None:
    """say prints ``surge: LINE`` on stderr, secrets masked."""
    print(f"surge: {redact_text(line)}", file=sys.stderr, flush=True)


def error(message: str) -> None:
    """error prints the first line of ``message`` as ``surge: error: ...`` on stderr."""
    first_line = message.strip().splitlines()[0] if message.strip() else "unknown error"
    say(f"error: {first_line}")


def usage_error(e: click.ClickException) -> str:
    """usage_error is click's usage error as ``FLAG: message``, like every other error."""
    if isinstance(e, click.NoSuchOption):
        return f"{e.option_name}: no such option" + (f" (did you mean {', '.join(e.possibilities)}?)"
                                                      if e.possibilities else "")
    if isinstance(e, click.BadOptionUsage):
        return f"{e.option_name}: {re.sub(r'^Option .*? ', '', e.message)}".rstrip(".")
    if isinstance(e, click.BadParameter) and e.param is not None:
        where = "/".join(e.param.opts) if isinstance(e.param, click.Option) else (e.param.name or "").upper()
        if isinstance(e, click.MissingParameter):
            return f"{where}: missing (give it: surge {e.ctx.info_name if e.ctx else ''} {where})".replace("  ", " ")
        return f"{where}: {e.message}".rstrip(".")
    return e.format_message()
