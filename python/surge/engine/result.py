"""RunResult and Interval: what the engine reports, as typed models."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from surge.engine.execute import result_document


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class LatencySummary(_Model):
    """LatencySummary: count, mean and percentiles of one histogram, in milliseconds; a figure
    an imported run's source did not keep is None (docs/imports.md), never estimated."""

    count: int | None = 0
    min_ms: float | None = 0.0
    mean_ms: float | None = 0.0
    stdev_ms: float | None = 0.0
    p50_ms: float | None = 0.0
    p90_ms: float | None = 0.0
    p95_ms: float | None = 0.0
    p99_ms: float | None = 0.0
    p99_9_ms: float | None = 0.0
    max_ms: float | None = 0.0


class LatencySummaries(_Model):
    """LatencySummaries: all responses, successful ones, service time and send lag; each
    response's first byte; and for event streams (``text/event-stream``) the first event, the
    gaps between events and the stream's duration; for token streams (OpenAI-compatible
    completions) the time to first token, the inter-token latency and the time per output token
    (docs/record.md, "Streams")."""

    all: LatencySummary = Field(default_factory=LatencySummary)
    success: LatencySummary = Field(default_factory=LatencySummary)
    service_time: LatencySummary = Field(default_factory=LatencySummary)
    send_lag: LatencySummary = Field(default_factory=LatencySummary)
    first_byte: LatencySummary = Field(default_factory=LatencySummary)
    first_event: LatencySummary = Field(default_factory=LatencySummary)
    event_gap: LatencySummary = Field(default_factory=LatencySummary)
    stream_duration: LatencySummary = Field(default_factory=LatencySummary)
    ttft: LatencySummary = Field(default_factory=LatencySummary)
    itl: LatencySummary = Field(default_factory=LatencySummary)
    tpot: LatencySummary = Field(default_factory=LatencySummary)


class Requests(_Model):
    """Requests: the counters of a run or an interval (``sent = responses + unanswered + retried +
    interrupted - interrupted_unsent``; README "What is counted"); an imported run's count its source did not
    keep is None)."""

    sent: int | None = 0
    responses: int | None = 0
    unanswered: int | None = 0
    succeeded: int = 0
    failed: int = 0
    shed: int | None = 0
    timed_out: int | None = 0
    interrupted: int | None = 0
    interrupted_unsent: int | None = 0
    retried: int | None = 0
    """retried: sends the server refused unprocessed (HTTP/2: above a graceful GOAWAY's last
    stream, or REFUSED_STREAM) whose request was sent again; each send is in ``sent``."""
    dropped: int | None = 0
    late: int | None = 0
    late_dispatched: int | None = None
    """late_dispatched: the open-model requests the generator took off its schedule more than 1 ms
    late (its own lateness); ``late`` − ``late_dispatched`` waited for a connection. None in
    records from before it was counted, and in imports."""
    bytes_sent: int | None = 0
    bytes_received: int | None = 0
    connections_opened: int | None = 0
    streams: int = 0
    """streams: complete ``text/event-stream`` responses (0 in older records and imports)."""
    empty_streams: int = 0
    events: int = 0
    events_per_stream: dict[str, float] = Field(default_factory=dict)
    """events_per_stream: count (of streams with events), min, mean, p50, p90, p99, max."""
    token_streams: int = 0
    """token_streams: event streams with output text (0 in older records and imports)."""
    output_tokens: int = 0
    """output_tokens: their output tokens, the server's ``usage`` count where it sent one, else
    the token events."""
    usage_streams: int = 0
    """usage_streams: the token streams whose count came from their ``usage``."""
    tokens_per_stream: dict[str, float] = Field(default_factory=dict)
    """tokens_per_stream: count (of token streams), min, mean, p50, p90, p99, max."""
    good: int = 0
    """good: successful responses that met every goodput bound (the record's ``goodput``; 0
    without bounds)."""
    status_codes: dict[str, int] | None = Field(default_factory=dict)
    failure_classes: dict[str, int] = Field(default_factory=dict)
    success_rate: float = 0.0
    failure_rate: float = 0.0


class Iterations(_Model):
    """Iterations: a scenario's iteration counts (started, completed, dropped, interrupted)."""

    iterations_started: int = 0
    iterations_completed: int = 0
    iterations_dropped: int = 0
    iterations_dispatched_late: int = 0
    iterations_interrupted: int = 0
    connections_opened: int = 0


class Throughput(_Model):
    """Throughput: responses, successes (goodput) and sent requests per second, all over
    ``window_s``, the load window (from the start until the load stopped), counting what
    ended (or was sent) within it; what ended after it is the ``Drain``."""

    window_s: float | None = 0.0
    responses_per_s: float | None = 0.0
    successes_per_s: float | None = 0.0
    sent_per_s: float | None = 0.0
    output_tokens_per_s: float | None = 0.0
    """output_tokens_per_s: token streams' output tokens per second of the window (0 without any)."""
    good_per_s: float | None = 0.0
    """good_per_s: responses that met every goodput bound per second of the window (0 without bounds)."""


LONG_DRAIN_SHARE = 0.25
"""LONG_DRAIN_SHARE of the load window (and at least LONG_DRAIN_MIN_S) makes a drain long enough
to warn of: requests hung on, or the target still worked off a queue, after the load stopped."""
LONG_DRAIN_MIN_S = 1.0
"""LONG_DRAIN_MIN_S: a drain shorter than this is never long (a 200 ms request after a 0.5 s run)."""


