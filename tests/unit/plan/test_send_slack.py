"""The open model's send slack (docs/engine.md, "Pacing"): ``--send-slack`` (every command that runs
a test) and a scenario file's ``send_slack`` reach the engine's plan as ``send_slack_s`` (the flag
over the file), are refused out of 0..100ms in one line (exit 2, or FILE:LINE), and the summary
states the slack an open-model run used (``send_slack_s`` in --json and summary.json, "send slack"
in the heading)."""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import write
from surge.core.errors import BadInput
from surge.core.units import parse_duration
from surge.plan.heading import describe
from surge.plan.model import DEFAULT_SEND_SLACK_S, ConstantVus, Plan, RequestSpec, TargetSpec
from surge.run.spec import Overrides, TestSpec
from surge.scenario import ScenarioError, load, loads

# The default as the heading prints it: µs below a millisecond, ms from one up.
DEFAULT_SLACK_TEXT = (
    f"{DEFAULT_SEND_SLACK_S * 1e6:g} µs" if DEFAULT_SEND_SLACK_S < 1e-3 else f"{DEFAULT_SEND_SLACK_S * 1e3:g} ms"
)

URL = "http://127.0.0.1:9/"

OPEN_FILE = """\
    target: http://127.0.0.1:9
    send_slack: 300us
    setup:
      flow: [{request: {path: /health}}]
    scenarios:
      s:
        executor: {type: constant-arrival-rate, rate: 10, duration: 1s, max_vus: 4}
        flow: [{request: {path: /health}}]
    """


def test_plan_json_leaves_the_slack_to_the_engine_unless_set():
    plan = Plan.single(TargetSpec(URL), RequestSpec(), ConstantVus(vus=1, duration_s=1.0))
    assert "send_slack_s" not in json.loads(plan.to_json())
    assert json.loads(Plan(plan.target, plan.scenarios, send_slack_s=0.001).to_json())["send_slack_s"] == 0.001


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0", 0.0),
        ("200us", 0.0002),
        ("200µs", 0.0002),
        ("0.5ms", 0.0005),
        ("1ms", 0.001),
        ("100ms", 0.1),
    ],
)
def test_the_flag_reaches_a_url_plan(text, seconds):
    main = TestSpec(URL, rate=100.0, send_slack=text).prepare().compiled.main.to_dict()
    assert main["send_slack_s"] == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "seconds"), [("200us", 0.0002), ("200µs", 0.0002), ("0.5ms", 0.0005), ("1m30s", 90.0), ("1s250ms", 1.25)]
)
def test_durations_in_microseconds_read_as_the_float_written(text, seconds):
    assert parse_duration(text) == seconds  # exactly: summary.json shows 0.0002, not 0.00019999999999999998


def test_without_the_flag_a_url_plan_has_no_slack_of_its_own():
    assert "send_slack_s" not in TestSpec(URL, rate=100.0).prepare().compiled.main.to_dict()


@pytest.mark.parametrize("text", ["101ms", "1s", "-1ms", "-0.001"])
def test_a_slack_out_of_range_is_refused_naming_the_flag(text):
    with pytest.raises(BadInput) as err:
        TestSpec(URL, rate=100.0, send_slack=text).prepare()
    assert str(err.value) == f"--send-slack: must be between 0 and 100ms, got '{text}'"


def test_a_closed_model_url_test_refuses_the_flag():
    with pytest.raises(BadInput) as err:
        TestSpec(URL, connections=2, send_slack="1ms").prepare()
    assert str(err.value) == "--send-slack: only applies with -r/--rate (the open model)"
    with pytest.raises(BadInput) as err:
        TestSpec(URL, send_slack="1ms").prepare(Overrides(vus=2))
    assert str(err.value) == "--send-slack: only applies to the open model; this experiment runs VU levels"
    assert (
        TestSpec(URL, send_slack="1ms").prepare(Overrides(rate=50.0)).compiled.main.to_dict()["send_slack_s"] == 0.001
    )


def test_the_file_key_reaches_every_phase_plan():
    compiled = loads(textwrap.dedent(OPEN_FILE)).compile()
    assert [p.to_dict()["send_slack_s"] for _, p in compiled.plans()] == [pytest.approx(0.0003)] * 2


def test_a_file_without_the_key_leaves_the_slack_to_the_engine():
    text = textwrap.dedent(OPEN_FILE).replace("send_slack: 300us\n", "")
    assert all("send_slack_s" not in p.to_dict() for _, p in loads(text).compile().plans())


def test_the_flag_overrides_the_file(tmp_path):
    path = write(tmp_path, OPEN_FILE)
    compiled = TestSpec(str(path), send_slack="2ms").prepare().compiled
    assert [p.to_dict()["send_slack_s"] for _, p in compiled.plans()] == [pytest.approx(0.002)] * 2
    assert TestSpec(str(path)).prepare().compiled.main.to_dict()["send_slack_s"] == pytest.approx(0.0003)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1s", "must be between 0 and 100ms, got '1s'"),
        ("5", "'5' has no unit"),
        ("soon", "'soon' is not a duration"),
    ],
)
def test_a_bad_file_key_names_file_line_and_key(tmp_path, value, message):
    path = write(tmp_path, OPEN_FILE.replace("300us", value))
    with pytest.raises(ScenarioError) as err:
        load(path, env={})
    assert f"{path}:2: send_slack: {message}" in str(err.value), str(err.value)


def test_the_heading_states_the_slack_of_an_open_model_plan_only():
    open_plan = TestSpec(URL, rate=100.0, send_slack="50ms").prepare()
    assert describe(open_plan.heading).endswith(" · send slack 50 ms")
    assert describe(TestSpec(URL, rate=100.0).prepare().heading).endswith(f" · send slack {DEFAULT_SLACK_TEXT}")
    assert describe(TestSpec(URL, rate=100.0, send_slack="0").prepare().heading).endswith(" · send slack 0 µs")
    assert "send slack" not in describe(TestSpec(URL, connections=2).prepare().heading)
    mixed = {
        "target": {"url": URL},
        "scenarios": [
            {"name": "a", "executor": {"type": "constant-vus"}},
            {"name": "b", "executor": {"type": "constant-arrival-rate"}},
        ],
    }
    assert describe(mixed).endswith(f" · send slack {DEFAULT_SLACK_TEXT}")
    assert describe(dict(mixed, send_slack_s=0.0015)).endswith(" · send slack 1.5 ms")
