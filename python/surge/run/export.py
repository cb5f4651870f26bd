"""Exports (``--export prometheus=URL``, ``--export otlp=URL``, docs/export.md): a run's
interval stream pushed to a monitoring system as it runs. Each exporter is an IntervalSink
(``surge.run.sinks``) whose ``on_interval`` only queues the engine's interval document: its own
thread adds the interval to the run's cumulative figures (``Totals``), encodes them
(``surge.run.export_encoding``: a Prometheus remote-write WriteRequest, or an OTLP
ExportMetricsServiceRequest) and sends them, once per interval and once at the end. A receiver
that is slow, refuses, or is not there costs one warning line on stderr (its first failure),
never the run, its record or its exit code."""

from __future__ import annotations

import contextlib
import math
import queue
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Literal
from urllib.parse import urlsplit

from surge.core.errors import BadInput
from surge.core.redact import redact_text, redact_url

ExportKind = Literal["prometheus", "otlp"]
"""ExportKind is where an export goes: Prometheus remote write 1.0, or OTLP/HTTP metrics."""

KINDS: tuple[ExportKind, ...] = ("prometheus", "otlp")
"""KINDS are the export kinds ``--export KIND=URL`` takes."""

SEND_TIMEOUT_S = 5.0
"""SEND_TIMEOUT_S bounds one push: a receiver that takes longer has failed it."""

FINISH_TIMEOUT_S = 2 * SEND_TIMEOUT_S
"""FINISH_TIMEOUT_S bounds how long the end of a run waits for an exporter's last pushes."""

QUEUE_INTERVALS = 64
"""QUEUE_INTERVALS is how many intervals may wait for an exporter's thread; beyond, an interval
is dropped (its counts lost to that receiver) with the exporter's one warning."""

LATENCY_BOUNDS_S: tuple[float, ...] = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)
"""LATENCY_BOUNDS_S are the upper bounds (``le``, seconds) of the Prometheus latency histogram's
buckets; ``+Inf`` follows."""

EXPONENTIAL_SCALE = 3
"""EXPONENTIAL_SCALE is the OTLP exponential histogram's scale: bucket bounds grow by
2^(1/8), about 9 %."""

UNITS_PER_S = 1_000_000.0
"""UNITS_PER_S: the interval's HdrHistogram counts microseconds (docs/record.md)."""


@dataclass(frozen=True)
class Export:
    """Export: one ``--export KIND=URL``: its ``kind`` and the ``url`` pushed to (for OTLP, with
    ``/v1/metrics`` when the URL has no path)."""

    kind: ExportKind
    url: str

    @property
    def shown(self) -> str:
        """shown is the export as warnings name it: ``--export KIND=URL``, secrets masked."""
        return f"--export {self.kind}={redact_url(self.url)}"


def parse_exports(values: Sequence[str], flag: str = "--export") -> tuple[Export, ...]:
    """parse_exports reads each ``KIND=URL`` of ``values``: KIND one of KINDS, URL an http(s)
    URL with a host. BadInput names ``flag`` and the value (secrets masked) at fault."""
    exports = []
    for value in values:
        kind, sep, url = value.partition("=")
        shown = redact_text(value)
        if not sep or kind not in KINDS:
            raise BadInput(flag, f"expected KIND=URL with KIND one of {', '.join(KINDS)}, got {shown!r}")
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018  # raises ValueError on a port out of range
        except ValueError as e:
            raise BadInput(flag, f"{shown!r}: not a URL ({e})") from None
        if parts.scheme not in ("http", "https"):
            raise BadInput(flag, f"{shown!r}: expected an http:// or https:// URL")
        if not parts.hostname:
            raise BadInput(flag, f"{shown!r}: the URL has no host")
        if kind == "otlp" and parts.path in ("", "/"):
            url = url.rstrip("/") + "/v1/metrics"
        exports.append(Export(kind, url))
    return tuple(exports)


