"""Compile: scenario models → the engine's plan JSON (docs/plan.md), the one place where
the file's keys are mapped to the engine's fields (``surge.scenario.file.compile_file`` checks
a file, then compiles it here).

The measured scenarios compile to one plan; ``setup`` and ``teardown`` each to a plan of
their own with one scenario. Pools that setup fills reach the measured plan (and the
teardown plan) through ``CompiledRun.with_pools``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from surge.core.units import format_seconds
from surge.plan import model as plan_model
from surge.plan.compiled import CompiledRun
from surge.plan.compiled import PlanDict as Plan
from surge.plan.thresholds import percentiles
from surge.scenario.captures import Capture
from surge.scenario.checks import Check
from surge.scenario.executors import (
    ConstantArrivalRate,
    ConstantVus,
    PerVuIterations,
    RampingArrivalRate,
    RampingVus,
    SharedIterations,
)
from surge.scenario.flow import Step
from surge.scenario.models import Phase, ScenarioModel
from surge.scenario.templates import TemplateError, slots
from surge.scenario.think import ExponentialThink, FixedThink, UniformThink
from surge.scenario.variables import (
    AnyVariable,
    Choice,
    Constant,
    Counter,
    Csv,
    Decimal,
    Env,
    Pool,
    RandomString,
    Timestamp,
    Uniform,
    Uuid,
    Vu,
    Zipf,
)


def compile_plans(scaled: ScenarioModel, env: Mapping[str, str] | None) -> CompiledRun:
    """compile_plans maps a checked, time-scaled file to its plans: the measured scenarios in
    ``main``, ``setup`` and ``teardown`` each a plan of one scenario, the thresholds parsed."""
    measured: list[tuple[str, Phase, float]] = [(name, s, s.start_time) for name, s in scaled.scenarios.items()]
    thresholds = scaled.thresholds_parsed()
    main = _plan(scaled, measured, env)
    extra = percentiles(thresholds)
    if extra:
        main["percentiles"] = extra  # p(75) and the like: the engine adds them to every summary
    return CompiledRun(
        main=main,
        setup=_plan(scaled, [("setup", scaled.setup, 0.0)], env) if scaled.setup is not None else None,
        teardown=_plan(scaled, [("teardown", scaled.teardown, 0.0)], env) if scaled.teardown is not None else None,
        thresholds=thresholds,
    )


def _plan(f: ScenarioModel, phases: list[tuple[str, Phase, float]], env: Mapping[str, str] | None) -> Plan:
    scenarios = [_scenario(f, name, phase, start, env) for name, phase, start in phases]
    # Pools a variable reads exist from the start (empty until setup's captures fill them
    # through CompiledRun.with_pools), so the engine can tell them from a misspelt name.
    read = {v["pool"] for s in scenarios for v in s["variables"] if v["type"] == "pool"}
    plan: Plan = {
        "target": {"url": f.target, "insecure": f.insecure},
        "scenarios": scenarios,
        "pools": {name: [] for name in sorted(read)},
        "limits": {"timeout_s": f.defaults.timeout, "grace_period_s": f.graceful_stop},
        "threads": None,
        "stripe": {"offset": 0, "stride": 1},
        "interval_s": 1.0,
    }
    if f.send_slack is not None:  # else the engine's default (docs/engine.md, "Pacing")
        plan["send_slack_s"] = f.send_slack
    return plan


def _scenario(f: ScenarioModel, name: str, phase: Phase, start: float, env: Mapping[str, str] | None) -> Plan:
    sequences = [(seq, [_step(f, s) for _, s in seq.steps]) for seq in phase.sequences(name, f.default_path())]
    visible = {**f.variables, **phase.variables}
    return {
        "name": name,
        "start_time_s": start,
        "executor": executor_spec(phase.executor),
        "variables": [
            variable_spec(n, visible[n], f, env)
            for n in _used(visible, [step for _, steps in sequences for step in steps])
        ],
        "flow": {
            "sequences": [{"name": seq.name, "weight": seq.weight, "steps": steps} for seq, steps in sequences],
            "think_after_iteration": think_spec(phase.think_time),
        },
    }


def _used(visible: Mapping[str, Any], steps: list[Plan]) -> list[str]:
    """_used are the visible variables the compiled steps' templates use, in the order of ``visible``."""
    used = {slot.name for spec in steps for text in _templates(spec) for slot in _slots(text)}
    return [n for n in visible if n in used]


