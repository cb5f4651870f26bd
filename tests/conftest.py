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


def surge_in(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """surge_in runs ``surge ARGS`` in ``cwd`` (where its results directories go) and waits for it."""
    return subprocess.run([sys.executable, "-m", "surge", *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, cwd=cwd)


def start_surge(cwd: Path, *args: str) -> subprocess.Popen[str]:
    """start_surge starts ``surge ARGS`` in ``cwd`` without waiting (stdout discarded, stderr piped)."""
    return subprocess.Popen([sys.executable, "-m", "surge", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL, cwd=cwd)


@pytest.fixture(autouse=True)
def history_db(tmp_path_factory, monkeypatch) -> Path:
    """history_db is the run history every test's surge processes record into: a fresh file
    per test (SURGE_DB), never the user's own."""
    path = tmp_path_factory.mktemp("history") / "history.db"
    monkeypatch.setenv("SURGE_DB", str(path))
    return path


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
