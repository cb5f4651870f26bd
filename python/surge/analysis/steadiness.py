"""Steadiness: whether one short open-model run (a capacity step) measured a load the target
sustains, and, when it did not, whose limit it met: the target's (the SLO missed on latency from
the actual send, the served rate short of what was sent, latency trending up, a queue left at the
end), the generator's (the schedule not kept: sends missing, or the SLO missed only through late
sends) or a client-side cap's (``--max-in-flight``, a scenario's ``max_vus``: requests dropped at
the cap). Only the target's failures count against it. See docs/analysis.md ("Capacity: a step
that passes")."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from surge.analysis.slo import Figures, describe, judge
from surge.plan.thresholds import Threshold, Verdict

Outcome = Literal["pass", "target", "generator", "client"]
"""Outcome is a judged step's result: ``pass``; ``target`` (the target missed: counts against
it); ``generator`` (the generator could not keep its schedule: not counted); ``client`` (a
client-side cap limited the step: not counted)."""


@dataclass(frozen=True)
class Step:
    """Step is what one capacity step measured (the backbone's ``measure(rate)`` returns it):
    the offered ``rate`` (per second), the run's ``figures``, ``interval_p95_ms`` (p95 of each
    interval of the load window, in order; None for an interval without responses), the
    generator's counters ``sent``, ``late`` (sent more than 1 ms after their intended time)
    and ``dropped`` (never sent), ``achieved_per_s`` (the rate the target served over the load
    window: the rate sent less the rate its queue grew at; None: the figures'
    ``responses_per_s``), and ``verdicts`` when the SLO was judged on the run's own result (else
    the figures are). The load window's length ``duration_s``, the ``drain_s`` after it (end of
    load to the last response), ``sent_verdicts`` (the SLO judged on latency from the actual
    send instead of the intended time), ``sending_per_s`` (the rate sent over the load window),
    the client-side cap ``in_flight_cap`` (named ``cap_name``) and ``peak_in_flight``
    are None when unknown: the checks that need them are then not made."""

    rate: float
    figures: Figures
    interval_p95_ms: Sequence[float | None] = ()
    sent: int = 0
    late: int = 0
    dropped: int = 0
    achieved_per_s: float | None = None
    verdicts: Sequence[Verdict] | None = None
    duration_s: float | None = None
    drain_s: float | None = None
    sent_verdicts: Sequence[Verdict] | None = None
    sending_per_s: float | None = None
    in_flight_cap: int | None = None
    cap_name: str | None = None
    peak_in_flight: int | None = None
    over_saturated: str | None = None
    """over_saturated says why the over-saturation rule stopped the step's run early
    (surge.analysis.saturation): a failure on the target's account; None when it did not."""

    def achieved(self) -> float | None:
        """achieved is the throughput the step reached: ``achieved_per_s`` or ``responses_per_s``."""
        return self.achieved_per_s if self.achieved_per_s is not None else self.figures.get("responses_per_s")

    def sent_per_s(self) -> float | None:
        """sent_per_s is the rate the generator sent at over the load window (None: no window)."""
        return self.sent / self.duration_s if self.duration_s else None


@dataclass(frozen=True)
class Steadiness:
    """Steadiness holds the limits of a steady step: ``min_achieved`` (served / what was
    offered and sent, and sent / due by the schedule), ``max_latency_rise`` (the rise of p95
    across the window the Theil–Sen slope predicts, as a fraction of the window's median p95,
    when the slope's ``trend_confidence`` interval lies above 0), ``min_trend_intervals``
    (fewer intervals: the trend is not tested), ``max_dropped`` (dropped / (sent + dropped)),
    ``max_late`` (late / sent above which the evidence says the generator was often late:
    lateness itself fails nothing, its effect does); a served rate short of ``min_achieved`` by
    less than ``marginal_served`` of the rate, as the target's only miss, is marginal (a pause
    of a shared machine does as much)."""

    min_achieved: float = 0.99
    max_latency_rise: float = 0.25
    trend_confidence: float = 0.95
    min_trend_intervals: int = 4
    max_late: float = 0.05
    max_dropped: float = 0.001
    marginal_served: float = 0.05


SLACK_REQUESTS = 2
"""SLACK_REQUESTS is how many requests a rate comparison over a window forgives (the counts of
a window's edges are whole requests)."""


