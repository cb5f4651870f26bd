"""--time-scale scales how long a test lasts, never what it measures: executor durations,
stages, start times and threshold delays scale; think times, timeouts, graceful stops and
ramp-downs, max durations, rates and counts do not."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from surge.scenario import load, loads, scale_time

SCENARIOS = Path(__file__).parents[2] / "scenarios"


@pytest.mark.parametrize(
    ("executor", "expected"),
    [
        ("{type: constant-vus, vus: 3, duration: 1m}", {"type": "constant-vus", "vus": 3, "duration_s": 6.0}),
        (
            "{type: ramping-vus, stages: [{duration: 30s, target: 5}], graceful_ramp_down: 10s}",
            {
                "type": "ramping-vus",
                "start_vus": 0,
                "stages": [{"duration_s": 3.0, "target": 5}],
                "graceful_ramp_down_s": 10.0,
            },
        ),
        (
            "{type: per-vu-iterations, iterations: 7, max_duration: 100s}",
            {"type": "per-vu-iterations", "vus": 1, "iterations": 7, "max_duration_s": 100.0},
        ),
        (
            "{type: shared-iterations, iterations: 7}",
            {"type": "shared-iterations", "vus": 1, "iterations": 7, "max_duration_s": 600.0},
        ),
        (
            "{type: constant-arrival-rate, rate: 300, duration: 20s, max_vus: 9}",
            {
                "type": "constant-arrival-rate",
                "rate": 300.0,
                "duration_s": 2.0,
                "max_vus": 9,
                "pre_allocated_vus": None,
            },
        ),
        (
            "{type: ramping-arrival-rate, start_rate: 5, stages: [{duration: 10s, target: 50}], max_vus: 9}",
            {
                "type": "ramping-arrival-rate",
                "start_rate": 5.0,
                "stages": [{"duration_s": 1.0, "target_rate": 50.0}],
                "max_vus": 9,
                "pre_allocated_vus": None,
            },
        ),
    ],
)
def test_every_executor_scales_its_schedule_not_its_rates_or_counts(executor, expected):
    text = f"target: http://h\nscenarios:\n  a:\n    executor: {executor}\n    flow: [{{request: {{}}}}]\n"
    [spec] = loads(text).compile(time_scale=0.1).main.to_dict()["scenarios"]
    got = spec["executor"]
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if key == "stages":
            assert [s["duration_s"] for s in got[key]] == pytest.approx([s["duration_s"] for s in value])
        else:
            assert got[key] == pytest.approx(value) if isinstance(value, float) else got[key] == value


def test_start_times_and_delays_scale_but_think_times_and_timeouts_do_not():
    f = load(SCENARIOS / "task-api.yaml", env={})
    plain, fast = f.compile(env={}), f.compile(time_scale=0.5, env={})
    reads, writes = fast.main.to_dict()["scenarios"]
    assert writes["start_time_s"] == 5.0
    assert reads["flow"]["think_after_iteration"] == {"type": "uniform", "min_s": 0.5, "max_s": 1.5}
    create = reads["flow"]["sequences"][2]["steps"][1]
    assert create["think_after"] == {"type": "fixed", "s": 0.1}
    assert create["timeout_s"] == 2.0
    assert (
        fast.main.to_dict()["limits"] == plain.main.to_dict()["limits"] == {"timeout_s": 10.0, "grace_period_s": 10.0}
    )
    assert fast.setup is not None and fast.setup.to_dict()["scenarios"][0]["executor"]["max_duration_s"] == 600.0
    assert [t.delay_s for t in fast.thresholds] == [0.0, 5.0, 0.0, 0.0, 0.0]
    assert writes["executor"]["rate"] == 50.0
    # checks keep their latency bounds: they judge single requests, like timeouts
    listing = reads["flow"]["sequences"][1]["steps"][0]["checks"][1]
    assert listing == {"name": "latency < 300ms", "type": "latency_under", "ms": 300.0}


def test_scaling_leaves_the_original_untouched_and_1_is_identity():
    f = load(SCENARIOS / "ramping-vus.yaml")
    before = f.model_dump()
    scaled = scale_time(f, 10)
    assert scaled.scenarios["readers"].executor.stages[0].duration == 10.0
    assert f.model_dump() == before
    assert scale_time(f, 1) is f


def test_scaling_up_slows_everything_down():
    [spec] = load(SCENARIOS / "constant-vus.yaml").compile(time_scale=30).main.to_dict()["scenarios"]
    assert spec["executor"]["duration_s"] == 60.0


@pytest.mark.parametrize("factor", [0, -1, math.nan, math.inf, True])
def test_bad_factors_are_refused(factor):
    f = load(SCENARIOS / "constant-vus.yaml")
    with pytest.raises(ValueError, match=r"^--time-scale: the time scale must be a number above 0") as err:
        f.compile(time_scale=factor)
    assert err.value.where == "--time-scale"


def test_a_factor_that_stretches_a_duration_past_its_bound_names_the_key():
    f = load(SCENARIOS / "task-api.yaml", env={})
    with pytest.raises(ValueError) as err:
        f.compile(time_scale=1e6, env={})
    assert err.value.where == "--time-scale"
    assert str(err.value).startswith("--time-scale: 1e+06 makes ")
    assert "longer than" in str(err.value)
