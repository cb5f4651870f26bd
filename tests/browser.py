"""browser: open a report.html in headless Chromium with the network disabled and read back what
happened: the DOM after the scripts ran (--dump-dom), the errors and requests a hook recorded,
and a screenshot; plus a PNG check that a screenshot is not blank (tests/test_report_html.py)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--window-size=1280,2000",
    "--virtual-time-budget=5000",
)
"""CHROMIUM_FLAGS: headless, every request sent to a closed loopback port (the network is off)."""

HOOK = """<script>(function () {
  var errors = [], root = document.documentElement;
  function put() { root.setAttribute("data-errors", JSON.stringify(errors)); }
  put();
  window.addEventListener("error", function (e) { errors.push("error: " + e.message); put(); }, true);
  window.addEventListener("unhandledrejection", function (e) { errors.push("rejection: " + e.reason); put(); });
  document.addEventListener("securitypolicyviolation", function (e) {
    errors.push("blocked: " + e.blockedURI + " (" + e.violatedDirective + ")"); put(); });
  ["error", "warn"].forEach(function (level) {
    var original = console[level];
    console[level] = function () { errors.push(level + ": " + Array.prototype.join.call(arguments, " ")); put();
                                   return original.apply(console, arguments); };
  });
  window.addEventListener("load", function () {
    var names = performance.getEntriesByType("resource").map(function (e) { return e.name; });
    root.setAttribute("data-resources", JSON.stringify(names));
  });
})();</script>"""
"""HOOK goes first in <head> of the copy the test opens: it writes every script error, console
error or warning, Content-Security-Policy refusal and resource request (Resource Timing: every
fetch, image, style, script or font the page asked for, failed or not) into attributes of <html>
that --dump-dom shows."""

NETWORK_REFERENCE = re.compile(
    r"""(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:|//)|url\(\s*["']?\s*(?:https?:|//)|"""
    r"""@import|\bfetch\s*\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon|navigator\.serviceWorker""",
    re.IGNORECASE,
)
"""NETWORK_REFERENCE matches what would make a page load anything: an attribute or CSS url()
naming an http(s) or protocol-relative resource, @import, fetch, XHR, websockets, beacons."""


@dataclass
class Chart:
    """Chart: a chart container of the dumped DOM and the canvases uPlot drew in it."""

    chart_id: str
    points: int | None
    drawn: bool
    canvases: list[tuple[int, int]]


@dataclass
class Opened:
    """Opened: what Chromium made of a report: its charts, the hook's errors and requests."""

    dom: str
    charts: dict[str, Chart]
    errors: list[str] | None
    resources: list[str] | None
    screenshot: bytes


class _Charts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.charts: dict[str, Chart] = {}
        self.errors: list[str] | None = None
        self.resources: list[str] | None = None
        self._open: list[Chart | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "html":
            self.errors = json.loads(a["data-errors"]) if a.get("data-errors") else None
            self.resources = json.loads(a["data-resources"]) if a.get("data-resources") else None
        if tag == "div":
            chart = None
            if "chart" in (a.get("class") or "").split():
                points = a.get("data-points")
                chart = Chart(str(a.get("id")), int(points) if points else None, a.get("data-drawn") == "1", [])
                self.charts[chart.chart_id] = chart
            self._open.append(chart)
        if tag == "canvas":
            owner = next((c for c in reversed(self._open) if c is not None), None)
            if owner is not None:
                owner.canvases.append((int(a.get("width") or 0), int(a.get("height") or 0)))

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._open:
            self._open.pop()


def chromium() -> str:
    """chromium is the browser's path (Debian's `chromium`; `make browser` installs it)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise RuntimeError("chromium is not installed: run `make browser`")
    return path


def open_report(html: str, workdir: Path) -> Opened:
    """open_report opens a copy of ``html`` with HOOK first in its <head> from ``workdir``
    (file://), network off; returns the dumped DOM, the charts, errors, requests and a screenshot."""
    workdir.mkdir(parents=True, exist_ok=True)
    page = workdir / "report.html"
    page.write_text(html.replace("<head>", "<head>" + HOOK, 1), encoding="utf-8")
    profile = workdir / "profile"
    base = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}"]
    dom = subprocess.run(
        [*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=90, check=True
    ).stdout
    shot = workdir / "screenshot.png"
    subprocess.run([*base, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=90, check=True)
    parser = _Charts()
    parser.feed(dom)
    return Opened(dom, parser.charts, parser.errors, parser.resources, shot.read_bytes())


def png_distinct_bytes(png: bytes) -> tuple[int, float]:
    """png_distinct_bytes inflates a PNG's image data (filtered scanlines) and returns how many
    distinct byte values it holds and the share of bytes that differ from the commonest one: a
    blank page gives a handful of values and a share near 0."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    data, pos = b"", 8
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        if kind == b"IDAT":
            data += png[pos + 8 : pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(data)
    counts = Counter(raw)
    return len(counts), 1.0 - max(counts.values()) / len(raw)
