"""The CLI's one way to end: one line on stderr (secrets masked) and a documented exit code.

Every error a user can cause is one line ``surge: error: WHERE: message`` and exit code 2;
see ``surge.core.exit_codes`` for the others.
"""

from __future__ import annotations

import re
import sys

import click

from surge.core import exit_codes
from surge.core.exit_codes import Outcome
from surge.core.redact import redact_text


def finish(outcome: Outcome) -> None:
    """finish ends the command with the outcome's exit code, after one line on stderr saying
    why for every code but 0."""
    if outcome.code != exit_codes.OK:
        say(outcome.reason or f"exit code {outcome.code}")
    raise click.exceptions.Exit(outcome.code)


_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
_ESCAPES = {"\r": "\\r", "\n": "\\n", "\t": "\\t"}


def one_line(text: str) -> str:
    """one_line is ``text`` with every control character (CR, LF, tab, the other C0 codes,
    DEL and Unicode's line separators) written as an escape (``\\r``, ``\\n``, ``\\x00``), so
    that a value quoted in a message (a URL with CR/LF in it) cannot split it over lines."""
    return _CONTROL.sub(
        lambda m: _ESCAPES.get(m[0]) or f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text
    )


def say(line: str) -> None:
    """say prints ``surge: LINE`` on stderr as one line, secrets masked and control
    characters escaped (``one_line``)."""
    print(f"surge: {one_line(redact_text(line))}", file=sys.stderr, flush=True)


def error(message: str) -> None:
    """error prints the first line of ``message`` as ``surge: error: ...`` on stderr."""
    first_line = message.strip().splitlines()[0] if message.strip() else "unknown error"
    say(f"error: {first_line}")


def usage_error(e: click.ClickException) -> str:
    """usage_error is click's usage error as ``FLAG: message``, like every other error."""
    if isinstance(e, click.NoSuchOption):
        return f"{e.option_name}: no such option" + (
            f" (did you mean {', '.join(e.possibilities)}?)" if e.possibilities else ""
        )
    if isinstance(e, click.BadOptionUsage):
        return f"{e.option_name}: {re.sub(r'^Option .*? ', '', e.message)}".rstrip(".")
    if isinstance(e, click.BadParameter) and e.param is not None:
        where = "/".join(e.param.opts) if isinstance(e.param, click.Option) else (e.param.name or "").upper()
        if isinstance(e, click.MissingParameter):
            return f"{where}: missing (give it: surge {e.ctx.info_name if e.ctx else ''} {where})".replace("  ", " ")
        return f"{where}: {e.message}".rstrip(".")
    return e.format_message()
