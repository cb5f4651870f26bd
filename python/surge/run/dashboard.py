"""The live web dashboard (--dashboard, docs/dashboard.md): a small HTTP server (the standard
library's ThreadingHTTPServer on a daemon thread) started before the command's first run and
stopped when the command ends: the command's CommandView (``surge.run.sinks.COMMAND_VIEW``), fed by
the run session, which hands it each run's interval stream through an IntervalSink
(``Dashboard.run_sink``) and its end (``run_ended``), and by an experiment, which hands it its
document after each completed run, with the analysis of what ran so far after each level or
step (``on_step``). It serves ``/`` (the page, every asset inline),
``/events`` (server-sent events: the whole state first, then every change in order: an
interval as each chart's new point, anything else as the whole state), ``/state`` (the state as
JSON) and ``/report`` (the last report.html written, once there is one). What it cannot do
costs it, never the run: a client that goes away is dropped."""

from __future__ import annotations

import copy
import ipaddress
import json
import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from surge.core.errors import BadInput
from surge.plan.thresholds import Threshold
from surge.present.html.dashboard_page import LiveThresholds, RunView, dashboard_page, experiment_view
from surge.run.sinks import COMMAND_VIEW

if TYPE_CHECKING:
    from surge.run.session import RunEnd
    from surge.run.spec import TestSpec

FLAG = "--dashboard"
"""FLAG is the option every dashboard error names."""

DEFAULT_ADDRESS = "127.0.0.1:5665"
"""DEFAULT_ADDRESS is where the dashboard listens when --dashboard is given alone (k6's port)."""

KEEPALIVE_S = 15.0
"""KEEPALIVE_S: an idle event stream gets a comment line this often (a gone client is noticed)."""

CLOSE_WAIT_S = 2.0
"""CLOSE_WAIT_S: at the end, how long the open event streams are given to send the last state."""


def parse_address(text: str) -> tuple[str, int]:
    """parse_address is --dashboard's HOST:PORT (``[::1]:5665`` for IPv6; port 0: any free one)
    as (host, port); BadInput names --dashboard when it is not one."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise BadInput(FLAG, f"expects HOST:PORT, e.g. {DEFAULT_ADDRESS}; got {text!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """is_loopback tells whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _json(document: Mapping[str, Any]) -> bytes:
    """_json is ``document`` as compact JSON (no NaN: the page's JSON.parse refuses it)."""
    return json.dumps(document, separators=(",", ":"), allow_nan=False, default=str).encode()


class _Server(ThreadingHTTPServer):
    """_Server: the dashboard's HTTP server, each request on a daemon thread (none outlives the
    command), on an IPv4 or IPv6 socket as its host needs."""

    daemon_threads = True
    dashboard: Dashboard

    def handle_error(self, request: Any, client_address: Any) -> None:
        """handle_error says nothing: a request that fails costs its client, and the command's
        output stays its own."""

    def __init__(self, host: str, port: int) -> None:
        # An IPv6 literal needs an IPv6 socket.
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, port), _Handler)


