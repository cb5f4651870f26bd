"""The exports' parts without a receiver (docs/export.md): --export's parsing, the cumulative
figures an interval stream adds up to, both wire encodings decoded back, and an exporter whose
receiver fails or is slow: one warning, never a raise, never a blocked callback."""

from __future__ import annotations

import io
import math
import threading
from dataclasses import replace

import cramjam
import pytest
from hdrh.histogram import HdrHistogram
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from surge.core.errors import BadInput
from surge.plan.model import SequenceSpec
from surge.run import export as export_module
from surge.run.export import (
    EXPONENTIAL_SCALE,
    Export,
    ExportSink,
    PushFailed,
    Receiver,
    Totals,
    export_sinks,
    histogram_layout,
    parse_exports,
    step_methods,
    tag_figures,
)
from surge.run.export_encoding import (
    PROMETHEUS_HEADERS,
    _write_request_class,
    encode,
    encode_otlp,
    metrics,
    prometheus_series,
)
from surge.run.spec import TestSpec


def _interval(latencies_us: list[int], *, status: dict[str, int], failed: int = 0, timed_out: int = 0) -> dict:
    histogram = HdrHistogram(1, 60_000_000, 3)
    for value in latencies_us:
        histogram.record_value(value)
    count = len(latencies_us)
    mean_ms = sum(latencies_us) / count / 1000 if count else 0.0
    return {
        "requests": {
            "succeeded": count - failed - timed_out,
            "failed": failed + timed_out,
            "status_codes": status,
            "failure_classes": {"http 404": failed, **({"timeout": timed_out} if timed_out else {})},
            "bytes_sent": 100,
            "bytes_received": 50,
        },
        "latency": {"all": {"count": count, "mean_ms": mean_ms, "p50_ms": 1.0, "p95_ms": 2.0, "p99_ms": 3.0}},
        "latency_histogram": histogram.encode().decode() if count else "",
        "scenarios": [{"name": "a", "iterations": {"iterations_completed": count}, "active_vus": 2}],
    }


def test_parse_exports_takes_each_kind_and_completes_an_otlp_path():
    assert parse_exports(["prometheus=http://p:9090/api/v1/write", "otlp=https://o:4318", "otlp=http://o/x"]) == (
        Export("prometheus", "http://p:9090/api/v1/write"),
        Export("otlp", "https://o:4318/v1/metrics"),
        Export("otlp", "http://o/x"),
    )
    assert parse_exports(["otlp=http://o:4318/?k=v"]) == (Export("otlp", "http://o:4318/v1/metrics?k=v"),)


@pytest.mark.parametrize(
    "value, needle",
    [
        ("statsd=http://h/", "KIND one of prometheus, otlp"),
        ("http://h/", "expected KIND=URL"),
        ("prometheus=h:9090", "http:// or https://"),
        ("otlp=http://:1/", "no host"),
        ("otlp=http://h:70000/", "not a URL"),
    ],
)
def test_parse_exports_refuses_a_bad_value_naming_the_flag(value, needle):
    with pytest.raises(BadInput) as e:
        parse_exports([value], "--export")
    assert str(e.value).startswith("--export: ") and needle in str(e.value)


def test_parse_exports_masks_a_secret_in_its_error():
    with pytest.raises(BadInput) as e:
        parse_exports(["influx=http://u:hunter2@h/?token=abc"])
    assert "hunter2" not in str(e.value) and "abc" not in str(e.value)


