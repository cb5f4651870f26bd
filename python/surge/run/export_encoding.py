"""The exports' wire formats (docs/export.md): a run's Totals (``surge.run.export``) as the
metrics it names (``metrics``: counters, gauges, the latency histogram), encoded as a Prometheus
remote-write 1.0 WriteRequest (protobuf built at run time from a FileDescriptorProto, snappy
block compression) or an OTLP/HTTP ExportMetricsServiceRequest (``opentelemetry-proto``,
cumulative sums and an exponential latency histogram). Both need the ``export`` extra
(``pip install 'surge[export]'``): this module loads only with --export (``ExportSink.start``)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Literal

import cramjam
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # type: ignore[import-untyped]
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1 import metrics_pb2

from surge import __version__
from surge.run.export import EXPONENTIAL_SCALE, Totals

MetricKind = Literal["counter", "gauge"]
"""MetricKind: a counter (cumulative since the run's start) or a gauge (the latest value)."""


@dataclass(frozen=True)
class Metric:
    """Metric: one named figure of a run with its ``points`` ((labels, value) pairs), its
    ``kind``, its ``unit`` (UCUM, as OTLP takes it: ``1``, ``s``, ``By``) and its help. A
    counter's Prometheus name adds ``_total``."""

    name: str
    kind: MetricKind
    unit: str
    help: str
    points: tuple[tuple[dict[str, str], float], ...]


def metrics(totals: Totals) -> list[Metric]:
    """metrics are the run's figures as named series (labels besides ``testid``), the latency
    histogram apart (``Totals``' buckets)."""
    single: tuple[tuple[dict[str, str], float], ...] = (({}, 0.0),)
    percentiles = [
        Metric(
            f"surge_http_req_duration_{p}_seconds",
            "gauge",
            "s",
            f"the last interval's {p} latency",
            (({}, totals.percentiles_s[p]),),
        )
        for p in ("p50", "p95", "p99")
        if p in totals.percentiles_s
    ]
    return [
        Metric(
            "surge_http_reqs",
            "counter",
            "1",
            "requests completed, by HTTP status (0: no response)",
            tuple(({"status": s}, float(n)) for s, n in sorted(totals.by_status.items())) or single,
        ),
        Metric("surge_http_req_failed", "counter", "1", "requests failed", (({}, float(totals.failed)),)),
        Metric(
            "surge_http_req_failures",
            "counter",
            "1",
            "requests failed, by failure class",
            tuple(({"class": c}, float(n)) for c, n in sorted(totals.failure_classes.items())),
        ),
        Metric("surge_http_req_failed_rate", "gauge", "1", "share of requests failed", (({}, totals.failure_rate),)),
        *percentiles,
        Metric(
            "surge_iterations",
            "counter",
            "1",
            "iterations completed, by scenario",
            tuple(({"scenario": s}, float(n)) for s, n in sorted(totals.iterations.items())),
        ),
        Metric(
            "surge_vus",
            "gauge",
            "1",
            "active virtual users, by scenario",
            tuple(({"scenario": s}, float(n)) for s, n in sorted(totals.vus.items())),
        ),
        Metric("surge_data_sent_bytes", "counter", "By", "bytes sent", (({}, float(totals.bytes_sent)),)),
        Metric("surge_data_received_bytes", "counter", "By", "bytes received", (({}, float(totals.bytes_received)),)),
        *tag_metrics(totals),
    ]


def tag_metrics(totals: Totals) -> list[Metric]:
    """tag_metrics are the finished run's series per scenario and tag (``Totals.tags``: none
    before the end), apart from the run's own (a sum over them never counts a request twice)."""
    tags = totals.tags
    if not tags:
        return []
    return [
        Metric(
            "surge_tag_http_reqs",
            "counter",
            "1",
            "requests completed, by scenario, tag and HTTP status (0: no response), at the end of the run",
            tuple(({**t.labels, "status": s}, float(n)) for t in tags for s, n in sorted(t.by_status.items())),
        ),
        Metric(
            "surge_tag_http_req_failed",
            "counter",
            "1",
            "requests failed, by scenario and tag, at the end of the run",
            tuple((t.labels, float(t.failed)) for t in tags),
        ),
        *(
            Metric(
                f"surge_tag_http_req_duration_{p}_seconds",
                "gauge",
                "s",
                f"the run's {p} latency by scenario and tag",
                tuple((t.labels, t.percentiles_s[p]) for t in tags if p in t.percentiles_s),
            )
            for p in ("p50", "p95", "p99")
        ),
    ]


LATENCY = "surge_http_req_duration_seconds"
"""LATENCY is the latency histogram's name (seconds)."""


def prometheus_series(totals: Totals) -> list[tuple[dict[str, str], float]]:
    """prometheus_series are the run's Prometheus series ((labels with ``__name__``, value)
    pairs): counters named ``..._total``, the latency as a classic histogram (``_bucket`` with
    ``le``, ``_sum``, ``_count``), every one labelled ``testid``."""
    base = {"testid": totals.testid}
    series = []
    for metric in metrics(totals):
        name = metric.name + ("_total" if metric.kind == "counter" else "")
        series += [({"__name__": name, **base, **labels}, value) for labels, value in metric.points]
    series += [
        ({"__name__": LATENCY + "_bucket", **base, "le": le}, float(count)) for le, count in totals.cumulative_buckets()
    ]
    series.append(({"__name__": LATENCY + "_sum", **base}, totals.latency_sum_s))
    series.append(({"__name__": LATENCY + "_count", **base}, float(totals.latency_count)))
    return series


@functools.cache
def _write_request_class() -> Any:
    """_write_request_class is Prometheus remote write 1.0's WriteRequest message (prompb's
    types.proto and remote.proto, the fields 1.0 sends), built from a FileDescriptorProto."""

    f = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="surge_prompb.proto", package="prometheus", syntax="proto3")
    for message, fields in (
        ("Label", (("name", 1, f.TYPE_STRING, None, False), ("value", 2, f.TYPE_STRING, None, False))),
        ("Sample", (("value", 1, f.TYPE_DOUBLE, None, False), ("timestamp", 2, f.TYPE_INT64, None, False))),
        (
            "TimeSeries",
            (
                ("labels", 1, f.TYPE_MESSAGE, ".prometheus.Label", True),
                ("samples", 2, f.TYPE_MESSAGE, ".prometheus.Sample", True),
            ),
        ),
        ("WriteRequest", (("timeseries", 1, f.TYPE_MESSAGE, ".prometheus.TimeSeries", True),)),
    ):
        declared = proto.message_type.add(name=message)
        for name, number, kind, type_name, repeated in fields:
            field = declared.field.add(
                name=name, number=number, type=kind, label=f.LABEL_REPEATED if repeated else f.LABEL_OPTIONAL
            )
            if type_name is not None:
                field.type_name = type_name
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("prometheus.WriteRequest"))


