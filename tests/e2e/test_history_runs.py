"""``surge run`` records into the history as it goes: a run killed with SIGKILL leaves every
interval it completed in the history as in its results directory, and four runs recording at
once all complete, with no error."""

from __future__ import annotations

import csv
import io
import json
import signal
import sqlite3
import time
from pathlib import Path

from conftest import start_surge, surge_in
from surge.record.timeseries import COLUMNS


def _all_rows(text: str) -> list[dict[str, str]]:
    return [r for r in csv.DictReader(io.StringIO(text)) if r["scenario"] == "all"]


def _db_intervals(db: Path) -> list[str]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return [t for (t,) in conn.execute("SELECT timeseries FROM intervals ORDER BY idx")]
    except sqlite3.Error:  # not created yet
        return []


def test_sigkill_leaves_every_completed_interval_in_the_directory_and_the_history(tmp_path, target, history_db):
    out = tmp_path / "record"
    proc = start_surge(tmp_path, "run", f"{target.url}/health", "-c", "1", "-d", "60s", "--out", str(out))
    try:
        deadline = time.monotonic() + 45
        while (
            len(_db_intervals(history_db)) < 2
            or not (out / "timeseries.csv").exists()
            or len(_all_rows((out / "timeseries.csv").read_text())) < 2
        ):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "two intervals never arrived"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == -signal.SIGKILL

    files = _all_rows((out / "timeseries.csv").read_text())
    stored = _db_intervals(history_db)
    # The history commits each interval just after the files are flushed: the kill may fall between.
    assert len(stored) >= 2 and len(files) - 1 <= len(stored) <= len(files)
    assert [_all_rows(",".join(COLUMNS) + "\n" + t)[0] for t in stored] == files[: len(stored)]
    hlog = [line for line in (out / "latency.hlog").read_text().splitlines() if not line.startswith(("#", '"'))]
    assert len(hlog) == len(files)
    assert json.loads((out / "summary.json").read_text())["meta"]["complete"] is False

    show = surge_in(tmp_path, "show", "last")
    assert show.returncode == 0, show.stderr
    assert show.stdout.rstrip().splitlines()[-1] == "incomplete: the run did not finish"
    assert f"Intervals recorded ({len(stored)})" in show.stdout
    listed = json.loads(surge_in(tmp_path, "history", "--json").stdout)
    assert [(r["complete"], r["requests"]) for r in listed] == [(False, None)]

    from_dir = surge_in(tmp_path, "show", str(out))
    assert from_dir.returncode == 0, from_dir.stderr
    assert from_dir.stdout.rstrip().splitlines()[-1] == "incomplete: the run did not finish"
    assert f"Intervals recorded ({len(files)})" in from_dir.stdout


def test_four_runs_recording_at_once_all_complete_without_error(tmp_path, target, history_db):
    procs = [
        start_surge(tmp_path, "run", f"{target.url}/health", "-c", "1", "-d", "3s", "--out", str(tmp_path / f"run{n}"))
        for n in range(4)
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, errors
    assert errors == [f"results: {tmp_path / f'run{n}'}\n" for n in range(4)]
    listed = json.loads(surge_in(tmp_path, "history", "--json").stdout)
    assert len(listed) == 4 and all(r["complete"] for r in listed)
    with sqlite3.connect(history_db) as conn:
        for n in range(4):
            summary = json.loads((tmp_path / f"run{n}" / "summary.json").read_text())
            run_id = summary["meta"]["run_id"]
            count = conn.execute("SELECT count(*) FROM intervals WHERE run_id = ?", (run_id,)).fetchone()[0]
            assert count == len(summary["intervals"]) >= 3
            row = next(r for r in listed if r["id"] == run_id)
            assert row["requests"] == summary["requests"]["sent"] > 0
