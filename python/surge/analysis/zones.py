"""Zones: each level of a sweep classed as optimal, stress, degraded or broken, by the rules
in docs/analysis.md ("Zones"). A level's zone depends only on it and the lighter levels, so
it is final as soon as the level is measured (``--stop-when broken`` relies on this)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from surge.analysis.level import Level
from surge.analysis.slo import broken, describe, judge
from surge.plan.thresholds import Threshold

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