PROMETHEUS_HEADERS = {
    "Content-Encoding": "snappy",
    "Content-Type": "application/x-protobuf",
    "X-Prometheus-Remote-Write-Version": "0.1.0",
    "User-Agent": f"surge/{__version__}",
}
"""PROMETHEUS_HEADERS are remote write 1.0's request headers."""


def prometheus_write_request(totals: Totals, now_s: float) -> bytes:
    """prometheus_write_request is the serialized (uncompressed) WriteRequest of the run's
    series, each one sample at ``now_s``, its labels sorted by name."""
    request = _write_request_class()()
    timestamp_ms = int(now_s * 1000)
    for labels, value in prometheus_series(totals):
        series = request.timeseries.add()
        for name in sorted(labels):
            series.labels.add(name=name, value=labels[name])
        series.samples.add(value=value, timestamp=timestamp_ms)
    return bytes(request.SerializeToString())


def encode_prometheus(totals: Totals, now_s: float) -> bytes:
    """encode_prometheus is the remote-write body: the WriteRequest, snappy block-compressed."""

    return bytes(cramjam.snappy.compress_raw(prometheus_write_request(totals, now_s)))


def encode_otlp(totals: Totals, now_s: float) -> bytes:
    """encode_otlp is the serialized ExportMetricsServiceRequest of the run's metrics: counters
    as cumulative monotonic sums, gauges, the latency as a cumulative exponential histogram
    (``EXPONENTIAL_SCALE``), every point with the attribute ``testid``, resource
    ``service.name=surge``."""

    def attributes(labels: dict[str, str]) -> list[Any]:
        merged = {"testid": totals.testid, **labels}
        return [KeyValue(key=k, value=AnyValue(string_value=v)) for k, v in merged.items()]

    start_ns, now_ns = int(totals.started_unix_s * 1e9), int(now_s * 1e9)
    cumulative = metrics_pb2.AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
    request = ExportMetricsServiceRequest()
    resource = request.resource_metrics.add()
    resource.resource.attributes.add(key="service.name", value=AnyValue(string_value="surge"))
    scope = resource.scope_metrics.add()
    scope.scope.name, scope.scope.version = "surge", __version__
    for metric in metrics(totals):
        out = scope.metrics.add(name=metric.name, unit=metric.unit, description=metric.help)
        if metric.kind == "counter":
            out.sum.is_monotonic, out.sum.aggregation_temporality = True, cumulative
            points = out.sum.data_points
        else:
            points = out.gauge.data_points
        for labels, value in metric.points:
            points.add(
                attributes=attributes(labels),
                start_time_unix_nano=start_ns if metric.kind == "counter" else 0,
                time_unix_nano=now_ns,
                as_double=value,
            )
    histogram = scope.metrics.add(name="surge_http_req_duration", unit="s", description="request latency")
    histogram.exponential_histogram.aggregation_temporality = cumulative
    offset, counts = totals.exponential_buckets()
    point = histogram.exponential_histogram.data_points.add(
        attributes=attributes({}),
        start_time_unix_nano=start_ns,
        time_unix_nano=now_ns,
        count=totals.latency_count,
        sum=totals.latency_sum_s,
        scale=EXPONENTIAL_SCALE,
        zero_count=totals.zero_count,
    )
    point.positive.offset = offset
    point.positive.bucket_counts.extend(counts)
    if totals.latency_count and math.isfinite(totals.latency_min_s):
        point.min, point.max = totals.latency_min_s, totals.latency_max_s
    return bytes(request.SerializeToString())


OTLP_HEADERS = {"Content-Type": "application/x-protobuf", "User-Agent": f"surge/{__version__}"}
"""OTLP_HEADERS are OTLP/HTTP's request headers (binary protobuf)."""


def encode(kind: str, totals: Totals, now_s: float) -> tuple[bytes, dict[str, str]]:
    """encode is the body and headers of one push of ``totals`` to an export of ``kind``."""
    if kind == "prometheus":
        return encode_prometheus(totals, now_s), PROMETHEUS_HEADERS
    return encode_otlp(totals, now_s), OTLP_HEADERS


__all__ = [
    "LATENCY",
    "OTLP_HEADERS",
    "PROMETHEUS_HEADERS",
    "Metric",
    "encode",
    "encode_otlp",
    "encode_prometheus",
    "metrics",
    "prometheus_series",
    "prometheus_write_request",
    "tag_metrics",
]
