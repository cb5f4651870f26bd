"""Exports (``--export prometheus=URL``, ``--export otlp=URL``, docs/export.md): a run's
interval stream pushed to a monitoring system as it runs. Each exporter is an IntervalSink
(``surge.run.sinks``) whose ``on_interval`` only queues the engine's interval document: its own
thread adds the interval to the run's cumulative figures (``Totals``), encodes them
(``surge.run.export_encoding``: a Prometheus remote-write WriteRequest, or an OTLP
ExportMetricsServiceRequest) and sends them, once per interval and once at the end; the
session then has it push the run's figures per scenario and tag (``push_result``). A receiver
that is slow, refuses, or is not there costs one warning line on stderr (its first failure),
never the run, its record or its exit code."""

from __future__ import annotations

import base64
import contextlib
import functools
import importlib.util
import math
import queue
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Literal
from urllib.parse import unquote, urlsplit

from surge.core.errors import BadInput
from surge.core.redact import redact_text, redact_url

ExportKind = Literal["prometheus", "otlp"]
"""ExportKind is where an export goes: Prometheus remote write 1.0, or OTLP/HTTP metrics."""

KINDS: tuple[ExportKind, ...] = ("prometheus", "otlp")
"""KINDS are the export kinds ``--export KIND=URL`` takes."""

SEND_TIMEOUT_S = 5.0
"""SEND_TIMEOUT_S bounds one push: a receiver that takes longer has failed it."""

OPEN_TIMEOUT_S = 0.25
"""OPEN_TIMEOUT_S bounds the connection an exporter opens before the run sends: a receiver
slower than that to accept is connected to by the first push instead."""

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


EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "prometheus": ("google.protobuf", "cramjam"),
    "otlp": ("google.protobuf", "opentelemetry.proto"),
}
"""EXTRA_MODULES are the modules of the ``export`` extra each kind needs."""


def _missing_module(kind: str) -> str | None:
    """_missing_module is the first module of the export extra ``kind`` needs that is not installed."""
    for name in EXTRA_MODULES[kind]:
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:  # its parent package is missing
            found = None
        if found is None:
            return name
    return None


def parse_exports(values: Sequence[str], flag: str = "--export") -> tuple[Export, ...]:
    """parse_exports reads each ``KIND=URL`` of ``values``: KIND one of KINDS, URL an http(s)
    URL with a host, and the ``export`` extra installed. BadInput names ``flag`` and the value
    (secrets masked) at fault."""
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
        missing = _missing_module(kind)
        if missing is not None:
            raise BadInput(flag, f"{kind} needs {missing}, which is not installed: pip install 'surge[export]'")
        if kind == "otlp" and parts.path in ("", "/"):
            url = parts._replace(path="/v1/metrics").geturl()
        exports.append(Export(kind, url))
    return tuple(exports)


@dataclass(frozen=True)
class TagFigures:
    """TagFigures: one tag of one scenario in the finished run (its result's ``tags``): the
    ``labels`` its series carry (scenario, tag, name: the tag, as k6's ``name``; method when
    known), its completed requests by status, its failures and latency percentiles (seconds)."""

    labels: dict[str, str]
    by_status: dict[str, int]
    failed: int
    percentiles_s: dict[str, float]


def tag_figures(document: Mapping[str, Any], methods: Mapping[tuple[str, str], str]) -> list[TagFigures]:
    """tag_figures are the finished run's figures per scenario and tag (its result document's
    ``tags``), each tag's method from ``methods`` ((scenario, tag) -> method), else the first
    word of a default tag (``GET /path``)."""
    found = []
    for entry in document.get("tags") or ():
        scenario, tag = str(entry.get("scenario", "")), str(entry.get("tag", ""))
        first = tag.split(" ", 1)[0]
        method = methods.get((scenario, tag)) or (first if " " in tag and first in _METHODS else "")
        r = entry.get("requests") or {}
        labels = {"scenario": scenario, "tag": tag, "name": tag} | ({"method": method} if method else {})
        found.append(
            TagFigures(
                {k: redact_text(v) for k, v in labels.items()},
                by_status(r),
                int(r.get("failed") or 0),
                percentiles_s((entry.get("latency") or {}).get("all") or {}),
            )
        )
    return found


def by_status(requests: Mapping[str, Any]) -> dict[str, int]:
    """by_status are a result's (or an interval's) ``requests`` completed, succeeded or failed,
    by HTTP status: its ``status_codes``, and ``"0"`` for those that got no response."""
    statuses = {str(k): int(v) for k, v in (requests.get("status_codes") or {}).items()}
    completed = int(requests.get("succeeded") or 0) + int(requests.get("failed") or 0)
    if completed > sum(statuses.values()):
        statuses["0"] = completed - sum(statuses.values())
    return statuses


