"""The last check before anything runs: every compiled plan (setup, main, teardown) goes
through the engine's own validation (``surge.engine.validation.plan_errors``), and each error it
reports is placed back at the key of the file it came from, so that a file the engine would
refuse is refused as a whole, with FILE:LINE, before setup sends a single request."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from surge.engine.validation import plan_errors
from surge.scenario.base import Path
from surge.scenario.compile import completion_sources
from surge.scenario.flow import Step
from surge.scenario.models import Phase, ScenarioModel
from surge.scenario.problems import Problem

if TYPE_CHECKING:
    from surge.plan.compiled import CompiledRun

_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
# The engine's names of keys the file spells otherwise.
_KEYS = {
    "duration_s": "duration",
    "max_duration_s": "max_duration",
    "graceful_ramp_down_s": "graceful_ramp_down",
    "target_rate": "target",
    "start_time_s": "start_time",
    "think_after_iteration": "think_time",
}
_TOP = {
    "target": ("target",),
    "limits.timeout_s": ("defaults", "timeout"),
    "limits.grace_period_s": ("graceful_stop",),
    "limits.stream_idle_timeout_s": ("stream_idle_timeout",),
    "target.http2.streams": ("http2", "streams"),
    "percentiles": ("thresholds",),
}


def engine_problems(f: ScenarioModel, compiled: CompiledRun) -> list[Problem]:
    """engine_problems validates each plan of ``compiled`` (compiled from ``f``) in the
    engine and returns its errors as problems at the file's keys."""
    problems: list[Problem] = []
    for name, compiled_plan in compiled.plans():
        phases = plan_phases(f, name)
        plan = compiled_plan.to_dict()
        for field, message in plan_errors(plan):
            problems.append(Problem(file_path(f, phases, _parts(field), plan), message))
    return problems


def plan_phases(f: ScenarioModel, plan_name: str) -> list[tuple[Path, str, Phase]]:
    """plan_phases are the phases one plan's scenarios come from, in the plan's order."""
    if plan_name == "main":
        return [(p, n, s) for p, n, s in f.phases() if p[0] == "scenarios"]
    return [(p, n, s) for p, n, s in f.phases() if p == (plan_name,)]


def _parts(field: str) -> list[str | int]:
    return [int(index) if index else name for name, index in _PART.findall(field)]


def file_path(
    f: ScenarioModel, phases: list[tuple[Path, str, Phase]], parts: list[str | int], plan: Mapping[str, Any]
) -> Path:
    """file_path is the key of ``f`` an engine field of ``plan`` (split into ``parts``) comes
    from: the closest key the file has. What compile numbered (a scenario's variables, a step's
    headers) is read back from ``plan`` itself, never numbered again here."""
    for prefix, path in _TOP.items():
        if ".".join(str(p) for p in parts).startswith(prefix):
            return path
    if len(parts) < 2 or parts[0] != "scenarios" or not isinstance(parts[1], int) or parts[1] >= len(phases):
        return ()
    base, name, phase = phases[parts[1]]
    scenario = plan["scenarios"][parts[1]]
    rest = parts[2:]
    if not rest or rest[0] == "name":
        return base
    if rest[:2] == ["flow", "think_after_iteration"]:
        return (*base, "think_time")
    if rest[0] == "variables" and len(rest) > 1 and isinstance(rest[1], int):
        return _variable_path(f, base, name, phase, scenario, rest[1])
    if rest[:2] == ["flow", "sequences"] and len(rest) > 2 and isinstance(rest[2], int):
        return _sequence_path(f, base, phase, name, scenario, rest[2], rest[3:])
    return (*base, *(_KEYS.get(p, p) if isinstance(p, str) else p for p in rest))


def _variable_path(
    f: ScenarioModel, base: Path, name: str, phase: Phase, scenario: Mapping[str, Any], index: int
) -> Path:
    names = [v["name"] for v in scenario["variables"]]
    if index >= len(names):
        return base
    variable = names[index]
    if variable in phase.variables:
        return (*base, "variables", variable)
    if variable in f.variables:
        return ("variables", variable)
    sources = completion_sources(f, name, phase)  # a variable compile added for a completion step
    return (*base, *sources[variable][0]) if variable in sources else base


def _request_path(f: ScenarioModel, at: Path, step: Step, spec: Mapping[str, Any], rest: list[str | int]) -> Path:
    key, own = ("request", step.request.headers) if step.completion is None else ("completion", step.completion.headers)
    if not rest:
        return (*at, key)
    if rest[0] == "headers" and len(rest) > 1 and isinstance(rest[1], int):
        headers = spec["request"]["headers"]
        name = headers[rest[1]][0] if rest[1] < len(headers) else None
        if name in own:
            return (*at, key, "headers", name)
        if name in f.defaults.headers:
            return ("defaults", "headers", name)
        return (*at, key, "headers")
    if rest[0] in ("body", "body_base64"):
        if step.completion is not None:
            return (*at, key)
        return (*at, key, "json" if step.request.has_json() else "body")
    return (*at, key, rest[0])


def _sequence_path(
    f: ScenarioModel,
    base: Path,
    phase: Phase,
    name: str,
    scenario: Mapping[str, Any],
    index: int,
    rest: list[str | int],
) -> Path:
    sequences = phase.sequences(name, f.default_path())
    if index >= len(sequences):
        return base
    steps = sequences[index].steps
    first = steps[0][0]
    sequence_path = (*base, *first[:2]) if first[0] == "mix" else (*base, "flow")
    if not rest or rest[0] != "steps" or len(rest) < 2 or not isinstance(rest[1], int) or rest[1] >= len(steps):
        return (*sequence_path, *[p for p in rest[:1] if p == "weight"])
    step_path, step = steps[rest[1]]
    at = (*base, *step_path)
    detail = rest[2:]
    if not detail:
        return at
    if detail[0] == "request":
        spec = scenario["flow"]["sequences"][index]["steps"][rest[1]]
        return _request_path(f, at, step, spec, detail[1:])
    if detail[0] == "timeout_s":
        return (*at, "request" if step.completion is None else "completion", "timeout")
    if detail[0] == "think_after":
        return (*at, "think_time")
    if detail[0] == "checks":
        return (*at, "check")
    if detail[0] == "captures" and len(detail) > 1 and isinstance(detail[1], int):
        names = list(step.capture)
        return (*at, "capture", names[detail[1]]) if detail[1] < len(names) else (*at, "capture")
    return at
