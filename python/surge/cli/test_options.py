"""The test description's argument and flags, declared once for every command that runs a
test (``surge run``, ``repeat`` and the other experiments): the command receives them as one
``test: TestSpec`` (``surge.run.spec``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any, TypeVar

import click

from surge.cli.options import RATE, db_option, no_save_option, tag_option
from surge.run.spec import TestSpec

F = TypeVar("F", bound=Callable[..., Any])


def _options(requests_flags: tuple[str, ...], url_required: bool = True) -> list[Callable[[Any], Any]]:
    """_options are the test's argument and flags, in the order ``--help`` lists them;
    ``requests_flags`` names the request-count flag (an experiment takes ``-n`` for its runs);
    without ``url_required`` FILE|URL may be left out (``target`` is then "")."""
    return [
        click.argument("url") if url_required else click.argument("url", required=False, default=""),
        click.option(
            "-c",
            "--connections",
            type=int,
            help="Closed model: virtual users, one connection each (default 64). With -r: connections opened "
            "up front (default: 2 ms of arrivals).",
        ),
        click.option("-d", "--duration", help="How long to send, e.g. 30s, 1m30s (default 10s)."),
        click.option(*requests_flags, "requests", type=int, help="Send exactly this many requests."),
        click.option(
            "-r", "--rate", type=RATE, help="Open model: requests per second, timed from the intended send time."
        ),
        click.option("-m", "--method", help="HTTP method (default GET)."),
        click.option("-H", "--header", multiple=True, help="'Name: value' header; repeatable."),
        click.option("--body", help="Request body: text, or @file."),
        click.option(
            "--timeout",
            help="Per-request timeout (default 30s). With a scenario file: replaces "
            "defaults.timeout (a request's own timeout stays).",
        ),
        click.option("--threads", type=int, help="Event-loop threads (default: one per core)."),
        click.option(
            "--max-in-flight",
            "max_in_flight",
            type=int,
            help="Open model: cap on outstanding requests (and connections).",
        ),
        click.option(
            "--send-slack",
            "send_slack",
            metavar="DURATION",
            help="Open model: how late a send may go out to be batched with others (default 1ms, at most 16 "
            "sends a batch; 0 sends each at its time). Latency is still timed from the intended send time. With a scenario "
            "file: replaces send_slack.",
        ),
        click.option(
            "--grace",
            help="How long requests in flight at the end may still finish (default 5s). With a "
            "scenario file: replaces graceful_stop.",
        ),
        click.option("--insecure", is_flag=True, help="Do not verify TLS certificates (with a scenario file too)."),
        click.option(
            "--time-scale",
            "time_scale",
            type=float,
            help="Scenario files: multiply executor durations, stages, start times and threshold delays by "
            "FACTOR (not think times, timeouts or graceful stops: the test is shorter, the load the "
            "same).",
        ),
        click.option(
            "--target", "target_url", help="Scenario files: send to this base URL instead of the file's target."
        ),
        click.option(
            "-e",
            "--env",
            "env_pairs",
            multiple=True,
            metavar="NAME=VALUE",
            help="Scenario files: set NAME for the file's env variables (over the process environment); repeatable.",
        ),
        click.option(
            "--out",
            "out",
            metavar="DIR",
            help="Write the results directory here (default: results/<UTC yyyymmdd-HHMMSS>-<name>/).",
        ),
        db_option,
        tag_option,
        no_save_option,
        click.option(
            "--watch-pid",
            "watch_pid",
            type=int,
            metavar="PID",
            help="Sample process PID (the target, with its child processes) every second during each run: "
            "CPU, RSS, threads, open files, into the time series, summary.json and the findings.",
        ),
    ]


_FIELDS = {"url": "target", **{f.name: f.name for f in fields(TestSpec) if f.name not in ("target", "flags")}}
"""_FIELDS maps each click parameter of the test's options to its TestSpec field (``flags``
is no option: it is how the command spells them)."""


def flag_names(command: click.Command) -> dict[str, str]:
    """flag_names maps each TestSpec field to its flag as ``command`` declares it, short and long
    (``requests`` -> ``-n/--requests`` for ``surge run``, ``--requests`` for ``surge repeat``)."""
    return {
        _FIELDS[p.name]: "/".join(p.opts) for p in command.params if isinstance(p, click.Option) and p.name in _FIELDS
    }


@functools.cache
def run_flag_names() -> Mapping[str, str]:
    """run_flag_names are ``surge run``'s flag names (``flag_names`` of its command)."""
    from surge.cli.run import run_command

    return flag_names(run_command)


def _with_test_options(command: F, options: list[Callable[[Any], Any]]) -> F:
    @functools.wraps(command)
    def with_test(*args: Any, **kwargs: Any) -> Any:
        values: dict[str, Any] = {field: kwargs.pop(param) for param, field in _FIELDS.items()}
        values["header"] = tuple(values["header"])
        values["env_pairs"] = tuple(values["env_pairs"])
        values["tags"] = tuple(values["tags"].items())
        # Errors name each flag as this command spells it (an experiment's -n counts runs).
        values["flags"] = flag_names(click.get_current_context().command)
        return command(*args, test=TestSpec(**values), **kwargs)

    for option in reversed(options):
        with_test = option(with_test)
    return with_test  # type: ignore[return-value]


def test_options(command: F) -> F:
    """test_options adds the test description (FILE|URL and every flag of ``surge run`` that
    describes the test, ``--out``, ``--db``, ``--tag`` and ``--no-save`` included) to a click command, which
    receives it as one ``test: TestSpec`` argument instead of the separate parameters."""
    return _with_test_options(command, _options(("-n", "--requests")))


def experiment_test_options(command: F) -> F:
    """experiment_test_options is ``test_options`` for an experiment command, whose ``-n`` is
    its number of runs: the request count is ``--requests`` only."""
    return _with_test_options(command, _options(("--requests",)))


def optional_test_options(command: F) -> F:
    """optional_test_options is ``experiment_test_options`` with FILE|URL optional: a command that
    may also work on runs already recorded (``surge compare --group``) receives a TestSpec whose
    ``target`` is "" when none was given."""
    return _with_test_options(command, _options(("--requests",), url_required=False))


test_options.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
experiment_test_options.__test__ = False  # type: ignore[attr-defined]
optional_test_options.__test__ = False  # type: ignore[attr-defined]
