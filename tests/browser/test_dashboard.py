"""The live dashboard (--dashboard, docs/dashboard.md) in real headless Chromium: a run's page at
two moments shows more data points at the second, and at the end the record's figures; a
sweep's page fills in its runs and ends with its curve. The network is off but for loopback."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from typing import Any

from test_report_html import not_blank

from cdp import LivePage
from conftest import start_surge, write

POINTS = "JSON.stringify(window.surgeDashboard || null)"
"""POINTS reads what the page shows (dashboard.js keeps it in window.surgeDashboard)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _shown(page: LivePage) -> dict[str, Any]:
    shown: dict[str, Any] = json.loads(page.evaluate(POINTS) or "null") or {}
    return shown


def _until_value(page: LivePage, expression: str, ready: Any, timeout: float = 10) -> Any:
    """_until_value is ``expression``'s value in the page once ``ready(value)``, read every 0.1 s."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if ready(value):
            return value
        assert time.monotonic() < deadline, f"{expression} never became ready: {value!r}"
        time.sleep(0.1)


def _until(page: LivePage, ready: Any, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = _shown(page)
        if shown and ready(shown):
            return shown
        time.sleep(0.1)
    raise AssertionError(f"the page did not get there: {_shown(page)}")


def _serving(url: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            urllib.request.urlopen(url + "state", timeout=2).read()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the dashboard did not answer")


def _drawn(page: LivePage) -> tuple[dict[str, int], dict[str, int]]:
    """_drawn are, read at one moment, the points the page was given per chart and those report.js
    drew in each chart container (its data-points)."""
    given, drawn = page.evaluate(
        "[window.surgeDashboard.points, Array.from(document.querySelectorAll('.chart')).map(function (e) {"
        " return [e.id.replace('chart-', ''), Number(e.getAttribute('data-points'))]; })]"
    )
    return given, dict(drawn)


def test_run_dashboard_fills_in_and_ends_with_the_records_figures(target, tmp_path):
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    out = tmp_path / "run"
    proc = start_surge(
        tmp_path,
        "run",
        target.url,
        "--rate",
        "50",
        "--duration",
        "12s",  # long enough for two moments after Chromium starts, slow as it is under load
        "--out",
        str(out),
        "--dashboard",
        f"127.0.0.1:{port}",
    )
    try:
        _serving(url, proc)
        with LivePage(url, tmp_path / "chromium") as page:
            first = _until(page, lambda s: s["intervals"] >= 1 and s["points"])
            first_shot = page.screenshot()
            second = _until(page, lambda s: s["intervals"] >= first["intervals"] + 2)
            second_shot = page.screenshot()
            (tmp_path / "first.png").write_bytes(first_shot)  # kept with the test's files, to look at
            (tmp_path / "second.png").write_bytes(second_shot)
            assert not second["done"], "the run ended before the second moment"
            assert second["intervals"] > first["intervals"]
            assert sum(second["points"].values()) > sum(first["points"].values()), (first, second)
            assert set(second["points"]) >= {"throughput", "latency", "failures"}
            given, drawn = _drawn(page)
            assert drawn == given  # report.js drew every point it was given
            assert not_blank(first_shot) and not_blank(second_shot) and first_shot != second_shot
            assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
            end = _until(page, lambda s: s["done"], timeout=10)
            summary = json.loads((out / "summary.json").read_text())
            assert end["totals"]["sent"] == summary["requests"]["sent"]
            assert end["totals"]["p95_ms"] == summary["latency"]["all"]["p95_ms"]
            assert end["report"] == "/report"
            assert "PASSED" in page.evaluate("document.getElementById('verdict').textContent") or "No thresholds" in (
                page.evaluate("document.getElementById('verdict').textContent")
            )
            assert "status" in end["points"]  # the summary's charts join at the end, as in report.html
            # The server has stopped; the page kept the report and links its copy.
            kept = _until(page, lambda s: s["kept"]["url"], timeout=10)["kept"]
            assert kept["file"] == str(out / "report.html") and kept["url"].startswith("blob:")
            assert page.evaluate("document.getElementById('report-link').href") == kept["url"]
            kept_text = page.evaluate("window.surgeDashboard.kept.blob.text()", wait=True)
            assert kept_text == (out / "report.html").read_text()
            page.evaluate("location.href = document.getElementById('report-link').href")  # the link, followed
            title = _until_value(page, "document.title", lambda t: t and "dashboard" not in t.lower())
            assert title in kept_text
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


THRESHOLDS = """\
target: @URL@
scenarios:
  a:
    executor: {type: constant-arrival-rate, rate: 50, duration: 5s, max_vus: 10}
    flow:
      - request: {path: /health}
