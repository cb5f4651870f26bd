"""The diagnosis rules on synthetic result documents (docs/diagnosis.md): each finding appears
when its rule holds, with the numbers behind it, and not when it does not."""

from __future__ import annotations

import pytest

from diagnosis_documents import EXAMPLES, document, interval, kinds, requests
from surge.diagnosis import Finding, findings, generator_bound
from surge.diagnosis.generator import BEHIND_SHARE, LATE_LAG_P99_MS, LATE_MIN, LATE_SHARE_THRESHOLD, own_late

OPEN_PLAN = {
    "scenarios": [{"executor": {"type": "constant-arrival-rate", "rate": 1000, "max_vus": 500}}],
    "limits": {"timeout_s": 10.0},
}
CLOSED_PLAN = {"scenarios": [{"executor": {"type": "constant-vus", "vus": 50}}], "limits": {"timeout_s": 10.0}}


def only(found: list[Finding], kind: str) -> Finding:
    matching = [f for f in found if f.kind == kind]
    assert len(matching) == 1, kinds(found)
    return matching[0]


def test_a_healthy_run_has_no_findings():
    assert findings(document(), plan=CLOSED_PLAN) == []


@pytest.mark.parametrize(
    "failure_class, kind, words",
    [
        ("address_exhausted", "port_exhaustion", ("7,279 requests", "EADDRNOTAVAIL", "local ports", "not the target")),
        ("too_many_open_files", "open_file_exhaustion", ("7,279 requests", "EMFILE", "1,024", "ulimit -n")),
    ],
)
def test_client_exhaustion_is_the_clients_limit(failure_class, kind, words):
    doc = document(req=requests(20169, failures={failure_class: 7279}))
    found = findings(doc, plan=CLOSED_PLAN)
    assert kinds(found) == [kind]
    finding = only(found, kind)
    assert finding.severity == "error"
    assert finding.evidence[failure_class] == 7279
    for word in words:
        assert word in finding.message
    if kind == "open_file_exhaustion":
        assert finding.evidence["open_file_limit"] == 1024


def test_a_busy_generator_thread_makes_throughput_a_lower_bound():
    doc = document(thread_busy=(0.4, 0.96))
    finding = only(findings(doc, plan=CLOSED_PLAN), "generator_saturated")
    assert finding.evidence["busiest_thread"] == 1
    assert "worker thread 1 of 2 was busy 96.0 %" in finding.message
    assert "≥ 100.0 responses/s" in finding.message
    assert findings(document(thread_busy=(0.89, 0.89)), plan=CLOSED_PLAN) == []


@pytest.mark.parametrize(
    "late, lag_p99_ms, plan, saturated",
    [
        (int(1000 * LATE_SHARE_THRESHOLD), LATE_LAG_P99_MS, OPEN_PLAN, True),
        (int(1000 * LATE_SHARE_THRESHOLD) - 1, 500.0, OPEN_PLAN, False),
        (500, LATE_LAG_P99_MS - 0.1, OPEN_PLAN, False),  # late, but by too little to shape the results
        (500, 500.0, CLOSED_PLAN, False),  # the closed model has no schedule to fall behind
    ],
)
def test_late_sends_in_the_open_model_mean_the_generator_fell_behind(late, lag_p99_ms, plan, saturated):
    doc = document(req=requests(1000, late=late), lag_p99_ms=lag_p99_ms)
    assert ("generator_saturated" in kinds(findings(doc, plan=plan))) is saturated


def test_late_sends_say_why_when_no_thread_was_busy():
    # Late by a lot with idle threads: the cores were held elsewhere, or connections were opening.
    doc = document(req=requests(1000, late=300, connections_opened=700), lag_p99_ms=80.0, thread_busy=(0.3,))
    finding = only(findings(doc, plan=OPEN_PLAN), "generator_saturated")
    assert "yet no worker thread was busy 90.0 % of the run (the busiest: 30.0 %)" in finding.message
    assert "other processes on this machine" in finding.message and "700 opened" in finding.message
    assert finding.evidence["connections_opened"] == 700
    # A thread out of CPU is reason enough: the waiting is not guessed at.
    busy = document(req=requests(1000, late=300), lag_p99_ms=80.0, thread_busy=(0.97,))
    assert "no worker thread was busy" not in only(findings(busy, plan=OPEN_PLAN), "generator_saturated").message


