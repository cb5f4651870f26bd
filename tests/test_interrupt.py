"""Ctrl-C stops a run cleanly: summary of what ran, exit 130, nothing dropped."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time


def _run_and_interrupt(args: list[str], after_s: float) -> subprocess.CompletedProcess:
    proc = subprocess.Popen([sys.executable, "-m", "surge", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    time.sleep(after_s)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def test_ctrl_c_prints_partial_summary_and_exits_130(fresh_target):
    done = _run_and_interrupt(["run", f"{fresh_target.url}/health", "-d", "60s", "-c", "8"], after_s=2.0)
    assert done.returncode == 130, done.stderr
    assert "interrupted" in done.stdout
    assert "Latency (ms" in done.stdout
    assert "Traceback" not in done.stderr


def test_ctrl_c_json_counts_match_server(fresh_target):
    done = _run_and_interrupt(["run", f"{fresh_target.url}/health", "-d", "60s", "-c", "8", "--json"], after_s=2.0)
    assert done.returncode == 130, done.stderr
    doc = json.loads(done.stdout)
    assert doc["stop_reason"] == "interrupted"
    assert doc["requests"]["sent"] > 0
    assert doc["requests"]["sent"] == fresh_target.received()
    assert doc["duration_s"] < 10