def test_totals_add_up_the_stream_with_no_response_as_status_0():
    totals = Totals("run1")
    totals.add(_interval([100, 2000, 3000], status={"200": 2, "404": 1}, failed=1))
    totals.add(_interval([4_000_000, 50], status={"200": 1}, timed_out=1))
    assert totals.by_status == {"200": 3, "404": 1, "0": 1}
    assert (totals.requests, totals.failed) == (5, 2)
    assert totals.failure_classes == {"http 404": 1, "timeout": 1}
    assert totals.failure_rate == pytest.approx(0.4)
    assert totals.iterations == {"a": 5} and totals.vus == {"a": 2}
    assert (totals.bytes_sent, totals.bytes_received) == (200, 100)
    assert totals.latency_count == 5
    assert totals.latency_sum_s == pytest.approx((100 + 2000 + 3000 + 4_000_000 + 50) / 1e6)
    buckets = dict(totals.cumulative_buckets())
    assert (buckets["0.0005"], buckets["0.0025"], buckets["0.005"], buckets["5"], buckets["+Inf"]) == (2, 3, 4, 5, 5)
    assert totals.percentiles_s == {"p50": 0.001, "p95": 0.002, "p99": 0.003}


def test_exponential_buckets_hold_each_value_within_its_bounds():
    totals = Totals("run1")
    values_us = [1, 17, 999, 1000, 1001, 250_000, 4_000_000]
    totals.add(_interval(values_us, status={"200": len(values_us)}))
    offset, counts = totals.exponential_buckets()
    assert sum(counts) + totals.zero_count == len(values_us)
    base = 2 ** (2**-EXPONENTIAL_SCALE)
    placed = [offset + i for i, n in enumerate(counts) for _ in range(n)]
    for value_us, index in zip(sorted(values_us), placed, strict=True):
        # HdrHistogram keeps 3 significant digits: the value it reports is within 0.1 %.
        assert base**index < value_us / 1e6 * 1.001 and value_us / 1e6 <= base ** (index + 1) * 1.001


def test_the_prometheus_write_request_decodes_back_to_the_series():
    totals = Totals("run1")
    totals.add(_interval([100, 2000], status={"200": 2}))
    body, headers = encode("prometheus", totals, 1_800_000_000.5)
    assert headers == PROMETHEUS_HEADERS and headers["Content-Encoding"] == "snappy"
    request = _write_request_class().FromString(bytes(cramjam.snappy.decompress_raw(body)))
    decoded = {}
    for series in request.timeseries:
        names = [label.name for label in series.labels]
        assert names == sorted(names) and names[0] == "__name__"
        assert [(s.timestamp) for s in series.samples] == [1_800_000_000_500]
        labels = {label.name: label.value for label in series.labels}
        assert labels.pop("testid") == "run1"
        decoded[tuple(sorted(labels.items()))] = series.samples[0].value
    assert decoded == {tuple(sorted(labels.items())): value for labels, value in _without_testid(totals)}
    assert decoded[(("__name__", "surge_http_reqs_total"), ("status", "200"))] == 2
    assert decoded[(("__name__", "surge_http_req_duration_seconds_bucket"), ("le", "+Inf"))] == 2
    assert decoded[(("__name__", "surge_vus"), ("scenario", "a"))] == 2


def _without_testid(totals: Totals) -> list[tuple[dict[str, str], float]]:
    return [({k: v for k, v in labels.items() if k != "testid"}, value) for labels, value in prometheus_series(totals)]


def test_the_otlp_request_decodes_with_the_official_messages():
    totals = Totals("run1", started_unix_s=1_800_000_000.0)
    totals.add(_interval([100, 2000, 3000], status={"200": 2, "404": 1}, failed=1))
    request = ExportMetricsServiceRequest.FromString(encode_otlp(totals, 1_800_000_002.0))
    metrics = {m.name: m for m in request.resource_metrics[0].scope_metrics[0].metrics}
    reqs = metrics["surge_http_reqs"].sum
    assert reqs.is_monotonic and reqs.aggregation_temporality == 2  # cumulative
    assert {p.attributes[1].value.string_value: p.as_double for p in reqs.data_points} == {"200": 2, "404": 1}
    assert reqs.data_points[0].start_time_unix_nano == 1_800_000_000 * 10**9
    point = metrics["surge_http_req_duration"].exponential_histogram.data_points[0]
    assert (point.count, point.scale) == (3, EXPONENTIAL_SCALE)
    assert sum(point.positive.bucket_counts) == 3
    assert point.sum == pytest.approx(0.0051)
    assert math.isclose(point.min, 0.0001, rel_tol=1e-3) and math.isclose(point.max, 0.003, rel_tol=1e-3)
    assert metrics["surge_http_req_failed_rate"].gauge.data_points[0].as_double == pytest.approx(1 / 3)


