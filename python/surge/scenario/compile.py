"""Compile: scenario models → the engine's Plan (``surge.plan.model``, docs/plan.md), the one
place where the file's keys are mapped to the engine's fields (``surge.scenario.file.compile_file``
checks a file, then compiles it here; each executor maps itself, ``to_plan``).

The measured scenarios compile to one plan; ``setup`` and ``teardown`` each to a plan of
their own with one scenario. Pools that setup fills reach the measured plan (and the
teardown plan) through ``CompiledRun.with_pools``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from surge.core.units import format_seconds
from surge.plan import model as plan
from surge.plan import scenario_parts as parts
from surge.plan.compiled import CompiledRun
from surge.plan.thresholds import goodput_bounds, percentiles
from surge.scenario.base import Path
from surge.scenario.captures import Capture
from surge.scenario.checks import Check
from surge.scenario.completion import CompletionSlots, FixedLength, Length, Prompts, UniformLength, tally_draws
from surge.scenario.flow import Step
from surge.scenario.models import Phase, ScenarioModel
from surge.scenario.request import Request
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
    # p(75) and the like: the engine adds them to every summary; latency bounds count goodput.
    main = replace(
        _plan(scaled, measured, env), percentiles=percentiles(thresholds), goodput=goodput_bounds(thresholds)
    )
    return CompiledRun(
        main=main,
        setup=_plan(scaled, [("setup", scaled.setup, 0.0)], env) if scaled.setup is not None else None,
        teardown=_plan(scaled, [("teardown", scaled.teardown, 0.0)], env) if scaled.teardown is not None else None,
        thresholds=thresholds,
    )


def _plan(f: ScenarioModel, phases: list[tuple[str, Phase, float]], env: Mapping[str, str] | None) -> plan.Plan:
    scenarios = [_scenario(f, name, phase, start, env) for name, phase, start in phases]
    # Pools a variable reads exist from the start (empty until setup's captures fill them
    # through CompiledRun.with_pools), so the engine can tell them from a misspelt name.
    read = {v.pool for s in scenarios for v in s.variables if isinstance(v, parts.PoolVariable)}
    return plan.Plan(
        target=plan.TargetSpec(
            url=f.target,
            insecure=f.insecure,
            http2=None if f.http2 is None else plan.Http2Spec(streams=f.http2.streams),
        ),
        scenarios=scenarios,
        pools={name: [] for name in sorted(read)},
        limits=plan.Limits(
            timeout_s=f.defaults.timeout, grace_period_s=f.graceful_stop, stream_idle_timeout_s=f.stream_idle_timeout
        ),
        send_slack_s=f.send_slack,  # None: the engine's default (docs/engine.md, "Pacing")
    )


def _scenario(
    f: ScenarioModel, name: str, phase: Phase, start: float, env: Mapping[str, str] | None
) -> plan.ScenarioSpec:
    named = completion_slots(f, name, phase)
    sequences = [
        (seq, [_step(f, s, named.get(p)) for p, s in seq.steps]) for seq in phase.sequences(name, f.default_path())
    ]
    visible = {**f.variables, **phase.variables}
    used = _used(visible, [step for _, steps in sequences for step in steps])
    sources = completion_sources(f, name, phase)
    added = [spec for n, (_, source) in sources.items() for spec in _source_spec(n, source, f)]
    return plan.ScenarioSpec(
        name=name,
        start_time_s=start,
        executor=phase.executor.to_plan(),
        variables=[variable_spec(n, visible[n], f, env) for n in used] + added,
        flow=plan.FlowSpec(
            sequences=[plan.SequenceSpec(name=seq.name, weight=seq.weight, steps=steps) for seq, steps in sequences],
            think_after_iteration=think_spec(phase.think_time),
        ),
    )


def _used(visible: Mapping[str, Any], steps: list[plan.StepSpec]) -> list[str]:
    """_used are the visible variables the compiled steps' templates use, in the order of ``visible``."""
    used = {slot.name for spec in steps for text in _templates(spec) for slot in _slots(text)}
    return [n for n in visible if n in used]


def _slots(text: str) -> list[Any]:
    try:
        return slots(text)
    except TemplateError:
        return []