def _slots(text: str) -> list[Any]:
    try:
        return slots(text)
    except TemplateError:
        return []


def _templates(step: Plan) -> list[str]:
    r = step["request"]
    return [r["path"], *(v for _, v in r["headers"]), r["body"] or ""]


def executor_spec(ex: Any) -> Plan:
    """executor_spec maps an executor model to the engine's executor object: the plan model's
    executor (``plan_executor``) as JSON-ready data, ``None`` fields kept."""
    return asdict(plan_executor(ex))


def plan_executor(ex: Any) -> plan_model.Executor:
    """plan_executor maps an executor as a file writes it to the plan model's executor (the one
    definition a URL run's plan uses too)."""
    if isinstance(ex, ConstantVus):
        return plan_model.ConstantVus(vus=ex.vus, duration_s=ex.duration)
    if isinstance(ex, RampingVus):
        return plan_model.RampingVus(
            start_vus=ex.start_vus,
            stages=[plan_model.VuStage(duration_s=s.duration, target=s.target) for s in ex.stages],
            graceful_ramp_down_s=ex.graceful_ramp_down,
        )
    if isinstance(ex, PerVuIterations):
        return plan_model.PerVuIterations(vus=ex.vus, iterations=ex.iterations, max_duration_s=ex.max_duration)
    if isinstance(ex, SharedIterations):
        return plan_model.SharedIterations(vus=ex.vus, iterations=ex.iterations, max_duration_s=ex.max_duration)
    if isinstance(ex, ConstantArrivalRate):
        return plan_model.ConstantArrivalRate(
            rate=ex.rate, duration_s=ex.duration, max_vus=_vu_cap(ex), pre_allocated_vus=ex.pre_allocated_vus
        )
    if isinstance(ex, RampingArrivalRate):
        return plan_model.RampingArrivalRate(
            start_rate=ex.start_rate,
            stages=[plan_model.RateStage(duration_s=s.duration, target_rate=s.target) for s in ex.stages],
            max_vus=_vu_cap(ex),
            pre_allocated_vus=ex.pre_allocated_vus,
        )
    raise TypeError(f"not an executor: {ex!r}")


def _vu_cap(ex: ConstantArrivalRate | RampingArrivalRate) -> int:
    """_vu_cap is an arrival-rate executor's most VUs: ``max_vus``, else ``pre_allocated_vus``
    (the meaning checks refuse a file with neither before it compiles)."""
    cap = ex.max_vus or ex.pre_allocated_vus
    if cap is None:
        raise TypeError(f"an arrival-rate executor with neither max_vus nor pre_allocated_vus: {ex!r}")
    return cap


def think_spec(think: Any) -> Plan | None:
    """think_spec maps a think time to the engine's ThinkTime (None: no pause)."""
    if think is None:
        return None
    if isinstance(think, FixedThink):
        return {"type": "fixed", "s": think.duration}
    if isinstance(think, UniformThink):
        return {"type": "uniform", "min_s": think.min, "max_s": think.max}
    if isinstance(think, ExponentialThink):
        return {"type": "exponential", "mean_s": think.mean}
    raise TypeError(f"not a think time: {think!r}")


