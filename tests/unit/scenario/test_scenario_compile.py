"""Compiling scenario files to the engine's plan (docs/plan.md): every executor, variable
kind, capture, check and think time, requests, mixes, setup/teardown with pools, and the
same plan from a file and from models built in Python. No engine needed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from surge.scenario import (
    Capture,
    Check,
    Choice,
    CompiledRun,
    ConstantArrivalRateInput,
    Counter,
    Csv,
    Defaults,
    Env,
    MixEntry,
    PerVuIterationsInput,
    Phase,
    Pool,
    RampingVusInput,
    Request,
    Scenario,
    ScenarioFile,
    SharedIterationsInput,
    Step,
    ThresholdSpec,
    UniformThink,
    VuStageInput,
    load,
    loads,
)

SCENARIOS = Path(__file__).parents[2] / "scenarios"


def compile_text(text: str, base_dir: Path | str = ".", env: dict | None = None) -> CompiledRun:
    """compile_text loads YAML text and compiles it (``env`` replaces the environment)."""
    return loads(text, source="t.yaml", base_dir=base_dir, env=env or {}).compile(env=env or {})


def scenario_of(body: str, top: str = "", base_dir: Path | str = ".", env: dict | None = None) -> dict:
    """scenario_of compiles one scenario ``a`` (indented body) and returns its ScenarioSpec."""
    text = f"target: http://127.0.0.1:8080/api\n{top}scenarios:\n  a:\n{body}"
    return compile_text(text, base_dir, env).main.to_dict()["scenarios"][0]


VUS = "    executor: {type: constant-vus, vus: 1, duration: 1s}\n"


@pytest.mark.parametrize(
    ("executor", "expected"),
    [
        ("{type: constant-vus, vus: 10, duration: 1m}", {"type": "constant-vus", "vus": 10, "duration_s": 60.0}),
        ("{type: constant-vus, duration: 500ms}", {"type": "constant-vus", "vus": 1, "duration_s": 0.5}),
        (
            "{type: ramping-vus, start_vus: 2, stages: [{duration: 30s, target: 50}, {duration: 1m30s, target: 0}],"
            " graceful_ramp_down: 5s}",
            {
                "type": "ramping-vus",
                "start_vus": 2,
                "stages": [{"duration_s": 30.0, "target": 50}, {"duration_s": 90.0, "target": 0}],
                "graceful_ramp_down_s": 5.0,
            },
        ),
        (
            "{type: ramping-vus, stages: [{duration: 1s, target: 5}]}",
            {
                "type": "ramping-vus",
                "start_vus": 0,
                "stages": [{"duration_s": 1.0, "target": 5}],
                "graceful_ramp_down_s": 30.0,
            },
        ),
        (
            "{type: per-vu-iterations, vus: 10, iterations: 100, max_duration: 1h}",
            {"type": "per-vu-iterations", "vus": 10, "iterations": 100, "max_duration_s": 3600.0},
        ),
        (
            "{type: per-vu-iterations}",
            {"type": "per-vu-iterations", "vus": 1, "iterations": 1, "max_duration_s": 600.0},
        ),
        (
            "{type: shared-iterations, vus: 10, iterations: 1000}",
            {"type": "shared-iterations", "vus": 10, "iterations": 1000, "max_duration_s": 600.0},
        ),
        (
            "{type: constant-arrival-rate, rate: 300, duration: 60s, max_vus: 1000}",
            {
                "type": "constant-arrival-rate",
                "rate": 300.0,
                "duration_s": 60.0,
                "max_vus": 1000,
                "pre_allocated_vus": None,
            },
        ),
        (
            "{type: constant-arrival-rate, rate: 18000/m, duration: 1s, pre_allocated_vus: 50}",
            {"type": "constant-arrival-rate", "rate": 300.0, "duration_s": 1.0, "max_vus": 50, "pre_allocated_vus": 50},
        ),
        (
            "{type: constant-arrival-rate, rate: 2/ms, duration: 1s, pre_allocated_vus: 5, max_vus: 9}",
            {"type": "constant-arrival-rate", "rate": 2000.0, "duration_s": 1.0, "max_vus": 9, "pre_allocated_vus": 5},
        ),
        (
            "{type: ramping-arrival-rate, stages: [{duration: 30s, target: 300/s}, {duration: 1m, target: 7200/h}],"
            " max_vus: 1000}",
            {
                "type": "ramping-arrival-rate",
                "start_rate": 0.0,
                "stages": [{"duration_s": 30.0, "target_rate": 300.0}, {"duration_s": 60.0, "target_rate": 2.0}],
                "max_vus": 1000,
                "pre_allocated_vus": None,
            },
        ),
        (
            "{type: ramping-arrival-rate, start_rate: 60/m, stages: [{duration: 1s, target: 0}], pre_allocated_vus: 3,"
            " max_vus: 4}",
            {
                "type": "ramping-arrival-rate",
                "start_rate": 1.0,
                "stages": [{"duration_s": 1.0, "target_rate": 0.0}],
                "max_vus": 4,
                "pre_allocated_vus": 3,
            },
        ),
    ],
)
def test_every_executor_compiles_to_the_engine_fields(executor, expected):
    spec = scenario_of(f"    executor: {executor}\n    flow: [{{request: {{}}}}]\n")
    assert spec["executor"] == expected


USERS = "name,password\nalice,a1\nbob,b2\n"


@pytest.mark.parametrize(
    ("definition", "slot", "expected"),
    [
        ("{type: counter}", "v", {"type": "counter", "start": 0, "step": 1}),
        ("{type: counter, start: 100, step: -2}", "v", {"type": "counter", "start": 100, "step": -2}),
        ("{type: uniform, min: 1, max: 6}", "v", {"type": "uniform", "min": 1, "max": 6}),
        ("{type: zipf, n: 10000, s: 1.1}", "v", {"type": "zipf", "n": 10000, "s": 1.1}),
        (
            "{type: choice, values: [a, 2, true]}",
            "v",
            {"type": "choice", "values": ["a", "2", "true"], "weights": None},
        ),
        (
            "{type: choice, values: [x, y], weights: [70, 30]}",
            "v",
            {"type": "choice", "values": ["x", "y"], "weights": [70.0, 30.0]},
        ),
        ("{type: uuid}", "v", {"type": "uuid"}),
        (
            "{type: random-string, length: 8}",
            "v",
            {
                "type": "random-string",
                "length": 8,
                "alphabet": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            },
        ),
        (
            "{type: random-string, length: 4, alphabet: '01'}",
            "v",
            {"type": "random-string", "length": 4, "alphabet": "01"},
        ),
        (
            "{type: csv, file: users.csv}",
            "v.name",
            {"type": "rows", "columns": ["name", "password"], "cells": "alice\0a1\0bob\0b2\0", "pick": "sequential"},
        ),
        (
            "{type: csv, file: users.csv, pick: random}",
            "v.password",
            {"type": "rows", "columns": ["name", "password"], "cells": "alice\0a1\0bob\0b2\0", "pick": "random"},
        ),
        ("{type: env, name: SURGE_TOKEN}", "v", {"type": "constant", "value": "from-env"}),
        ("{type: env, name: SURGE_UNSET, default: 42}", "v", {"type": "constant", "value": "42"}),
        ("{type: constant, value: acme}", "v", {"type": "constant", "value": "acme"}),
        ("acme", "v", {"type": "constant", "value": "acme"}),
        ("12", "v", {"type": "constant", "value": "12"}),
    ],
)
def test_every_variable_kind_compiles(tmp_path, definition, slot, expected):
    (tmp_path / "users.csv").write_text(USERS)
    spec = scenario_of(
        VUS + f'    flow: [{{request: {{path: "/x/{{{{{slot}}}}}"}}}}]\n',
        top=f"variables:\n  v: {definition}\n",
        base_dir=tmp_path,
        env={"SURGE_TOKEN": "from-env"},
    )
    assert spec["variables"] == [{"name": "v", **expected}]


def test_pool_variables_draw_from_what_setup_captured():
    text = """\