def test_a_failing_receiver_costs_one_warning_and_the_last_figures_still_go(monkeypatch):
    tries = []

    def refuse(receiver, body, headers):
        tries.append((receiver.host, receiver.port, receiver.path, receiver.authorization))
        raise PushFailed("cannot reach the receiver ([Errno 111] Connection refused)")

    monkeypatch.setattr(Receiver, "open", lambda receiver, timeout_s: None)  # not there yet: the push says so
    monkeypatch.setattr(Receiver, "post", refuse)
    monkeypatch.setattr(export_module, "WARNED", set())
    stderr = io.StringIO()
    (sink,) = export_sinks(parse_exports(["prometheus=http://u:pw@127.0.0.1:9/w"]), "run1", stderr)
    sink.start(2.0)
    for _ in range(3):
        sink.on_interval(_interval([100], status={"200": 1}))
    sink.finish()
    assert sink.failures == len(tries) >= 1  # the pushes waiting at the end go out as one
    assert tries[0] == ("127.0.0.1", 9, "/w", "Basic dTpwdw==")  # the URL's credentials, as basic auth
    assert sink.totals.requests == 3
    (line,) = stderr.getvalue().splitlines()
    assert line.startswith("surge: warning: --export prometheus=http://u:redacted@127.0.0.1:9/w: cannot reach")
    assert "pw" not in line
    (again,) = export_sinks(parse_exports(["prometheus=http://u:pw@127.0.0.1:9/w"]), "run2", stderr)
    again.start(1.0)
    again.on_interval(_interval([100], status={"200": 1}))
    again.finish()
    assert again.failures >= 1 and len(stderr.getvalue().splitlines()) == 1  # the next run of a command: no more


def test_a_slow_receiver_drops_intervals_with_one_warning_never_blocking(monkeypatch):
    release, hanging = threading.Event(), threading.Event()

    def hang(receiver, body, headers):
        hanging.set()
        release.wait(10)
        raise PushFailed("cannot reach the receiver (timed out)")

    monkeypatch.setattr(Receiver, "open", lambda receiver, timeout_s: None)
    monkeypatch.setattr(Receiver, "post", hang)
    monkeypatch.setattr(export_module, "WARNED", set())
    monkeypatch.setattr(export_module, "FINISH_TIMEOUT_S", 0.2)
    stderr = io.StringIO()
    sink = ExportSink(Export("otlp", "http://127.0.0.1:9/v1/metrics"), "run1", stderr)
    sink.start(1.0)
    sink.on_interval(_interval([100], status={"200": 1}))  # taken by the thread, whose push hangs
    assert hanging.wait(10)
    for _ in range(export_module.QUEUE_INTERVALS + 5):
        sink.on_interval(_interval([100], status={"200": 1}))  # never blocks: dropped when full
    sink.finish()
    release.set()
    sink._queue.put(None)  # the thread ends here (its pushes still fail), not in another test
    sink._thread.join(10)
    assert not sink._thread.is_alive()
    lines = stderr.getvalue().splitlines()
    assert len(lines) == 1 and "too slow: intervals dropped" in lines[0]


