"""The diagnosis rules on synthetic result documents (docs/diagnosis.md): each finding appears
when its rule holds, with the numbers behind it, and not when it does not."""

from __future__ import annotations

import pytest

from diagnosis_documents import document, interval, kinds, requests
from surge.diagnosis import Finding, findings
from surge.diagnosis.generator import LATE_LAG_P99_MS, LATE_SHARE_THRESHOLD

OPEN_PLAN = {"scenarios": [{"executor": {"type": "constant-arrival-rate", "rate": 1000, "max_vus": 500}}],
             "limits": {"timeout_s": 10.0}}
CLOSED_PLAN = {"scenarios": [{"executor": {"type": "constant-vus", "vus": 50}}], "limits": {"timeout_s": 10.0}}


def only(found: list[Finding], kind: str) -> Finding:
    matching = [f for f in found if f.kind == kind]
    assert len(matching) == 1, kinds(found)
    return matching[0]


def test_a_healthy_run_has_no_findings():
    assert findings(document(), plan=CLOSED_PLAN) == []


@pytest.mark.parametrize("failure_class, kind, words", [
    ("address_exhausted", "port_exhaustion", ("7,279 requests", "EADDRNOTAVAIL", "local ports", "not the target")),
    ("too_many_open_files", "open_file_exhaustion", ("7,279 requests", "EMFILE", "1,024", "ulimit -n")),
])
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


@pytest.mark.parametrize("late, lag_p99_ms, plan, saturated", [
    (int(1000 * LATE_SHARE_THRESHOLD), LATE_LAG_P99_MS, OPEN_PLAN, True),
    (int(1000 * LATE_SHARE_THRESHOLD) - 1, 500.0, OPEN_PLAN, False),
    (500, LATE_LAG_P99_MS - 0.1, OPEN_PLAN, False),  # late, but by too little to shape the results
    (500, 500.0, CLOSED_PLAN, False),  # the closed model has no schedule to fall behind
])
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


def test_the_open_model_is_told_from_the_document_without_a_plan():
    doc = document(req=requests(1000, late=300), intervals=[interval(0, completions=100, rate=2000.0)],
                   lag_p99_ms=300.0)
    finding = only(findings(doc), "generator_saturated")
    assert finding.evidence["offered_rate_per_s"] == 2000.0
    assert "of the 2,000.0/s scheduled" in finding.message


@pytest.mark.parametrize("busy, slow_server, why", [
    ((0.2,), False, "too low for this rate"),
    ((0.97,), False, "generator fell behind"),
    ((0.2,), True, "target answered too slowly"),
])
def test_dropped_requests_say_why_the_in_flight_limit_was_reached(busy, slow_server, why):
    mean_ms, min_ms = (900.0, 20.0) if slow_server else (1.0, 0.5)
    doc = document(req=requests(950, dropped=50), thread_busy=busy, mean_ms=mean_ms, min_ms=min_ms)
    finding = only(findings(doc, plan=OPEN_PLAN), "in_flight_limit")
    assert "50 of 1,000 scheduled requests (5.0 %)" in finding.message
    assert "all 500 in-flight slots" in finding.message
    assert why in finding.message


def _cascade_intervals(timeouts_per_interval: list[int], served: int = 100) -> list[dict]:
    return [interval(i, completions=served + n, in_flight=50 + n,
                     req=requests(served, failures={"request_timeout": n} if n else None))
            for i, n in enumerate(timeouts_per_interval)]


def test_a_burst_of_timeouts_is_a_timeout_cascade():
    steps = [0] * 10 + [300, 250]
    doc = document(req=requests(1200, failures={"request_timeout": 550}),
                   intervals=_cascade_intervals(steps), duration_s=12.0)
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
    doc = document(req=requests(3880, failures={"request_timeout": 120}),
                   intervals=_cascade_intervals(steps, served=194), duration_s=20.0)
    assert "timeout_cascade" not in kinds(findings(doc, plan=CLOSED_PLAN))


