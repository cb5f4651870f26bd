"""Every experiment spells its test flags as the run command declares them."""

from __future__ import annotations

import pytest

from conftest import LEVELS
from surge.cli.test_options import flag_names, run_flag_names


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
