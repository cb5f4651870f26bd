"""Heading: what a summary's first line says about a run's plan, and whether the plan is the
open model (which adds the schedule line and the service-time row). A record keeps it
(``meta.plan``), so ``surge show`` prints a summary as it was printed after the run. Light on
purpose: computed before the run, it loads neither Rich nor the result models."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from surge.core.redact import redact_text
from surge.plan.model import (
    OPEN_MODEL_TYPES,
    ConstantArrivalRate,
    ConstantVus,
    Executor,
    PerVuIterations,
    Plan,
    RampingArrivalRate,
    RampingVus,
    SharedIterations,
    open_model_send_slack_s,
)


@dataclass(frozen=True)
class Heading:
    """Heading: a plan's one-line ``description`` (secrets masked), whether it is the
    ``open_model``, and each scenario's load ``schedule`` (``schedule``; empty when unknown)."""

    description: str
    open_model: bool
    scenarios: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the heading as the record's ``meta.plan`` (``scenarios`` only when known)."""
        data: dict[str, Any] = {"description": self.description, "open_model": self.open_model}
        if self.scenarios:
            data["scenarios"] = list(self.scenarios)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Heading:
        """from_dict reads a record's ``meta.plan``."""
        return cls(
            str(data.get("description", "")), bool(data.get("open_model", False)), tuple(data.get("scenarios") or ())
        )


PlanLike = Plan | Mapping[str, Any] | Heading
"""PlanLike is what a summary is told about the plan: a URL run's Plan, a scenario file's
Heading (``scenario_heading``), a record's Heading, or an engine plan's JSON (a mapping)."""


def describe_plan(plan: Plan) -> str:
    """describe_plan says in one line what the run does."""
    ex = plan.executor
    kind = ex.type
    if (
        len(plan.scenarios) > 1
        or len(plan.scenarios[0].flow.sequences) > 1
        or len(plan.scenarios[0].flow.sequences[0].steps) > 1
    ):
        names = ", ".join(s.name for s in plan.scenarios)
        return f"{plan.target.url} · {len(plan.scenarios)} scenario(s): {names}"
    if isinstance(ex, ConstantVus):
        what = f"{ex.vus} VUs for {ex.duration_s:g}s"
    elif isinstance(ex, SharedIterations):
        what = f"{ex.iterations:,} requests over {ex.vus} VUs"
    elif isinstance(ex, PerVuIterations):
        what = f"{ex.iterations:,} iterations for each of {ex.vus} VUs"
    elif isinstance(ex, RampingVus):
        what = f"{len(ex.stages)} VU stages (peak {max([ex.start_vus, *(s.target for s in ex.stages)]):,} VUs)"
    elif isinstance(ex, ConstantArrivalRate):
        what = f"{ex.rate:,.6g} req/s for {ex.duration_s:g}s (max {ex.max_vus:,} in flight)"
    else:
        what = f"{len(ex.stages)} rate stages (max {ex.max_vus:,} in flight)"
    return f"{plan.request.method} {plan.target.url} · {kind}: {what}"


def describe(plan: PlanLike) -> str:
    """describe is the summary's one-line description of ``plan``, ending with the send slack
    when a scenario is open-model (``send slack 1 ms``)."""
    if isinstance(plan, Heading):
        return plan.description
    if isinstance(plan, Plan):
        return describe_plan(plan) + _send_slack(plan.open_model_send_slack_s())
    names = ", ".join(f"{s['name']} ({s['executor']['type']})" for s in plan["scenarios"])
    slack = open_model_send_slack_s((s["executor"]["type"] for s in plan["scenarios"]), plan.get("send_slack_s"))
    return f"{plan['target']['url']} · {len(plan['scenarios'])} scenario(s): {names}{_send_slack(slack)}"


def describe_scenarios(plan: Plan) -> str:
    """describe_scenarios is a scenario file's one-line description: the target, each scenario
    with its executor, and the send slack when a scenario is open-model."""
    names = ", ".join(f"{s.name} ({s.executor.type})" for s in plan.scenarios)
    slack = _send_slack(plan.open_model_send_slack_s())
    return f"{plan.target.url} · {len(plan.scenarios)} scenario(s): {names}{slack}"


def scenario_heading(plan: Plan) -> Heading:
    """scenario_heading is the Heading of a scenario file's main ``plan`` (every scenario named,
    however few steps it has), secrets masked, with its load schedule."""
    return Heading(redact_text(describe_scenarios(plan)), plan.is_open_model(), schedule(plan))


def _send_slack(seconds: float | None) -> str:
    """_send_slack is the heading's ``· send slack 1 ms`` (µs below a millisecond), "" for None."""
    if seconds is None:
        return ""
    return f" · send slack {seconds * 1e6:.4g} µs" if seconds < 1e-3 else f" · send slack {seconds * 1e3:.4g} ms"


def is_open_model(plan: PlanLike) -> bool:
    """is_open_model tells whether every scenario of ``plan`` follows an arrival-rate schedule."""
    if isinstance(plan, Heading):
        return plan.open_model
    if isinstance(plan, Plan):
        return plan.is_open_model()
    return all(s["executor"]["type"] in OPEN_MODEL_TYPES for s in plan["scenarios"])


def schedule(plan: PlanLike) -> tuple[dict[str, Any], ...]:
    """schedule is each scenario's load schedule as the record keeps it (``meta.plan.scenarios``):
    ``name``, ``executor`` (its type), ``start_s``, and for a staged executor (ramping-vus,
    ramping-arrival-rate) ``start`` (VUs or rate) and ``stages`` (``duration_s``, ``target``)."""
    if isinstance(plan, Heading):
        return plan.scenarios
    specs: list[tuple[str, float, str, Any, list[tuple[Any, Any]]]]
    if isinstance(plan, Plan):
        specs = [(s.name, s.start_time_s, s.executor.type, *_stages(s.executor)) for s in plan.scenarios]
    else:
        specs = [
            (
                s["name"],
                s.get("start_time_s") or 0.0,
                s["executor"]["type"],
                s["executor"].get("start_vus", s["executor"].get("start_rate")),
                [
                    (st["duration_s"], st.get("target", st.get("target_rate")))
                    for st in s["executor"].get("stages") or []
                ],
            )
            for s in plan["scenarios"]
        ]
    found = []
    for name, start_s, kind, start, stages in specs:
        entry: dict[str, Any] = {"name": str(name), "executor": str(kind), "start_s": float(start_s)}
        if stages:
            entry["start"] = start or 0
            entry["stages"] = [{"duration_s": d, "target": target} for d, target in stages]
        found.append(entry)
    return tuple(found)


def _stages(ex: Executor) -> tuple[float | None, list[tuple[float, float]]]:
    """_stages is a staged executor's start (VUs or rate) and its (duration_s, target) stages;
    (None, []) for an executor without stages."""
    if isinstance(ex, RampingVus):
        return ex.start_vus, [(st.duration_s, st.target) for st in ex.stages]
    if isinstance(ex, RampingArrivalRate):
        return ex.start_rate, [(st.duration_s, st.target_rate) for st in ex.stages]
    return None, []


def heading(plan: PlanLike) -> Heading:
    """heading is ``plan``'s Heading, secrets masked, with its load schedule."""
    return Heading(redact_text(describe(plan)), is_open_model(plan), schedule(plan))
