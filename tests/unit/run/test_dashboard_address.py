"""--dashboard's address rule and start (surge.run.dashboard), without a socket: HOST:PORT or a
one-line error naming the flag, a warning off loopback, --dashboard-open, the server stopped when
the command ends."""

from __future__ import annotations

import io

import pytest

from surge.core.errors import BadInput
from surge.run import dashboard
from surge.run.sinks import COMMAND_VIEW
from surge.run.spec import TestSpec


@pytest.mark.parametrize(
    ("text", "expected"),
    [("127.0.0.1:5665", ("127.0.0.1", 5665)), ("[::1]:0", ("::1", 0)), ("localhost:80", ("localhost", 80))],
)
def test_parse_address_takes_host_and_port(text, expected):
    assert dashboard.parse_address(text) == expected


@pytest.mark.parametrize("text", ["5665", "127.0.0.1", ":5665", "127.0.0.1:http", "127.0.0.1:70000"])
def test_parse_address_refuses_what_is_not_host_port_naming_the_flag(text):
    with pytest.raises(BadInput) as e:
        dashboard.parse_address(text)
    assert str(e.value).startswith("--dashboard") and "HOST:PORT" in str(e.value)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.2", True), ("::1", True), ("localhost", True), ("0.0.0.0", False), ("example.org", False)],
)
def test_is_loopback(host, loopback):
    assert dashboard.is_loopback(host) is loopback


class _Stand:
    """_Stand stands in for a listening Dashboard (no socket in a unit test)."""

    url = "http://192.0.2.1:5665/"
    closed = False

    def close(self) -> None:
        self.closed = True


def test_serve_dashboard_warns_off_loopback_opens_the_browser_and_stops_at_the_end(monkeypatch):
    stand, opened, asked = _Stand(), [], []
    monkeypatch.setattr(dashboard.Dashboard, "listen", classmethod(lambda cls, h, p: asked.append((h, p)) or stand))
    monkeypatch.setattr(dashboard.webbrowser, "open", opened.append)
    stderr = io.StringIO()
    with dashboard.serve_dashboard(
        TestSpec("http://127.0.0.1:1/", dashboard="0.0.0.0:5665", dashboard_open=True), stderr
    ) as live:
        assert live is stand and COMMAND_VIEW.get() is stand and not stand.closed
    assert COMMAND_VIEW.get() is None
    assert stand.closed and opened == [stand.url] and asked == [("0.0.0.0", 5665)]
    lines = stderr.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].startswith("surge: warning: --dashboard 0.0.0.0:5665 is not a loopback")


def test_dashboard_open_alone_listens_at_the_default_address_and_no_flag_starts_nothing(monkeypatch):
    asked: list[tuple[str, int]] = []
    monkeypatch.setattr(dashboard.Dashboard, "listen", classmethod(lambda cls, h, p: asked.append((h, p)) or _Stand()))
    monkeypatch.setattr(dashboard.webbrowser, "open", lambda url: None)
    stderr = io.StringIO()
    with dashboard.serve_dashboard(TestSpec("u", dashboard_open=True), stderr):
        pass
    with dashboard.serve_dashboard(TestSpec("u"), stderr) as plain:
        assert plain is None and COMMAND_VIEW.get() is None
    assert asked == [("127.0.0.1", 5665)] and "warning" not in stderr.getvalue()
