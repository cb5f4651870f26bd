"""--time-scale shortens a test, not what it measures: the gateway example
(examples/gateway-spike.yaml: a 50 -> 100 -> 200-VU spike, 0.5 s think time, 10 s timeout,
against 8 slots of 502 ms) at --time-scale 0.25 fails the share of requests a model of the
same queue predicts for that schedule: think times, the timeout and the graceful ramp-down
keep their length, so no request is cut off early and none is left out of failure_rate.

The model is computed here rather than a measured figure written down: a FIFO queue of 8
slots each holding a request 502 ms (the target admits every request and serves it even
after the client gave up, docs/target.md), VUs following the ramp (a new VU starts at once,
a VU above the target stops at the end of its iteration), each sending, waiting for the
response or the 10 s timeout, then thinking 0.5 s. For the full run it gives 16.1 % of 1,464
requests (the example's header measured 15.5 % of 1,462), for 0.25 19.9 % of 522.
"""

from __future__ import annotations

import heapq
import math
from pathlib import Path

from conftest import surge
from surge.scenario import load
from surge.target import TargetProcess

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "gateway-spike.yaml"
RAMP_TICK_S = 0.01
"""RAMP_TICK_S is how often the engine re-evaluates a ramp's VU count (worker/mod.rs)."""


def predicted_failures(stages: list[tuple[float, int]], *, workers: int, service_s: float, timeout_s: float,
                       think_s: float) -> tuple[float, int]:
    """predicted_failures is (share of requests timed out, requests sent) for closed-loop VUs
    following ``stages`` (duration in seconds, target VUs) against a FIFO queue of
    ``workers`` slots of ``service_s`` each."""
    end = sum(d for d, _ in stages)

    def vus_at(t: float) -> int:
        start, level = 0.0, 0.0
        for duration, target in stages:
            if t < start + duration:
                return math.floor(level + (target - level) * (t - start) / duration)
            start, level = start + duration, target
        return 0

    free = [0.0] * workers  # when each slot is next free
    due: list[tuple[float, int]] = []  # (when a VU starts its next iteration, VU)
    running: set[int] = set()
    succeeded = failed = 0
    for tick in range(int(end / RAMP_TICK_S) + 2):
        now = tick * RAMP_TICK_S
        while due and due[0][0] <= now:
            at, vu = heapq.heappop(due)
            if at >= end or vu >= vus_at(at):  # above the target at the end of an iteration: it stops
                running.discard(vu)
                continue
            finish = max(at, free[0]) + service_s
            heapq.heapreplace(free, finish)
            if finish - at > timeout_s:
                failed, done = failed + 1, at + timeout_s
            else:
                succeeded, done = succeeded + 1, finish
            heapq.heappush(due, (done + think_s, vu))
        for vu in range(vus_at(now) if now < end else 0):
            if vu not in running:
                running.add(vu)
                heapq.heappush(due, (now, vu))
    return failed / (succeeded + failed), succeeded + failed


def test_a_shortened_gateway_run_fails_the_share_its_schedule_predicts():
    scale = 0.25
    [scenario] = load(EXAMPLE).compile(time_scale=scale).main["scenarios"]
    [[step]] = [seq["steps"] for seq in scenario["flow"]["sequences"]]
    stages = [(s["duration_s"], s["target"]) for s in scenario["executor"]["stages"]]
    assert scenario["flow"]["think_after_iteration"] == {"type": "fixed", "s": 0.5}  # not scaled
    assert scenario["executor"]["graceful_ramp_down_s"] == 30.0  # not scaled
    share, sent = predicted_failures(stages, workers=8, service_s=0.502, timeout_s=step["timeout_s"],
                                     think_s=0.5)
    full_share, _ = predicted_failures([(d / scale, t) for d, t in stages], workers=8, service_s=0.502,
                                       timeout_s=step["timeout_s"], think_s=0.5)
    assert abs(share - full_share) < 0.06  # the shortened run measures about what the full one does

    with TargetProcess("--workers", "8", "--service-time", "502ms") as target:
        run = surge("run", str(EXAMPLE), "--target", target.url, "--time-scale", str(scale), "--json")
    assert run.code == 99, run.stderr[-2000:]
    requests = run.json()["requests"]
    assert requests["interrupted"] == 0, requests  # the graceful stops were not shortened
    assert abs(requests["sent"] - sent) <= 0.05 * sent, (requests, sent)
    assert abs(requests["failure_rate"] - share) <= 0.04, (requests, share, full_share)
