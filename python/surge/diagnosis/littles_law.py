"""Little's law on a run: requests in flight L = throughput X × mean latency W, per interval and
over the run, beside the in-flight counts the engine measured; and the ``queueing`` finding
with the service capacity it implies. Rules: docs/diagnosis.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from surge.diagnosis.figures import count, grouped, load_intervals, number
from surge.diagnosis.finding import WARNING, Finding

QUEUEING = "queueing"
"""QUEUEING is the kind of the finding that requests waited in a queue."""

MIN_MEASURED_INTERVALS = 3
"""MIN_MEASURED_INTERVALS: a run of fewer intervals has no ``measured_in_flight`` (its snapshots
are the start and the drained end)."""

QUEUE_FACTOR = 3.0
"""QUEUE_FACTOR: a mean latency at least this many times the fastest response means most of
the time was spent waiting, not being served."""

QUEUE_MIN_WAIT_MS = 10.0
"""QUEUE_MIN_WAIT_MS: the mean wait (mean latency less the fastest response) must also be at
least this long, so that sub-millisecond jitter on a fast target is not called a queue."""


@dataclass(frozen=True)
class LittleInterval:
    """LittleInterval: one interval's Little's law figures: ``completions_per_s`` X (responses
    and timeouts, the latency histogram's count, over the interval), ``mean_latency_s`` W (from
    the actual send: ``mean_from_send_s``),
    ``little_l`` = X × W, and the engine's in-flight count at its end (``in_flight_end``) and
    averaged with the previous interval's end (``in_flight_mean``, from 0 before the first)."""

    index: int
    end_s: float
    completions_per_s: float
    mean_latency_s: float
    little_l: float
    in_flight_end: int
    in_flight_mean: float


