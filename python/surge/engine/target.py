"""TargetProcess: the reference target (``surge target``) in a child process, for tests,
examples and ``surge demo``.

    with TargetProcess(workers=4, service_time="10ms", queue=8) as target:
        ...  # load target.url + "/tasks"
        print(target.stats()["rejected"])
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Any

READY = re.compile(r"surge target listening on http://(\S+):(\d+)\s*$")
"""READY matches the line ``surge target`` prints once it listens."""

BAD_INPUT = 2
"""BAD_INPUT is the exit code of ``surge target`` for an invalid flag value."""


class TargetProcess:
    """TargetProcess runs ``surge target`` on a free loopback port in a child process.

    Keyword arguments are flags: ``service_time="10ms"`` is ``--service-time 10ms``,
    ``llm_decode="20ms", llm_batch=8`` set the inference model (docs/target.md); ``args``
    are passed as they are. ``start`` returns once ``/health`` answers; ``stop`` (or leaving
    the ``with`` block) stops it with SIGINT, as Ctrl-C would, and kills it if it lingers.
    An invalid flag raises ValueError with the target's message naming the flag.
    """

    def __init__(self, *args: str, bind: str = "127.0.0.1:0", startup_timeout: float = 30.0, **flags: Any) -> None:
        self.argv = [sys.executable, "-m", "surge", "target", "--bind", bind, *_flag_args(flags), *args]
        self.startup_timeout = startup_timeout
        self.host = ""
        self.port = 0
        self.output: deque[str] = deque(maxlen=200)
        self._proc: subprocess.Popen[bytes] | None = None
        self._drain: threading.Thread | None = None

    @property
    def url(self) -> str:
        """url is the target's base URL, e.g. ``http://127.0.0.1:40123``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def pid(self) -> int | None:
        """pid is the child's process id while it runs."""
        return self._proc.pid if self._proc else None

    def start(self) -> TargetProcess:
        """start launches the target and waits until it listens and ``/health`` answers."""
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.startup_timeout
        try:
            self._wait_ready(deadline)
            self._drain = threading.Thread(target=self._drain_output, daemon=True)
            self._drain.start()
            self._wait_healthy(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, deadline: float) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        pending = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                if self._proc.poll() is not None:
                    break
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                line = raw.decode(errors="replace").rstrip()
                self.output.append(line)
                match = READY.match(line)
                if match:
                    self.host, self.port = match.group(1).strip("[]"), int(match.group(2))
                    if pending:
                        self.output.append(pending.decode(errors="replace"))
                    return
        if pending:
            self.output.append(pending.decode(errors="replace").rstrip())
        code = self._proc.poll()
        if code is None and time.monotonic() < deadline:  # output closed: it is exiting
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self._proc.wait(timeout=5)
        text = "\n".join(self.output)
        if code == BAD_INPUT:
            raise ValueError(_errors(text) or text)
        raise RuntimeError(f"{' '.join(self.argv)} did not start (exit code {code}): {text[-800:]}")

    def _drain_output(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for raw in self._proc.stdout:
            self.output.append(raw.decode(errors="replace").rstrip())

    def _wait_healthy(self, deadline: float) -> None:
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                if self.request("GET", "/health")[0] == 200:
                    return
            except OSError as e:
                last = e
            time.sleep(0.05)
        raise RuntimeError(f"the target at {self.url} never answered /health: {last}")

    def request(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> tuple[int, str]:
        """request sends one request (a JSON body when ``body`` is not None) and returns the
        status and body text."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            payload = None if body is None else json.dumps(body)
            headers = {} if body is None else {"Content-Type": "application/json"}
            conn.request(method, path, body=payload, headers=headers)
            response = conn.getresponse()
            return response.status, response.read().decode()
        finally:
            conn.close()

    def stats(self) -> dict[str, Any]:
        """stats is the target's ``/stats`` document (see docs/target.md)."""
        status, text = self.request("GET", "/stats")
        if status != 200:
            raise RuntimeError(f"/stats answered {status}: {text}")
        stats: dict[str, Any] = json.loads(text)
        return stats

    def reset_stats(self) -> None:
        """reset_stats starts every count in ``/stats`` again from zero."""
        self.request("POST", "/stats/reset")

    def received(self) -> int:
        """received is the requests the target parsed since the last reset, not counting
        ``/stats`` and ``/stats/reset`` requests (so it compares with a generator's sent count)."""
        stats = self.stats()
        by_route = stats["received_by_route"]
        received: int = (
            stats["received"]
            - by_route["GET /stats"]
            - by_route["POST /stats/reset"]
            - by_route.get("GET /stats/tasks", 0)
        )
        return received

    def stop(self, timeout: float = 10.0) -> int | None:
        """stop stops the target (SIGINT, then SIGKILL after ``timeout`` seconds) and returns
        its exit code; calling it again does nothing."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            try:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout)
        if self._drain is not None:
            self._drain.join(timeout=timeout)
        if proc.stdout is not None:
            proc.stdout.close()
        return proc.returncode

    def __enter__(self) -> TargetProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __del__(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()


def _flag_args(flags: dict[str, Any]) -> list[str]:
    """_flag_args turns ``service_time="10ms"`` into ``["--service-time", "10ms"]``; a switch
    given True (``thread_per_connection=True``) is the flag alone, False leaves it out."""
    out: list[str] = []
    for key, value in flags.items():
        flag = f"--{key.replace('_', '-')}"
        if value is True:
            out.append(flag)
        elif value is not None and value is not False:
            out += [flag, str(value)]
    return out


def _errors(text: str) -> str:
    """_errors is the ``error:`` lines of the target's output, without the prefix."""
    return "\n".join(line.split("error: ", 1)[1] for line in text.splitlines() if "error: " in line)
