"""End to end: each executor's scenario file in tests/scenarios/ runs through ``surge run
FILE.yaml`` against the reference target, and the counts its schedule implies are what
surge reports and what the target received."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import surge

SCENARIOS = Path(__file__).parents[1] / "scenarios"

# file -> (route counts the target must have received, exact iterations started or None,
#          checks that must all pass). Counts follow from each file's executor:
CASES = {
    # 100/s for 2 s = 200 iterations of create + read back (max_vus 50: none dropped).
    "constant-arrival-rate.yaml": ({"POST /tasks": 200, "GET /tasks/{id}": 200}, 200, True),
    # 4 VUs x 10 iterations each, two steps per iteration.
    "per-vu-iterations.yaml": ({"POST /tasks": 40, "GET /tasks/{id}": 40}, 40, True),
    # 10/s -> 200/s over 1 s, then 200/s for 1 s: (10 + 200) / 2 + 200 = 305 iterations.
    "ramping-arrival-rate.yaml": ({"GET /delay/{ms}": 305}, 305, True),
    # 200 iterations shared by 4 VUs, list then health.
    "shared-iterations.yaml": ({"GET /tasks": 200, "GET /health": 200}, 200, True),
    # 4 VUs for 2 s: the count depends on speed, the target must agree with surge.
    "constant-vus.yaml": ({}, None, True),
    # setup creates 50 tasks (not measured); the ramp's reads land on them.
    "ramping-vus.yaml": ({"POST /tasks": 50}, None, True),
}


def test_every_scenario_file_is_run_here():
    assert sorted(p.name for p in SCENARIOS.glob("*.yaml") if p.name != "task-api.yaml") == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_scenario_file_runs_its_schedule_and_the_target_agrees(name, fresh_target):
    routes, iterations, checks_pass = CASES[name]
    run = surge("run", str(SCENARIOS / name), "--target", fresh_target.url, "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    (scenario,) = doc["scenarios"]
    started = scenario["iterations"]["iterations_started"]
    assert scenario["iterations"]["iterations_dropped"] == 0
    if iterations is not None:
        assert started == iterations
    assert scenario["iterations"]["iterations_completed"] == started
    received = fresh_target.stats()["received_by_route"]
    for route, count in routes.items():
        assert received[route] == count, (route, received)
    measured = doc["requests"]["sent"]
    setup_sent = doc["setup"]["requests"]["sent"] if doc.get("setup") else 0
    assert measured + setup_sent == fresh_target.received(), "surge's count equals the target's"
    assert doc["requests"]["failed"] == 0 and doc["requests"]["interrupted"] == 0
    if checks_pass:
        assert doc["checks"] and all(c["fails"] == 0 and c["passes"] > 0 for c in doc["checks"]), doc["checks"]
    assert all(t["passed"] for t in doc["thresholds"]), doc["thresholds"]