class Dashboard:
    """Dashboard: the state the page shows (the runs so far, the experiment's document, whether
    the command ended), the events that changed it, in order, and the server that serves them at
    ``url``. An event is ``state`` (the whole state: a run started or ended, an experiment's
    step, the end) or ``append`` (an interval: each time chart's new point, the run's totals),
    whose size does not grow with the run."""

    def __init__(self, server: _Server) -> None:
        self._server = server
        server.dashboard = self
        host, port = str(server.server_address[0]), server.server_address[1]
        self.url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
        self._changed = threading.Condition()
        self._seq = 0
        self._log: list[bytes] = []  # the events no open stream has sent yet, the first numbered _first
        self._first = 1
        self._sent: dict[int, int] = {}  # each open stream: the last event it sent
        self._runs: list[RunView] = []
        self._experiment: Mapping[str, Any] | None = None
        self._document: Mapping[str, Any] | None = None
        self._analysis: Mapping[str, Any] | None = None
        self._done = False
        self._report: Path | None = None
        self._report_readers = 0  # reports served since the command ended
        self._page = dashboard_page().encode()
        self._thread = threading.Thread(target=server.serve_forever, name="surge-dashboard", daemon=True)
        self._thread.start()

    @classmethod
    def listen(cls, host: str, port: int) -> Dashboard:
        """listen starts the dashboard on ``host``:``port``; BadInput names --dashboard when it
        cannot listen there (a port in use, an address not on this machine)."""
        try:
            server = _Server(host, port)
        except OSError as e:
            raise BadInput(FLAG, f"cannot listen on {host}:{port}: {e.strerror or e}") from None
        return cls(server)

    def _update(self, name: str, change: Callable[[], dict[str, Any] | None]) -> None:
        """_update applies ``change`` and logs the event ``name``: ``append`` with what
        ``change`` returns, or ``state`` (the whole state) when it returns None. It does not
        raise: a document the views cannot read (or a value JSON cannot hold) logs an ``error``
        event instead, and costs the dashboard, never the run."""
        with self._changed:
            self._seq = seq = self._seq + 1
            try:
                part = change()
                event = (
                    {"kind": "state", "seq": seq, "event": name, "state": self._state(seq)}
                    if part is None
                    else {"kind": "append", "seq": seq, "event": name, **part}
                )
                text = _json(event)
            except Exception as e:
                text = _json({"kind": "error", "seq": seq, "event": name, "error": f"{type(e).__name__}: {e}"})
            self._log.append(text)
            self._trim()
            self._changed.notify_all()

    def _trim(self) -> None:
        """_trim drops the events every open stream has sent (under the lock): the log holds what
        is still to send, not the whole command (a stream opened later starts from a snapshot)."""
        keep_from = min(self._sent.values(), default=self._seq) + 1
        del self._log[: max(0, keep_from - self._first)]
        self._first = max(self._first, keep_from)

    def _state(self, seq: int) -> dict[str, Any]:
        """_state is the whole state at ``seq`` (under the lock): the current run's view (its
        charts), how many runs so far, the experiment's view, the report."""
        report = self._report
        return {
            "seq": seq,
            "done": self._done,
            "runs": len(self._runs),
            "run": self._runs[-1].to_json() if self._runs else None,
            "experiment": experiment_view(self._experiment, self._done) if self._experiment is not None else None,
            "report": "/report" if report is not None else None,
            "report_file": str(report) if report is not None else None,
        }

    def run_sink(self, label: str, thresholds: Sequence[Threshold] = ()) -> DashboardSink:
        """run_sink is the IntervalSink of the command's next run, shown as ``label``, its
        ``thresholds`` judged on the run so far as it sends."""
        return DashboardSink(self, label, thresholds)

    def _start_run(self, view: RunView) -> None:
        def change() -> None:
            self._runs.append(view)

        self._update("run", change)

    def run_ended(self, end: RunEnd) -> None:
        """run_ended shows the run's end: its result (``end.document`` and ``meta``), verdict,
        thresholds and report.html (served at /report) when it wrote one."""
        report = end.directory / "report.html" if end.directory is not None else None
        summary = {**end.document, "meta": end.meta or {}}

        def change() -> None:
            view = self._runs[-1]
            view.summary = summary
            if report is not None and report.is_file():
                view.report = str(report)
                self._report = report

        self._update("run-end", change)

    def on_step(self, document: Mapping[str, Any], analyse: Callable[[], Mapping[str, Any]] | None = None) -> None:
        """on_step shows an experiment's ``document`` (experiment.json as it stands) after a run
        or a step completed: its runs so far and, with ``analyse`` (the experiment's analysis of
        what ran so far), its curve, steps or variants; the last analysis stays until the
        experiment's own, at the end (an analysis that fails keeps the one before: its cost is
        the page's, never the experiment's). The document is kept, for that end."""
        analysis = None
        if analyse is not None:
            try:
                analysis = dict(analyse())
            except Exception:  # too few runs for it yet, say: the page keeps the last one
                analysis = None

        def change() -> None:
            self._document = document
            shown = copy.deepcopy(dict(document))  # the runner goes on changing its own
            if analysis is not None:
                self._analysis = analysis
            if shown.get("analysis") is None and self._analysis is not None:
                shown["analysis"] = self._analysis
            self._experiment = shown

        self._update("step", change)

    def snapshot(self, event: bool = True) -> tuple[int, bytes]:
        """snapshot is (the number of the last event, the whole state then as a ``state`` event,
        or without ``event`` as it is)."""
        with self._changed:
            state = self._state(self._seq)
            document = {"kind": "state", "seq": self._seq, "event": "snapshot", "state": state} if event else state
            return self._seq, _json(document)

    def report_file(self) -> Path | None:
        """report_file is the report.html /report serves (None until one was written)."""
        with self._changed:
            return self._report

    def report_served(self) -> None:
        """report_served counts a /report served once the command ended: an open page keeping its copy."""
        with self._changed:
            if self._done:
                self._report_readers += 1
                self._changed.notify_all()

    def page(self) -> bytes:
        """page is the dashboard page (docs/dashboard.md), every asset inline."""
        return self._page

    @contextmanager
    def stream(self) -> Iterator[EventStream]:
        """stream opens an event stream for its block: its first event the whole state now, then
        every event after it, in order (``close`` waits for the open streams to send the end)."""
        with self._changed:
            key = max(self._sent, default=0) + 1
            seq, first = self.snapshot()
            self._sent[key] = seq
        try:
            yield EventStream(self, key, first)
        finally:
            with self._changed:
                del self._sent[key]
                self._trim()
                self._changed.notify_all()

    def next_events(self, key: int, timeout: float) -> tuple[list[bytes], bool]:
        """next_events are the events stream ``key`` has not sent, once there is one (at the
        latest after ``timeout`` seconds: maybe none), and whether the command ended."""
        with self._changed:
            self._changed.wait_for(lambda: self._seq > self._sent[key] or self._done, timeout)
            events = self._log[self._sent[key] + 1 - self._first :]
            self._sent[key] = self._seq
            self._trim()
            return events, self._done

    def close(self) -> None:
        """close shows that the command ended (the experiment's verdict, its report), gives the
        open event streams, and the pages their report (each keeps a copy), CLOSE_WAIT_S in all
        to take them, and stops the server."""
        experiment = copy.deepcopy(self._document)  # finished by now: with its analysis
        directory = experiment.get("directory") if experiment is not None else None
        report = Path(str(directory)) / "report.html" if directory else None

        def change() -> None:
            self._done = True
            if experiment is not None:
                self._experiment = experiment
            if report is not None and report.is_file():
                self._report = report

        with self._changed:
            pages = len(self._sent)  # each open page fetches the final report once it sees the end
        self._update("end", change)
        deadline = time.monotonic() + CLOSE_WAIT_S
        with self._changed:
            self._changed.wait_for(lambda: not self._sent, CLOSE_WAIT_S)
            if self._report is not None:
                left = max(0.0, deadline - time.monotonic())
                self._changed.wait_for(lambda: self._report_readers >= pages, left)
        self._server.shutdown()
        self._server.server_close()


