"""Hostile servers end to end: a loopback server that streams endless trailers, extensions,
headers or bodies, drips its bytes, or answers with a status outside 100-599 holds no ``surge
run`` past ``duration + grace + timeout + 1 s``, and a SIGINT ends the run within about a
second. The bounds are upper bounds on hangs (the old engine took 33 s and held SIGINT off for
35 s), with a margin for a busy machine; each mode runs in its own thread to keep the file short."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest

from conftest import SCRATCH, surge, write

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)

STREAM_FOR_S = 40.0
"""STREAM_FOR_S bounds how long a hostile server feeds one connection (it stops by itself)."""

DURATION_S, GRACE_S, TIMEOUT_S = 1.0, 0.5, 1.0
BOUND_S = DURATION_S + GRACE_S + TIMEOUT_S + 1.0
"""BOUND_S is how long the engine may take against any server: duration + grace + timeout + 1 s."""

CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


def endless(head: bytes, unit: bytes) -> Callable[[socket.socket, threading.Event], None]:
    """endless answers with ``head``, then ``unit`` over and over as fast as the socket takes it."""
    block = unit * max(1, (1 << 20) // len(unit))

    def answer(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(head)
        deadline = time.monotonic() + STREAM_FOR_S
        while not stop.is_set() and time.monotonic() < deadline:
            conn.sendall(block)

    return answer


def drip(conn: socket.socket, stop: threading.Event) -> None:
    """drip answers a valid 200, one byte every 50 ms: it takes longer than the timeout."""
    for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok":
        if stop.wait(0.05):
            return
        conn.sendall(bytes([byte]))


def status(code: str) -> Callable[[socket.socket, threading.Event], None]:
    """status answers at once with ``code`` in the status line."""
    return lambda conn, stop: conn.sendall(f"HTTP/1.1 {code} X\r\nContent-Length: 1\r\n\r\nx".encode())


MODES: dict[str, tuple[Callable[[socket.socket, threading.Event], None], str]] = {
    # name: (how the server answers, the failure class each request ends with)
    "endless trailers": (endless(CHUNKED + b"2\r\nok\r\n0\r\n", b"X-Trailer: more\r\n"), "invalid_response"),
    "endless extension": (endless(CHUNKED + b"2;ext=", b"abcdefgh"), "invalid_response"),
    "endless headers": (endless(b"HTTP/1.1 200 OK\r\n", b"X-Header: more\r\n"), "invalid_response"),
    "huge header": (endless(b"HTTP/1.1 200 OK\r\nX-Huge: ", b"abcdefgh"), "invalid_response"),
    "endless interim": (endless(b"", b"HTTP/1.1 100 Continue\r\n\r\n"), "invalid_response"),
    "endless chunks": (endless(CHUNKED, b"1;e\r\nx\r\n"), "request_timeout"),
    "endless body": (endless(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n", b"x"), "request_timeout"),
    "slow drip": (drip, "request_timeout"),
    "status 000": (status("000"), "invalid_response"),
    "status 600": (status("600"), "invalid_response"),
    "status 2xx": (status("2xx"), "invalid_response"),
}


@contextmanager
def hostile_server(answer: Callable[[socket.socket, threading.Event], None]) -> Iterator[tuple[str, threading.Event]]:
    """hostile_server listens on loopback and answers each request head with ``answer``;
    yields the URL and an event set once a request has arrived. Stops when the block ends."""
    stop, requested = threading.Event(), threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)

    def serve(conn: socket.socket) -> None:
        with conn:
            buf = b""
            try:
                while not stop.is_set():
                    while b"\r\n\r\n" not in buf:
                        data = conn.recv(65536)
                        if not data:
                            return
                        buf += data
                    buf = buf.split(b"\r\n\r\n", 1)[1]
                    requested.set()
                    answer(conn, stop)
            except OSError:
                return  # the client went away

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed: the test is over
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/", requested
    finally:
        stop.set()
        listener.close()


def start(url: str, *args: str) -> subprocess.Popen[str]:
    """start starts ``surge run URL ARGS`` (2 VUs, one thread, nothing saved, JSON out)."""
    return subprocess.Popen(
        [sys.executable, "-m", "surge", "run", url, "-c", "2", "--threads", "1", "--no-save", "--json", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=SCRATCH,
    )


def run_against(mode: str) -> tuple[int, dict[str, Any], str]:
    """run_against runs a short test against the mode's server: exit code, the JSON summary
    (whose ``elapsed_s`` is the engine's own time), stderr."""
    answer, _ = MODES[mode]
    with hostile_server(answer) as (url, _):
        proc = start(url, "-d", f"{DURATION_S}s", "--grace", f"{GRACE_S}s", "--timeout", f"{TIMEOUT_S}s")
        try:
            stdout, stderr = proc.communicate(timeout=STREAM_FOR_S + 30)
        finally:
            proc.kill()
        return proc.returncode, json.loads(stdout or "{}"), stderr


def interrupt(mode: str, signals: int = 1) -> tuple[float, int, dict[str, Any], str]:
    """interrupt starts a long test against the mode's server, sends SIGINT (``signals`` times,
    50 ms apart) once requests are under way, and returns the seconds from the first signal to
    the exit, the exit code, the JSON summary (empty if a second signal cut it) and stderr."""
    answer, _ = MODES[mode]
    with hostile_server(answer) as (url, requested):
        proc = start(url, "-d", "60s", "--grace", "30s", "--timeout", "30s")
        try:
            assert requested.wait(30), f"{mode}: no request arrived"
            time.sleep(0.5)  # inside the read loop, not at its start
            assert proc.poll() is None, proc.communicate()
            signalled = time.monotonic()
            for n in range(signals):
                time.sleep(0.05 * bool(n))
                proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=STREAM_FOR_S + 30)
            took = time.monotonic() - signalled
        finally:
            proc.kill()
        try:
            summary = json.loads(stdout or "{}")
        except ValueError:
            summary = {}  # a second signal may stop the printing at once
        return took, proc.returncode, summary, stderr