def _templates(step: plan.StepSpec) -> list[str]:
    r = step.request
    return [r.path or "", *(v for _, v in r.headers), r.body or ""]


def completion_slots(f: ScenarioModel, name: str, phase: Phase) -> dict[Path, CompletionSlots]:
    """completion_slots names the variables of each completion step of ``phase`` (by the
    step's path in the phase), in step order: ``_completion1_prompts``, ``_completion1_max_tokens``
    (none for a fixed ``max_tokens``), ... each followed by ``_`` as often as a variable or a
    capture of the phase already has the name."""
    sequences = phase.sequences(name, f.default_path())
    taken = {*f.variables, *phase.variables, *(c for seq in sequences for _, s in seq.steps for c in s.capture)}

    def free(wanted: str) -> str:
        while wanted in taken:
            wanted += "_"
        taken.add(wanted)
        return wanted

    out: dict[Path, CompletionSlots] = {}
    for seq in sequences:
        for path, step in seq.steps:
            if step.completion is not None:
                n = len(out) + 1
                fixed = isinstance(step.completion.max_tokens, FixedLength)
                out[path] = CompletionSlots(
                    prompts=free(f"_completion{n}_prompts"),
                    max_tokens=None if fixed else free(f"_completion{n}_max_tokens"),
                )
    return out


def completion_sources(f: ScenarioModel, name: str, phase: Phase) -> dict[str, tuple[Path, Prompts | Length]]:
    """completion_sources maps each variable ``completion_slots`` names to where it comes from:
    the key of the file (from the phase: ``flow[0].completion.prompts``) and the model it is
    drawn from (the step's Prompts, or its ``max_tokens``)."""
    steps = {p: s.completion for seq in phase.sequences(name, f.default_path()) for p, s in seq.steps if s.completion}
    out: dict[str, tuple[Path, Prompts | Length]] = {}
    for path, named in completion_slots(f, name, phase).items():
        completion = steps[path]
        out[named.prompts] = ((*path, "completion", "prompts"), completion.prompts)
        if named.max_tokens is not None:
            out[named.max_tokens] = ((*path, "completion", "max_tokens"), completion.max_tokens)
    return out


def _source_spec(name: str, source: Prompts | Length, f: ScenarioModel) -> list[parts.VariableSpec]:
    """_source_spec maps a completion's variable to the engine's: the prompts to a one-column
    ``rows`` table; a uniform ``max_tokens`` to ``uniform``, another to a weighted ``choice``
    of its draws (``tally_draws``)."""
    if isinstance(source, Prompts):
        table = source.table(f.base_dir())
        return [parts.RowsVariable(name=name, columns=list(table.columns), cells=table.cells, pick=source.pick)]
    if isinstance(source, FixedLength):
        return []
    if isinstance(source, UniformLength):
        return [parts.UniformVariable(name=name, min=source.min, max=source.max)]
    draws = sorted(tally_draws(source).items())
    return [parts.ChoiceVariable(name=name, values=[str(v) for v, _ in draws], weights=[float(c) for _, c in draws])]


def think_spec(think: Any) -> parts.ThinkSpec | None:
    """think_spec maps a think time to the engine's ThinkTime (None: no pause)."""
    if think is None:
        return None
    if isinstance(think, FixedThink):
        return parts.ThinkFixed(s=think.duration)
    if isinstance(think, UniformThink):
        return parts.ThinkUniform(min_s=think.min, max_s=think.max)
    if isinstance(think, ExponentialThink):
        return parts.ThinkExponential(mean_s=think.mean)
    raise TypeError(f"not a think time: {think!r}")