@dataclass(frozen=True)
class Trend:
    """Trend is the latency trend over a step's window: ``slope_ms`` per interval (Theil–Sen)
    with its confidence interval, ``rise`` (slope × intervals spanned / median p95), and
    whether that counts as ``rising``; None figures when too few intervals were measured."""

    intervals: int
    slope_ms: float | None = None
    slope_low_ms: float | None = None
    slope_high_ms: float | None = None
    rise: float | None = None
    rising: bool = False


@dataclass(frozen=True)
class StepVerdict:
    """StepVerdict says whether a step passed and, when not, whose limit it met (``outcome``):
    ``failures`` (every check it missed, in words and numbers; empty when it passed),
    ``evidence`` (what every check measured), the SLO ``verdicts`` and the latency ``trend``.
    ``limit`` names the generator's or the client cap's limit in words when ``outcome`` is one
    of those; ``marginal`` tells a target failure whose only miss was the SLO, or a served rate
    within ``marginal_served`` of the rate (latency not rising): what a pause of a shared
    machine also causes."""

    passed: bool
    failures: tuple[str, ...]
    evidence: tuple[str, ...]
    verdicts: tuple[Verdict, ...] = ()
    trend: Trend = field(default_factory=lambda: Trend(0))
    outcome: Outcome = "pass"
    limit: str | None = None
    marginal: bool = False

    @property
    def counted(self) -> bool:
        """counted tells whether the step says something about the target (passed, or failed
        on the target's account)."""
        return self.outcome in ("pass", "target")


def latency_trend(interval_p95_ms: Sequence[float | None], limits: Steadiness = Steadiness()) -> Trend:
    """latency_trend fits p95 against interval index by Theil–Sen (intervals without a p95 are
    left out, keeping the others' positions); it is rising when the slope's confidence interval
    lies above 0 and the rise it predicts across the window exceeds ``max_latency_rise`` of the
    window's median p95."""
    from scipy.stats import theilslopes  # type: ignore[import-untyped]  # lazy: 0.5 s of start-up

    points = [(i, float(p)) for i, p in enumerate(interval_p95_ms) if p is not None and math.isfinite(p)]
    if len(points) < limits.min_trend_intervals:
        return Trend(len(points))
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    slope, _, low, high = theilslopes(ys, xs, alpha=limits.trend_confidence)
    median = statistics.median(ys)
    rise = float(slope) * (xs[-1] - xs[0]) / median if median > 0 else (math.inf if slope > 0 else 0.0)
    rising = bool(low > 0 and rise > limits.max_latency_rise)
    return Trend(len(points), float(slope), float(low), float(high), rise, rising)


class _Checks:
    # The lines of a verdict, sorted by whose limit a missed check is.
    def __init__(self) -> None:
        self.evidence: list[str] = []
        self.soft = 0  # the target's misses a pause of a shared machine also causes
        self.missed: dict[Outcome, list[str]] = {"target": [], "generator": [], "client": []}

    def add(self, line: str, missed: str | None, whose: Outcome = "target") -> None:
        if missed is None:
            self.evidence.append(line)
        else:
            self.missed[whose].append(f"{line} ({missed})" if missed else line)


def _slo(step: Step, verdicts: Sequence[Verdict], checks: _Checks) -> None:
    missed = [v for v in verdicts if not v.passed]
    met = [v for v in verdicts if v.passed]
    if met:
        checks.evidence.append(f"SLO met: {describe(met)}")
    if not missed:
        return
    from_send = list(step.sent_verdicts) if step.sent_verdicts is not None else None
    if from_send is not None and len(from_send) == len(verdicts) and all(v.passed for v in from_send):
        # Latency from the intended send time missed, from the actual send it held: the wait
        # was the generator's lateness, not the target's.
        checks.add(
            f"SLO missed: {describe(missed)}",
            f"met from the actual send: {describe(from_send)}: the generator's late sends made the miss",
            "generator",
        )
    else:
        checks.add(f"SLO missed: {describe(missed)}", "", "target")
        checks.soft += 1


