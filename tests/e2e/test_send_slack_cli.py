"""--send-slack end to end: bad values refused in one line, a large slack batches sends and shows
in the send lag, the heading states it, experiments take the flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import bad_experiment_input, surge
from surge.plan.model import DEFAULT_SEND_SLACK_S
from surge.record.schema import validate_file

# The default as the heading prints it: µs below a millisecond, ms from one up.
DEFAULT_SLACK_TEXT = (
    f"{DEFAULT_SEND_SLACK_S * 1e6:g} µs" if DEFAULT_SEND_SLACK_S < 1e-3 else f"{DEFAULT_SEND_SLACK_S * 1e3:g} ms"
)

URL = "http://127.0.0.1:9/"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["-r", "10", "--send-slack", "101ms"], "surge: error: --send-slack: must be between 0 and 100ms, got '101ms'"),
        (["-r", "10", "--send-slack", "-1ms"], "surge: error: --send-slack: must be between 0 and 100ms, got '-1ms'"),
        (["-r", "10", "--send-slack", "fast"], "surge: error: --send-slack: 'fast' is not a duration"),
    ],
)
def test_bad_flag_values_exit_2_in_one_line(args, error):
    run = surge("run", URL, *args, "--no-save")
    assert run.code == 2 and run.stderr.startswith(error) and run.stderr.count("\n") == 1, run.stderr


def test_an_experiment_refuses_a_bad_slack_before_it_starts():
    bad_experiment_input(
        "repeat",
        ["-n", "2", "-r", "10", "-d", "1s", "--send-slack", "1s"],
        "surge: error: --send-slack: must be between 0 and 100ms, got '1s'",
    )


def test_a_large_slack_batches_sends_and_shows_in_the_send_lag(fresh_target, tmp_path):
    # 100/s with 50 ms of slack: a worker wakes once its earliest due send is 50 ms late and writes
    # the five or so due by then, so half the sends are at least ~20 ms late; 5 ms is a safe floor.
    out = tmp_path / "run"
    run = surge(
        "run",
        f"{fresh_target.url}/health",
        "-r",
        "100",
        "-d",
        "1s",
        "--send-slack",
        "50ms",
        "--json",
        "--out",
        str(out),
    )
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["requests"]["sent"] == 100 and doc["send_slack_s"] == 0.05
    assert doc["latency"]["send_lag"]["p50_ms"] >= 5.0, doc["latency"]["send_lag"]
    summary = validate_file(out)
    assert summary["send_slack_s"] == 0.05
    assert summary["meta"]["plan"]["description"].endswith(" · send slack 50 ms")


def test_no_slack_and_the_default_are_stated_and_a_closed_model_run_states_none(fresh_target):
    url = f"{fresh_target.url}/health"
    zero = surge("run", url, "-r", "100", "-d", "1s", "--send-slack", "0", "--json", "--no-save")
    assert zero.code == 0 and zero.json()["send_slack_s"] == 0.0, zero.stderr
    default = surge("run", url, "-r", "100", "-d", "1s", "--no-save")
    assert default.code == 0, default.stderr
    assert f"send slack {DEFAULT_SLACK_TEXT}" in default.stdout.splitlines()[0], default.stdout
    closed = surge("run", url, "-n", "5", "-c", "1", "--json", "--no-save")
    assert closed.code == 0 and "send_slack_s" not in closed.json(), closed.stderr


def test_an_experiment_runs_with_the_flag(fresh_target, tmp_path):
    out = tmp_path / "exp"
    run = surge(
        "repeat",
        f"{fresh_target.url}/health",
        "-n",
        "2",
        "-r",
        "100",
        "-d",
        "1s",
        "--send-slack",
        "20ms",
        "--out",
        str(out),
    )
    assert run.code == 0, run.stderr
    doc = json.loads((out / "experiment.json").read_text())
    assert doc["parameters"]["test"]["send_slack"] == "20ms"
    for entry in doc["runs"]:
        summary = validate_file(Path(out / entry["directory"]))
        assert summary["send_slack_s"] == 0.02 and summary["requests"]["sent"] == 100