@pytest.mark.parametrize(
    "busy, waiting, kind",
    [
        ((0.28, 0.3), (0.004, 0.002), "connection_wait"),  # idle threads that never waited for a core
        ((0.28, 0.3), (0.15, 0.13), "connection_wait"),  # runnable under half the run: blocked, on connections
        ((0.45, 0.3), (0.5, 0.01), "generator_saturated"),  # runnable 95 %: short of a core (a busy loop on it)
        ((0.05, 0.04), (0.35, 0.3), "generator_saturated"),  # waited 7 times as long as it ran: others on its core
        # waited longer than it ran, but 5.5 % of waiting cannot hold 30 % of the sends late (seed 000 on a noisy host)
        ((0.02, 0.3), (0.06, 0.05), "connection_wait"),
        # runnable 88 %: it cannot catch up between waits, its lateness compounds (the starved generator)
        ((0.44,), (0.44,), "generator_saturated"),
    ],
)
def test_late_sends_with_idle_threads_are_the_generators_only_when_it_was_short_of_a_core(busy, waiting, kind):
    doc = document(req=requests(1000, late=300, connections_opened=700), lag_p99_ms=80.0, thread_busy=busy)
    doc["generator"]["thread_waiting"] = list(waiting)
    found = findings(doc, plan=OPEN_PLAN)
    assert kind in kinds(found) and ({"connection_wait", "generator_saturated"} - {kind}).isdisjoint(kinds(found))
    finding = only(found, kind)
    if kind == "connection_wait":
        assert "Sends waited for connections: 300 of 1,000 requests" in finding.message
        assert (
            "at most 30.0 % busy and waited for a core at most " + f"{max(waiting):.1%}".replace("%", " %")
            in finding.message
        )
        assert "target's doing" in finding.message and "lower bound" not in finding.message
    else:
        assert "a worker thread waited for a core " + f"{max(waiting):.1%}".replace("%", " %") in finding.message


@pytest.mark.parametrize(
    "busy, waiting, late, own, kind",
    [
        # The starved-generator runs whose shares the thread rule judged wrong (runnable 66-85 %, waiting
        # less than running): 99 % of the sends late, 85-90 % of those dispatched late: behind its schedule.
        ((0.48,), (0.37,), 990, 890, "generator_saturated"),
        ((0.445,), (0.215,), 990, 845, "generator_saturated"),
        # Idle threads that hardly waited, their late sends dispatched on time: connections.
        ((0.28, 0.3), (0.15, 0.13), 300, 30, "connection_wait"),
        # Threads runnable 95 % of the run, but only a tenth of the late sends dispatched late: the
        # count of what the loop itself did late outweighs the shares.
        ((0.45, 0.3), (0.5, 0.01), 300, 30, "connection_wait"),
        # Most late sends the generator's own, but under half of all sends: its delays, not its limit.
        ((0.12, 0.09), (0.083, 0.083), 300, 270, "generator_late"),
        ((0.0095, 0.008), (0.002, 0.001), 93, 80, "generator_late"),
        # Most sends dispatched late, yet every thread idle most of the run (runnable 5 %): held back
        # (stopped, woken late, on a loaded machine), not the bottleneck.
        ((0.02, 0.02), (0.03, 0.03), 900, 800, "generator_late"),
    ],
)
def test_the_sends_dispatched_late_say_whose_lateness_it_was(busy, waiting, late, own, kind):
    """Where the engine counts the sends its loop took off the schedule late (late_dispatched),
    late sends are the generator's when at least half of them were, whatever the threads' shares
    (generator_saturated when they are half the sends or more, else generator_late); otherwise
    they waited for a connection."""
    req = requests(1000, late=late, connections_opened=700)
    req["late_dispatched"] = own
    doc = document(req=req, lag_p99_ms=80.0, thread_busy=busy)
    doc["generator"]["thread_waiting"] = list(waiting)
    found = findings(doc, plan=OPEN_PLAN)
    lateness = {"connection_wait", "generator_saturated", "generator_late"}
    assert kind in kinds(found) and (lateness - {kind}).isdisjoint(kinds(found))
    finding = only(found, kind)
    assert finding.evidence["late_dispatched"] == own
    if kind == "connection_wait":
        assert f"only {own} of them were taken off the schedule late by the generator" in finding.message
    else:
        assert f"{own} of them taken off the schedule late by the generator itself" in finding.message
    if kind == "generator_late":
        assert "did not hold the load back: throughput is not a lower bound" in finding.message
        assert "lower bound:" not in finding.message and generator_bound(found) is False


