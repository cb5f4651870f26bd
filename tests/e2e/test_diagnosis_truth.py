"""The diagnosis against targets whose truth is known (docs/diagnosis.md, "Tests"): a CPU-bound
target whose one event loop is its ceiling among idle threads, an idle target with a variable
service time, a closed model at 40-50 % busy, a cascade at the request's own timeout; each also
with a busy-loop process on every core, where the answer must still be right or say that the
machine was saturated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import BUSY, busy_loops, surge_in
from surge.engine.target import TargetProcess
from surge.record.schema import validate

ONE_LOOP_SERVER = r"""
import json, selectors, socket, sys, threading, time

BURN_S = float(sys.argv[1])
LIFETIME_S = float(sys.argv[2])
idle = threading.Event()
for n in range(3):  # helper threads that never work: the process has 4 threads, its ceiling is one core
    threading.Thread(target=idle.wait, name=f"idle-{n}", daemon=True).start()
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(1024)
listener.setblocking(False)
selector = selectors.DefaultSelector()
selector.register(listener, selectors.EVENT_READ)
buffers = {}
served = 0
print(listener.getsockname()[1], flush=True)
deadline = time.monotonic() + LIFETIME_S


def answer(conn, path):
    global served
    if path == "/cost":
        body = json.dumps({"requests": served, "cpu_s": time.thread_time()}).encode()
    else:
        served += 1
        end = time.thread_time() + BURN_S  # CPU time, not wall time: the work is the same on a busy machine
        while time.thread_time() < end:
            pass
        body = b"ok"
    conn.setblocking(True)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    conn.setblocking(False)


while time.monotonic() < deadline:
    for key, _ in selector.select(timeout=0.5):
        sock = key.fileobj
        if sock is listener:
            try:
                conn, _ = listener.accept()
            except BlockingIOError:
                continue
            conn.setblocking(False)
            buffers[conn] = b""
            selector.register(conn, selectors.EVENT_READ)
            continue
        try:
            data = sock.recv(65536)
        except BlockingIOError:
            continue
        except ConnectionError:
            data = b""
        if not data:
            selector.unregister(sock)
            buffers.pop(sock, None)
            sock.close()
            continue
        buffers[sock] += data
        while b"\r\n\r\n" in buffers[sock]:
            head, buffers[sock] = buffers[sock].split(b"\r\n\r\n", 1)
            try:
                answer(sock, head.split(b" ", 2)[1].decode())
            except OSError:
                break
"""
"""ONE_LOOP_SERVER is a target whose truth is one core: one thread (an event loop) answers every
request, burning ``argv[1]`` seconds of its own CPU on each, beside three idle threads; it stops
by itself after ``argv[2]`` seconds. ``GET /cost`` tells the requests served and the loop's CPU
seconds: its capacity is requests / CPU seconds."""

BURN_S = 0.002
"""BURN_S is the CPU each request costs the one-loop target (capacity ~400/s on a free core)."""


class OneLoopTarget:
    """OneLoopTarget: ONE_LOOP_SERVER started on a free loopback port; ``capacity()`` is its
    measured requests per CPU-second of its one loop (the truth: one core's worth)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", ONE_LOOP_SERVER, str(BURN_S), "120"],
            stdout=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        assert self.process.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.process.stdout.readline())}"
        self.pid = self.process.pid

    def capacity(self) -> float:
        with urllib.request.urlopen(f"{self.url}/cost", timeout=10) as response:
            cost = json.loads(response.read())
        return cost["requests"] / cost["cpu_s"]

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def one_loop_target() -> Iterator[OneLoopTarget]:
    target = OneLoopTarget()
    try:
        yield target
    finally:
        target.stop()


@pytest.fixture(params=["quiet", pytest.param("busy", marks=BUSY)])
def machine(request) -> Iterator[str]:
    """machine is "quiet" (only what else runs here) or "busy": a busy-loop process on each core,
    killed after the test."""
    if request.param == "busy":
        with busy_loops():
            yield request.param
    else:
        yield request.param


def _run(tmp_path: Path, *args: str) -> dict[str, Any]:
    """_run runs ``surge run ARGS`` into ``tmp_path/out`` and returns its summary.json, validated."""
    run = surge_in(tmp_path, "run", *args, "--out", "out")
    assert run.returncode in (0, 99), run.stderr
    summary: dict[str, Any] = json.loads((tmp_path / "out" / "summary.json").read_text())
    validate(summary)
    return summary


def _kinds(summary: dict[str, Any]) -> set[str]:
    return {f["kind"] for f in summary["findings"]}


