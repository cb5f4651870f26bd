"""Level: one load level of a sweep (a number of VUs in the closed model, an arrival rate in
the open model) with its run's key figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from surge.analysis.slo import Figures
from surge.plan.thresholds import Verdict


@dataclass(frozen=True)
class Level:
    """Level is one measured load level: ``load`` (VUs or requests per second offered),
    ``figures`` (``responses_per_s``, ``successes_per_s``, ``p50_ms``, ``p95_ms``, ``p99_ms``,
    ``failure_rate``, …; None when missing), ``failure_classes`` (class → count), and
    ``verdicts`` when the SLO was judged on the run's own result (else the figures are judged)."""

    load: float
    figures: Figures
    failure_classes: Mapping[str, int] = field(default_factory=dict)
    verdicts: Sequence[Verdict] | None = None

    def figure(self, name: str) -> float | None:
        """figure is the named figure, None when missing or not a finite number."""
        value = self.figures.get(name)
        return None if value is None or value != value else float(value)
