"""The reference target's own resources as the limit (docs/target.md, "A CPU-bound server" and
"A store behind one lock"), measured with ``surge run`` over loopback:

- ``--service-cpu``: each request's service time is burned as CPU, by the thread's CPU clock, on
  one of ``--workers`` threads. With ``--workers 1`` (one event loop, seed 000's controller) the
  watched process uses about one core under load, never two, and serves at most 1 / mean.
- ``--lock-hold``: every Task API operation holds its shard's lock that long, so one lock
  (``--shards 1``, seed 002's MemoryStore) completes at most 1 / hold per second while 32 shards
  (its ShardStore) serve several times more under the same concurrent writes.

Bounds are one-sided where a busy machine can only make the target slower.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from typing import Any

from conftest import surge
from surge.engine.target import TargetProcess


def run_target(*args: str) -> subprocess.CompletedProcess[str]:
    """run_target runs ``surge target ARGS`` to completion."""
    return subprocess.run([sys.executable, "-m", "surge", "target", *args], capture_output=True, text=True, timeout=30)


def test_startup_line_states_the_capacities():
    result = run_target(
        "--bind",
        "127.0.0.1:0",
        "--duration",
        "300ms",
        "--workers",
        "1",
        "--service-time",
        "4ms",
        "--service-cpu",
        "--shards",
        "1",
        "--lock-hold",
        "1ms",
    )
    assert result.returncode == 0, result.stderr
    for expected in [
        "1 workers × 4ms (mean 4ms) = capacity 250.0 req/s",
        "service CPU: each request burns its service time as CPU (the thread's own CPU clock) on one of "
        "1 thread (one event loop)",
        "lock hold: every Task API operation holds the one lock for 1ms",
        "the store completes at most 1000.0 req/s (1 / 1ms)",
    ]:
        assert expected in result.stdout, result.stdout


def loaded_samples(run: dict[str, Any]) -> list[float]:
    """loaded_samples are the watched process's CPU readings (cores) taken while the load ran,
    the first second (connections opening) left out."""
    process = run["target_process"]
    end = float(run["duration_s"])
    return [
        float(s["cpu_cores"])
        for s in process["samples"]
        if s["cpu_cores"] is not None and 1.0 <= float(s["t_s"]) <= end
    ]


def test_one_event_loop_uses_one_core_and_serves_at_most_one_over_the_cpu_time():
    with TargetProcess(workers=1, service_time="2ms", service_cpu=True) as target:
        stats = target.stats()
        assert stats["capacity_rps"] == 500.0 and stats["service_cpu_s"] == 0.0
        target.reset_stats()
        assert target.pid is not None
        # 8 connections keep the one thread busy: a queue of up to 7 waits for it at all times.
        run = surge("run", f"{target.url}/tasks", "-c", "8", "-d", "5s", "--watch-pid", str(target.pid), "--json")
        assert run.code == 0, run.stderr[-2000:]
        doc = run.json()
        after = target.stats()
    served = after["responses"]["GET /tasks"]["200"]
    assert doc["requests"]["failed"] == 0 and served == doc["requests"]["succeeded"]
    # Each request burned its 2 ms, by the service thread's own CPU clock.
    assert 0.002 * served <= after["service_cpu_s"] <= 0.0025 * served, (served, after["service_cpu_s"])
    # One thread: never more than 1 / 2 ms, however idle the machine.
    assert doc["throughput"]["responses_per_s"] <= 500 * 1.03, doc["throughput"]
    # The watched process ran near its bound of one core under load (the burning thread, plus
    # the event loop's small share), never near two; other processes can only take from it.
    cores = loaded_samples(doc)
    assert len(cores) >= 3, doc["target_process"]
    assert 0.5 <= statistics.median(cores) <= 1.2, cores
    assert max(cores) <= 1.35, cores


def post_rate(url: str) -> float:
    """post_rate is the responses per second of 64 connections creating tasks for 3 s."""
    run = surge("run", f"{url}/tasks", "-m", "POST", "--body", '{"title": "t"}', "-c", "64", "-d", "3s", "--json")
    assert run.code == 0, run.stderr[-2000:]
    doc = run.json()
    assert doc["requests"]["failed"] == 0, doc["requests"]
    return float(doc["throughput"]["responses_per_s"])


def test_one_lock_serves_one_over_hold_and_32_shards_several_times_more():
    rates = {}
    for shards in (1, 32):
        with TargetProcess(shards=shards, lock_hold="2ms") as target:
            assert target.stats()["store_capacity_rps"] == shards / 0.002
            rates[shards] = post_rate(target.url)
    # One lock held 2 ms per create: at most 500/s, and near it with 64 writers waiting.
    assert 0.6 * 500 <= rates[1] <= 500 * 1.03, rates
    # 32 locks (16,000/s): the store is no longer the limit; several times the one lock.
    assert rates[32] >= 3 * rates[1], rates
