"""Diagnosis on real runs against the reference target (docs/diagnosis.md): a starved
generator is reported as the bottleneck, a starved server as the server; a timeout cascade;
Little's law on a measured run; --watch-pid's samples, errors and a process that ends mid-run."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import BUSY, TWO_CORES, intervals_logged, start_surge, starved_generator_run, surge_in, wait_for
from surge.engine.target import TargetProcess
from surge.record.schema import validate
from surge.record.timeseries import TARGET_COLUMNS


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())


def _kinds(summary: dict[str, Any]) -> list[str]:
    return [f["kind"] for f in summary["findings"]]


def _finding(summary: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(f for f in summary["findings"] if f["kind"] == kind)


def _all_rows(out: Path) -> list[dict[str, str]]:
    with (out / "timeseries.csv").open(newline="") as f:
        return [r for r in csv.DictReader(f) if r["scenario"] == "all"]


@BUSY
@pytest.mark.skipif(not TWO_CORES, reason="needs CPU affinity and two cores")
def test_a_starved_generator_is_reported_as_the_bottleneck(tmp_path):
    """One engine thread on a core a spinning process keeps busy, at a rate beyond it: the
    generator is the bottleneck and throughput is a lower bound."""
    with TargetProcess() as target:
        run = starved_generator_run(target, tmp_path)
    assert run.returncode == 0, run.stderr
    summary = _summary(tmp_path / "out")
    validate(summary)
    finding = _finding(summary, "generator_saturated")
    assert finding["evidence"]["late_share"] >= 0.05
    throughput = summary["throughput"]["responses_per_s"]
    assert f"≥ {throughput:,.1f} responses/s" in finding["message"]
    assert f"Throughput    ≥ {throughput:,.1f} responses/s (a lower bound" in run.stdout
    assert "Findings" in run.stdout and "generator_saturated" in run.stdout


@pytest.fixture(scope="module")
def starved_server(tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], Path, int]:
    """starved_server is a run at 300 req/s against 2 workers × 20 ms (capacity 100 req/s), its
    process watched: the finished process, its results directory and the target's pid."""
    cwd = tmp_path_factory.mktemp("starved")
    # Module-scoped: set up before the per-test history_db fixture, so it names its own history.
    with pytest.MonkeyPatch.context() as env, TargetProcess(workers=2, service_time="20ms") as target:
        env.setenv("SURGE_DB", str(cwd / "history.db"))
        assert target.pid is not None
        run = surge_in(
            cwd, "run", f"{target.url}/delay/0", "-r", "300", "-d", "3s", "--watch-pid", str(target.pid), "--out", "out"
        )
        return run, cwd / "out", target.pid


def test_a_starved_server_is_reported_as_the_server(starved_server):
    run, out, pid = starved_server
    assert run.returncode == 0, run.stderr
    summary = _summary(out)
    validate(summary)
    kinds = _kinds(summary)
    assert "queueing" in kinds
    assert "generator_saturated" not in kinds
    queue = _finding(summary, "queueing")["evidence"]
    assert 70 <= queue["service_capacity_per_s"] <= 130  # 2 workers / 20 ms
    assert queue["evidence"] == "backlog"  # 300/s sent, 100/s served: the wait grew
    assert "Findings" in run.stdout and "[warning] queueing: Requests queued" in run.stdout
    assert "≥" not in run.stdout.split("Throughput", 1)[1].splitlines()[0]
    assert f"Target process  pid {pid} " in run.stdout


def test_the_watched_target_is_sampled_into_the_record(starved_server):
    _run, out, pid = starved_server
    target = _summary(out)["target_process"]
    assert target["pid"] == pid and target["children_included"] is True and target["exited_at_s"] is None
    assert target["sample_count"] == len(target["samples"]) >= 3
    assert target["rss_bytes_max"] > 0 and target["threads_max"] >= 1 and target["open_files_max"] >= 3
    assert target["cpu_cores_max"] >= target["cpu_cores_mean"] >= 0
    filled = [r for r in _all_rows(out) if r["target_rss_bytes"]]
    assert filled, "no interval row holds a target sample"
    for row in filled:
        assert int(row["target_rss_bytes"]) > 0 and int(row["target_threads"]) >= 1
        assert int(row["target_open_files"]) >= 3 and float(row["target_cpu_cores"]) >= 0


