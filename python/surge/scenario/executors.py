"""Executors in k6's vocabulary as a scenario file writes them: how many virtual users (VUs)
run iterations, and when.

Each executor is an input model (the file's syntax: ``duration: 30s``, FILE:LINE errors) whose
``type`` names it, with k6's defaults where k6 has them, ``problems()`` reporting every
inconsistency between its fields (as k6's ``Validate()`` does), so that one file error lists
them all, and ``to_plan()`` giving its ``surge.plan.model`` counterpart, the engine's executor.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from surge.core.limits import MAX_ITERATIONS, MAX_VUS
from surge.plan import model as plan
from surge.scenario.base import FileModel, Finding
from surge.scenario.quantities import Duration, Rate, ScheduledDuration

DEFAULT_MAX_DURATION_S = 600.0
"""DEFAULT_MAX_DURATION_S bounds iteration-count executors (k6's ``maxDuration`` default, 10m)."""


class VuStageInput(FileModel):
    """VuStageInput: over ``duration`` the number of VUs moves linearly to ``target``."""

    duration: ScheduledDuration
    target: int = Field(ge=0, le=MAX_VUS)


class RateStageInput(FileModel):
    """RateStageInput: over ``duration`` the arrival rate moves linearly to ``target`` per second."""

    duration: ScheduledDuration
    target: Rate


def _stage_problems(stages: list[VuStageInput] | list[RateStageInput], start: float, what: str) -> list[Finding]:
    found: list[Finding] = []
    if stages and sum(s.duration for s in stages) <= 0:
        found.append((("stages",), "the stages last 0s in total: give at least one stage a duration"))
    if stages and start <= 0 and all(s.target <= 0 for s in stages):
        found.append((("stages",), f"every stage targets 0 {what}: nothing would run"))
    return found


class ConstantVusInput(FileModel):
    """ConstantVusInput: ``vus`` VUs run iterations back to back for ``duration``."""

    type: Literal["constant-vus"] = "constant-vus"
    vus: int = Field(default=1, ge=1, le=MAX_VUS)
    duration: ScheduledDuration = Field(gt=0)

    def problems(self) -> list[Finding]:
        """problems lists what is inconsistent across fields (nothing for this executor)."""
        return []

    def peak_vus(self) -> int:
        """peak_vus is the most VUs this executor ever runs at once."""
        return self.vus

    def to_plan(self) -> plan.ConstantVus:
        """to_plan is the engine's executor."""
        return plan.ConstantVus(vus=self.vus, duration_s=self.duration)


class RampingVusInput(FileModel):
    """RampingVusInput: the number of VUs follows ``stages`` from ``start_vus``; VUs above the
    target finish their iteration within ``graceful_ramp_down``."""

    type: Literal["ramping-vus"] = "ramping-vus"
    start_vus: int = Field(default=0, ge=0, le=MAX_VUS)
    stages: list[VuStageInput] = Field(min_length=1)
    graceful_ramp_down: Duration = 30.0

    def problems(self) -> list[Finding]:
        """problems lists stages that make no sense: 0s in total, or 0 VUs throughout."""
        return _stage_problems(self.stages, self.start_vus, "VUs")

    def peak_vus(self) -> int:
        """peak_vus is the most VUs this executor ever runs at once."""
        return max([self.start_vus, *(s.target for s in self.stages)])

    def to_plan(self) -> plan.RampingVus:
        """to_plan is the engine's executor."""
        return plan.RampingVus(
            start_vus=self.start_vus,
            stages=[plan.VuStage(duration_s=s.duration, target=s.target) for s in self.stages],
            graceful_ramp_down_s=self.graceful_ramp_down,
        )


class PerVuIterationsInput(FileModel):
    """PerVuIterationsInput: each of ``vus`` VUs runs ``iterations`` iterations, within ``max_duration``."""

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

    def to_plan(self) -> plan.PerVuIterations:
        """to_plan is the engine's executor."""
        return plan.PerVuIterations(vus=self.vus, iterations=self.iterations, max_duration_s=self.max_duration)


class SharedIterationsInput(FileModel):
    """SharedIterationsInput: ``vus`` VUs share ``iterations`` iterations, within ``max_duration``."""

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

    def to_plan(self) -> plan.SharedIterations:
        """to_plan is the engine's executor."""
        return plan.SharedIterations(vus=self.vus, iterations=self.iterations, max_duration_s=self.max_duration)


def _vu_pool_problems(pre_allocated: int | None, max_vus: int | None) -> list[Finding]:
    if pre_allocated is None and max_vus is None:
        return [((), "give max_vus (the most VUs the schedule may use) or pre_allocated_vus")]
    if pre_allocated is not None and max_vus is not None and pre_allocated > max_vus:
        return [(("pre_allocated_vus",), f"{pre_allocated} pre-allocated VUs exceed max_vus {max_vus}")]
    return []


def _vu_cap(pre_allocated: int | None, max_vus: int | None) -> int:
    """_vu_cap is an arrival-rate executor's most VUs: ``max_vus``, else ``pre_allocated_vus``
    (the meaning checks refuse a file with neither before it compiles)."""
    cap = max_vus or pre_allocated
    if cap is None:
        raise TypeError("an arrival-rate executor with neither max_vus nor pre_allocated_vus")
    return cap


class ConstantArrivalRateInput(FileModel):
    """ConstantArrivalRateInput: ``rate`` iterations start every second for ``duration``, on as
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

    def to_plan(self) -> plan.ConstantArrivalRate:
        """to_plan is the engine's executor, its ``max_vus`` the VU cap (``_vu_cap``)."""
        return plan.ConstantArrivalRate(
            rate=self.rate,
            duration_s=self.duration,
            max_vus=_vu_cap(self.pre_allocated_vus, self.max_vus),
            pre_allocated_vus=self.pre_allocated_vus,
        )


class RampingArrivalRateInput(FileModel):
    """RampingArrivalRateInput: the arrival rate follows ``stages`` from ``start_rate`` (per
    second), with the same VU pool rules as ConstantArrivalRateInput."""

    type: Literal["ramping-arrival-rate"] = "ramping-arrival-rate"
    start_rate: Rate = 0.0
    stages: list[RateStageInput] = Field(min_length=1)
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

    def to_plan(self) -> plan.RampingArrivalRate:
        """to_plan is the engine's executor, its ``max_vus`` the VU cap (``_vu_cap``)."""
        return plan.RampingArrivalRate(
            start_rate=self.start_rate,
            stages=[plan.RateStage(duration_s=s.duration, target_rate=s.target) for s in self.stages],
            max_vus=_vu_cap(self.pre_allocated_vus, self.max_vus),
            pre_allocated_vus=self.pre_allocated_vus,
        )


ExecutorInput = Annotated[
    ConstantVusInput
    | RampingVusInput
    | PerVuIterationsInput
    | SharedIterationsInput
    | ConstantArrivalRateInput
    | RampingArrivalRateInput,
    Field(discriminator="type"),
]
"""ExecutorInput is one of the six executors as a file writes it, chosen by its ``type``."""

EXECUTOR_TYPES = (
    "constant-vus",
    "ramping-vus",
    "per-vu-iterations",
    "shared-iterations",
    "constant-arrival-rate",
    "ramping-arrival-rate",
)
"""EXECUTOR_TYPES are the accepted ``type`` values, in the order the docs list them."""