target: http://127.0.0.1:8080
variables:
  task: {type: pool, pool: task_ids, pick: zipf, s: 1.2}
  seq: {type: pool, pool: task_ids, pick: sequential}
setup:
  executor: {type: shared-iterations, vus: 2, iterations: 10}
  flow: [{request: {method: POST, path: /tasks}, capture: {task_ids: {json: $.id, to_pool: true}}}]
scenarios:
  a:
    executor: {type: constant-vus, duration: 1s}
    flow: [{request: {path: "/tasks/{{task}}/{{seq}}"}}]
teardown:
  flow: [{request: {method: DELETE, path: "/tasks/{{task}}"}}]
"""
    run = compile_text(text)
    assert run.main.to_dict()["scenarios"][0]["variables"] == [
        {"name": "task", "type": "pool", "pool": "task_ids", "pick": "zipf", "s": 1.2},
        {"name": "seq", "type": "pool", "pool": "task_ids", "pick": "sequential", "s": None},
    ]
    assert run.setup is not None and run.teardown is not None
    assert [s["name"] for s in run.setup.to_dict()["scenarios"]] == ["setup"]
    assert run.setup.to_dict()["scenarios"][0]["flow"]["sequences"][0]["steps"][0]["captures"] == [
        {"name": "task_ids", "to_pool": True, "from": "json", "path": "$.id"}
    ]
    assert run.teardown.to_dict()["scenarios"][0]["executor"] == {
        "type": "shared-iterations",
        "vus": 1,
        "iterations": 1,
        "max_duration_s": 600.0,
    }
    filled = run.with_pools({"task_ids": [1, 2, 3]})
    assert filled.main.to_dict()["pools"] == {"task_ids": ["1", "2", "3"]}
    assert filled.teardown is not None and filled.teardown.to_dict()["pools"] == {"task_ids": ["1", "2", "3"]}
    assert filled.setup == run.setup and run.main.to_dict()["pools"] == {"task_ids": []}
    assert [name for name, _ in filled.plans()] == ["setup", "main", "teardown"]


def test_only_variables_a_scenario_uses_are_compiled_into_it():
    text = """\
