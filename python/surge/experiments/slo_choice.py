"""The SLO a sweep or a capacity search judges its runs by (docs/experiments.md): the ``--slo``
conditions when given, else the scenario's thresholds, else none (a sweep then draws its zones
with the default SLO; a capacity search refuses). Each run is judged on its own result
document, so every threshold form works: any percentile, a scenario or tag scope."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from surge.analysis.slo import slo_conditions, with_goodput
from surge.plan.thresholds import Threshold, Verdict, evaluate, goodput_bounds, percentiles
from surge.run.spec import PreparedRun

SloSource = Literal["--slo", "thresholds", "default"]
"""SloSource says where an experiment's SLO came from: the ``--slo`` flags, the scenario's
thresholds, or none given (the sweep's default SLO)."""


@dataclass(frozen=True)
class Slo:
    """Slo: the conditions an experiment judges each run by and where they came from."""

    conditions: list[Threshold]
    source: SloSource

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the SLO as experiment.json holds it: its source and each condition's
        expression and scope."""
        return {"source": self.source, "conditions": [{"expr": t.expr, "scope": t.scope()} for t in self.conditions]}

    def judge(self, summary: Mapping[str, Any]) -> list[Verdict]:
        """judge evaluates every condition against a run's summary document (its result)."""
        return evaluate(self.conditions, summary) if self.conditions else []


def choose_slo(expressions: Sequence[str], prepared: PreparedRun) -> Slo:
    """choose_slo is ``--slo`` (BadInput naming it for a bad expression), else the scenario's
    thresholds, else none (source ``default``); with a bound on TTFT or TPOT, goodput joins
    them (``surge.analysis.slo.with_goodput``)."""
    if expressions:
        return Slo(slo_conditions(expressions), "--slo")
    if prepared.compiled.thresholds:
        return Slo(with_goodput(list(prepared.compiled.thresholds)), "thresholds")
    return Slo([], "default")


def with_slo_percentiles(prepared: PreparedRun, slo: Slo) -> PreparedRun:
    """with_slo_percentiles is ``prepared`` whose runs also report the percentiles the SLO
    reads (``p(99.5) < 80ms`` needs p99.5 in every summary) and count the goodput its latency
    conditions bound (``ttft p(95) < 500ms``: each request's TTFT within 500 ms)."""
    extra = percentiles(slo.conditions)
    goodput = goodput_bounds(slo.conditions)
    if not extra and goodput is None:
        return prepared
    main = prepared.compiled.main
    wanted = sorted(set(main.percentiles) | set(extra))
    compiled = replace(prepared.compiled, main=replace(main, percentiles=wanted, goodput=goodput or main.goodput))
    return replace(prepared, compiled=compiled)


def verdicts_document(verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    """verdicts_document lists verdicts as experiment.json holds them: expression, scope,
    status (pass, fail, no-data), observed value and its text, and a note."""
    return [
        {
            "expr": v.threshold.expr,
            "scope": v.threshold.scope(),
            "status": v.status,
            "observed": v.observed,
            "observed_text": v.observed_text(),
            "note": v.note,
        }
        for v in verdicts
    ]
