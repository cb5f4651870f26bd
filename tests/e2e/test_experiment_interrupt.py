"""Every experiment stopped by Ctrl-C mid-way (issue 20: "an interrupted compare has no report")
writes the report of what ran: experiment.json incomplete (stopped by SIGINT), report.md beside
it naming the completed runs, and ``surge report DIR`` renders it again without a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import intervals_logged, run_and_signal, surge

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)

EXPERIMENTS = [
    ("repeat", ["-n", "3", "-d", "2s", "-c", "1"]),
    ("compare", ["--variant", "a", "--variant", "b", "-n", "2", "-d", "2s", "-c", "1"]),
    ("sweep", ["--vus", "1,2,3", "-d", "2s", "--warmup", "0s"]),
    ("capacity", ["--slo", "p(99) < 1s", "--start-rate", "100", "--step-duration", "2s", "--cooldown", "0s"]),
]
"""EXPERIMENTS are the experiments that run runs of their own (surge stats runs none), with
flags that make each run last two seconds."""


def second_run_going(out: Path) -> bool:
    """second_run_going: the experiment's second run has logged an interval (the first is done)."""
    return any(intervals_logged(run) >= 1 for run in (out / "runs").glob("02-*"))


@pytest.mark.parametrize("kind, args", EXPERIMENTS, ids=[k for k, _ in EXPERIMENTS])
def test_an_interrupted_experiment_writes_the_report_of_what_ran(target, tmp_path, kind, args):
    out = tmp_path / "exp"
    proc = run_and_signal(
        [kind, f"{target.url}/health", *args, "--out", str(out)], signal.SIGINT, lambda: second_run_going(out)
    )
    assert proc.returncode == 130, proc.stderr
    doc = json.loads((out / "experiment.json").read_text())
    assert doc["complete"] is False and doc["stop_signal"] == "SIGINT"
    assert "Traceback" not in proc.stderr and "NoneType" not in proc.stderr, proc.stderr
    completed = [run for run in doc["runs"] if run["complete"]]
    assert completed, doc["runs"]
    report = (out / "report.md").read_text()
    for run in doc["runs"]:
        assert run["run_id"][:8] in report
    again = surge("report", str(out), "--out", str(tmp_path / "again"))
    assert again.code == 0 and "Traceback" not in again.stderr, again.stderr
    assert (tmp_path / "again" / "report.md").is_file()


def test_ctrl_c_during_the_analysis_still_writes_the_analysed_report(target, tmp_path):
    """Ctrl-C once every run is done, while the comparison is analysed (bootstrap resampling takes
    a while): the analysis completes, the record and report hold it; the exit code says SIGINT."""
    out = tmp_path / "exp"
    args = [
        sys.executable,
        "-m",
        "surge",
        "compare",
        f"{target.url}/health",
        "--variant",
        "a",
        "--variant",
        "b",
        "--variant",
        "c",
        "-n",
        "2",
        "--requests",
        "20",
        "-c",
        "1",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, cwd=tmp_path
    )
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if len([seen for seen in lines if seen.startswith("variant ")]) == 6:
            break  # the last run's line: the analysis starts now
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _stdout, rest = proc.communicate(timeout=120)
    stderr = "".join(lines) + rest
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    doc = json.loads((out / "experiment.json").read_text())
    assert len(doc["runs"]) == 6 and doc["analysis"] is not None and doc["ended_at"] is not None
    assert doc["analysis"]["comparisons"]
    assert (out / "report.md").is_file()
