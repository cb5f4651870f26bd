"""Sweep analysis: from a sweep's levels, the peak-throughput level, the knee (Kneedle), a
Universal Scalability Law fit (closed model only) and each level's zone (docs/analysis.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

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


def offered_text(model: str, load: float) -> str:
    """offered_text is a level's offered load for people: ``500 VUs``, ``400/s``."""
    return f"{load:,.0f} VUs" if model == "closed" else f"{load:,.6g}/s"


def failure_classes_text(classes: Mapping[str, int]) -> str:
    """failure_classes_text lists failure classes as ``timeout × 12, status 503 × 4`` (``none``)."""
    ordered = sorted(classes.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{name} × {n:,}" for name, n in ordered) or "none"


def findings(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """findings are the sweep's answers in sentences: the peak, the knee, the USL fit or why
    there is none, where each zone starts, and an early stop."""
    model, found = document["model"], []
    peak, knee, usl = document["peak"], document["knee"], document["usl"]
    if peak is not None:
        found.append(
            {
                "kind": "peak",
                "text": f"peak throughput {peak['throughput']:,.1f}/s at {offered_text(model, peak['load'])}",
            }
        )
    if knee["load"] is not None:
        found.append(
            {
                "kind": "knee",
                "text": f"knee at {offered_text(model, knee['load'])} "
                f"({knee['throughput']:,.1f}/s): throughput stops growing in "
                "proportion to load beyond it",
            }
        )
    else:
        found.append({"kind": "knee", "text": f"no knee: {knee['reason']}"})
    if usl is not None:
        found.append({"kind": "usl", "text": usl_text(usl)})
    starts: dict[str, float] = {}
    for level in document["levels"]:
        starts.setdefault(level["zone"], level["load"])
    if starts:
        found.append(
            {
                "kind": "zones",
                "text": "zones: "
                + ", ".join(f"{zone} from {offered_text(model, load)}" for zone, load in starts.items()),
            }
        )
    if document.get("stopped_early"):
        found.append({"kind": "stopped_early", "text": document["stopped_early"]})
    return found


def usl_text(usl: Mapping[str, Any]) -> str:
    """usl_text is the USL fit in one sentence (σ, κ, λ, N*, R²) or why there is none."""
    if "refused" in usl:
        return f"no USL fit: {usl['refused']}"
    peak = (
        "no peak (κ = 0: throughput levels off)"
        if usl["peak_n"] is None
        else f"N* = {usl['peak_n']:,.1f} VUs"
        + ("" if usl["peak_throughput"] is None else f" (X = {usl['peak_throughput']:,.1f}/s)")
    )
    text = (
        f"USL fit: σ = {usl['sigma']:.4g}, κ = {usl['kappa']:.4g}, λ = {usl['lambda']:,.4g}/s per VU, "
        f"{peak}, R² = {usl['r_squared']:.3f} over {usl['levels']} levels"
    )
    return text + "".join(f"; {w}" for w in usl["warnings"])
