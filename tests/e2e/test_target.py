"""End-to-end tests of ``surge target``: the CLI, the bindings and TargetProcess, on loopback."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time

import pytest

from surge import _engine
from surge.engine.target import TargetProcess

SURGE_TARGET = [sys.executable, "-m", "surge", "target"]


def run_target(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SURGE_TARGET, *args], capture_output=True, text=True, timeout=timeout)


def test_process_serves_and_counts_exactly():
    with TargetProcess() as target:
        target.reset_stats()
        conn = http.client.HTTPConnection(target.host, target.port, timeout=10)
        for _ in range(300):
            conn.request("GET", "/health")
            response = conn.getresponse()
            assert (response.status, response.read()) == (200, b"ok")
        conn.close()
        assert target.received() == 300
        stats = target.stats()
        assert stats["responses"]["GET /health"] == {"200": 300}
        assert stats["connections"]["open"] >= 1


def test_task_api_through_the_process():
    with TargetProcess(shards=4) as target:
        status, body = target.request("POST", "/tasks", {"title": "demo"})
        assert (status, json.loads(body)) == (201, {"id": 1, "title": "demo"})
        assert target.request("GET", "/tasks/1")[0] == 200
        assert target.request("GET", "/tasks/2")[0] == 404
        status, body = target.request("PUT", "/tasks/1", None)
        assert status == 400 and "error" in json.loads(body)
        assert target.request("DELETE", "/tasks/1")[0] == 204
        assert target.stats()["tasks"] == 0


def test_knobs_reach_the_server():
    with TargetProcess(workers=1, service_time="400ms", queue=0) as target:
        results: list[int] = []

        def one() -> None:
            results.append(target.request("GET", "/tasks")[0])

        threads = [threading.Thread(target=one) for _ in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.15)
        during = target.stats()
        for t in threads:
            t.join(timeout=10)
        assert sorted(results) == [200, 503]
        assert (during["busy_workers"], during["workers"], during["capacity_rps"]) == (1, 1, 2.5)
        assert target.stats()["rejected"] == {"429": 0, "503": 1, "total": 1}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "0", "--service-time", "1ms"], "--workers: must be from 1"),
        (["--workers", "2"], "--service-time: is required with --workers"),
        (["--service-time", "5ms"], "--service-time: needs --workers"),
        (["--workers", "2", "--service-time", "fast"], "--service-time: `fast` is not a duration"),
        (
            ["--workers", "2", "--service-time", "uniform:3ms-1ms"],
            "--service-time: `uniform:3ms-1ms`: LOW is above HIGH",
        ),
        (["--queue", "5"], "--queue: needs --workers"),
        (["--rate-limit", "0"], "--rate-limit: must be above 0"),
        (["--burst", "5"], "--burst: needs --rate-limit"),
        (["--stall-every", "1s"], "--stall-for: is required with --stall-every"),
        (["--stall-every", "1s", "--stall-for", "2s"], "--stall-for: must be shorter than --stall-every"),
        (["--error-rate", "1.5"], "--error-rate: must be from 0 to 1"),
        (["--close-after", "0"], "--close-after: must be at least 1"),
        (["--max-connections", "0"], "--max-connections: must be from 1"),
        (["--seed", "-1"], "--seed: expected a non-negative integer"),
        (["--shards", "0"], "--shards: must be from 1 to 65536"),
        (["--threads", "0"], "--threads: must be from 1 to 1024"),
        (["--duration", "soon"], "--duration: `soon` is not a duration"),
        (["--bind", "8080"], "--bind: `8080` is not HOST:PORT"),
        (["--workers", "two"], "--workers: 'two' is not a valid integer"),
        (["--service-cpu"], "--service-cpu: needs --workers and --service-time"),
        (
            ["--workers", "2000", "--service-time", "1ms", "--service-cpu"],
            "--workers: with --service-cpu each worker is a thread: must be from 1 to 1024, got 2000",
        ),
        (
            ["--workers", "2", "--service-time", "1ms", "--service-cpu", "--contention", "0.1"],
            "--contention: not with --service-cpu",
        ),
        (["--lock-hold", "0s"], "--lock-hold: must be longer than 0"),
        (["--lock-hold", "5"], "--lock-hold: `5` has no unit"),
        (["--lock-hold", "3s"], "--lock-hold: must be at most 1s, got 3s"),
    ],
)
def test_cli_rejects_bad_values_naming_the_flag(args, message):
    result = run_target(*args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert result.stdout == ""
    assert all(line.startswith("surge: error: ") for line in result.stderr.splitlines())


def test_cli_reports_every_mistake_at_once():
    result = run_target("--threads", "0", "--shards", "0", "--error-rate", "2")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 3, result.stderr


def test_cli_accepts_every_flag_and_describes_them():
    result = run_target(
        "--bind",
        "127.0.0.1:0",
        "--threads",
        "2",
        "--duration",
        "300ms",
        "--workers",
        "8",
        "--service-time",
        "lognormal:1.7ms,0",
        "--queue",
        "100",
        "--rate-limit",
        "1000",
        "--burst",
        "50",
        "--stall-every",
        "10s",
        "--stall-for",
        "1s",
        "--error-rate",
        "0.01",
        "--close-after",
        "100",
        "--max-connections",
        "500",
        "--seed",
        "7",
        "--shards",
        "16",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("surge target listening on http://127.0.0.1:")
    text = result.stdout
    for expected in [
        "8 workers",
        "capacity 4705.9 req/s, queue 100",
        "rate limit: 1000 req/s, burst 50",
        "stall: 1s every 10s",
        "error rate: 1% answered 500",
        "close after: 100",
        "max connections: 500",
        "stopped (duration)",
    ]:
        assert expected in text, text


def test_sigint_stops_cleanly():
    target = TargetProcess().start()
    target.request("GET", "/health")
    assert target.stop() == 0
    assert any("stopped (interrupted)" in line for line in target.output), list(target.output)


def test_duration_stops_by_itself():
    result = run_target("--bind", "127.0.0.1:0", "--duration", "500ms")
    assert result.returncode == 0, result.stderr
    assert "stopped (duration) after 0.5 s" in result.stdout  # the target's own clock


def test_target_process_raises_value_error_for_bad_flags():
    with pytest.raises(ValueError, match="--queue: needs --workers"):
        TargetProcess(queue=3).start()


def test_check_target_config_warns_and_lists_errors():
    report = json.loads(_engine.check_target_config('{"bind": "0.0.0.0:8080"}'))
    assert report["warnings"] == [
        "--bind 0.0.0.0:8080 is not a loopback address: anything that can reach this machine can send load to it"
    ]
    assert json.loads(_engine.check_target_config('{"bind": "127.0.0.1:0"}'))["warnings"] == []
    with pytest.raises(ValueError) as info:
        _engine.check_target_config('{"workers": 0, "shards": 0, "typo": 1}')
    assert str(info.value).splitlines() == ["--typo: unknown setting"]
    with pytest.raises(ValueError) as info:
        _engine.check_target_config('{"workers": 0, "service_time": "1ms", "shards": 0}')
    assert [line.split(":")[0] for line in str(info.value).splitlines()] == ["--workers", "--shards"]


def test_serve_target_in_process():
    addresses: list[str] = []
    summary = json.loads(_engine.serve_target('{"bind": "127.0.0.1:0", "duration": "300ms"}', addresses.append))
    assert len(addresses) == 1 and addresses[0].startswith("127.0.0.1:")
    assert summary["stopped_by"] == "duration"
    assert summary["address"] == addresses[0]


def test_serve_target_reraises_from_on_ready():
    def on_ready(address: str) -> None:
        raise RuntimeError(f"refusing {address}")

    began = time.monotonic()
    with pytest.raises(RuntimeError, match=r"refusing 127\.0\.0\.1:"):
        _engine.serve_target('{"bind": "127.0.0.1:0", "duration": "20s"}', on_ready)
    assert time.monotonic() - began < 5


def test_serve_target_rejects_invalid_config():
    with pytest.raises(ValueError, match="--error-rate"):
        _engine.serve_target('{"error_rate": -1}', lambda address: None)


def test_port_in_use_is_a_clear_error():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_target("--bind", f"127.0.0.1:{port}")
    assert result.returncode == 1
    assert result.stderr.startswith(f"surge: error: --bind: cannot listen on 127.0.0.1:{port}:"), result.stderr