class EventStream:
    """EventStream: one open event stream of a Dashboard: ``first`` (the whole state when it
    opened), then ``next`` (the events since, in order, and whether the command ended)."""

    def __init__(self, dashboard: Dashboard, key: int, first: bytes) -> None:
        self._dashboard, self._key, self.first = dashboard, key, first

    def next(self, timeout: float) -> tuple[list[bytes], bool]:
        """next are the events since the last call (``Dashboard.next_events``)."""
        return self._dashboard.next_events(self._key, timeout)


class DashboardSink:
    """DashboardSink is the IntervalSink of one run on the dashboard: each event of the stream
    changes the run's view (``surge.present.html.dashboard_page.RunView``) and is sent to the
    page; an interval as its charts' new points (an ``append`` event)."""

    def __init__(self, dashboard: Dashboard, label: str, thresholds: Sequence[Threshold] = ()) -> None:
        self._dashboard, self._view = dashboard, RunView(label, 0.0)
        if thresholds:
            self._view.judge = LiveThresholds(thresholds)

    def start(self, planned_s: float) -> None:
        """start shows the run starting."""
        self._view.planned_s = planned_s
        self._dashboard._start_run(self._view)

    def on_phase(self, name: str, result: Mapping[str, Any]) -> None:
        """on_phase shows an unmeasured phase's end (setup, teardown)."""
        self._dashboard._update(name, lambda: self._view.add_phase(name, result))

    def on_interval(self, interval: Mapping[str, Any]) -> None:
        """on_interval adds the interval to the run's view (``RunView.add_interval``: the
        thresholds judged so far, the interval reduced, each chart's new point)."""

        def change() -> dict[str, Any] | None:
            view = self._view
            column = view.add_interval(interval)
            if column is None:
                return None
            return {
                "append": column,
                "intervals": view.intervals,
                "latest": view.latest,
                "totals": view.totals(),
                "headline": view.headline(),
                "thresholds": view.thresholds,
            }

        self._dashboard._update("interval", change)

    def finish(self) -> None:
        """finish changes nothing: ``Dashboard.run_ended`` shows the result."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # the base class's name
        """log_message logs nothing: the command's output stays its own."""

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        """do_GET serves the page, the event stream, the state and the report."""
        dashboard = self.server.dashboard
        path = self.path.split("?", 1)[0]
        try:
            if path == "/":
                self._send(200, "text/html; charset=utf-8", dashboard.page())
            elif path == "/state":
                self._send(200, "application/json", dashboard.snapshot(event=False)[1])
            elif path == "/events":
                self._events(dashboard)
            elif path == "/report" and (report := dashboard.report_file()) is not None:
                self._send(200, "text/html; charset=utf-8", report.read_bytes())
                dashboard.report_served()
            else:
                self._send(404, "text/plain; charset=utf-8", b"not found\n")
        except (OSError, ValueError):  # the client went away, or the report is gone
            self.close_connection = True

    def _events(self, dashboard: Dashboard) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.close_connection = True
        with dashboard.stream() as stream:
            self.wfile.write(b"data: " + stream.first + b"\n\n")
            self.wfile.flush()
            while True:
                events, done = stream.next(KEEPALIVE_S)
                for event in events:
                    self.wfile.write(b"data: " + event + b"\n\n")
                if not events:
                    self.wfile.write(b": keepalive\n\n")
                self.wfile.flush()
                if done and not events:
                    return


