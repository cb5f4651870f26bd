"""The reference target's capacity bars, measured with ``surge run`` in the open model and
cross-checked against the target's own ``/stats`` (what it parsed and answered).

Bars (issue 4): with ``--workers 4 --service-time 10ms`` (capacity 400 req/s), 300 req/s
for 20 s is served with no failures and p50 ≈ 10 ms; 600 req/s with ``--queue 8`` gets 503s
for the excess while the served rate stays near 400/s. Bounds are wide on purpose: the
numbers are set by the model's arithmetic, the slack is for a busy 2-core machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from conftest import BUSY, SCRATCH
from surge.engine.target import TargetProcess


def surge_run(url: str, rate: float, duration: str) -> dict[str, Any]:
    """surge_run sends ``rate`` req/s to ``url`` for ``duration`` and returns its JSON result."""
    result = subprocess.run(
        [sys.executable, "-m", "surge", "run", url, "-r", str(rate), "-d", duration, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=SCRATCH,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@BUSY  # p50 within 3 ms of a 10 ms service time: a latency truth needs the cores
def test_300_per_s_below_capacity_is_served_at_the_service_time():
    with TargetProcess(workers=4, service_time="10ms") as target:
        target.reset_stats()
        run = surge_run(f"{target.url}/tasks", 300, "20s")
        stats = target.stats()
    requests = run["requests"]
    assert requests["failed"] == 0 and requests["dropped"] == 0, requests
    assert requests["status_codes"] == {"200": requests["sent"]}
    assert abs(requests["sent"] - 6000) <= 30, requests
    # The target counted exactly what the generator sent, and answered all of it 200.
    assert stats["received_by_route"]["GET /tasks"] == requests["sent"]
    assert stats["responses"]["GET /tasks"] == {"200": requests["sent"]}
    p50 = run["latency"]["success"]["p50_ms"]
    assert 10.0 <= p50 <= 13.0, run["latency"]["success"]


def test_600_per_s_with_queue_8_sheds_the_excess_and_serves_400():
    with TargetProcess(workers=4, service_time="10ms", queue=8) as target:
        target.reset_stats()
        run = surge_run(f"{target.url}/tasks", 600, "10s")
        stats = target.stats()
    requests = run["requests"]
    codes = requests["status_codes"]
    assert set(codes) == {"200", "503"}, codes
    served_per_s = codes["200"] / run["duration_s"]
    assert 370 <= served_per_s <= 410, (served_per_s, requests)
    assert 1700 <= codes["503"] <= 2300, codes  # ~200/s of excess for 10 s
    assert stats["responses"]["GET /tasks"] == codes
    assert stats["rejected"]["503"] == codes["503"]
    # Waiting is bounded by the queue: at most 8 ahead, 4 served at a time, 10 ms each (~30 ms).
    # Unbounded, 200/s of excess for 10 s would wait seconds; the margin is for a busy machine
    # (72 ms was seen under a parallel test run).
    assert run["latency"]["success"]["p99_ms"] <= 200, run["latency"]["success"]


def test_rate_limit_caps_what_gets_through():
    with TargetProcess(rate_limit=100, burst=10) as target:
        target.reset_stats()
        run = surge_run(f"{target.url}/tasks", 300, "5s")
        stats = target.stats()
    codes = run["requests"]["status_codes"]
    assert 480 <= codes["200"] <= 530, codes  # 10 burst + 100/s for 5 s
    assert codes["200"] + codes["429"] == run["requests"]["sent"]
    assert stats["rejected"]["429"] == codes["429"]


def test_stall_shows_in_the_generators_percentiles():
    # A 500 ms freeze every 4 s; any 4 s of load overlaps exactly 500 ms of freeze (in one
    # piece or two), whenever it starts. At 200 req/s, 100 of 800 requests wait 0-500 ms
    # (uniformly), so p99 is ~460 ms and the max ~500 ms, while p50 stays near zero.
    with TargetProcess(stall_every="4s", stall_for="500ms") as target:
        run = surge_run(f"{target.url}/health", 200, "4s")
    latency = run["latency"]["all"]
    assert run["requests"]["failed"] == 0
    assert latency["p50_ms"] < 20, latency
    assert 350 <= latency["p99_ms"] <= 560, latency
    assert 400 <= latency["max_ms"] <= 700, latency
