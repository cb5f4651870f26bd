"""Sweep analysis: from a sweep's levels (Level: one load level, VUs in the closed model or an
arrival rate in the open model, with its run's key figures), the peak-throughput level, the
knee, a Universal Scalability Law fit (closed model only, surge.analysis.usl) and each level's
zone (docs/analysis.md); and the sentences a sweep's document is told in.

The knee is the load after which throughput stops growing in proportion, found by Kneedle
(Satopää, Albrecht, Irwin, Raghavan, "Finding a 'Kneedle' in a Haystack", ICDCS workshops 2011)
through the ``kneed`` package, on throughput against load. The zones class each level as
optimal, stress, degraded or broken, by the rules in docs/analysis.md ("Zones"). A level's zone
depends only on it and the lighter levels, so it is final as soon as the level is measured
(``--stop-when broken`` relies on this)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from surge.analysis.slo import Figures, broken, describe, judge
from surge.analysis.usl import UslFit, UslRefusal, fit_usl
from surge.plan.thresholds import Threshold, Verdict


@dataclass(frozen=True)
class Level:
    """Level is one measured load level: ``load`` (VUs or requests per second offered),
    ``figures`` (``responses_per_s``, ``successes_per_s``, ``p50_ms``, ``p95_ms``, ``p99_ms``,
    ``failure_rate``, …; None when missing), ``failure_classes`` (class → count), ``verdicts``
    when the SLO was judged on the run's own result (else the figures are judged), and
    ``over_saturated``: why the over-saturation rule stopped its run early (a broken level;
    surge.analysis.saturation), None when it did not."""

    load: float
    figures: Figures
    failure_classes: Mapping[str, int] = field(default_factory=dict)
    verdicts: Sequence[Verdict] | None = None
    over_saturated: str | None = None

    def figure(self, name: str) -> float | None:
        """figure is the named figure, None when missing or not a finite number."""
        value = self.figures.get(name)
        return None if value is None or value != value else float(value)


MIN_POINTS = 3
"""MIN_POINTS is the fewest levels (up to and including the peak) Kneedle is given: with two
points every curve is a line."""


@dataclass(frozen=True)
class Knee:
    """Knee is the knee's load and throughput, or None for both with ``reason`` saying why
    there is none."""

    load: float | None
    throughput: float | None
    reason: str = ""


def find_knee(loads: Sequence[float], throughput: Sequence[float], sensitivity: float = 1.0) -> Knee:
    """find_knee runs Kneedle (concave, increasing; ``S`` = ``sensitivity``) on the levels up
    to and including the peak throughput (``loads`` ascending, distinct): the falling part
    after the peak is a collapse, not a knee. The knee is one of the measured loads."""
    from kneed import KneeLocator  # type: ignore[import-untyped]  # lazy: 0.5 s of start-up

    if len(loads) != len(throughput):
        raise ValueError("find_knee: loads and throughput differ in length")
    if not loads:
        return Knee(None, None, "no levels measured")
    peak = max(range(len(throughput)), key=lambda i: (throughput[i], -i))
    xs, ys = list(loads[: peak + 1]), list(throughput[: peak + 1])
    if len(xs) < MIN_POINTS:
        return Knee(None, None, f"the peak is at level {peak + 1}: Kneedle needs {MIN_POINTS} levels up to it")
    if ys[-1] <= ys[0]:
        return Knee(None, None, "throughput does not rise with load")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kneed warns 'No knee/elbow found' and we say so ourselves
        locator = KneeLocator(xs, ys, S=sensitivity, curve="concave", direction="increasing")
    if locator.knee is None:
        return Knee(None, None, "throughput rises about in proportion to load up to the peak: no knee")
    load = float(locator.knee)
    return Knee(load, float(ys[xs.index(load)]))


Model = Literal["closed", "open"]
"""Model is the sweep's load model: ``closed`` (levels are VUs), ``open`` (arrival rates per second)."""


ZONES = ("optimal", "stress", "degraded", "broken")
"""ZONES are the zones from best to worst; a sweep's zones never go back up this list."""


@dataclass(frozen=True)
class ZoneRules:
    """ZoneRules are the limits the zones are drawn with (defaults in docs/analysis.md):
    ``slo`` (conditions a level must meet to stay above degraded; empty: the default SLO),
    ``rising_efficiency`` (a step's marginal scaling efficiency below it is stress),
    ``latency_rise`` (p95 above this multiple of the lightest level's is stress),
    ``broken_failure_rate`` (a failure rate at or above it is broken), ``broken_drop``
    (throughput this fraction below the best lighter level is broken), and the default SLO:
    p95 at most ``default_latency_factor`` × the lightest level's, failure rate at most
    ``default_failure_rate``."""

    slo: Sequence[Threshold] = field(default_factory=tuple)
    rising_efficiency: float = 0.5
    latency_rise: float = 2.0
    broken_failure_rate: float = 0.10
    broken_drop: float = 0.20
    default_latency_factor: float = 5.0
    default_failure_rate: float = 0.01