@pytest.mark.parametrize("other_failures, words", [
    (0, "back-pressure, not a breakdown"),
    (150, "150 other requests (12.5 %) failed too"),
])
def test_429_and_503_are_load_shed_rather_than_broken(other_failures, words):
    req = requests(850, status_failed=200 + other_failures, shed=200,
                   codes={"200": 850, "503": 180, "429": 20, **({"500": other_failures} if other_failures else {})})
    finding = only(findings(document(req=req), plan=CLOSED_PLAN), "load_shed")
    assert finding.evidence["status_codes"] == {"429": 20, "503": 180}
    assert "were 429/503 (429 × 20, 503 × 180)" in finding.message
    assert words in finding.message


def _samples(cpu: list[float], threads: int = 8) -> list[dict]:
    return [{"t_s": i + 1.0, "cpu_cores": c, "rss_bytes": 10**8, "threads": threads, "open_files": 70}
            for i, c in enumerate(cpu)]


@pytest.mark.parametrize("cpu, rates, bound", [
    ([1.95] * 8, [500.0] * 8, True),
    ([1.95] * 8, [100.0 * (i + 1) for i in range(8)], False),  # throughput still climbing
    ([0.6] * 8, [500.0] * 8, False),  # CPU to spare
])
def test_a_target_at_full_cpu_with_flat_throughput_is_cpu_bound(cpu, rates, bound):
    doc = document(intervals=[interval(i, completions=int(r), responses_per_s=r) for i, r in enumerate(rates)],
                   duration_s=8.0, target_process={"cores": 2})
    found = findings(doc, target_samples=_samples(cpu), plan=CLOSED_PLAN)
    assert ("server_cpu_bound" in kinds(found)) is bound
    if bound:
        finding = only(found, "server_cpu_bound")
        assert "used 1.95 cores, 97.5 % of the 2 it can use" in finding.message
        assert finding.evidence["responses_per_s"] == 500.0


def test_cpu_bound_counts_no_more_cores_than_the_target_has_threads():
    doc = document(intervals=[interval(i, completions=300) for i in range(6)], duration_s=6.0,
                   target_process={"cores": 8, "samples": _samples([0.98] * 6, threads=1)})
    finding = only(findings(doc, plan=CLOSED_PLAN), "server_cpu_bound")  # samples read from the document
    assert finding.evidence["cpu_cores_cap"] == 1.0


def test_queueing_states_littles_law_and_the_service_capacity():
    rows = [interval(i, completions=100, mean_ms=1000.0, in_flight=100) for i in range(10)]
    doc = document(req=requests(1000), intervals=rows, mean_ms=1000.0, min_ms=20.0)
    finding = only(findings(doc, plan=CLOSED_PLAN), "queueing")
    assert finding.evidence["little_l"] == pytest.approx(100.0)
    assert finding.evidence["service_capacity_per_s"] == pytest.approx(100.0)
    assert finding.evidence["served_at_once"] == pytest.approx(2.0)
    assert "100.0 requests were in flight on average" in finding.message
    assert "the same as 2.0 requests served at once if each took the fastest time, 20.00 ms" in finding.message


def test_a_fast_target_is_not_queueing():
    assert findings(document(mean_ms=1.6, min_ms=0.2), plan=CLOSED_PLAN) == []  # 8×, but only 1.4 ms of waiting


def test_a_finding_goes_to_and_from_summary_json():
    finding = findings(document(thread_busy=(0.99,)), plan=CLOSED_PLAN)[0]
    assert Finding.from_dict(finding.to_dict()) == finding
    assert set(finding.to_dict()) == {"kind", "severity", "message", "evidence"}


def test_fast_rejections_do_not_count_as_service():
    """Shed 503s answered in microseconds are not the target's service time, nor its capacity."""
    rows = [interval(i, completions=300, mean_ms=200.0, in_flight=60, responses_per_s=300.0,
                     req=requests(100, status_failed=200, shed=200, codes={"200": 100, "503": 200}))
            for i in range(10)]
    doc = document(req=requests(1000, status_failed=2000, shed=2000, codes={"200": 1000, "503": 2000}),
                   intervals=rows, mean_ms=200.0, min_ms=0.02)
    doc["latency"]["success"]["min_ms"] = 20.0
    finding = only(findings(doc, plan=CLOSED_PLAN), "queueing")
    assert finding.evidence["fastest_ms"] == 20.0
    assert finding.evidence["service_capacity_per_s"] == 100.0
    assert finding.evidence["served_at_once"] == pytest.approx(2.0)
    assert "load_shed" in kinds(findings(doc, plan=CLOSED_PLAN))
