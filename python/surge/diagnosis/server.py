"""The ``server_cpu_bound`` finding, from the watched target process's samples (``--watch-pid``):
its CPU use at the most it can use while throughput stays flat. Rules: docs/diagnosis.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from surge.diagnosis.finding import WARNING, Finding, grouped, mean, peak_evidence, peak_text, percent
from surge.diagnosis.machine import STEAL_WORTH_SAYING, core_share

SERVER_CPU_BOUND = "server_cpu_bound"
"""SERVER_CPU_BOUND is the kind of the finding that the target ran out of CPU."""

CPU_SHARE_THRESHOLD = 0.90
"""CPU_SHARE_THRESHOLD: a sample whose CPU use is at least this share of the most the process
can use (its cores, or fewer threads) is a saturated sample."""

MIN_SATURATED_SAMPLES = 3
"""MIN_SATURATED_SAMPLES: at least this many saturated samples (seconds) ..."""

MIN_SATURATED_SHARE = 0.25
"""MIN_SATURATED_SHARE: ... making at least this share of the samples taken during the load."""

FLAT_CV = 0.35
"""FLAT_CV: throughput in the saturated seconds is flat when its coefficient of variation (SD
over mean) is at most this: not rising with the load. A saturated server's seconds vary with the
work each request brings (an event loop accepting a burst of connections served 290/s in two
seconds and 480/s in the others), so the bound is loose; a rising throughput varies far more."""


def server_cpu_bound(
    document: Mapping[str, Any], samples: Sequence[Mapping[str, Any]], cores: float | None
) -> Finding | None:
    """server_cpu_bound: enough samples within the load window are saturated — the process used ≥
    CPU_SHARE_THRESHOLD of min(``cores`` available to it, its threads), or its busiest thread used
    ≥ CPU_SHARE_THRESHOLD of one core (``thread_cores_max``: one event loop or one lock holder at
    its ceiling, whatever the thread count), each core counted net of the hypervisor's steal in
    that sample (``machine_steal_share``) — and the responses/s of the intervals those samples
    fall in are flat (CV ≤ FLAT_CV)."""
    duration = float(document.get("duration_s") or 0.0)
    loaded = [s for s in samples if s.get("cpu_cores") is not None and 0.0 <= float(s["t_s"]) <= duration + 1.0]
    if not loaded or not cores:
        return None
    threads = max((int(s.get("threads") or 0) for s in loaded), default=0)
    cap = min(float(cores), float(threads)) if threads else float(cores)
    whole = [s for s in loaded if float(s["cpu_cores"]) >= CPU_SHARE_THRESHOLD * cap * _core_share(s)]
    one = [s for s in loaded if float(s.get("thread_cores_max") or 0.0) >= CPU_SHARE_THRESHOLD * _core_share(s)]
    per_thread = len(one) > len(whole)
    hot = one if per_thread else whole
    if len(hot) < MIN_SATURATED_SAMPLES or len(hot) / len(loaded) < MIN_SATURATED_SHARE:
        return None
    rates = [r for r in (_rate_at(document, float(s["t_s"])) for s in hot) if r is not None]
    if len(rates) < 2 or mean(rates) <= 0:
        return None
    mean_rate = mean(rates)
    cv = (sum((r - mean_rate) ** 2 for r in rates) / (len(rates) - 1)) ** 0.5 / mean_rate
    if cv > FLAT_CV:
        return None
    cpu = mean(float(s["cpu_cores"]) for s in hot)
    thread = mean(float(s.get("thread_cores_max") or 0.0) for s in hot)
    core = mean(_core_share(s) for s in hot)
    stolen = core < 1.0 - STEAL_WORTH_SAYING
    if per_thread:
        one_core = (
            f"the {grouped(core, 2)} of a core a thread could get, the hypervisor giving the rest to other guests"
            if stolen
            else "the one core a thread can use"
        )
        used = (
            f"its busiest thread used {grouped(thread, 2)} of a core ({percent(thread / core)} of {one_core}; the "
            f"process {grouped(cpu, 2)} cores over {grouped(threads)} threads): one thread (an event loop, or a "
            "lock holder) was its ceiling, whatever its thread count"
        )
    else:
        net = f" ({grouped(cap * core, 2)} net of the hypervisor's steal)" if stolen else ""
        used = (
            f"the watched process used {grouped(cpu, 2)} cores, {percent(cpu / (cap * core))} of the "
            f"{grouped(cap, 0)} it can use{net}"
        )
    message = (
        f"The target was CPU-bound: for {len(hot)} of {len(loaded)} seconds under load {used}, while "
        f"throughput stayed flat at {grouped(mean_rate, 1)} responses/s (CV {percent(cv)})"
        f"{peak_text(document)}. "
        f"More load only queues; the server needs more CPU{' on that thread' if per_thread else ''} or less "
        f"work per request."
    )
    return Finding(
        SERVER_CPU_BOUND,
        WARNING,
        message,
        {
            "cpu_cores_mean": cpu,
            "cpu_cores_cap": 1.0 if per_thread else cap,
            "cores": cores,
            "threads": threads or None,
            "per_thread": per_thread,
            "busiest_thread_cores": thread if any("thread_cores_max" in s for s in hot) else None,
            "core_share_mean": core,
            "saturated_samples": len(hot),
            "samples": len(loaded),
            "responses_per_s": mean_rate,
            "throughput_cv": cv,
            "cpu_share_threshold": CPU_SHARE_THRESHOLD,
            "flat_cv": FLAT_CV,
            "min_saturated_samples": MIN_SATURATED_SAMPLES,
            "min_saturated_share": MIN_SATURATED_SHARE,
            **peak_evidence(document),
        },
    )


def _core_share(sample: Mapping[str, Any]) -> float:
    """_core_share is the share of a core this machine had over ``sample``'s span (core_share
    of its ``machine_steal_share``)."""
    return core_share(sample.get("machine_steal_share"))


def _rate_at(document: Mapping[str, Any], t_s: float) -> float | None:
    """_rate_at is the responses/s of the interval that holds time ``t_s``, or None."""
    for interval in document.get("intervals") or []:
        if float(interval["start_s"]) <= t_s <= float(interval["end_s"]):
            rate = interval.get("responses_per_s")
            return float(rate) if rate is not None else None
    return None
