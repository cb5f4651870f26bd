"""The analysis of ``surge compare``, from experiment.json's run entries alone (so that ``surge
show`` reprints what the command printed): each variant's estimate of every figure, every pair
of variants figure by figure (``surge.analysis.significance``; with variants × loads, every pair at
each load), each variant's figures against the order the runs ran in (``surge.analysis.drift``:
a trend makes every verdict of the variant's pairs say it may be drift), the scaling between
load levels (``surge.analysis.scaling``; with variants × loads, each variant's, and the
variants × loads table), and the findings: every significant difference, every drift, every
figure not tested, every scaling warning."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from itertools import combinations
from typing import Any

from surge.analysis.describe import Estimate, estimate
from surge.analysis.drift import DRIFT_ALPHA, DRIFT_MIN_CHANGE, DRIFT_MIN_RUNS, trend
from surge.analysis.over_runs import usable, verdict_counts
from surge.analysis.scaling import scaling
from surge.analysis.significance import ALPHA, Better, FigureComparison, better, compare_figure
from surge.record.figures import FIGURE_TITLES, KEY_FIGURES, figure_names

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
    return {
        "figure": c.figure,
        "reference": _estimate(c.reference),
        "variant": _estimate(c.variant),
        "difference": _number(c.difference),
        "ratio": _number(c.ratio),
        "ratio_ci": list(c.ratio_ci) if c.ratio_ci is not None else None,
        "welch_p": _number(c.welch_p),
        "mann_whitney_p": _number(c.mann_whitney_p),
        "welch_scale": c.welch_scale,
        "verdict": c.verdict,
        "note": c.note,
        "alpha": c.alpha,
    }


def _values(runs: Sequence[Mapping[str, Any]], figure: str) -> list[float | None]:
    return [run["figures"].get(figure) for run in runs]


def _scalings(
    groups: Mapping[str, list[Mapping[str, Any]]],
    loads: Mapping[str, float],
    resamples: int | None,
    variant: str | None = None,
) -> list[dict[str, Any]]:
    ordered = sorted(loads, key=lambda name: loads[name])
    found = []
    for light, heavy in itertools.pairwise(ordered):
        extra = {} if resamples is None else {"resamples": resamples}
        s = scaling(
            loads[light],
            [r["figures"] for r in groups[light]],
            loads[heavy],
            [r["figures"] for r in groups[heavy]],
            confidence=CONFIDENCE,
            seed=SEED,
            **extra,
        )
        found.append(
            {
                "variant": variant,
                "light": light,
                "heavy": heavy,
                "light_load": s.light_load,
                "heavy_load": s.heavy_load,
                "load_ratio": s.load_ratio,
                "throughput_ratio": s.throughput_ratio,
                "throughput_ratio_ci": list(s.throughput_ratio_ci) if s.throughput_ratio_ci else None,
                "efficiency": s.efficiency,
                "efficiency_ci": list(s.efficiency_ci) if s.efficiency_ci else None,
                "degradation": s.degradation,
                "degradation_factor": s.degradation_factor,
                "text": s.text(),
                "warnings": list(s.warnings),
            }
        )
    return found


def run_order(entries: Sequence[Mapping[str, Any]]) -> list[int]:
    """run_order is each entry's place (1, 2, ...) in the order the runs ran: by their start
    time when every entry has one (runs from the history), else as listed (new runs)."""
    indexed = list(range(len(entries)))
    if entries and all(e.get("started_at") for e in entries):
        indexed.sort(key=lambda i: (str(entries[i]["started_at"]), i))
    places = [0] * len(entries)
    for place, i in enumerate(indexed, 1):
        places[i] = place
    return places


def _drift(used: Sequence[Mapping[str, Any]], groups: Mapping[str, list[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """_drift is every (variant, key figure) whose values trend with run order (flagged only)."""
    place = dict(zip((id(e) for e in used), run_order(used), strict=True))
    found = []
    for name, runs in groups.items():
        for figure in KEY_FIGURES:
            t = trend([place[id(r)] for r in runs], [r["figures"].get(figure) for r in runs])
            if t.flagged:
                found.append({"variant": name, "figure": figure, **t.to_dict()})
    return found


def drift_text(d: Mapping[str, Any]) -> str:
    """drift_text says one trend in words: ``req/s trends with run order in A (Kendall τ = -0.87,
    p = 0.0014; -42 % from its first run to its last)``."""
    return (
        f"{_title(d['figure'])} trends with run order in {d['variant']} (Kendall τ = {d['tau']:+.2f}, "
        f"p = {d['p']:.2g}; {d['relative']:+.0%} from its first run to its last)"
    ).replace("%", " %")


def _pairs(
    variants: Sequence[str], reference: str, cells: Mapping[str, tuple[str, float]] | None
) -> list[tuple[str, str]]:
    """_pairs are the (reference side, variant side) pairs compared: every pair of variants, the
    reference first; with ``cells`` (variants × loads) every pair of variants at each load."""
    ordered = [reference] + [v for v in variants if v != reference]
    if not cells:
        return list(combinations(ordered, 2))
    by_load: dict[float, list[str]] = {}
    first = cells[reference][0] if reference in cells else None
    for name in sorted(ordered, key=lambda n: cells[n][0] != first):
        by_load.setdefault(cells[name][1], []).append(name)
    return [pair for load in sorted(by_load) for pair in combinations(by_load[load], 2)]


def _grid(
    cells: Mapping[str, tuple[str, float]], estimates: Mapping[str, Mapping[str, Any]], scalings: list[dict[str, Any]]
) -> dict[str, Any]:
    """_grid is the variants × loads table: per variant, per load, its cell and estimates of
    throughput and p95, and its scaling between consecutive loads."""
    variants = list(dict.fromkeys(v for v, _ in cells.values()))
    loads = sorted({load for _, load in cells.values()})
    rows = []
    for variant in variants:
        row_cells = []
        for load in loads:
            cell = next((c for c, (v, lv) in cells.items() if v == variant and lv == load), None)
            row_cells.append(
                {
                    "load": load,
                    "cell": cell,
                    **{f: (estimates.get(cell) or {}).get(f) if cell else None for f in ("responses_per_s", "p95_ms")},
                }
            )
        rows.append(
            {"variant": variant, "cells": row_cells, "scaling": [s for s in scalings if s["variant"] == variant]}
        )
    return {"variants": variants, "loads": loads, "rows": rows}


def _title(figure: str) -> str:
    return FIGURE_TITLES.get(figure, figure)


def mann_whitney_floor(n_reference: int, n_variant: int) -> float:
    """mann_whitney_floor is the smallest two-sided p-value Mann–Whitney's exact test can give
    with these many runs a side, 2 / C(n₁ + n₂, n₁) (0.1 with 3 and 3, 0.029 with 4 and 4)."""
    return min(1.0, 2 / math.comb(n_reference + n_variant, n_reference))


SIGNIFICANT = ("better", "worse", "different")
"""SIGNIFICANT are the verdicts that state a difference (those drift may explain)."""


def _findings(
    comparisons: list[dict[str, Any]], scalings: list[dict[str, Any]], drift: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    found = [
        {
            "kind": "drift",
            "text": f"{drift_text(d)}: a difference of {d['variant']} from another variant may "
            "be drift (the machine or the target changing over the experiment), not the "
            "variants",
        }
        for d in drift
    ]
    for pair in comparisons:
        if pair["mann_whitney_floor"] is not None and pair["mann_whitney_floor"] >= pair["alpha"]:
            found.append(
                {
                    "kind": "few_runs",
                    "text": f"{pair['variant']} against {pair['reference']}: with "
                    f"{pair['n'][0]} and {pair['n'][1]} runs Mann–Whitney's p is at least "
                    f"{pair['mann_whitney_floor']:.3g}, never below α = {pair['alpha']:g} (the verdicts "
                    "follow Welch's test; run more for both to agree)",
                }
            )
        for c in pair["figures"]:
            where = f"{pair['variant']} against {pair['reference']}: {_title(c['figure'])}"
            if c["verdict"] in SIGNIFICANT:
                ratio = f" ({c['ratio']:.3f}× the reference)" if c["ratio"] is not None else ""
                p = (
                    f"Welch p = {c['welch_p']:.3g}"
                    if c["welch_p"] is not None
                    else f"exact rank-test p = {c['mann_whitney_p']:.3g}"  # no variation on either side
                )
                maybe = " (may be drift)" if c.get("may_be_drift") else ""
                found.append(
                    {"kind": "difference", "text": f"{where} {c['verdict']}{maybe}{ratio}, {p} < α = {c['alpha']:g}"}
                )
            elif c["verdict"] == "not tested":
                found.append({"kind": "not_tested", "text": f"{where} not tested: {c['note']}"})
    for s in scalings:
        found += [{"kind": "scaling", "text": f"{s['heavy']} against {s['light']}: {w}"} for w in s["warnings"]]
    return found


def _pair(
    reference: str,
    variant: str,
    groups: Mapping[str, list[Mapping[str, Any]]],
    names: list[str],
    alpha: float,
    drift: list[dict[str, Any]],
    resamples: int | None,
) -> dict[str, Any]:
    extra = {} if resamples is None else {"resamples": resamples}
    ref, var = groups[reference], groups[variant]
    trends = [d for d in drift if d["variant"] in (reference, variant)]
    figures = [
        comparison_dict(
            compare_figure(
                f,
                _values(ref, f),
                _values(var, f),
                alpha=alpha,
                confidence=CONFIDENCE,
                seed=SEED,
                direction=direction_of(f),
                **extra,
            )
        )
        for f in names
    ]
    for c in figures:
        c["may_be_drift"] = bool(trends) and c["verdict"] in SIGNIFICANT
    return {
        "reference": reference,
        "variant": variant,
        "alpha": alpha,
        "n": [len(ref), len(var)],
        "mann_whitney_floor": mann_whitney_floor(len(ref), len(var)) if ref and var else None,
        "drift": [drift_text(d) for d in trends],
        "figures": figures,
    }


def analyse(
    entries: Sequence[Mapping[str, Any]],
    variants: Sequence[str],
    *,
    reference: str,
    alpha: float = ALPHA,
    loads: Mapping[str, float] | None = None,
    resamples: int | None = None,
    cells: Mapping[str, tuple[str, float]] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """analyse is (analysis, findings) of a comparison over the run entries (each with its
    ``variant``): the runs used by variant and those left out (with why); every figure's
    estimate per variant; every pair of variants (``reference`` first), figure by figure at
    ``alpha``; each variant's key figures against run order (``drift``: the flagged trends;
    every significant verdict of a pair with a trending side has ``may_be_drift``); with
    ``loads`` (variant → its load level) the scaling between consecutive levels. With ``cells``
    (variants × loads: each variant of ``variants`` is a cell, cell → (its variant, its load)),
    the pairs are those at one load, the scaling is each variant's between its loads, and
    ``grid`` is the variants × loads table."""
    used = [e for e in entries if usable(e) is None]
    left_out = [{"label": e["label"], "why": usable(e)} for e in entries if usable(e) is not None]
    groups: dict[str, list[Mapping[str, Any]]] = {
        name: [e for e in used if e.get("variant") == name] for name in variants
    }
    names = figure_names([e["figures"] for e in used])
    estimates = {
        name: {f: _estimate(estimate(_values(runs, f), CONFIDENCE)) for f in names} for name, runs in groups.items()
    }
    drift = _drift(used, groups)
    comparisons = [_pair(a, b, groups, names, alpha, drift, resamples) for a, b in _pairs(variants, reference, cells)]
    if cells:
        scalings = []
        for variant in dict.fromkeys(v for v, _ in cells.values()):
            mine = {c: load for c, (v, load) in cells.items() if v == variant and c in groups}
            scalings += _scalings(groups, mine, resamples, variant) if len(mine) > 1 else []
    else:
        scalings = _scalings(groups, loads, resamples) if loads else []
    analysis = {
        "confidence": CONFIDENCE,
        "alpha": alpha,
        "reference": reference,
        "variants": list(variants),
        "used": {name: [str(e["label"]) for e in runs] for name, runs in groups.items()},
        "left_out": left_out,
        "figures": names,
        "estimates": estimates,
        "comparisons": comparisons,
        "drift": drift,
        "drift_rule": {"alpha": DRIFT_ALPHA, "min_change": DRIFT_MIN_CHANGE, "min_runs": DRIFT_MIN_RUNS},
        "scaling": scalings,
        "grid": _grid(cells, estimates, scalings) if cells else None,
        "verdicts": verdict_counts(entries),
    }
    return analysis, _findings(comparisons, scalings, drift)
