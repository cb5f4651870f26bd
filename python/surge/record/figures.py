"""Figures: the one reader of the numbers of a run's summary document (summary.json, a
``--json`` document, an import's ``surge.result/1``): the figures the history keeps as columns
(and ``surge baseline check`` compares), the key figures an experiment compares across runs
(docs/experiments.md), and the counts the diagnosis rules read. A figure the document does not
hold (an import's tool did not report it, a run that measured nothing) is None, never
estimated; ``count`` and ``number`` read such a figure as 0 for the rules that add them up."""

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


def count(mapping: Mapping[str, Any] | None, key: str) -> int:
    """count is ``mapping[key]`` as an int: 0 when absent or None (a figure an import lacks)."""
    return int((mapping or {}).get(key) or 0)


def number(mapping: Mapping[str, Any] | None, key: str) -> float:
    """number is ``mapping[key]`` as a float: 0.0 when absent or None."""
    return float((mapping or {}).get(key) or 0.0)


def ended(requests: Mapping[str, Any]) -> int:
    """ended is how many requests of ``requests`` came to an end: succeeded, failed or
    interrupted (the base of the success and failure rates)."""
    return count(requests, "succeeded") + count(requests, "failed") + count(requests, "interrupted")


def failure_class(requests: Mapping[str, Any], name: str) -> int:
    """failure_class is the count of the failure class ``name`` in ``requests``."""
    return count(requests.get("failure_classes"), name)