@pytest.mark.parametrize(
    "busy, waiting, cause",
    [
        # Sends due while the threads waited hold the late ones: other processes had the cores.
        ((0.12, 0.09), (0.083, 0.083), "its threads waited for a core up to 8.3 % of the run: other processes"),
        # Neither busy nor waiting: stopped, or woken late by the machine (a hypervisor's wake-up latency).
        ((0.0095, 0.008), (0.002, 0.001), "neither busy nor waiting for a core (at most 0.9 % busy, 0.2 % waiting)"),
    ],
)
def test_the_generators_own_delays_name_the_cause_its_threads_point_at(busy, waiting, cause):
    req = requests(1000, late=93, connections_opened=20)
    req["late_dispatched"] = 80
    doc = document(req=req, lag_p99_ms=12.0, thread_busy=busy)
    doc["generator"]["thread_waiting"] = list(waiting)
    finding = only(findings(doc, plan=OPEN_PLAN), "generator_late")
    assert cause in finding.message, finding.message
    assert "93 of 1,000 requests (9.3 %)" in finding.message and "send lag p99 12.0 ms" in finding.message
    assert finding.evidence["behind_share_threshold"] == BEHIND_SHARE
    # Half the sends or more dispatched late, by a thread runnable half the run or more: the
    # generator held the load back; with its threads idle most of the run it did not.
    req["late"], req["late_dispatched"] = 990, 500
    assert kinds(findings(doc, plan=OPEN_PLAN)) == ["generator_late"]
    doc["generator"]["thread_busy"], doc["generator"]["thread_waiting"] = [0.3, 0.1], [0.25, 0.05]
    assert kinds(findings(doc, plan=OPEN_PLAN)) == ["generator_saturated"]


def test_sends_dispatched_late_are_counted_from_the_steady_part_only():
    """The count comes from the same intervals as the late sends: a start-up's late dispatches
    (connections being opened) do not count, and an interval without the count (an older record)
    leaves it unknown."""
    parts = _late_intervals(10, late=60, lag_p99_ms=50.0, rate=200.0)
    for n, part in enumerate(parts):
        part["requests"]["late_dispatched"] = 60 if n < 2 else 5
    doc = document(req=requests(2000, late=600), intervals=parts, lag_p99_ms=50.0)
    assert own_late(doc) == 8 * 5
    assert "connection_wait" in kinds(findings(doc, plan=OPEN_PLAN))
    del parts[5]["requests"]["late_dispatched"]
    assert own_late(doc) is None


@pytest.mark.parametrize("steal, saturated", [(None, False), (0.0, False), (0.2, True)])
def test_a_worker_thread_short_of_a_core_by_the_hypervisors_steal_is_busy(steal, saturated):
    """A worker thread running the whole run on a VM whose hypervisor kept a fifth of every core
    is charged 0.78 of the run: busy, at 97.5 % of what it could get."""
    doc = document(thread_busy=(0.2, 0.78))
    doc["machine"] = {"cores": 2, "cpu_cores_mean": 1.0, "steal_share": steal, "samples": []}
    found = findings(doc, plan=CLOSED_PLAN)
    assert ("generator_saturated" in kinds(found)) is saturated
    if saturated:
        message = only(found, "generator_saturated").message
        assert "was busy 78.0 % of the run (97.5 % of the 0.80 of a core the hypervisor left it)" in message


@pytest.mark.parametrize("steal, kind", [(0.0, "connection_wait"), (0.2, "generator_saturated")])
def test_a_thread_runnable_all_the_core_the_hypervisor_left_was_short_of_a_core(steal, kind):
    """Late sends with a thread busy 50 % and waiting 25 %: runnable 75 % of the run, which is
    94 % of the 0.8 of a core a hypervisor taking a fifth leaves: short of a core."""
    doc = document(req=requests(1000, late=300, connections_opened=700), lag_p99_ms=80.0, thread_busy=(0.5,))
    doc["generator"]["thread_waiting"] = [0.25]
    doc["machine"] = {"cores": 2, "cpu_cores_mean": 1.0, "steal_share": steal, "samples": []}
    found = findings(doc, plan=OPEN_PLAN)
    assert kind in kinds(found) and ({"connection_wait", "generator_saturated"} - {kind}).isdisjoint(kinds(found))


def _late_intervals(
    n: int,
    *,
    sent: int = 200,
    late: int = 0,
    lag_p99_ms: float = 1.0,
    rate: float | None = None,
    late_from: int = 0,
    late_until: int | None = None,
) -> list[dict]:
    """_late_intervals are ``n`` one-second intervals of ``sent`` requests each, ``late`` of them
    late (with a send-lag p99 of ``lag_p99_ms``) in intervals ``late_from`` to ``late_until``."""
    until = n if late_until is None else late_until
    return [
        interval(
            i,
            completions=sent,
            rate=rate,
            late=late if late_from <= i < until else 0,
            lag_p99_ms=lag_p99_ms if late_from <= i < until else 1.0,
        )
        for i in range(n)
    ]


