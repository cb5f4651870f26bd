"""The over-saturation stop of a sweep's open-model levels and a capacity search's steps
(docs/experiments.md, "Over-saturation"): a StopRule that reads each live interval of the run
(the requests outstanding, the median TTFT, else the median latency) and, once
``surge.analysis.saturation.over_saturation`` finds both rising, stops the run as an
``abort_on_fail`` threshold would: its record is complete and its ``stopped_early`` says why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from surge.analysis.saturation import DEFAULT_RULE, IntervalPoint, SaturationRule, over_saturation

RULE_NAME = "over_saturation"
"""RULE_NAME is the ``rule`` of a record's ``stopped_early`` when this rule stopped the run."""

EDGE_S = 1e-6
"""EDGE_S is the tolerance when comparing an interval's start with the load's end."""


def _p50(interval: Mapping[str, Any], metric: str) -> float | None:
    summary = (interval.get("latency") or {}).get(metric) or {}
    value = summary.get("p50_ms")
    return float(value) if summary.get("count") and isinstance(value, (int, float)) else None


def interval_point(interval: Mapping[str, Any]) -> IntervalPoint:
    """interval_point is what the rule reads of one interval document: its end, its peak of
    requests outstanding (else those in flight at its end), its median TTFT and latency."""
    concurrency = interval.get("peak_concurrency", interval.get("in_flight"))
    return IntervalPoint(
        float(interval.get("end_s") or 0.0),
        float(concurrency) if isinstance(concurrency, (int, float)) else None,
        _p50(interval, "ttft"),
        _p50(interval, "all"),
    )


class SaturationWatch:
    """SaturationWatch is the StopRule of one open-model run of ``load_s`` seconds of load:
    the intervals of the load window are kept (the drain after it is not the load's), and the
    first time the rule holds it returns the ``stopped_early`` document: ``rule``, ``message``
    (``over-saturated after 6.0 s: concurrency 120 → 344, TTFT p50 2.0 s → 6.0 s; stopped
    early``) and the rule's ``evidence``."""

    def __init__(self, load_s: float, rule: SaturationRule = DEFAULT_RULE) -> None:
        self.load_s = load_s
        self.rule = rule
        self.points: list[IntervalPoint] = []

    def __call__(self, interval: dict[str, Any]) -> dict[str, Any] | None:
        """__call__ adds the interval and says whether to stop the run now (None: go on)."""
        if self.load_s > 0 and float(interval.get("start_s") or 0.0) >= self.load_s - EDGE_S:
            return None
        self.points.append(interval_point(interval))
        found = over_saturation(self.points, self.rule)
        if found is None:
            return None
        return {"rule": RULE_NAME, "message": f"{found.text()}; stopped early", "evidence": found.document()}


def stopped_text(summary: Mapping[str, Any]) -> str | None:
    """stopped_text is why the over-saturation rule stopped the run whose summary (or result)
    document this is, in one line; None when it did not."""
    stopped = summary.get("stopped_early")
    if not isinstance(stopped, Mapping) or stopped.get("rule") != RULE_NAME:
        return None
    return str(stopped.get("message") or "over-saturated; stopped early")
