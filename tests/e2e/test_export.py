"""--export (docs/export.md) against real receivers: a real Prometheus (Debian's ``prometheus``,
started here with its remote-write receiver on loopback) whose query API returns surge's series
with summary.json's totals; an OTLP/HTTP receiver here that decodes each push with the official
``opentelemetry-proto`` messages; a receiver that is not there costs one warning line, never
the run or its exit code; a bad --export is refused before anything is sent."""

from __future__ import annotations

import base64
import json
import socket
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

import receivers
from conftest import LEVELS, surge, write

SCENARIO = """\
target: @URL@
scenarios:
  browse:
    executor: {type: constant-vus, vus: 2, duration: 2s}
    flow:
      - name: health
        request: {path: /health}
      - name: missing
        request: {method: POST, path: /no-such-route}
  idle:
    executor: {type: per-vu-iterations, vus: 1, iterations: 5}
    flow:
      - request: {path: /health}
"""
"""SCENARIO has two scenarios, three tags (two named, one ``GET /health``), two methods, two
statuses (200, 404: a failure) and a few thousand requests."""

METHODS = {"health": "GET", "missing": "POST", "GET /health": "GET"}
"""METHODS are SCENARIO's tags' methods."""


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory) -> Iterator[str]:
    """prometheus is the base URL of a Prometheus taking remote writes on loopback, for the module."""
    with receivers.prometheus(tmp_path_factory.mktemp("prometheus")) as url:
        if url is None:
            pytest.skip("no prometheus binary (make test-python installs Debian's prometheus package)")
        yield url


def _query(prometheus: str, expr: str) -> dict[str, float]:
    """_query is an instant query's result: each series' labels (but testid) as ``k=v,...`` -> value."""
    with urllib.request.urlopen(f"{prometheus}/api/v1/query?{urllib.parse.urlencode({'query': expr})}") as r:
        body = json.loads(r.read())
    assert body["status"] == "success", body
    found = {}
    for item in body["data"]["result"]:
        labels = {k: v for k, v in item["metric"].items() if k not in ("__name__", "testid")}
        found[",".join(f"{k}={v}" for k, v in sorted(labels.items()))] = float(item["value"][1])
    return found


def test_prometheus_remote_write_holds_the_runs_totals(prometheus, target, tmp_path):
    scenario = write(tmp_path, SCENARIO, URL=target.url)
    out = tmp_path / "run"
    run = surge("run", str(scenario), "--out", str(out), "--export", f"prometheus={prometheus}/api/v1/write")
    assert "warning" not in run.stderr, run.stderr
    summary = _summary(out)
    requests, testid = summary["requests"], summary["meta"]["run_id"]
    assert requests["failed"] > 0 and requests["succeeded"] > 0  # both statuses are there

    def q(name: str) -> dict[str, float]:
        return _query(prometheus, f'{name}{{testid="{testid}"}}')

    assert q("surge_http_reqs_total") == {f"status={s}": float(n) for s, n in requests["status_codes"].items()}
    assert sum(q("surge_http_reqs_total").values()) == requests["succeeded"] + requests["failed"]
    assert q("surge_http_req_failed_total") == {"": float(requests["failed"])}
    assert q("surge_http_req_failed_rate")[""] == pytest.approx(requests["failure_rate"])
    assert q("surge_iterations_total") == {
        f"scenario={s['name']}": float(s["iterations"]["iterations_completed"]) for s in summary["scenarios"]
    }
    assert q("surge_data_sent_bytes_total") == {"": float(requests["bytes_sent"])}
    count = summary["latency"]["all"]["count"]
    assert q("surge_http_req_duration_seconds_count") == {"": float(count)}
    buckets = q("surge_http_req_duration_seconds_bucket")
    assert buckets["le=+Inf"] == count
    assert q("surge_http_req_duration_seconds_sum")[""] == pytest.approx(
        summary["latency"]["all"]["mean_ms"] * count / 1000, rel=1e-6
    )
    by_tag = {
        f"method={METHODS[t['tag']]},name={t['tag']},scenario={t['scenario']},status={status},tag={t['tag']}": float(n)
        for t in summary["tags"]
        for status, n in t["requests"]["status_codes"].items()
    }
    assert q("surge_tag_http_reqs_total") == by_tag and len(by_tag) == 3
    p95 = _query(
        prometheus,
        f'histogram_quantile(0.95, sum by (le) (surge_http_req_duration_seconds_bucket{{testid="{testid}"}}))',
    )
    assert p95[""] > 0


