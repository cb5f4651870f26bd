"""Direction: which way each key figure is better (lower latency and failure rate, higher
throughput), for the verdicts of comparisons and baseline checks."""

from __future__ import annotations

from typing import Literal

from surge.plan.thresholds import ThresholdError, parse_threshold

Better = Literal["higher", "lower"]
"""Better is the direction in which a figure improves."""

HIGHER_IS_BETTER = frozenset({"responses_per_s", "successes_per_s", "success_rate", "checks"})
"""HIGHER_IS_BETTER are the key figures where more is better (throughput, goodput, success)."""

LOWER_IS_BETTER = frozenset(
    {"p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99_9_ms", "mean_ms", "max_ms", "failure_rate", "dropped"}
)
"""LOWER_IS_BETTER are the key figures where less is better (latency, failures, dropped)."""


def better(figure: str) -> Better | None:
    """better is the direction ``figure`` improves in: the sets above, then by its unit (``_ms``
    lower, ``_per_s`` higher), then a threshold expression by its operator (``p(99) < 100ms``:
    lower); None when unknown."""
    if figure in HIGHER_IS_BETTER or figure.endswith("_per_s"):
        return "higher"
    if figure in LOWER_IS_BETTER or figure.endswith("_ms"):
        return "lower"
    try:
        op = parse_threshold(figure).op
    except ThresholdError:
        return None
    return "lower" if op in ("<", "<=") else "higher" if op in (">", ">=") else None
