"""Sweep analysis: from a sweep's levels, the peak-throughput level, the knee (Kneedle), a
Universal Scalability Law fit (closed model only) and each level's zone (docs/analysis.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from surge.analysis.knee import Knee, find_knee
from surge.analysis.level import Level
from surge.analysis.usl import UslFit, UslRefusal, fit_usl
from surge.analysis.zones import Zone, ZoneRules, classify

Model = Literal["closed", "open"]
"""Model is the sweep's load model: ``closed`` (levels are VUs), ``open`` (arrival rates per second)."""


@dataclass(frozen=True)
class Peak:
    """Peak is the level with the highest throughput (the lightest of equals)."""

    load: float
    throughput: float


@dataclass(frozen=True)
class SweepAnalysis:
    """SweepAnalysis is what a sweep's curve says: ``levels`` sorted by load, their ``zones``
    (same order), the ``peak`` (None without throughput), the ``knee``, and ``usl`` (a fit or
    the reason for refusing one in the closed model; None in the open model)."""

    model: Model
    levels: list[Level]
    peak: Peak | None
    knee: Knee
    zones: list[Zone]
    usl: UslFit | UslRefusal | None


def _ordered(levels: Sequence[Level]) -> list[Level]:
    ordered = sorted(levels, key=lambda lv: lv.load)
    loads = [lv.load for lv in ordered]
    if len(set(loads)) != len(loads):
        raise ValueError(f"sweep levels must have distinct loads, got {loads}")
    return ordered


def find_peak(levels: Sequence[Level]) -> Peak | None:
    """find_peak is the level with the most responses per second (the lightest of equals),
    None when no level has throughput."""
    measured = [(lv.load, x) for lv in _ordered(levels) if (x := lv.figure("responses_per_s")) is not None]
    if not measured:
        return None
    load, throughput = max(measured, key=lambda m: (m[1], -m[0]))
    return Peak(load, throughput)


def analyse_sweep(levels: Sequence[Level], model: Model, rules: ZoneRules = ZoneRules()) -> SweepAnalysis:
    """analyse_sweep analyses a sweep's levels (any order, distinct loads): the knee and the
    USL fit use the levels with a throughput figure; ValueError on repeated loads."""
    ordered = _ordered(levels)
    measured = [(lv.load, x) for lv in ordered if (x := lv.figure("responses_per_s")) is not None]
    loads, throughput = [m[0] for m in measured], [m[1] for m in measured]
    usl = fit_usl(loads, throughput) if model == "closed" else None
    return SweepAnalysis(
        model, ordered, find_peak(ordered), find_knee(loads, throughput), classify(ordered, rules), usl
    )


def stop_when_broken(levels: Sequence[Level], rules: ZoneRules = ZoneRules()) -> bool:
    """stop_when_broken tells ``--stop-when broken`` whether to end the sweep: the heaviest
    level measured so far is in the broken zone (zones of measured levels never change later)."""
    return bool(levels) and classify(levels, rules)[-1].zone == "broken"
