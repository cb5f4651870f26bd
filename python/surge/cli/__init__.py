"""surge's command line: ``surge run``, ``target``, ``demo``, ``import``, ``history``, ``show``,
``export``, ``baseline``, ``repeat``, ``stats``, ``sweep``, ``capacity``, ``compare``, ``experiments``, ``report``,
one module each.

Every error a user can cause is one line on stderr naming the flag, and exit code 2;
see ``surge.core.exit_codes`` for the others and ``surge.cli.exit`` for how a command ends.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys

# The CLI uses no pydantic plugins; without this, building the first model (the terminal
# summary's result models) scans every installed package's entry points (~50 ms of CPU).
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

import click

from surge import __version__
from surge.cli.exit import error, say, usage_error
from surge.core import exit_codes, signals, streams
from surge.core.errors import BadInput, SurgeError
from surge.engine.execute import ConnectionLimitError, PlanError, UnreachableError

COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run_command", "run_command"),
    "target": ("target_command", "target_command"),
    "demo": ("demo_command", "demo_command"),
    "import": ("import_command", "import_command"),
    "history": ("history_command", "history_command"),
    "show": ("show_command", "show_command"),
    "export": ("export_command", "export_command"),
    "baseline": ("baseline_command", "baseline_command"),
    "repeat": ("repeat_command", "repeat_command"),
    "stats": ("stats_command", "stats_command"),
    "sweep": ("sweep_command", "sweep_command"),
    "capacity": ("capacity_command", "capacity_command"),
    "experiments": ("experiments_command", "experiments_command"),
    "compare": ("compare_command", "compare_command"),
    "report": ("report_command", "report_command"),
}
"""COMMANDS maps each ``surge`` command's name to its module under ``surge.cli`` and the
module's click command, imported only when that command is used (or listed by ``surge --help``)."""


class LazyGroup(click.Group):
    """LazyGroup is a click group whose commands (``COMMANDS``) are imported on first use:
    ``surge run`` loads neither numpy nor the history nor Rich, which only other commands need
    at import time (click's documented lazy-loading pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """list_commands names every command, imported or not, sorted as click sorts them."""
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """get_command imports ``cmd_name``'s module the first time the command is asked for."""
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"surge.cli.{module}"), attribute)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(
    name="surge",
    cls=LazyGroup,
    help="Load and capacity testing for HTTP services.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(
    __version__,
    "-V",
    "--version",
    prog_name="surge",
    message="%(prog)s %(version)s",
    help="Print surge's version and exit.",
)
def app() -> None:
    """app is the ``surge`` command group."""


def main(argv: list[str] | None = None) -> None:
    """main is the ``surge`` console entry point: one-line errors (secrets masked), documented
    exit codes; SIGINT, SIGTERM and SIGHUP stop a run keeping its results; stdout and stderr
    guarded (``surge.core.streams``): a failed print costs neither the run nor its record."""
    streams.install()
    signals.install()
    try:
        code = _command(argv)
    except KeyboardInterrupt:  # a stop signal as the command ended: ``ending`` says it
        code = exit_codes.OK
    while True:
        try:
            sys.exit(ending(code))
        except KeyboardInterrupt:  # a stop signal before ``ending`` deferred them: once more, saying it
            continue


def _command(argv: list[str] | None) -> int:
    """_command runs the command ``argv`` names and returns its exit code, having said why on
    stderr for every code but 0."""
    try:
        code = app.main(args=argv, prog_name="surge", standalone_mode=False)
    except click.exceptions.Exit as e:
        code = e.exit_code
    except click.ClickException as e:  # usage errors: unknown flag, bad type, missing argument
        error(usage_error(e))
        code = exit_codes.BAD_INPUT
    except (KeyboardInterrupt, click.exceptions.Abort):  # a stop signal before or after a run
        stop = exit_codes.stopped()
        say(stop.reason)
        code = stop.code
    except BadInput as e:
        # A scenario file reports every mistake, one line each; any other bad input is one line.
        for line in e.lines or [""]:
            say(f"error: {line}")
        code = exit_codes.BAD_INPUT
    except UnreachableError as e:
        error(str(e.args[0]) if e.args else str(e))
        code = exit_codes.UNREACHABLE
    except (PlanError, ConnectionLimitError) as e:
        error(str(e.args[0]) if e.args else str(e))
        code = exit_codes.BAD_INPUT
    except SurgeError as e:
        error(str(e))
        code = exit_codes.RUN_FAILED
    return code if isinstance(code, int) else 0


def ending(code: int) -> int:
    """ending is the exit code surge ends with, given the command's ``code``, once its output
    is flushed: a stop signal received and not yet said (one in the run's last milliseconds,
    after its outcome was decided) is said and gives 128 + its number; else a failed write to
    stdout is said and gives OUTPUT_FAILED when the command had no code of its own. From here
    on stop signals are ignored: what is left is the exit."""
    with signals.deferred():  # a first stop signal is recorded; a second ends a blocked flush
        with contextlib.suppress(OSError, ValueError, KeyboardInterrupt):  # nothing more can be written
            sys.stdout.flush()
        late = signals.received()
        if late is not None and code != signals.exit_code(late):
            stop = exit_codes.stopped()
            say(stop.reason)
            code = stop.code
        elif (failed := streams.failure()) is not None:
            error(f"{failed}; the output is incomplete (a run's record is complete)")
            if code == exit_codes.OK:
                code = exit_codes.OUTPUT_FAILED
        signals.ignore()
    return code