def test_the_layout_gives_each_recorded_value_the_middle_hdrhistogram_itself_reports():
    histogram = HdrHistogram(1, 60_000_000, 3)
    for value in (1, 2, 999, 1000, 1001, 2047, 2048, 123_456, 59_999_999):
        histogram.record_value(value, 2)
    layout = histogram_layout(
        histogram.counts_len,
        histogram.sub_bucket_half_count,
        histogram.sub_bucket_half_count_magnitude,
        histogram.unit_magnitude,
    )
    recorded = [i for i in range(histogram.counts_len) if histogram.counts[i]]
    expected = [
        (histogram._hdr_median_equiv_value(item.value_iterated_to), item.count_at_value_iterated_to)
        for item in histogram.get_recorded_iterator()
    ]
    assert [(round(layout.values_s[i] * 1e6), histogram.counts[i]) for i in recorded] == expected


def test_the_end_of_the_run_adds_series_per_scenario_and_tag_with_their_method():
    plan = TestSpec("http://127.0.0.1:1/x", method="POST").prepare().compiled.main
    named = replace(plan.scenarios[0].flow.sequences[0].steps[0], tag="create")
    plan = replace(
        plan,
        scenarios=[
            replace(plan.scenarios[0], flow=replace(plan.scenarios[0].flow, sequences=[SequenceSpec(steps=[named])]))
        ],
    )
    assert step_methods(plan) == {("default", "create"): "POST"}
    document = {
        "tags": [
            {
                "tag": "create",
                "scenario": "default",
                "requests": {"succeeded": 3, "failed": 2, "status_codes": {"201": 3, "500": 1}},
                "latency": {"all": {"count": 4, "p50_ms": 1.0, "p95_ms": 2.0, "p99_ms": 4.0}},
            },
            {"tag": "GET /x/{id}", "scenario": "default", "requests": {"succeeded": 1, "status_codes": {"200": 1}}},
        ]
    }
    (create, get) = tag_figures(document, step_methods(plan))
    assert create.labels == {"scenario": "default", "tag": "create", "name": "create", "method": "POST"}
    assert create.by_status == {"201": 3, "500": 1, "0": 1} and create.failed == 2
    assert create.percentiles_s == {"p50": 0.001, "p95": 0.002, "p99": 0.004}
    assert get.labels["method"] == "GET" and get.percentiles_s == {}
    totals = Totals("run1")
    assert not [m for m in metrics(totals) if m.name.startswith("surge_tag_")]
    totals.tags = [create, get]
    series = {m.name: m.points for m in metrics(totals)}
    assert sum(v for _, v in series["surge_tag_http_reqs"]) == 6
    assert series["surge_tag_http_req_duration_p95_seconds"] == ((create.labels, 0.002),)


def test_no_secret_reaches_a_label():
    totals = Totals("run1")
    interval = _interval([100], status={"200": 1})
    interval["requests"]["failure_classes"] = {"connect http://u:hunter2@h/?api_key=abc": 1}
    interval["scenarios"][0]["name"] = "login?token=abc"
    totals.add(interval)
    totals.tags = tag_figures(
        {"tags": [{"tag": "GET /x?password=abc", "scenario": "s", "requests": {"succeeded": 1}}]}, {}
    )
    values = [v for labels, _ in prometheus_series(totals) for v in labels.values()]
    assert not [v for v in values if "hunter2" in v or "abc" in v], values
    assert any("[redacted]" in v for v in values)


def test_an_exporter_that_cannot_start_costs_one_warning_and_never_raises(monkeypatch):
    def broken(kind):
        raise ImportError("No module named 'cramjam'")

    monkeypatch.setattr(export_module, "rehearse", broken)
    monkeypatch.setattr(export_module, "WARNED", set())
    stderr = io.StringIO()
    sink = ExportSink(Export("prometheus", "http://127.0.0.1:9/w"), "run1", stderr)
    sink.start(1.0)
    sink.on_interval(_interval([100], status={"200": 1}))
    sink.finish()
    sink.push_result({"tags": []})
    (line,) = stderr.getvalue().splitlines()
    assert "cannot export (No module named 'cramjam'): pip install 'surge[export]'" in line
    assert sink.totals.intervals == 0 and sink.pushes == 0
