"""surge's command line: ``surge run``, ``target``, ``demo``, ``import``, ``history``, ``show``,
``export``, ``baseline``, ``repeat``, ``stats``, ``sweep``, ``capacity``, ``compare``, ``experiments``, ``report``,
one module each.

Every error a user can cause is one line on stderr naming the flag, and exit code 2;
see ``surge.exit_codes`` for the others and ``surge.cli.errors`` for how a command ends.
"""

from __future__ import annotations

import os
import sys

# The CLI uses no pydantic plugins; without this, building the first model (the terminal
# summary's result models) scans every installed package's entry points (~50 ms of CPU).
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

import click

from surge import __version__, exit_codes, signals
from surge.cli.baseline import baseline_command
from surge.cli.compare import compare_command
from surge.cli.demo import demo_command
from surge.cli.errors import error, say, usage_error
from surge.cli.import_ import import_command
from surge.cli.experiments import experiments_command
from surge.cli.export import export_command
from surge.cli.history import history_command
from surge.cli.repeat import repeat_command
from surge.cli.report import report_command
from surge.cli.run import run_command
from surge.cli.show import show_command
from surge.cli.stats import stats_command
from surge.cli.sweep import sweep_command
from surge.cli.capacity import capacity_command
from surge.cli.target import target_command
from surge.errors import BadInput, ConnectionLimitError, PlanError, SurgeError, UnreachableError


@click.group(
    name="surge",
    help="Load and capacity testing for HTTP services.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, "-V", "--version", prog_name="surge", message="%(prog)s %(version)s",
                      help="Print surge's version and exit.")
def app() -> None:
    """app is the ``surge`` command group."""


app.add_command(run_command)
app.add_command(target_command)
app.add_command(demo_command)
app.add_command(import_command)
app.add_command(history_command)
app.add_command(show_command)
app.add_command(export_command)
app.add_command(baseline_command)
app.add_command(repeat_command)
app.add_command(stats_command)
app.add_command(sweep_command)
app.add_command(capacity_command)
app.add_command(experiments_command)
app.add_command(compare_command)
app.add_command(report_command)


def main(argv: list[str] | None = None) -> None:
    """main is the ``surge`` console entry point: one-line errors (secrets masked), documented
    exit codes; SIGINT, SIGTERM and SIGHUP stop a run keeping its results."""
    signals.install()
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
        # A scenario file reports every mistake, one line each.
        for line in str(e).splitlines() or [""]:
            error(line)
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
    sys.exit(code if isinstance(code, int) else 0)