@dataclass
class Totals:
    """Totals: a run's figures so far, cumulative from its first interval (what a push sends):
    responses by status (``"0"``: no response), failures and their classes, bytes, iterations
    and active VUs by scenario, the latency histogram (Prometheus buckets and OTLP exponential
    buckets, seconds) and the last interval's percentiles. ``testid`` labels every series."""

    testid: str
    started_unix_s: float = field(default_factory=time.time)
    by_status: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    failed: int = 0
    failure_classes: dict[str, int] = field(default_factory=dict)
    bytes_sent: int = 0
    bytes_received: int = 0
    iterations: dict[str, int] = field(default_factory=dict)
    vus: dict[str, int] = field(default_factory=dict)
    latency_count: int = 0
    latency_sum_s: float = 0.0
    latency_min_s: float = math.inf
    latency_max_s: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * len(LATENCY_BOUNDS_S))
    exponential: dict[int, int] = field(default_factory=dict)
    zero_count: int = 0
    percentiles_s: dict[str, float] = field(default_factory=dict)
    intervals: int = 0

    @property
    def failure_rate(self) -> float:
        """failure_rate is the failed share of the requests so far (0 before any)."""
        return self.failed / self.requests if self.requests else 0.0

    def add(self, interval: Mapping[str, Any]) -> None:
        """add adds one interval document of the engine's stream."""
        r = interval.get("requests") or {}
        completed = int(r.get("succeeded") or 0) + int(r.get("failed") or 0)
        with_status = 0
        for status, count in (r.get("status_codes") or {}).items():
            self.by_status[status] = self.by_status.get(status, 0) + int(count)
            with_status += int(count)
        if completed > with_status:
            self.by_status["0"] = self.by_status.get("0", 0) + completed - with_status
        self.requests += completed
        self.failed += int(r.get("failed") or 0)
        for name, count in (r.get("failure_classes") or {}).items():
            name = redact_text(name)
            self.failure_classes[name] = self.failure_classes.get(name, 0) + int(count)
        self.bytes_sent += int(r.get("bytes_sent") or 0)
        self.bytes_received += int(r.get("bytes_received") or 0)
        for scenario in interval.get("scenarios") or ():
            name = redact_text(str(scenario.get("name", "")))
            done = int((scenario.get("iterations") or {}).get("iterations_completed") or 0)
            self.iterations[name] = self.iterations.get(name, 0) + done
            self.vus[name] = int(scenario.get("active_vus") or 0)
        latency = (interval.get("latency") or {}).get("all") or {}
        self.percentiles_s = {
            p: float(latency.get(f"{p}_ms") or 0.0) / 1000.0 for p in ("p50", "p95", "p99") if latency.get("count")
        } or self.percentiles_s
        self.latency_sum_s += float(latency.get("mean_ms") or 0.0) * int(latency.get("count") or 0) / 1000.0
        self._add_histogram(str(interval.get("latency_histogram") or ""))
        self.intervals += 1

    def _add_histogram(self, encoded: str) -> None:
        if not encoded:
            return
        # Function-local: the HdrHistogram codec loads in the exporter's thread, only with --export.
        from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]

        try:
            histogram = HdrHistogram.decode(encoded)
        except Exception:  # an undecodable histogram: the counters still go out
            return
        factor = 2.0**EXPONENTIAL_SCALE
        for item in histogram.get_recorded_iterator():
            # The middle of the value's HdrHistogram bucket (3 significant digits: within 0.1 %).
            value = item.value_iterated_to
            low, high = histogram.get_lowest_equivalent_value(value), histogram.get_highest_equivalent_value(value)
            value_s = (low + high) / 2 / UNITS_PER_S
            count = int(item.count_at_value_iterated_to)
            self.latency_count += count
            self.latency_min_s = min(self.latency_min_s, value_s)
            self.latency_max_s = max(self.latency_max_s, value_s)
            for i, bound in enumerate(LATENCY_BOUNDS_S):
                if value_s <= bound:
                    self.buckets[i] += count
                    break
            if value_s <= 0:
                self.zero_count += count
            else:
                index = math.ceil(math.log2(value_s) * factor) - 1
                self.exponential[index] = self.exponential.get(index, 0) + count

    def cumulative_buckets(self) -> list[tuple[str, int]]:
        """cumulative_buckets are the Prometheus histogram's (le, count of values ≤ le) pairs, ``+Inf`` last."""
        pairs, running = [], 0
        for bound, count in zip(LATENCY_BOUNDS_S, self.buckets, strict=True):
            running += count
            pairs.append((f"{bound:g}", running))
        pairs.append(("+Inf", self.latency_count))
        return pairs


