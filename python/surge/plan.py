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
from dataclasses import asdict, dataclass, field
from typing import Literal, Union


@dataclass(frozen=True)
class TargetSpec:
    """TargetSpec: the absolute http(s) URL requests go to."""

    url: str
    insecure: bool = False


@dataclass(frozen=True)
class RequestSpec:
    """RequestSpec: the request each iteration sends; the body travels base64-encoded."""

    method: str = "GET"
    headers: list[tuple[str, str]] = field(default_factory=list)
    body_base64: str | None = None

    @classmethod
    def build(cls, method: str, headers: list[tuple[str, str]], body: bytes | None) -> RequestSpec:
        """build makes a RequestSpec from a raw body."""
        encoded = base64.b64encode(body).decode("ascii") if body else None
        return cls(method=method.upper(), headers=list(headers), body_base64=encoded)


@dataclass(frozen=True)
class ConstantVus:
    """ConstantVus: ``vus`` virtual users send back to back for ``duration_s``."""

    vus: int
    duration_s: float
    type: Literal["constant-vus"] = "constant-vus"


@dataclass(frozen=True)
class SharedIterations:
    """SharedIterations: ``vus`` virtual users share exactly ``iterations`` requests."""

    vus: int
    iterations: int
    max_duration_s: float = 600.0
    type: Literal["shared-iterations"] = "shared-iterations"


@dataclass(frozen=True)
class ConstantArrivalRate:
    """ConstantArrivalRate: ``rate`` requests start every second for ``duration_s``; at most
    ``max_in_flight`` outstanding; ``pre_allocated`` connections opened up front."""

    rate: float
    duration_s: float
    max_in_flight: int
    pre_allocated: int | None = None
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
    max_in_flight: int
    start_rate: float = 0.0
    pre_allocated: int | None = None
    type: Literal["ramping-arrival-rate"] = "ramping-arrival-rate"


Executor = Union[ConstantVus, SharedIterations, ConstantArrivalRate, RampingArrivalRate]
"""Executor is one of the engine's executors (k6's vocabulary)."""


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
    """Plan: everything the engine needs for one run."""

    target: TargetSpec
    executor: Executor
    request: RequestSpec = field(default_factory=RequestSpec)
    limits: Limits = field(default_factory=Limits)
    threads: int | None = None
    stripe: Stripe = field(default_factory=Stripe)
    interval_s: float = 1.0

    def to_json(self) -> str:
        """to_json serializes the plan in the engine's format (``None`` fields omitted)."""
        return json.dumps(_without_none(asdict(self)))

    def is_open_model(self) -> bool:
        """is_open_model tells whether requests follow an arrival-rate schedule."""
        return isinstance(self.executor, (ConstantArrivalRate, RampingArrivalRate))

    def duration_s(self) -> float:
        """duration_s is the longest the load window may last."""
        ex = self.executor
        if isinstance(ex, SharedIterations):
            return ex.max_duration_s
        if isinstance(ex, RampingArrivalRate):
            return sum(s.duration_s for s in ex.stages)
        return ex.duration_s


def _without_none(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_without_none(v) for v in value]
    return value
