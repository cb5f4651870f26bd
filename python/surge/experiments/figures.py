"""Key figures: the numbers of one run an experiment compares across runs, read from its
summary document (docs/experiments.md): throughput, goodput, p50/p95/p99 of every response,
the failure rate, and each threshold's observed figure. A figure the record does not hold (an
import's tool did not report it, a run that measured nothing) is None, never estimated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from surge.record.figures import value_at

Figures = dict[str, "float | None"]
"""Figures maps each key figure's name to its value in one run (None: not in the record)."""

KEY_FIGURES = ("responses_per_s", "successes_per_s", "p50_ms", "p95_ms", "p99_ms", "failure_rate")
"""KEY_FIGURES are the figures every run has a place for, in the order tables show them."""

FIGURE_TITLES = {
    "responses_per_s": "req/s",
    "successes_per_s": "goodput/s",
    "p50_ms": "p50 ms",
    "p95_ms": "p95 ms",
    "p99_ms": "p99 ms",
    "failure_rate": "failure rate",
}
"""FIGURE_TITLES are the key figures' short names in tables (a threshold's key is its own title)."""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def threshold_key(entry: Mapping[str, Any]) -> str:
    """threshold_key names a threshold's figure by its expression and scope, as the summary
    prints them: ``p(95) < 200ms [all]``, ``failure_rate < 1% [scenario 'reads', tag 'list']``."""
    parts = ([f"scenario '{entry['scenario']}'"] if entry.get("scenario") else []) + (
        [f"tag '{entry['tag']}'"] if entry.get("tag") else []
    )
    return f"{entry.get('expr', '?')} [{', '.join(parts) or 'all'}]"


def key_figures(summary: Mapping[str, Any]) -> Figures:
    """key_figures reads a run's summary document (summary.json, or a ``--json`` document):
    ``responses_per_s`` (completed responses per second over the run's window),
    ``successes_per_s`` (goodput), ``p50_ms``/``p95_ms``/``p99_ms`` (every response's latency
    from its intended send time; None when no response was timed), ``failure_rate`` (failed and
    interrupted over all requests that ended; None when nothing was sent), then each
    threshold's observed value under ``threshold_key``."""
    latency = value_at(summary, "latency", "all")
    timed = isinstance(latency, Mapping) and latency.get("count") != 0
    found: Figures = {
        "responses_per_s": _number(value_at(summary, "throughput", "responses_per_s")),
        "successes_per_s": _number(value_at(summary, "throughput", "successes_per_s")),
        **{
            f"p{p}_ms": _number(value_at(summary, "latency", "all", f"p{p}_ms")) if timed else None
            for p in (50, 95, 99)
        },
        "failure_rate": (
            None
            if value_at(summary, "requests", "sent") == 0
            else _number(value_at(summary, "requests", "failure_rate"))
        ),
    }
    for entry in summary.get("thresholds") or []:
        if isinstance(entry, Mapping):
            found[threshold_key(entry)] = _number(entry.get("observed"))
    return found


def figure_names(runs: list[Figures]) -> list[str]:
    """figure_names are the figures of ``runs`` in table order: KEY_FIGURES, then every
    threshold's key in the order first seen."""
    names = list(KEY_FIGURES)
    for figures in runs:
        names += [k for k in figures if k not in names]
    return names
