"""Records made by hand for the history's tests: a meta block and a summary document with the
figures the history keeps, as ``surge run`` would write them."""

from __future__ import annotations

import uuid
from typing import Any

from surge.history import History


def meta(
    name: str = "api",
    *,
    started_at: str = "2026-11-20T10:00:00.000+00:00",
    tool: str = "surge",
    target: str = "http://127.0.0.1:8080/api",
    tags: dict[str, str] | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """meta is a record's meta block."""
    return {
        "schema": "surge.record/1",
        "run_id": run_id or uuid.uuid4().hex,
        "name": name,
        "started_at": started_at,
        "ended_at": None,
        "target": target,
        "tool": tool,
        "complete": False,
        "tags": tags or {},
    }


def summary(
    m: dict[str, Any],
    *,
    p95_ms: float = 10.0,
    responses_per_s: float = 1000.0,
    failure_rate: float = 0.0,
    thresholds: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """summary is a finished run's summary document (result and meta)."""
    done = {**m, "complete": True, "ended_at": m["started_at"]}
    doc: dict[str, Any] = {
        "requests": {"sent": 10_000, "success_rate": 1 - failure_rate, "failure_rate": failure_rate},
        "throughput": {"responses_per_s": responses_per_s},
        "latency": {"all": {"p50_ms": p95_ms / 2, "p95_ms": p95_ms, "p99_ms": p95_ms * 2}},
        "meta": done,
    }
    if thresholds is not None:
        doc["thresholds"] = thresholds
    return doc


def record(history: History, m: dict[str, Any], **figures: Any) -> dict[str, Any]:
    """record records a finished run made of ``m`` and returns its summary."""
    history.begin(m, directory=None, inputs_name="command.txt", inputs="surge run x\n")
    doc = summary(m, **figures)
    history.finish(doc)
    return doc
