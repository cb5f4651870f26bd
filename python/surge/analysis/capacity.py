"""Capacity search: the highest arrival rate a target sustains under an SLO, by exponential
bracketing, bisection to a relative precision, and a confirmation run; every step kept with its
verdict and evidence. See docs/analysis.md ("Capacity")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from surge.analysis.steadiness import Steadiness, Step, StepVerdict, judge_step
from surge.thresholds import Threshold

Phase = Literal["bracket", "bisect", "confirm"]
"""Phase is the part of the search a step belongs to."""

StopReason = Literal["found", "max_rate", "max_steps", "nothing_passed", "unconfirmed", "interrupted"]
"""StopReason says how a search ended: ``found`` (a confirmed rate), ``max_rate`` (the bound
passed: capacity is at least it), ``max_steps`` (the step budget ran out), ``nothing_passed``
(not even the lowest rate tried), ``unconfirmed`` (the confirmations failed), ``interrupted``."""

Measure = Callable[[float], Step]
"""Measure runs one short open-model run at a rate (per second) and returns what it measured."""

DEFAULT_PRECISION = 0.02
"""DEFAULT_PRECISION is the bracket's relative width, (high − low) / low, bisection stops at."""

DEFAULT_MAX_STEPS = 30
"""DEFAULT_MAX_STEPS bounds the runs of one search, confirmations included."""

CONFIRMATIONS = 3
"""CONFIRMATIONS is how many confirmation runs a search makes at most, each a precision's
width below the last that failed."""

LOWEST_FRACTION = 1 / 1024
"""LOWEST_FRACTION of the start rate is the lowest rate tried (ten halvings) by default."""


@dataclass(frozen=True)
class SearchStep:
    """SearchStep is one run of the search: its number (from 1), ``phase``, what it measured
    (``step``) and the ``verdict`` with its evidence."""

    number: int
    phase: Phase
    step: Step
    verdict: StepVerdict

    @property
    def rate(self) -> float:
        """rate is the step's offered rate, per second."""
        return self.step.rate

    @property
    def passed(self) -> bool:
        """passed tells whether the step met the SLO and was steady."""
        return self.verdict.passed


@dataclass(frozen=True)
class CapacityResult:
    """CapacityResult is the search's answer: ``rate`` (the highest rate that passed, confirmed
    when ``confirmed``; None when none did or a failed confirmation left none) and ``high`` (the
    lowest rate that failed above it; None when none did): the bracket is [rate, high];
    ``stop_reason``, all ``steps`` in order, and ``notes`` in words."""

    rate: float | None
    high: float | None
    confirmed: bool
    stop_reason: StopReason
    steps: list[SearchStep]
    notes: list[str] = field(default_factory=list)


class CapacitySearch:
    """CapacitySearch finds the capacity under ``slo`` from ``start_rate`` (per second):
    doubling until a step fails (halving while the start fails, down to ``min_rate``), never
    above ``max_rate``; bisecting until (high − low) / low ≤ ``precision``; then confirming the
    highest passing rate, stepping down a precision's width when a confirmation fails. ``steps``
    grows as it goes (kept when ``measure`` is interrupted: ``result("interrupted")``);
    ``on_step`` is called with each step as it is judged."""

    def __init__(self, slo: Sequence[Threshold], start_rate: float, *, max_rate: float | None = None,
                 min_rate: float | None = None, precision: float = DEFAULT_PRECISION,
                 max_steps: int = DEFAULT_MAX_STEPS, steadiness: Steadiness = Steadiness(),
                 on_step: Callable[[SearchStep], None] | None = None) -> None:
        if start_rate <= 0 or (max_rate is not None and max_rate < start_rate):
            raise ValueError(f"a capacity search needs 0 < start rate ≤ max rate, got {start_rate}, {max_rate}")
        if not 0 < precision < 1 or max_steps < 1:
            raise ValueError(f"a capacity search needs 0 < precision < 1 and max steps ≥ 1, got {precision}, {max_steps}")
        self.slo, self.start_rate, self.max_rate = list(slo), start_rate, max_rate
        self.min_rate = min_rate if min_rate is not None else start_rate * LOWEST_FRACTION
        self.precision, self.max_steps, self.steadiness, self.on_step = precision, max_steps, steadiness, on_step
        self.steps: list[SearchStep] = []
        self.low: float | None = None
        self.high: float | None = None
        self.notes: list[str] = []

    def _probe(self, measure: Measure, rate: float, phase: Phase) -> bool:
        step = measure(rate)
        found = SearchStep(len(self.steps) + 1, phase, step, judge_step(step, self.slo, self.steadiness))
        self.steps.append(found)
        if self.on_step is not None:
            self.on_step(found)
        return found.passed

    def _budget(self) -> bool:
        return len(self.steps) < self.max_steps

    def result(self, stop_reason: StopReason, confirmed: bool = False) -> CapacityResult:
        """result is the answer from the steps so far: the bracket's highest passing rate."""
        return CapacityResult(self.low, self.high, confirmed, stop_reason, list(self.steps), list(self.notes))

    def _bracket(self, measure: Measure) -> StopReason | None:
        rate = self.start_rate
        while self._budget():
            if self._probe(measure, rate, "bracket"):
                self.low = rate
                if self.high is not None:
                    return None
                if self.max_rate is not None and rate >= self.max_rate:
                    self.notes.append(f"the target sustained the maximum rate {rate:,.1f}/s: its capacity is at least that")
                    return "max_rate"
                rate = min(rate * 2, self.max_rate) if self.max_rate is not None else rate * 2
            else:
                self.high = rate
                if self.low is not None:
                    return None
                rate /= 2
                if rate < self.min_rate:
                    self.notes.append(f"no rate passed, down to {self.high:,.2f}/s")
                    return "nothing_passed"
        return "max_steps"

    def _bisect(self, measure: Measure) -> StopReason | None:
        assert self.low is not None and self.high is not None
        while (self.high - self.low) / self.low > self.precision:
            if not self._budget():
                return "max_steps"
            middle = (self.low + self.high) / 2
            if self._probe(measure, middle, "bisect"):
                self.low = middle
            else:
                self.high = middle
        return None

    def _confirm(self, measure: Measure, stop: StopReason) -> CapacityResult:
        assert self.low is not None
        rate = self.low
        for _ in range(CONFIRMATIONS):
            if not self._budget():
                self.notes.append(f"no steps left to confirm {rate:,.1f}/s")
                return self.result("max_steps")
            if self._probe(measure, rate, "confirm"):
                self.low = rate
                return self.result(stop, confirmed=True)
            lower = rate * (1 - self.precision)
            self.notes.append(f"the confirmation at {rate:,.1f}/s failed: stepping down to {lower:,.1f}/s")
            self.low, self.high, rate = None, rate, lower
        self.notes.append(f"no rate confirmed in {CONFIRMATIONS} confirmations")
        return self.result("unconfirmed")

    def run(self, measure: Measure) -> CapacityResult:
        """run searches with ``measure`` (exceptions from it, such as KeyboardInterrupt, pass
        through; the steps so far stay in ``steps``)."""
        stop = self._bracket(measure)
        if stop in ("nothing_passed", "max_steps"):
            return self.result(stop)
        if stop is None:
            stop = self._bisect(measure)
            if stop == "max_steps":
                self.notes.append(f"the step budget ({self.max_steps}) ran out before the bracket narrowed to "
                                  f"{self.precision:.0%}: the rate is the highest that passed, unconfirmed")
                return self.result(stop)
        return self._confirm(measure, stop or "found")