def test_the_open_model_is_told_from_the_document_without_a_plan():
    doc = document(
        req=requests(2000, late=600),
        intervals=_late_intervals(10, late=60, lag_p99_ms=300.0, rate=2000.0),
        lag_p99_ms=300.0,
    )
    finding = only(findings(doc), "generator_saturated")
    assert finding.evidence["offered_rate_per_s"] == 2000.0
    assert "of the 2,000.0/s scheduled" in finding.message


@pytest.mark.parametrize(
    "late_until, saturated",
    [
        (2, False),  # late only while the VUs and connections were being set up (the first 2 s of 10)
        (None, True),  # late all along: the steady part too
    ],
)
def test_only_late_sends_in_the_steady_part_count_against_the_generator(late_until, saturated):
    rows = _late_intervals(10, late=100, lag_p99_ms=80.0, late_until=late_until)
    late = sum(r["requests"]["late"] for r in rows)
    doc = document(req=requests(2000, late=late), intervals=rows, lag_p99_ms=80.0)
    found = findings(doc, plan=OPEN_PLAN)
    assert ("generator_saturated" in kinds(found)) is saturated
    if saturated:
        evidence = only(found, "generator_saturated").evidence
        assert evidence["steady_part"] is True and evidence["startup_s"] == 2.0
        assert evidence["late"] == 800 and evidence["sent"] == 1600  # intervals 2..9


def test_a_few_late_sends_are_not_a_bottleneck():
    """A 3.9/s step: one send of 16 late (6 %) is under LATE_MIN, whatever its share."""
    rows = [
        interval(i, completions=4, sent=4, late=1 if i == 3 else 0, lag_p99_ms=40.0 if i == 3 else 0.5)
        for i in range(4)
    ]
    doc = document(req=requests(16, late=1), intervals=rows, lag_p99_ms=40.0, duration_s=4.0)
    assert "generator_saturated" not in kinds(findings(doc, plan=OPEN_PLAN))
    assert LATE_MIN > 1


def _backlog_intervals(n: int = 6, served: int = 100, offered: int = 300, shed: int = 0) -> list[dict]:
    """_backlog_intervals: ``offered``/s sent to a target serving ``served``/s (2 workers × 20 ms):
    in flight grows by the difference each second and the latency from the send with it."""
    rows = []
    for i in range(n):
        waited = (i + 0.5) * (offered - served) / served  # seconds the middle request of the second waited
        req = requests(
            served, late=0, status_failed=shed, shed=shed, codes={"200": served, **({"503": shed} if shed else {})}
        )
        req["sent"] = offered
        rows.append(
            interval(
                i,
                completions=served + shed,
                mean_ms=20.0 + 1000 * waited,
                req=req,
                in_flight=(i + 1) * (offered - served),
                rate=float(offered),
            )
        )
    return rows


def _plateau_intervals() -> list[dict]:
    """_plateau_intervals: a closed ramp from 1 to 40 VUs on 2 workers × 20 ms (100/s): throughput
    grows with the VUs up to 100/s, then only the latency does."""
    rows = []
    for i, vus in enumerate([1, 1, 1, 2, 8, 16, 24, 32, 40]):
        x = min(vus / 0.02, 100.0)
        w_ms = max(20.0, vus / x * 1000)
        rows.append(interval(i, completions=int(x), mean_ms=w_ms, in_flight=vus))
    return rows


@pytest.mark.parametrize(
    "busy, rows, why",
    [
        ((0.2,), None, "too low for this rate"),
        ((0.97,), None, "generator fell behind"),
        ((0.2,), "backlog", "target answered too slowly"),
    ],
)
def test_dropped_requests_say_why_the_in_flight_limit_was_reached(busy, rows, why):
    intervals = _backlog_intervals() if rows else []
    doc = document(req=requests(950, dropped=50), thread_busy=busy, intervals=intervals, duration_s=6.0)
    finding = only(findings(doc, plan=OPEN_PLAN), "in_flight_limit")
    assert "50 of 1,000 scheduled requests (5.0 %)" in finding.message
    assert "all 500 in-flight slots" in finding.message
    assert why in finding.message


def test_requests_never_sent_with_free_slots_waited_for_a_connection():
    """In flight peaked at 100 of 500 slots: the 50 requests never sent were not held back by the
    in-flight limit but waited for a connection the target did not accept before the end."""
    rows = [interval(i, completions=95, in_flight=100) for i in range(10)]
    doc = document(req=requests(950, dropped=50), intervals=rows)
    finding = only(findings(doc, plan=OPEN_PLAN), "in_flight_limit")
    assert finding.evidence["slots_full"] is False and finding.evidence["peak_in_flight"] == 100
    assert "although in flight peaked at 100 of the 500 slots" in finding.message
    assert "waited for a connection" in finding.message and "were busy" not in finding.message


