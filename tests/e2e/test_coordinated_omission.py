"""A server that freezes for 1 s during an open-model run shows the freeze in the
percentiles, exactly as it happened (no coordinated omission).

At rate R for T seconds with a freeze of F seconds, R·F requests are due during the
freeze and each waits until it ends: their delays are spread evenly over (0, F]. So the
share of requests delayed by more than x (x < F) is (F − x)·R / (R·T) = (F − x)/T, and
the q-quantile for q > 1 − F/T is F − (1 − q)·T.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import SCRATCH
from surge.engine.target import TargetProcess

RATE = 500
DURATION_S = 6.0
FREEZE_AT_S = 2.0
FREEZE_S = 1.0


def _expected_quantile_ms(q: float) -> float:
    return (FREEZE_S - (1 - q) * DURATION_S) * 1000


def test_server_freeze_appears_in_percentiles():
    with TargetProcess() as target:
        target.reset_stats()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "surge",
                "run",
                f"{target.url}/health",
                "-r",
                str(RATE),
                "-d",
                f"{DURATION_S}s",
                "--max-in-flight",
                "2000",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=SCRATCH,
        )
        time.sleep(FREEZE_AT_S + 0.5)  # the CLI needs a moment to start
        os.kill(target.pid, signal.SIGSTOP)
        time.sleep(FREEZE_S)
        os.kill(target.pid, signal.SIGCONT)
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, stderr
        doc = json.loads(stdout)
        received = target.received()

    requests = doc["requests"]
    assert requests["sent"] == RATE * DURATION_S
    assert requests["sent"] == received
    assert requests["dropped"] == 0 and requests["failed"] == 0
    latency = doc["latency"]["all"]
    # p90 and p95 fall inside the band of delayed requests; p50 does not.
    # The server also needs tens of ms after SIGCONT to catch up on the queued requests,
    # which lifts the lower quantiles of the band a little; a generator with coordinated
    # omission would report ~1 ms for all three.
    for q, key, tolerance_ms in ((0.90, "p90_ms", 100), (0.95, "p95_ms", 100), (0.99, "p99_ms", 60)):
        assert latency[key] == pytest.approx(_expected_quantile_ms(q), abs=tolerance_ms), (key, latency)
    assert latency["p50_ms"] < 50
    assert latency["max_ms"] == pytest.approx(FREEZE_S * 1000, abs=100)
    # The share of requests delayed by more than 100 ms follows from rate and freeze.
    # (checked through the percentile above; the send lag stays small: sends were on time)
    assert doc["latency"]["send_lag"]["p99_ms"] < 50
