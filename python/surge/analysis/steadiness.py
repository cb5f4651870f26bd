"""Steadiness: whether one short open-model run (a capacity step) measured a load the target
sustains: the SLO met, the offered rate achieved, latency not trending up within the window,
and the generator on schedule. See docs/analysis.md ("Capacity: a step that passes")."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from surge.analysis.slo import Figures, describe, judge
from surge.thresholds import Threshold, Verdict


@dataclass(frozen=True)
class Step:
    """Step is what one capacity step measured (the backbone's ``measure(rate)`` returns it):
    the offered ``rate`` (per second), the run's ``figures``, ``interval_p95_ms`` (p95 of each
    interval of the measured window, in order; None for an interval without responses), the
    generator's counters ``sent``, ``late`` (sent more than 1 ms after their intended time)
    and ``dropped`` (never sent), ``achieved_per_s`` (None: the figures' ``responses_per_s``),
    and ``verdicts`` when the SLO was judged on the run's own result (else the figures are)."""

    rate: float
    figures: Figures
    interval_p95_ms: Sequence[float | None] = ()
    sent: int = 0
    late: int = 0
    dropped: int = 0
    achieved_per_s: float | None = None
    verdicts: Sequence[Verdict] | None = None

    def achieved(self) -> float | None:
        """achieved is the throughput the step reached: ``achieved_per_s`` or ``responses_per_s``."""
        return self.achieved_per_s if self.achieved_per_s is not None else self.figures.get("responses_per_s")


@dataclass(frozen=True)
class Steadiness:
    """Steadiness holds the limits of a steady step: ``min_achieved`` (achieved / offered),
    ``max_latency_rise`` (the rise of p95 across the window the Theil–Sen slope predicts, as a
    fraction of the window's median p95, when the slope's ``trend_confidence`` interval lies
    above 0), ``min_trend_intervals`` (fewer intervals: the trend is not tested),
    ``max_late`` (late / sent) and ``max_dropped`` (dropped / (sent + dropped))."""

    min_achieved: float = 0.99
    max_latency_rise: float = 0.25
    trend_confidence: float = 0.95
    min_trend_intervals: int = 4
    max_late: float = 0.05
    max_dropped: float = 0.001


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
    """StepVerdict says whether a step passed: ``failures`` (every check it missed, in words
    and numbers; empty when it passed), ``evidence`` (what every check measured), the SLO
    ``verdicts`` and the latency ``trend``."""

    passed: bool
    failures: tuple[str, ...]
    evidence: tuple[str, ...]
    verdicts: tuple[Verdict, ...] = ()
    trend: Trend = field(default_factory=lambda: Trend(0))


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


def _sort(line: str, missed: str | None, failures: list[str], evidence: list[str]) -> None:
    # A check's line goes to the failures with why it missed, else to the evidence.
    if missed is None:
        evidence.append(line)
    else:
        failures.append(f"{line} ({missed})")


def _schedule(step: Step, limits: Steadiness, failures: list[str], evidence: list[str]) -> None:
    achieved = step.achieved()
    if achieved is None:
        failures.append("no throughput measured")
    else:
        share = achieved / step.rate if step.rate > 0 else 0.0
        _sort(f"achieved {achieved:,.1f}/s = {share:.1%} of offered {step.rate:,.1f}/s",
              f"< {limits.min_achieved:.0%}" if share < limits.min_achieved else None, failures, evidence)
    late = step.late / step.sent if step.sent else 0.0
    _sort(f"generator late on {late:.1%} of {step.sent:,} sends",
          f"> {limits.max_late:.0%}: it did not keep its schedule" if late > limits.max_late else None,
          failures, evidence)
    due = step.sent + step.dropped
    dropped = step.dropped / due if due else 0.0
    _sort(f"{step.dropped:,} dropped of {due:,} due ({dropped:.2%})",
          f"> {limits.max_dropped:.1%}: the load was not all offered" if dropped > limits.max_dropped else None,
          failures, evidence)


def judge_step(step: Step, slo: Sequence[Threshold], limits: Steadiness = Steadiness()) -> StepVerdict:
    """judge_step passes a step only if every SLO condition passed (a condition without data
    fails) and it was steady: achieved ≥ ``min_achieved`` of offered, latency not rising, the
    generator late and dropping within limits."""
    verdicts = tuple(step.verdicts if step.verdicts is not None else judge(slo, step.figures))
    missed = [v for v in verdicts if not v.passed]
    met = [v for v in verdicts if v.passed]
    failures = [f"SLO missed: {describe(missed)}"] if missed else []
    evidence = [f"SLO met: {describe(met)}"] if met else []
    trend = latency_trend(step.interval_p95_ms, limits)
    if trend.slope_ms is None:
        evidence.append(f"latency trend not tested ({trend.intervals} intervals, need {limits.min_trend_intervals})")
    else:
        _sort(f"{'latency trending up: ' if trend.rising else ''}p95 slope {trend.slope_ms:+,.2f}ms per interval "
              f"(CI {trend.slope_low_ms:+,.2f} to {trend.slope_high_ms:+,.2f}), a {trend.rise:+.0%} rise "
              f"across the window", f"> {limits.max_latency_rise:.0%}" if trend.rising else None, failures, evidence)
    _schedule(step, limits, failures, evidence)
    return StepVerdict(not failures, tuple(failures), tuple(evidence), verdicts, trend)
