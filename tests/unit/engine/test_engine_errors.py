"""The engine's JSONPath check as the scenario layer uses it (the engine's parser, so Python accepts
and refuses exactly what a run does), and the one exception tree under SurgeError."""

from __future__ import annotations

import json

import pytest

from surge import _engine
from surge.core.errors import BadInput, SurgeError
from surge.engine import execute as errors
from surge.scenario import ScenarioError, load

ACCEPTED = [
    "$",
    "$.id",
    "$.items[0].id",
    "$.tasks[-1].id",
    "$.data['items'][1]['id']",
    "$['odd key']",
    '$["a b"][-2]',
    "$.snake_case-x",
    "$.ключ",
]

REFUSED = [
    ("", "must start with '$'"),
    ("id", "must start with '$'"),
    ("$id", "expected '.' or '['"),
    ("$.", "expected a member name"),
    ("$..id", "recursive descent"),
    ("$.*", "wildcards"),
    ("$.a[?(@.x)]", "filters"),
    ("$[1:2]", "slices"),
    ("$[0,1]", "unions"),
    ("$[", "unclosed '['"),
    ("$[-]", "expected digits"),
    ("$.a b", "expected '.' or '['"),
]


@pytest.mark.parametrize("path", ACCEPTED)
def test_the_engine_accepts_these_paths(path):
    assert errors.json_path_problem(path) is None
    _engine.check_json_path(path)


@pytest.mark.parametrize(("path", "why"), REFUSED)
def test_the_engine_refuses_these_paths_saying_why(path, why):
    problem = errors.json_path_problem(path)
    assert problem is not None
    assert why in problem
    assert "\n" not in problem
    with pytest.raises(errors.PlanError) as err:
        _engine.check_json_path(path)
    message, listed = err.value.args
    assert message == problem
    assert json.loads(listed) == [{"field": "path", "message": problem}]


def _scenario(json_path: str) -> str:
    return (
        "target: http://127.0.0.1:9\nscenarios:\n  a:\n    executor: {type: constant-vus, vus: 1, duration: 1s}\n"
        f'    flow:\n      - request: {{path: /}}\n        capture: {{id: {{json: "{json_path}"}}}}\n'
        f'        check: {{json: {{"{json_path}": 1}}}}\n'
    )


def test_a_scenario_takes_a_negative_index_as_the_engine_does(tmp_path):
    path = tmp_path / "scenario.yaml"
    path.write_text(_scenario("$.tasks[-1].id"))
    load(path, env={})


def test_a_scenario_refuses_a_path_with_the_engines_reason_on_one_line(tmp_path):
    path = tmp_path / "scenario.yaml"
    path.write_text(_scenario("$..id"))
    with pytest.raises(ScenarioError) as err:
        load(path, env={})
    lines = str(err.value).splitlines()
    capture = f"{path}:7: scenarios.a.flow[0].capture.id.json: '$..id' is not a JSON path (e.g. "
    assert any(line.startswith(capture) and "recursive descent" in line for line in lines), lines
    check = f"{path}:8: scenarios.a.flow[0].check.json[\"$..id\"]: '$..id' is not a JSON path (e.g. "
    assert any(line.startswith(check) and "recursive descent" in line for line in lines), lines


ENGINE_CLASSES = [
    (errors.PlanError, ValueError),
    (errors.UnreachableError, None),
    (errors.ConnectionLimitError, None),
    (errors.SetupError, None),
    (errors.TargetConfigError, ValueError),
    (errors.TargetServeError, OSError),
    (errors.TargetInternalError, RuntimeError),
]


@pytest.mark.parametrize(("cls", "builtin"), ENGINE_CLASSES, ids=[c.__name__ for c, _ in ENGINE_CLASSES])
def test_every_engine_and_target_error_is_a_surge_error_and_the_builtin_it_replaces(cls, builtin):
    assert issubclass(cls, SurgeError)
    assert cls.__module__ == "surge._engine"
    if builtin is not None:
        assert issubclass(cls, builtin)
    assert errors.SurgeError is SurgeError
    assert issubclass(BadInput, SurgeError)


def test_an_invalid_target_configuration_raises_target_config_error_a_value_error():
    with pytest.raises(ValueError) as err:
        _engine.check_target_config(json.dumps({"capacity": -1}))
    assert isinstance(err.value, errors.TargetConfigError)
    assert isinstance(err.value, SurgeError)
