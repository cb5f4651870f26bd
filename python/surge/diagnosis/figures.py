"""Figures the diagnosis rules read from a result document (``surge.result/1``, a plain
dict), tolerant of imports whose source did not keep a figure (None reads as 0)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from surge.heading import PlanLike, is_open_model
from surge.plan import OPEN_MODEL_TYPES


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


def plan_dict(plan: PlanLike | None) -> dict[str, Any] | None:
    """plan_dict is ``plan`` as an engine plan dict (a typed Plan serialized), or None when
    there is none or only a record's Heading."""
    if plan is None or isinstance(plan, Mapping):
        return dict(plan) if plan is not None else None
    to_json = getattr(plan, "to_json", None)
    return json.loads(to_json()) if to_json is not None else None


def open_model(document: Mapping[str, Any], plan: PlanLike | None) -> bool:
    """open_model tells whether the run followed an arrival-rate schedule: from ``plan`` when
    given, else from the document (an interval with a schedule rate, or send lags measured)."""
    if plan is not None:
        return is_open_model(plan)
    if any(i.get("target_rate_per_s") is not None for i in document.get("intervals") or []):
        return True
    return count((document.get("latency") or {}).get("send_lag"), "count") > 0


def timeout_s(document: Mapping[str, Any], plan: PlanLike | None) -> float | None:
    """timeout_s is the run's request timeout: the plan's ``limits.timeout_s`` when known, else
    None."""
    limits = (plan_dict(plan) or {}).get("limits") or {}
    value = limits.get("timeout_s")
    return float(value) if value is not None else None


def max_in_flight(plan: PlanLike | None) -> int | None:
    """max_in_flight is the open-model scenarios' in-flight limit (the sum of their
    ``max_vus``, ``--max-in-flight`` for a URL run), or None when the plan is not known."""
    scenarios = (plan_dict(plan) or {}).get("scenarios") or []
    limits = [s["executor"].get("max_vus") for s in scenarios if s["executor"].get("type") in OPEN_MODEL_TYPES]
    return sum(int(v) for v in limits if v is not None) or None


def load_intervals(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """load_intervals are the run's intervals that ended within its load window
    (``duration_s``, rounded up to a whole interval), not the drain after it."""
    intervals = list(document.get("intervals") or [])
    duration = document.get("duration_s")
    if duration is None:
        return intervals
    return [i for i in intervals if float(i["start_s"]) < float(duration)]


def grouped(n: float, decimals: int = 0) -> str:
    """grouped is ``n`` with thousands separators and ``decimals`` places: ``12,345.6``."""
    return f"{n:,.{decimals}f}"


def percent(share: float) -> str:
    """percent is a share (0–1) as a percentage with one decimal: ``37.9 %``."""
    return f"{share * 100:.1f} %"