target: http://127.0.0.1:8080
defaults: {headers: {X-Tenant: "{{tenant}}"}}
variables: {tenant: acme, id: {type: counter}, unused: {type: uuid}}
scenarios:
  a:
    executor: {type: constant-vus, duration: 1s}
    variables: {own: {type: uuid}}
    flow: [{request: {path: "/a/{{id}}/{{own}}"}}]
  b:
    executor: {type: constant-vus, duration: 1s}
    flow: [{request: {path: /b}}]
"""
    a, b = compile_text(text).main.to_dict()["scenarios"]
    assert [v["name"] for v in a["variables"]] == ["tenant", "id", "own"]
    assert [v["name"] for v in b["variables"]] == ["tenant"]


@pytest.mark.parametrize(
    ("capture", "expected"),
    [
        ("{json: $.token}", {"from": "json", "path": "$.token"}),
        ("{json: \"$.items[0]['id']\"}", {"from": "json", "path": "$.items[0]['id']"}),
        ("{header: Location}", {"from": "header", "header": "Location"}),
        ("{regex: 'id=(\\d+)'}", {"from": "regex", "pattern": "id=(\\d+)", "group": 1}),
        ("{regex: 'id=\\d+'}", {"from": "regex", "pattern": "id=\\d+", "group": 0}),
        ("{regex: '(a)(b)', group: 2}", {"from": "regex", "pattern": "(a)(b)", "group": 2}),
    ],
)
def test_every_capture_source_compiles(capture, expected):
    spec = scenario_of(
        VUS + f"    flow:\n      - request: {{}}\n        capture: {{token: {capture}}}\n"
        '      - request: {path: "/x/{{token}}"}\n'
    )
    steps = spec["flow"]["sequences"][0]["steps"]
    assert steps[0]["captures"] == [{"name": "token", "to_pool": False, **expected}]
    assert steps[1]["request"]["path"] == "/x/{{token}}"
    assert spec["variables"] == []


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        ("{status: 200}", [{"name": "status in [200]", "type": "status", "in": [200]}]),
        ("{status: [200, 204]}", [{"name": "status in [200, 204]", "type": "status", "in": [200, 204]}]),
        ("{body_contains: ok}", [{"name": "body contains 'ok'", "type": "body_contains", "text": "ok"}]),
        (
            "{body_contains: [a, b]}",
            [
                {"name": "body contains 'a'", "type": "body_contains", "text": "a"},
                {"name": "body contains 'b'", "type": "body_contains", "text": "b"},
            ],
        ),
        (
            "{body_matches: '\"id\":\\s*\\d+'}",
            [{"name": 'body matches /"id":\\s*\\d+/', "type": "body_matches", "pattern": '"id":\\s*\\d+'}],
        ),
        (
            "{json: {$.done: true, $.title: x}}",
            [
                {"name": "$.done == true", "type": "json_equals", "path": "$.done", "value": True},
                {"name": '$.title == "x"', "type": "json_equals", "path": "$.title", "value": "x"},
            ],
        ),
        (
            "{header_present: Location}",
            [{"name": "header Location present", "type": "header_present", "header": "Location"}],
        ),
        ("{latency_under: 300ms}", [{"name": "latency < 300ms", "type": "latency_under", "ms": 300.0}]),
        ("{latency_under: 1.5s}", [{"name": "latency < 1500ms", "type": "latency_under", "ms": 1500.0}]),
        (
            "{latency_under: 2s, status: 201}",
            [
                {"name": "status in [201]", "type": "status", "in": [201]},
                {"name": "latency < 2s", "type": "latency_under", "ms": 2000.0},
            ],
        ),
    ],
)
def test_every_check_compiles(check, expected):
    spec = scenario_of(VUS + f"    flow:\n      - request: {{}}\n        check: {check}\n")
    assert spec["flow"]["sequences"][0]["steps"][0]["checks"] == expected


@pytest.mark.parametrize(
    ("think", "expected"),
    [
        ("1s", {"type": "fixed", "s": 1.0}),
        ("{type: fixed, duration: 250ms}", {"type": "fixed", "s": 0.25}),
        ("{type: uniform, min: 500ms, max: 1.5s}", {"type": "uniform", "min_s": 0.5, "max_s": 1.5}),
        ("{type: exponential, mean: 2s}", {"type": "exponential", "mean_s": 2.0}),
    ],
)
def test_think_times_after_a_request_and_after_an_iteration(think, expected):
    spec = scenario_of(
        VUS + f"    think_time: {think}\n    flow:\n      - request: {{}}\n        think_time: {think}\n"
    )
    assert spec["flow"]["think_after_iteration"] == expected
    assert spec["flow"]["sequences"][0]["steps"][0]["think_after"] == expected


@pytest.mark.parametrize(
    ("request_yaml", "expected"),
    [
        (
            "{}",
            {
                "tag": "GET /api",
                "method": "GET",
                "path": "/api",
                "headers": [["Accept", "*/*"]],
                "body": None,
                "timeout_s": None,
            },
        ),
        (
            '{method: post, path: /tasks, json: {title: "t{{n}}", tags: [a, 1], done: false}}',
            {
                "tag": "POST /tasks",
                "method": "POST",
                "path": "/tasks",
                "headers": [["Accept", "*/*"], ["Content-Type", "application/json"]],
                "body": '{"title":"t{{n}}","tags":["a",1],"done":false}',
                "timeout_s": None,
            },
        ),
        (
            "{method: PUT, path: /t, json: [1], headers: {content-type: application/vnd+json}}",
            {
                "tag": "PUT /t",
                "method": "PUT",
                "path": "/t",
                "headers": [["Accept", "*/*"], ["content-type", "application/vnd+json"]],
                "body": "[1]",
                "timeout_s": None,
            },
        ),
        (
            "{method: POST, path: /t, json: null}",
            {
                "tag": "POST /t",
                "method": "POST",
                "path": "/t",
                "headers": [["Accept", "*/*"], ["Content-Type", "application/json"]],
                "body": "null",
                "timeout_s": None,
            },
        ),
        (
            "{method: POST, path: /raw, body: 'a={{n}}&b=2', headers: {accept: text/plain}, timeout: 2s}",
            {
                "tag": "POST /raw",
                "method": "POST",
                "path": "/raw",
                "headers": [["accept", "text/plain"]],
                "body": "a={{n}}&b=2",
                "timeout_s": 2.0,
            },
        ),
        (
            '{path: "/tasks/{{n}}", query: {q: a b&c, id: "{{n}}", flag: true}}',
            {
                "tag": "GET /tasks/{n}",
                "method": "GET",
                "path": "/tasks/{{n}}?q=a%20b%26c&id={{n}}&flag=true",
                "headers": [["Accept", "*/*"]],
                "body": None,
                "timeout_s": None,
            },
        ),
        (
            '{path: "/s?x=1", query: {y: 2}}',
            {
                "tag": "GET /s",
                "method": "GET",
                "path": "/s?x=1&y=2",
                "headers": [["Accept", "*/*"]],
                "body": None,
                "timeout_s": None,
            },
        ),
    ],
)
def test_requests_compile_with_defaults_query_headers_and_bodies(request_yaml, expected):
    spec = scenario_of(
        VUS + f"    flow: [{{request: {request_yaml}}}]\n",
        top="defaults: {headers: {Accept: '*/*'}}\nvariables: {n: {type: counter}}\n",
    )
    step = spec["flow"]["sequences"][0]["steps"][0]
    got = {
        "tag": step["tag"],
        **{k: step["request"][k] for k in ("method", "path", "headers", "body")},
        "timeout_s": step["timeout_s"],
    }
    assert got == expected
    assert step["request"]["body_base64"] is None


def test_a_mix_compiles_to_weighted_sequences():
    spec = scenario_of(
        VUS
        + """\
    mix:
      - {weight: 70, name: get task, request: {path: /tasks/1}, check: {status: 200}}
      - {weight: 25, request: {path: /tasks}}
      - weight: 5
        flow:
          - {name: create, request: {method: POST, path: /tasks}}
          - {request: {path: /tasks/2}}
      - {weight: 0.5, name: named flow, flow: [{request: {}}]}