def percentiles_s(latency: Mapping[str, Any]) -> dict[str, float]:
    """percentiles_s are a latency summary's p50, p95 and p99 in seconds (none when it counts nothing)."""
    if not latency.get("count"):
        return {}
    return {p: float(latency.get(f"{p}_ms") or 0.0) / 1000.0 for p in ("p50", "p95", "p99")}


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"})
"""_METHODS are the HTTP methods a default tag (``METHOD /path``) starts with."""


def step_methods(plan: Any) -> dict[tuple[str, str], str]:
    """step_methods maps each (scenario, tag) of ``plan``'s explicitly tagged steps to its
    request's method (a tag shared by two methods maps to neither)."""
    methods: dict[tuple[str, str], str] = {}
    shared: set[tuple[str, str]] = set()
    for scenario in plan.scenarios:
        for sequence in scenario.flow.sequences:
            for step in sequence.steps:
                if step.tag is None:
                    continue
                key, method = (scenario.name, step.tag), step.request.method
                if methods.setdefault(key, method) != method:
                    shared.add(key)
    return {key: method for key, method in methods.items() if key not in shared}


@dataclass
class Totals:
    """Totals: a run's figures so far, cumulative from its first interval (what a push sends):
    responses by status (``"0"``: no response), failures and their classes, bytes, iterations
    and active VUs by scenario, the latency histogram (Prometheus buckets and OTLP exponential
    buckets, seconds) and the last interval's percentiles; once the run is done, its figures
    per scenario and tag (``tags``: the interval stream has none). ``testid`` labels every series."""

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
    _exponential_counts: Any = None
    _exponential_first: int = 0
    percentiles_s: dict[str, float] = field(default_factory=dict)
    intervals: int = 0
    tags: list[TagFigures] = field(default_factory=list)

    @property
    def failure_rate(self) -> float:
        """failure_rate is the failed share of the requests so far (0 before any)."""
        return self.failed / self.requests if self.requests else 0.0

    def add(self, interval: Mapping[str, Any]) -> None:
        """add adds one interval document of the engine's stream."""
        r = interval.get("requests") or {}
        for status, count in by_status(r).items():
            self.by_status[status] = self.by_status.get(status, 0) + count
            self.requests += count
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
        self.percentiles_s = percentiles_s(latency) or self.percentiles_s
        self.latency_sum_s += float(latency.get("mean_ms") or 0.0) * int(latency.get("count") or 0) / 1000.0
        self._add_histogram(str(interval.get("latency_histogram") or ""))
        self.intervals += 1

    def _add_histogram(self, encoded: str) -> None:
        if not encoded:
            return
        # Function-local: numpy and the HdrHistogram codec load when an exporter starts (--export only).
        import numpy as np

        from surge.record.histogram_codec import recorded as recorded_slots  # function-local: with --export only

        found = recorded_slots(encoded)  # the few hundred slots that count, without a 188 KB array
        try:
            if found is not None:
                shape, recorded, counts = found.layout, found.indexes, found.counts.astype(np.float64)
                layout = histogram_layout(shape.counts_len, shape.half, shape.magnitude, shape.unit_magnitude)
            else:  # what the sparse reader does not expect: hdrh's own decoder
                from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]  # function-local: the fallback, seldom loaded

                histogram = HdrHistogram.decode(encoded)
                layout = histogram_layout(
                    histogram.counts_len,
                    histogram.sub_bucket_half_count,
                    histogram.sub_bucket_half_count_magnitude,
                    histogram.unit_magnitude,
                )
                all_counts = np.ctypeslib.as_array(histogram.counts)[: histogram.counts_len]
                recorded = np.flatnonzero(all_counts)
                counts = all_counts[recorded].astype(np.float64)
        except Exception:  # an undecodable histogram: the counters still go out
            return
        if not len(recorded):
            return
        self.latency_count += int(counts.sum())
        self.latency_min_s = min(self.latency_min_s, float(layout.values_s[recorded[0]]))
        self.latency_max_s = max(self.latency_max_s, float(layout.values_s[recorded[-1]]))
        added = np.bincount(layout.slots[recorded], weights=counts, minlength=len(LATENCY_BOUNDS_S) + 1)
        self.buckets = [b + int(a) for b, a in zip(self.buckets, added[: len(LATENCY_BOUNDS_S)], strict=True)]
        size = layout.exponential_slots
        exponential = np.bincount(layout.exponential[recorded], weights=counts, minlength=size)
        self.zero_count += int(exponential[0])  # slot 0: the values of 0
        if self._exponential_counts is None or self._exponential_first != layout.first:
            self._fold_exponential()
            self._exponential_counts, self._exponential_first = np.zeros(size), layout.first
        self._exponential_counts[1:] += exponential[1:]

    def _fold_exponential(self) -> None:
        """_fold_exponential moves the dense exponential counts into ``exponential``."""
        if self._exponential_counts is None:
            return
        for slot in self._exponential_counts.nonzero()[0].tolist():
            index = self._exponential_first + slot - 1
            self.exponential[index] = self.exponential.get(index, 0) + int(self._exponential_counts[slot])
        self._exponential_counts = None

    def exponential_buckets(self) -> tuple[int, list[int]]:
        """exponential_buckets are the latency's positive exponential buckets as OTLP takes them
        (``EXPONENTIAL_SCALE``): the index of the first and the counts from there, every index
        in between present."""
        self._fold_exponential()
        if not self.exponential:
            return 0, []
        low, high = min(self.exponential), max(self.exponential)
        return low, [self.exponential.get(i, 0) for i in range(low, high + 1)]

    def cumulative_buckets(self) -> list[tuple[str, int]]:
        """cumulative_buckets are the Prometheus histogram's (le, count of values ≤ le) pairs, ``+Inf`` last."""
        pairs, running = [], 0
        for bound, count in zip(LATENCY_BOUNDS_S, self.buckets, strict=True):
            running += count
            pairs.append((f"{bound:g}", running))
        pairs.append(("+Inf", self.latency_count))
        return pairs


