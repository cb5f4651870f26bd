"""A finished run is never lost to its output (issue 20, "Data loss"): whatever happens to
stdout — a pipe closed by its reader (``| true``), a full disk (``> /dev/full``), a closed
stdout, an encoding without "·" — or with stderr closed (``2>&-``), the record is finished
before anything is printed: summary.json complete with its figures, the history row with its
figures, the report. A failed print is one line on stderr and exit code 74 (OUTPUT_FAILED);
a character the encoding cannot hold degrades to an ASCII look-alike."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import tiny_scenario
from surge.core import exit_codes

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)

OUTPUT_FAILED_LINE = "surge: error: cannot write to stdout: "


def closed_pipe() -> tuple[int, Callable[[], None]]:
    """closed_pipe is a pipe's write end whose read end is already closed (``| true``)."""
    read, write = os.pipe()
    os.close(read)
    return write, lambda: os.close(write)


def dev_full() -> tuple[int, Callable[[], None]]:
    """dev_full is /dev/full: every write fails with ENOSPC, as on a full disk."""
    fd = os.open("/dev/full", os.O_WRONLY)
    return fd, lambda: os.close(fd)


def start(
    args: list[str],
    cwd: Path,
    *,
    stdout: Any = subprocess.PIPE,
    stderr: Any = subprocess.PIPE,
    close: tuple[int, ...] = (),
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """start runs ``surge ARGS`` in ``cwd`` with the given stdout and stderr, the descriptors
    ``close`` closed in the child (``2>&-``), and waits for it."""

    def closing() -> None:
        for fd in close:
            os.close(fd)

    return subprocess.run(
        [sys.executable, "-m", "surge", *args],
        stdout=stdout,
        stderr=stderr,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        timeout=120,
        preexec_fn=closing,
        env={**os.environ, **(env or {})},
    )


def start_into(
    make_stdout: Callable[[], tuple[int, Callable[[], None]]], args: list[str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """start_into runs ``surge ARGS`` with stdout on what ``make_stdout`` opens (and closes after)."""
    fd, done = make_stdout()
    try:
        return start(args, cwd, stdout=fd)
    finally:
        done()


def history_row(db: Path) -> dict[str, Any]:
    """history_row is the one run the history ``db`` holds."""
    with sqlite3.connect(db) as connection:
        connection.row_factory = sqlite3.Row
        rows = [dict(r) for r in connection.execute("SELECT * FROM runs")]
    assert len(rows) == 1, rows
    return rows[0]


def assert_record_complete(out: Path, db: Path) -> dict[str, Any]:
    """assert_record_complete checks that the run's record is whole: summary.json complete with
    its figures, the report beside it, the history row complete with the same figures."""
    summary = json.loads((out / "summary.json").read_text())
    assert summary["meta"]["complete"] is True
    assert summary["requests"]["sent"] > 0 and summary["requests"]["sent"] == summary["requests"]["responses"]
    assert (out / "report.md").is_file()
    row = history_row(db)
    assert row["complete"] == 1 and row["requests"] == summary["requests"]["sent"]
    assert row["p95_ms"] is not None and row["responses_per_s"] is not None
    return summary


STDOUT_FAILURES = [
    ("closed pipe (| true)", closed_pipe, "Broken pipe"),
    ("full disk (> /dev/full)", dev_full, "No space left on device"),
]


@pytest.mark.parametrize("json_output", [False, True], ids=["summary", "json"])
@pytest.mark.parametrize("case, make_stdout, why", STDOUT_FAILURES, ids=[c[0] for c in STDOUT_FAILURES])
def test_a_failed_stdout_costs_the_output_not_the_record(
    fresh_target, tmp_path, history_db, case, make_stdout, why, json_output
):
    proc = start_into(
        make_stdout,
        [
            "run",
            f"{fresh_target.url}/health",
            "-n",
            "50",
            "-c",
            "2",
            "--out",
            "rec",
            *(["--json"] if json_output else []),
        ],
        tmp_path,
    )
    assert proc.returncode == exit_codes.OUTPUT_FAILED, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[-1].startswith(OUTPUT_FAILED_LINE + why), proc.stderr
    assert "Traceback" not in proc.stderr
    assert_record_complete(tmp_path / "rec", history_db)


def test_a_closed_stdout_costs_the_output_not_the_record(fresh_target, tmp_path, history_db):
    proc = start(
        ["run", f"{fresh_target.url}/health", "-n", "50", "-c", "2", "--out", "rec"], tmp_path, close=(1,), stdout=None
    )
    assert proc.returncode == exit_codes.OUTPUT_FAILED, proc.stderr
    assert proc.stderr.splitlines()[-1].startswith(OUTPUT_FAILED_LINE + "it is closed"), proc.stderr
    assert_record_complete(tmp_path / "rec", history_db)


def test_a_failed_stdout_keeps_the_runs_own_exit_code(fresh_target, tmp_path, history_db):
    path = tiny_scenario(
        tmp_path,
        fresh_target.url,
        iterations=5,
        extra="""\
        thresholds:
          - "p(95) < 0.000001ms"
        """,
    )
    proc = start_into(closed_pipe, ["run", str(path), "--out", "rec"], tmp_path)
    assert proc.returncode == exit_codes.THRESHOLDS_FAILED, proc.stderr
    assert any(line.startswith(OUTPUT_FAILED_LINE) for line in proc.stderr.splitlines()), proc.stderr
    summary = json.loads((tmp_path / "rec" / "summary.json").read_text())
    assert summary["meta"]["complete"] is True and summary["thresholds"][0]["passed"] is False


def test_an_ascii_terminal_gets_ascii_lookalikes(fresh_target, tmp_path, history_db):
    proc = start(
        ["run", f"{fresh_target.url}/health", "-n", "50", "-c", "2", "--out", "rec"],
        tmp_path,
        env={"PYTHONIOENCODING": "ascii"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "responses/s - " in proc.stdout  # "·" became "-"
    assert "200 x 50" in proc.stdout  # "×" became "x"
    assert_record_complete(tmp_path / "rec", history_db)


def test_a_closed_stderr_costs_nothing(fresh_target, tmp_path, history_db):
    proc = start(
        ["run", f"{fresh_target.url}/health", "-n", "50", "-c", "2", "--out", "rec"], tmp_path, close=(2,), stderr=None
    )
    assert proc.returncode == 0
    assert "Latency" in proc.stdout
    assert_record_complete(tmp_path / "rec", history_db)
    # Nothing meant for stderr went into a file that took its number.
    for path in (tmp_path / "rec").rglob("*"):
        if path.is_file() and path.suffix in (".json", ".csv", ".md", ".txt"):
            assert "results: " not in path.read_text(errors="replace"), path


def test_an_import_to_a_closed_pipe_is_recorded(tmp_path, history_db):
    source = Path(__file__).parents[1] / "fixtures" / "imports"
    hey = next(iter(sorted(source.glob("hey*.csv"))))
    proc = start_into(closed_pipe, ["import", str(hey), "--out", "rec"], tmp_path)
    assert proc.returncode == exit_codes.OUTPUT_FAILED, proc.stderr
    summary = json.loads((tmp_path / "rec" / "summary.json").read_text())
    assert summary["meta"]["complete"] is True
    assert history_row(history_db)["complete"] == 1


EXPERIMENTS = [
    ("repeat", ["-n", "2", "--requests", "20", "-c", "1"]),
    ("compare", ["--variant", "a", "--variant", "b", "-n", "1", "--requests", "20", "-c", "1"]),
    ("sweep", ["--vus", "1,2", "-d", "1s", "--warmup", "0s"]),
]
"""EXPERIMENTS are experiments of two short runs each."""


@pytest.mark.parametrize("kind, args", EXPERIMENTS, ids=[k for k, _ in EXPERIMENTS])
def test_an_experiment_to_a_closed_pipe_is_recorded(fresh_target, tmp_path, history_db, kind, args):
    proc = start_into(closed_pipe, [kind, f"{fresh_target.url}/health", *args, "--out", "exp"], tmp_path)
    assert proc.returncode == exit_codes.OUTPUT_FAILED, proc.stderr
    assert proc.stderr.splitlines()[-1].startswith(OUTPUT_FAILED_LINE + "Broken pipe"), proc.stderr
    experiment = json.loads((tmp_path / "exp" / "experiment.json").read_text())
    assert experiment["complete"] is True and len(experiment["runs"]) == 2 and experiment["analysis"]
    assert (tmp_path / "exp" / "report.md").is_file()


def test_stats_to_a_closed_pipe_is_recorded(fresh_target, tmp_path, history_db):
    for _ in range(2):
        run = start(["run", f"{fresh_target.url}/health", "-n", "20", "-c", "1", "--tag", "batch=pipe"], tmp_path)
        assert run.returncode == 0, run.stderr
    proc = start_into(closed_pipe, ["stats", "--tag", "batch=pipe", "--out", "exp"], tmp_path)
    assert proc.returncode == exit_codes.OUTPUT_FAILED, proc.stderr
    experiment = json.loads((tmp_path / "exp" / "experiment.json").read_text())
    assert experiment["complete"] is True and len(experiment["runs"]) == 2 and experiment["analysis"]
    assert (tmp_path / "exp" / "report.md").is_file()
