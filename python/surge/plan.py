"""The Plan: what the engine runs, built from CLI flags or (later) scenario files.

These pydantic models mirror ``surge-engine``'s ``Plan`` field for field; ``Plan.to_json()``
is the only thing handed to the engine, which validates it again on its side.
"""

from __future__ import annotations

import base64
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TargetSpec(_Strict):
    """TargetSpec: the absolute http(s) URL requests go to."""

    url: str
    insecure: bool = False


class RequestSpec(_Strict):
    """RequestSpec: the request each iteration sends; the body travels base64-encoded."""

    method: str = "GET"
    headers: list[tuple[str, str]] = Field(default_factory=list)
    body_base64: str | None = None

    @classmethod
    def build(cls, method: str, headers: list[tuple[str, str]], body: bytes | None) -> RequestSpec:
        """build makes a RequestSpec from a raw body."""
        encoded = base64.b64encode(body).decode("ascii") if body else None
        return cls(method=method.upper(), headers=headers, body_base64=encoded)


class ConstantVus(_Strict):
    """ConstantVus: ``vus`` virtual users send back to back for ``duration_s``."""

    type: Literal["constant-vus"] = "constant-vus"
    vus: PositiveInt
    duration_s: PositiveFloat


class SharedIterations(_Strict):
    """SharedIterations: ``vus`` virtual users share exactly ``iterations`` requests."""

    type: Literal["shared-iterations"] = "shared-iterations"
    vus: PositiveInt
    iterations: PositiveInt
    max_duration_s: PositiveFloat = 600.0


class ConstantArrivalRate(_Strict):
    """ConstantArrivalRate: ``rate`` requests start every second for ``duration_s``."""

    type: Literal["constant-arrival-rate"] = "constant-arrival-rate"
    rate: PositiveFloat
    duration_s: PositiveFloat
    max_in_flight: PositiveInt
    pre_allocated: PositiveInt | None = None


class RateStage(_Strict):
    """RateStage: over ``duration_s`` the rate moves linearly to ``target_rate``."""

    duration_s: float = Field(ge=0)
    target_rate: float = Field(ge=0)


class RampingArrivalRate(_Strict):
    """RampingArrivalRate: piecewise-linear arrival rate from ``start_rate``."""

    type: Literal["ramping-arrival-rate"] = "ramping-arrival-rate"
    start_rate: float = Field(default=0.0, ge=0)
    stages: list[RateStage] = Field(min_length=1)
    max_in_flight: PositiveInt
    pre_allocated: PositiveInt | None = None


Executor = Annotated[
    Union[ConstantVus, SharedIterations, ConstantArrivalRate, RampingArrivalRate],
    Field(discriminator="type"),
]


class Limits(_Strict):
    """Limits: per-request timeout and the grace period for requests in flight at the end."""

    timeout_s: PositiveFloat = 30.0
    grace_period_s: float = Field(default=5.0, ge=0)


class Stripe(_Strict):
    """Stripe: this engine's share of the schedule (every ``stride``-th request from ``offset``)."""

    offset: int = Field(default=0, ge=0)
    stride: PositiveInt = 1


class Plan(_Strict):
    """Plan: everything the engine needs for one run."""

    target: TargetSpec
    request: RequestSpec = Field(default_factory=RequestSpec)
    executor: Executor
    limits: Limits = Field(default_factory=Limits)
    threads: PositiveInt | None = None
    stripe: Stripe = Field(default_factory=Stripe)
    interval_s: float = Field(default=1.0, ge=0.01)

    def to_json(self) -> str:
        """to_json serializes the plan in the engine's format."""
        return self.model_dump_json()

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
