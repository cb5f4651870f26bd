"""SLO: judging a run's key figures against service-level conditions written as thresholds
(``p(99) < 100ms``, ``failure_rate < 0.1%``), for sweep zones and capacity steps.

A run's figures are a ``dict[str, float | None]``: ``responses_per_s``, ``successes_per_s``,
``p50_ms``, ``p95_ms``, ``p99_ms`` (and any ``percentile_key``), ``failure_rate`` (0–1),
optionally ``mean_ms``, ``min_ms``, ``max_ms``, ``dropped``, ``checks``; a threshold's own
figure may be stored under its expression (``"p(99) < 100ms"``), which is then read first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from surge.core.errors import BadInput
from surge.plan.thresholds import (
    NoHistogram,
    Status,
    Threshold,
    ThresholdError,
    Verdict,
    evaluate,
    goodput_share,
    parse_threshold,
    percentile_key,
)

Figures = Mapping[str, float | None]
"""Figures are one run's key figures by name (None: the record lacks that figure)."""


class FiguresSource:
    """FiguresSource is a ``surge.plan.thresholds.MetricSource`` over a run's key figures (the whole
    run only: scoped thresholds need the run's result document)."""

    def __init__(self, figures: Figures) -> None:
        self.figures = figures

    def percentile(self, metric: str, q: float) -> float | None:
        """percentile reads ``p{q}_ms`` of every response; NoHistogram for other metrics or missing keys."""
        key = percentile_key(q)
        if metric != "latency" or key not in self.figures:
            raise NoHistogram(f"the run's figures hold no {metric} p({q:g}) (need '{key}')")
        return self.figures[key]

    def stat(self, metric: str, name: str) -> float | None:
        """stat reads ``mean_ms``, ``min_ms`` or ``max_ms`` of every response."""
        key = "mean_ms" if name == "avg" else f"{name}_ms"
        if metric != "latency" or key not in self.figures:
            raise NoHistogram(f"the run's figures hold no {metric} {name} (need '{key}')")
        return self.figures[key]

    def failure_rate(self) -> float | None:
        """failure_rate reads ``failure_rate``."""
        return self.figures.get("failure_rate")

    def rate(self) -> float | None:
        """rate reads ``responses_per_s``."""
        return self.figures.get("responses_per_s")

    def checks(self) -> float | None:
        """checks reads ``checks`` (passed checks / checks run)."""
        return self.figures.get("checks")

    def dropped(self) -> float | None:
        """dropped reads ``dropped`` (iterations due but not started)."""
        return self.figures.get("dropped")

    def goodput(self) -> float | None:
        """goodput reads ``goodput`` (responses that met every goodput bound / all responses)."""
        return self.figures.get("goodput")


def parse_slo(expressions: Sequence[str]) -> list[Threshold]:
    """parse_slo parses ``--slo`` expressions (threshold syntax); ThresholdError names the bad one."""
    return [parse_threshold(e) for e in expressions]


TOKEN_METRICS = ("ttft", "tpot")
"""TOKEN_METRICS are the per-request bounds of an LLM serving SLO, which holds only when each
request meets them together (goodput), not when each holds on its own."""


def with_goodput(conditions: list[Threshold]) -> list[Threshold]:
    """with_goodput is ``conditions`` plus, when one bounds TTFT or TPOT and none judges
    goodput already, ``goodput >= Q``: Q the highest percentile of the conditions that bound
    each request (``ttft p(95) < 500ms`` and ``tpot p(95) < 50ms``: 95 % of the responses met
    both, not 95 % each). Latency bounds alone keep their own judgement: a run whose p99 and
    failure rate each hold is not failed for the 1 % they may miss together."""
    share = goodput_share(conditions)
    if share is None or not any(t.metric in TOKEN_METRICS for t in conditions):
        return conditions
    if any(t.stat == "goodput" for t in conditions):
        return conditions
    return [*conditions, parse_threshold(f"goodput >= {share * 100:g}%")]


def slo_conditions(expressions: Sequence[str], flag: str = "--slo") -> list[Threshold]:
    """slo_conditions are the conditions ``--slo`` expressions state (``parse_slo``), with
    goodput joined (``with_goodput``); BadInput naming ``flag`` for a bad expression."""
    try:
        return with_goodput(parse_slo(expressions))
    except ThresholdError as e:
        raise BadInput(flag, str(e)) from None


def judge(slo: Sequence[Threshold], figures: Figures) -> list[Verdict]:
    """judge evaluates every SLO condition against a run's figures, in order: a figure stored
    under the condition's expression is used as observed; a scoped condition without one, or a
    figure the run's figures do not hold, fails with a note saying which."""
    source = FiguresSource(figures)
    verdicts = []
    for t in slo:
        if t.expr in figures:
            observed = figures[t.expr]
            status: Status = "no-data" if observed is None else "pass" if t.holds(observed) else "fail"
            verdicts.append(Verdict(t, status, observed))
        elif t.tag is not None or t.scenario is not None:
            verdicts.append(Verdict(t, "fail", None, "a scoped condition needs the run's result document"))
        else:
            verdicts.extend(evaluate([t], lambda _tag, _scenario: source))
    return verdicts


def broken(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """broken are the verdicts that were measured and missed (``fail`` with an observed value);
    a condition without data does not count as broken."""
    return [v for v in verdicts if v.status == "fail" and v.observed is not None]


def describe(verdicts: Sequence[Verdict]) -> str:
    """describe lists verdicts as ``expr (observed)``, joined by ``, ``."""
    return ", ".join(f"{v.threshold.expr} (observed {v.observed_text()})" for v in verdicts)
