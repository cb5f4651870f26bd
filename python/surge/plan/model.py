"""The Plan: what the engine runs, built from CLI flags or compiled from scenarios.

These are plain, frozen dataclasses that mirror ``surge-engine``'s ``Plan``
(``crates/surge-engine/src/spec/``, docs/plan.md) field for field: every field its serde
structs accept, under the same JSON names, with the same defaults (the think times, variables,
captures and checks are in ``surge.plan.scenario_parts``). ``Plan.to_dict()`` is the engine's
JSON (``surge.plan.json_form``: fields in the engine's order, ``None`` written as null, which
the engine reads as absent; the few fields marked ``OMITTED_AT_DEFAULT`` are left out at their
default) and ``Plan.from_dict`` reads it back. They hold no validation of their own on purpose: the engine
validates every field and names it in its errors (``surge.PlanError``); user-facing
validation (scenario files, with file and line) happens before a Plan is built, and keeping
this layer free of pydantic keeps ``surge run`` quick to start.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from surge.plan.json_form import OMITTED_AT_DEFAULT, from_json_object, from_tagged, to_json_value

if TYPE_CHECKING:
    from surge.plan.scenario_parts import CaptureSpec, CheckSpec, ThinkSpec, VariableSpec

DEFAULT_SEND_SLACK_S = 0.001
"""DEFAULT_SEND_SLACK_S is the engine's default send slack in seconds (docs/engine.md, "Pacing"):
the plan layer sits below the engine's, so it keeps a copy that a unit test holds equal to
``surge.engine.execute.DEFAULT_SEND_SLACK_S``."""


@dataclass(frozen=True)
class Http2Spec:
    """Http2Spec: HTTP/2 to the target, ``streams`` concurrent requests per connection."""

    streams: int


@dataclass(frozen=True)
class TargetSpec:
    """TargetSpec: the absolute http(s) URL requests go to; ``insecure`` skips TLS verification;
    ``http2`` speaks HTTP/2 (None: HTTP/1.1, a connection per VU)."""

    url: str
    insecure: bool = False
    http2: Http2Spec | None = field(default=None, metadata=OMITTED_AT_DEFAULT)


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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RequestSpec:
        """from_dict reads a RequestSpec from the engine's JSON (headers as pairs)."""
        return from_json_object(cls, data, {"headers": lambda hs: [(str(k), str(v)) for k, v in hs]})


