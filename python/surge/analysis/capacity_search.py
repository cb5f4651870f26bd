"""Capacity search: the highest arrival rate a target sustains under an SLO, by exponential
bracketing, bisection (guided by the rate an overloaded step served) to a relative precision,
and a confirmation run; every step kept with its verdict and evidence. Only steps that say
something about the target (passed, or failed on the target's account) move the bracket as
the target's; a step the generator or a client-side cap limited bounds it from above as that
limit, named in the answer. See docs/analysis.md ("Capacity")."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from surge.analysis.steadiness import SLACK_REQUESTS, Outcome, Steadiness, Step, StepVerdict, judge_step
from surge.plan.thresholds import Threshold

Phase = Literal["bracket", "bisect", "confirm"]
"""Phase is the part of the search a step belongs to."""

StopReason = Literal[
    "found", "max_rate", "max_steps", "nothing_passed", "unconfirmed", "interrupted", "generator_limit", "client_limit"
]
"""StopReason says how a search ended: ``found`` (a confirmed rate), ``max_rate`` (the bound
passed: capacity is at least it), ``max_steps`` (the step budget ran out), ``nothing_passed``
(not even the lowest rate tried), ``unconfirmed`` (the confirmations failed), ``interrupted``,
``generator_limit`` (the generator could not keep the schedule above the rate found, or at any
rate tried: the target's limit was not reached), ``client_limit`` (a client-side cap limited the
steps above the rate found)."""

Measure = Callable[[float], Step]
"""Measure runs one short open-model run at a rate (per second) and returns what it measured."""

DEFAULT_PRECISION = 0.02
"""DEFAULT_PRECISION is the bracket's relative width, (high − low) / low, bisection stops at."""

DEFAULT_MAX_STEPS = 30
"""DEFAULT_MAX_STEPS bounds the runs of one search, confirmations included."""

CONFIRMATIONS = 3
"""CONFIRMATIONS is how many confirmation runs a search makes at most, each a precision's
width below the last that failed on the target's account, or below the rate that one served
when less (one the generator limited is run again at the same rate)."""

LOWEST_FRACTION = 1 / 1024
"""LOWEST_FRACTION of the start rate is the lowest rate tried (ten halvings) by default."""

GENERATOR_GIVE_UP = 3
"""GENERATOR_GIVE_UP consecutive steps the generator limited, with none passed yet, end the
search: the generator cannot keep any schedule here."""

NARROW_TOLERANCE = 1e-9
"""NARROW_TOLERANCE: a bracket within precision × (1 + this) is narrow enough (rounding)."""

CONTRADICTION = 0.1
"""CONTRADICTION: a pass more than this fraction above the rate an overloaded step served
contradicts that failure: its rate is measured again (once)."""

OVERLOADED = 0.05
"""OVERLOADED: a step that failed on the target's account serving less than the rate by more
than this fraction was overloaded: what it served is the target's throughput, a measurement
of its capacity (pooled over such steps: CapacitySearch.overloaded_rate)."""

