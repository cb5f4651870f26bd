"""The ``server_cpu_bound`` finding, from the watched target process's samples (``--watch-pid``):
its CPU use at the most it can use while throughput stays flat. Rules: docs/diagnosis.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from surge.diagnosis.figures import grouped, percent
from surge.diagnosis.finding import WARNING, Finding

SERVER_CPU_BOUND = "server_cpu_bound"
"""SERVER_CPU_BOUND is the kind of the finding that the target ran out of CPU."""

CPU_SHARE_THRESHOLD = 0.90
"""CPU_SHARE_THRESHOLD: a sample whose CPU use is at least this share of the most the process
can use (its cores, or fewer threads) is a saturated sample."""

MIN_SATURATED_SAMPLES = 3
"""MIN_SATURATED_SAMPLES: at least this many saturated samples (seconds) ..."""

MIN_SATURATED_SHARE = 0.25
"""MIN_SATURATED_SHARE: ... making at least this share of the samples taken during the load."""

FLAT_CV = 0.15
"""FLAT_CV: throughput in the saturated seconds is flat when its coefficient of variation (SD
over mean) is at most this."""


def server_cpu_bound(document: Mapping[str, Any], samples: Sequence[Mapping[str, Any]],
                     cores: float | None) -> Finding | None:
    """server_cpu_bound: enough samples within the load window use ≥ CPU_SHARE_THRESHOLD of
    min(``cores`` available to the process, its threads), and the responses/s of the intervals
    those samples fall in are flat (CV ≤ FLAT_CV)."""
    duration = float(document.get("duration_s") or 0.0)
    loaded = [s for s in samples if s.get("cpu_cores") is not None and 0.0 <= float(s["t_s"]) <= duration + 1.0]
    if not loaded or not cores:
        return None
    threads = max((int(s.get("threads") or 0) for s in loaded), default=0)
    cap = min(float(cores), float(threads)) if threads else float(cores)
    hot = [s for s in loaded if float(s["cpu_cores"]) >= CPU_SHARE_THRESHOLD * cap]
    if len(hot) < MIN_SATURATED_SAMPLES or len(hot) / len(loaded) < MIN_SATURATED_SHARE:
        return None
    import statistics  # ~2.5 ms of CPU with fractions and decimal: only when the target was watched and hot

    rates = [r for r in (_rate_at(document, float(s["t_s"])) for s in hot) if r is not None]
    if len(rates) < 2 or statistics.fmean(rates) <= 0:
        return None
    mean_rate = statistics.fmean(rates)
    cv = statistics.stdev(rates) / mean_rate
    if cv > FLAT_CV:
        return None
    cpu = statistics.fmean(float(s["cpu_cores"]) for s in hot)
    message = (f"The target was CPU-bound: for {len(hot)} of {len(loaded)} seconds under load the watched process "
               f"used {grouped(cpu, 2)} cores, {percent(cpu / cap)} of the {grouped(cap, 0)} it can use, while "
               f"throughput stayed flat at {grouped(mean_rate, 1)} responses/s (CV {percent(cv)}). More load only "
               f"queues; the server needs more CPU or less work per request.")
    return Finding(SERVER_CPU_BOUND, WARNING, message, {
        "cpu_cores_mean": cpu, "cpu_cores_cap": cap, "cores": cores, "threads": threads or None,
        "saturated_samples": len(hot), "samples": len(loaded), "responses_per_s": mean_rate, "throughput_cv": cv,
        "cpu_share_threshold": CPU_SHARE_THRESHOLD, "flat_cv": FLAT_CV,
    })


def _rate_at(document: Mapping[str, Any], t_s: float) -> float | None:
    """_rate_at is the responses/s of the interval that holds time ``t_s``, or None."""
    for interval in document.get("intervals") or []:
        if float(interval["start_s"]) <= t_s <= float(interval["end_s"]):
            rate = interval.get("responses_per_s")
            return float(rate) if rate is not None else None
    return None
