"""The one Plan model (surge.plan.model) mirrors the engine's plan: every example scenario file
compiles to Plan objects whose JSON is byte for byte what the compiler produced when it built
dicts (commit 151c5b0; compiled_before.json holds each plan's SHA-256), reads back equal
(``Plan.from_dict``), and the engine accepts it; a plan using every kind of executor,
variable, capture, check and think time is accepted by the engine, so every field name is
the engine's (it refuses unknown fields)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from surge.engine.validation import plan_errors
from surge.plan import model as m
from surge.plan import scenario_parts as parts
from surge.plan.url import build_plan
from surge.run.flags import test_flag_names
from surge.scenario import load

ROOT = Path(__file__).resolve().parents[3]
BEFORE: dict[str, str] = json.loads((Path(__file__).parent / "compiled_before.json").read_text())
FILES = sorted({key.rsplit(" ", 1)[0] for key in BEFORE})


def digest(document: object) -> str:
    return hashlib.sha256(json.dumps(document).encode()).hexdigest()


def test_the_fixture_covers_every_example_and_test_scenario():
    found = {
        str(path.relative_to(ROOT))
        for path in [
            *ROOT.glob("examples/*.yaml"),
            *ROOT.glob("tests/scenarios/*.yaml"),
            *ROOT.glob("tests/fixtures/**/*.yaml"),
        ]
    }
    assert found == set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_every_scenario_file_compiles_to_the_json_it_compiled_to_before(name):
    compiled = load(ROOT / name).compile(env={})
    got = {f"{name} {phase}": digest(plan.to_dict()) for phase, plan in compiled.plans()}
    assert got == {k: v for k, v in BEFORE.items() if k.rsplit(" ", 1)[0] == name}
    for _, plan in compiled.plans():
        assert isinstance(plan, m.Plan)
        assert m.Plan.from_dict(plan.to_dict()) == plan
        assert m.Plan.from_dict(json.loads(plan.to_json())) == plan
        assert plan_errors(plan.to_dict()) == []


def every_kind_plan() -> m.Plan:
    step = m.StepSpec(
        tag="all",
        request=m.RequestSpec(
            method="POST",
            path="/t/{{c}}?u={{u}}&z={{z}}&ch={{ch}}&id={{id}}&rs={{rs}}&row={{row.a}}",
            headers=[("X-P", "{{p}}"), ("X-K", "{{k}}"), ("X-D", "{{d}}"), ("X-V", "{{v}}"), ("X-T", "{{ts}}")],
            body="x",
        ),
        timeout_s=2.0,
        think_after=parts.ThinkUniform(min_s=0.0, max_s=0.1),
        captures=[
            parts.JsonCapture(name="j", path="$.id"),
            parts.HeaderCapture(name="h", header="Location", to_pool=True),
            parts.RegexCapture(name="r", pattern="id=(\\d+)", group=1),
        ],
        checks=[
            parts.StatusCheck(name="s", codes=[200, 201]),
            parts.BodyContainsCheck(name="bc", text="ok"),
            parts.BodyMatchesCheck(name="bm", pattern="o+"),
            parts.JsonEqualsCheck(name="je", path="$.ok", value={"a": [1, None]}),
            parts.HeaderPresentCheck(name="hp", header="Location"),
            parts.LatencyUnderCheck(name="lu", ms=300.0),
        ],
    )
    variables: list[parts.VariableSpec] = [
        parts.CounterVariable(name="c", start=5, step=2),
        parts.UniformVariable(name="u", min=1, max=9),
        parts.ZipfVariable(name="z", n=100, s=1.1),
        parts.ChoiceVariable(name="ch", values=["a", "b"], weights=[3.0, 1.0]),
        parts.UuidVariable(name="id"),
        parts.RandomStringVariable(name="rs", length=4, alphabet="ab"),
        parts.RowsVariable(name="row", columns=["a"], rows=[["1"], ["2"]], pick="random"),
        parts.PoolVariable(name="p", pool="ids", pick="zipf", s=1.2),
        parts.ConstantVariable(name="k", value="v"),
        parts.DecimalVariable(name="d", min=0.5, max=1.5, decimals=3),
        parts.VuVariable(name="v"),
        parts.TimestampVariable(name="ts", unit="us"),
    ]
    executors: list[m.Executor] = [
        m.ConstantVus(vus=2, duration_s=1.0),
        m.RampingVus(stages=[m.VuStage(duration_s=1.0, target=3)], start_vus=1, graceful_ramp_down_s=2.0),
        m.PerVuIterations(vus=2, iterations=3, max_duration_s=10.0),
        m.SharedIterations(vus=2, iterations=3),
        m.ConstantArrivalRate(rate=5.0, duration_s=1.0, max_vus=4, pre_allocated_vus=2),
        m.RampingArrivalRate(stages=[m.RateStage(duration_s=1.0, target_rate=5.0)], max_vus=4, start_rate=1.0),
    ]
    flow = m.FlowSpec(
        sequences=[m.SequenceSpec(name="one", weight=2.0, steps=[step]), m.SequenceSpec(steps=[m.StepSpec()])],
        think_after_iteration=parts.ThinkExponential(mean_s=0.5),
    )
    scenarios = [
        m.ScenarioSpec(name=f"s{i}", start_time_s=0.5 * i, executor=ex, variables=variables, flow=flow)
        for i, ex in enumerate(executors)
    ]
    scenarios.append(
        replace(
            scenarios[0],
            name="fixed",
            variables=[replace(variables[6], rows=[], cells="1\0")],
            flow=m.FlowSpec(sequences=[m.SequenceSpec(steps=[m.StepSpec(think_after=parts.ThinkFixed(s=0.1))])]),
        )
    )
    return m.Plan(
        target=m.TargetSpec("http://127.0.0.1:9/base", insecure=True),
        scenarios=scenarios,
        pools={"ids": ["1", "2"]},
        limits=m.Limits(timeout_s=3.0, grace_period_s=0.0),
        threads=2,
        stripe=m.Stripe(offset=1, stride=2),
        interval_s=0.5,
        interval_totals=True,
        send_slack_s=0.002,
        percentiles=[75.0, 99.5],
    )


def test_a_plan_with_every_kind_of_field_is_one_the_engine_accepts_and_reads_back_equal():
    plan = every_kind_plan()
    document = plan.to_dict()
    assert plan_errors(document) == []
    assert m.Plan.from_dict(document) == plan
    assert document["scenarios"][0]["flow"]["sequences"][0]["steps"][0]["checks"][0] == {
        "name": "s",
        "type": "status",
        "in": [200, 201],
    }
    assert document["scenarios"][0]["flow"]["sequences"][0]["steps"][0]["captures"][1] == {
        "name": "h",
        "to_pool": True,
        "from": "header",
        "header": "Location",
    }
    assert document["scenarios"][0]["flow"]["sequences"][0]["steps"][0]["request"]["headers"][0] == ["X-P", "{{p}}"]


def test_a_field_the_engine_does_not_know_is_refused_by_both():
    document = every_kind_plan().to_dict()
    document["scenarios"][0]["executor"]["vu"] = 3
    with pytest.raises(ValueError, match="unknown field"):
        m.Plan.from_dict(document)
    assert [field for field, _ in plan_errors(document)] != []


def test_fields_left_to_the_engine_are_left_out_at_their_default():
    plan = replace(every_kind_plan(), interval_totals=False, send_slack_s=None, percentiles=[])
    document = plan.to_dict()
    assert not {"interval_totals", "send_slack_s", "percentiles"} & set(document)
    assert document["threads"] == 2 and document["scenarios"][5]["executor"]["pre_allocated_vus"] is None
    assert "cells" not in document["scenarios"][0]["variables"][6]
    assert "rows" not in document["scenarios"][-1]["variables"][0]
    assert m.Plan.from_dict(document) == plan


def test_a_url_runs_plan_reads_back_equal():
    plan = build_plan(
        "http://127.0.0.1:9/",
        connections=3,
        duration="2s",
        requests=None,
        rate=50.0,
        method="post",
        headers=["X-A: 1"],
        body="hello",
        timeout="5s",
        threads=None,
        insecure=False,
        max_in_flight=None,
        grace="1s",
        flags=test_flag_names(),
    )
    assert m.Plan.from_dict(plan.to_dict()) == plan
    assert plan_errors(plan.to_dict()) == []
    assert plan.planned_s() == 2.0 and plan.is_open_model()