def _cascade_intervals(timeouts_per_interval: list[int], served: int = 100) -> list[dict]:
    return [
        interval(
            i,
            completions=served + n,
            in_flight=50 + n,
            req=requests(served, failures={"request_timeout": n} if n else None),
        )
        for i, n in enumerate(timeouts_per_interval)
    ]


def test_a_burst_of_timeouts_is_a_timeout_cascade():
    steps = [0] * 10 + [300, 250]
    doc = document(
        req=requests(1200, failures={"request_timeout": 550}), intervals=_cascade_intervals(steps), duration_s=12.0
    )
    finding = only(findings(doc, plan=CLOSED_PLAN), "timeout_cascade")
    assert finding.severity == "error"
    assert finding.evidence["timed_out"] == 550
    assert finding.evidence["burst_start_s"] == 10.0
    assert finding.evidence["peak_timeouts"] == 300 and finding.evidence["peak_end_s"] == 11.0
    assert finding.evidence["timeout_s"] == 10.0
    assert "550 of 1,750 requests (31.4 %) timed out at the 10 s timeout" in finding.message
    assert "queue longer than the timeout" in finding.message


def test_a_trickle_of_timeouts_is_not_a_cascade():
    steps = [6] * 20  # 3 % of each interval's requests, all along the run
    doc = document(
        req=requests(3880, failures={"request_timeout": 120}),
        intervals=_cascade_intervals(steps, served=194),
        duration_s=20.0,
    )
    assert "timeout_cascade" not in kinds(findings(doc, plan=CLOSED_PLAN))


@pytest.mark.parametrize(
    "other_failures, words",
    [
        (0, "back-pressure, not a breakdown"),
        (150, "150 other requests (12.5 %) failed too"),
    ],
)
def test_429_and_503_are_load_shed_rather_than_broken(other_failures, words):
    req = requests(
        850,
        status_failed=200 + other_failures,
        shed=200,
        codes={"200": 850, "503": 180, "429": 20, **({"500": other_failures} if other_failures else {})},
    )
    finding = only(findings(document(req=req), plan=CLOSED_PLAN), "load_shed")
    assert finding.evidence["status_codes"] == {"429": 20, "503": 180}
    assert "were 429/503 (429 × 20, 503 × 180)" in finding.message
    assert words in finding.message


def _samples(cpu: list[float], threads: int = 8) -> list[dict]:
    return [
        {"t_s": i + 1.0, "cpu_cores": c, "rss_bytes": 10**8, "threads": threads, "open_files": 70}
        for i, c in enumerate(cpu)
    ]


@pytest.mark.parametrize(
    "cpu, rates, bound",
    [
        ([1.95] * 8, [500.0] * 8, True),
        ([1.95] * 8, [100.0 * (i + 1) for i in range(8)], False),  # throughput still climbing
        ([0.6] * 8, [500.0] * 8, False),  # CPU to spare
    ],
)
def test_a_target_at_full_cpu_with_flat_throughput_is_cpu_bound(cpu, rates, bound):
    doc = document(
        intervals=[interval(i, completions=int(r), responses_per_s=r) for i, r in enumerate(rates)],
        duration_s=8.0,
        target_process={"cores": 2},
    )
    found = findings(doc, target_samples=_samples(cpu), plan=CLOSED_PLAN)
    assert ("server_cpu_bound" in kinds(found)) is bound
    if bound:
        finding = only(found, "server_cpu_bound")
        assert "used 1.95 cores, 97.5 % of the 2 it can use" in finding.message
        assert finding.evidence["responses_per_s"] == 500.0


def test_cpu_bound_counts_no_more_cores_than_the_target_has_threads():
    doc = document(
        intervals=[interval(i, completions=300) for i in range(6)],
        duration_s=6.0,
        target_process={"cores": 8, "samples": _samples([0.98] * 6, threads=1)},
    )
    finding = only(findings(doc, plan=CLOSED_PLAN), "server_cpu_bound")  # samples read from the document
    assert finding.evidence["cpu_cores_cap"] == 1.0


def test_a_backlog_states_littles_law_and_the_service_capacity():
    """300/s offered to a target serving 100/s: sends outpace completions and the wait grows."""
    doc = document(req=requests(600), intervals=_backlog_intervals(), duration_s=6.0, min_ms=20.0)
    finding = only(findings(doc, plan=OPEN_PLAN), "queueing")
    assert finding.evidence["evidence"] == "backlog"
    assert finding.evidence["service_capacity_per_s"] == pytest.approx(100.0)
    assert finding.evidence["sent"] == 900 and finding.evidence["completed"] == 300
    # The first second was already at capacity: its latency is no service time.
    assert finding.evidence["service_time_ms"] is None and finding.evidence["served_at_once"] is None
    assert "requests arrived faster than the target served them" in finding.message
    assert "100.0 successful responses/s while it had a queue" in finding.message
    assert "fastest" not in finding.message


