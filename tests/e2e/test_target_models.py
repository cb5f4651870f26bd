"""The reference target's concurrency models, measured with ``surge run`` over loopback and
checked against their exact answers (docs/target.md, "Throughput that peaks" and "A worker per
connection").

- Universal Scalability Law (``--contention σ --coherency κ``): closed-model runs at N
  connections complete X(N) = N / (D · (1 + σ(N−1) + κN(N−1))) per second, highest at
  N* = √((1−σ)/κ). With σ = 0.1, κ = 0.9/64 and D = 20 ms, N* = 8 exactly and X(4) = X(16)
  = 136 req/s lie 15 % under X(8) = 161 req/s: the measured curve rises, peaks at 8, falls.
- ``--thread-per-connection`` with 4 workers and 8 connections: 4 connections are served, fast,
  for as long as they stay open; the other 4 get nothing and every request on them times out,
  which the target's ``/stats`` confirms connection by connection.

Bounds on rates are wide (a shared 2-core machine); the counts are exact.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from conftest import SCRATCH, surge
from surge.engine.target import TargetProcess

SIGMA, KAPPA, SERVICE_S = 0.1, 0.9 / 64, 0.020
"""SIGMA, KAPPA, SERVICE_S give a curve whose peak, N* = √((1 − 0.1) / (0.9/64)), is 8."""


def usl_throughput(n: int) -> float:
    """usl_throughput is X(n) in requests per second for the law above."""
    return n / (SERVICE_S * (1 + SIGMA * (n - 1) + KAPPA * n * (n - 1)))


def closed_run(url: str, connections: int, duration: str, *extra: str) -> dict[str, Any]:
    """closed_run runs ``surge run URL -c N -d DURATION --json`` and returns its document."""
    result = subprocess.run(
        [sys.executable, "-m", "surge", "run", url, "-c", str(connections), "-d", duration, *extra, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=SCRATCH,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def test_throughput_against_connections_peaks_at_n_star_then_falls():
    levels = [2, 4, 8, 16, 32]
    with TargetProcess(workers=1000, service_time="20ms", contention=SIGMA, coherency=KAPPA) as target:
        assert abs(target.stats()["capacity_rps"] - usl_throughput(8)) < 1e-6  # X(N*), N* = 8
        measured = {}
        for n in levels:
            run = closed_run(f"{target.url}/tasks", n, "2s")
            assert run["requests"]["failed"] == 0, run["requests"]
            measured[n] = run["throughput"]["responses_per_s"]
    rates = [measured[n] for n in levels]
    assert rates[0] < rates[1] < rates[2] > rates[3] > rates[4], measured
    assert max(measured, key=lambda n: measured[n]) == 8, measured
    for n in levels:
        assert abs(measured[n] / usl_throughput(n) - 1) < 0.15, (n, measured[n], usl_throughput(n))


def test_beyond_the_workers_connections_wait_and_time_out():
    with TargetProcess("--thread-per-connection", workers=4, service_time="1ms") as target:
        target.reset_stats()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "surge",
                "run",
                f"{target.url}/tasks",
                "-c",
                "8",
                "-d",
                "3s",
                "--timeout",
                "1s",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=SCRATCH,
        )
        try:
            # Mid-run, once the first waiting requests have timed out and their VUs wait again
            # on new connections: four connections hold the four workers, and no other has one.
            deadline = time.monotonic() + 30
            during = target.stats()
            while during["connections"]["waiting"] < 8 and time.monotonic() < deadline:
                time.sleep(0.05)
                during = target.stats()
        finally:
            out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
        # The served connections close with the run; the workers then reach the waiting
        # connections, whose clients have mostly gone: those are dropped unanswered.
        after = target.stats()
        while after["connections"]["waiting"] and time.monotonic() < deadline:
            time.sleep(0.05)
            after = target.stats()
    assert during["connections"]["given_worker"] == 4 and during["busy_workers"] == 4, during
    assert during["connections"]["waiting"] >= 8, during
    requests = json.loads(out)["requests"]
    unanswered = requests["timed_out"] + requests["interrupted"]
    assert set(requests["failure_classes"]) <= {"request_timeout", "interrupted"}, requests
    # Four VUs wait out a 1 s timeout about three times each in 3 s; the other four are served.
    assert 4 * 2 <= unanswered <= 4 * 3, requests
    assert requests["succeeded"] > 100 * unanswered, requests
    # The target read every request and answered the ones surge got answers to. Each request
    # left unanswered is either a waiting connection the target dropped, or one a worker reached
    # just as its client gave up: answered into a closed connection (a race a busy machine wins
    # now and then). Together they are exactly the unanswered ones.
    assert after["received_by_route"]["GET /tasks"] == requests["sent"], after
    answered_late = after["responses"]["GET /tasks"]["200"] - requests["succeeded"]
    assert set(after["responses"]["GET /tasks"]) == {"200"}, after
    assert 0 <= answered_late <= unanswered, (after, requests)
    assert after["connections"]["abandoned"] + answered_late == unanswered, (after, requests)
    assert after["connections"]["waiting"] == 0, after


def test_a_full_queue_of_connections_is_answered_503():
    with TargetProcess("--thread-per-connection", workers=2, service_time="1ms", queue=2) as target:
        target.reset_stats()
        run = closed_run(f"{target.url}/tasks", 6, "2s", "--timeout", "1s")
        stats = target.stats()
    requests = run["requests"]
    # 2 served, 2 waiting; the 5th and 6th VU's connections find no place and are shed (and
    # reconnect, and are shed again) while the waiting ones time out.
    assert requests["shed"] > 0 and requests["timed_out"] > 0, requests
    assert stats["rejected"]["503"] == requests["status_codes"]["503"], (requests, stats)


def test_bad_model_values_name_their_flag():
    cases = [
        (["--workers", "4", "--service-time", "1ms", "--contention", "1"], "--contention: must be from 0 to below 1"),
        (["--workers", "4", "--service-time", "1ms", "--coherency", "-0.1"], "--coherency: must be from 0 to 1"),
        (["--coherency", "0.01"], "--coherency: needs --workers"),
        (["--thread-per-connection"], "--thread-per-connection: needs --workers"),
        (["--keepalive-timeout", "5"], "--keepalive-timeout: `5` has no unit"),
    ]
    for args, message in cases:
        result = surge("target", "--bind", "127.0.0.1:0", "--duration", "1s", *args)
        assert result.code == 2, (args, result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"surge: error: {message}"), (args, result.stderr)
