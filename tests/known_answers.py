"""Targets whose answers are known, shared by the local tests that establish a local run's answer
and the distributed tests that must give the same (tests/e2e/test_capacity.py and test_sweep.py,
tests/distributed/test_distributed.py)."""

from __future__ import annotations

SLO = ("--slo", "p(99) < 1s", "--slo", "failure_rate < 1%")
"""SLO: a latency bound only a long queue crosses (a pause of the shared machine does not), few
failures: overload is caught by the achieved rate (≥ 99 % of offered)."""

NOISY_MACHINE = ("--retries", "1")
"""NOISY_MACHINE: the test machine is shared (2 cores, other suites running): its threads are
now and then off their core for a few hundred milliseconds, which near capacity builds a queue
that lasts seconds (a step measured again). (Late sends alone fail no step: their effect is
judged.)"""

CAPACITY_SEARCH = (
    *SLO,
    *NOISY_MACHINE,
    "--start-rate",
    "150",
    "--step-duration",
    "2s",
    "--cooldown",
    "0.2s",
    "-c",
    "16",
)
"""CAPACITY_SEARCH are the flags of a capacity search that lands within 5 % of workers / service
time (-c 16: connections opened up front, so that few are opened mid-step, their first send late)."""

USL_SIGMA, USL_KAPPA = 0.05, 0.95 / 64
"""USL_SIGMA and USL_KAPPA are the USL target's contention and coherency: N* = √((1 − σ)/κ) = 8 exactly."""

USL_N_STAR = 8.0
"""USL_N_STAR is the USL target's peak concurrency."""

USL_TARGET = {"workers": 1000, "service_time": "10ms", "contention": USL_SIGMA, "coherency": USL_KAPPA}
"""USL_TARGET serves every request in 10 ms × (1 + σ(n−1) + κn(n−1)), n in service."""
