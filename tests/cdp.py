"""cdp: a page kept open in headless Chromium and driven over the DevTools protocol (a minimal
WebSocket client on the standard library), for pages that change while they are open (the live
dashboard, tests/browser/test_dashboard.py): evaluate JavaScript in the page, take screenshots.
Every request but to loopback goes to a closed port (the network is off)."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import struct
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from browser import CHROMIUM_FLAGS, chromium

LIVE_FLAGS = tuple(f for f in CHROMIUM_FLAGS if not f.startswith(("--proxy-bypass-list", "--virtual-time-budget")))
"""LIVE_FLAGS are CHROMIUM_FLAGS with loopback reachable (Chromium's own bypass of the closed
proxy: only 127.0.0.1 and ::1 answer) and real time (a page that streams never settles)."""


class _WebSocket:
    """_WebSocket: a client WebSocket (RFC 6455) of text frames, enough for the DevTools protocol."""

    def __init__(self, url: str) -> None:
        match = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        assert match, url
        host, port, path = match.group(1), int(match.group(2)), match.group(3)
        self.sock = socket.create_connection((host, port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        assert head.startswith(b"HTTP/1.1 101"), head

    def _exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            assert chunk, "DevTools closed the connection"
            data += chunk
        return data

    def send(self, text: str) -> None:
        payload, mask = text.encode(), os.urandom(4)
        n = len(payload)
        head = bytes([0x81]) + (
            bytes([0x80 | n])
            if n < 126
            else bytes([0x80 | 126]) + struct.pack(">H", n)
            if n < 65536
            else bytes([0x80 | 127]) + struct.pack(">Q", n)
        )
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def receive(self) -> str:
        message = b""
        while True:
            first, second = self._exact(2)
            n = second & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            message += self._exact(n)
            if first & 0x80:
                return message.decode()


class LivePage:
    """LivePage: ``url`` open in headless Chromium (``with`` closes it): ``evaluate`` returns a
    JavaScript expression's value, ``screenshot`` the page as PNG bytes."""

    def __init__(self, url: str, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                chromium(),
                *LIVE_FLAGS,
                f"--user-data-dir={workdir / 'profile'}",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            port = int(found.group(1)) if found else None
        assert port is not None, "Chromium did not start its DevTools server"
        # Chromium goes on writing to stderr: drained, so a full pipe never blocks it.
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10).read())
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = _WebSocket(page["webSocketDebuggerUrl"])
        self._id = 0
        self.call("Page.enable")
        self.call("Page.navigate", url=url)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """call sends one DevTools command and returns its result (events in between are skipped)."""
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.receive())
            if reply.get("id") == self._id:
                assert "error" not in reply, reply
                result: dict[str, Any] = reply["result"]
                return result

    def evaluate(self, expression: str, wait: bool = False) -> Any:
        """evaluate is ``expression``'s value in the page (JSON-able), raising on a script error;
        ``wait``: the value a promise resolves to."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=wait)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def screenshot(self) -> bytes:
        """screenshot is the page as drawn now, as PNG."""
        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])

    def __enter__(self) -> LivePage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.ws.sock.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