def _finding(summary: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(f for f in summary["findings"] if f["kind"] == kind)


@BUSY  # the one-loop target keeps a core busy: its truth needs the other core to itself
def test_one_loop_at_one_core_is_the_targets_ceiling_not_the_generators(tmp_path, one_loop_target, machine):
    """16 VUs against the one-loop target, watched: it is CPU-bound on its one thread (its four
    threads notwithstanding), or on a busy machine the machine is named; never the generator."""
    summary = _run(
        tmp_path, f"{one_loop_target.url}/work", "-c", "16", "-d", "5s", "--watch-pid", str(one_loop_target.pid)
    )
    kinds = _kinds(summary)
    assert "generator_saturated" not in kinds, summary["findings"]
    if machine == "busy":
        assert "machine_saturated" in kinds, summary["findings"]
        assert "generator and target share a saturated machine" in _finding(summary, "machine_saturated")["message"]
    if "machine_saturated" not in kinds or "server_cpu_bound" in kinds:
        bound = _finding(summary, "server_cpu_bound")
        assert bound["evidence"]["per_thread"] is True and bound["evidence"]["cpu_cores_cap"] == 1.0
        # at 90 % of the core a thread could get: net of the hypervisor's steal on a virtual machine
        evidence = bound["evidence"]
        assert evidence["threads"] >= 4 and evidence["busiest_thread_cores"] >= 0.9 * evidence["core_share_mean"]
        assert "its busiest thread used" in bound["message"]
        # The loop serves its requests per CPU-second times the CPU it got: a whole core on a quiet
        # machine, less where the hypervisor or the generator took some (0.72 of a core served
        # 344/s of a 464/s-per-core loop: 332/s expected).
        truth = one_loop_target.capacity() * evidence["busiest_thread_cores"]
        assert evidence["responses_per_s"] == pytest.approx(truth, rel=0.25)


@BUSY  # the one-loop target keeps a core busy: its truth needs the other core to itself
def test_an_overloaded_one_loop_target_is_named_with_its_capacity(tmp_path, one_loop_target):
    """Open model at twice what one core serves: the queue's stated capacity is the target's own
    (requests per CPU-second of its loop), the late sends are the target's doing, not the
    generator's."""
    # --max-in-flight 64: without a cap the backlog opens hundreds of connections, and the loop
    # spends seconds of its core accepting them (a truth of its own, and one that varies).
    summary = _run(
        tmp_path,
        f"{one_loop_target.url}/work",
        "-r",
        "900",
        "-d",
        "5s",
        "--max-in-flight",
        "64",
        "--watch-pid",
        str(one_loop_target.pid),
    )
    kinds = _kinds(summary)
    if "machine_saturated" in kinds:
        # The honest answer: where the sends waited cannot be told on a machine with no core to spare.
        assert "the target " in _finding(summary, "machine_saturated")["message"]  # watched: its share is named
        return
    assert "generator_saturated" not in kinds, summary["findings"]
    queue = _finding(summary, "queueing")
    assert queue["evidence"]["evidence"] == "backlog"
    assert queue["evidence"]["service_capacity_per_s"] == pytest.approx(one_loop_target.capacity(), rel=0.25)
    assert "server_cpu_bound" in kinds


@BUSY  # the one-loop target keeps a core busy: its truth needs the other core to itself
def test_sends_that_wait_for_connections_a_target_cannot_accept_are_not_the_generators(tmp_path, one_loop_target):
    """Open model at twice what the loop serves, no cap: in flight grows, the generator opens
    hundreds of connections the loop accepts slowly, and sends wait seconds for them while the
    generator's threads sit mostly idle: connection_wait, the target's doing, never the generator."""
    summary = _run(
        tmp_path, f"{one_loop_target.url}/work", "-r", "900", "-d", "5s", "--watch-pid", str(one_loop_target.pid)
    )
    kinds = _kinds(summary)
    if "machine_saturated" in kinds:
        return  # the honest answer on a machine with no core to spare
    assert "generator_saturated" not in kinds, summary["findings"]
    wait = _finding(summary, "connection_wait")
    assert wait["evidence"]["late_share"] >= 0.05 and max(wait["evidence"]["thread_busy"]) < 0.9, wait


def test_an_idle_target_with_variable_service_time_has_no_queue(tmp_path, machine):
    """100/s against 50 workers × exp(200 ms), a capacity of 250/s: no queue and no capacity."""
    with TargetProcess(workers=50, service_time="exp:200ms") as target:
        summary = _run(tmp_path, f"{target.url}/delay/0", "-r", "100", "-d", "5s")
    kinds = _kinds(summary)
    assert "queueing" not in kinds, summary["findings"]
    if machine == "busy":
        assert "machine_saturated" in kinds, summary["findings"]  # known without --watch-pid
    if "generator_saturated" in kinds:  # a starved generator is late only when other processes hold the cores:
        evidence = _finding(summary, "generator_saturated")["evidence"]  # the whole machine, or in bursts
        assert "machine_saturated" in kinds or any(
            w >= max(b, 0.02) for b, w in zip(evidence["thread_busy"], evidence["thread_waiting"], strict=False)
        ), summary["findings"]


def test_a_closed_model_below_capacity_states_no_capacity(tmp_path, machine):
    """35 VUs thinking 1 s on 16 workers × lognormal(280 ms, 0.5) (50.5/s): ~26/s, half busy."""
    with TargetProcess(workers=16, service_time="lognormal:280ms,0.5") as target:
        (tmp_path / "vus.yaml").write_text(
            f"target: {target.url}\nscenarios:\n  s:\n    executor: {{type: constant-vus, vus: 35, duration: 6s}}\n"
            "    think_time: 1s\n    flow:\n      - request: {path: /delay/0}\n"
        )
        summary = _run(tmp_path, "vus.yaml")
    assert "queueing" not in _kinds(summary), summary["findings"]
    assert not any("capacity" in f["message"] for f in summary["findings"]), summary["findings"]


def test_the_cascade_names_the_requests_own_timeout(tmp_path):
    """A scenario file whose request has ``timeout: 500ms`` (the default is 30 s): 50 VUs on one
    50 ms worker time out at 0.5 s, and the finding says so."""
    with TargetProcess(workers=1, service_time="50ms") as target:
        (tmp_path / "spike.yaml").write_text(
            f"target: {target.url}\nscenarios:\n  spike:\n    executor: {{type: constant-vus, vus: 50, duration: 3s}}\n"
            "    flow:\n      - request: {path: /delay/0, timeout: 500ms}\n"
        )
        summary = _run(tmp_path, "spike.yaml")
    cascade = _finding(summary, "timeout_cascade")
    assert cascade["evidence"]["timeout_s"] == 0.5
    assert "timed out at the 0.5 s timeout" in cascade["message"]


def test_a_ramp_into_a_known_capacity_states_that_capacity(tmp_path):
    """A closed ramp from 1 to 40 VUs on 2 workers × 20 ms (truth: 100/s, 2 served at once, 20 ms
    each): throughput levels off at 100/s while the latency grows."""
    with TargetProcess(workers=2, service_time="20ms") as target:
        (tmp_path / "ramp.yaml").write_text(
            f"target: {target.url}\nscenarios:\n  ramp:\n    executor:\n      type: ramping-vus\n      start_vus: 1\n"
            "      stages: [{duration: 3s, target: 1}, {duration: 5s, target: 40}]\n"
            "    flow:\n      - request: {path: /delay/0}\n"
        )
        summary = _run(tmp_path, "ramp.yaml")
    queue = _finding(summary, "queueing")["evidence"]
    assert queue["evidence"] == "plateau"
    assert queue["service_capacity_per_s"] == pytest.approx(100.0, rel=0.15)
    assert queue["service_time_ms"] == pytest.approx(20.0, rel=0.25)
    assert queue["served_at_once"] == pytest.approx(2.0, rel=0.25)


SPIN_ONE_THREAD = """
import threading, time
idle = threading.Event()
for n in range(3):
    threading.Thread(target=idle.wait, daemon=True).start()
end = time.monotonic() + 30
while time.monotonic() < end:
    pass
"""
"""SPIN_ONE_THREAD is a process of four threads of which one (the main one) spins for 30 s."""


@BUSY
def test_the_watch_samples_the_busiest_thread_and_the_machine():
    """--watch-pid's samples carry the busiest thread's CPU (here all of the process's: one thread
    spins among four) and the machine's busy cores, whatever else runs here."""
    from surge.diagnosis.watch import TargetWatch

    spinner = subprocess.Popen([sys.executable, "-c", SPIN_ONE_THREAD], stdin=subprocess.DEVNULL)
    try:
        watch = TargetWatch(spinner.pid, interval_s=0.5).start()
        time.sleep(2.2)
        watch.stop()
    finally:
        spinner.kill()
        spinner.wait()
    samples = [s for s in watch.samples() if s["cpu_cores"] is not None]
    assert len(samples) >= 3
    for s in samples:
        assert s["threads"] == 4
        assert s["thread_cores_max"] == pytest.approx(s["cpu_cores"], abs=0.1)  # one thread did it all
        assert s["cpu_cores"] - 0.1 <= s["machine_cpu_cores"] <= (os.cpu_count() or 1) + 0.01
