"""Figures: the numbers of a run's summary document that the history keeps as columns (and
``surge baseline check`` compares); a figure the document does not hold is None (missing,
never estimated)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FIGURES = ("requests", "responses_per_s", "success_rate", "failure_rate", "p50_ms", "p95_ms", "p99_ms")
"""FIGURES are the figure columns of the ``runs`` table, in order."""


def value_at(doc: Mapping[str, Any], *keys: str) -> Any:
    """value_at is ``doc[k1][k2]...``, or None where a key is missing (a figure not recorded)."""
    value: Any = doc
    for key in keys:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def figures(doc: Mapping[str, Any]) -> dict[str, Any]:
    """figures reads FIGURES from a summary document: requests sent, responses per second over
    the run's window, success and failure rates (fractions), p50/p95/p99 of every response (ms)."""
    return {
        "requests": value_at(doc, "requests", "sent"),
        "responses_per_s": value_at(doc, "throughput", "responses_per_s"),
        "success_rate": value_at(doc, "requests", "success_rate"),
        "failure_rate": value_at(doc, "requests", "failure_rate"),
        **{f"p{p}_ms": value_at(doc, "latency", "all", f"p{p}_ms") for p in (50, 95, 99)},
    }


def verdict(doc: Mapping[str, Any]) -> str:
    """verdict is the thresholds' verdict: ``failed`` when one failed or aborted the run,
    ``passed`` when there were some and all passed, ``none`` without thresholds."""
    thresholds = doc.get("thresholds") or []
    if doc.get("aborted_by_threshold") or any(not t.get("passed", False) for t in thresholds):
        return "failed"
    return "passed" if thresholds else "none"


def has_result(doc: Mapping[str, Any]) -> bool:
    """has_result tells whether a summary document holds a result (a run killed outright left
    only its ``meta``)."""
    return "requests" in doc
