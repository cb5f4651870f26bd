"""Stop signals: Ctrl-C (SIGINT), SIGTERM and SIGHUP stop a run in any phase the same way:
the summary (or the --json document) of what ran, exit 128 + the signal's number, one line
on stderr saying why, and no later phase started."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import run_and_signal, write

SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
"""SIGNAL_EXIT is the documented exit code (128 + number) of each stop signal."""


def _route(target, route: str) -> int:
    return int(target.stats()["received_by_route"][route])


def _stop_line(stderr: str, sig: int) -> str:
    """_stop_line is the one stderr line saying which signal stopped the run."""
    lines = [line for line in stderr.splitlines() if f"stopped by {signal.Signals(sig).name}" in line]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_url_run_stopped_by_signal_prints_partial_summary(fresh_target, sig):
    done = run_and_signal(
        ["run", f"{fresh_target.url}/health", "-d", "60s", "-c", "4"], sig, lambda: fresh_target.received() > 0
    )
    assert done.returncode == SIGNAL_EXIT[sig], done.stderr
    assert "interrupted" in done.stdout
    assert "Latency (ms" in done.stdout
    # A URL run has one phase: the line does not name it (a scenario file's says "during main").
    assert _stop_line(done.stderr, sig) == f"surge: stopped by {signal.Signals(sig).name}: results are partial"
    assert "Traceback" not in done.stderr


def test_signal_ignored_at_start_stays_ignored(fresh_target):
    seen = [0]

    def more_requests() -> bool:
        received, seen[0] = fresh_target.received(), max(seen[0], 1)
        if received >= seen[0] * 2:
            seen[0] = received
            return True
        return False

    done = run_and_signal(
        ["run", f"{fresh_target.url}/health", "-d", "60s", "-c", "2", "--json"],
        signal.SIGINT,
        more_requests,
        ignored=(signal.SIGHUP,),
    )
    assert done.returncode == 130, done.stderr
    assert json.loads(done.stdout)["stop_signal"] == "SIGINT"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_url_run_stopped_by_signal_json_counts_match_server(fresh_target, sig):
    done = run_and_signal(
        ["run", f"{fresh_target.url}/health", "-d", "60s", "-c", "4", "--json"],
        sig,
        lambda: fresh_target.received() > 0,
    )
    assert done.returncode == SIGNAL_EXIT[sig], done.stderr
    doc = json.loads(done.stdout)
    assert doc["stop_reason"] == "interrupted"
    assert doc["stop_signal"] == signal.Signals(sig).name
    assert doc["requests"]["sent"] > 0
    assert doc["requests"]["sent"] == fresh_target.received()
    assert doc["duration_s"] < 30
    _stop_line(done.stderr, sig)


PHASED = """\
target: @URL@
setup:
  executor: {type: shared-iterations, vus: 1, iterations: @SETUP@, max_duration: 60s}
  flow:
    - request: {method: POST, path: /tasks, json: {title: t}}
scenarios:
  main:
    executor: {type: constant-vus, vus: 2, duration: 60s}
    flow:
      - request: {path: /health}
teardown:
  executor: {type: per-vu-iterations, vus: 1, iterations: 1}
  flow:
    - request: {method: DELETE, path: /tasks/1}
"""
"""PHASED is a file whose phases each hit their own route: setup POST /tasks, main GET
/health, teardown DELETE /tasks/{id}, so /stats tells which phases ran."""


def _signal_phased(
    target, tmp_path: Path, *, setup_iterations: int, json_output: bool, sig: int, once: str
) -> subprocess.CompletedProcess:
    """_signal_phased runs PHASED and sends ``sig`` once the target has received a request on
    route ``once`` (the phase to interrupt is under way)."""
    path = write(tmp_path, PHASED, URL=target.url, SETUP=str(setup_iterations))
    return run_and_signal(
        ["run", str(path), *(["--json"] if json_output else [])], sig, lambda: _route(target, once) > 0
    )


@pytest.mark.parametrize("json_output", [False, True])
def test_signal_during_setup_stops_the_whole_run(fresh_target, tmp_path, json_output):
    done = _signal_phased(
        fresh_target,
        tmp_path,
        setup_iterations=10_000_000,
        json_output=json_output,
        sig=signal.SIGINT,
        once="POST /tasks",
    )
    assert done.returncode == 130, done.stderr
    assert _route(fresh_target, "POST /tasks") > 0
    assert _route(fresh_target, "GET /health") == 0, "the main phase ran after Ctrl-C in setup"
    assert _route(fresh_target, "DELETE /tasks/{id}") == 0, "teardown ran after Ctrl-C in setup"
    assert "setup" in _stop_line(done.stderr, signal.SIGINT)
    if json_output:
        doc = json.loads(done.stdout)
        assert doc["stop_reason"] == "interrupted"
        assert doc["interrupted_in"] == "setup"
        assert doc["requests"]["sent"] == 0
        assert doc["setup"]["requests"]["sent"] > 0
    else:
        assert "the measured run did not start" in done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("json_output", [False, True])
def test_sigterm_during_main_phase_summarises_and_skips_teardown(fresh_target, tmp_path, json_output):
    done = _signal_phased(
        fresh_target, tmp_path, setup_iterations=3, json_output=json_output, sig=signal.SIGTERM, once="GET /health"
    )
    assert done.returncode == 143, done.stderr
    assert _route(fresh_target, "POST /tasks") == 3
    assert _route(fresh_target, "DELETE /tasks/{id}") == 0, "teardown ran after SIGTERM"
    _stop_line(done.stderr, signal.SIGTERM)
    health = _route(fresh_target, "GET /health")
    if json_output:
        doc = json.loads(done.stdout)
        assert doc["stop_reason"] == "interrupted"
        assert doc["stop_signal"] == "SIGTERM"
        assert doc["interrupted_in"] == "main"
        assert doc["requests"]["sent"] == health
    else:
        assert "interrupted" in done.stdout
        assert f"{health:,} sent" in done.stdout
    assert "Traceback" not in done.stderr