def test_a_plateau_states_the_capacity_and_the_service_time_of_the_least_loaded_seconds():
    doc = document(req=requests(600), intervals=_plateau_intervals(), duration_s=8.0, min_ms=0.3)
    finding = only(findings(doc, plan=CLOSED_PLAN), "queueing")
    assert finding.evidence["evidence"] == "plateau"
    assert finding.evidence["service_capacity_per_s"] == pytest.approx(100.0)
    assert finding.evidence["service_time_ms"] == pytest.approx(20.0)
    assert finding.evidence["served_at_once"] == pytest.approx(2.0)
    assert "that is 2.0 requests served at once" in finding.message
    assert "peak second: 100.0/s, ending 4 s into the run" in finding.message  # first at 2 VUs


@pytest.mark.parametrize(
    "name, mean_ms, min_ms, per_s, in_flight",
    [
        # 100/s against 50 workers × exp(200 ms) (250/s): the fastest response took 0.4 ms.
        ("idle exponential", 200.0, 0.43, 100, 20),
        # 35 VUs with 500 ms think on 16 workers × lognormal 280 ms (51/s): 40 % busy, no queue.
        ("35 VUs at 40 % busy", 310.0, 70.85, 39, 12),
    ],
)
def test_variable_service_time_without_a_queue_is_not_queueing(name, mean_ms, min_ms, per_s, in_flight):
    """The old rule took the fastest response for the service time: any spread of service
    times was a "queue", with the offered rate stated as the capacity (99.5/s, 26.5/s)."""
    rows = [
        interval(i, completions=per_s, mean_ms=mean_ms * (1 + 0.03 * (-1) ** i), in_flight=in_flight + i % 2)
        for i in range(8)
    ]
    doc = document(req=requests(per_s * 8), intervals=rows, mean_ms=mean_ms, min_ms=min_ms, duration_s=8.0)
    assert "queueing" not in kinds(findings(doc, plan=CLOSED_PLAN)), name


def test_seconds_slowed_by_a_busy_machine_are_no_plateau():
    """35 VUs all along; in some seconds the busy machine held the generator and the latency it
    measured doubled (so did the in-flight count X × W), at the same throughput: the load offered
    did not rise, so that is no queue and no capacity."""
    rows = [interval(i, completions=26, mean_ms=620.0 if i in (3, 6) else 310.0, vus=35, in_flight=9) for i in range(9)]
    doc = document(req=requests(234), intervals=rows, mean_ms=380.0, min_ms=70.0, duration_s=9.0)
    assert "queueing" not in kinds(findings(doc, plan=CLOSED_PLAN))


def test_a_closed_ramp_is_judged_on_its_vus():
    rows = _plateau_intervals()
    for row, vus in zip(rows, [1, 1, 1, 2, 8, 16, 24, 32, 40], strict=False):
        row["scenarios"] = [{"name": "ramp", "active_vus": vus}]
    doc = document(req=requests(600), intervals=rows, duration_s=9.0)
    finding = only(findings(doc, plan=CLOSED_PLAN), "queueing")
    assert finding.evidence["offered_unit"] == "VUs" and finding.evidence["high_offered"] == 36.0
    assert finding.evidence["service_capacity_per_s"] == pytest.approx(100.0)
    assert "as the load offered rose from 1.0 to 36.0 VUs" in finding.message


def test_a_fast_target_is_not_queueing():
    assert findings(document(mean_ms=1.6, min_ms=0.2), plan=CLOSED_PLAN) == []  # 8×, but only 1.4 ms of waiting


def test_a_finding_goes_to_and_from_summary_json():
    finding = findings(document(thread_busy=(0.99,)), plan=CLOSED_PLAN)[0]
    assert Finding.from_dict(finding.to_dict()) == finding
    assert set(finding.to_dict()) == {"kind", "severity", "message", "evidence"}


def test_fast_rejections_do_not_count_as_service():
    """Shed 503s answered in microseconds are not the target's service, nor its capacity."""
    doc = document(
        req=requests(600, status_failed=1200, shed=1200, codes={"200": 600, "503": 1200}),
        intervals=_backlog_intervals(served=100, offered=400, shed=200),
        mean_ms=200.0,
        min_ms=0.02,
        duration_s=6.0,
    )
    found = findings(doc, plan=OPEN_PLAN)
    assert only(found, "queueing").evidence["service_capacity_per_s"] == 100.0
    assert "load_shed" in kinds(found)


