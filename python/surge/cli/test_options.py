"""The test description's argument and flags for every command that runs a test (``surge run``,
``repeat`` and the other experiments): the run layer's table (``surge.run.flags.TEST_OPTIONS``)
turned into click options; the command receives them as one ``test: TestSpec``
(``surge.run.spec``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from surge.cli.options import RATE, tags_callback
from surge.run.flags import TEST_OPTIONS, TestOption, test_flag_names
from surge.run.spec import TestSpec

F = TypeVar("F", bound=Callable[..., Any])

_TYPES: dict[str, Any] = {"int": int, "float": float, "rate": RATE, "text": None, "texts": None}
"""_TYPES is the click type of each kind of option that takes a value."""


def _click_option(option: TestOption, experiment: bool) -> Callable[[Any], Any]:
    """_click_option is the click option of one row of the table, its parameter named after its field."""
    declared: dict[str, Any] = {"help": option.help}
    if option.metavar is not None:
        declared["metavar"] = option.metavar
    if option.kind == "switch":
        declared["is_flag"] = True
    elif option.kind == "address":  # --ray alone is --ray=local, --dashboard alone 127.0.0.1:5665
        declared.update(is_flag=False, flag_value=option.alone, default=None)
    elif option.kind == "tags":
        declared.update(multiple=True, callback=tags_callback)
    else:
        declared.update(multiple=option.kind == "texts", type=_TYPES[option.kind])
    return click.option(*option.spelled(experiment), option.field, **declared)


def _options(experiment: bool, url_required: bool = True) -> list[Callable[[Any], Any]]:
    """_options are the test's argument and flags, in the order ``--help`` lists them; an
    ``experiment`` takes ``-n`` for its runs (the request count is ``--requests``); without
    ``url_required`` FILE|URL may be left out (``target`` is then "")."""
    return [
        click.argument("url") if url_required else click.argument("url", required=False, default=""),
        *(_click_option(o, experiment) for o in TEST_OPTIONS),
    ]


_FIELDS = {"url": "target", **{o.field: o.field for o in TEST_OPTIONS}}
"""_FIELDS maps each click parameter of the test's options to its TestSpec field."""


def flag_names(command: click.Command) -> dict[str, str]:
    """flag_names maps each TestSpec field to its flag as ``command`` declares it, short and long
    (``requests`` -> ``-n/--requests`` for ``surge run``, ``--requests`` for ``surge repeat``)."""
    return {
        _FIELDS[p.name]: "/".join(p.opts) for p in command.params if isinstance(p, click.Option) and p.name in _FIELDS
    }


def run_flag_names() -> Mapping[str, str]:
    """run_flag_names are ``surge run``'s flag names (``surge.run.flags.test_flag_names``)."""
    return test_flag_names()


def _with_test_options(command: F, experiment: bool, url_required: bool = True) -> F:
    flags = test_flag_names(experiment=experiment)

    @functools.wraps(command)
    def with_test(*args: Any, **kwargs: Any) -> Any:
        values: dict[str, Any] = {field: kwargs.pop(param) for param, field in _FIELDS.items()}
        values["header"] = tuple(values["header"])
        values["env_pairs"] = tuple(values["env_pairs"])
        values["export"] = tuple(values["export"])
        values["slo"] = tuple(values["slo"])
        values["tags"] = tuple(values["tags"].items())
        # Errors name each flag as this command spells it (an experiment's -n counts runs).
        test = TestSpec(**values, flags=flags)
        if test.dashboard is None and not test.dashboard_open:
            return command(*args, test=test, **kwargs)
        # Function-local: the server and the page's renderers load only with --dashboard, which
        # listens before the command's first run and stops when the command ends.
        from surge.run.dashboard import serve_dashboard

        with serve_dashboard(test):
            return command(*args, test=test, **kwargs)

    for option in reversed(_options(experiment, url_required)):
        with_test = option(with_test)
    return with_test  # type: ignore[return-value]


def test_options(command: F) -> F:
    """test_options adds the test description (FILE|URL and every flag of ``surge run`` that
    describes the test, ``--out``, ``--db``, ``--tag`` and ``--no-save`` included) to a click command, which
    receives it as one ``test: TestSpec`` argument instead of the separate parameters."""
    return _with_test_options(command, experiment=False)


def experiment_test_options(command: F) -> F:
    """experiment_test_options is ``test_options`` for an experiment command, whose ``-n`` is
    its number of runs: the request count is ``--requests`` only."""
    return _with_test_options(command, experiment=True)


def optional_test_options(command: F) -> F:
    """optional_test_options is ``experiment_test_options`` with FILE|URL optional: a command that
    may also work on runs already recorded (``surge compare --group``) receives a TestSpec whose
    ``target`` is "" when none was given."""
    return _with_test_options(command, experiment=True, url_required=False)


test_options.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
experiment_test_options.__test__ = False  # type: ignore[attr-defined]
optional_test_options.__test__ = False  # type: ignore[attr-defined]