# Executors (k6's vocabulary; rates are iterations per second).


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
    """RampingVus: the number of VUs follows linear stages from ``start_vus``; a VU removed by a
    ramp-down may finish its iteration within ``graceful_ramp_down_s``."""

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
    opened up front (None: the engine's default, 1 ms of arrivals)."""

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
"""Executor is one of the engine's executors (k6's vocabulary), chosen by ``type``."""

EXECUTORS: tuple[type[Executor], ...] = (
    ConstantVus,
    RampingVus,
    PerVuIterations,
    SharedIterations,
    ConstantArrivalRate,
    RampingArrivalRate,
)
"""EXECUTORS are the executor classes, in the order docs/plan.md lists them."""

OPEN_MODEL = (ConstantArrivalRate, RampingArrivalRate)
"""OPEN_MODEL are the executors that start iterations on a schedule."""

OPEN_MODEL_TYPES = ("constant-arrival-rate", "ramping-arrival-rate")
"""OPEN_MODEL_TYPES are the ``type`` names of the OPEN_MODEL executors in a plan's JSON."""


def executor_from_dict(data: Mapping[str, Any]) -> Executor:
    """executor_from_dict reads an executor from the engine's JSON (by its ``type``)."""
    if data.get("type") == "ramping-vus":
        return from_json_object(RampingVus, data, {"stages": lambda ss: [from_json_object(VuStage, s) for s in ss]})
    if data.get("type") == "ramping-arrival-rate":
        return from_json_object(
            RampingArrivalRate, data, {"stages": lambda ss: [from_json_object(RateStage, s) for s in ss]}
        )
    executor: Executor = from_tagged(EXECUTORS, "type", data, "executor")
    return executor


def open_model_send_slack_s(executor_types: Iterable[str], send_slack_s: float | None) -> float | None:
    """open_model_send_slack_s is the send slack a plan's open-model scenarios run with (the
    plan's ``send_slack_s``, else the engine's default), None when none of ``executor_types``
    is open-model (the slack then changes nothing)."""
    if not any(t in OPEN_MODEL_TYPES for t in executor_types):
        return None
    return DEFAULT_SEND_SLACK_S if send_slack_s is None else send_slack_s


# The flow: what each iteration does.


def _parts() -> ModuleType:
    """_parts is ``surge.plan.scenario_parts``, imported when a plan with them is read back."""
    # Function-local: a URL run's plan has no think times, variables, captures or checks, so its
    # start-up does not build their two dozen classes (docs/engine.md, start-up).
    from surge.plan import scenario_parts

    return scenario_parts


@dataclass(frozen=True, kw_only=True)
class StepSpec:
    """StepSpec: one request of a sequence: its metrics ``tag`` (None: METHOD /path), timeout
    (None: the plan's), pause after, captures and checks."""

    tag: str | None = None
    request: RequestSpec = field(default_factory=RequestSpec)
    timeout_s: float | None = None
    think_after: ThinkSpec | None = None
    captures: list[CaptureSpec] = field(default_factory=list)
    checks: list[CheckSpec] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StepSpec:
        """from_dict reads a step from the engine's JSON."""
        return from_json_object(
            cls,
            data,
            {
                "request": RequestSpec.from_dict,
                "think_after": lambda d: from_tagged(_parts().THINK_TIMES, "type", d, "think time"),
                "captures": lambda cs: [from_tagged(_parts().CAPTURES, "from", c, "capture") for c in cs],
                "checks": lambda cs: [from_tagged(_parts().CHECKS, "type", c, "check") for c in cs],
            },
        )


@dataclass(frozen=True, kw_only=True)
class SequenceSpec:
    """SequenceSpec: steps run in order; an iteration picks a sequence by ``weight``."""

    name: str | None = None
    weight: float = 1.0
    steps: list[StepSpec]


@dataclass(frozen=True)
class FlowSpec:
    """FlowSpec: what each iteration of a scenario does, and the pause after it."""

    sequences: list[SequenceSpec]
    think_after_iteration: ThinkSpec | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FlowSpec:
        """from_dict reads a flow from the engine's JSON."""

        def sequence(d: Mapping[str, Any]) -> SequenceSpec:
            return from_json_object(SequenceSpec, d, {"steps": lambda ss: [StepSpec.from_dict(s) for s in ss]})

        return from_json_object(
            cls,
            data,
            {
                "sequences": lambda ss: [sequence(s) for s in ss],
                "think_after_iteration": lambda d: from_tagged(_parts().THINK_TIMES, "type", d, "think time"),
            },
        )


@dataclass(frozen=True, kw_only=True)
class ScenarioSpec:
    """ScenarioSpec: a named executor and flow, starting ``start_time_s`` into the run, with
    the variables its templates use."""

    name: str
    start_time_s: float = 0.0
    executor: Executor
    variables: list[VariableSpec] = field(default_factory=list)
    flow: FlowSpec

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScenarioSpec:
        """from_dict reads a scenario from the engine's JSON."""
        return from_json_object(
            cls,
            data,
            {
                "executor": executor_from_dict,
                "variables": lambda vs: [from_tagged(_parts().VARIABLES, "type", v, "variable") for v in vs],
                "flow": FlowSpec.from_dict,
            },
        )


@dataclass(frozen=True)
class Limits:
    """Limits: per-request timeout, the grace period for requests in flight at the end, and the
    longest gap between an event stream's events after its first (None: no such bound)."""

    timeout_s: float = 30.0
    grace_period_s: float = 5.0
    stream_idle_timeout_s: float | None = field(default=None, metadata=OMITTED_AT_DEFAULT)


@dataclass(frozen=True)
class Stripe:
    """Stripe: this engine's share of the run (every ``stride``-th request from ``offset`` of
    an arrival schedule; of VUs and shared iterations, the part of generator ``offset`` of
    ``stride``): a distributed run's generator ``offset`` of ``stride``."""

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
    interval_totals: bool = field(default=False, metadata=OMITTED_AT_DEFAULT)
    send_slack_s: float | None = field(default=None, metadata=OMITTED_AT_DEFAULT)
    """send_slack_s is how late an open-model send may go out to be batched with others;
    None leaves it to the engine (DEFAULT_SEND_SLACK_S)."""
    percentiles: list[float] = field(default_factory=list, metadata=OMITTED_AT_DEFAULT)
    start_at_unix_s: float | None = field(default=None, metadata=OMITTED_AT_DEFAULT)
    """start_at_unix_s is the wall-clock instant the load starts at (a distributed run's
    generators start together); None starts it as soon as the plan is prepared."""
    goodput: dict[str, float] | None = field(default=None, metadata=OMITTED_AT_DEFAULT)
    """goodput is the per-request bounds (``latency_s``, ``ttft_s``, ``tpot_s``) a successful
    response meets to count as good (``requests.good``); None: goodput not measured. Set from
    the SLO's or the thresholds' latency conditions (``goodput_bounds``)."""

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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
        """from_dict reads a plan from the engine's JSON (``Plan.from_dict(p.to_dict()) == p``);
        ValueError for a field the engine does not know."""
        return from_json_object(
            cls,
            data,
            {
                "target": lambda d: from_json_object(
                    TargetSpec, d, {"http2": lambda h: from_json_object(Http2Spec, h)}
                ),
                "scenarios": lambda ss: [ScenarioSpec.from_dict(s) for s in ss],
                "limits": lambda d: from_json_object(Limits, d),
                "stripe": lambda d: from_json_object(Stripe, d),
            },
        )

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the plan in the engine's JSON form (docs/plan.md): ``None`` as null, the
        ``OMITTED_AT_DEFAULT`` fields left out at their default."""
        document: dict[str, Any] = to_json_value(self)
        return document

    def to_json(self) -> str:
        """to_json serializes the plan in the engine's format (``to_dict`` as JSON text)."""
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

    def planned_s(self) -> float:
        """planned_s is how long the plan is meant to take (0 when its length is a count of
        iterations), for a progress bar."""
        return max((s.start_time_s + executor_planned_s(s.executor) for s in self.scenarios), default=0.0)


def executor_planned_s(ex: Executor) -> float:
    """executor_planned_s is how long ``ex`` starts iterations: its stages' or its duration,
    0 for a count of iterations."""
    if isinstance(ex, (RampingArrivalRate, RampingVus)):
        return float(sum(s.duration_s for s in ex.stages))
    if isinstance(ex, (SharedIterations, PerVuIterations)):
        return 0.0
    return float(ex.duration_s)