"""
    )
    seqs = spec["flow"]["sequences"]
    assert [(s["name"], s["weight"], [st["tag"] for st in s["steps"]]) for s in seqs] == [
        ("get task", 70.0, ["get task"]),
        ("GET /tasks", 25.0, ["GET /tasks"]),
        ("flow-3", 5.0, ["create", "GET /tasks/2"]),
        ("named flow", 0.5, ["GET /api"]),
    ]
    assert seqs[0]["steps"][0]["checks"] == [{"name": "status in [200]", "type": "status", "in": [200]}]


def test_plan_level_fields():
    text = """\
target: https://example.test:8443/base
insecure: true
defaults: {timeout: 10s}
graceful_stop: 30s
scenarios:
  late:
    executor: {type: constant-vus, duration: 1s}
    start_time: 1m
    flow: [{request: {}}]
"""
    compiled = compile_text(text).main
    plan = compiled.to_dict()
    assert {k: v for k, v in plan.items() if k != "scenarios"} == {
        "target": {"url": "https://example.test:8443/base", "insecure": True},
        "pools": {},
        "limits": {"timeout_s": 10.0, "grace_period_s": 30.0},
        "threads": None,
        "stripe": {"offset": 0, "stride": 1},
        "interval_s": 1.0,
    }
    [late] = plan["scenarios"]
    assert (late["name"], late["start_time_s"]) == ("late", 60.0)
    assert late["flow"]["sequences"][0]["steps"][0]["request"]["path"] == "/base"
    assert json.loads(compiled.to_json()) == plan


def test_environment_variables_are_read_when_compiling(monkeypatch):
    text = (
        "target: http://h\nvariables: {t: {type: env, name: SURGE_T}}\nscenarios:\n  a:\n"
        + VUS
        + '    flow: [{request: {headers: {Authorization: "Bearer {{t}}"}}}]\n'
    )
    monkeypatch.setenv("SURGE_T", "secret")
    f = loads(text)
    assert f.compile().main.to_dict()["scenarios"][0]["variables"][0]["value"] == "secret"
    assert f.compile(env={"SURGE_T": "other"}).main.to_dict()["scenarios"][0]["variables"][0]["value"] == "other"


def test_thresholds_come_parsed_and_scoped():
    run = load(SCENARIOS / "task-api.yaml", env={}).compile(env={})
    assert [(t.expr, t.tag, t.scenario, t.abort_on_fail, t.delay_s, t.no_data) for t in run.thresholds] == [
        ("p(95) < 300ms", None, None, False, 0.0, "fail"),
        ("p(99) < 500ms", "get task", "reads", True, 10.0, "fail"),
        ("failure_rate < 0.1%", None, None, False, 0.0, "fail"),
        ("checks > 0.99", None, None, False, 0.0, "pass"),
        ("rate > 100/s", None, "writes", False, 0.0, "fail"),
    ]


def task_api_in_python() -> ScenarioFile:
    """task_api_in_python is tests/scenarios/task-api.yaml built from the models."""
    get_task = MixEntry(
        weight=70,
        name="get task",
        request=Request(path="/tasks/{{task}}"),
        check=Check(status=[200], json={"$.deleted": False}),
    )
    list_tasks = MixEntry(
        weight=25,
        name="list tasks",
        request=Request(path="/tasks", query={"limit": 20, "owner": "{{user.username}}"}),
        check=Check(status=200, latency_under="300ms"),
    )
    login_and_create = MixEntry(
        weight=5,
        name="login and create",
        flow=[
            Step(
                name="login",
                request=Request(
                    method="POST", path="/login", json={"user": "{{user.username}}", "password": "{{user.password}}"}
                ),
                capture={"session": Capture(header="Set-Cookie")},
            ),
            Step(
                name="create",
                request=Request(
                    method="POST",
                    path="/tasks",
                    headers={"Cookie": "{{session}}"},
                    body='{"title": "new {{n}}"}',
                    timeout="2s",
                ),
                think_time="100ms",
                check=Check(status=[201], header_present="Location", body_matches=r'"id":\s*\d+'),
            ),
        ],
    )
    return ScenarioFile(
        target="http://127.0.0.1:8080",
        defaults=Defaults(timeout="10s", headers={"Accept": "application/json", "Authorization": "Bearer {{token}}"}),
        graceful_stop="10s",
        variables={
            "token": Env(name="API_TOKEN", default="dev-token"),
            "n": Counter(start=1),
            "task": Pool(pool="task_ids", pick="zipf", s=1.1),
            "user": Csv(file="users.csv", pick="unique"),
            "priority": Choice(values=["low", "normal", "high"], weights=[1, 8, 1]),
        },
        setup=Phase(
            executor=SharedIterationsInput(vus=10, iterations=1000),
            flow=[
                Step(
                    name="create",
                    request=Request(
                        method="POST", path="/tasks", json={"title": "task {{n}}", "priority": "{{priority}}"}
                    ),
                    check=Check(status=201),
                    capture={"task_ids": Capture(json="$.id", to_pool=True)},
                )
            ],
        ),
        scenarios={
            "reads": Scenario(
                executor=RampingVusInput(
                    stages=[
                        VuStageInput(duration="30s", target=4),
                        VuStageInput(duration="1m", target=4),
                        VuStageInput(duration="10s", target=0),
                    ]
                ),
                think_time=UniformThink(min="500ms", max="1500ms"),
                mix=[get_task, list_tasks, login_and_create],
            ),
            "writes": Scenario(
                executor=ConstantArrivalRateInput(rate="50/s", duration="1m30s", pre_allocated_vus=2, max_vus=4),
                start_time="10s",
                flow=[
                    Step(
                        name="update",
                        request=Request(method="PUT", path="/tasks/{{task}}", json={"done": True}),
                        check=Check(status=[200, 204]),
                    )
                ],
            ),
        },
        teardown=Phase(
            executor=PerVuIterationsInput(vus=1, iterations=1),
            flow=[Step(request=Request(method="DELETE", path="/tasks"))],
        ),
        thresholds=[
            "p(95) < 300ms",
            ThresholdSpec(expr="p(99) < 500ms", tag="get task", scenario="reads", abort_on_fail=True, delay="10s"),
            ThresholdSpec(expr="failure_rate < 0.1%"),
            ThresholdSpec(expr="checks > 0.99", no_data="pass"),
            ThresholdSpec(expr="rate > 100/s", scenario="writes"),
        ],
    ).with_base_dir(SCENARIOS)


@pytest.mark.parametrize("time_scale", [1.0, 0.1])
def test_a_file_and_its_python_twin_compile_to_the_same_plans(time_scale):
    from_file = load(SCENARIOS / "task-api.yaml", env={}).compile(time_scale=time_scale, env={})
    from_code = task_api_in_python().compile(time_scale=time_scale, env={})
    assert from_file == from_code
    assert from_file.setup is not None and from_file.teardown is not None


def test_models_hold_the_same_values_whatever_the_source():
    assert load(SCENARIOS / "task-api.yaml", env={}).model_dump() == task_api_in_python().model_dump()


def test_csv_paths_are_relative_to_the_scenario_file(tmp_path):
    shutil.copy(SCENARIOS / "per-vu-iterations.yaml", tmp_path / "s.yaml")
    (tmp_path / "users.csv").write_text("username\nzed\nyan\nxi\nwu\n")
    [spec] = load(tmp_path / "s.yaml").compile().main.to_dict()["scenarios"]
    assert spec["variables"][0]["cells"] == "zed\0yan\0xi\0wu\0"


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_file_compiles(path):
    run = load(path, env={}).compile(env={})
    assert run.main.to_dict()["scenarios"]
    json.dumps([p.to_dict() for _, p in run.plans()])  # JSON-ready


def test_one_example_file_per_executor():
    types = {
        load(p, env={}).scenarios[n].executor.type for p in SCENARIOS.glob("*.yaml") for n in load(p, env={}).scenarios
    }
    assert types == {
        "constant-vus",
        "ramping-vus",
        "per-vu-iterations",
        "shared-iterations",
        "constant-arrival-rate",
        "ramping-arrival-rate",
    }


def test_a_file_can_be_aimed_at_another_target():
    f = load(SCENARIOS / "per-vu-iterations.yaml")
    moved = f.with_target("http://127.0.0.1:4321")
    assert moved.compile().main.to_dict()["target"]["url"] == "http://127.0.0.1:4321"
    assert f.target == "http://127.0.0.1:8080"
    with pytest.raises(ValueError, match="not an http:// or https:// URL"):
        f.with_target("localhost:80")


def test_decimal_vu_and_timestamp_variables_compile_to_the_engine_kinds():
    run = compile_text("""\
target: http://127.0.0.1:8080
variables:
  temp: {type: decimal, min: 20, max: 35, decimals: 1}
  me: {type: vu}
  at: {type: timestamp, unit: s}
scenarios:
  a:
    executor: {type: constant-vus, duration: 1s}
    flow: [{request: {path: "/r?s=sensor-{{me}}&t={{temp}}&at={{at}}"}}]
""")
    assert run.main.to_dict()["scenarios"][0]["variables"] == [
        {"name": "temp", "type": "decimal", "min": 20.0, "max": 35.0, "decimals": 1},
        {"name": "me", "type": "vu"},
        {"name": "at", "type": "timestamp", "unit": "s"},
    ]
