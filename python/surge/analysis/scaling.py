"""Scaling: how one variant's figures change between two load levels: load ratio, throughput
ratio, scaling efficiency (throughput ratio / load ratio) with its bootstrap interval, and the
degradation factors of latency and failures, as in seed 001 ("2.14× load → 1.38× p95, 2.40×
throughput, 112 % efficiency"). See docs/analysis.md ("Scaling")."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from surge.analysis.describe import finite
from surge.analysis.significance import RESAMPLES, ratio_of_means_ci
from surge.analysis.slo import Figures

DEGRADATION_FIGURES = ("p50_ms", "p95_ms", "p99_ms", "failure_rate")
"""DEGRADATION_FIGURES are the figures whose heavier/lighter ratio is a degradation factor."""


@dataclass(frozen=True)
class Scaling:
    """Scaling compares a heavier load level with a lighter one of the same variant:
    ``load_ratio`` (heavy / light load), ``throughput_ratio`` (mean responses per second, heavy
    / light) with ``throughput_ratio_ci`` (bootstrap), ``efficiency`` = throughput_ratio /
    load_ratio with ``efficiency_ci``, ``degradation`` (figure → heavy mean / light mean, None
    when the light mean is 0 or a side lacks it; ``p95_ms`` is *the* degradation factor), and
    ``warnings``."""

    light_load: float
    heavy_load: float
    load_ratio: float
    throughput_ratio: float | None
    throughput_ratio_ci: tuple[float, float] | None
    efficiency: float | None
    efficiency_ci: tuple[float, float] | None
    degradation: dict[str, float | None]
    warnings: tuple[str, ...] = ()

    @property
    def degradation_factor(self) -> float | None:
        """degradation_factor is the p95 ratio, heavy / light."""
        return self.degradation.get("p95_ms")

    def text(self) -> str:
        """text is the one-line summary: ``2.14× load → 1.38× p95, 2.40× throughput, 112 % efficiency``."""
        p95 = f"{self.degradation_factor:.2f}× p95" if self.degradation_factor is not None else "p95 n/a"
        throughput = (
            f"{self.throughput_ratio:.2f}× throughput" if self.throughput_ratio is not None else "throughput n/a"
        )
        efficiency = (
            f"{self.efficiency:.0%} efficiency".replace("%", " %") if self.efficiency is not None else "efficiency n/a"
        )
        return f"{self.load_ratio:.2f}× load → {p95}, {throughput}, {efficiency}"


def _mean_ratio(figure: str, light: Sequence[Figures], heavy: Sequence[Figures]) -> float | None:
    low, high = finite(run.get(figure) for run in light), finite(run.get(figure) for run in heavy)
    if not low or not high or statistics.fmean(low) == 0:
        return None
    return statistics.fmean(high) / statistics.fmean(low)


def _efficiency_warnings(efficiency: float, ci: tuple[float, float] | None, runs: int) -> list[str]:
    if efficiency <= 1:
        return []
    if ci is None:
        return [
            f"efficiency {efficiency:.0%} above 100 % from {runs} run(s) a level: without repeats it cannot be "
            "told from 100 % (run each level several times)"
        ]
    if ci[0] <= 1:
        return [f"efficiency {efficiency:.0%} cannot be told from 100 %: its 95 % interval is {ci[0]:.0%}–{ci[1]:.0%}"]
    return [
        f"efficiency {efficiency:.0%} is above 100 % beyond the noise (interval {ci[0]:.0%}–{ci[1]:.0%}): "
        "the lighter level was probably held back by something else (think time, warm-up, the generator)"
    ]


def scaling(
    light_load: float,
    light_runs: Sequence[Figures],
    heavy_load: float,
    heavy_runs: Sequence[Figures],
    *,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int | None = None,
) -> Scaling:
    """scaling compares the runs at ``heavy_load`` with those at ``light_load`` (VUs or rates,
    0 < light < heavy); the intervals need two runs a level. ValueError on loads out of order."""
    if not 0 < light_load < heavy_load:
        raise ValueError(f"scaling needs 0 < light load < heavy load, got {light_load} and {heavy_load}")
    load_ratio = heavy_load / light_load
    throughput_ratio = _mean_ratio("responses_per_s", light_runs, heavy_runs)
    ci = ratio_of_means_ci(
        finite(r.get("responses_per_s") for r in heavy_runs),
        finite(r.get("responses_per_s") for r in light_runs),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    efficiency = throughput_ratio / load_ratio if throughput_ratio is not None else None
    efficiency_ci = (ci[0] / load_ratio, ci[1] / load_ratio) if ci is not None else None
    warnings = (
        _efficiency_warnings(efficiency, efficiency_ci, min(len(light_runs), len(heavy_runs)))
        if efficiency is not None
        else ["no throughput at one of the levels: no efficiency"]
    )
    degradation = {f: _mean_ratio(f, light_runs, heavy_runs) for f in DEGRADATION_FIGURES}
    return Scaling(
        light_load,
        heavy_load,
        load_ratio,
        throughput_ratio,
        ci,
        efficiency,
        efficiency_ci,
        degradation,
        tuple(warnings),
    )
