"""Executors in k6's vocabulary: how many virtual users (VUs) run iterations, and when.

Each executor is a model whose ``type`` names it, with k6's defaults where k6 has them, and
``problems()`` reporting every inconsistency between its fields (as k6's ``Validate()``
does), so that one file error lists them all.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from surge.core.limits import MAX_ITERATIONS, MAX_VUS
from surge.scenario.base import FileModel, Finding
from surge.scenario.quantities import Duration, Rate, ScheduledDuration

DEFAULT_MAX_DURATION_S = 600.0
"""DEFAULT_MAX_DURATION_S bounds iteration-count executors (k6's ``maxDuration`` default, 10m)."""


class VuStage(FileModel):
    """VuStage: over ``duration`` the number of VUs moves linearly to ``target``."""

    duration: ScheduledDuration
    target: int = Field(ge=0, le=MAX_VUS)


class RateStage(FileModel):
    """RateStage: over ``duration`` the arrival rate moves linearly to ``target`` per second."""

    duration: ScheduledDuration
    target: Rate


def _stage_problems(stages: list[VuStage] | list[RateStage], start: float, what: str) -> list[Finding]:
    found: list[Finding] = []
    if stages and sum(s.duration for s in stages) <= 0:
        found.append((("stages",), "the stages last 0s in total: give at least one stage a duration"))
    if stages and start <= 0 and all(s.target <= 0 for s in stages):
        found.append((("stages",), f"every stage targets 0 {what}: nothing would run"))
    return found


class ConstantVus(FileModel):
    """ConstantVus: ``vus`` VUs run iterations back to back for ``duration``."""

    type: Literal["constant-vus"] = "constant-vus"
    vus: int = Field(default=1, ge=1, le=MAX_VUS)
    duration: ScheduledDuration = Field(gt=0)

    def problems(self) -> list[Finding]:
        """problems lists what is inconsistent across fields (nothing for this executor)."""
        return []

    def peak_vus(self) -> int:
        """peak_vus is the most VUs this executor ever runs at once."""
        return self.vus


class RampingVus(FileModel):
    """RampingVus: the number of VUs follows ``stages`` from ``start_vus``; VUs above the
    target finish their iteration within ``graceful_ramp_down``."""

    type: Literal["ramping-vus"] = "ramping-vus"
    start_vus: int = Field(default=0, ge=0, le=MAX_VUS)
    stages: list[VuStage] = Field(min_length=1)
    graceful_ramp_down: Duration = 30.0

    def problems(self) -> list[Finding]:
        """problems lists stages that make no sense: 0s in total, or 0 VUs throughout."""
        return _stage_problems(self.stages, self.start_vus, "VUs")

    def peak_vus(self) -> int:
        """peak_vus is the most VUs this executor ever runs at once."""
        return max([self.start_vus, *(s.target for s in self.stages)])


class PerVuIterations(FileModel):
    """PerVuIterations: each of ``vus`` VUs runs ``iterations`` iterations, within ``max_duration``."""

    type: Literal["per-vu-iterations"] = "per-vu-iterations"
    vus: int = Field(default=1, ge=1, le=MAX_VUS)
    iterations: int = Field(default=1, ge=1, le=MAX_ITERATIONS)
    max_duration: Duration = Field(default=DEFAULT_MAX_DURATION_S, gt=0)

    def problems(self) -> list[Finding]:
        """problems lists what is inconsistent across fields (nothing for this executor)."""
        return []

    def peak_vus(self) -> int:
        """peak_vus is the most VUs this executor ever runs at once."""
        return self.vus


class SharedIterations(FileModel):
    """SharedIterations: ``vus`` VUs share ``iterations`` iterations, within ``max_duration``."""

    type: Literal["shared-iterations"] = "shared-iterations"
    vus: int = Field(default=1, ge=1, le=MAX_VUS)
    iterations: int = Field(default=1, ge=1, le=MAX_ITERATIONS)
    max_duration: Duration = Field(default=DEFAULT_MAX_DURATION_S, gt=0)

    def problems(self) -> list[Finding]:
        """problems reports fewer iterations than VUs (k6 refuses it too: some VUs would idle)."""
        if self.iterations < self.vus:
            return [
                (
                    ("iterations",),
                    f"{self.iterations} iterations cannot be shared by {self.vus} VUs: "
                    "give at least as many iterations as VUs",
                )
            ]
        return []

    def peak_vus(self) -> int:
        """peak_vus is the most VUs this executor ever runs at once."""
        return self.vus


def _vu_pool_problems(pre_allocated: int | None, max_vus: int | None) -> list[Finding]:
    if pre_allocated is None and max_vus is None:
        return [((), "give max_vus (the most VUs the schedule may use) or pre_allocated_vus")]
    if pre_allocated is not None and max_vus is not None and pre_allocated > max_vus:
        return [(("pre_allocated_vus",), f"{pre_allocated} pre-allocated VUs exceed max_vus {max_vus}")]
    return []


class ConstantArrivalRate(FileModel):
    """ConstantArrivalRate: ``rate`` iterations start every second for ``duration``, on as
    many VUs as needed up to ``max_vus`` (``pre_allocated_vus`` opened up front); an
    iteration that finds all ``max_vus`` busy is dropped, never delayed."""

    type: Literal["constant-arrival-rate"] = "constant-arrival-rate"
    rate: Rate = Field(gt=0)
    duration: ScheduledDuration = Field(gt=0)
    pre_allocated_vus: int | None = Field(default=None, ge=1, le=MAX_VUS)
    max_vus: int | None = Field(default=None, ge=1, le=MAX_VUS)

    def problems(self) -> list[Finding]:
        """problems reports a missing or inconsistent VU pool."""
        return _vu_pool_problems(self.pre_allocated_vus, self.max_vus)

    def peak_vus(self) -> int:
        """peak_vus is the most VUs this executor may run at once (``max_vus``)."""
        return self.max_vus or self.pre_allocated_vus or 1


class RampingArrivalRate(FileModel):
    """RampingArrivalRate: the arrival rate follows ``stages`` from ``start_rate`` (per
    second), with the same VU pool rules as ConstantArrivalRate."""

    type: Literal["ramping-arrival-rate"] = "ramping-arrival-rate"
    start_rate: Rate = 0.0
    stages: list[RateStage] = Field(min_length=1)
    pre_allocated_vus: int | None = Field(default=None, ge=1, le=MAX_VUS)
    max_vus: int | None = Field(default=None, ge=1, le=MAX_VUS)

    def problems(self) -> list[Finding]:
        """problems reports senseless stages and a missing or inconsistent VU pool."""
        return [
            *_stage_problems(self.stages, self.start_rate, "iterations/s"),
            *_vu_pool_problems(self.pre_allocated_vus, self.max_vus),
        ]

    def peak_vus(self) -> int:
        """peak_vus is the most VUs this executor may run at once (``max_vus``)."""
        return self.max_vus or self.pre_allocated_vus or 1


Executor = Annotated[
    ConstantVus | RampingVus | PerVuIterations | SharedIterations | ConstantArrivalRate | RampingArrivalRate,
    Field(discriminator="type"),
]
"""Executor is one of the six executors, chosen by its ``type``."""

EXECUTOR_TYPES = (
    "constant-vus",
    "ramping-vus",
    "per-vu-iterations",
    "shared-iterations",
    "constant-arrival-rate",
    "ramping-arrival-rate",
)
"""EXECUTOR_TYPES are the accepted ``type`` values, in the order the docs list them."""