def test_littles_law_figures_equal_the_formula_on_a_real_run(starved_server):
    _run, out, _pid = starved_server
    summary = _summary(out)
    evidence = _finding(summary, "queueing")["evidence"]
    latency = summary["latency"]
    x = latency["all"]["count"] / (summary["throughput"]["window_s"] + summary["drain"]["seconds"])
    w = (latency["all"]["mean_ms"] - latency["send_lag"]["mean_ms"]) / 1000
    assert evidence["completions_per_s"] == pytest.approx(x, rel=1e-12)
    assert evidence["little_l"] == pytest.approx(x * w, rel=1e-12)
    rows = evidence["intervals"]
    assert len(rows) == len(summary["intervals"])
    previous = 0
    for row, interval in zip(rows, summary["intervals"], strict=False):
        length = interval["end_s"] - interval["start_s"]
        xi = interval["latency"]["all"]["count"] / length
        lag = interval["latency"]["send_lag"]
        wi = max(interval["latency"]["all"]["mean_ms"] - (lag["mean_ms"] if lag["count"] else 0.0), 0.0) / 1000
        assert row["little_l"] == pytest.approx(xi * wi, rel=1e-12)
        assert row["in_flight_mean"] == (previous + interval["in_flight"]) / 2
        previous = interval["in_flight"]
    # The law itself: the time-averaged in-flight count the engine measured is X × W.
    assert evidence["measured_in_flight"] == pytest.approx(evidence["little_l"], rel=0.25)


def test_requests_queued_beyond_the_timeout_are_a_timeout_cascade(tmp_path):
    """50 VUs on one 50 ms worker wait up to 2.5 s in its queue: with a 500 ms timeout most
    time out together."""
    with TargetProcess(workers=1, service_time="50ms") as target:
        run = surge_in(
            tmp_path, "run", f"{target.url}/delay/0", "-c", "50", "-d", "3s", "--timeout", "500ms", "--out", "out"
        )
    assert run.returncode == 0, run.stderr
    summary = _summary(tmp_path / "out")
    cascade = _finding(summary, "timeout_cascade")
    assert cascade["severity"] == "error"
    assert cascade["evidence"]["timeout_s"] == 0.5
    assert cascade["evidence"]["timed_out"] == summary["requests"]["timed_out"] > 0
    assert "timed out at the 0.5 s timeout" in cascade["message"]
    assert "[error] timeout_cascade: A timeout cascade" in run.stdout


def test_a_run_without_watch_pid_leaves_the_target_columns_empty(tmp_path, target):
    run = surge_in(tmp_path, "run", f"{target.url}/health", "-c", "2", "-d", "1s", "--out", "out")
    assert run.returncode == 0, run.stderr
    summary = _summary(tmp_path / "out")
    assert "target_process" not in summary
    # Two VUs without think time against a local /health can fill two cores: only the machine may be named.
    assert {f["kind"] for f in summary["findings"]} <= {"machine_saturated"}
    assert summary["machine"]["cores"] >= 1 and summary["machine"]["samples"]  # known without --watch-pid
    rows = _all_rows(tmp_path / "out")
    assert rows and all(r[c] == "" for r in rows for c in TARGET_COLUMNS)


def test_watch_pid_that_is_not_a_process_is_refused_before_the_run(tmp_path, target):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    for pid, message in ((gone.pid, f"no process {gone.pid}"), (0, "must be a process id above zero, got 0")):
        run = surge_in(tmp_path, "run", f"{target.url}/health", "-d", "1s", "--watch-pid", str(pid))
        assert run.returncode == 2
        assert run.stderr == f"surge: error: --watch-pid: {message}\n"
    assert not (tmp_path / "results").exists()


def test_a_watched_process_that_ends_mid_run_is_a_warning_and_keeps_its_samples(tmp_path, target):
    # The watched process ends once the run has logged its first interval (not after a fixed
    # sleep, which a slow start-up on a busy machine could outlast).
    short = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        run = start_surge(
            tmp_path,
            "run",
            f"{target.url}/health",
            "-c",
            "2",
            "-d",
            "3s",
            "--watch-pid",
            str(short.pid),
            "--out",
            "out",
        )
        wait_for(run, lambda: intervals_logged(tmp_path / "out") >= 1)
        short.kill()
        _, stderr = run.communicate(timeout=60)
    finally:
        short.kill()
        short.wait()
    assert run.returncode == 0, stderr
    assert f"surge: warning: --watch-pid {short.pid}: the process ended" in stderr
    assert "samples so far are kept" in stderr
    process = _summary(tmp_path / "out")["target_process"]
    assert process["exited_at_s"] is not None and process["exited_at_s"] < 3.0
    assert process["sample_count"] >= 1
    validate(_summary(tmp_path / "out"))
