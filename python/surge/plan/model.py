"""The Plan: what the engine runs, built from CLI flags or compiled from scenarios.

These are plain, frozen dataclasses that mirror ``surge-engine``'s ``Plan`` field for field;
``Plan.to_json()`` is the only thing handed to the engine, which validates every field and
names it in its errors (``surge.PlanError``). They hold no validation of their own on
purpose: user-facing validation (scenario files, with file and line) happens before a Plan
is built, and keeping this layer free of pydantic keeps ``surge run`` quick to start.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

DEFAULT_SEND_SLACK_S = 0.001
"""DEFAULT_SEND_SLACK_S is the engine's default send slack in seconds (docs/engine.md, "Pacing"):
the plan layer sits below the engine's, so it keeps a copy that a unit test holds equal to
``surge.engine.execute.DEFAULT_SEND_SLACK_S``."""


@dataclass(frozen=True)
class TargetSpec:
    """TargetSpec: the absolute http(s) URL requests go to."""

    url: str
    insecure: bool = False


@dataclass(frozen=True)
class RequestSpec:
    """RequestSpec: what a step sends. ``path`` (default: the target URL's), header values
    and ``body`` may hold ``{{name}}`` templates; a binary body travels base64-encoded."""

    method: str = "GET"
    path: str | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: str | None = None
    body_base64: str | None = None

    @classmethod
    def build(cls, method: str, headers: list[tuple[str, str]], body: bytes | None) -> RequestSpec:
        """build makes a RequestSpec from a raw body."""
        encoded = base64.b64encode(body).decode("ascii") if body else None
        return cls(method=method.upper(), headers=list(headers), body_base64=encoded)


@dataclass(frozen=True)
class ConstantVus:
    """ConstantVus: ``vus`` virtual users iterate back to back for ``duration_s``."""

    vus: int
    duration_s: float
    type: Literal["constant-vus"] = "constant-vus"


@dataclass(frozen=True)
class VuStage:
    """VuStage: over ``duration_s`` the number of VUs moves linearly to ``target``."""

    duration_s: float
    target: int


@dataclass(frozen=True)
class RampingVus:
    """RampingVus: the number of VUs follows linear stages from ``start_vus``."""

    stages: list[VuStage]
    start_vus: int = 0
    graceful_ramp_down_s: float = 30.0
    type: Literal["ramping-vus"] = "ramping-vus"


@dataclass(frozen=True)
class PerVuIterations:
    """PerVuIterations: each of ``vus`` virtual users runs exactly ``iterations`` iterations."""

    vus: int
    iterations: int
    max_duration_s: float = 600.0
    type: Literal["per-vu-iterations"] = "per-vu-iterations"


@dataclass(frozen=True)
class SharedIterations:
    """SharedIterations: ``vus`` virtual users share exactly ``iterations`` iterations."""

    vus: int
    iterations: int
    max_duration_s: float = 600.0
    type: Literal["shared-iterations"] = "shared-iterations"


@dataclass(frozen=True)
class ConstantArrivalRate:
    """ConstantArrivalRate: ``rate`` iterations start every second for ``duration_s``; at
    most ``max_vus`` in progress (more are dropped); ``pre_allocated_vus`` connections
    opened up front."""

    rate: float
    duration_s: float
    max_vus: int
    pre_allocated_vus: int | None = None
    type: Literal["constant-arrival-rate"] = "constant-arrival-rate"


@dataclass(frozen=True)
class RateStage:
    """RateStage: over ``duration_s`` the rate moves linearly to ``target_rate``."""

    duration_s: float
    target_rate: float


@dataclass(frozen=True)
class RampingArrivalRate:
    """RampingArrivalRate: piecewise-linear arrival rate from ``start_rate``."""

    stages: list[RateStage]
    max_vus: int
    start_rate: float = 0.0
    pre_allocated_vus: int | None = None
    type: Literal["ramping-arrival-rate"] = "ramping-arrival-rate"


Executor = ConstantVus | RampingVus | PerVuIterations | SharedIterations | ConstantArrivalRate | RampingArrivalRate
"""Executor is one of the engine's executors (k6's vocabulary)."""

OPEN_MODEL = (ConstantArrivalRate, RampingArrivalRate)
"""OPEN_MODEL are the executors that start iterations on a schedule."""

OPEN_MODEL_TYPES = ("constant-arrival-rate", "ramping-arrival-rate")
"""OPEN_MODEL_TYPES are the ``type`` names of the OPEN_MODEL executors in a plan's JSON."""