LIMIT_STOPS: dict[Outcome, StopReason] = {"generator": "generator_limit", "client": "client_limit"}
"""LIMIT_STOPS is the stop reason of a search whose bracket a non-target limit closed."""


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
    ``limit`` (what failed at ``high`` when it was not the target: the generator's schedule or
    a client cap, in words; None when the target's own limit bounds the bracket); ``best``
    (the highest step that passed, confirmed or not, None when none did); ``stop_reason``, all
    ``steps`` in order, and ``notes`` in words."""

    rate: float | None
    high: float | None
    confirmed: bool
    stop_reason: StopReason
    steps: list[SearchStep]
    notes: list[str] = field(default_factory=list)
    limit: str | None = None
    best: SearchStep | None = None


class CapacitySearch:
    """CapacitySearch finds the capacity under ``slo`` from ``start_rate`` (per second):
    doubling until a step fails (going down while the start fails, to just below the rate an
    overloaded step served or by halving, down to ``min_rate``), never above ``max_rate``;
    narrowing until (high − low) / low ≤ ``precision`` (first just below the rate the failing
    step served, then just above the bottom when that passed, else by bisection); then
    confirming the highest passing rate, stepping down a precision's width when a confirmation
    fails on the target's account. A step the generator or a client cap limited closes the bracket
    from above as that limit (``result().limit``).
    ``steps`` grows as it goes (kept when ``measure`` is interrupted: ``result("interrupted")``);
    ``on_step`` is called with each step as it is judged."""

    def __init__(
        self,
        slo: Sequence[Threshold],
        start_rate: float,
        *,
        max_rate: float | None = None,
        min_rate: float | None = None,
        precision: float = DEFAULT_PRECISION,
        max_steps: int = DEFAULT_MAX_STEPS,
        steadiness: Steadiness | None = None,
        on_step: Callable[[SearchStep], None] | None = None,
    ) -> None:
        if start_rate <= 0 or (max_rate is not None and max_rate < start_rate):
            raise ValueError(f"a capacity search needs 0 < start rate ≤ max rate, got {start_rate}, {max_rate}")
        if not 0 < precision < 1 or max_steps < 1:
            raise ValueError(
                f"a capacity search needs 0 < precision < 1 and max steps ≥ 1, got {precision}, {max_steps}"
            )
        self.slo, self.start_rate, self.max_rate = list(slo), start_rate, max_rate
        self.min_rate = min_rate if min_rate is not None else start_rate * LOWEST_FRACTION
        self.precision, self.max_steps, self.on_step = precision, max_steps, on_step
        self.steadiness = steadiness if steadiness is not None else Steadiness()
        self.steps: list[SearchStep] = []
        self.low: float | None = None
        self.high: float | None = None
        self.high_step: SearchStep | None = None
        self.notes: list[str] = []
        self._estimate_spent = False
        self._close_next = False
        self._rechecked: set[float] = set()

    def _probe(self, measure: Measure, rate: float, phase: Phase) -> SearchStep:
        step = measure(rate)
        found = SearchStep(len(self.steps) + 1, phase, step, judge_step(step, self.slo, self.steadiness))
        self.steps.append(found)
        if self.on_step is not None:
            self.on_step(found)
        return found

    def _fail(self, step: SearchStep) -> None:
        # A failure below the bracket's top becomes its top, with what failed there.
        self.high, self.high_step, self._estimate_spent = step.rate, step, False

    def _budget(self) -> bool:
        return len(self.steps) < self.max_steps

    def best(self) -> SearchStep | None:
        """best is the highest-rate step that passed so far (the latest among equals)."""
        passed = [s for s in self.steps if s.passed]
        return max(reversed(passed), key=lambda s: s.rate) if passed else None

    def limit(self) -> str | None:
        """limit is what failed at the bracket's top when it was not the target, in words."""
        return self.high_step.verdict.limit if self.high_step is not None else None

    def result(self, stop_reason: StopReason, confirmed: bool = False) -> CapacityResult:
        """result is the answer from the steps so far: the bracket's highest passing rate."""
        return CapacityResult(
            self.low, self.high, confirmed, stop_reason, list(self.steps), list(self.notes), self.limit(), self.best()
        )

    def _served_estimate(self, step: SearchStep) -> float | None:
        # The rate an overloaded step served is the target's throughput there: an estimate of
        # its capacity (only from a failure on the target's account that fell short of the rate).
        served = step.step.achieved()
        if step.verdict.outcome != "target" or served is None or not 0 < served < step.rate:
            return None
        return served

    def overloaded_rate(self) -> float | None:
        """overloaded_rate is what the target served whenever it was overloaded (steps failed on
        its account serving short of the rate by more than OVERLOADED), pooled over their load
        time: a less noisy measure of its throughput than any one short step (against a variable
        service time a 2 s step serves ±5 % of the mean rate). A step whose rate passed when
        measured again (a contradicted failure: a pause of the machine) is left out; a pass at a
        rate of its own does not set evidence aside, or a lucky pass would clear its own way.
        None before any such step."""
        measured = [
            (served, s.step.duration_s or 1.0)
            for s in self.steps
            if s.verdict.outcome == "target"
            and (served := s.step.achieved()) is not None
            and 0 < served < s.rate * (1 - OVERLOADED)
            and not any(later.passed and later.rate == s.rate for later in self.steps[s.number :])
        ]
        if not measured:
            return None
        return sum(r * t for r, t in measured) / sum(t for _, t in measured)

    def _contradicts_overload(self, step: SearchStep) -> float | None:
        # The pooled overloaded rate when a pass needed more than it: the least served a pass
        # needs (min_achieved of the rate, less the slack) is above what the target served
        # whenever it could not keep up, so the pass was a lucky short run.
        pooled = self.overloaded_rate()
        slack = SLACK_REQUESTS / step.step.duration_s if step.step.duration_s else 0.0
        needed = step.rate * self.steadiness.min_achieved - slack
        return pooled if pooled is not None and needed > pooled else None

    def _below(self, failed: SearchStep) -> float:
        estimate = self._served_estimate(failed)
        return estimate * (1 - self.precision) if estimate is not None else failed.rate / 2

    def _bracket(self, measure: Measure, rate: float) -> StopReason | None:
        generator_streak = 0
        while self._budget():
            step = self._probe(measure, rate, "bracket")
            if step.passed:
                self.low, generator_streak = rate, 0
                if self.high is not None:
                    return None
                if self.max_rate is not None and rate >= self.max_rate:
                    self.notes.append(
                        f"the target sustained the maximum rate {rate:,.1f}/s: its capacity is at least that"
                    )
                    return "max_rate"
                rate = min(rate * 2, self.max_rate) if self.max_rate is not None else rate * 2
                continue
            self._fail(step)
            if self.low is not None:
                return None
            generator_streak = generator_streak + 1 if step.verdict.outcome == "generator" else 0
            if generator_streak >= GENERATOR_GIVE_UP:
                self.notes.append(
                    f"the generator could not keep its schedule at any of the last {generator_streak} "
                    f"rates tried, down to {rate:,.2f}/s: no rate was measured against the target"
                )
                return "generator_limit"
            rate = self._below(step)
            if rate < self.min_rate:
                self.notes.append(f"no rate passed, down to {self.high:,.2f}/s")
                return "nothing_passed"
        return "max_steps"

    def _next_rate(self) -> tuple[float, bool]:
        # The next rate to try inside the bracket and whether it is the served estimate.
        assert self.low is not None and self.high is not None and self.high_step is not None
        if self._close_next:
            self._close_next = False
            return self.low * (1 + self.precision), False
        estimate = None if self._estimate_spent else self._served_estimate(self.high_step)
        self._estimate_spent = True
        if estimate is not None:
            if estimate <= self.low * (1 + self.precision / 2):
                return self.low * (1 + self.precision), False  # the target is at its limit just above low
            probe = estimate * (1 - self.precision / 2)  # just below: it should pass, then close above it
            if self.low * (1 + self.precision / 2) < probe < self.high * (1 - self.precision / 2):
                return probe, True
        return (self.low + self.high) / 2, False

    def _contradicted(self) -> bool:
        # A target that served s/s when overloaded cannot sustain much more: a pass well above
        # s says the failure at the top was something else (a pause of the machine).
        assert self.low is not None and self.high_step is not None
        served = self._served_estimate(self.high_step)
        return served is not None and self.low > served * (1 + CONTRADICTION) and self.high not in self._rechecked

    def _bisect(self, measure: Measure) -> StopReason | Literal["reopen"] | None:
        assert self.low is not None and self.high is not None
        while (self.high - self.low) / self.low > self.precision * (1 + NARROW_TOLERANCE):
            if not self._budget():
                return "max_steps"
            if self._contradicted():
                assert self.high_step is not None
                self.notes.append(
                    f"step {self.high_step.number} at {self.high:,.1f}/s failed serving "
                    f"{self.high_step.step.achieved():,.1f}/s, but {self.low:,.1f}/s passed since: "
                    f"measuring {self.high:,.1f}/s again"
                )
                self._rechecked.add(self.high)
                step = self._probe(measure, self.high, "bisect")
                if step.passed:
                    self.low, self.high, self.high_step = step.rate, None, None
                    return "reopen"
                self._fail(step)
                continue
            rate, estimated = self._next_rate()
            step = self._probe(measure, rate, "bisect")
            if step.passed:
                self.low = rate
                self._close_next = estimated  # the estimate passed: try just above it next
            else:
                self._fail(step)
        return None

    def _confirm(self, measure: Measure, stop: StopReason) -> CapacityResult:
        assert self.low is not None
        rate, counted = self.low, False
        for _ in range(CONFIRMATIONS):
            if not self._budget():
                self.notes.append(f"no steps left to confirm {rate:,.1f}/s")
                return self.result("max_steps")
            step = self._probe(measure, rate, "confirm")
            overloaded = self._contradicts_overload(step) if step.passed else None
            if overloaded is not None:
                counted = True
                lower = overloaded * (1 - self.precision)
                self.notes.append(
                    f"the confirmation at {rate:,.1f}/s passed, above the {overloaded:,.1f}/s the target "
                    f"served whenever it was overloaded: a lucky run, stepping down to {lower:,.1f}/s"
                )
                self.low, self.high, self.high_step, rate = None, rate, step, lower
                continue
            if step.passed:
                self.low = rate
                limit = self.high_step.verdict.outcome if self.high_step is not None else "target"
                return self.result(LIMIT_STOPS.get(limit, stop) if stop == "found" else stop, confirmed=True)
            if not step.verdict.counted:
                self.notes.append(
                    f"the confirmation at {rate:,.1f}/s was not measured against the target "
                    f"({step.verdict.limit}): running it again"
                )
                continue
            counted = True
            # A confirmation the target fell behind in served what it can: step down below that
            # (a bisection pass well above the capacity, lucky on a noisy machine, is then left in
            # one step rather than a precision's width at a time).
            served = self._served_estimate(step)
            pooled = self.overloaded_rate() if served is not None else None
            if pooled is not None and pooled < rate:
                # One short run's shortfall is noisy: every overloaded step's, pooled, is less so.
                lower = pooled * (1 - self.precision)
                why = f" (below the {pooled:,.1f}/s the target served whenever it was overloaded)"
            else:
                lower = min(rate, served if served is not None else rate) * (1 - self.precision)
                why = f" (below the {served:,.1f}/s it served)" if served is not None else ""
            self.notes.append(f"the confirmation at {rate:,.1f}/s failed: stepping down to {lower:,.1f}/s{why}")
            self.low, self.high, self.high_step, rate = None, rate, step, lower
        self.notes.append(f"no rate confirmed in {CONFIRMATIONS} confirmations")
        if not counted:
            return self.result("generator_limit")
        return self.result("unconfirmed")

    def run(self, measure: Measure, bracket: Measure | None = None) -> CapacityResult:
        """run searches with ``measure`` (``bracket`` for the bracketing steps when given: far
        from the capacity a shorter run tells pass from fail; the narrowing and the
        confirmation use ``measure``). Exceptions from them, such as KeyboardInterrupt, pass
        through; the steps so far stay in ``steps``."""
        stop = self._bracket(bracket or measure, self.start_rate)
        while stop is None:
            narrowed = self._bisect(measure)
            if narrowed == "max_steps":
                self.notes.append(
                    f"the step budget ({self.max_steps}) ran out before the bracket narrowed to "
                    f"{self.precision:.0%}: the rate is the highest that passed, unconfirmed"
                )
                return self.result(narrowed)
            if narrowed != "reopen":
                break
            assert self.low is not None  # the top passed when measured again: bracket upwards from it
            if self.max_rate is not None and self.low >= self.max_rate:
                self.notes.append(
                    f"the target sustained the maximum rate {self.low:,.1f}/s: its capacity is at least that"
                )
                stop = "max_rate"
            else:
                stop = self._bracket(bracket or measure, min(self.low * 2, self.max_rate or math.inf))
        if stop in ("nothing_passed", "max_steps", "generator_limit"):
            return self.result(stop)
        return self._confirm(measure, stop or "found")


OUTCOME_WORDS = {"pass": "pass", "target": "fail", "generator": "generator-limited", "client": "client-capped"}
"""OUTCOME_WORDS is how a step's outcome is printed: pass, fail (the target's), generator-limited, client-capped."""


def _best_text(analysis: Mapping[str, Any]) -> str:
    best = analysis.get("best")
    if not best or best["rate"] == analysis["rate"]:
        return ""
    evidence = next((e for e in best["evidence"] if e.startswith("SLO met")), None)
    return f"; best passing {best['rate']:,.1f}/s (step {best['step']}{': ' + evidence if evidence else ''})"


def answer_text(analysis: Mapping[str, Any]) -> str:
    """answer_text is the search's answer in one sentence: the rate found (confirmed or not)
    and its bracket, or a lower bound with the limit that was not the target's (the generator's
    schedule, a client cap), or why there is none, and always the best passing rate when it is
    not the answer."""
    rate, high, reason = analysis["rate"], analysis["high"], analysis["stop_reason"]
    limit = analysis.get("limit")
    bracket = f"bracket [{rate:,.1f}, {high:,.1f}]/s" if rate is not None and high is not None else None
    if reason == "max_rate" and rate is not None:
        return f"capacity ≥ {rate:,.1f}/s: the maximum rate passed (--max-rate)"
    if reason in ("generator_limit", "client_limit"):
        state = "confirmed" if analysis["confirmed"] else "unconfirmed"
        found = f"capacity ≥ {rate:,.1f}/s ({state})" if rate is not None else "no rate measured against the target"
        why = limit or "the generator could not keep its schedule"
        return f"{found}: {why}; the target's own limit was not reached" + _best_text(analysis)
    if rate is None:
        return {
            "nothing_passed": "no rate passed the SLO",
            "unconfirmed": "no rate was confirmed",
            "interrupted": "interrupted before any step passed",
            "max_steps": "the step budget ran out before any step passed",
        }.get(reason, f"no rate found ({reason})") + _best_text(analysis)
    state = "confirmed" if analysis["confirmed"] else "unconfirmed"
    why = {"interrupted": ", interrupted", "max_steps": ", step budget spent"}.get(reason, "")
    return f"capacity {rate:,.1f}/s ({state}{why})" + (f" · {bracket}" if bracket else "") + _best_text(analysis)


def findings(analysis: Mapping[str, Any]) -> list[dict[str, Any]]:
    """findings are the search's answer and its notes, in sentences."""
    return [{"kind": "capacity", "text": answer_text(analysis)}] + [
        {"kind": "note", "text": note} for note in analysis["notes"]
    ]