def in_parallel(task: Callable[[str], Any], modes: list[str]) -> dict[str, Any]:
    """in_parallel runs ``task`` for each mode at once, each in its own thread."""
    with ThreadPoolExecutor(max_workers=len(modes)) as pool:
        return dict(zip(modes, pool.map(task, modes), strict=True))


def assert_adds_up(requests: dict[str, Any], mode: str) -> None:
    """assert_adds_up checks sent = responses + unanswered + retried + interrupted - interrupted_unsent."""
    r = requests
    sent = r["responses"] + r["unanswered"] + r["retried"] + r["interrupted"] - r["interrupted_unsent"]
    assert r["sent"] == sent, f"{mode}: {r}"
    assert r["responses"] == sum(r["status_codes"].values()), f"{mode}: {r}"


def test_no_hostile_server_holds_a_run_past_its_bounds():
    for mode, (code, summary, stderr) in in_parallel(run_against, list(MODES)).items():
        assert code in (0, 1), f"{mode}: exit {code}: {stderr}"
        assert summary["elapsed_s"] <= BOUND_S, f"{mode}: the engine ran {summary['elapsed_s']} s"
        r = summary["requests"]
        want = MODES[mode][1]
        assert r["responses"] == r["succeeded"] == 0, f"{mode}: {r}"
        assert r["failure_classes"].get(want, 0) > 0, f"{mode}: {want}: {r}"
        # On a busy machine the server may answer a request after its timeout.
        assert set(r["failure_classes"]) <= {want, "request_timeout", "interrupted"}, f"{mode}: {r}"
        assert_adds_up(r, mode)


def test_sigint_ends_a_run_against_a_hostile_server_at_once():
    modes = ["endless trailers", "endless extension", "endless interim", "endless chunks", "endless body", "slow drip"]
    for mode, (took, code, summary, stderr) in in_parallel(interrupt, modes).items():
        assert code == 128 + signal.SIGINT, f"{mode}: exit {code}: {stderr}"
        assert summary["stop_reason"] == "interrupted", f"{mode}: {summary['stop_reason']}"
        # Within a second of the signal, with a margin for a busy machine: the old engine
        # took up to 35 s here.
        assert took <= 3.0, f"{mode}: SIGINT took {took:.1f} s"
        assert_adds_up(summary["requests"], mode)


def test_a_second_sigint_stops_at_once():
    took, code, _, stderr = interrupt("endless body", signals=2)
    # 130, or killed by the second SIGINT itself (which the shell reports as 130 too).
    assert code in (128 + signal.SIGINT, -signal.SIGINT), f"exit {code}: {stderr}"
    assert took <= 3.0, f"two SIGINTs took {took:.1f} s"


def big_body(conn: socket.socket, stop: threading.Event) -> None:
    """big_body answers a 200 with a 2 MiB body: longer than the 1 MiB kept for checks."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2097152\r\n\r\n" + b"x" * (2 << 20))


BIG_BODY_SCENARIO = """\
target: @URL@
scenarios:
  big:
    executor: {type: per-vu-iterations, vus: 1, iterations: 3}
    flow:
      - name: big
        request: {path: /}
        check: {status: 200, body_contains: "y"}
"""


def test_a_check_on_a_body_longer_than_kept_says_so(tmp_path):
    with hostile_server(big_body) as (url, _):
        scenario = write(tmp_path, BIG_BODY_SCENARIO, URL=url)
        shown = surge("run", str(scenario), "--no-save")
        as_json = surge("run", str(scenario), "--no-save", "--json")
    assert shown.code == 0, shown.stderr
    assert "saw only the first MiB of 3 longer response bodies" in shown.stdout, shown.stdout
    checks = {c["name"]: (c["passes"], c["fails"], c["truncated"]) for c in as_json.json()["checks"]}
    assert checks == {"status in [200]": (3, 0, 0), "body contains 'y'": (0, 3, 3)}, checks