class PushFailed(Exception):
    """PushFailed is a push the receiver did not take, in words for the exporter's warning."""


class Receiver:
    """Receiver is the connection an exporter pushes on, kept open from push to push (as
    Prometheus and the OpenTelemetry Collector keep it): a connection and its handshake per
    push cost 0.35 ms of the exporter's CPU each second at one push a second (0.8 → 0.45 ms a
    push; docs/export.md, "Cost"). A connection the receiver closed while idle is opened again
    once for the same push; credentials in the URL are sent as basic authentication."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.https = parts.scheme == "https"
        self.host = parts.hostname or ""
        self.port = parts.port
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.authorization = None
        if parts.username is not None:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            self.authorization = "Basic " + base64.b64encode(pair).decode("ascii")
        self._connection: Any = None

    def open(self, timeout_s: float) -> None:
        """open connects now, within ``timeout_s`` (before the run sends: the handshake, and for
        https the TLS one, costs nothing during it); a receiver not there yet is left to the
        first push, which warns."""
        import http.client  # function-local: with --export only

        connection = self._new_connection(timeout_s)
        try:
            connection.connect()
        except (OSError, http.client.HTTPException):
            connection.close()
            return
        if connection.sock is not None:
            connection.sock.settimeout(SEND_TIMEOUT_S)
        connection.timeout = SEND_TIMEOUT_S
        self.close()
        self._connection = connection

    def post(self, body: bytes, headers: Mapping[str, str]) -> None:
        """post sends ``body`` and reads the answer within SEND_TIMEOUT_S; PushFailed when the
        receiver cannot be reached or answers other than 2xx."""
        import http.client  # function-local: with --export only

        sent = {**headers, **({"Authorization": self.authorization} if self.authorization else {})}
        for attempt in (1, 2):
            reused = self._connection is not None
            try:
                if self._connection is None:
                    self._connection = self._new_connection(SEND_TIMEOUT_S)
                self._connection.request("POST", self.path, body=body, headers=sent)
                response = self._connection.getresponse()
                answer = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                self.close()
                if reused and attempt == 1:
                    continue  # the receiver closed the idle connection: once more on a new one
                raise PushFailed(f"cannot reach the receiver ({e})") from None
            except (OSError, http.client.HTTPException) as e:
                self.close()
                raise PushFailed(f"cannot reach the receiver ({e})") from None
            if response.will_close:
                self.close()
            if not 200 <= response.status < 300:
                detail = answer[:200].decode("utf-8", errors="replace").strip().splitlines()
                raise PushFailed(f"the receiver answered {response.status}{': ' + detail[0] if detail else ''}")
            return

    def _new_connection(self, timeout_s: float) -> Any:
        import http.client  # function-local: with --export only

        kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        return kind(self.host, self.port, timeout=timeout_s)

    def close(self) -> None:
        """close closes the connection (the next post opens another)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