@contextmanager
def serve_dashboard(test: TestSpec, stderr: IO[str] = sys.stderr) -> Iterator[Dashboard | None]:
    """serve_dashboard runs its block with the dashboard ``test``'s --dashboard asks for
    (--dashboard-open alone: at DEFAULT_ADDRESS) listening and following the command (the
    command's CommandView, ``surge.run.sinks.COMMAND_VIEW``); without either it starts nothing and
    yields None. It says where on ``stderr`` (a host not on loopback: one warning line too), opens
    a browser with --dashboard-open, and stops the server when the block ends. BadInput names
    --dashboard, before anything is sent, for a bad HOST:PORT or one it cannot listen on."""
    address = test.dashboard or (DEFAULT_ADDRESS if test.dashboard_open else None)
    if address is None:
        yield None
        return
    host, port = parse_address(address)
    dashboard = Dashboard.listen(host, port)
    token = COMMAND_VIEW.set(dashboard)
    try:
        if not is_loopback(host):
            print(
                f"surge: warning: {FLAG} {address} is not a loopback address: anyone who can reach it sees "
                "the run's figures and target",
                file=stderr,
                flush=True,
            )
        print(f"surge: dashboard at {dashboard.url} (until the command ends)", file=stderr, flush=True)
        if test.dashboard_open:
            webbrowser.open(dashboard.url)
        yield dashboard
    finally:
        COMMAND_VIEW.reset(token)
        dashboard.close()
