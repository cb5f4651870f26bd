"""The reference target (`surge target`) as a pinned child that prints its address."""

from __future__ import annotations

import dataclasses
import http.client
import json
import os
import re
import select
import signal
import subprocess
import threading
import time
from collections import deque

from . import proc

ADDR_RE = re.compile(r"(?:127\.0\.0\.1|localhost):(\d{2,5})")


class TargetProc:
    """TargetProc starts argv pinned to core, finds the loopback address it prints, stops it."""

    def __init__(self, argv: list[str], core: int):
        self.argv = argv
        self.core = core
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.output: deque[str] = deque(maxlen=50)

    @property
    def url(self) -> str:
        """url is the target's /health URL."""
        return f"http://127.0.0.1:{self.port}/health"

    def start(self, timeout_s: float = 20.0) -> None:
        """start launches the target and waits for its address and a 200 from /health."""
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=proc.child_setup({self.core}),
            start_new_session=True,
        )
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        buf = b""
        while self.port is None and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                buf += chunk
                for line in buf.decode(errors="replace").splitlines():
                    m = ADDR_RE.search(line)
                    if m:
                        self.port = int(m.group(1))
                        break
        self.output.extend(buf.decode(errors="replace").splitlines())
        if self.port is None:
            self.stop()
            raise RuntimeError(
                f"{' '.join(self.argv)} printed no 127.0.0.1:PORT within {timeout_s:.0f} s; "
                f"output: {' | '.join(self.output)[-400:]}"
            )
        threading.Thread(target=self._drain, daemon=True).start()
        self._wait_healthy(deadline)

    def _drain(self) -> None:
        for line in self.proc.stdout:
            self.output.append(line.decode(errors="replace").rstrip())

    def _wait_healthy(self, deadline: float) -> None:
        last = ""
        while time.monotonic() < deadline:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            try:
                conn.request("GET", "/health")
                resp = conn.getresponse()
                resp.read()
                if resp.status == 200:
                    return
                last = f"status {resp.status}"
            except OSError as e:
                last = str(e)
            finally:
                conn.close()
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"target /health did not answer 200: {last}")

    def cpu_s(self) -> float | None:
        """cpu_s is user+sys CPU seconds of the target and its direct children."""
        if not self.proc:
            return None
        pids = [self.proc.pid, *proc.children_of(self.proc.pid)]
        values = [v for v in (proc.process_cpu_s(p) for p in pids) if v is not None]
        return sum(values) if values else None

    def stop(self) -> None:
        """stop sends SIGINT, then SIGTERM, then SIGKILL to the target's process group."""
        if not self.proc or self.proc.poll() is not None:
            return
        for sig, wait_s in ((signal.SIGINT, 3), (signal.SIGTERM, 3), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(wait_s)
                return
            except subprocess.TimeoutExpired:
                continue

    def __enter__(self) -> TargetProc:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


@dataclasses.dataclass
class TargetStatus:
    """TargetStatus is one `/stats` reading, in the shape measure() reads from nginx's
    stub_status: requests parsed so far (this /stats request included) and open connections
    (the /stats connection included)."""

    requests: int
    active: int
    tasks: int
    doc: dict


class CountedTarget:
    """CountedTarget counts a running TargetProc's requests through its `/stats` (`received`),
    so measure() counts it like nginx: the delta over a run, less the harness's own /stats
    requests (status_requests)."""

    def __init__(self, target: TargetProc):
        self.target = target
        self.status_requests = 0

    @property
    def port(self) -> int | None:
        """port is the target's loopback port."""
        return self.target.port

    def base_url(self) -> str:
        """base_url is http://127.0.0.1:PORT (a plan's target.url)."""
        return f"http://127.0.0.1:{self.target.port}"

    def status(self) -> TargetStatus:
        """status fetches /stats on a fresh connection (counts as one received request)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.target.port, timeout=5)
        try:
            conn.request("GET", "/stats", headers={"Connection": "close"})
            resp = conn.getresponse()
            body = resp.read().decode()
        finally:
            conn.close()
        self.status_requests += 1
        if resp.status != 200:
            raise ValueError(f"/stats answered {resp.status}: {body[:200]!r}")
        doc = json.loads(body)
        return TargetStatus(int(doc["received"]), int(doc["connections"]["open"]), int(doc.get("tasks", 0)), doc)

    def get(self, path: str) -> tuple[int, str]:
        """get is one GET on a fresh connection: (status, body). Not counted as a status
        request: call it outside measured runs."""
        conn = http.client.HTTPConnection("127.0.0.1", self.target.port, timeout=5)
        try:
            conn.request("GET", path, headers={"Connection": "close"})
            resp = conn.getresponse()
            return resp.status, resp.read().decode(errors="replace")
        finally:
            conn.close()

    def cpu_s(self) -> float | None:
        """cpu_s is the target's user+sys CPU seconds so far."""
        return self.target.cpu_s()