STEP_TIMEOUT_PLAN = {
    "scenarios": [
        {
            "name": "spike",
            "executor": {"type": "ramping-vus", "stages": []},
            "flow": {
                "sequences": [
                    {"steps": [{"tag": "telemetry", "timeout_s": 10.0}, {"tag": "health", "timeout_s": None}]}
                ]
            },
        }
    ],
    "limits": {"timeout_s": 30.0},
}
"""STEP_TIMEOUT_PLAN: seed 004's shape: the request's own 10 s timeout beside the 30 s default."""


@pytest.mark.parametrize(
    "tags, timeout",
    [
        ([{"scenario": "spike", "tag": "telemetry", "requests": {"timed_out": 550}}], 10.0),
        ([{"scenario": "spike", "tag": "health", "requests": {"timed_out": 550}}], 30.0),
        ([], 30.0),  # no tags: the longest timeout a step had
    ],
)
def test_the_cascade_names_the_timeout_the_requests_had(tags, timeout):
    doc = document(
        req=requests(1200, failures={"request_timeout": 550}),
        intervals=_cascade_intervals([0] * 10 + [300, 250]),
        duration_s=12.0,
        tags=tags,
    )
    finding = only(findings(doc, plan=STEP_TIMEOUT_PLAN), "timeout_cascade")
    assert finding.evidence["timeout_s"] == timeout
    assert f"timed out at the {timeout:.0f} s timeout" in finding.message


def test_gateway_spikes_cascade_is_at_its_requests_10_s_timeout():
    from surge.scenario import load

    plan = load(EXAMPLES / "gateway-spike.yaml").compile().main
    doc = document(
        req=requests(1200, failures={"request_timeout": 550}),
        intervals=_cascade_intervals([0] * 10 + [300, 250]),
        duration_s=12.0,
        tags=[{"scenario": "high_concurrency", "tag": "telemetry", "requests": {"timed_out": 550}}],
    )
    finding = only(findings(doc, plan=plan), "timeout_cascade")
    assert finding.evidence["timeout_s"] == 10.0
    assert "timed out at the 10 s timeout" in finding.message and "30 s" not in finding.message


def test_one_event_loop_at_one_core_is_cpu_bound_whatever_its_thread_count():
    """Seed 000's controller: one thread at ~1 core among 3, on 2 cores: the process's ceiling
    is not min(2, 3) cores, its loop's is one."""
    rows = [
        interval(i, completions=240, responses_per_s=240.0, rate=400.0, sent=400, late=60, lag_p99_ms=40.0)
        for i in range(8)
    ]
    samples = [{**s, "thread_cores_max": 0.97 + 0.01 * (i % 3)} for i, s in enumerate(_samples([1.02] * 8, threads=3))]
    doc = document(
        req=requests(1920, late=480),
        intervals=rows,
        duration_s=8.0,
        lag_p99_ms=40.0,
        target_process={"cores": 2},
        thread_busy=(0.06, 0.06),
    )
    found = findings(doc, target_samples=samples, plan=OPEN_PLAN)
    finding = only(found, "server_cpu_bound")
    assert finding.evidence["per_thread"] is True and finding.evidence["cpu_cores_cap"] == 1.0
    assert "its busiest thread used 0.98 of a core" in finding.message
    assert "generator_saturated" not in kinds(found)  # its late sends waited on the target


@pytest.mark.parametrize("steal, bound", [(0.0, False), (0.2, True), (0.05, False)])
def test_a_loop_short_of_a_core_by_the_hypervisors_steal_is_cpu_bound(steal, bound):
    """A VM whose hypervisor gives a fifth of every core to other guests: an event loop running
    the whole time is charged 0.8 of a core. Its ceiling is that 0.8, not 1.0 (the CI failure
    of 2026-11-26: the one-loop target at 0.78 under 0.2-0.5 cores of steal)."""
    rows = [interval(i, completions=340, responses_per_s=340.0) for i in range(8)]
    samples = [{**s, "thread_cores_max": 0.78, "machine_steal_share": steal} for s in _samples([0.78] * 8, threads=4)]
    doc = document(intervals=rows, duration_s=8.0, target_process={"cores": 2})
    found = findings(doc, target_samples=samples, plan=CLOSED_PLAN)
    assert ("server_cpu_bound" in kinds(found)) is bound
    if bound:
        finding = only(found, "server_cpu_bound")
        assert finding.evidence["per_thread"] is True and finding.evidence["core_share_mean"] == pytest.approx(0.8)
        assert "(97.5 % of the 0.80 of a core a thread could get, the hypervisor giving the rest" in finding.message


