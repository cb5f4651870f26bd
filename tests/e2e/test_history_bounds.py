"""The history's edges (issue 20): out-of-range ``--since``/``--limit`` are one-line errors; a
database refused (a newer surge's, another program's) is left byte for byte as it was, its
journal mode too; a run blocked on a locked history says so, and its times exclude the wait;
a history locked mid-run never holds the run up (its intervals wait, the run does not)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from conftest import intervals_logged, surge_in, wait_for
from surge.core import exit_codes

OUT_OF_RANGE = [
    (
        ["--since", "99999999999d"],
        "surge: error: --since: '99999999999d' reaches back before the year 1 (give a shorter duration, or a date)",
    ),
    (
        ["--since", "9999999w"],
        "surge: error: --since: '9999999w' reaches back before the year 1 (give a shorter duration, or a date)",
    ),
    (
        ["--limit", "100000000000000000000000"],
        "surge: error: --limit: must be at most 1,000,000,000, got 100,000,000,000,000,000,000,000",
    ),
    (["--limit", "9" * 40], "surge: error: --limit: must be at most 1,000,000,000"),
]


FLAG_CASES = [
    (command, args, line)
    for command in ("history", "experiments")
    for args, line in OUT_OF_RANGE
    if command == "history" or args[0] == "--limit"
]
"""FLAG_CASES: every out-of-range flag of each command that has it (surge experiments: --limit)."""


@pytest.mark.parametrize("command, args, line", FLAG_CASES, ids=[f"{c} {' '.join(a)}" for c, a, _ in FLAG_CASES])
def test_out_of_range_history_flags_are_one_line(tmp_path, command, args, line):
    run = surge_in(tmp_path, command, *args)
    assert (run.returncode, run.stderr.splitlines()) == (exit_codes.BAD_INPUT, [line])


def too_new(path: Path) -> None:
    with sqlite3.connect(path) as c:
        c.execute("PRAGMA user_version = 99")
        c.execute("CREATE TABLE runs (x)")


def foreign(path: Path) -> None:
    """foreign is another program's database, with a table named as one of surge's."""
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE runs (name TEXT)")
        c.execute("INSERT INTO runs VALUES ('ada')")


REFUSED = [
    (too_new, "history schema version 99 is newer than this surge reads"),
    (foreign, "not a surge history (it holds a table 'runs' of another program)"),
]


@pytest.mark.parametrize("make, why", REFUSED, ids=["too new", "foreign"])
@pytest.mark.parametrize("command", ["history", "run"])
def test_a_refused_history_is_left_untouched(fresh_target, tmp_path, make, why, command):
    db = tmp_path / "other.db"
    make(db)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    args = ["history"] if command == "history" else ["run", f"{fresh_target.url}/health", "-n", "5", "-c", "1"]
    run = surge_in(tmp_path, *args, "--db", str(db))
    assert run.returncode == exit_codes.BAD_INPUT, run.stderr
    assert run.stderr.splitlines() == [f"surge: error: {db}: {why}" + run.stderr.split(why, 1)[1].rstrip("\n")]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]  # no -wal, no -shm, no results
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def locked(db: Path) -> sqlite3.Connection:
    """locked is a connection holding ``db``'s write lock (BEGIN EXCLUSIVE) until it commits."""
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute("BEGIN EXCLUSIVE")
    return connection


def started_unix_s(summary: dict) -> float:
    return datetime.fromisoformat(summary["meta"]["started_at"]).timestamp()


def test_a_run_waiting_for_a_locked_history_says_so_and_times_only_itself(fresh_target, tmp_path, history_db):
    assert surge_in(tmp_path, "history").returncode == 0  # the history exists
    holder = locked(history_db)
    proc = subprocess.Popen(
        [sys.executable, "-m", "surge", "run", f"{fresh_target.url}/health", "-n", "20", "-c", "1", "--out", "rec"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert proc.stderr is not None
    lines: list[str] = []

    def read() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        # The run waits for the lock, and says so after a second; then the lock is let go.
        wait_for(proc, lambda: any(line.startswith("surge: waiting for the history") for line in lines))
        released = time.time()
        holder.execute("COMMIT")
        proc.wait(timeout=120)
        reader.join(timeout=60)
    finally:
        holder.close()
        if proc.poll() is None:
            proc.kill()
    stderr = "".join(lines)
    assert proc.returncode == 0, stderr
    assert f"surge: waiting for the history {history_db}: another process holds its lock" in stderr.splitlines()
    summary = json.loads((tmp_path / "rec" / "summary.json").read_text())
    assert started_unix_s(summary) >= released - 0.01  # the wait is not in the run's times
    with sqlite3.connect(history_db) as c:
        assert c.execute("SELECT started_at, complete FROM runs").fetchall() == [(summary["meta"]["started_at"], 1)]


def test_a_history_locked_mid_run_never_holds_the_run_up(fresh_target, tmp_path, history_db):
    assert surge_in(tmp_path, "history").returncode == 0
    out = tmp_path / "rec"
    proc = subprocess.Popen(
        [sys.executable, "-m", "surge", "run", f"{fresh_target.url}/health", "-d", "4s", "-c", "1", "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    try:
        wait_for(proc, lambda: intervals_logged(out) >= 1)
        holder = locked(history_db)
        try:
            # The run goes on writing its directory while the history is locked.
            wait_for(proc, lambda: intervals_logged(out) >= 3)
        finally:
            holder.execute("COMMIT")
            holder.close()
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["elapsed_s"] < 6.0
    with sqlite3.connect(history_db) as c:
        stored = c.execute("SELECT count(*) FROM intervals").fetchone()[0]
        assert c.execute("SELECT complete FROM runs").fetchall() == [(1,)]
    assert stored == len(summary["intervals"])
