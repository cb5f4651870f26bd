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
from collections.abc import Callable
from typing import Any

import pytest

from conftest import BUSY, SCRATCH
from surge.engine.target import TargetProcess

RATE = 500
DURATION_S = 6.0
FREEZE_AT_S = 2.0
FREEZE_S = 1.0


def _expected_quantile_ms(q: float) -> float:
    return (FREEZE_S - (1 - q) * DURATION_S) * 1000


def _run_freezing(
    target: TargetProcess, freeze: Callable[[subprocess.Popen[str]], int], freeze_s: float
) -> dict[str, Any]:
    """_run_freezing runs RATE/s of ``target``'s /health for DURATION_S (open model), stops the
    process that ``freeze`` names (given surge's) for ``freeze_s`` once the target has received
    FREEZE_AT_S seconds' worth of requests (so the freeze is that far into the load however long
    the CLI took to start), then lets it go on, and returns the run's --json document."""
    url = f"{target.url}/health"
    run = ["run", url, "-r", str(RATE), "-d", f"{DURATION_S}s", "--max-in-flight", "2000", "--json"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "surge", *run],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=SCRATCH,
    )
    deadline = time.monotonic() + 30
    while target.received() < RATE * FREEZE_AT_S and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    os.kill(freeze(proc), signal.SIGSTOP)
    time.sleep(freeze_s)
    os.kill(freeze(proc), signal.SIGCONT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    return dict(json.loads(stdout))


def test_server_freeze_appears_in_percentiles():
    with TargetProcess() as target:
        target.reset_stats()
        assert target.pid is not None
        server = target.pid
        doc = _run_freezing(target, lambda _: server, FREEZE_S)
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
    assert requests["late_dispatched"] <= requests["late"]


GENERATOR_FREEZE_S = 0.5


@BUSY  # its answer needs the machine to itself: beside other tests the catch-up after the freeze is slow
def test_a_generator_that_freezes_counts_the_late_sends_as_its_own():
    """The generator itself stopped for 0.5 s (SIGSTOP on surge's process) at 500/s: the 250 sends
    due meanwhile go out late, the engine counts them as dispatched late by its own loop
    (requests.late_dispatched), the latency counts the wait, and the diagnosis names the
    generator's own delays, not the target, and not as its limit: a tenth of the sends late
    held no load back (generator_late; docs/diagnosis.md, "Whose lateness")."""
    with TargetProcess() as target:
        doc = _run_freezing(target, lambda generator: generator.pid, GENERATOR_FREEZE_S)

    requests = doc["requests"]
    assert requests["sent"] == RATE * DURATION_S and requests["failed"] == 0
    due_in_freeze = RATE * GENERATOR_FREEZE_S
    # Those due in the freeze's last millisecond are not more than 1 ms late: a few fewer than 250.
    assert due_in_freeze * 0.95 <= requests["late_dispatched"] <= requests["late"], requests
    assert doc["latency"]["all"]["max_ms"] == pytest.approx(GENERATOR_FREEZE_S * 1000, abs=150)
    kinds = [f["kind"] for f in doc["findings"]]
    # Beside other tests (not in this test's phase) the backlog the freeze left takes long to
    # clear, and sends dispatched on time wait behind it for connections: then connection_wait
    # outweighs the freeze's own 250 (seen once in a parallel run: the generator's doing, which
    # the count of late dispatches alone does not show).
    if "machine_saturated" in kinds:
        # Other processes held the cores too: then the generator's loop, slow to read its
        # responses, also leaves sends waiting for connections, and whose lateness it was
        # cannot be told apart; the machine is named, which is the honest answer.
        return
    assert "generator_late" in kinds and not {"connection_wait", "generator_saturated"} & set(kinds), doc["findings"]
    late = next(f for f in doc["findings"] if f["kind"] == "generator_late")
    assert "it was stopped" in late["message"], late["message"]  # SIGSTOP: neither busy nor waiting for a core