WARNED: set[Export] = set()
"""WARNED are the exports that have had their one warning in this process: an experiment's
runs each have their own ExportSink, and a receiver that is down costs the command one line."""

_WARNED_LOCK = threading.Lock()


class ExportSink:
    """ExportSink is the IntervalSink of one Export: ``on_interval`` queues the interval (never
    blocking the engine's callback); its thread folds each into the run's Totals and pushes
    them, then once more at ``finish`` (which waits at most FINISH_TIMEOUT_S); ``cpu_s`` is the
    CPU its thread has spent (adding, encoding, sending). Its first failure
    (an unreachable or refusing receiver, a full queue) is one warning line on ``stderr``, once
    per export in the process (``WARNED``); it never raises."""

    def __init__(
        self, export: Export, testid: str, stderr: IO[str], methods: Mapping[tuple[str, str], str] | None = None
    ) -> None:
        self.export = export
        self.methods = dict(methods or {})
        self.totals = Totals(testid)
        self.pushes = 0
        self.failures = 0
        self.cpu_s = 0.0
        self._stderr = stderr
        self._queue: queue.Queue[Mapping[str, Any] | None] = queue.Queue(maxsize=QUEUE_INTERVALS)
        self._thread: threading.Thread | None = None
        self._receiver: Receiver | None = None

    def start(self, planned_s: float) -> None:
        """start loads the encoders and rehearses a push (before the run sends: their imports and
        first calls cost no CPU during the load), then starts the exporter's thread."""
        try:
            # Function-local, each: loaded only with --export, here, before the run sends.
            import http.client  # noqa: F401  # function-local: with --export only

            import hdrh.histogram  # type: ignore[import-untyped]  # noqa: F401  # function-local: the codec
            import numpy  # noqa: F401  # function-local: the histogram's arithmetic

            import surge.run.export_encoding  # noqa: F401  # function-local: the export extra's encoders

            rehearse(self.export.kind)
            self._receiver = Receiver(self.export.url)
            self._receiver.open(OPEN_TIMEOUT_S)
        except ImportError as e:
            self._warn(f"cannot export ({e}): pip install 'surge[export]'")
            return
        except Exception as e:  # a sink never raises: whatever failed costs this exporter only
            self._warn(f"cannot export ({type(e).__name__}: {e})")
            return
        self.totals.started_unix_s = time.time()
        self._thread = threading.Thread(target=self._work, name=f"surge-export-{self.export.kind}", daemon=True)
        self._thread.start()

    def on_phase(self, name: str, result: Mapping[str, Any]) -> None:
        """on_phase sends nothing: the exports carry the measured run."""

    def on_interval(self, interval: Mapping[str, Any]) -> None:
        """on_interval queues the interval for the exporter's thread (dropped, with the warning, when full)."""
        if self._thread is None:
            return
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

    def push_result(self, document: Mapping[str, Any]) -> None:
        """push_result pushes the finished run's figures per scenario and tag (``tag_figures`` of
        its result ``document``) with the totals, once, after ``finish`` (in the caller's thread,
        within SEND_TIMEOUT_S); nothing when the exporter never started or is still sending."""
        if self._thread is None or self._thread.is_alive():
            return
        self.totals.tags = tag_figures(document, self.methods)
        if self.totals.tags:
            self._push()

    def _work(self) -> None:
        done = False
        while not done:
            item = self._queue.get()
            started = time.thread_time()
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
            self.cpu_s += time.thread_time() - started
        if self._receiver is not None:
            self._receiver.close()

    def _push(self) -> None:
        from surge.run.export_encoding import encode  # function-local: the export extra's, loaded at start

        try:
            body, headers = encode(self.export.kind, self.totals, time.time())
            if self._receiver is None:
                self._receiver = Receiver(self.export.url)
            self._receiver.post(body, headers)
            self.pushes += 1
        except PushFailed as e:
            self._fail(str(e))
        except Exception as e:  # a sink never raises: whatever failed costs this exporter only
            self._fail(f"cannot send ({type(e).__name__}: {e})")

    def _fail(self, reason: str) -> None:
        self.failures += 1
        self._warn(reason)

    def _warn(self, reason: str) -> None:
        with _WARNED_LOCK:
            if self.export in WARNED:
                return
            WARNED.add(self.export)
        line = f"surge: warning: {self.export.shown}: {reason}; the run goes on (no further warning from it)"
        with contextlib.suppress(OSError, ValueError):  # a closed stderr: the warning is lost, never the run
            print(redact_text(line), file=self._stderr, flush=True)


