"""surge's start-up: ``surge.cli`` imports a command's module only when that command is used, and
``surge run`` imports nothing that a plain run does not need (its CPU counts in every benchmark;
docs/engine.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from conftest import SCRATCH
from surge.cli import COMMANDS, app

HEAVY = {
    "numpy",
    "scipy",
    "rich",
    "psutil",
    "jinja2",
    "pydantic",
    "yaml",
    "statistics",
    "hashlib",
    "surge.history",
    "surge.analysis",
    "surge.present",
    "surge.present.terminal.summary",
    "surge.engine.result",
    "surge.record.writer",
    "surge.diagnosis.watch",
    "ray",
}
"""HEAVY are the modules (packages with everything under them) a plain ``surge run URL --json
--no-save`` must not import: each costs milliseconds of CPU, and only other commands or options
(a terminal summary, saving, --watch-pid, --ray) need them."""

LOADED = """\
import json, sys
from surge.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""
"""LOADED runs ``surge ARGS`` in-process and prints the names of every module loaded as the last
line of stderr."""


def loaded_modules(*args: str) -> set[str]:
    """loaded_modules runs ``surge ARGS`` in a fresh interpreter and returns every module it loaded."""
    proc = subprocess.run(
        [sys.executable, "-c", LOADED, *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        cwd=SCRATCH,
    )
    return set(json.loads(proc.stderr.splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    """heavy lists the modules of ``modules`` that are, or are under, one of HEAVY."""
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def commands_loaded(modules: set[str]) -> set[str]:
    """commands_loaded names the commands whose module is among ``modules``."""
    return {name for name, (module, _) in COMMANDS.items() if f"surge.cli.{module}" in modules}


def test_a_plain_url_run_loads_none_of_the_heavy_modules(fresh_target):
    modules = loaded_modules("run", f"{fresh_target.url}/health", "-n", "1", "--threads", "1", "--json", "--no-save")
    assert "surge._engine" in modules  # it did run
    assert heavy(modules) == []
    assert commands_loaded(modules) == {"run"}


def test_run_help_loads_only_the_run_command():
    modules = loaded_modules("run", "--help")
    assert heavy(modules) == []
    assert commands_loaded(modules) == {"run"}


@pytest.mark.parametrize("command", ["target", "history"])
def test_a_commands_help_loads_only_that_command(command):
    assert commands_loaded(loaded_modules(command, "--help")) == {command}


def test_the_version_loads_no_command():
    assert commands_loaded(loaded_modules("--version")) == set()


def test_surge_help_lists_every_command_with_its_short_help():
    out = subprocess.run(
        [sys.executable, "-m", "surge", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        cwd=SCRATCH,
    ).stdout
    listed = out.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed] == sorted(COMMANDS)
    ctx = click.Context(app)
    for line in listed:
        name, short = line.split(maxsplit=1)
        command = app.get_command(ctx, name)
        assert command is not None and short == command.get_short_help_str(limit=len(short))
