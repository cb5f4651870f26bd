"""Synthetic result documents (``surge.result/1`` as dicts) for the diagnosis rules' unit tests:
only the figures the rules read, each test setting the ones it is about."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
"""EXAMPLES is the repository's examples/ directory (the seeds' calibrated scenario files)."""


def latency(count: int, mean_ms: float = 1.0, min_ms: float = 0.5, p95_ms: float = 2.0) -> dict[str, Any]:
    """latency is one latency summary."""
    return {
        "count": count,
        "min_ms": min_ms,
        "mean_ms": mean_ms,
        "p50_ms": mean_ms,
        "p95_ms": p95_ms,
        "p99_ms": p95_ms,
        "max_ms": p95_ms,
    }


def requests(
    succeeded: int,
    *,
    failures: dict[str, int] | None = None,
    shed: int = 0,
    status_failed: int = 0,
    late: int = 0,
    dropped: int = 0,
    codes: dict[str, int] | None = None,
    connections_opened: int = 100,
) -> dict[str, Any]:
    """requests is a requests block: ``succeeded`` 200s, ``status_failed`` 4xx/5xx (``shed`` of
    them 429/503), and ``failures`` by class."""
    failures = failures or {}
    failed = status_failed + sum(failures.values())
    responses = succeeded + status_failed
    timed_out = failures.get("request_timeout", 0)
    return {
        "sent": succeeded + failed,
        "responses": responses,
        "unanswered": timed_out,
        "succeeded": succeeded,
        "failed": failed,
        "shed": shed,
        "timed_out": timed_out,
        "interrupted": 0,
        "interrupted_unsent": 0,
        "dropped": dropped,
        "late": late,
        "connections_opened": connections_opened,
        "status_codes": codes if codes is not None else {"200": succeeded},
        "failure_classes": dict(failures),
    }


def interval(
    index: int,
    *,
    completions: int,
    mean_ms: float = 1.0,
    in_flight: int = 1,
    req: dict[str, Any] | None = None,
    rate: float | None = None,
    responses_per_s: float | None = None,
    sent: int | None = None,
    late: int = 0,
    lag_p99_ms: float | None = None,
    vus: int | None = None,
) -> dict[str, Any]:
    """interval is a one-second interval ``index`` with ``completions`` latency samples (and
    ``sent`` requests sent, ``late`` of them late; ``lag_p99_ms`` gives it send lags; ``vus`` its
    one scenario's active VUs at its end)."""
    req = copy.deepcopy(req) if req is not None else requests(completions, late=late)
    if sent is not None:
        req["sent"] = sent
    lat = {"all": latency(completions, mean_ms)}
    if lag_p99_ms is not None:
        lat["send_lag"] = latency(req["sent"], lag_p99_ms / 10, 0.0, lag_p99_ms)
    return {
        "index": index,
        "start_s": float(index),
        "end_s": float(index + 1),
        "requests": req,
        "latency": lat,
        "responses_per_s": float(completions if responses_per_s is None else responses_per_s),
        "successes_per_s": float(req["succeeded"]),
        "target_rate_per_s": rate,
        "in_flight": in_flight,
        "peak_concurrency": in_flight,
        "open_connections": in_flight,
        **({"scenarios": [{"name": "default", "active_vus": vus}]} if vus is not None else {}),
    }


def document(
    *,
    req: dict[str, Any] | None = None,
    intervals: list[dict[str, Any]] | None = None,
    thread_busy: tuple[float, ...] = (0.2, 0.2),
    mean_ms: float = 1.0,
    min_ms: float = 0.5,
    duration_s: float = 10.0,
    open_file_limit: int = 1024,
    lag_p99_ms: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """document is a run of ``duration_s`` seconds (10 by default) with 1,000 successes unless
    ``req`` says otherwise; ``lag_p99_ms`` gives it open-model send lags; ``extra`` sets
    top-level fields."""
    req = req or requests(1000)
    window = duration_s
    completions = req["responses"] + req["timed_out"]
    doc = {
        "schema": "surge.result/1",
        "duration_s": duration_s,
        "elapsed_s": window,
        "requests": req,
        "latency": {
            "all": latency(completions, mean_ms, min_ms),
            "success": latency(req["succeeded"], mean_ms, min_ms),
            "service_time": latency(0),
            "send_lag": latency(0) if lag_p99_ms is None else latency(req["sent"], lag_p99_ms / 10, 0.0, lag_p99_ms),
        },
        "throughput": {
            "window_s": window,
            "responses_per_s": req["responses"] / window,
            "successes_per_s": req["succeeded"] / window,
            "sent_per_s": req["sent"] / window,
        },
        "peak_open_connections": 64,
        "intervals": intervals or [],
        "generator": {
            "cpu": {"user_s": 1.0, "system_s": 0.5},
            "cpu_us_per_request": 20.0,
            "thread_busy": list(thread_busy),
            "max_rss_kib": 30000,
            "open_file_limit": open_file_limit,
        },
        "notes": [],
    }
    doc.update(copy.deepcopy(extra))
    return doc


def kinds(found: list[Any]) -> list[str]:
    """kinds are the kinds of ``found``, in order."""
    return [f.kind for f in found]