def variable_spec(name: str, var: AnyVariable, f: ScenarioModel, env: Mapping[str, str] | None) -> parts.VariableSpec:
    """variable_spec maps a variable to the engine's VariableSpec (CSV rows read, env resolved)."""
    if isinstance(var, Counter):
        return parts.CounterVariable(name=name, start=var.start, step=var.step)
    if isinstance(var, Uniform):
        return parts.UniformVariable(name=name, min=var.min, max=var.max)
    if isinstance(var, Zipf):
        return parts.ZipfVariable(name=name, n=var.n, s=var.s)
    if isinstance(var, Choice):
        return parts.ChoiceVariable(name=name, values=list(var.values), weights=var.weights)
    if isinstance(var, Uuid):
        return parts.UuidVariable(name=name)
    if isinstance(var, RandomString):
        return parts.RandomStringVariable(name=name, length=var.length, alphabet=var.alphabet)
    if isinstance(var, Csv):
        table = var.table(f.base_dir())
        return parts.RowsVariable(name=name, columns=list(table.columns), cells=table.cells, pick=var.pick)
    if isinstance(var, Pool):
        return parts.PoolVariable(name=name, pool=var.pool, pick=var.pick, s=var.s)
    if isinstance(var, Env):
        return parts.ConstantVariable(name=name, value=var.resolve(env) or "")
    if isinstance(var, Constant):
        return parts.ConstantVariable(name=name, value=var.value)
    if isinstance(var, Decimal):
        return parts.DecimalVariable(name=name, min=var.min, max=var.max, decimals=var.decimals)
    if isinstance(var, Vu):
        return parts.VuVariable(name=name)
    if isinstance(var, Timestamp):
        return parts.TimestampVariable(name=name, unit=var.unit)
    raise TypeError(f"not a variable: {var!r}")


def capture_spec(name: str, c: Capture) -> parts.CaptureSpec:
    """capture_spec maps a capture to the engine's CaptureSpec."""
    if c.json_path is not None:
        return parts.JsonCapture(name=name, to_pool=c.to_pool, path=c.json_path)
    if c.header is not None:
        return parts.HeaderCapture(name=name, to_pool=c.to_pool, header=c.header)
    return parts.RegexCapture(name=name, to_pool=c.to_pool, pattern=c.regex or "", group=c.regex_group())


def check_specs(c: Check | None) -> list[parts.CheckSpec]:
    """check_specs maps a check to the engine's CheckSpecs, one per item, each with a readable name."""
    if c is None:
        return []
    out: list[parts.CheckSpec] = []
    if c.status:
        codes = ", ".join(str(s) for s in c.status)
        out.append(parts.StatusCheck(name=f"status in [{codes}]", codes=list(c.status)))
    # Names show the text and pattern as written (no escaping: a regex reads as in the file).
    out += [parts.BodyContainsCheck(name=f"body contains '{t}'", text=t) for t in c.body_contains]
    out += [parts.BodyMatchesCheck(name=f"body matches /{p}/", pattern=p) for p in c.body_matches]
    out += [
        parts.JsonEqualsCheck(name=f"{path} == {json.dumps(v)}", path=path, value=v)
        for path, v in c.json_equals.items()
    ]
    out += [parts.HeaderPresentCheck(name=f"header {h} present", header=h) for h in c.header_present]
    if c.latency_under is not None:
        out.append(
            parts.LatencyUnderCheck(name=f"latency < {format_seconds(c.latency_under)}", ms=c.latency_under * 1000)
        )
    return out


def header_list(f: ScenarioModel, request: Request) -> list[tuple[str, str]]:
    """header_list is a request's headers as the plan carries them: the defaults', the
    request's own (winning, names compared without case), then a JSON content type."""
    merged: dict[str, tuple[str, str]] = {}
    for k, v in [*f.defaults.headers.items(), *request.headers.items()]:
        merged[k.lower()] = (k, v)
    if request.has_json() and "content-type" not in merged:
        merged["content-type"] = ("Content-Type", "application/json")
    return list(merged.values())


def _step(f: ScenarioModel, step: Step, slots: CompletionSlots | None) -> plan.StepSpec:
    r = step.request if slots is None else step.sent(slots)
    return plan.StepSpec(
        tag=step.name or step.default_tag(f.default_path()),
        request=plan.RequestSpec(
            method=r.method, path=r.full_path(f.default_path()), headers=header_list(f, r), body=r.body_text()
        ),
        timeout_s=r.timeout,
        think_after=think_spec(step.think_time),
        captures=[capture_spec(n, c) for n, c in step.capture.items()],
        checks=check_specs(step.check),
    )