class ExportSink:
    """ExportSink is the IntervalSink of one Export: ``on_interval`` queues the interval (never
    blocking the engine's callback); its thread folds each into the run's Totals and pushes
    them, then once more at ``finish`` (which waits at most FINISH_TIMEOUT_S). Its first failure
    (an unreachable or refusing receiver, a full queue) is one warning line on ``stderr``; it
    never raises."""

    def __init__(self, export: Export, testid: str, stderr: IO[str]) -> None:
        self.export = export
        self.totals = Totals(testid)
        self.pushes = 0
        self.failures = 0
        self._stderr = stderr
        self._warned = False
        self._queue: queue.Queue[Mapping[str, Any] | None] = queue.Queue(maxsize=QUEUE_INTERVALS)
        self._thread: threading.Thread | None = None

    def start(self, planned_s: float) -> None:
        """start starts the exporter's thread."""
        self.totals.started_unix_s = time.time()
        self._thread = threading.Thread(target=self._work, name=f"surge-export-{self.export.kind}", daemon=True)
        self._thread.start()

    def on_phase(self, name: str, result: Mapping[str, Any]) -> None:
        """on_phase sends nothing: the exports carry the measured run."""

    def on_interval(self, interval: Mapping[str, Any]) -> None:
        """on_interval queues the interval for the exporter's thread (dropped, with the warning, when full)."""
        try:
            self._queue.put_nowait(interval)
        except queue.Full:
            self._warn("the receiver is too slow: intervals dropped (their counts are missing there)")

    def finish(self) -> None:
        """finish has the thread push the final figures and waits for it (at most FINISH_TIMEOUT_S)."""
        if self._thread is None:
            return
        try:
            self._queue.put(None, timeout=FINISH_TIMEOUT_S)
        except queue.Full:
            self._warn("the receiver is too slow: the last figures were not sent")
            return
        self._thread.join(FINISH_TIMEOUT_S)
        if self._thread.is_alive():
            self._warn("the receiver is too slow: the last figures may not have been sent")

    def _work(self) -> None:
        done = False
        while not done:
            item = self._queue.get()
            batch = [item]
            while True:  # fold in whatever else waits: one push carries them all
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            for interval in batch:
                if interval is None:
                    done = True
                else:
                    self.totals.add(interval)
            self._push()

    def _push(self) -> None:
        # Function-local: protobuf and the encoders load in the exporter's thread, only with --export.
        from surge.run.export_encoding import encode

        try:
            body, headers = encode(self.export.kind, self.totals, time.time())
            request = urllib.request.Request(self.export.url, data=body, headers=headers, method="POST")
            with urllib.request.urlopen(request, timeout=SEND_TIMEOUT_S) as response:
                response.read()
            self.pushes += 1
        except urllib.error.HTTPError as e:
            detail = e.read(200).decode("utf-8", errors="replace").strip().splitlines()
            self._fail(f"the receiver answered {e.code}{': ' + detail[0] if detail else ''}")
        except urllib.error.URLError as e:
            self._fail(f"cannot reach the receiver ({e.reason})")
        except Exception as e:  # a sink never raises: whatever failed costs this exporter only
            self._fail(f"cannot send ({type(e).__name__}: {e})")

    def _fail(self, reason: str) -> None:
        self.failures += 1
        self._warn(reason)

    def _warn(self, reason: str) -> None:
        if self._warned:
            return
        self._warned = True
        line = f"surge: warning: {self.export.shown}: {reason}; the run goes on (no further warning from it)"
        with contextlib.suppress(OSError, ValueError):  # a closed stderr: the warning is lost, never the run
            print(redact_text(line), file=self._stderr, flush=True)


def export_sinks(exports: Sequence[Export], testid: str | None, stderr: IO[str]) -> list[ExportSink]:
    """export_sinks are the sinks of ``exports`` for one run, its series labelled ``testid``
    (the record's run id; a new one when the run keeps no record)."""
    testid = testid or uuid.uuid4().hex
    return [ExportSink(export, testid, stderr) for export in exports]


__all__ = [
    "EXPONENTIAL_SCALE",
    "KINDS",
    "LATENCY_BOUNDS_S",
    "Export",
    "ExportKind",
    "ExportSink",
    "Totals",
    "export_sinks",
    "parse_exports",
]
