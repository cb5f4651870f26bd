"""Shared fixtures: a reference target on a free loopback port, and a way to run the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from surge.target import TargetProcess


@dataclass
class CliRun:
    """CliRun is one finished ``surge`` invocation."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        """json parses stdout as the one JSON document ``--json`` prints."""
        return json.loads(self.stdout)


def surge(*args: str, timeout: float = 120) -> CliRun:
    """surge runs the CLI in a child process (loopback targets only) and waits for it."""
    proc = subprocess.run(
        [sys.executable, "-m", "surge", *args],
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )
    return CliRun(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(scope="module")
def target():
    """target is a plain reference target (no service model) shared by a test module."""
    with TargetProcess() as t:
        yield t


@pytest.fixture
def fresh_target(target):
    """fresh_target is the module's target with its counts reset."""
    target.reset_stats()
    return target


def write(tmp_path: Path, text: str, name: str = "test.yaml", **subs: str) -> Path:
    """write dedents ``text`` (a scenario file), replaces each ``@KEY@`` with ``subs[KEY]``
    and writes it to ``tmp_path / name``."""
    text = textwrap.dedent(text)
    for key, value in subs.items():
        text = text.replace(f"@{key}@", value)
    path = tmp_path / name
    path.write_text(text)
    return path