def test_a_process_short_of_its_cores_by_the_hypervisors_steal_is_cpu_bound():
    doc = document(
        intervals=[interval(i, completions=500, responses_per_s=500.0) for i in range(8)],
        duration_s=8.0,
        target_process={"cores": 2},
    )
    samples = [{**s, "machine_steal_share": 0.25} for s in _samples([1.45] * 8)]
    finding = only(findings(doc, target_samples=samples, plan=CLOSED_PLAN), "server_cpu_bound")
    assert "used 1.45 cores, 96.7 % of the 2 it can use (1.50 net of the hypervisor's steal)" in finding.message


def _machine(cores: int, busy: list[float]) -> dict:
    return {
        "cores": cores,
        "cpu_cores_mean": sum(busy) / len(busy),
        "samples": [{"t_s": i + 1.0, "cpu_cores": c} for i, c in enumerate(busy)],
    }


@pytest.mark.parametrize(
    "busy, watched, saturated",
    [
        ([1.98] * 8, True, True),  # generator 0.9 + target 1.03 + others on 2 cores
        ([1.98] * 8, False, True),  # the same without --watch-pid: machine and generator CPU are known
        ([1.2] * 8, False, False),
        ([0.5, 0.6] + [1.3] * 6, False, False),
        ([1.99, 1.99] + [1.3] * 6, False, False),  # busy only during the start-up
    ],
)
def test_a_machine_with_no_core_to_spare_is_said_to_measure_the_machine(busy, watched, saturated):
    rows = [interval(i, completions=250, responses_per_s=250.0) for i in range(8)]
    extra = {"target_process": {"cores": 2}} if watched else {}
    doc = document(
        intervals=rows,
        duration_s=8.0,
        url="http://127.0.0.1:8080/",
        machine=_machine(2, busy),
        generator={
            "cpu": {"user_s": 5.0, "system_s": 2.2},
            "cpu_us_per_request": 30.0,
            "thread_busy": [0.45, 0.45],
            "max_rss_kib": 30000,
            "open_file_limit": 1024,
        },
        **extra,
    )
    samples = _samples([1.03] * 8, threads=3) if watched else None
    found = findings(doc, target_samples=samples, plan=CLOSED_PLAN)
    assert ("machine_saturated" in kinds(found)) is saturated
    if saturated:
        finding = only(found, "machine_saturated")
        assert "generator and target share a saturated machine: the result measures the machine" in finding.message
        assert finding.evidence["generator_cpu_cores"] == pytest.approx(0.9)
        assert "1.98 of its 2 cores" in finding.message
        if watched:
            assert "the target 1.03, other processes 0.05" in finding.message
        else:
            assert "the target and other processes 1.08" in finding.message


def test_a_remote_target_on_a_saturated_machine_blames_the_machine_not_the_target():
    doc = document(duration_s=8.0, url="http://10.1.2.3/", machine=_machine(4, [3.9] * 8))
    finding = only(findings(doc, plan=CLOSED_PLAN), "machine_saturated")
    assert "the generator ran on a saturated machine" in finding.message


def _distributed(lost: list[dict] | None = None, policy: str = "stop") -> dict:
    """_distributed is a 3-generator run's ``distributed`` block, 2 threads each."""
    parts = [{"generator": g, "node_id": f"{g}abcdef0123456789"} for g in range(3)]
    return {
        "generators": 3,
        "threads_per_generator": 2,
        "on_generator_loss": policy,
        "lost": lost or [],
        "parts": parts,
    }


def test_a_busy_thread_of_a_distributed_run_is_named_with_its_generator_node_and_share():
    doc = document(thread_busy=(0.1, 0.1, 0.2, 0.95, 0.1, 0.1), distributed=_distributed())
    message = only(findings(doc, plan=CLOSED_PLAN), "generator_saturated").message
    assert (
        "worker thread 3 of 6 (thread 1 of generator 1, node 1abcdef0, which carried 1/3 of the load) was busy 95.0 %"
        in message
    )


@pytest.mark.parametrize("policy", ["stop", "continue"])
def test_a_lost_generator_is_an_error_naming_it_its_node_and_what_is_missing(policy):
    lost = [{"generator": 2, "node_id": "2abcdef0123456789", "why": "it died (ActorDiedError)", "at_s": 3.25}]
    found = findings(document(distributed=_distributed(lost, policy)), plan=CLOSED_PLAN)
    finding = only(found, "generator_lost")
    assert finding.severity == "error"
    assert (
        "1 of 3 generators were lost: generator 2 (node 2abcdef0) at 3.2 s: it died (ActorDiedError)" in finding.message
    )
    assert ("the run stopped there" in finding.message) is (policy == "stop")
    assert "lower bounds" in finding.message
    assert "generator_lost" not in kinds(findings(document(distributed=_distributed()), plan=CLOSED_PLAN))
