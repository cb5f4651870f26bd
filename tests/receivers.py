"""Receivers for ``--export`` (tests/e2e/test_export.py, bench/export.py): a real Prometheus
taking remote writes on a free loopback port, and a loopback OTLP/HTTP receiver keeping each
push's path and body."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def free_port() -> int:
    """free_port is a loopback TCP port nothing listens on (as of now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def prometheus(home: Path) -> Iterator[str | None]:
    """prometheus is the base URL of a Prometheus (Debian's ``prometheus``) on a free loopback
    port with its remote-write receiver on, scraping nothing, its storage in ``home``; None
    when the binary is absent. Stopped at the end."""
    binary = shutil.which("prometheus")
    if binary is None:
        yield None
        return
    (home / "prometheus.yml").write_text("global:\n  scrape_interval: 1m\nscrape_configs: []\n")
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={home / 'prometheus.yml'}",
            f"--storage.tsdb.path={home / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--web.enable-remote-write-receiver",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, "prometheus exited at start"
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "prometheus never became ready"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


class _Receiver(BaseHTTPRequestHandler):
    """_Receiver takes an OTLP/HTTP push: its path and body on the server's ``pushes``, 200.
    HTTP/1.1, keeping the connection open, as the OpenTelemetry Collector does."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.pushes.append((self.path, self.headers.get("Content-Type"), body))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """log_message says nothing."""


@contextmanager
def otlp_receiver() -> Iterator[ThreadingHTTPServer]:
    """otlp_receiver is a loopback OTLP/HTTP receiver: its port in ``server_address``, each
    push's (path, content type, body) on ``.pushes``. Stopped at the end."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.pushes = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
