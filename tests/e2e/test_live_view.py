"""The live view in a real terminal: ``surge run`` and ``surge sweep`` inside a pseudo-terminal
(TERM=xterm-256color, 120 columns) against the reference target, the bytes it wrote collected
and replayed in a terminal emulator (pyte). While the run goes, the view shows every element
(docs/cli.md, "The live view"); once it ends, the screen holds the summary and nothing of it."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time

import pyte

from conftest import SCRATCH, write

COLUMNS, LINES = 120, 200
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\r")


def run_in_pty(*args: str, timeout: float = 60.0) -> tuple[int, bytes]:
    """run_in_pty runs ``surge ARGS`` with stdin, stdout and stderr on a pseudo-terminal of
    COLUMNS x LINES and returns its exit code and every byte it wrote."""
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(LINES))
    proc = subprocess.Popen(
        [sys.executable, "-m", "surge", *args], stdin=follower, stdout=follower, stderr=follower, env=env, cwd=SCRATCH
    )
    os.close(follower)
    out = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
    return code, bytes(out)


def plain(stream: bytes) -> str:
    """plain is the stream without its control sequences: every frame drawn, in order."""
    return ANSI.sub(b"", stream).decode("utf-8", "replace")


def final_screen(stream: bytes) -> str:
    """final_screen is what the terminal shows once the stream is replayed."""
    screen = pyte.Screen(COLUMNS, LINES)
    pyte.ByteStream(screen).feed(stream)
    return "\n".join(line.rstrip() for line in screen.display if line.strip())


LIVE_ONLY = [
    re.compile(r"^ ?setup +main +teardown", re.M),  # the phase line
    re.compile(r"elapsed"),
    re.compile(r"(setup|teardown): [\d.]+m?s \(not in the measured results\)"),
    re.compile(r"\d+ active"),
    re.compile(r"req/s · p95"),
    re.compile(r"judged at the end|no data yet"),
    re.compile(r"run \d+/\d+"),
    re.compile(r"\d+(ms|s) left"),
]
"""LIVE_ONLY are patterns only the live view writes (never the summary nor the phase lines)."""


def test_run_in_a_terminal_shows_phases_scenarios_figures_and_thresholds_then_leaves_only_the_summary(tmp_path, target):
    path = write(
        tmp_path,
        """\
        target: http://127.0.0.1:9
        setup:
          executor: {type: constant-vus, vus: 1, duration: 1s}
          flow: [{name: make, request: {method: POST, path: /tasks, json: {title: t}}}]
        scenarios:
          readers:
            executor: {type: constant-vus, vus: 4, duration: 3s}
            flow: [{name: health, request: {path: /health}}]
          writers:
            executor: {type: constant-arrival-rate, rate: 200, duration: 3s, max_vus: 20}
            flow: [{name: post, request: {method: POST, path: /tasks, json: {title: w}}}]
        teardown:
          executor: {type: constant-vus, vus: 1, duration: 1s}
          flow: [{name: clean, request: {path: /health}}]
        thresholds:
          - {expr: "p(95) < 500ms"}
          - {expr: "failure_rate < 1%"}
          - {expr: "rate > 10"}
          - {expr: "p(99) < 1s", scenario: readers}
        """,
    )
    code, stream = run_in_pty("run", str(path), "--target", target.url, "--no-save")
    drawn = plain(stream)
    assert code == 0, drawn[-3000:]
    # The phase line: each phase in progress in turn, the main run's time left only during it.
    assert re.search(r"setup +main +teardown +setup: [\d.]+m?s \(not in the measured results\)", drawn), drawn[:3000]
    assert re.search(r"setup +main +teardown +[\d.]+m?s elapsed · [\d.]+m?s left", drawn)
    assert re.search(r"setup +main +teardown +teardown: [\d.]+m?s \(not in the measured results\)", drawn)
    assert not re.search(r"left\s*setup:", drawn), "no main time left beside the setup line"
    # Each scenario: executor, VUs or rate, iterations, a bar.
    assert re.search(r"readers constant-vus +4 VUs +\d+ active +[\d,]+ iterations +━", drawn)
    assert re.search(r"writers constant-arrival-rate 200\.0/s +\d+ active +[\d,]+ iterations +━", drawn)
    # The current figures: rate, p95, failures, send lag.
    assert re.search(r"[\d,.]+ req/s · p95 [\d.]+ ms · failures [\d.]+% · send lag p95 [\d.]+ ms · late [\d,]+", drawn)
    # Each threshold with its value so far (the scenario's at the end).
    assert re.search(r"✓ p\(95\) < 500ms \[all\]: [\d.]+ms → pass", drawn)
    assert re.search(r"✓ failure_rate < 1% \[all\]: [\d.]+% → pass", drawn)
    assert re.search(r"✓ rate > 10 \[all\]: [\d,.]+/s → pass", drawn)
    assert "p(99) < 1s [scenario 'readers']: judged at the end" in drawn

    screen = final_screen(stream)
    assert screen.splitlines()[0].startswith("setup: "), screen
    assert re.search(r"^setup: [\d,]+ requests, 0 failed \(not in the measured results\)$", screen, re.M), screen
    assert re.search(r"^teardown: [\d,]+ requests, 0 failed \(not in the measured results\)$", screen, re.M), screen
    assert re.search(r"^  ✓ p\(99\) < 1s \[scenario 'readers'\]: [\d.]+ms → pass$", screen, re.M), "the summary"
    for pattern in LIVE_ONLY:
        assert not pattern.search(screen), f"{pattern.pattern} remains:\n{screen}"


def test_sweep_in_a_terminal_shows_the_level_its_progress_and_time_left(target):
    code, stream = run_in_pty(
        "sweep",
        f"{target.url}/health",
        "--rates",
        "100,200",
        "-d",
        "2s",
        "--warmup",
        "0s",
        "--cooldown",
        "0s",
        "--no-save",
    )
    drawn = plain(stream)
    assert code == 0, drawn[-3000:]
    assert re.search(r"sweep · level rate=100 · run 1/2 · [\d.]+% · [\d.]+m?s left", drawn), drawn[:3000]
    assert re.search(r"sweep · level rate=200 · run 2/2 · [\d.]+% · [\d.]+m?s left", drawn)
    assert re.search(r"done rate=100: [\d,.]+ req/s · p95 [\d.]+ ms · zone optimal", drawn), (
        "a level done, with its figures"
    )
    screen = final_screen(stream)
    assert "Sweep (2 of 2 levels measured)" in screen
    for pattern in LIVE_ONLY:
        assert not pattern.search(screen), f"{pattern.pattern} remains:\n{screen}"
