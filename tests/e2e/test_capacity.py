"""surge capacity: against a target of c workers with a fixed service time s, the search lands
within 5 % of c/s (short steps), also with a 200 ms service time (the drain is not in the
rate), many connections, and every core busy; a client cap that limited it is named; the
cooldown between steps; the default SLO is the scenario's thresholds; surge show reprints it;
Ctrl-C keeps the steps done; bad flags."""

from __future__ import annotations

import itertools
import json
from datetime import datetime

import pytest

from conftest import BUSY, bad_experiment_input, busy_loops, ctrl_c_experiment, surge, tiny_scenario
from known_answers import CAPACITY_SEARCH, NOISY_MACHINE
from surge.engine.target import TargetProcess
from surge.record.schema import validate_experiment


@pytest.fixture
def busy_machine():
    """busy_machine keeps every core busy while a test runs (conftest.busy_loops)."""
    with busy_loops() as count:
        yield count


def _search(target_url: str, *args: str) -> tuple[int, dict, str]:
    run = surge("capacity", target_url, "--no-save", "--json", "--step-duration", "2s", *args, timeout=300)
    assert run.stdout, run.stderr
    doc = run.json()
    validate_experiment(doc)
    return run.code, doc["analysis"], run.stderr


def _path(analysis: dict) -> list:
    return [(s["rate"], s.get("outcome"), s["failures"]) for s in analysis["steps"]]


def test_a_200ms_target_is_found_although_every_step_drains_200ms():
    # 50 workers × 200 ms = 250/s under p(99) < 1s: each step's last requests are answered
    # 200 ms after its load stopped; that drain is not in the rate (it halved to 9.8/s before).
    with TargetProcess(workers=50, service_time="200ms") as target:
        code, analysis, stderr = _search(f"{target.url}/tasks", "--slo", "p(99) < 1s", "--start-rate", "100")
    assert code == 0 and analysis["stop_reason"] == "found" and analysis["confirmed"], stderr
    assert analysis["rate"] == pytest.approx(250, rel=0.05), _path(analysis)
    assert all(s["passed"] for s in analysis["steps"] if s["rate"] <= 240), _path(analysis)


def test_600_connections_to_a_200ms_target_do_not_halve_the_rate():
    # It went on to 0.24/s and "no rate passed the SLO" after 22 runs.
    with TargetProcess(workers=50, service_time="200ms") as target:
        code, analysis, _stderr = _search(
            f"{target.url}/tasks",
            "--slo",
            "p(99) < 1s",
            "-c",
            "600",
            "--start-rate",
            "100",
            "--max-rate",
            "200",
            "--max-steps",
            "6",
        )
    assert code == 0 and analysis["stop_reason"] == "max_rate" and analysis["rate"] == 200, _path(analysis)


@BUSY
def test_on_a_busy_machine_the_answer_is_the_targets_capacity_or_says_the_generator_limited_it(busy_machine):
    # 6 workers × 7 ms = 857/s under p(99) < 100ms, with a busy loop on every core: late sends
    # fail no step by themselves (it confirmed 125/s before, 7× too low, exit 0).
    with TargetProcess(workers=6, service_time="7ms") as target:
        code, analysis, stderr = _search(
            f"{target.url}/tasks", "--slo", "p(99) < 100ms", "--start-rate", "400", "--precision", "4%"
        )
    if analysis["stop_reason"] == "generator_limit":
        assert code == 99 and analysis["limit"].startswith("the generator could not keep the schedule"), stderr
        assert analysis["best"] is None or analysis["best"]["rate"] <= 857 * 1.05
    else:
        assert code == 0 and analysis["confirmed"], _path(analysis)
        assert analysis["rate"] == pytest.approx(6 / 0.007, rel=0.1), _path(analysis)


