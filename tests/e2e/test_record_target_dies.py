"""A target that dies mid-run: the run goes on to its planned end, every interval is in the
results directory and the history, the requests that found no target are counted as
connection failures, and the record validates."""

from __future__ import annotations

import json
import os
import signal
import sqlite3

from conftest import intervals_logged, start_surge, surge_in, wait_for, write
from surge.engine.target import TargetProcess
from surge.record.schema import validate_file


def test_a_target_killed_mid_run_leaves_every_interval_and_counts_the_failures(tmp_path, history_db):
    out = tmp_path / "record"
    with TargetProcess() as target:
        proc = start_surge(tmp_path, "run", f"{target.url}/health", "-c", "2", "-d", "4s", "--out", str(out))
        wait_for(proc, lambda: intervals_logged(out) >= 1)
        assert target.pid is not None
        os.killpg(target.pid, signal.SIGKILL)  # the target's whole session: no clean shutdown
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    summary = json.loads((out / "summary.json").read_text())
    validate_file(out / "summary.json")
    assert summary["stop_reason"] == "duration" and summary["meta"]["complete"] is True
    # Four seconds of load: four intervals, a fifth when the drain lasts over half an interval.
    assert len(summary["intervals"]) in (4, 5) and len(summary["intervals"]) == intervals_logged(out)
    requests = summary["requests"]
    assert requests["failure_classes"].get("connection_refused", 0) > 0
    assert requests["succeeded"] > 0  # before the kill
    # The fourth second (3-4 s) is wholly after the kill; a fifth, drain-only interval may follow it empty.
    after = summary["intervals"][3]["requests"]
    assert after["responses"] == 0 and after["failed"] > 0
    with sqlite3.connect(history_db) as conn:
        assert conn.execute("SELECT count(*) FROM intervals").fetchone()[0] == len(summary["intervals"])
    shown = surge_in(tmp_path, "show", "last")
    assert shown.returncode == 0 and "connection_refused" in shown.stdout


TEARDOWN_AFTER_DEATH = """\
target: @URL@
scenarios:
  main:
    executor: {type: constant-vus, vus: 2, duration: 3s}
    flow:
      - request: {method: GET, path: /health}
teardown:
  executor: {type: per-vu-iterations, vus: 1, iterations: 1}
  flow:
    - request: {method: GET, path: /health}
"""


def test_a_teardown_that_finds_the_target_gone_keeps_the_measured_results(tmp_path, history_db):

    out = tmp_path / "record"
    with TargetProcess() as target:
        scenario = write(tmp_path, TEARDOWN_AFTER_DEATH, URL=target.url)
        proc = start_surge(tmp_path, "run", str(scenario), "--out", str(out))
        wait_for(proc, lambda: intervals_logged(out) >= 1)
        assert target.pid is not None
        os.killpg(target.pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "teardown: 0 requests, 0 failed · did not run: target not reachable" in stderr
    summary = json.loads((out / "summary.json").read_text())
    validate_file(out / "summary.json")
    assert summary["stop_reason"] == "duration" and summary["requests"]["succeeded"] > 0
    assert len(summary["intervals"]) in (3, 4)
    assert summary["teardown"]["stop_reason"] == "unreachable"
    assert any(n.startswith("teardown did not run: ") for n in summary["notes"])
