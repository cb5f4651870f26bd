"""Shared fixtures: a reference target on a free loopback port, and a way to run the CLI."""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from surge.target import TargetProcess

SCRATCH = tempfile.mkdtemp(prefix="surge-tests-")
"""SCRATCH is the working directory of the ``surge`` processes tests start, so that the results
directories their runs write (``results/...``) never land in the repository; removed at exit."""
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)


@dataclass
class CliRun:
    """CliRun is one finished ``surge`` invocation."""

    code: int
    stdout: str
    stderr: str

    def said(self) -> str:
        """said is stderr without the ``results: DIR`` line a run that saved its record prints
        (which it must have, just before the line saying why it ended)."""
        lines = self.stderr.splitlines(keepends=True)
        saved = [i for i, line in enumerate(lines) if line.startswith("results: ")]
        assert len(saved) == 1 and saved[0] == len(lines) - 2, self.stderr
        return "".join(lines[:saved[0]] + lines[saved[0] + 1:])

    def json(self) -> dict[str, Any]:
        """json parses stdout as the one JSON document ``--json`` prints."""
        return json.loads(self.stdout)


def surge(*args: str, timeout: float = 120) -> CliRun:
    """surge runs the CLI in a child process (loopback targets only), in SCRATCH, and waits for it."""
    proc = subprocess.run(
        [sys.executable, "-m", "surge", *args],
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, cwd=SCRATCH,
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


TINY_SCENARIO = """\
target: @URL@
scenarios:
  a:
    executor: {type: per-vu-iterations, vus: 1, iterations: @N@}
    flow:
      - request: {path: /health}
"""
"""TINY_SCENARIO is the smallest scenario file: one scenario, one VU, N requests to /health."""


def tiny_scenario(tmp_path: Path, url: str, *, iterations: int = 2, extra: str = "", name: str = "tiny.yaml") -> Path:
    """tiny_scenario writes TINY_SCENARIO for ``url`` with ``extra`` (top-level YAML, e.g.
    thresholds) appended, and returns its path."""
    return write(tmp_path, TINY_SCENARIO + textwrap.dedent(extra), name=name, URL=url, N=str(iterations))