def test_a_client_cap_that_limited_the_steps_is_named_and_the_steps_cool_down():
    # --max-in-flight 20 against 50 × 200 ms lets at most 20 / 0.2 s = 100/s through: the cap,
    # not the target (250/s), limits the search, and the answer says so.
    with TargetProcess(workers=50, service_time="200ms") as target:
        run = surge(
            "capacity",
            f"{target.url}/tasks",
            "--slo",
            "p(99) < 1s",
            "--max-in-flight",
            "20",
            *NOISY_MACHINE,
            "--start-rate",
            "75",
            "--precision",
            "15%",
            "--step-duration",
            "2s",
            "--cooldown",
            "0.5s",
            "--no-save",
            "--json",
            timeout=300,
        )
    doc = run.json()
    validate_experiment(doc)
    analysis = doc["analysis"]
    assert run.code == 99 and analysis["stop_reason"] == "client_limit", (_path(analysis), analysis["notes"])
    assert "surge: a client cap limited the search: the target's capacity was not reached" in run.stderr
    assert analysis["limit"].startswith("the client cap --max-in-flight 20 limited the step at ")
    assert 75 <= analysis["rate"] <= 105 and analysis["confirmed"], _path(analysis)
    assert doc["findings"][0]["text"].startswith(
        f"capacity ≥ {analysis['rate']:,.1f}/s (confirmed): the client cap --max-in-flight 20 limited the step at "
    )
    capped = [s for s in analysis["steps"] if s["outcome"] == "client"]
    assert capped and all(s["peak_in_flight"] == 20 and s["in_flight_cap"] == 20 for s in capped)
    assert "(bracket) 150.0/s: client-capped — " in run.stderr
    # Each step starts at least its load (2 s) and the cooldown (0.5 s) after the last began.
    starts = [datetime.fromisoformat(r["started_at"]) for r in doc["runs"]]
    assert doc["parameters"]["cooldown_s"] == 0.5 and analysis["cooldown_s"] == 0.5
    assert all((b - a).total_seconds() >= 2.5 for a, b in itertools.pairwise(starts)), starts


@pytest.mark.parametrize("workers, service_ms", [(8, 10), (2, 5)])  # the bench times more (bench/capacity.py)
def test_capacity_lands_within_5_percent_of_workers_over_service_time(workers, service_ms, tmp_path):
    capacity = workers / (service_ms / 1000)
    with TargetProcess(workers=workers, service_time=f"{service_ms}ms") as target:
        run = surge("capacity", f"{target.url}/tasks", *CAPACITY_SEARCH, "--json", timeout=300)
    assert run.code == 0, run.stderr
    doc = run.json()
    validate_experiment(doc)
    analysis = doc["analysis"]
    assert analysis["stop_reason"] == "found" and analysis["confirmed"] is True, analysis["notes"]
    assert analysis["rate"] == pytest.approx(capacity, rel=0.05), [
        (s["rate"], s["failures"]) for s in analysis["steps"]
    ]
    assert analysis["high"] is not None and analysis["rate"] < analysis["high"]
    # Every step is a recorded run of the experiment (a failed one, twice), in order, the last
    # one the confirmation.
    steps = analysis["steps"]
    assert [e["role"] for e in doc["runs"]] == [
        f"step {s['number']}" + (" retry 1" if i else "") for s in steps for i in range(len(s["attempts"]))
    ]
    assert [e["run_id"] for e in doc["runs"]] == [run_id for s in steps for run_id in s["attempts"]]
    assert all(
        (s["run_id"] == s["attempts"][-1] and len(s["attempts"]) == (1 if s["passed"] else 2))
        or (s["passed"] and len(s["attempts"]) == 2)
        for s in steps
    )
    assert steps[0]["phase"] == "bracket" and steps[-1]["phase"] == "confirm" and steps[-1]["passed"]
    assert steps[-1]["rate"] == analysis["rate"]
    printed = [line for line in run.stderr.splitlines() if line.startswith("step ") and " — " in line]
    assert len(printed) == len(steps)
    assert all(("pass — " in line) == s["passed"] for line, s in zip(printed, steps, strict=True))


