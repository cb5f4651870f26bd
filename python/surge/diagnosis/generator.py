"""The load generator as the bottleneck: ``generator_saturated`` (a worker thread out of CPU,
or sends falling behind the open-model schedule), ``generator_late`` (sends the generator took
off the schedule late, too few to hold the load back), ``in_flight_limit`` (scheduled requests
never sent because the in-flight limit was reached), and for a distributed run
``generator_lost`` (a generator that died or went silent). In a distributed run a thread is
named with its generator and node, and the share of the load that generator carried.
Rules: docs/diagnosis.md."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from surge.diagnosis.finding import (
    ERROR,
    WARNING,
    Finding,
    grouped,
    load_intervals,
    max_in_flight,
    peak_evidence,
    peak_text,
    percent,
)
from surge.diagnosis.machine import STEAL_WORTH_SAYING, core_share
from surge.plan.heading import PlanLike
from surge.record.figures import count, number

GENERATOR_SATURATED = "generator_saturated"
"""GENERATOR_SATURATED is the kind of the finding that the generator limited the load."""

GENERATOR_LATE = "generator_late"
"""GENERATOR_LATE is the kind of the finding that the generator's own delays made sends late,
without limiting the load: their latency holds a delay that is the generator's side."""

GENERATOR_LOST = "generator_lost"
"""GENERATOR_LOST is the kind of the finding that a distributed run lost a generator."""

IN_FLIGHT_LIMIT = "in_flight_limit"
"""IN_FLIGHT_LIMIT is the kind of the finding that the in-flight limit stopped sends."""

CONNECTION_WAIT = "connection_wait"
"""CONNECTION_WAIT is the kind of the finding that open-model sends were late because they waited
for connections the target accepted or freed too slowly, not for the generator's CPU."""

RUNNABLE_THRESHOLD = 0.90
"""RUNNABLE_THRESHOLD: a worker thread running or waiting for a core (runnable: ``thread_busy`` +
``thread_waiting``) at least this share of the run had work all along and no core to spare:
short of CPU, whether it ran or another process held its core ..."""

WAITING_FLOOR = 0.02
"""WAITING_FLOOR: ... and a thread that waited for a core at least as long as it ran (and at
least this share of the run) was kept off its core by other processes at each wake-up. A thread
runnable for less, that did not wait as long as it ran, spent the rest blocked: sends late then
waited for something else, a connection."""

WAIT_COVER_SHARE = 0.5
"""WAIT_COVER_SHARE: ... and only when the sends due while the threads waited are at least this
share of the late sends: waiting that could have delayed a tenth of them did not make them late
(seed 000 on a host stealing 10-16 % of every core: threads 2 % busy and 2-6 % waiting beside 14-22 %
of sends late, which waited for connections the CPU-bound target freed slowly)."""

CASCADE_RUNNABLE = 0.5
"""CASCADE_RUNNABLE: ... unless a thread was runnable (busy + waiting) at least this share of the
run: then it does not catch up between waits and its lateness compounds (the starved-generator
test: 45-50 % busy, 44-50 % waiting, 99 % of sends late, which its waiting alone covers only in
part), so the waiting needs no cover."""

BUSY_THRESHOLD = 0.90
"""BUSY_THRESHOLD: a worker thread whose CPU time is at least this share of the run's elapsed
time had no room to send more."""

LATE_SHARE_THRESHOLD = 0.05
"""LATE_SHARE_THRESHOLD: in the open model, at least this share of the requests sent in the
steady part of the load (``steady_intervals``) sent more than 1 ms after their intended time
means the generator fell behind its schedule ..."""

LATE_MIN = 20
"""LATE_MIN: ... when they are at least this many (one late send of 16 is no bottleneck) ..."""

LATE_LAG_P99_MS = 10.0
"""LATE_LAG_P99_MS: ... and the send lag's p99 (the highest of the steady intervals') is at least
this long (a millisecond or two of lag on a busy machine, or for a new connection, does not shape
the results)."""

STARTUP_S = 1.0
"""STARTUP_S: the steady part of the load leaves out at least this many first seconds (VUs and
connections being set up) ..."""