thresholds:
  - "p(95) < 10s"
  - "rate > 1000000"
  - {expr: "p(99) < 10s", scenario: a}
"""
"""THRESHOLDS: a scenario file whose thresholds pass (p95), fail (rate) and wait for the end (scoped)."""


def test_thresholds_are_judged_live_and_drawn_on_their_charts(target, tmp_path):
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    scenario = write(tmp_path, THRESHOLDS, URL=target.url)
    proc = start_surge(tmp_path, "run", str(scenario), "--no-save", "--dashboard", f"127.0.0.1:{port}")
    try:
        _serving(url, proc)
        with LivePage(url, tmp_path / "chromium") as page:
            _until(page, lambda s: s["intervals"] >= 2)
            table, rules, done = page.evaluate(
                "[document.getElementById('thresholds').textContent,"
                " document.getElementById('chart-latency').getAttribute('data-rules'), window.surgeDashboard.done]"
            )
            assert not done
            assert "p(95) < 10s" in table and "judged at the end" in table, table
            assert table.count("pass") >= 1 and "fail" in table, table
            assert rules == "1"  # p(95) < 10s: its line on the latency chart (the y axis reaches up to it)
            assert proc.wait(timeout=60) == 99  # the rate threshold failed
            _until(page, lambda s: s["done"], timeout=10)
            verdict = page.evaluate("document.getElementById('verdict').textContent")
            assert "FAILED" in verdict and "rate > 1000000" in verdict, verdict
            assert page.evaluate("document.getElementById('thresholds').textContent") == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sweep_dashboard_shows_each_level_and_ends_with_the_curve(target, tmp_path):
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    proc = start_surge(
        tmp_path,
        "sweep",
        target.url,
        "--vus",
        "1,2",
        "-d",
        "5s",  # the page (Chromium starts slowly under load) must come up before the second level ends
        "--warmup",
        "0s",
        "--no-save",
        "--dashboard",
        f"127.0.0.1:{port}",
    )
    try:
        _serving(url, proc)
        with LivePage(url, tmp_path / "chromium") as page:
            one = _until(page, lambda s: s["experiment"] is not None and len(s["experiment"]["runs"]) >= 1)
            assert not one["done"] and one["experiment"]["kind"] == "sweep"
            filling = _until(page, lambda s: "sweep-throughput" in s["points"])  # the curve so far, one level
            assert not filling["done"] and filling["points"]["sweep-throughput"] >= 1
            assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
            end = _until(page, lambda s: s["done"], timeout=10)
            assert len(end["experiment"]["runs"]) == 2
            # The curve: throughput against load, one point per level (report.html's chart).
            charts = json.loads(page.evaluate("document.getElementById('surge-data').textContent"))["charts"]
            curve = next(c for c in charts if c["id"] == "sweep-throughput")
            throughput = next(s for s in curve["series"] if s["label"] == "throughput/s")
            assert len([v for v in throughput["values"] if v is not None]) == 2
            given, drawn = _drawn(page)
            assert drawn == given == end["points"]
            (tmp_path / "end.png").write_bytes(page.screenshot())
            table = page.evaluate("document.getElementById('experiment').textContent")
            assert "runs completed (2)" in table
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_dashboard_page_is_self_contained():
    """The page loads nothing from anywhere (every asset inline) and may connect only to its server."""
    from browser import NETWORK_REFERENCE
    from surge.present.html.dashboard_page import DASHBOARD_CSP, dashboard_page

    html = dashboard_page()
    found = [m.group(0) for m in NETWORK_REFERENCE.finditer(html)]
    # dashboard.js's own stream, and the final report it keeps a copy of, both from the page's server
    assert found == ["fetch(", "EventSource"], found
    assert "connect-src 'self'" in DASHBOARD_CSP and "default-src 'none'" in DASHBOARD_CSP