def variable_spec(name: str, var: AnyVariable, f: ScenarioModel, env: Mapping[str, str] | None) -> Plan:
    """variable_spec maps a variable to the engine's VariableSpec (CSV rows read, env resolved)."""
    head: Plan = {"name": name, "type": var.type}
    if isinstance(var, Counter):
        return {**head, "start": var.start, "step": var.step}
    if isinstance(var, Uniform):
        return {**head, "min": var.min, "max": var.max}
    if isinstance(var, Zipf):
        return {**head, "n": var.n, "s": var.s}
    if isinstance(var, Choice):
        return {**head, "values": list(var.values), "weights": var.weights}
    if isinstance(var, Uuid):
        return head
    if isinstance(var, RandomString):
        return {**head, "length": var.length, "alphabet": var.alphabet}
    if isinstance(var, Csv):
        table = var.table(f.base_dir())
        return {"name": name, "type": "rows", "columns": list(table.columns), "cells": table.cells, "pick": var.pick}
    if isinstance(var, Pool):
        return {**head, "pool": var.pool, "pick": var.pick, "s": var.s}
    if isinstance(var, Env):
        return {"name": name, "type": "constant", "value": var.resolve(env) or ""}
    if isinstance(var, Constant):
        return {**head, "value": var.value}
    if isinstance(var, Decimal):
        return {**head, "min": var.min, "max": var.max, "decimals": var.decimals}
    if isinstance(var, Vu):
        return head
    if isinstance(var, Timestamp):
        return {**head, "unit": var.unit}
    raise TypeError(f"not a variable: {var!r}")


def capture_spec(name: str, c: Capture) -> Plan:
    """capture_spec maps a capture to the engine's CaptureSpec."""
    head: Plan = {"name": name, "to_pool": c.to_pool}
    if c.json_path is not None:
        return {**head, "from": "json", "path": c.json_path}
    if c.header is not None:
        return {**head, "from": "header", "header": c.header}
    return {**head, "from": "regex", "pattern": c.regex, "group": c.regex_group()}


def check_specs(c: Check | None) -> list[Plan]:
    """check_specs maps a check to the engine's CheckSpecs, one per item, each with a readable name."""
    if c is None:
        return []
    out: list[Plan] = []
    if c.status:
        codes = ", ".join(str(s) for s in c.status)
        out.append({"name": f"status in [{codes}]", "type": "status", "in": list(c.status)})
    # Names show the text and pattern as written (no escaping: a regex reads as in the file).
    out += [{"name": f"body contains '{t}'", "type": "body_contains", "text": t} for t in c.body_contains]
    out += [{"name": f"body matches /{p}/", "type": "body_matches", "pattern": p} for p in c.body_matches]
    out += [
        {"name": f"{path} == {json.dumps(v)}", "type": "json_equals", "path": path, "value": v}
        for path, v in c.json_equals.items()
    ]
    out += [{"name": f"header {h} present", "type": "header_present", "header": h} for h in c.header_present]
    if c.latency_under is not None:
        out.append(
            {
                "name": f"latency < {format_seconds(c.latency_under)}",
                "type": "latency_under",
                "ms": c.latency_under * 1000,
            }
        )
    return out


def header_list(f: ScenarioModel, step: Step) -> list[list[str]]:
    """header_list is a step's headers as the plan carries them: the defaults', the
    request's own (winning, names compared without case), then a JSON content type."""
    merged: dict[str, tuple[str, str]] = {}
    for k, v in [*f.defaults.headers.items(), *step.request.headers.items()]:
        merged[k.lower()] = (k, v)
    if step.request.has_json() and "content-type" not in merged:
        merged["content-type"] = ("Content-Type", "application/json")
    return [[k, v] for k, v in merged.values()]


def _step(f: ScenarioModel, step: Step) -> Plan:
    r = step.request
    return {
        "tag": step.name or r.default_tag(f.default_path()),
        "request": {
            "method": r.method,
            "path": r.full_path(f.default_path()),
            "headers": header_list(f, step),
            "body": r.body_text(),
            "body_base64": None,
        },
        "timeout_s": r.timeout,
        "think_after": think_spec(step.think_time),
        "captures": [capture_spec(n, c) for n, c in step.capture.items()],
        "checks": check_specs(step.check),
    }
