"""The units' rules through the command line: a rate flag refuses what a scenario file refuses,
naming the flag (tests/unit/core/test_units.py has the rules themselves)."""

from __future__ import annotations

from conftest import surge


def test_a_rate_flag_refuses_what_a_file_refuses_naming_the_flag():
    run = surge("run", "http://127.0.0.1:9/", "-r", "1k", "-d", "1s")
    assert run.code == 2, run.stderr
    assert run.stderr == "surge: error: -r/--rate: '1k' is not a rate (examples: 300, 300/s, 18000/m, 50/h)\n"
