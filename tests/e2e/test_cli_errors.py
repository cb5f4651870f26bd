"""Bad input: one line on stderr naming the flag, and the documented exit code."""

from __future__ import annotations

import socket

import pytest

from conftest import SCRATCH, surge


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--bogus"], "--bogus"),
        (["-r", "-5"], "-r/--rate"),
        (["-r", "0"], "-r/--rate"),
        (["-r", "1e12", "-d", "1s"], "-r/--rate"),  # above 10,000,000/s: refused, not scheduled
        (["-c", "0"], "-c/--connections"),
        (["-c", "abc"], "--connections"),
        (["-n", "0"], "-n/--requests"),
        (["-d", "10x"], "-d/--duration"),
        (["-d", "-1s"], "-d/--duration"),
        (["--timeout", "0s"], "--timeout"),
        (["-H", "no-colon"], "-H/--header"),
        (["-H", "Bad Name: v"], "-H/--header"),
        (["-H", "Content-Length: 5"], "-H/--header"),
        (["--body", "@/nonexistent/file"], "--body"),
        (["--threads", "0"], "--threads"),
        (["--max-in-flight", "5"], "--max-in-flight"),
        (["-m", "G ET"], "-m/--method"),
        (["-c", "100000"], "connections"),
    ],
)
def test_bad_flags_exit_2_with_one_line(args, needle):
    run = surge("run", "http://127.0.0.1:9/", *args)
    assert run.code == 2, (run.code, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert needle in lines[0]
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize(
    "url, needle",
    [
        ("http://:8080/", "no host"),
        ("http:///path", "no host"),
        ("ftp://127.0.0.1/", "http://"),
        ("127.0.0.1:8080", "http://"),
        ("http://127.0.0.1:99999/", "port"),
    ],
)
def test_bad_urls_exit_2(url, needle):
    run = surge("run", url)
    assert run.code == 2
    assert needle in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_missing_url_exits_2():
    run = surge("run")
    assert run.code == 2 and "url" in run.stderr.lower()


def test_unreachable_port_exits_3():
    run = surge("run", f"http://127.0.0.1:{_free_port()}/", "-d", "1s")
    assert run.code == 3, run.stderr
    assert "not reachable" in run.said() and len(run.said().strip().splitlines()) == 1


def test_unresolvable_host_exits_3():
    run = surge("run", "http://surge-no-such-host.invalid/", "-d", "1s")
    assert run.code == 3, run.stderr
    assert "resolve" in run.stderr and "Traceback" not in run.stderr


def test_connections_beyond_the_open_file_limit_are_refused_with_numbers():
    import resource
    import subprocess
    import sys

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    proc = subprocess.run(
        [sys.executable, "-m", "surge", "run", "http://127.0.0.1:9/", "-c", "400", "-d", "1s"],
        capture_output=True,
        text=True,
        preexec_fn=low_limit,
        timeout=60,
        cwd=SCRATCH,
    )
    assert proc.returncode == 2, proc.stderr
    assert "400 connections" in proc.stderr and "limit is 256" in proc.stderr
