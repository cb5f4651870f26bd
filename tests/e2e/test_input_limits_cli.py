"""The CLI under hostile scenario files: an alias bomb and a file that is not a regular file are
refused quickly, in one line, in little memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from conftest import SCRATCH
from hostile_inputs import HEAD, TAIL, alias_bomb


def surge_limited(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """surge_limited runs the CLI with 1 GB of address space at most: a file that tried to
    take more fails the test instead of the machine."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    return subprocess.run(
        [sys.executable, "-m", "surge", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit,
        stdin=subprocess.DEVNULL,
        cwd=SCRATCH,
    )


def test_alias_bombs_are_refused_by_the_cli_quickly_and_in_little_memory(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(HEAD + alias_bomb(9) + TAIL)
    run = surge_limited("run", str(path))
    assert run.returncode == 2, run.stderr[-2000:]
    assert run.stderr.startswith(f"surge: error: {path}:7: a5[0]: aliases repeat more than"), run.stderr[-2000:]
    assert len(run.stderr.splitlines()) == 1 and "Traceback" not in run.stderr


@pytest.mark.parametrize("kind", ["character device", "FIFO", "directory"])
def test_a_scenario_file_that_is_not_a_regular_file_is_refused(tmp_path, kind):
    path = tmp_path / "odd.yaml"
    if kind == "character device":
        path.symlink_to("/dev/zero")
    elif kind == "FIFO":
        os.mkfifo(path)
    else:
        path.mkdir()
    run = surge_limited("run", str(path), timeout=30)
    assert run.returncode == 2, run.stderr[-2000:]
    assert run.stderr.startswith(f"surge: error: {path}: is a "), run.stderr
    assert "not a regular file" in run.stderr and len(run.stderr.splitlines()) == 1