def _offered(step: Step, limits: Steadiness, checks: _Checks) -> None:
    late = step.late / step.sent if step.sent else 0.0
    often = (
        f" (> {limits.max_late:.0%}: judged by its effect on the load sent and on latency from the intended send time)"
        if late > limits.max_late
        else ""
    )
    checks.evidence.append(f"generator late on {late:.1%} of {step.sent:,} sends{often}")
    due = step.sent + step.dropped
    dropped = step.dropped / due if due else 0.0
    capped = (
        step.in_flight_cap is not None and step.peak_in_flight is not None and step.peak_in_flight >= step.in_flight_cap
    )
    if dropped > limits.max_dropped and capped:
        checks.add(
            f"{step.dropped:,} dropped of {due:,} due ({dropped:.2%})",
            f"> {limits.max_dropped:.1%}: the client cap {step.cap_name or step.in_flight_cap} was reached "
            f"({step.peak_in_flight:,} in flight): it limited the step, not the target",
            "client",
        )
    else:
        checks.add(
            f"{step.dropped:,} dropped of {due:,} due ({dropped:.2%})",
            f"> {limits.max_dropped:.1%}: the load was not all offered" if dropped > limits.max_dropped else None,
            "generator",
        )
    if step.duration_s:
        scheduled = step.rate * step.duration_s
        short = due < scheduled * limits.min_achieved - SLACK_REQUESTS
        checks.add(
            f"sent {step.sent:,} of {scheduled:,.0f} scheduled in the {step.duration_s:,.1f} s load window",
            "the generator did not keep its schedule" if short else None,
            "generator",
        )


def _served(step: Step, limits: Steadiness, checks: _Checks) -> None:
    achieved = step.achieved()
    if achieved is None:
        checks.add("no throughput measured", "", "target")
        return
    sent_rate = step.sending_per_s if step.sending_per_s is not None else step.sent_per_s()
    offered = min(step.rate, sent_rate) if sent_rate is not None else step.rate
    share = achieved / offered if offered > 0 else 0.0
    slack = SLACK_REQUESTS / step.duration_s if step.duration_s else 0.0
    what = f"of offered {step.rate:,.1f}/s" if offered == step.rate else f"of {offered:,.1f}/s sent"
    behind = achieved < offered * limits.min_achieved - slack
    checks.add(
        f"served {achieved:,.1f}/s = {share:.1%} {what}",
        f"< {limits.min_achieved:.0%}: the target fell behind" if behind else None,
    )
    if behind and share >= 1 - limits.marginal_served:
        checks.soft += 1
    if step.drain_s is not None:
        checks.evidence.append(f"drain {step.drain_s:,.2f} s after the load")


def judge_step(step: Step, slo: Sequence[Threshold], limits: Steadiness = Steadiness()) -> StepVerdict:
    """judge_step passes a step only if every SLO condition passed (a condition without data
    fails), the load was offered (the schedule kept: sent ≥ ``min_achieved`` of due, dropped
    within ``max_dropped``) and the target kept up (served ≥ ``min_achieved`` of what was
    offered and sent, latency not rising, no queue left at the end, its run not stopped as
    over-saturated). A failed step's
    ``outcome`` says whose limit it met: ``target`` when any of the target's checks missed
    (the SLO on latency from the actual send included); else ``client`` when requests were
    dropped at the client cap; else ``generator``. Late sends alone fail nothing: their effect
    on the load sent and on latency is what is judged."""
    verdicts = tuple(step.verdicts if step.verdicts is not None else judge(slo, step.figures))
    checks = _Checks()
    if step.over_saturated is not None:
        checks.add(step.over_saturated, "")
    _slo(step, verdicts, checks)
    trend = latency_trend(step.interval_p95_ms, limits)
    if trend.slope_ms is None:
        checks.evidence.append(
            f"latency trend not tested ({trend.intervals} intervals, need {limits.min_trend_intervals})"
        )
    else:
        checks.add(
            f"{'latency trending up: ' if trend.rising else ''}p95 slope {trend.slope_ms:+,.2f}ms per interval "
            f"(CI {trend.slope_low_ms:+,.2f} to {trend.slope_high_ms:+,.2f}), a {trend.rise:+.0%} rise "
            f"across the window",
            f"> {limits.max_latency_rise:.0%}" if trend.rising else None,
        )
    _served(step, limits, checks)
    _offered(step, limits, checks)
    outcome: Outcome = next((o for o in ("target", "client", "generator") if checks.missed[o]), "pass")
    failures = tuple(line for o in ("target", "client", "generator") for line in checks.missed[o])
    limit = None
    if outcome == "generator":
        limit = f"the generator could not keep the schedule at {step.rate:,.1f}/s"
    elif outcome == "client":
        limit = f"the client cap {step.cap_name or step.in_flight_cap} limited the step at {step.rate:,.1f}/s"
    marginal = outcome == "target" and checks.soft == 1 and len(checks.missed["target"]) == 1
    return StepVerdict(outcome == "pass", failures, tuple(checks.evidence), verdicts, trend, outcome, limit, marginal)
