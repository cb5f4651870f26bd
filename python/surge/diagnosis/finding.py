"""Finding: one diagnosis of a run, stated in a plain sentence with the figures behind it; and
what the rules read to make one beside the figures (surge.record.figures) of a result document
(``surge.result/1``, a plain dict): the plan's model, timeouts and in-flight limit, the load
intervals and their peak, small statistics, and how a finding writes a number."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from surge.plan.heading import PlanLike, is_open_model
from surge.plan.model import OPEN_MODEL_TYPES
from surge.record.figures import count


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
    """timeout_s is the timeout the requests that timed out had: each step's own ``timeout_s``
    (a scenario file's request ``timeout``), else the plan's ``limits.timeout_s`` (the default,
    30 s). When the document's tags say which steps timed out, only theirs count; of several
    different timeouts, the longest one that fired. None when the plan is not known."""
    found = step_timeouts(plan)
    if not found:
        return None
    fired = {
        (t.get("scenario"), t.get("tag")) for t in document.get("tags") or [] if count(t.get("requests"), "timed_out")
    }
    timeouts = [v for k, v in found.items() if k in fired] or list(found.values())
    return max(timeouts)


def step_timeouts(plan: PlanLike | None) -> dict[tuple[Any, Any], float]:
    """step_timeouts maps each step of ``plan`` (by scenario name and tag) to the timeout its
    requests had: its own ``timeout_s``, else ``limits.timeout_s``; empty without a plan dict.
    A plan with no step list (a URL run's flags) maps ``(None, None)`` to the limit."""
    data = plan_dict(plan) or {}
    default = (data.get("limits") or {}).get("timeout_s")
    out: dict[tuple[Any, Any], float] = {}
    for scenario in data.get("scenarios") or []:
        for sequence in (scenario.get("flow") or {}).get("sequences") or []:
            for step in sequence.get("steps") or []:
                value = step["timeout_s"] if step.get("timeout_s") is not None else default
                if value is not None:
                    out[(scenario.get("name"), step.get("tag"))] = float(value)
    if not out and default is not None:
        out[(None, None)] = float(default)
    return out


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


def peak_interval(document: Mapping[str, Any]) -> tuple[float, float] | None:
    """peak_interval is the highest responses/s of one load interval and the time its interval
    ended (seconds into the run), or None without intervals."""
    rows = [(float(i.get("responses_per_s") or 0.0), float(i["end_s"])) for i in load_intervals(document)]
    return max(rows, key=lambda r: r[0]) if rows else None


def peak_text(document: Mapping[str, Any]) -> str:
    """peak_text is " (peak second: 1,234.0/s, ending 7 s into the run)", or "" without intervals."""
    peak = peak_interval(document)
    if peak is None:
        return ""
    return f" (peak second: {grouped(peak[0], 1)}/s, ending {grouped(peak[1], 0)} s into the run)"


def peak_evidence(document: Mapping[str, Any]) -> dict[str, float | None]:
    """peak_evidence is the peak interval as evidence: ``peak_responses_per_s`` and ``peak_end_s``."""
    peak = peak_interval(document)
    return {"peak_responses_per_s": peak[0] if peak else None, "peak_end_s": peak[1] if peak else None}


def mean(values: Iterable[float]) -> float:
    """mean is the arithmetic mean of ``values`` (0.0 for none); the statistics module costs
    milliseconds of CPU to import, on every run."""
    items = list(values)
    return sum(items) / len(items) if items else 0.0


def median(values: Iterable[float]) -> float:
    """median is the middle of ``values`` (the mean of the two middle ones for an even count;
    0.0 for none)."""
    items = sorted(values)
    if not items:
        return 0.0
    mid = len(items) // 2
    return items[mid] if len(items) % 2 else (items[mid - 1] + items[mid]) / 2


def slope(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """slope is the least-squares slope of ``ys`` over ``xs``; None with fewer than two distinct xs."""
    mx, my = mean(xs), mean(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=False)) / spread if spread > 0 else None


def grouped(n: float, decimals: int = 0) -> str:
    """grouped is ``n`` with thousands separators and ``decimals`` places: ``12,345.6``."""
    return f"{n:,.{decimals}f}"


def percent(share: float) -> str:
    """percent is a share (0–1) as a percentage with one decimal: ``37.9 %``."""
    return f"{share * 100:.1f} %"


INFO = "info"
"""INFO is the severity of a finding that explains the results without casting doubt on them."""

WARNING = "warning"
"""WARNING is the severity of a finding that limits what the results show (a lower bound, a
queue, a server at its limit)."""

ERROR = "error"
"""ERROR is the severity of a finding that means part of the results measured a failure, not
the target's service (timeouts in a cascade, the client out of ports or files)."""

SEVERITIES = (INFO, WARNING, ERROR)
"""SEVERITIES are the severities, mildest first."""


@dataclass(frozen=True)
class Finding:
    """Finding: a diagnosis of ``kind`` (stable, snake_case, docs/diagnosis.md), its
    ``severity`` (SEVERITIES), a ``message`` (one or two plain sentences with the numbers
    behind it, secrets masked) and its ``evidence`` (the figures the rule used, by name)."""

    kind: str
    severity: str
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the finding as summary.json's ``findings[]`` holds it."""
        return {"kind": self.kind, "severity": self.severity, "message": self.message, "evidence": dict(self.evidence)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        """from_dict reads a finding back from summary.json's ``findings[]``."""
        return cls(
            kind=data["kind"],
            severity=data["severity"],
            message=data["message"],
            evidence=dict(data.get("evidence") or {}),
        )