STARTUP_SHARE = 0.2
"""STARTUP_SHARE: ... or this share of the load, whichever is longer."""

OWN_LATE_SHARE = 0.5
"""OWN_LATE_SHARE: where the engine counts the sends its loop took off the schedule late
(``requests.late_dispatched``), late sends are the generator's when at least this share of them
were dispatched late: its own lateness, whatever the cause (CPU, other processes on its core).
The rest were dispatched on time and waited for a connection: the target's doing. This direct
count replaces the threads' busy and waiting shares as the judge of whose lateness (the
starved-generator test: 85-90 % of late sends dispatched late, with busy + waiting 66-100 %,
which the shares alone judged wrong in 2 runs of 6)."""

BEHIND_SHARE = 0.5
"""BEHIND_SHARE: ... and the generator limited the load (``generator_saturated``) only when the
sends it dispatched late are at least this share of all it sent in the steady part, and a thread
was runnable at least CASCADE_RUNNABLE of the run (``_had_work``): behind its schedule most of
the time, its lateness compounding (the starved-generator test: 84-89 %, runnable 66-100 %). Fewer,
or threads mostly idle,
are ``generator_late``: delays in bursts or scattered, which the latency counts but which did
not hold the load back (a 0.5 s SIGSTOP of the generator at 500/s: 10 %; the reference target
at 100/s on a virtual machine whose hypervisor woke the generator's idle threads 1-15 ms late now
and then: 5-9 %, its threads 1 % busy and waiting for a core under 0.5 % of the run)."""

DROPPED_SHARE_THRESHOLD = 0.01
"""DROPPED_SHARE_THRESHOLD: at least this share of scheduled requests (sent + dropped) never
sent is an in-flight limit finding."""


SLOTS_FULL_SHARE = 0.9
"""SLOTS_FULL_SHARE: requests never sent are put down to the in-flight limit only when in flight
reached at least this share of it at an interval's end; below, they waited for a connection."""


def offered_rate(document: Mapping[str, Any]) -> float | None:
    """offered_rate is the open-model schedule's mean rate over the load intervals (requests
    per second), or None in the closed model."""
    rates = [float(i["target_rate_per_s"]) for i in load_intervals(document) if i.get("target_rate_per_s") is not None]
    return sum(rates) / len(rates) if rates else None


def startup_s(document: Mapping[str, Any]) -> float:
    """startup_s is where the steady part of the load starts, seconds into the run: the later of
    STARTUP_S and STARTUP_SHARE of the load (``duration_s``)."""
    return max(STARTUP_S, STARTUP_SHARE * number(document, "duration_s"))


