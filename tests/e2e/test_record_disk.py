"""A results directory that cannot be written (a full disk: a 256 KiB tmpfs filled up) never
costs the run: one warning line naming the file and the error, nothing more written there,
the run completes with its summary and its own exit code, and summary.json, when it can still
be written, says the record is incomplete."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import tiny_scenario
from surge.record.schema import validate_file

DISK_BYTES = 256 * 1024


@pytest.fixture
def small_disk(tmp_path):
    """small_disk is a 256 KiB tmpfs mounted in the test's directory (skipped where mounting
    is not permitted), unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def fill(disk: Path, leave_pages: int) -> Path:
    """fill writes a file that leaves ``leave_pages`` 4 KiB pages free on ``disk``; returns it."""
    stat = os.statvfs(disk)
    free = stat.f_bavail * stat.f_frsize
    filler = disk / "filler"
    filler.write_bytes(b"\0" * (free - leave_pages * 4096))
    return filler


def surge_in(cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "surge", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
    )


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("surge: warning:")]


def test_disk_full_during_the_run_warns_once_and_the_run_completes_with_its_exit_code(
    fresh_target, tmp_path, small_disk
):
    path = tiny_scenario(
        tmp_path,
        fresh_target.url,
        iterations=30,
        extra="""\
        thresholds:
          - "p(95) < 0.000001ms"
        """,
    )
    fill(small_disk, leave_pages=2)  # summary.json and scenario.yaml fit; timeseries.csv does not
    out = small_disk / "rec"
    proc = surge_in(tmp_path, "run", str(path), "--out", str(out))
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 99, stderr  # the threshold's verdict, as without the full disk
    assert warnings(stderr) == [
        f"surge: warning: cannot write {out}/timeseries.csv: No space left on device; "
        "the results directory is left incomplete (the run goes on)"
    ]
    assert "Traceback" not in stderr
    assert "p(95) < 0.000001ms" in stdout  # the summary was printed
    assert fresh_target.received() == 30
    doc = validate_file(out)  # the first summary.json stays: the final one did not fit
    assert list(doc) == ["meta"] and doc["meta"]["complete"] is False
    assert not (out / "summary.json.tmp").exists()
    assert stderr.splitlines()[-2] == f"results: {out}"


def test_summary_json_written_after_a_failed_write_says_incomplete(fresh_target, tmp_path, small_disk):
    filler = fill(small_disk, leave_pages=2)
    out = small_disk / "rec"
    proc = surge_in(tmp_path, "run", f"{fresh_target.url}/health", "-d", "3s", "-c", "1", "--out", str(out), "--json")
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the warning, while the run goes on
    filler.unlink()  # room again: the final summary.json fits
    stdout, rest = proc.communicate(timeout=120)
    stderr = first + rest
    assert proc.returncode == 0, stderr
    assert warnings(stderr) == [first.rstrip("\n")] and "timeseries.csv: No space left on device" in first
    doc = validate_file(out)
    assert doc["meta"]["complete"] is False and doc["stop_reason"] == "duration"
    assert {k: v for k, v in doc.items() if k != "meta"} == json.loads(stdout)
    assert not (out / "latency.hlog").exists()  # nothing written after the failure


def test_a_disk_full_from_the_start_loses_nothing_but_the_directory(fresh_target, tmp_path, small_disk):
    fill(small_disk, leave_pages=0)
    out = small_disk / "rec"
    proc = surge_in(tmp_path, "run", f"{fresh_target.url}/health", "-n", "10", "-c", "1", "--out", str(out), "--json")
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert warnings(stderr) == [
        f"surge: warning: cannot write {out}/summary.json: No space left on device; "
        "the results directory is left incomplete (the run goes on)"
    ]
    assert json.loads(stdout)["requests"]["responses"] == 10
    assert list(out.iterdir()) == []
