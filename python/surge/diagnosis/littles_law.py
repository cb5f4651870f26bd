"""Little's law on a run: requests in flight L = throughput X × mean latency W, per interval and
over the run, beside the in-flight counts the engine measured; and the ``queueing`` finding
with the service capacity it implies. Rules: docs/diagnosis.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from surge.diagnosis.finding import (
    WARNING,
    Finding,
    grouped,
    load_intervals,
    mean,
    median,
    peak_evidence,
    peak_text,
    percent,
    slope,
)
from surge.record.figures import count, number

QUEUEING = "queueing"
"""QUEUEING is the kind of the finding that requests waited in a queue."""

MIN_MEASURED_INTERVALS = 3
"""MIN_MEASURED_INTERVALS: a run of fewer intervals has no ``measured_in_flight`` (its snapshots
are the start and the drained end)."""

QUEUE_LATENCY_FACTOR = 1.5
"""QUEUE_LATENCY_FACTOR: the mean latency from the send of the loaded seconds must be at least
this many times that of the least-loaded ones (the service time, before a queue) ..."""

QUEUE_MIN_WAIT_MS = 10.0
"""QUEUE_MIN_WAIT_MS: ... and at least this much longer, so that sub-millisecond jitter on a
fast target is not called a queue."""

BACKLOG_SHARE = 0.10
"""BACKLOG_SHARE: in the second half of the load, requests that arrived (sent; in the open model,
scheduled) but did not complete were at least this share of those that arrived (arrivals
outpaced service) ..."""

BACKLOG_MIN = 20
"""BACKLOG_MIN: ... and at least this many requests."""

MIN_LOAD_RANGE = 1.5
"""MIN_LOAD_RANGE: the most-loaded third of the seconds had at least this many times the
requests in flight of the least-loaded third (the load varied enough to see the throughput
level off) ..."""

PLATEAU_GAIN = 0.25
"""PLATEAU_GAIN: ... and throughput grew by at most this share of the growth in flight (a
server with room grows both alike: at capacity, only the latency grows)."""

MIN_QUEUE_INTERVALS = 3
"""MIN_QUEUE_INTERVALS: the queueing rule needs at least this many load intervals with
completions."""

UNSATURATED_SHARE = 0.8
"""UNSATURATED_SHARE: the least-loaded seconds' latency is taken as the service time (and
capacity × it as the requests served at once) only when they completed less than this share
of the capacity: below capacity, not yet queued."""


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


@dataclass(frozen=True)
class QueueEvidence:
    """QueueEvidence: why the queueing rule holds (``evidence``: "backlog" or "plateau"), the
    service ``capacity_per_s`` (successes/s while queued), the ``queued`` rows, the service time
    ``service_s`` (the least-loaded seconds' latency, when they were below capacity, else None)
    and the figures for the sentence (``facts``)."""

    evidence: str
    capacity_per_s: float
    queued: list[LittleInterval]
    service_s: float | None
    facts: dict[str, Any]


def queueing(document: Mapping[str, Any], law: LittlesLaw | None = None) -> Finding | None:
    """queueing: evidence of a queue in the load intervals (``queue_evidence``: arrivals
    outpacing service with the latency rising, or throughput levelling off while the requests
    in flight grew). States Little's law over the run, the service capacity (the median
    successes/s of the queued seconds; timeouts, 429/503 and errors are not service) and, when
    the least-loaded seconds were below capacity, the service time and the requests served at
    once. The fastest response is never taken for the service time."""
    law = law or littles_law(document)
    found = queue_evidence(document, law)
    if found is None:
        return None
    growth = _in_flight_growth(found.queued)
    measured = "" if law.measured_in_flight is None else f" (the engine measured {grouped(law.measured_in_flight, 1)})"
    f = found.facts
    if found.evidence == "backlog":
        why = (
            f"in the second half of the load {grouped(f['sent'])} requests were sent and only "
            f"{grouped(f['completed'])} completed ({percent(f['backlog_share'])} left waiting), while the mean "
            f"latency rose from {_ms(f['first_latency_s'])} to {_ms(f['last_latency_s'])}: requests "
            f"arrived faster than the target served them"
        )
    else:
        why = (
            f"as the load offered rose from {grouped(f['low_offered'], 1)} to {grouped(f['high_offered'], 1)} "
            f"{f['offered_unit']} (in flight by Little's law: {grouped(f['low_in_flight'], 1)} to "
            f"{grouped(f['high_in_flight'], 1)}), throughput went only from {grouped(f['low_per_s'], 1)}/s to "
            f"{grouped(f['high_per_s'], 1)}/s while the mean latency from the send rose from "
            f"{_ms(f['low_latency_s'])} to {_ms(f['high_latency_s'])}: the target was at its capacity"
        )
    service = ""
    if found.service_s is not None:
        service = (
            f" At the latency of the least-loaded seconds, {_ms(found.service_s)}, that is "
            f"{grouped(found.capacity_per_s * found.service_s, 1)} requests served at once."
        )
    grew = (
        f" In flight grew by {grouped(growth, 1)} a second while the queue lasted."
        if growth is not None and growth > 0
        else ""
    )
    message = (
        f"Requests queued: {why}. By Little's law {grouped(law.little_l, 1)} requests were in flight on "
        f"average{measured} = {grouped(law.completions_per_s, 1)} completions/s × "
        f"{_ms(law.mean_latency_s)} mean latency from the send. The target completed "
        f"{grouped(found.capacity_per_s, 1)} successful responses/s while it had a queue: that is its service "
        f"capacity{peak_text(document)}.{service}{grew}"
    )
    return Finding(
        QUEUEING,
        WARNING,
        message,
        {
            "evidence": found.evidence,
            "little_l": law.little_l,
            "completions_per_s": law.completions_per_s,
            "mean_latency_ms": law.mean_latency_s * 1000,
            "measured_in_flight": law.measured_in_flight,
            "service_time_ms": None if found.service_s is None else found.service_s * 1000,
            "service_capacity_per_s": found.capacity_per_s,
            "served_at_once": None if found.service_s is None else found.capacity_per_s * found.service_s,
            "queued_intervals": len(found.queued),
            "in_flight_growth_per_s": growth,
            **found.facts,
            **peak_evidence(document),
            "queue_latency_factor": QUEUE_LATENCY_FACTOR,
            "queue_min_wait_ms": QUEUE_MIN_WAIT_MS,
            "backlog_share_threshold": BACKLOG_SHARE,
            "backlog_min": BACKLOG_MIN,
            "min_load_range": MIN_LOAD_RANGE,
            "plateau_gain": PLATEAU_GAIN,
            "intervals": [asdict(r) for r in law.intervals],
        },
    )


def queue_evidence(document: Mapping[str, Any], law: LittlesLaw) -> QueueEvidence | None:
    """queue_evidence is the evidence of a queue among the load intervals with completions (at
    least MIN_QUEUE_INTERVALS), or None:

    - **backlog**: in the second half of the load intervals (with completions or not), sent −
      completed ≥ BACKLOG_SHARE of sent and ≥ BACKLOG_MIN, and the last interval's mean latency
      (from the intended send) is ≥ QUEUE_LATENCY_FACTOR × the first's and QUEUE_MIN_WAIT_MS above it
      (arrivals outpace service and the wait grows);
    - **plateau**: the most-loaded third of them (by the load offered, ``_offered_load``; the
      first left out when there are more than MIN_QUEUE_INTERVALS) were offered ≥ MIN_LOAD_RANGE ×
      the load of the least-loaded third, their throughput grew by ≤ PLATEAU_GAIN of that growth, and their
      latency is ≥ QUEUE_LATENCY_FACTOR × and QUEUE_MIN_WAIT_MS above the least-loaded's.
    """
    loaded = {int(i["index"]): i for i in load_intervals(document)}
    every = [r for r in law.intervals if r.index in loaded]
    rows = [r for r in every if r.completions_per_s > 0]
    if len(rows) < MIN_QUEUE_INTERVALS:
        return None
    served = {r.index: float(loaded[r.index].get("successes_per_s") or 0.0) for r in every}
    second = every[len(every) // 2 :]  # seconds without a completion count here: a stalled target
    # What arrived: the schedule's requests in the open model (sends that waited for a connection
    # the target did not accept are its backlog too), the requests sent in the closed model.
    sent = sum(_arrived(loaded[r.index]) for r in second)
    completed = sum(count((loaded[r.index].get("latency") or {}).get("all"), "count") for r in second)
    # The wait counted from the intended send: requests held in the generator for a connection
    # the target was slow to free waited too.
    first_w, last_w = (
        number((loaded[r.index].get("latency") or {}).get("all"), "mean_ms") / 1000 for r in (rows[0], rows[-1])
    )
    if sent and sent - completed >= max(BACKLOG_SHARE * sent, BACKLOG_MIN) and _slower(last_w, first_w):
        # Every second of a growing backlog had work waiting: each served at most the capacity,
        # and less only when the target lost time (the machine, accepting a burst of new
        # connections); the best second is the nearest to it.
        capacity = max(served[r.index] for r in second)
        service = first_w if served[rows[0].index] < UNSATURATED_SHARE * capacity else None
        return QueueEvidence(
            "backlog",
            capacity,
            second,
            service,
            {
                "sent": sent,
                "completed": completed,
                "backlog_share": (sent - completed) / sent,
                "first_latency_s": first_w,
                "last_latency_s": last_w,
            },
        )
    # The first second's completions are the quick ones (the slow ones it sent end later): its
    # latency and throughput read low whatever the load, so the plateau leaves it out.
    candidates = rows[1:] if len(rows) > MIN_QUEUE_INTERVALS else rows
    unit, offered = _offered_load([loaded[r.index] for r in candidates])
    load = (
        dict(zip((r.index for r in candidates), offered, strict=True))
        if offered
        else {r.index: r.little_l for r in candidates}
    )
    by_load = sorted((r for r in candidates if load[r.index] > 0), key=lambda r: load[r.index])
    third = len(by_load) // 3
    low, high = by_load[:third], by_load[-third:]
    low_o, high_o = mean(load[r.index] for r in low), mean(load[r.index] for r in high)
    low_x, high_x = (mean(r.completions_per_s for r in low), mean(r.completions_per_s for r in high))
    low_w, high_w = (mean(r.mean_latency_s for r in low), mean(r.mean_latency_s for r in high))
    if low_o <= 0 or low_x <= 0 or high_o < MIN_LOAD_RANGE * low_o:
        return None
    if high_x / low_x - 1 > PLATEAU_GAIN * (high_o / low_o - 1) or not _slower(high_w, low_w):
        return None
    capacity = median(served[r.index] for r in high)
    service = low_w if mean(served[r.index] for r in low) < UNSATURATED_SHARE * capacity else None
    return QueueEvidence(
        "plateau",
        capacity,
        sorted(high, key=lambda r: r.index),
        service,
        {
            "offered_unit": unit,
            "low_offered": low_o,
            "high_offered": high_o,
            "low_in_flight": mean(r.little_l for r in low),
            "high_in_flight": mean(r.little_l for r in high),
            "low_per_s": low_x,
            "high_per_s": high_x,
            "low_latency_s": low_w,
            "high_latency_s": high_w,
        },
    )


def _arrived(interval: Mapping[str, Any]) -> float:
    """_arrived is what arrived in ``interval``: the open-model schedule's requests (its rate over
    its length), or the requests sent."""
    rate = interval.get("target_rate_per_s")
    if rate is not None:
        return float(rate) * (float(interval["end_s"]) - float(interval["start_s"]))
    return float(count(interval.get("requests"), "sent"))


def _offered_load(intervals: list[Mapping[str, Any]]) -> tuple[str, list[float] | None]:
    """_offered_load is what the run offered in each of ``intervals``, and its unit: the
    schedule's rate (open model, "requests/s scheduled"), else the active VUs of its scenarios
    (closed model, "VUs": the more of the interval's end and the previous one's); ("requests in
    flight", None) when the intervals do not say (an import, a crafted document): the requests
    in flight, X × W, stand in for it. The load the generator offered, not the one it measured:
    a second in which latency rose for another reason (a busy machine) does not look like more
    load."""
    rates = [i.get("target_rate_per_s") for i in intervals]
    if intervals and all(r is not None for r in rates):
        return "requests/s scheduled", [float(r) for r in rates]  # type: ignore[arg-type]
    vus = [[s.get("active_vus") for s in i.get("scenarios") or []] for i in intervals]
    if intervals and all(v and all(n is not None for n in v) for v in vus):
        ends = [float(sum(v)) for v in vus]
        # Active VUs are counted at each interval's end: the last one of the load ends with none.
        return "VUs", [max(end, before) for end, before in zip(ends, [ends[0], *ends[:-1]], strict=True)]
    return "requests in flight", None


def _slower(w: float, before: float) -> bool:
    """_slower tells whether mean latency ``w`` is QUEUE_LATENCY_FACTOR times ``before`` and
    QUEUE_MIN_WAIT_MS above it."""
    return w >= QUEUE_LATENCY_FACTOR * before and (w - before) * 1000 >= QUEUE_MIN_WAIT_MS


def _ms(seconds: float) -> str:
    """_ms is a duration in seconds as milliseconds for a sentence: ``1,234.5 ms``."""
    return f"{grouped(seconds * 1000, 1)} ms"


def _in_flight_growth(rows: list[LittleInterval]) -> float | None:
    """_in_flight_growth is the least-squares slope of in flight (interval ends) over time
    across ``rows``, requests per second; None with fewer than 3."""
    if len(rows) < 3:
        return None
    xs = [r.end_s for r in rows]
    ys = [float(r.in_flight_end) for r in rows]
    return slope(xs, ys)