def steady_intervals(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """steady_intervals are the load intervals that start at or after ``startup_s``."""
    skip = startup_s(document)
    return [i for i in load_intervals(document) if float(i["start_s"]) >= skip - 1e-9]


def late_sends(document: Mapping[str, Any]) -> tuple[int, int, float, bool]:
    """late_sends are the sent and late requests of the steady part, the highest send-lag p99 of
    its intervals (ms), and whether they come from the steady part (False: a document without
    intervals, judged on its totals)."""
    steady = steady_intervals(document)
    if steady:
        sent = sum(count(i.get("requests"), "sent") for i in steady)
        late = sum(count(i.get("requests"), "late") for i in steady)
        lags = [
            number((i.get("latency") or {}).get("send_lag"), "p99_ms")
            for i in steady
            if count((i.get("latency") or {}).get("send_lag"), "count")
        ]
        return sent, late, max(lags, default=0.0), True
    if document.get("intervals"):
        return 0, 0, 0.0, True  # a run too short to have a steady part
    requests = document.get("requests") or {}
    return (
        count(requests, "sent"),
        count(requests, "late"),
        number((document.get("latency") or {}).get("send_lag"), "p99_ms"),
        False,
    )


def own_late(document: Mapping[str, Any]) -> int | None:
    """own_late is how many of ``late_sends``' late requests the generator dispatched late itself
    (``requests.late_dispatched``, at most the late ones), from the same part of the run; None
    where the record does not count it (older records, imports)."""
    steady = steady_intervals(document)
    if steady:
        if any((i.get("requests") or {}).get("late_dispatched") is None for i in steady):
            return None
        late = sum(count(i.get("requests"), "late") for i in steady)
        return min(late, sum(count(i.get("requests"), "late_dispatched") for i in steady))
    if document.get("intervals"):
        return 0
    requests = document.get("requests") or {}
    own = requests.get("late_dispatched")
    return None if own is None else min(int(own), count(requests, "late"))


def _late(document: Mapping[str, Any], open_model: bool) -> tuple[int, int, float, float, bool, bool]:
    """_late is the steady part's sent and late requests, their share, the send lag p99 (ms),
    whether they come from the steady part, and whether they are late enough to shape the results
    (open model, ≥ LATE_MIN, ≥ LATE_SHARE_THRESHOLD, p99 ≥ LATE_LAG_P99_MS)."""
    sent, late, lag_p99, steady = late_sends(document)
    share = late / sent if sent else 0.0
    return (
        sent,
        late,
        share,
        lag_p99,
        steady,
        (open_model and late >= LATE_MIN and share >= LATE_SHARE_THRESHOLD and lag_p99 >= LATE_LAG_P99_MS),
    )


def _threads(document: Mapping[str, Any], sent: int, late: int) -> tuple[list[float], list[float], bool, bool]:
    """_threads are the worker threads' busy and waiting shares, whether one was out of CPU
    (busy ≥ BUSY_THRESHOLD) and whether the threads were short of a core for the ``late`` of
    ``sent`` sends: one was runnable ≥ RUNNABLE_THRESHOLD, or one waited as long as it ran (≥
    WAITING_FLOOR) while a thread was runnable ≥ CASCADE_RUNNABLE or their waiting could hold
    WAIT_COVER_SHARE of the late sends (``_waiting_covers``). On a virtual machine the busy and
    runnable thresholds are of the core the hypervisor left (1 − the machine's ``steal_share``
    over the run): a thread running the whole time is charged only that share (docs/diagnosis.md,
    server_cpu_bound)."""
    generator = document.get("generator") or {}
    busy = [float(b) for b in generator.get("thread_busy") or []]
    waiting = [float(w) for w in generator.get("thread_waiting") or []]
    core = core_share((document.get("machine") or {}).get("steal_share"))
    pairs = list(zip(busy, waiting, strict=False))
    runnable = any(b + w >= RUNNABLE_THRESHOLD * core for b, w in pairs)
    waited = any(w >= b and w >= WAITING_FLOOR for b, w in pairs) and (
        any(b + w >= CASCADE_RUNNABLE for b, w in pairs) or _waiting_covers(waiting, sent, late)
    )
    return busy, waiting, bool(busy) and max(busy) >= BUSY_THRESHOLD * core, runnable or waited


def _waiting_covers(waiting: list[float], sent: int, late: int) -> bool:
    """_waiting_covers: the sends due while a worker thread waited for a core (each thread's
    waiting share of its even share of ``sent``) are at least WAIT_COVER_SHARE of the ``late``
    ones. A thread that runs little catches up as soon as it gets its core, so only the sends due
    during its waits can be late for it: 2 % of waiting cannot make 20 % of the sends late."""
    if not waiting or late <= 0:
        return bool(waiting)
    due_while_waiting = sum(waiting) / len(waiting) * sent
    return due_while_waiting >= WAIT_COVER_SHARE * late


def generator_saturated(
    document: Mapping[str, Any], *, open_model: bool, server_limited: bool = False
) -> Finding | None:
    """generator_saturated: a worker thread busy ≥ BUSY_THRESHOLD, or (open model) in the steady
    part of the load late sends ≥ LATE_SHARE_THRESHOLD of those sent and ≥ LATE_MIN, with a send
    lag p99 ≥ LATE_LAG_P99_MS, that the generator's threads account for: one was out of CPU, or
    short of a core (``_threads``: runnable nearly all the run, or waiting for a core as long as
    it ran). With threads that were not, late sends waited for connections: connection_wait, the
    target's doing. Where the threads' waiting is not known (older records), late sends alone are
    put down to the generator unless the target was found limiting (``server_limited``). The
    message marks throughput as a lower bound."""
    generator = document.get("generator") or {}
    requests = document.get("requests") or {}
    sent, late, late_share, lag_p99, steady, late_enough = _late(document, open_model)
    busy, waiting, cpu_bound, starved = _threads(document, sent, late)
    busiest = max(range(len(busy)), key=lambda i: busy[i]) if busy else None
    own = own_late(document)
    if own is not None:
        behind = _own_doing(late, own) and own >= BEHIND_SHARE * sent and late_enough and _had_work(busy, waiting)
    else:
        behind = late_enough and (cpu_bound or starved or (not waiting and not server_limited))
    if not (cpu_bound or behind):
        return None
    throughput = number(document.get("throughput"), "responses_per_s")
    offered = offered_rate(document) if open_model else None
    duration = number(document, "duration_s")
    total_sent = count(requests, "sent")
    sent_per_s = total_sent / duration if duration > 0 else number(document.get("throughput"), "sent_per_s")
    reasons = []
    if cpu_bound:
        assert busiest is not None
        core = core_share((document.get("machine") or {}).get("steal_share"))
        left = (
            f" ({percent(busy[busiest] / core)} of the {grouped(core, 2)} of a core the hypervisor left it)"
            if core < 1.0 - STEAL_WORTH_SAYING
            else ""
        )
        reasons.append(
            f"worker thread {busiest} of {len(busy)}{thread_place(document, busiest)} was busy "
            f"{percent(busy[busiest])} of the run{left}"
        )
    if behind:
        part = " after the start-up" if steady else ""
        reasons.append(
            f"{grouped(late)} of {grouped(sent)} requests{part} ({percent(late_share)}) were sent more "
            f"than 1 ms after their intended time (send lag p99 {grouped(lag_p99, 1)} ms)"
            + ("" if own is None else f", {grouped(own)} of them taken off the schedule late by the generator itself")
        )
        if not cpu_bound:
            reasons.append(_why_late_without_busy_threads(busy, waiting, count(requests, "connections_opened")))
    if offered is not None:
        reasons.append(
            f"it sent {grouped(sent_per_s, 1)} requests/s of the {grouped(offered, 1)}/s scheduled during the load"
        )
    message = (
        f"The load generator was the bottleneck: {'; '.join(reasons)}. Throughput is a lower bound: "
        f"≥ {grouped(throughput, 1)} responses/s{peak_text(document)}; the target may serve more (use more "
        f"--threads, fewer other processes on this machine, or more machines)."
    )
    return Finding(
        GENERATOR_SATURATED,
        WARNING,
        message,
        {
            "thread_busy": busy,
            "busiest_thread": busiest,
            "busy_threshold": BUSY_THRESHOLD,
            "sent": sent,
            "late": late,
            "late_share": late_share,
            "late_share_threshold": LATE_SHARE_THRESHOLD,
            "late_min": LATE_MIN,
            "late_lag_p99_threshold_ms": LATE_LAG_P99_MS,
            "steady_part": steady,
            "startup_s": startup_s(document),
            "server_limited": server_limited,
            "send_lag_p99_ms": lag_p99,
            "offered_rate_per_s": offered,
            "sent_per_s": sent_per_s,
            "dropped": count(requests, "dropped"),
            "responses_per_s_lower_bound": throughput,
            "connections_opened": count(requests, "connections_opened"),
            "cpu_us_per_request": number(generator, "cpu_us_per_request"),
            "thread_waiting": waiting,
            "runnable_threshold": RUNNABLE_THRESHOLD,
            "late_dispatched": own,
            "own_late_share_threshold": OWN_LATE_SHARE,
            **peak_evidence(document),
        },
    )


def _had_work(busy: list[float], waiting: list[float]) -> bool:
    """_had_work: a worker thread was runnable (busy, or waiting for a core) at least
    CASCADE_RUNNABLE of the run, as a generator that limits the load is. A loop held back while
    its threads sat idle (stopped, woken late, every thread runnable under half the run) made its
    sends late without being the bottleneck (the starved-server test on a loaded CI machine:
    over half the sends dispatched late beside a target serving a third of the rate)."""
    if not busy:
        return True  # no thread figures: the count of late dispatches alone
    runnable = [b + (waiting[i] if i < len(waiting) else 0.0) for i, b in enumerate(busy)]
    return max(runnable) >= CASCADE_RUNNABLE


def _own_doing(late: int, own: int | None) -> bool:
    """_own_doing: the engine counted the late sends its loop dispatched late (``own``), and they
    are at least OWN_LATE_SHARE of the ``late`` ones: the lateness was the generator's."""
    return own is not None and late > 0 and own >= OWN_LATE_SHARE * late


def generator_late(document: Mapping[str, Any], *, open_model: bool) -> Finding | None:
    """generator_late: late sends as generator_saturated counts them (steady part, thresholds),
    at least OWN_LATE_SHARE of them dispatched late by the generator's loop (``own_late``), but
    under BEHIND_SHARE of the sends or with its threads idle most of the run (``_had_work``), and
    no worker thread out of CPU: the generator's own delays
    (other processes on its cores, the process stopped, or its machine waking it late), which the
    latency counts from the intended send time, yet which did not hold the load back. The
    sentence names the cause the threads' shares point at: other processes, when the sends due
    while the threads waited for a core (≥ WAITING_FLOOR) could hold WAIT_COVER_SHARE of those
    dispatched late; else something outside the process. Throughput is not a lower bound."""
    sent, late, late_share, lag_p99, steady, late_enough = _late(document, open_model)
    own = own_late(document)
    if not (late_enough and _own_doing(late, own)) or own is None:
        return None
    busy, waiting, cpu_bound, _ = _threads(document, sent, late)
    if cpu_bound or (own >= BEHIND_SHARE * sent and _had_work(busy, waiting)):
        return None  # generator_saturated names the busy thread, or the generator behind its schedule
    # Waiting for a core explains the late dispatches when the sends due meanwhile could hold them.
    held_off = bool(waiting) and max(waiting) >= WAITING_FLOOR and _waiting_covers(waiting, sent, own)
    if held_off:
        cause = (
            f"its threads waited for a core up to {percent(max(waiting))} of the run: other processes on this "
            "machine held its cores (the target's too, when it runs here)"
        )
    elif waiting:
        cause = (
            f"its threads were neither busy nor waiting for a core (at most {percent(max(busy, default=0.0))} "
            f"busy, {percent(max(waiting))} waiting), so what held its loop was outside the process: it was "
            "stopped, or its machine (the kernel, a hypervisor) woke it late"
        )
    else:
        cause = f"its threads were at most {percent(max(busy, default=0.0))} busy"
    offered = offered_rate(document)
    duration = number(document, "duration_s")
    sent_per_s = count(document.get("requests"), "sent") / duration if duration > 0 else 0.0
    schedule = (
        f"it sent {grouped(sent_per_s, 1)} requests/s of the {grouped(offered, 1)}/s scheduled, and "
        if offered is not None
        else ""
    )
    part = " after the start-up" if steady else ""
    message = (
        f"The generator sent requests late by its own delays: {grouped(late)} of {grouped(sent)} requests{part} "
        f"({percent(late_share)}) were sent more than 1 ms after their intended time (send lag p99 "
        f"{grouped(lag_p99, 1)} ms), {grouped(own)} of them taken off the schedule late by the generator itself; "
        f"{cause}. Latency is timed from the intended send time, so theirs includes that delay: the generator's "
        f"side, not the target's. Yet {schedule}these delays, {percent(own / sent)} of the sends, did not hold "
        "the load back: throughput is not a lower bound."
    )
    return Finding(
        GENERATOR_LATE,
        WARNING,
        message,
        {
            "sent": sent,
            "late": late,
            "late_share": late_share,
            "late_dispatched": own,
            "own_late_share_threshold": OWN_LATE_SHARE,
            "behind_share_threshold": BEHIND_SHARE,
            "send_lag_p99_ms": lag_p99,
            "thread_busy": busy,
            "thread_waiting": waiting,
            "held_off_cores": held_off,
            "offered_rate_per_s": offered,
            "sent_per_s": sent_per_s,
            "steady_part": steady,
            **peak_evidence(document),
        },
    )


def _why_late_without_busy_threads(busy: list[float], waiting: list[float], connections_opened: int) -> str:
    """_why_late_without_busy_threads says why sends were late although no worker thread was
    out of CPU: a thread waited for a core other processes held (when the kernel says so), or,
    in an older record that does not say, other processes or connections still being opened."""
    idle = f"yet no worker thread was busy {percent(BUSY_THRESHOLD)} of the run" + (
        f" (the busiest: {percent(max(busy))})" if busy else ""
    )
    if waiting:
        return (
            f"{idle}: a worker thread waited for a core {percent(max(waiting))} of the run, held by other "
            "processes on this machine"
        )
    return (
        f"{idle}, so the sends waited for a core that other processes on this machine held, or for "
        f"connections still being opened ({grouped(connections_opened)} opened during the run)"
    )


def connection_wait(document: Mapping[str, Any], *, open_model: bool) -> Finding | None:
    """connection_wait: late sends as generator_saturated counts them, no worker thread out of
    CPU, and most of them dispatched on time (``own_late`` under OWN_LATE_SHARE of them), or,
    where that is not counted, threads not short of a core either (their waiting known): the
    sends waited for connections, which the target accepted or freed slower than the schedule
    needed."""
    sent, late, late_share, lag_p99, steady, late_enough = _late(document, open_model)
    busy, waiting, cpu_bound, starved = _threads(document, sent, late)
    own = own_late(document)
    if not late_enough or cpu_bound:
        return None
    if own is None and (not waiting or starved):
        return None
    if _own_doing(late, own):
        return None
    opened = count(document.get("requests"), "connections_opened")
    part = " after the start-up" if steady else ""
    dispatched = (
        f"only {grouped(own)} of them were taken off the schedule late by the generator, and its threads were at "
        f"most {percent(max(busy, default=0.0))} busy"
        if own is not None
        else f"the generator's threads were at most {percent(max(busy, default=0.0))} busy and waited for a core "
        f"at most {percent(max(waiting))} of the run"
    )
    message = (
        f"Sends waited for connections: {grouped(late)} of {grouped(sent)} requests{part} "
        f"({percent(late_share)}) were sent more than 1 ms late (send lag p99 {grouped(lag_p99, 1)} ms), yet "
        f"{dispatched}: the requests waited for a connection ({grouped(opened)} opened), "
        "which the target accepted or freed slower than the schedule needed. That is the target's doing, not "
        "the generator's; latency from the intended send time counts the wait."
    )
    return Finding(
        CONNECTION_WAIT,
        WARNING,
        message,
        {
            "sent": sent,
            "late": late,
            "late_share": late_share,
            "send_lag_p99_ms": lag_p99,
            "thread_busy": busy,
            "thread_waiting": waiting,
            "runnable_threshold": RUNNABLE_THRESHOLD,
            "late_dispatched": own,
            "own_late_share_threshold": OWN_LATE_SHARE,
            "connections_opened": opened,
            "steady_part": steady,
            **peak_evidence(document),
        },
    )


def in_flight_limit(
    document: Mapping[str, Any], plan: PlanLike | None, *, generator_bound: bool, server_slow: bool
) -> Finding | None:
    """in_flight_limit: open-model requests never sent (``dropped``) ≥ DROPPED_SHARE_THRESHOLD
    of those scheduled. Why the slots stayed busy: the generator itself fell behind
    (``generator_bound``: a generator_saturated finding holds), else the target answered slowly
    (``server_slow``: a queueing finding holds), else the limit was too low for the rate. When in
    flight never reached SLOTS_FULL_SHARE of the limit (with intervals and a known limit), the
    slots were not the cause: the requests waited for a connection the target did not give."""
    requests = document.get("requests") or {}
    dropped, sent = count(requests, "dropped"), count(requests, "sent")
    scheduled = dropped + sent
    if not scheduled or dropped / scheduled < DROPPED_SHARE_THRESHOLD:
        return None
    limit = max_in_flight(plan)
    peak = max((count(i, "in_flight") for i in document.get("intervals") or []), default=0)
    slots_full = not (limit and document.get("intervals") and peak < SLOTS_FULL_SHARE * limit)
    never_sent = f"{grouped(dropped)} of {grouped(scheduled)} scheduled requests ({percent(dropped / scheduled)})"
    if not slots_full:  # the slots never filled: the requests waited for a connection until the drain deadline
        message = (
            f"{never_sent} were never sent, although in flight peaked at {grouped(peak)} of the "
            f"{grouped(limit or 0)} slots (--max-in-flight, max_vus): they waited for a connection (at most "
            f"{grouped(count(document, 'peak_open_connections'))} open) that the target did not accept or "
            f"free before the run ended. The offered load was not all delivered."
        )
    else:
        limit_text = (
            f"all {grouped(limit)} in-flight slots (--max-in-flight, max_vus)"
            if limit
            else "every in-flight slot (--max-in-flight, max_vus)"
        )
        if generator_bound:
            why = "the generator fell behind (see generator_saturated): requests waiting to be sent filled them"
        elif server_slow:
            why = (
                "the target answered too slowly to free them (see the queueing finding): the server, not the "
                "generator, held the load back"
            )
        else:
            # No queueing finding is no proof of fast responses (a capped open model cannot grow a
            # backlog): state what held the slots, and both readings.
            held_ms = number((document.get("latency") or {}).get("service_time"), "mean_ms")
            served = number(document.get("throughput"), "responses_per_s")
            why = (
                f"each was held {held_ms:,.1f} ms on average while the target served {served:,.1f}/s: either "
                "the target is slower than this rate needs (then that is its capacity, and more slots only queue "
                "more at it) or the limit is too low for this rate; raise --max-in-flight (max_vus) to tell"
            )
        message = (
            f"{never_sent} were never sent because {limit_text} were busy; {why}. The offered load was not "
            "all delivered."
        )
    return Finding(
        IN_FLIGHT_LIMIT,
        WARNING,
        message,
        {
            "dropped": dropped,
            "scheduled": scheduled,
            "dropped_share": dropped / scheduled,
            "max_in_flight": limit,
            "peak_in_flight": peak,
            "slots_full": slots_full,
            "dropped_share_threshold": DROPPED_SHARE_THRESHOLD,
            "generator_bound": generator_bound,
            "server_slow": server_slow,
        },
    )


def thread_place(document: Mapping[str, Any], thread: int) -> str:
    """thread_place says where worker ``thread`` of a distributed run ran: " (thread 1 of
    generator 2, node ab12cd34, which carried 1/3 of the load)"; "" for a run on one machine."""
    distributed = document.get("distributed") or {}
    per = int(distributed.get("threads_per_generator") or 0)
    generators = int(distributed.get("generators") or 0)
    if per <= 0 or generators <= 0:
        return ""
    generator = thread // per
    parts = distributed.get("parts") or []
    node = (parts[generator].get("node_id") or "") if generator < len(parts) else ""
    where = f", node {node[:8]}" if node else ""
    return f" (thread {thread % per} of generator {generator}{where}, which carried 1/{generators} of the load)"


def generator_lost(document: Mapping[str, Any]) -> Finding | None:
    """generator_lost: a distributed run's generator died or answered nothing for seconds; what
    it sent before stays in the results, the rest of its share is missing from every figure
    after its loss (throughput is a lower bound). None when none was lost."""
    distributed = document.get("distributed") or {}
    lost = distributed.get("lost") or []
    if not lost:
        return None
    generators = int(distributed.get("generators") or 0)
    each = "; ".join(
        f"generator {x.get('generator')} (node {str(x.get('node_id') or '?')[:8]}) at "
        f"{grouped(float(x.get('at_s') or 0.0), 1)} s: {x.get('why')}"
        for x in lost
    )
    stopped = distributed.get("on_generator_loss") == "stop"
    then = (
        "the run stopped there, keeping everything received (--on-generator-loss stop)"
        if stopped
        else "the others carried on (--on-generator-loss continue)"
    )
    message = (
        f"{len(lost)} of {generators} generators were lost: {each}. Each carried 1/{generators} of the load; "
        f"{then}. What a lost generator sent after its last report is missing from every figure: counts "
        f"and throughput are lower bounds."
    )
    return Finding(GENERATOR_LOST, ERROR, message, {"lost": lost, "generators": generators})