@dataclass(frozen=True)
class Zone:
    """Zone is a level's zone (one of ZONES) with the rule that put it there, in numbers."""

    load: float
    zone: str
    reason: str


def marginal_efficiency(before: Level, after: Level) -> float | None:
    """marginal_efficiency is the step's relative throughput gain over its relative load gain,
    (X₂/X₁ − 1) / (L₂/L₁ − 1): 1 when throughput grows in proportion, 0 when flat, negative when
    it falls; None without throughput or load gain."""
    x1, x2 = before.figure("responses_per_s"), after.figure("responses_per_s")
    if x1 is None or x2 is None or x1 <= 0 or before.load <= 0 or after.load <= before.load:
        return None
    return (x2 / x1 - 1) / (after.load / before.load - 1)


def _broken(level: Level, lighter: Sequence[Level], rules: ZoneRules) -> str | None:
    if level.over_saturated is not None:
        return level.over_saturated
    x = level.figure("responses_per_s")
    if not x:
        return "no responses measured"
    failures = level.figure("failure_rate")
    if failures is not None and failures >= rules.broken_failure_rate:
        top = max(level.failure_classes.items(), key=lambda kv: kv[1], default=None)
        mostly = f", mostly {top[0]}" if top else ""
        return f"failure rate {failures:.1%} ≥ {rules.broken_failure_rate:.0%}{mostly}"
    best = max((v for v in (lv.figure("responses_per_s") for lv in lighter) if v is not None), default=None)
    if best is not None and x <= (1 - rules.broken_drop) * best:
        return (
            f"throughput {x:,.1f}/s is {1 - x / best:.0%} below the best lighter level's {best:,.1f}/s "
            f"(≥ {rules.broken_drop:.0%})"
        )
    return None


def _degraded(level: Level, lightest: Level, rules: ZoneRules) -> str | None:
    if rules.slo:
        verdicts = level.verdicts if level.verdicts is not None else judge(rules.slo, level.figures)
        missed = broken(verdicts)
        return f"SLO missed: {describe(missed)}" if missed else None
    p95, p95_0 = level.figure("p95_ms"), lightest.figure("p95_ms")
    if p95 is not None and p95_0 and p95 > rules.default_latency_factor * p95_0:
        return f"p95 {p95:,.1f}ms > {rules.default_latency_factor:g}× the lightest level's {p95_0:,.1f}ms (default SLO)"
    failures = level.figure("failure_rate")
    if failures is not None and failures > rules.default_failure_rate:
        return f"failure rate {failures:.2%} > {rules.default_failure_rate:.0%} (default SLO)"
    return None


def _stress(level: Level, previous: Level | None, lightest: Level, rules: ZoneRules) -> str | None:
    efficiency = marginal_efficiency(previous, level) if previous is not None else None
    if efficiency is not None and efficiency < rules.rising_efficiency:
        return (
            f"throughput gain flattening: marginal efficiency {efficiency:.0%} < "
            f"{rules.rising_efficiency:.0%} of the load step"
        )
    p95, p95_0 = level.figure("p95_ms"), lightest.figure("p95_ms")
    if p95 is not None and p95_0 and p95 > rules.latency_rise * p95_0:
        return f"latency rising: p95 {p95:,.1f}ms > {rules.latency_rise:g}× the lightest level's {p95_0:,.1f}ms"
    return None


def classify(levels: Sequence[Level], rules: ZoneRules = ZoneRules()) -> list[Zone]:
    """classify gives each level (sorted by load here) its zone: the first rule that holds of
    broken, degraded, stress (in that order), else optimal; and never a better zone than the
    lighter level before it (noise at one step does not make the curve optimal again)."""
    ordered = sorted(levels, key=lambda lv: lv.load)
    zones: list[Zone] = []
    for i, level in enumerate(ordered):
        previous = ordered[i - 1] if i else None
        found = "optimal", "throughput rising with load, latency within the SLO"
        for zone, reason in (
            ("broken", _broken(level, ordered[:i], rules)),
            ("degraded", _degraded(level, ordered[0], rules)),
            ("stress", _stress(level, previous, ordered[0], rules)),
        ):
            if reason is not None:
                found = zone, reason
                break
        if zones and ZONES.index(found[0]) < ZONES.index(zones[-1].zone):
            found = zones[-1].zone, f"as the lighter level (zones do not go back); by itself: {found[0]}, {found[1]}"
        zones.append(Zone(level.load, *found))
    return zones


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
