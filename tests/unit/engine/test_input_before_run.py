"""Nothing runs until the whole file is valid: every phase's plan passes the engine's own
validation before setup sends a request, and the engine's errors come back at the file's
keys (FILE:LINE), so an invalid file leaves the target untouched."""

from __future__ import annotations

import json

import pytest

from surge.scenario import ScenarioError, loads

HEAD = "target: http://127.0.0.1:9/\n"

ENGINE_ROWS = [
    # (id, text, the one "f.yaml:LINE: key: message" the engine's refusal becomes)
    (
        "a header surge sets",
        HEAD + "scenarios:\n  s:\n    executor: {type: constant-vus, duration: 1s}\n"
        "    flow: [{request: {headers: {Transfer-Encoding: chunked}}}]\n",
        "f.yaml:5: scenarios.s.flow[0].request.headers.Transfer-Encoding: 'Transfer-Encoding' is set by surge "
        "from the body",
    ),
    (
        "a default header with a line break",
        HEAD + 'defaults: {headers: {X-A: "a\\nb"}}\n'
        "scenarios:\n  s:\n    executor: {type: constant-vus, duration: 1s}\n    flow: [{request: {}}]\n",
        "f.yaml:2: defaults.headers.X-A: value of 'X-A' contains a line break",
    ),
    (
        "a control character in a mix entry's path",
        HEAD + "scenarios:\n  s:\n"
        "    executor: {type: constant-vus, duration: 1s}\n    mix:\n      - {weight: 1, request: {path: /a}}\n"
        '      - {weight: 1, flow: [{request: {path: "/b\\x01"}}]}\n',
        "f.yaml:7: scenarios.s.mix[1].flow[0].request.path: '/b\x01' must start with '/' (or a template) and hold no "
        "spaces or control characters (percent-encode them)",
    ),
]


@pytest.mark.parametrize(("text", "line"), [r[1:] for r in ENGINE_ROWS], ids=[r[0] for r in ENGINE_ROWS])
def test_the_engines_refusals_name_the_files_line_and_key(text, line):
    f = loads(text, source="f.yaml", env={})
    with pytest.raises(ScenarioError) as err:
        f.compile(env={})
    assert str(err.value) == line


def test_an_error_in_the_plans_json_is_placed_at_the_value_it_is_about():
    from surge._engine import validate_plan
    from surge.engine.validation import plan_error

    plan = (
        loads(HEAD + "scenarios:\n  s:\n    executor: {type: constant-vus, duration: 1s}\n    flow: [{request: {}}]\n")
        .compile()
        .main.to_dict()
    )
    plan["scenarios"][0]["executor"]["vus"] = 10**12  # past what Python lets through: the last line of defence
    plan["scenarios"][0]["flow"]["sequences"][0]["steps"][0]["timeout_s"] = float("inf")
    for broken, field, message in [
        (
            "vus",
            "scenarios[0].executor.vus",
            "invalid value: integer '1000000000000', expected a whole number from 0 to 4,294,967,295",
        ),
        ("timeout_s", "scenarios[0].flow.sequences[0].steps[0].timeout_s", "expected a finite number"),
    ]:
        if broken == "timeout_s":
            plan["scenarios"][0]["executor"]["vus"] = 1
        [error] = json.loads(validate_plan(json.dumps(plan)))
        assert plan_error(error, plan) == (field, f"the engine cannot take this value ({message})")


def test_the_cli_names_the_flag_of_an_error_in_the_plans_json():
    from surge.cli.test_options import run_flag_names
    from surge.core.errors import BadInput
    from surge.engine.validation import check_url_plan as _check_with_engine
    from surge.plan.model import ConstantVus, Plan, RequestSpec, TargetSpec

    plan = Plan.single(TargetSpec("http://127.0.0.1:9/"), RequestSpec(), ConstantVus(vus=10**12, duration_s=1.0))
    with pytest.raises(BadInput) as err:
        _check_with_engine(plan, run_flag_names())
    assert err.value.where == "-c/--connections" and "cannot take this value" in err.value.message