@dataclass(frozen=True)
class LittlesLaw:
    """LittlesLaw: the run's Little's law figures: over the whole run ``completions_per_s`` X
    (latency count over ``throughput.window_s``), ``mean_latency_s`` W (from the actual send:
    ``mean_from_send_s``), ``little_l`` = X × W,
    ``measured_in_flight`` (the intervals' ``in_flight_mean`` weighted by their length: the
    time average L should equal; None for a run of fewer than MIN_MEASURED_INTERVALS), and the
    ``intervals``."""

    completions_per_s: float
    mean_latency_s: float
    little_l: float
    measured_in_flight: float | None
    intervals: list[LittleInterval]

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the figures as plain data (evidence)."""
        return asdict(self)


def mean_from_send_s(latency: Mapping[str, Any] | None) -> float:
    """mean_from_send_s is the mean latency of ``latency`` (summaries ``all`` and ``send_lag``)
    counted from the actual send, in seconds: the mean of ``all`` less the mean send lag (open
    model: ``all`` counts from the intended send time, and the engine's in-flight count starts
    at the send). Requests the generator sent late waited in the generator, not in flight."""
    latency = latency or {}
    lag = latency.get("send_lag") or {}
    lag_ms = number(lag, "mean_ms") if count(lag, "count") else 0.0
    return max(number(latency.get("all"), "mean_ms") - lag_ms, 0.0) / 1000


def fastest_s(document: Mapping[str, Any]) -> float:
    """fastest_s is the run's fastest successful response, in seconds (``success.min_ms``; a fast
    429/503 or error is no measure of service), else its fastest response from the actual send
    (``service_time.min_ms``, or ``all.min_ms`` when no service time was measured)."""
    latency = document.get("latency") or {}
    for name in ("success", "service_time", "all"):
        summary = latency.get(name) or {}
        if count(summary, "count"):
            return number(summary, "min_ms") / 1000
    return 0.0


def littles_law(document: Mapping[str, Any]) -> LittlesLaw:
    """littles_law computes L = X × W over the run and per interval from ``document``."""
    latency = (document.get("latency") or {}).get("all") or {}
    # Every completion over the whole window: the load window and the drain after it.
    window = number(document.get("throughput"), "window_s") + number(document.get("drain"), "seconds")
    x = count(latency, "count") / window if window > 0 else 0.0
    w = mean_from_send_s(document.get("latency"))
    rows: list[LittleInterval] = []
    previous_end = 0
    weighted = 0.0
    span = 0.0
    for interval in document.get("intervals") or []:
        length = float(interval["end_s"]) - float(interval["start_s"])
        lat = (interval.get("latency") or {}).get("all") or {}
        xi = count(lat, "count") / length if length > 0 else 0.0
        wi = mean_from_send_s(interval.get("latency"))
        end = count(interval, "in_flight")
        mean = (previous_end + end) / 2
        rows.append(LittleInterval(int(interval["index"]), float(interval["end_s"]), xi, wi, xi * wi, end, mean))
        weighted += mean * length
        span += length
        previous_end = end
    # Fewer than three snapshots (a run of a second or two, ending drained) say nothing of the
    # in-flight count in between.
    measured = weighted / span if span > 0 and len(rows) >= MIN_MEASURED_INTERVALS else None
    return LittlesLaw(x, w, x * w, measured, rows)


def queueing(document: Mapping[str, Any], law: LittlesLaw | None = None) -> Finding | None:
    """queueing: the mean latency from the send W is at least QUEUE_FACTOR times the fastest
    response S (``fastest_s``) and
    W − S ≥ QUEUE_MIN_WAIT_MS. States Little's law, how many requests were being served and how
    many waited, and the service capacity: the median successes/s of the intervals whose own
    mean latency passed the same rule (the target's rate while it had a queue; timeouts, 429/503
    and errors are not service)."""
    law = law or littles_law(document)
    fastest = fastest_s(document)
    w = law.mean_latency_s
    if fastest <= 0 or w < QUEUE_FACTOR * fastest or (w - fastest) * 1000 < QUEUE_MIN_WAIT_MS:
        return None
    import statistics  # ~2.5 ms of CPU with fractions and decimal: only when there is a queue

    loaded = {int(i["index"]) for i in load_intervals(document)}
    queued_rows = [r for r in law.intervals if r.index in loaded and r.completions_per_s > 0
                   and r.mean_latency_s >= QUEUE_FACTOR * fastest
                   and (r.mean_latency_s - fastest) * 1000 >= QUEUE_MIN_WAIT_MS]
    served = {int(i["index"]): float(i.get("successes_per_s") or 0.0) for i in document.get("intervals") or []}
    overall_served = number(document.get("throughput"), "successes_per_s")
    capacity = statistics.median(served[r.index] for r in queued_rows) if queued_rows else overall_served
    in_service = capacity * fastest
    waiting = max(law.little_l - law.completions_per_s * fastest, 0.0)
    growth = _in_flight_growth(queued_rows)
    measured = "" if law.measured_in_flight is None else f" (the engine measured {grouped(law.measured_in_flight, 1)})"
    grew = f" In flight grew by {grouped(growth, 1)} a second while the queue lasted: requests arrived faster than " \
           "they were served." if growth is not None and growth > 0 else ""
    message = (f"Requests queued: by Little's law {grouped(law.little_l, 1)} requests were in flight on average"
               f"{measured} = {grouped(law.completions_per_s, 1)} completions/s × {grouped(w * 1000, 1)} ms mean "
               f"latency from the send, while the fastest successful response took "
               f"{grouped(fastest * 1000, 2)} ms: about {grouped(waiting, 1)} of them were waiting, or being served "
               f"slower than that (contention inside the target). The target completed {grouped(capacity, 1)} "
               f"successful responses/s while it had a queue: that is its service capacity, the same as "
               f"{grouped(in_service, 1)} requests served at once if each took the fastest time, "
               f"{grouped(fastest * 1000, 2)} ms.{grew}")
    return Finding(QUEUEING, WARNING, message, {
        "little_l": law.little_l, "completions_per_s": law.completions_per_s, "mean_latency_ms": w * 1000,
        "measured_in_flight": law.measured_in_flight, "fastest_ms": fastest * 1000, "waiting": waiting,
        "service_capacity_per_s": capacity, "served_at_once": in_service, "queued_intervals": len(queued_rows),
        "in_flight_growth_per_s": growth, "queue_factor": QUEUE_FACTOR, "queue_min_wait_ms": QUEUE_MIN_WAIT_MS,
        "intervals": [asdict(r) for r in law.intervals],
    })


def _in_flight_growth(rows: list[LittleInterval]) -> float | None:
    """_in_flight_growth is the least-squares slope of in flight (interval ends) over time
    across ``rows``, requests per second; None with fewer than 3."""
    if len(rows) < 3:
        return None
    import statistics  # only with a queue, as in queueing

    xs = [r.end_s for r in rows]
    ys = [float(r.in_flight_end) for r in rows]
    return statistics.linear_regression(xs, ys).slope
