"""gateway_spike: the share of requests examples/gateway-spike.yaml's schedule predicts to fail,
from the target's queue model, and the example run at SCALE against its calibrated target (the
``gateway_spike_run`` fixture, a pytest plugin of tests/conftest.py: one run serves
tests/e2e/test_time_scale_gateway.py and seed 004 alike)."""

from __future__ import annotations

import heapq
import math
import shlex
from collections import deque
from pathlib import Path

import pytest

from conftest import CliRun, surge
from surge.engine.target import TargetProcess

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "gateway-spike.yaml"
"""EXAMPLE is the gateway example: a 50 -> 100 -> 200-VU spike against 8 workers."""

SCALE = 0.25
"""SCALE shortens the example's stages (98 s) to about 25 s."""


@pytest.fixture(scope="session")  # read only: one run for the e2e test and the seed
def gateway_spike_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRun, Path]:
    """gateway_spike_run is EXAMPLE run at SCALE against the target of its ``# target:`` line,
    recorded in a directory of its own: the finished ``surge run`` and that directory."""
    out = tmp_path_factory.mktemp("gateway-spike") / "run"
    [line] = [line for line in EXAMPLE.read_text().splitlines() if line.startswith("# target:")]
    with TargetProcess(*shlex.split(line.partition(":")[2])) as target:
        run = surge(
            "run", str(EXAMPLE), "--target", target.url, "--time-scale", str(SCALE), "--out", str(out), timeout=240
        )
    return run, out


RAMP_TICK_S = 0.01
"""RAMP_TICK_S is how often the engine re-evaluates a ramp's VU count (worker/mod.rs)."""


def predicted_failures(
    stages: list[tuple[float, int]], *, workers: int, timeout_s: float, think_s: float
) -> tuple[float, int]:
    """predicted_failures is (share of requests timed out, requests sent) for closed-loop VUs
    following ``stages`` (duration in seconds, target VUs) against ``workers`` workers, each
    held by one connection until it closes."""
    end = sum(d for d, _ in stages)

    def vus_at(t: float) -> int:
        start, level = 0.0, 0.0
        for duration, target in stages:
            if t < start + duration:
                return math.floor(level + (target - level) * (t - start) / duration)
            start, level = start + duration, target
        return 0

    free = workers
    holders: set[int] = set()  # VUs whose connection holds a worker
    waiting: deque[tuple[int, int]] = deque()  # (VU, connection) waiting for a worker, oldest first
    pending: dict[int, tuple[int, float]] = {}  # VU -> (connection, sent at) of a request not answered
    due: list[tuple[float, int, int]] = []  # (when, VU, connection): a send (connection -1) or a timeout
    running: set[int] = set()
    succeeded = failed = connections = 0

    def hand_over(now: float) -> None:
        """A worker is free: the oldest waiting connection whose client still waits gets it."""
        nonlocal free, succeeded
        while waiting:
            vu, conn = waiting.popleft()
            if pending.get(vu, (None, 0.0))[0] == conn:
                del pending[vu]
                holders.add(vu)
                succeeded += 1
                heapq.heappush(due, (now + think_s, vu, -1))
                return
        free += 1

    for tick in range(int(end / RAMP_TICK_S) + int((timeout_s + think_s) / RAMP_TICK_S) + 2):
        now = tick * RAMP_TICK_S
        while due and due[0][0] <= now:
            at, vu, conn = heapq.heappop(due)
            if conn >= 0:  # a timeout: the client drops that connection
                if pending.get(vu, (None, 0.0))[0] == conn:
                    del pending[vu]
                    failed += 1
                    heapq.heappush(due, (at + think_s, vu, -1))
                continue
            if at >= end or vu >= vus_at(at):  # above the target at the end of an iteration: it stops
                running.discard(vu)
                if vu in holders:
                    holders.discard(vu)
                    hand_over(at)
                continue
            if vu in holders:
                succeeded += 1
                heapq.heappush(due, (at + think_s, vu, -1))
            elif free:
                free -= 1
                holders.add(vu)
                succeeded += 1
                heapq.heappush(due, (at + think_s, vu, -1))
            else:
                connections += 1
                waiting.append((vu, connections))
                pending[vu] = (connections, at)
                heapq.heappush(due, (at + timeout_s, vu, connections))
        for vu in range(vus_at(now) if now < end else 0):
            if vu not in running:
                running.add(vu)
                heapq.heappush(due, (now, vu, -1))
    return failed / (succeeded + failed), succeeded + failed