@pytest.fixture
def otlp_receiver() -> Iterator[ThreadingHTTPServer]:
    """otlp_receiver is a loopback OTLP/HTTP receiver, its pushes on ``.pushes``."""
    with receivers.otlp_receiver() as server:
        yield server


def test_otlp_push_holds_the_runs_totals(otlp_receiver, target, tmp_path):
    scenario = write(tmp_path, SCENARIO, URL=target.url)
    out = tmp_path / "run"
    port = otlp_receiver.server_address[1]
    run = surge("run", str(scenario), "--out", str(out), "--export", f"otlp=http://127.0.0.1:{port}")
    assert "warning" not in run.stderr, run.stderr
    summary = _summary(out)
    requests, testid = summary["requests"], summary["meta"]["run_id"]
    pushes = otlp_receiver.pushes
    assert len(pushes) >= 3  # two intervals at least, and the end
    assert {(path, kind) for path, kind, _ in pushes} == {("/v1/metrics", "application/x-protobuf")}
    decoded = [ExportMetricsServiceRequest.FromString(body) for _, _, body in pushes]
    last = decoded[-1]
    resource = last.resource_metrics[0]
    assert {a.key: a.value.string_value for a in resource.resource.attributes} == {"service.name": "surge"}
    found = {m.name: m for m in resource.scope_metrics[0].metrics}

    def points(name: str) -> dict[str, float]:
        metric = found[name]
        data = metric.sum.data_points if metric.HasField("sum") else metric.gauge.data_points
        out = {}
        for point in data:
            attributes = {a.key: a.value.string_value for a in point.attributes}
            assert attributes.pop("testid") == testid
            out[",".join(f"{k}={v}" for k, v in sorted(attributes.items()))] = point.as_double
        return out

    assert found["surge_http_reqs"].sum.is_monotonic
    assert points("surge_http_reqs") == {f"status={s}": float(n) for s, n in requests["status_codes"].items()}
    assert points("surge_http_req_failed") == {"": float(requests["failed"])}
    assert points("surge_iterations") == {
        f"scenario={s['name']}": float(s["iterations"]["iterations_completed"]) for s in summary["scenarios"]
    }
    assert points("surge_tag_http_req_failed") == {
        f"method={METHODS[t['tag']]},name={t['tag']},scenario={t['scenario']},tag={t['tag']}": float(
            t["requests"]["failed"]
        )
        for t in summary["tags"]
    }
    latency = found["surge_http_req_duration"]
    assert latency.unit == "s"
    point = latency.exponential_histogram.data_points[0]
    assert point.count == requests["responses"] == summary["latency"]["all"]["count"]
    assert sum(point.positive.bucket_counts) + point.zero_count == point.count
    assert point.sum == pytest.approx(summary["latency"]["all"]["mean_ms"] * point.count / 1000, rel=1e-6)
    assert 0 < point.min <= point.max


def test_each_run_of_an_experiment_is_exported_as_its_own(otlp_receiver, target, tmp_path):
    port = otlp_receiver.server_address[1]
    out = tmp_path / "repeat"
    run = surge(
        "repeat", target.url + "/health", "-n", "2", "-c", "2", "-d", "1s", "--out", str(out),
        "--export", f"otlp=http://127.0.0.1:{port}/v1/metrics",
    )  # fmt: skip
    assert run.code == 0 and "warning" not in run.stderr, run.stderr
    runs = sorted(out.glob("runs/*/summary.json"))
    assert len(runs) == 2
    sent: dict[str, float] = {}
    for _, _, body in otlp_receiver.pushes:
        request = ExportMetricsServiceRequest.FromString(body)
        for metric in request.resource_metrics[0].scope_metrics[0].metrics:
            if metric.name == "surge_http_reqs":
                for point in metric.sum.data_points:
                    attributes = {a.key: a.value.string_value for a in point.attributes}
                    sent[attributes["testid"]] = point.as_double  # the last push of each run wins
    summaries = [json.loads(path.read_text()) for path in runs]
    assert sent == {s["meta"]["run_id"]: float(s["requests"]["status_codes"]["200"]) for s in summaries}


