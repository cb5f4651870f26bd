"""A throw-away nginx on loopback: one worker, one core, /health and stub_status."""

from __future__ import annotations

import dataclasses
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from . import proc

CONFIG = """\
worker_processes 1;
worker_cpu_affinity {affinity};
worker_rlimit_nofile {nofile};
daemon off;
master_process on;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;

events {{
    worker_connections 20000;
    use epoll;
}}

http {{
    access_log off;
    default_type text/plain;
    keepalive_requests 1000000000;
    keepalive_timeout 300s;
    keepalive_time 24h;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;

    server {{
        listen 127.0.0.1:{port} backlog=65535;
        {h2_listen}
        location = /health {{
            return 200 "ok";
        }}
        location = /nginx_status {{
            stub_status;
        }}
    }}
}}
"""

STATUS_RE = re.compile(
    r"Active connections:\s*(\d+)\s*server accepts handled requests\s*(\d+)\s+(\d+)\s+(\d+)"
    r"\s*Reading:\s*(\d+)\s*Writing:\s*(\d+)\s*Waiting:\s*(\d+)"
)


@dataclasses.dataclass
class Status:
    """Status is one stub_status reading; requests includes the status request itself."""

    active: int
    accepts: int
    handled: int
    requests: int
    reading: int
    writing: int
    waiting: int


def parse_status(text: str) -> Status:
    """parse_status reads nginx's stub_status page; ValueError if it is not one."""
    m = STATUS_RE.search(text)
    if not m:
        raise ValueError(f"not a stub_status page: {text[:200]!r}")
    return Status(*(int(g) for g in m.groups()))


def free_port() -> int:
    """free_port is a loopback TCP port that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_nginx() -> str | None:
    """find_nginx is the nginx binary on PATH or in /usr/sbin, or None."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


class Nginx:
    """Nginx runs one master and one worker, both pinned to `core`, until stop()."""

    def __init__(self, binary: str, core: int, nofile: int, http2: bool = False):
        self.binary = binary
        self.core = core
        self.port = free_port()
        # h2c with prior knowledge on a port of its own (nginx 1.22 serves either on a port).
        self.h2_port = free_port() if http2 else None
        self.dir = tempfile.mkdtemp(prefix="surge-bench-nginx-")
        Path(self.dir).chmod(0o755)
        self.conf = str(Path(self.dir, "nginx.conf"))
        with Path(self.conf).open("w") as f:
            f.write(
                CONFIG.format(
                    dir=self.dir,
                    port=self.port,
                    affinity="1" + "0" * self.core,
                    nofile=nofile,
                    h2_listen=f"listen 127.0.0.1:{self.h2_port} http2 backlog=65535;" if self.h2_port else "",
                )
            )
        self.proc: subprocess.Popen | None = None
        self.worker_pid: int | None = None
        self.status_requests = 0

    @property
    def url(self) -> str:
        """url is the /health URL every generator is pointed at."""
        return f"http://127.0.0.1:{self.port}/health"

    @property
    def h2_url(self) -> str:
        """h2_url is /health on the h2c port (http2=True)."""
        return f"http://127.0.0.1:{self.h2_port}/health"

    def start(self, timeout_s: float = 10.0) -> None:
        """start launches nginx and waits until /health and the worker answer."""
        self.proc = subprocess.Popen(
            [self.binary, "-p", self.dir, "-c", self.conf, "-e", str(Path(self.dir, "error.log"))],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=proc.child_setup({self.core}),
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise RuntimeError(f"nginx exited with {self.proc.returncode}: {err.strip()[-500:]}")
            try:
                self.status()
                kids = proc.children_of(self.proc.pid)
                if kids:
                    self.worker_pid = kids[0]
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("nginx did not answer within 10 s")

    def status(self) -> Status:
        """status fetches stub_status on a fresh connection (counts as one request)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            conn.request("GET", "/nginx_status", headers={"Connection": "close"})
            body = conn.getresponse().read().decode()
        finally:
            conn.close()
        self.status_requests += 1
        return parse_status(body)

    def cpu_s(self) -> float | None:
        """cpu_s is the worker's user+sys CPU seconds so far."""
        return proc.process_cpu_s(self.worker_pid) if self.worker_pid else None

    def version(self) -> str:
        """version is `nginx -v` output."""
        out = subprocess.run([self.binary, "-v"], capture_output=True, text=True, timeout=10)
        return (out.stderr or out.stdout).strip()

    def stop(self) -> None:
        """stop asks nginx to exit, kills it after 5 s, and removes its directory."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Nginx:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def cpu_us_per_request(nginx: Nginx, argv: list[str], stdin: bytes | None, core: int, seconds: float) -> float:
    """cpu_us_per_request runs one generator pinned to `core` and returns its user+sys CPU in µs
    per request nginx counted (its stub_status delta, less the status request itself)."""
    before = nginx.status().requests
    run = proc.run_measured(argv, {core}, timeout_s=2 * seconds + 60, stdin_bytes=stdin)
    if run.returncode != 0 or run.timed_out:
        raise SystemExit(f"{argv[0]} failed ({run.returncode}): {run.stderr.strip()[-300:]}")
    served = nginx.status().requests - before - 1
    return run.cpu_s * 1e6 / max(served, 1)