@dataclass(frozen=True)
class HistogramLayout:
    """HistogramLayout: where each slot of an HdrHistogram's counts array goes, computed once
    per layout (every interval's histogram has the engine's): ``values_s``, the value each slot
    stands for (the middle of its bucket, as HdrHistogram's mean takes it: 3 significant digits,
    seconds, rising); ``slots``, its Prometheus bucket (``len(LATENCY_BOUNDS_S)``: above the
    last bound); ``exponential``, its exponential bucket index minus ``first`` plus 1 (0: the
    value 0), of ``exponential_slots`` in all."""

    values_s: Any
    slots: Any
    exponential: Any
    first: int
    exponential_slots: int


@functools.lru_cache(maxsize=4)
def histogram_layout(counts_len: int, half: int, magnitude: int, unit_magnitude: int) -> HistogramLayout:
    """histogram_layout is the HistogramLayout of an HdrHistogram counts array of ``counts_len``
    slots (its sub-bucket half count ``half`` = 2^``magnitude``, its ``unit_magnitude``)."""
    # Function-local: numpy loads when an exporter starts (--export only).
    import numpy as np

    index = np.arange(counts_len)
    bucket = (index >> magnitude) - 1
    sub = (index & (half - 1)) + half
    first_half = bucket < 0  # the first bucket's lower half
    sub, bucket = np.where(first_half, sub - half, sub), np.where(first_half, 0, bucket)
    width = np.exp2(bucket + unit_magnitude)
    values_s = (sub * width + np.floor(width / 2)) / UNITS_PER_S
    slots = np.searchsorted(np.asarray(LATENCY_BOUNDS_S), values_s, side="left")
    positive = values_s > 0
    indexes = np.zeros(counts_len, dtype=np.int64)
    indexes[positive] = np.ceil(np.log2(values_s[positive]) * 2.0**EXPONENTIAL_SCALE).astype(np.int64) - 1
    first = int(indexes[positive].min()) if positive.any() else 0
    exponential = np.where(positive, indexes - first + 1, 0)
    return HistogramLayout(values_s, slots, exponential, first, int(exponential.max()) + 1)


ENGINE_HISTOGRAM = (1, 3_600_000_000, 3)
"""ENGINE_HISTOGRAM is the engine's latency histogram's lowest and highest value (µs) and
significant digits (crates/surge-engine/src/measure/histogram.rs): its layout is computed once."""


def rehearse(kind: str) -> None:
    """rehearse adds an interval of one request to a throwaway Totals and encodes it as a push
    of ``kind``, sending nothing: the histogram's layout, numpy's and protobuf's first calls."""
    from hdrh.histogram import HdrHistogram  # function-local: the codec, with --export only

    from surge.run.export_encoding import encode  # function-local: the export extra's, with --export only

    histogram = HdrHistogram(*ENGINE_HISTOGRAM)
    histogram.record_value(1000)
    totals = Totals("rehearsal")
    totals.add(
        {
            "requests": {"succeeded": 1, "status_codes": {"200": 1}, "failure_classes": {"rehearsal": 0}},
            "latency": {"all": {"count": 1, "mean_ms": 1.0, "p50_ms": 1.0, "p95_ms": 1.0, "p99_ms": 1.0}},
            "latency_histogram": histogram.encode().decode(),
            "scenarios": [{"name": "rehearsal", "iterations": {"iterations_completed": 1}, "active_vus": 1}],
        }
    )
    encode(kind, totals, time.time())


def export_sinks(exports: Sequence[Export], testid: str | None, stderr: IO[str], plan: Any = None) -> list[ExportSink]:
    """export_sinks are the sinks of ``exports`` for one run of ``plan`` (its steps' methods
    label the per-tag series), its series labelled ``testid`` (the record's run id; a new one
    when the run keeps no record)."""
    testid = testid or uuid.uuid4().hex
    methods = step_methods(plan) if plan is not None else {}
    return [ExportSink(export, testid, stderr, methods) for export in exports]


__all__ = [
    "ENGINE_HISTOGRAM",
    "EXPONENTIAL_SCALE",
    "KINDS",
    "LATENCY_BOUNDS_S",
    "WARNED",
    "Export",
    "ExportKind",
    "ExportSink",
    "HistogramLayout",
    "TagFigures",
    "Totals",
    "by_status",
    "export_sinks",
    "histogram_layout",
    "parse_exports",
    "percentiles_s",
    "rehearse",
    "step_methods",
    "tag_figures",
]