def test_a_receiver_that_is_not_there_costs_one_warning(target):
    dead = receivers.free_port()
    plain = surge("run", target.url + "/health", "-c", "2", "-d", "1s", "--no-save")
    run = surge(
        "run",
        target.url + "/health",
        "-c",
        "2",
        "-d",
        "2s",
        "--no-save",
        "--export",
        f"prometheus=http://user:hunter2@127.0.0.1:{dead}/api/v1/write",
    )
    assert run.code == plain.code == 0, run.stderr
    warnings = [line for line in run.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, run.stderr
    assert warnings[0].startswith("surge: warning: --export prometheus=http://user:redacted@127.0.0.1:")
    assert "hunter2" not in run.stderr
    repeated = surge(
        "repeat", target.url + "/health", "-n", "2", "-c", "2", "-d", "1s", "--no-save",
        "--export", f"otlp=http://127.0.0.1:{dead}",
    )  # fmt: skip
    assert repeated.code == 0, repeated.stderr
    assert len([line for line in repeated.stderr.splitlines() if "warning" in line]) == 1, repeated.stderr


@pytest.mark.parametrize(
    "value, needle",
    [
        ("influx=http://127.0.0.1:1/", "KIND one of prometheus, otlp"),
        ("prometheus", "expected KIND=URL"),
        ("otlp=127.0.0.1:4318", "expected an http:// or https:// URL"),
        ("prometheus=http://:9090/api/v1/write", "the URL has no host"),
        ("otlp=http://127.0.0.1:99999/", "not a URL"),
    ],
)
@pytest.mark.parametrize("command", [["run"], *([name, *flags] for name, flags in LEVELS.items())])
def test_a_bad_export_is_refused_before_anything_is_sent(command, value, needle, fresh_target, tmp_path):
    length = [] if command[0] == "capacity" else ["-d", "1s"]  # capacity's steps have their own length
    run = surge(*command, fresh_target.url + "/health", *length, "--export", value, "--out", str(tmp_path / "o"))
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("surge: error: --export: "), run.stderr
    assert needle in run.stderr
    assert fresh_target.received() == 0
    assert not (tmp_path / "o").exists()


class _KeepAliveReceiver(BaseHTTPRequestHandler):
    """_KeepAliveReceiver answers each push 200 on a kept connection, records the connection's
    client port and Authorization header on the server's ``seen``; a body of ``close`` makes it
    close the connection after answering without saying so (an idle timeout's effect), a body
    of ``bad`` answers 400 with a reason."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append((self.client_address[1], self.headers.get("Authorization")))  # type: ignore[attr-defined]
        answer = b"bad series: no __name__\nmore" if body == b"bad" else b""
        self.send_response(400 if body == b"bad" else 200)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
        if body == b"close":
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        """log_message says nothing."""


def test_the_exporter_keeps_its_connection_and_opens_another_when_the_receiver_closed_it():
    from surge.run.export import PushFailed, Receiver

    server = ThreadingHTTPServer(("127.0.0.1", 0), _KeepAliveReceiver)
    server.seen = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        receiver = Receiver(f"http://u:p%40w@127.0.0.1:{server.server_address[1]}/api/v1/write")
        receiver.open(1.0)  # before the run: the first push goes on this connection
        for body in (b"a", b"b", b"close", b"c", b"d"):
            receiver.post(body, {"Content-Type": "application/x-protobuf"})
        with pytest.raises(PushFailed, match=r"^the receiver answered 400: bad series: no __name__$"):
            receiver.post(b"bad", {})
        receiver.close()
    finally:
        server.shutdown()
        server.server_close()
    ports = [port for port, _ in server.seen]  # type: ignore[attr-defined]
    assert len(set(ports[:3])) == 1, ports  # one connection for the first three pushes
    assert ports[3] != ports[2] and len(set(ports[3:])) == 1, ports  # reopened once, then kept
    expected = "Basic " + base64.b64encode(b"u:p@w").decode()
    assert {auth for _, auth in server.seen} == {expected}  # type: ignore[attr-defined]


def test_an_exporter_whose_receiver_is_not_there_yet_says_so_at_its_push():
    from surge.run.export import PushFailed, Receiver

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # bound, never listening: refused
        receiver = Receiver(f"http://127.0.0.1:{port}/v1/metrics")
        receiver.open(0.25)
        with pytest.raises(PushFailed, match=r"^cannot reach the receiver \(.*[Rr]efused"):
            receiver.post(b"x", {})