def test_capacity_defaults_to_the_scenario_thresholds_and_show_reprints_it(target, tmp_path):
    scenario = tiny_scenario(
        tmp_path,
        target.url,
        extra="""
        thresholds: ["p(99) < 500ms"]
        """,
    )
    out = tmp_path / "cap"
    run = surge(
        "capacity",
        str(scenario),
        *NOISY_MACHINE,
        "--start-rate",
        "200",
        "--max-rate",
        "400",
        "--step-duration",
        "1s",
        "--out",
        str(out),
    )
    assert run.code == 0, run.stderr
    doc = json.loads((out / "experiment.json").read_text())
    validate_experiment(doc)
    analysis = doc["analysis"]
    assert analysis["slo"] == {"source": "thresholds", "conditions": [{"expr": "p(99) < 500ms", "scope": "all"}]}
    # 200 passes, 400 (the maximum) passes, then the confirmation at 400: capacity is at least 400/s.
    assert [(s["phase"], s["rate"], s["passed"]) for s in analysis["steps"]] == [
        ("bracket", 200, True),
        ("bracket", 400, True),
        ("confirm", 400, True),
    ], [s["failures"] for s in analysis["steps"]]
    assert analysis["stop_reason"] == "max_rate" and analysis["rate"] == 400
    assert "capacity ≥ 400.0/s: the maximum rate passed" in run.stdout and "Steps (3)" in run.stdout
    assert "SLO (the scenario thresholds): p(99) < 500ms" in run.stdout
    again = surge("show", doc["experiment_id"][:12])
    assert again.code == 0 and again.stdout == run.stdout, again.stderr


def test_ctrl_c_mid_search_keeps_the_steps_done(target, tmp_path):
    proc, doc = ctrl_c_experiment(
        ["capacity", f"{target.url}/health", "--slo", "p(99) < 1s", "--start-rate", "200", "--step-duration", "3s"],
        tmp_path / "stopped",
        "02-step-2",
    )
    assert (
        proc.stderr.rstrip().splitlines()[-1]
        == "surge: stopped by SIGINT: experiment incomplete: 1 completed step(s) (kept in the history)"
    )
    assert [(e["role"], e["complete"]) for e in doc["runs"]] == [("step 1", True), ("step 2", False)]
    analysis = doc["analysis"]
    assert analysis["stop_reason"] == "interrupted" and [s["rate"] for s in analysis["steps"]] == [200]
    assert analysis["steps"][0]["passed"] == (analysis["rate"] == 200) and analysis["confirmed"] is False


@pytest.mark.parametrize(
    "args, error",
    [
        ([], "surge: error: --slo: no SLO"),
        (["--slo", "p(99) <"], "surge: error: --slo: "),
        (["--slo", "p(99) < 1s", "--precision", "0"], "surge: error: --precision: expected a percentage above 0"),
        (["--slo", "p(99) < 1s", "--precision", "100%"], "surge: error: --precision: must be below 100%"),
        (["--slo", "p(99) < 1s", "--start-rate", "0"], "surge: error: --start-rate: must be above 0"),
        (
            ["--slo", "p(99) < 1s", "--start-rate", "100", "--max-rate", "50"],
            "surge: error: --max-rate: must be at least --start-rate",
        ),
        (["--slo", "p(99) < 1s", "--step-duration", "0s"], "surge: error: --step-duration: must be above zero"),
        (["--slo", "p(99) < 1s", "--max-steps", "0"], "surge: error: --max-steps: must be from 1 to"),
        (["--slo", "p(99) < 1s", "--retries", "-1"], "surge: error: --retries: must be from 0 to 5"),
        (["--slo", "p(99) < 1s", "--max-late", "x"], "surge: error: --max-late: expected a percentage"),
        (["--slo", "p(99) < 1s", "--cooldown", "soon"], "surge: error: --cooldown: "),
        (["--slo", "p(99) < 1s", "-d", "5s"], "surge: error: -d/--duration: each step's length is --step-duration"),
        (["--slo", "p(99) < 1s", "-r", "100"], "surge: error: -r/--rate: the experiment sets each run's load"),
    ],
)
def test_capacity_bad_input_is_one_line_exit_2_before_any_run(args, error):
    bad_experiment_input("capacity", args, error)
