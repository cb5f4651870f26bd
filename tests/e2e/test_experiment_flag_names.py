"""Errors in an experiment's test flags name the flag as that command spells it: an experiment's
``-n`` counts runs, so its request count is ``--requests`` (``surge run``'s is ``-n/--requests``)."""

from __future__ import annotations

import pytest

from conftest import LEVELS, bad_experiment_input, surge

LOAD_FLAGS = {
    "-c/--connections": (["-c", "0"], "must be from 1 to"),
    "-d/--duration": (["-d", "0s"], "must be above zero"),
    "--requests": (["--requests", "0"], "must be from 1 to"),
    "-r/--rate": (["-r", "0"], "must be a positive number"),
}
"""LOAD_FLAGS: each load flag an experiment command has, a bad value of it, and the message a
command without levels gives."""


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


def test_surge_run_still_names_its_own_request_count_flag():
    run = surge("run", "http://127.0.0.1:9/", "-n", "0")
    assert run.code == 2 and run.stderr == "surge: error: -n/--requests: must be from 1 to 1,000,000,000,000, got 0\n"
