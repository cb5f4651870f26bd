"""The analysis of ``surge compare``, from experiment.json's run entries alone (so that ``surge
show`` reprints what the command printed): each variant's estimate of every figure, each
variant against the reference figure by figure (``surge.analysis.compare``), the scaling
between load levels when the variants are load levels (``surge.analysis.scaling``), and the
findings: every significant difference, every figure not tested, every scaling warning."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from surge.analysis.compare import ALPHA, FigureComparison, compare_figure
from surge.analysis.direction import Better, better
from surge.analysis.estimate import Estimate, estimate
from surge.analysis.scaling import scaling
from surge.experiments.figures import FIGURE_TITLES, figure_names
from surge.experiments.over_runs import usable, verdict_counts

SEED = 12
"""SEED fixes the bootstrap's resamples: the same runs give the same intervals every time."""

CONFIDENCE = 0.95
"""CONFIDENCE is the level of every interval of a comparison."""


def direction_of(figure: str) -> Better | None:
    """direction_of is the direction ``figure`` improves in: a key figure's, or for a
    threshold's figure (``p(95) < 200ms [all]``) its expression's."""
    return better(figure) or better(figure.rsplit(" [", 1)[0])


def _number(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def _estimate(found: Estimate | None) -> dict[str, Any] | None:
    return None if found is None else {k: _number(v) if isinstance(v, float) else v for k, v in asdict(found).items()}


def comparison_dict(c: FigureComparison) -> dict[str, Any]:
    """comparison_dict is one figure's comparison as experiment.json holds it."""
    return {"figure": c.figure, "reference": _estimate(c.reference), "variant": _estimate(c.variant),
            "difference": _number(c.difference), "ratio": _number(c.ratio),
            "ratio_ci": list(c.ratio_ci) if c.ratio_ci is not None else None,
            "welch_p": _number(c.welch_p), "mann_whitney_p": _number(c.mann_whitney_p), "verdict": c.verdict,
            "note": c.note, "alpha": c.alpha}


def _values(runs: Sequence[Mapping[str, Any]], figure: str) -> list[float | None]:
    return [run["figures"].get(figure) for run in runs]


def _scalings(groups: Mapping[str, list[Mapping[str, Any]]], loads: Mapping[str, float],
              resamples: int | None) -> list[dict[str, Any]]:
    ordered = sorted(loads, key=lambda name: loads[name])
    found = []
    for light, heavy in zip(ordered, ordered[1:]):
        extra = {} if resamples is None else {"resamples": resamples}
        s = scaling(loads[light], [r["figures"] for r in groups[light]], loads[heavy],
                    [r["figures"] for r in groups[heavy]], confidence=CONFIDENCE, seed=SEED, **extra)
        found.append({"light": light, "heavy": heavy, "light_load": s.light_load, "heavy_load": s.heavy_load,
                      "load_ratio": s.load_ratio, "throughput_ratio": s.throughput_ratio,
                      "throughput_ratio_ci": list(s.throughput_ratio_ci) if s.throughput_ratio_ci else None,
                      "efficiency": s.efficiency, "efficiency_ci": list(s.efficiency_ci) if s.efficiency_ci else None,
                      "degradation": s.degradation, "degradation_factor": s.degradation_factor, "text": s.text(),
                      "warnings": list(s.warnings)})
    return found


def _title(figure: str) -> str:
    return FIGURE_TITLES.get(figure, figure)


def mann_whitney_floor(n_reference: int, n_variant: int) -> float:
    """mann_whitney_floor is the smallest two-sided p-value Mann–Whitney's exact test can give
    with these many runs a side, 2 / C(n₁ + n₂, n₁) (0.1 with 3 and 3, 0.029 with 4 and 4)."""
    return min(1.0, 2 / math.comb(n_reference + n_variant, n_reference))


def _findings(comparisons: list[dict[str, Any]], scalings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for pair in comparisons:
        if pair["mann_whitney_floor"] is not None and pair["mann_whitney_floor"] >= pair["alpha"]:
            found.append({"kind": "few_runs", "text": f"{pair['variant']} against {pair['reference']}: with "
                          f"{pair['n'][0]} and {pair['n'][1]} runs Mann–Whitney's p is at least "
                          f"{pair['mann_whitney_floor']:.3g}, never below α = {pair['alpha']:g} (the verdicts "
                          "follow Welch's test; run more for both to agree)"})
        for c in pair["figures"]:
            where = f"{pair['variant']} against {pair['reference']}: {_title(c['figure'])}"
            if c["verdict"] in ("better", "worse", "different"):
                ratio = f" ({c['ratio']:.3f}× the reference)" if c["ratio"] is not None else ""
                p = f"Welch p = {c['welch_p']:.3g}" if c["welch_p"] is not None else "exact"
                found.append({"kind": "difference", "text": f"{where} {c['verdict']}{ratio}, {p} < α = {c['alpha']:g}"})
            elif c["verdict"] == "not tested":
                found.append({"kind": "not_tested", "text": f"{where} not tested: {c['note']}"})
    for s in scalings:
        found += [{"kind": "scaling", "text": f"{s['heavy']} against {s['light']}: {w}"} for w in s["warnings"]]
    return found


def analyse(entries: Sequence[Mapping[str, Any]], variants: Sequence[str], *, reference: str, alpha: float = ALPHA,
            loads: Mapping[str, float] | None = None, resamples: int | None = None
            ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """analyse is (analysis, findings) of a comparison over the run entries (each with its
    ``variant``): the runs used by variant and those left out (with why); every figure's
    estimate per variant; each variant against ``reference``, figure by figure at ``alpha``;
    with ``loads`` (variant → its load level) the scaling between consecutive levels."""
    used = [e for e in entries if usable(e) is None]
    left_out = [{"label": e["label"], "why": usable(e)} for e in entries if usable(e) is not None]
    groups: dict[str, list[Mapping[str, Any]]] = {name: [e for e in used if e.get("variant") == name]
                                                  for name in variants}
    names = figure_names([e["figures"] for e in used])
    estimates = {name: {f: _estimate(estimate(_values(runs, f), CONFIDENCE)) for f in names}
                 for name, runs in groups.items()}
    extra = {} if resamples is None else {"resamples": resamples}
    comparisons = [{"reference": reference, "variant": name, "alpha": alpha,
                    "n": [len(groups[reference]), len(runs)],
                    "mann_whitney_floor": mann_whitney_floor(len(groups[reference]), len(runs))
                    if groups[reference] and runs else None, "figures": [
        comparison_dict(compare_figure(f, _values(groups[reference], f), _values(runs, f), alpha=alpha,
                                       confidence=CONFIDENCE, seed=SEED, direction=direction_of(f), **extra))
        for f in names]} for name, runs in groups.items() if name != reference]
    scalings = _scalings(groups, loads, resamples) if loads else []
    analysis = {"confidence": CONFIDENCE, "alpha": alpha, "reference": reference, "variants": list(variants),
                "used": {name: [str(e["label"]) for e in runs] for name, runs in groups.items()},
                "left_out": left_out, "figures": names, "estimates": estimates, "comparisons": comparisons,
                "scaling": scalings, "verdicts": verdict_counts(entries)}
    return analysis, _findings(comparisons, scalings)