class Drain(_Model):
    """Drain: what ended after the load window (``seconds`` from the end of the load to the end
    of the last request): responses, successes, failures and requests cut off when the grace
    period ran out. Counted in ``requests``, never in the rates."""

    seconds: float = 0.0
    responses: int = 0
    succeeded: int = 0
    failed: int = 0
    interrupted: int = 0

    def is_long(self, load_s: float | None) -> bool:
        """is_long tells whether the drain outlasted LONG_DRAIN_SHARE of a ``load_s`` load (and
        LONG_DRAIN_MIN_S)."""
        return bool(load_s) and self.seconds >= max(LONG_DRAIN_MIN_S, LONG_DRAIN_SHARE * (load_s or 0.0))


class ScenarioInterval(_Model):
    """ScenarioInterval: one scenario's share of an interval."""

    name: str
    iterations: Iterations = Field(default_factory=Iterations)
    active_vus: int = 0
    responses_per_s: float = 0.0


class ScenarioResult(_Model):
    """ScenarioResult: one scenario's totals."""

    name: str
    duration_s: float = 0.0
    iterations: Iterations = Field(default_factory=Iterations)
    requests: Requests = Field(default_factory=Requests)
    throughput: Throughput = Field(default_factory=Throughput)
    drain: Drain = Field(default_factory=Drain)
    latency: LatencySummaries = Field(default_factory=LatencySummaries)


class TagResult(_Model):
    """TagResult: the totals of one tag (endpoint) within one scenario; its rates are over
    its scenario's window."""

    tag: str
    scenario: str
    requests: Requests = Field(default_factory=Requests)
    throughput: Throughput = Field(default_factory=Throughput)
    latency: LatencySummaries = Field(default_factory=LatencySummaries)


class Interval(_Model):
    """Interval: one period's merged snapshot of all threads."""

    index: int
    start_s: float
    end_s: float
    requests: Requests
    latency: LatencySummaries
    responses_per_s: float | None
    successes_per_s: float = 0.0
    sent_per_s: float | None
    target_rate_per_s: float | None = None
    open_connections: int | None = 0
    in_flight: int | None = 0
    peak_concurrency: int | None = 0
    latency_histogram: str = ""
    scenarios: list[ScenarioInterval] = Field(default_factory=list)


class Generator(_Model):
    """Generator: the load generator's own CPU and memory use during the run; ``thread_waiting``
    is each worker thread's time waiting for a core (runnable, other processes on it) over the
    elapsed time (empty where the kernel does not say)."""

    cpu: dict[str, float] = Field(default_factory=dict)
    cpu_us_per_request: float = 0.0
    thread_busy: list[float] = Field(default_factory=list)
    thread_waiting: list[float] = Field(default_factory=list)
    max_rss_kib: int = 0
    open_file_limit: int = 0


class Http2(_Model):
    """Http2: how a run's HTTP/2 connections carried its requests (docs/record.md, "HTTP/2"):
    connections established, streams opened, streams per connection over its life (mean,
    max), streams in flight on a connection when each opened (mean, max: the multiplexing
    achieved), connections a GOAWAY closed, and the lowest SETTINGS_MAX_CONCURRENT_STREAMS a
    server announced (None: none)."""

    connections: int = 0
    streams: int = 0
    streams_per_connection_mean: float = 0.0
    streams_per_connection_max: int = 0
    concurrent_streams_mean: float = 0.0
    concurrent_streams_max: int = 0
    goaways: int = 0
    server_max_concurrent_streams: int | None = None


class RunResult(_Model):
    """RunResult: everything one run measured."""

    schema_: str = Field(alias="schema")
    url: str
    addresses: list[str] = Field(default_factory=list)
    started_at_unix_s: float | None
    duration_s: float | None
    elapsed_s: float | None
    threads: int | None
    stop_reason: str
    requests: Requests
    latency: LatencySummaries
    throughput: Throughput
    drain: Drain = Field(default_factory=Drain)
    histograms: dict[str, str] | None = Field(default_factory=dict)
    peak_open_connections: int | None = 0
    peak_concurrency: int | None = 0
    generator: Generator | None = Field(default_factory=Generator)
    scenarios: list[ScenarioResult] = Field(default_factory=list)
    tags: list[TagResult] = Field(default_factory=list)
    checks: list[dict[str, Any]] = Field(default_factory=list)
    captures: list[dict[str, Any]] = Field(default_factory=list)
    pools: dict[str, list[str]] = Field(default_factory=dict)
    intervals: list[Interval] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    goodput: dict[str, float] | None = None
    """goodput: the per-request bounds (``latency_s``, ``ttft_s``, ``tpot_s``) ``requests.good``
    counts against; None when goodput was not measured."""
    http2: Http2 | None = None
    """http2: the HTTP/2 connection and stream figures; None over HTTP/1.1."""

    def truncated_probes(self) -> list[dict[str, Any]]:
        """truncated_probes lists the checks and captures that decided an outcome on a body
        longer than the 1 MiB the engine keeps for them (``truncated`` > 0), checks first."""
        return [p for p in [*self.checks, *self.captures] if p.get("truncated", 0) > 0]

    @classmethod
    def from_json(cls, text: str) -> RunResult:
        """from_json parses the engine's result document."""
        return cls.model_validate(json.loads(text))

    def to_document(self, *, interval_histograms: bool = False) -> dict[str, Any]:
        """to_document returns the JSON-ready summary (``--json``), without per-interval
        histograms unless asked."""
        return result_document(self.model_dump(by_alias=True), interval_histograms=interval_histograms)