def open_model_send_slack_s(executor_types: Iterable[str], send_slack_s: float | None) -> float | None:
    """open_model_send_slack_s is the send slack a plan's open-model scenarios run with (the
    plan's ``send_slack_s``, else the engine's default), None when none of ``executor_types``
    is open-model (the slack then changes nothing)."""
    if not any(t in OPEN_MODEL_TYPES for t in executor_types):
        return None
    return DEFAULT_SEND_SLACK_S if send_slack_s is None else send_slack_s


@dataclass(frozen=True)
class StepSpec:
    """StepSpec: one request of a sequence, its metrics tag, timeout and pause after."""

    request: RequestSpec = field(default_factory=RequestSpec)
    tag: str | None = None
    timeout_s: float | None = None
    think_after: dict[str, Any] | None = None


@dataclass(frozen=True)
class SequenceSpec:
    """SequenceSpec: steps run in order; an iteration picks a sequence by ``weight``."""

    steps: list[StepSpec]
    weight: float = 1.0
    name: str | None = None


@dataclass(frozen=True)
class FlowSpec:
    """FlowSpec: what each iteration of a scenario does."""

    sequences: list[SequenceSpec]
    think_after_iteration: dict[str, Any] | None = None


@dataclass(frozen=True)
class ScenarioSpec:
    """ScenarioSpec: a named executor and flow, starting ``start_time_s`` into the run."""

    name: str
    executor: Executor
    flow: FlowSpec
    start_time_s: float = 0.0


@dataclass(frozen=True)
class Limits:
    """Limits: per-request timeout and the grace period for requests in flight at the end."""

    timeout_s: float = 30.0
    grace_period_s: float = 5.0


@dataclass(frozen=True)
class Stripe:
    """Stripe: this engine's share of the schedule (every ``stride``-th request from ``offset``)."""

    offset: int = 0
    stride: int = 1


@dataclass(frozen=True)
class Plan:
    """Plan: everything the engine needs for one run (see docs/plan.md)."""

    target: TargetSpec
    scenarios: list[ScenarioSpec]
    pools: dict[str, list[str]] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    threads: int | None = None
    stripe: Stripe = field(default_factory=Stripe)
    interval_s: float = 1.0
    send_slack_s: float | None = None
    """send_slack_s is how late an open-model send may go out to be batched with others;
    None leaves it to the engine (DEFAULT_SEND_SLACK_S)."""

    @classmethod
    def single(
        cls,
        target: TargetSpec,
        request: RequestSpec,
        executor: Executor,
        *,
        limits: Limits | None = None,
        threads: int | None = None,
        send_slack_s: float | None = None,
    ) -> Plan:
        """single is a plan of one scenario sending one request per iteration (``surge run URL``)."""
        flow = FlowSpec(sequences=[SequenceSpec(steps=[StepSpec(request=request)])])
        return cls(
            target=target,
            scenarios=[ScenarioSpec(name="default", executor=executor, flow=flow)],
            limits=limits or Limits(),
            threads=threads,
            send_slack_s=send_slack_s,
        )

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the plan in the engine's JSON form (``None`` fields omitted), as a
        CompiledRun holds it."""
        document: dict[str, Any] = _without_none(asdict(self))  # type: ignore[assignment]
        return document

    def to_json(self) -> str:
        """to_json serializes the plan in the engine's format (``None`` fields omitted)."""
        return json.dumps(self.to_dict())

    @property
    def executor(self) -> Executor:
        """executor is the first scenario's executor (the only one for ``surge run URL``)."""
        return self.scenarios[0].executor

    @property
    def request(self) -> RequestSpec:
        """request is the first scenario's first request."""
        return self.scenarios[0].flow.sequences[0].steps[0].request

    def is_open_model(self) -> bool:
        """is_open_model tells whether every scenario follows an arrival-rate schedule."""
        return all(isinstance(s.executor, OPEN_MODEL) for s in self.scenarios)

    def open_model_send_slack_s(self) -> float | None:
        """open_model_send_slack_s is the send slack the plan's open-model scenarios run with,
        None when it has none (``open_model_send_slack_s``)."""
        return open_model_send_slack_s((s.executor.type for s in self.scenarios), self.send_slack_s)

    def duration_s(self) -> float:
        """duration_s is when the last scenario stops starting iterations."""
        return max(s.start_time_s + _executor_duration_s(s.executor) for s in self.scenarios)


def _executor_duration_s(ex: Executor) -> float:
    if isinstance(ex, (SharedIterations, PerVuIterations)):
        return ex.max_duration_s
    if isinstance(ex, (RampingArrivalRate, RampingVus)):
        return sum(s.duration_s for s in ex.stages)
    return ex.duration_s


def _without_none(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_without_none(v) for v in value]
    return value
