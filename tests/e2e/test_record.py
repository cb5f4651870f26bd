"""The record: every ``surge run`` (URL or file) leaves a results directory (docs/record.md):
summary.json with its meta block, timeseries.csv, latency.hlog and the inputs, written as
the run goes, secrets masked; --out chooses the directory, --no-save skips it."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

from conftest import intervals_logged, run_and_signal, tiny_scenario, write

FILES_OF_URL_RUN = {
    "summary.json",
    "timeseries.csv",
    "latency.hlog",
    "command.txt",
    "report.md",
    "report.html",
    "charts",
}
FILES_OF_FILE_RUN = {
    "summary.json",
    "timeseries.csv",
    "latency.hlog",
    "scenario.yaml",
    "report.md",
    "report.html",
    "charts",
}
SECRET = "SECRET-d41d8cd98f00"

SCENARIO = """\
target: @URL@
defaults:
  headers: {Authorization: "Bearer @SECRET@"}
scenarios:
  reads:
    executor: {type: constant-vus, vus: 2, duration: 2s}
    flow:
      - request: {path: "/health?api_key=@SECRET@"}
  writes:
    executor: {type: constant-vus, vus: 1, duration: 2s}
    flow:
      - request: {path: /health}
"""


def run_in(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """run_in runs ``surge ARGS`` in ``cwd`` (where its results directory goes)."""
    return subprocess.run(
        [sys.executable, "-m", "surge", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
    )


def only_record(cwd: Path) -> Path:
    """only_record is the one results directory a run in ``cwd`` wrote."""
    records = list((cwd / "results").iterdir())
    assert len(records) == 1, records
    return records[0]


def summary(record: Path) -> dict[str, Any]:
    return json.loads((record / "summary.json").read_text())


def timeseries(record: Path) -> list[dict[str, str]]:
    with (record / "timeseries.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def hlog_lines(record: Path) -> list[list[str]]:
    """hlog_lines are the interval lines of latency.hlog, split at commas."""
    lines = (record / "latency.hlog").read_text().splitlines()
    return [line.split(",") for line in lines if not line.startswith(("#", '"'))]


def assert_consistent(record: Path) -> dict[str, Any]:
    """assert_consistent checks that the time series and the log have one entry per interval
    of summary.json, with the same maxima; returns the summary."""
    doc = summary(record)
    intervals = doc["intervals"]
    assert intervals
    rows = [r for r in timeseries(record) if r["scenario"] == "all"]
    assert len(rows) == len(intervals)
    assert [float(r["time_s"]) for r in rows] == [round(i["end_s"], 3) for i in intervals]
    assert [int(r["successes"]) for r in rows] == [i["requests"]["succeeded"] for i in intervals]
    lines = hlog_lines(record)
    assert len(lines) == len(intervals)
    for line, interval in zip(lines, intervals, strict=False):
        assert len(line) == 4 and line[3].startswith("HIST")
        assert (
            abs(float(line[2]) - interval["latency"]["all"]["max_ms"])
            <= 0.001 * interval["latency"]["all"]["max_ms"] + 0.0005
        )
        assert float(line[0]) == round(interval["start_s"], 3)
    assert read_with_hdrh(record) == [(i["latency"]["all"]["count"], i["latency"]["all"]["max_ms"]) for i in intervals]
    return doc


def read_with_hdrh(record: Path) -> list[tuple[int, float]]:
    """read_with_hdrh is each interval's (count, max in ms) as the Python ``hdrhistogram``
    package reads latency.hlog."""
    reader = HistogramLogReader(str(record / "latency.hlog"), HdrHistogram(1, 3_600_000_000, 3))
    out = []
    while (histogram := reader.get_next_interval_histogram()) is not None:
        out.append((histogram.get_total_count(), round(histogram.get_max_value() / 1000, 3)))
    reader.close()
    return out


def assert_no_secret(cwd: Path) -> None:
    for path in cwd.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_url_run_writes_its_record_under_results(tmp_path, fresh_target):
    run = run_in(tmp_path, "run", f"{fresh_target.url}/health?api_key={SECRET}", "-d", "2s", "-c", "2")
    assert run.returncode == 0, run.stderr
    record = only_record(tmp_path)
    port = fresh_target.url.rsplit(":", 1)[1]
    assert re.fullmatch(rf"\d{{8}}-\d{{6}}-127\.0\.0\.1-{port}-health", record.name), record.name
    assert {p.name for p in record.iterdir()} == FILES_OF_URL_RUN
    assert run.stderr.splitlines()[-1] == f"results: results/{record.name}"
    doc = assert_consistent(record)
    meta = doc["meta"]
    assert meta["schema"] == "surge.record/1" and meta["complete"] is True
    assert re.fullmatch(r"[0-9a-f]{32}", meta["run_id"])
    assert meta["name"] == record.name[16:]
    assert meta["scenario_sha256"] is None
    assert meta["started_at"].endswith("+00:00") and meta["ended_at"] >= meta["started_at"]
    assert meta["target"] == f"{fresh_target.url}/health?api_key=[redacted]"
    assert meta["command"] == f"surge run '{fresh_target.url}/health?api_key=[redacted]' -d 2s -c 2"
    assert (record / "command.txt").read_text() == meta["command"] + "\n"
    env = meta["environment"]
    assert env["cores"] >= 1 and env["memory_bytes"] > 0 and env["os"] and env["python"]
    assert doc["requests"]["responses"] == fresh_target.received()
    header = (record / "latency.hlog").read_text().splitlines()[:4]
    assert re.fullmatch(r"#\[StartTime: \d+\.\d{3} \(seconds since epoch\), .*\]", header[0])
    start = re.match(r"#\[StartTime: (\S+) ", header[0])[1]  # type: ignore[index]
    assert header[1:] == [
        f"#[BaseTime: {start} (seconds since epoch)]",
        "#[MaxValueDivisor: 1000.000]",
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
    ]
    assert_no_secret(tmp_path)


def test_file_run_writes_its_record_with_a_masked_copy_of_the_file(tmp_path, fresh_target):
    inputs, cwd = tmp_path / "inputs", tmp_path / "cwd"
    inputs.mkdir()
    cwd.mkdir()
    path = write(inputs, SCENARIO, name="two-kinds.yaml", URL=fresh_target.url, SECRET=SECRET)
    out = cwd / "chosen" / "here"
    run = run_in(cwd, "run", str(path), "--out", str(out), "--json")
    assert run.returncode == 0, run.stderr
    assert not (cwd / "results").exists()
    assert {p.name for p in out.iterdir()} == FILES_OF_FILE_RUN
    assert run.stderr.splitlines()[-1] == f"results: {out}"
    doc = assert_consistent(out)
    assert doc["meta"]["name"] == "two-kinds" and doc["meta"]["complete"] is True
    assert doc["meta"]["scenario_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert {k: v for k, v in doc.items() if k != "meta"} == json.loads(run.stdout)
    copy = (out / "scenario.yaml").read_text()
    assert 'Authorization: "[redacted]"' in copy and "api_key=[redacted]" in copy
    assert copy.count("\n") == path.read_text().count("\n")
    rows = timeseries(out)
    assert {r["scenario"] for r in rows} == {"all", "reads", "writes"}
    assert sum(r["scenario"] == "reads" for r in rows) == len(doc["intervals"])
    reads = next(r for r in rows if r["scenario"] == "reads")
    assert reads["p99_ms"] == "" and reads["active_vus"] != ""
    assert_no_secret(cwd)


def test_no_save_writes_nothing(tmp_path, fresh_target):
    run = run_in(tmp_path, "run", f"{fresh_target.url}/health", "-d", "1s", "-c", "1", "--no-save")
    assert run.returncode == 0, run.stderr
    assert list(tmp_path.iterdir()) == []
    assert "results:" not in run.stderr


def test_out_that_is_a_file_is_refused_naming_the_flag(tmp_path, fresh_target):
    taken = tmp_path / "taken"
    taken.write_text("x")
    run = run_in(tmp_path, "run", f"{fresh_target.url}/health", "-d", "1s", "--out", str(taken))
    assert run.returncode == 2
    assert run.stderr.splitlines() == [f"surge: error: --out: {taken} exists and is not a directory"]
    assert fresh_target.received() == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_out_and_no_save_together_are_refused(tmp_path):
    run = run_in(tmp_path, "run", "http://127.0.0.1:9/", "--out", "x", "--no-save")
    assert run.returncode == 2
    assert run.stderr.splitlines() == ["surge: error: --out: cannot be used with --no-save"]


def test_sigterm_mid_run_leaves_an_incomplete_record_with_the_intervals_so_far(tmp_path, fresh_target):
    out = tmp_path / "record"
    before: dict[str, Any] = {}

    def two_intervals() -> bool:
        if intervals_logged(out) < 2:
            return False
        before.update(summary(out))
        return True

    done = run_and_signal(
        ["run", f"{fresh_target.url}/health", "-d", "60s", "-c", "2", "--out", str(out)],
        signal.SIGTERM,
        two_intervals,
        cwd=tmp_path,
    )
    assert before["meta"]["complete"] is False and "intervals" not in before
    assert done.returncode == 143, done.stderr
    doc = assert_consistent(out)
    assert doc["meta"]["complete"] is False and doc["stop_reason"] == "interrupted"
    assert doc["stop_signal"] == "SIGTERM"
    assert len(doc["intervals"]) >= 2
    assert doc["meta"]["run_id"] == before["meta"]["run_id"]


def test_unreachable_target_keeps_a_record_saying_nothing_was_sent(tmp_path):
    from surge.record.schema import validate_file

    url = "http://127.0.0.1:1/health"  # nothing listens on port 1: refused at once
    for args in (["run", url, "-d", "1s"], ["run", url, "-d", "1s", "--json"]):
        run = run_in(tmp_path, *args)
        assert run.returncode == 3, run.stderr
        assert run.stdout == ""
        lines = run.stderr.splitlines()
        assert lines[-2].startswith("results: results/") and lines[-1].startswith(
            "surge: error: target 127.0.0.1:1 is not reachable"
        )
        record = tmp_path / lines[-2].removeprefix("results: ")
        doc = validate_file(record)
        assert doc["meta"]["complete"] is False and doc["meta"]["ended_at"] is not None
        assert doc["stop_reason"] == "unreachable" and doc["error"] == lines[-1].removeprefix("surge: error: ")
        assert doc["requests"]["sent"] == 0 and doc["intervals"] == [] and doc["histograms"] is None
        assert timeseries(record) == [] and hlog_lines(record) == []


def test_unreachable_scenario_file_judges_its_thresholds_on_no_data(tmp_path):
    from surge.record.schema import validate_file

    path = tiny_scenario(
        tmp_path,
        "http://127.0.0.1:1",
        extra="""\
        thresholds:
          - "p(95) < 300ms"
          - {expr: "failure_rate < 1%", no_data: pass}
        """,
    )
    run = run_in(tmp_path, "run", str(path), "--out", "rec")
    assert run.returncode == 3, run.stderr
    doc = validate_file(tmp_path / "rec")
    assert doc["stop_reason"] == "unreachable" and doc["interrupted_in"] is None
    assert [(t["status"], t["passed"]) for t in doc["thresholds"]] == [("no-data", False), ("no-data", True)]


def test_timeseries_splits_failures_by_class_and_measures_generator_cpu(tmp_path, fresh_target):
    from surge.record.timeseries import COLUMNS, FAILURE_COLUMNS

    out = tmp_path / "rec"
    # /delay/2000 answers after 2 s, past the 300 ms timeout: every request times out.
    run = run_in(
        tmp_path,
        "run",
        f"{fresh_target.url}/delay/2000",
        "-d",
        "2s",
        "-c",
        "2",
        "--timeout",
        "300ms",
        "--out",
        str(out),
    )
    assert run.returncode == 0, run.stderr
    assert (out / "timeseries.csv").read_text().splitlines()[0] == ",".join(COLUMNS)
    doc = assert_consistent(out)
    rows = [r for r in timeseries(out) if r["scenario"] == "all"]
    for row, interval in zip(rows, doc["intervals"], strict=False):
        assert sum(int(row[c]) for c in FAILURE_COLUMNS) == int(row["failures"]) == interval["requests"]["failed"]
        assert int(row["failed_request_timeout"]) == interval["requests"]["failure_classes"].get("request_timeout", 0)
        assert float(row["cpu_cores"]) >= 0
    assert sum(int(r["failed_request_timeout"]) for r in rows) == doc["requests"]["timed_out"] > 0
    assert sum(int(r["failed_status"]) for r in rows) == 0


def test_timeseries_counts_error_statuses_as_failed_status(tmp_path, fresh_target):
    out = tmp_path / "rec"
    run = run_in(tmp_path, "run", f"{fresh_target.url}/no-such-route", "-n", "20", "-c", "2", "--out", str(out))
    assert run.returncode == 0, run.stderr
    rows = [r for r in timeseries(out) if r["scenario"] == "all"]
    assert sum(int(r["failed_status"]) for r in rows) == summary(out)["requests"]["failed"] == 20
    assert all(r["cpu_cores"] != "" for r in rows)
