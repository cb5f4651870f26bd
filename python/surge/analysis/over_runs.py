"""The analysis of repeat and stats: each key figure described over the runs (surge.analysis.
describe), the flags that follow (outliers, high CV, too few runs) and the thresholds'
verdicts, per run and overall; computed from experiment.json's run entries alone, so that
``surge show`` reprints exactly what the command printed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from surge.analysis.describe import DEFAULT_CONFIDENCE, DEFAULT_CV_LIMIT, describe_runs, flags
from surge.record.figures import FIGURE_TITLES, figure_names


def usable(entry: Mapping[str, Any]) -> str | None:
    """usable says why a run entry is left out of the statistics (its record is incomplete: a
    stop signal, a failed write, nothing measured), or None when it counts."""
    if not entry.get("complete"):
        return "its record is incomplete"
    if not entry.get("figures"):
        return "it holds no result"
    return None


def verdict_counts(entries: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """verdict_counts counts the runs by thresholds' verdict: runs, passed, failed, none."""
    counts = {"runs": len(entries), "passed": 0, "failed": 0, "none": 0}
    for entry in entries:
        counts[str(entry.get("verdict") or "none")] += 1
    return counts


def analyse(
    entries: Sequence[Mapping[str, Any]], *, confidence: float = DEFAULT_CONFIDENCE, cv_limit: float = DEFAULT_CV_LIMIT
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """analyse is (analysis, findings) over the run entries: the statistics of every figure
    over the usable runs (``used``, by label; ``left_out`` with why), the verdict counts over
    every run; findings are the flags as JSON objects."""
    used = [e for e in entries if usable(e) is None]
    left_out = [{"label": e["label"], "why": usable(e)} for e in entries if usable(e) is not None]
    figures = [e["figures"] for e in used]
    descriptions = describe_runs(figures, figure_names(figures), confidence=confidence)
    found = (
        flags(descriptions, [str(e["label"]) for e in used], cv_limit=cv_limit, titles=FIGURE_TITLES) if used else []
    )
    analysis = {
        "confidence": confidence,
        "cv_limit": cv_limit,
        "used": [e["label"] for e in used],
        "left_out": left_out,
        "statistics": {k: d.to_dict() for k, d in descriptions.items()},
        "verdicts": verdict_counts(entries),
    }
    return analysis, [f.to_dict() for f in found]


def verdict_line(counts: Mapping[str, int], failed_labels: Sequence[str] = ()) -> str:
    """verdict_line is the thresholds' overall verdict: ``10 of 10 runs passed``, ``8 of 10 runs
    passed; failed: run 3, run 7`` or ``no thresholds`` (the runs had none)."""
    judged = counts["passed"] + counts["failed"]
    if judged == 0:
        return "no thresholds"
    line = f"{counts['passed']} of {counts['runs']} runs passed their thresholds"
    if failed_labels:
        line += "; failed: " + ", ".join(f"run {label}" for label in failed_labels)
    return line
