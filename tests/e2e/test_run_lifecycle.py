"""A run's lifecycle around its record (issue 20): ``--out`` is never shared (a directory that
holds another record is refused, one another process writes is locked), a SIGKILLed run never
leaves an older run's report beside its own summary, and a stop signal in a run's last moments
always gets its ``surge: stopped by …`` line with 128 + its number."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import intervals_logged, surge_in, wait_for
from surge.core import exit_codes

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)


def start_long_run(url: str, out: Path, cwd: Path) -> subprocess.Popen[bytes]:
    """start_long_run starts a 30 s run into ``out`` (the test ends it) and waits for its first interval."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "surge", "run", f"{url}/health", "-d", "30s", "-c", "1", "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
    )
    try:
        wait_for(proc, lambda: intervals_logged(out) >= 1)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc


def test_an_out_that_holds_another_run_is_refused_and_left_untouched(fresh_target, tmp_path):
    first = surge_in(tmp_path, "run", f"{fresh_target.url}/health", "-n", "10", "-c", "1", "--out", "rec")
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in (tmp_path / "rec").iterdir() if p.is_file()}
    again = surge_in(tmp_path, "run", f"{fresh_target.url}/health", "-n", "10", "-c", "1", "--out", "rec")
    assert again.returncode == exit_codes.BAD_INPUT
    assert again.stderr.splitlines() == [
        "surge: error: --out: rec holds another run's record already (summary.json): choose a new directory, or "
        "remove that one"
    ]
    assert {p.name: p.read_bytes() for p in (tmp_path / "rec").iterdir() if p.is_file()} == before


def test_a_sigkilled_run_is_never_followed_into_its_directory(fresh_target, tmp_path):
    """The first run completes with its report; a second is killed mid-run: it was refused the
    directory, so the report beside summary.json is still the first run's own."""
    out = tmp_path / "rec"
    killed = start_long_run(fresh_target.url, out, tmp_path)
    killed.kill()
    killed.wait()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["meta"]["complete"] is False and not (out / "report.md").exists()
    again = surge_in(tmp_path, "run", f"{fresh_target.url}/health", "-n", "10", "-c", "1", "--out", str(out))
    assert again.returncode == exit_codes.BAD_INPUT, again.stderr
    assert "holds another run's record already" in again.stderr
    assert json.loads((out / "summary.json").read_text())["meta"]["run_id"] == summary["meta"]["run_id"]
    assert not (out / "report.md").exists()  # no report of another run beside this summary


def test_an_out_another_process_writes_is_refused(fresh_target, tmp_path):
    out = tmp_path / "rec"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a surge run writing there holds it
        run = surge_in(tmp_path, "run", f"{fresh_target.url}/health", "-n", "10", "-c", "1", "--out", str(out))
    finally:
        os.close(fd)
    assert run.returncode == exit_codes.BAD_INPUT
    assert run.stderr.splitlines() == [
        f"surge: error: --out: {out} is being written by another surge process (choose another directory)"
    ]
    assert list(out.iterdir()) == []
    assert fresh_target.received() == 0


def test_a_run_holds_its_out_locked_until_it_ends_however_it_ends(fresh_target, tmp_path):
    out = tmp_path / "rec"
    proc = start_long_run(fresh_target.url, out, tmp_path)
    try:
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                locked = False
            except BlockingIOError:
                locked = True
            assert locked, "a running run must hold its --out locked"
            proc.kill()
            proc.wait()
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the kernel released it with the process
        finally:
            os.close(fd)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_stop_signal_at_the_very_end_is_always_said(fresh_target, tmp_path):
    """SIGTERM sent the moment the run names its results directory (its last line, just before
    it exits): whether it lands before the exit code is decided (143) or after (0, the run
    complete), it never kills the process without the line saying so."""
    for attempt in range(6):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "surge",
                "run",
                f"{fresh_target.url}/health",
                "-n",
                "20",
                "-c",
                "1",
                "--out",
                f"rec{attempt}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
            cwd=tmp_path,
        )
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("results: "):
                proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        said = "surge: stopped by SIGTERM\n" in lines
        assert (proc.returncode, said) in ((0, False), (143, True)), (proc.returncode, lines)
        summary = json.loads((tmp_path / f"rec{attempt}" / "summary.json").read_text())
        assert summary["meta"]["complete"] is True  # recorded before the signal could matter
