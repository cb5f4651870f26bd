"""Errors in an experiment's test flags name the flag as that command spells it: an experiment's
``-n`` counts runs, so its request count is ``--requests`` (``surge run``'s is ``-n/--requests``)."""

from __future__ import annotations

import pytest

from conftest import bad_experiment_input, surge
from surge.cli.test_options import flag_names, run_flag_names

LOAD_FLAGS = {
    "-c/--connections": (["-c", "0"], "must be from 1 to"),
    "-d/--duration": (["-d", "0s"], "must be above zero"),
    "--requests": (["--requests", "0"], "must be from 1 to"),
    "-r/--rate": (["-r", "0"], "must be a positive number"),
}
"""LOAD_FLAGS: each load flag an experiment command has, a bad value of it, and the message a
command without levels gives."""

LEVELS = {
    "repeat": [],
    "sweep": ["--rates", "10,20"],
    "capacity": ["--slo", "p(99) < 1s"],
    "compare": ["--variant", "a", "--variant", "b"],
}
"""LEVELS are the flags each experiment command needs besides the test."""

OVERRIDDEN = {
    ("sweep", "--requests"): "an experiment sets each run's load and length: use -d/--duration",
    ("sweep", "-r/--rate"): "the experiment sets each run's load (--rates): drop it",
    ("capacity", "-d/--duration"): "each step's length is --step-duration: drop it",
    ("capacity", "--requests"): "an experiment sets each run's load and length: use -d/--duration",
    ("capacity", "-r/--rate"): "the experiment sets each run's load (--start-rate): drop it",
}
"""OVERRIDDEN: where an experiment sets the load itself, the flag is refused with its own message."""


@pytest.mark.parametrize("flag", sorted(LOAD_FLAGS))
@pytest.mark.parametrize("command", sorted(LEVELS))
def test_a_bad_load_flag_is_named_as_the_experiment_spells_it(command, flag):
    args, message = LOAD_FLAGS[flag]
    bad_experiment_input(
        command, [*LEVELS[command], *args], f"surge: error: {flag}: {OVERRIDDEN.get((command, flag), message)}"
    )


@pytest.mark.parametrize("command", sorted(LEVELS))
def test_every_experiment_spells_its_test_flags_as_declared(command):
    import click

    from surge.cli import app

    names = flag_names(app.get_command(click.Context(app), command))
    assert names["requests"] == "--requests" and names["connections"] == "-c/--connections"
    assert names["duration"] == "-d/--duration" and names["rate"] == "-r/--rate"
    assert {k: v for k, v in names.items() if k != "requests"} == {
        k: v for k, v in run_flag_names().items() if k != "requests"
    }


def test_surge_run_still_names_its_own_request_count_flag():
    run = surge("run", "http://127.0.0.1:9/", "-n", "0")
    assert run.code == 2 and run.stderr == "surge: error: -n/--requests: must be from 1 to 1,000,000,000,000, got 0\n"
