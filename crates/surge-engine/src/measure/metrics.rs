//! metrics: the counters and histograms one worker thread keeps for one interval.
//!
//! Each thread owns its Metrics and touches nothing shared per request; the run merges
//! the threads' Metrics once per interval.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::measure::failure::{is_failure_status, is_shed_status, FailureClass};
use crate::measure::histogram::{CountSummary, LatencyHistogram, LatencySummary};

/// STATUS_LIMIT bounds the status codes counted individually (100..=599 fit; others are
/// counted under 0 as "other").
const STATUS_LIMIT: u16 = 600;

/// Metrics are the counts and latency histograms of one thread (or a merge of several).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Metrics {
    /// sent counts requests completely written on an established connection (for TLS,
    /// after the handshake and with every record on the socket).
    pub sent: u64,
    /// responses counts complete responses, any status.
    pub responses: u64,
    /// unanswered counts requests sent whose connection then failed before a complete
    /// response (reset, closed, timed out, invalid bytes): the server may or may not have
    /// received them.
    pub unanswered: u64,
    /// interrupted_unsent counts interrupted requests that were still being written.
    pub interrupted_unsent: u64,
    /// retried counts sends the server refused unprocessed (HTTP/2: a stream above its
    /// GOAWAY's last, or reset with REFUSED_STREAM), whose request was sent again.
    #[serde(default)]
    pub retried: u64,
    /// succeeded counts responses with a status below 400.
    pub succeeded: u64,
    /// status_failed counts responses with status 400 and above.
    pub status_failed: u64,
    /// shed counts 429 and 503 responses (the server refusing load on purpose).
    pub shed: u64,
    /// dropped counts open-model requests never sent because the in-flight limit was hit.
    pub dropped: u64,
    /// late counts open-model requests sent more than [`LATE_THRESHOLD_NS`] after their intended time.
    pub late: u64,
    /// late_dispatched counts open-model requests the worker took off its schedule more than
    /// [`LATE_THRESHOLD_NS`] after their intended time: late through the generator's own doing.
    /// The rest of `late` waited for a connection after a dispatch on time.
    pub late_dispatched: u64,
    /// bytes_sent counts request bytes written.
    pub bytes_sent: u64,
    /// bytes_received counts response bytes read (headers and bodies).
    pub bytes_received: u64,
    /// connections_opened counts successful connection establishments.
    pub connections_opened: u64,
    /// status_counts counts responses per status code, as (code, count) in the order first
    /// seen (code 0: outside 100..600). A run sees a handful of codes, so a short list costs
    /// one comparison or two per response and a few bytes per slot, where an array by code
    /// took 4.8 KB in every copy of every slot.
    pub status_counts: Vec<(u16, u64)>,
    /// failure_counts counts failures per class (index = [`FailureClass::index`]).
    pub failure_counts: [u64; FailureClass::COUNT],
    /// latency records every response and timeout, from the intended send time.
    pub latency: LatencyHistogram,
    /// latency_success records responses with a status below 400, from the intended send time.
    pub latency_success: LatencyHistogram,
    /// service_time records every response, from the actual send time.
    pub service_time: LatencyHistogram,
    /// send_lag records how long after its intended time each request was written.
    pub send_lag: LatencyHistogram,
    /// first_byte records when each response's first byte arrived, from the intended send time.
    #[serde(default)]
    pub first_byte: LatencyHistogram,
    /// first_event records each event stream's first event, from the intended send time.
    #[serde(default)]
    pub first_event: LatencyHistogram,
    /// event_gap records the time between consecutive events of a stream (0 for events that
    /// arrived in the same read).
    #[serde(default)]
    pub event_gap: LatencyHistogram,
    /// stream_duration records each event stream's time from its first event to its end.
    #[serde(default)]
    pub stream_duration: LatencyHistogram,
    /// events_per_stream records each complete event stream's number of events (a count, in
    /// the histogram's unit), streams with none left out (`empty_streams`).
    #[serde(default)]
    pub events_per_stream: LatencyHistogram,
    /// streams counts complete `text/event-stream` responses.
    #[serde(default)]
    pub streams: u64,
    /// empty_streams counts the complete event streams that had no event.
    #[serde(default)]
    pub empty_streams: u64,
    /// events counts the events of complete event streams.
    #[serde(default)]
    pub events: u64,
    /// ttft records each token stream's first token event (time to first token), from the
    /// intended send time.
    #[serde(default)]
    pub ttft: LatencyHistogram,
    /// itl records the time between consecutive token events of a stream (inter-token
    /// latency; 0 for token events that arrived in the same read).
    #[serde(default)]
    pub itl: LatencyHistogram,
    /// tpot records each complete token stream's time per output token after the first:
    /// (end − first token) / (output tokens − 1), for streams of 2 tokens or more.
    #[serde(default)]
    pub tpot: LatencyHistogram,
    /// tokens_per_stream records each complete token stream's output tokens (a count).
    #[serde(default)]
    pub tokens_per_stream: LatencyHistogram,
    /// token_streams counts complete event streams with output tokens.
    #[serde(default)]
    pub token_streams: u64,
    /// output_tokens counts their output tokens: the server's `usage` count where it sent
    /// one, else the token events.
    #[serde(default)]
    pub output_tokens: u64,
    /// usage_streams counts the token streams whose count came from their `usage`.
    #[serde(default)]
    pub usage_streams: u64,
    /// good counts the responses that met every goodput bound (0 without bounds).
    #[serde(default)]
    pub good: u64,
}

/// GoodBounds are goodput's per-request bounds, in ns (the plan's `goodput`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GoodBounds {
    /// latency bounds the latency.
    pub latency: Option<u64>,
    /// ttft bounds the time to first token.
    pub ttft: Option<u64>,
    /// tpot bounds the time per output token after the first.
    pub tpot: Option<u64>,
}

impl GoodBounds {
    /// met tells whether a successful response of `latency_ns`, intended at `intended_ns`,
    /// with its `stream` times (None: not an event stream) met every bound.
    pub(crate) fn met(&self, latency_ns: u64, intended_ns: u64, stream: Option<&StreamTimes>) -> bool {
        let first_token = stream.and_then(|s| s.first_token_ns);
        let within = |bound: Option<u64>, value: Option<u64>| bound.is_none_or(|b| value.is_some_and(|v| v <= b));
        within(self.latency, Some(latency_ns))
            && within(self.ttft, first_token.map(|t| t.saturating_sub(intended_ns)))
            && within(self.tpot, stream.filter(|_| first_token.is_some()).map(|s| s.tpot_ns().unwrap_or(0)))
    }
}

/// StreamTimes are a complete event stream's figures: its events and token events, when the
/// first of each arrived, the output tokens its `usage` gave, and when it ended (ns since the
/// run's start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamTimes {
    /// events counts the stream's events.
    pub events: u32,
    /// first_event_ns is when its first event arrived.
    pub first_event_ns: Option<u64>,
    /// tokens counts its token events (events with output text).
    pub tokens: u32,
    /// first_token_ns is when its first token event arrived.
    pub first_token_ns: Option<u64>,
    /// usage_tokens is the output token count of its `usage`, if it sent one.
    pub usage_tokens: Option<u32>,
    /// ended_ns is when the stream ended.
    pub ended_ns: u64,
}

impl StreamTimes {
    /// usage is the output token count of the stream's `usage`, when it sent a positive one.
    fn usage(&self) -> Option<u32> {
        self.usage_tokens.filter(|&n| n > 0)
    }

    /// output_tokens are the stream's output tokens: its usage's count, else its token events.
    pub fn output_tokens(&self) -> u32 {
        self.usage().unwrap_or(self.tokens)
    }

    /// tpot_ns is the time per output token after the first, for a stream of 2 tokens or more.
    pub fn tpot_ns(&self) -> Option<u64> {
        let first = self.first_token_ns?;
        let tokens = self.output_tokens();
        (tokens >= 2).then(|| self.ended_ns.saturating_sub(first) / u64::from(tokens - 1))
    }
}

/// record_arrivals records `n` arrivals (events, or token events) at `arrived_ns`: the first of
/// a stream into `first` (from `intended_ns`), the rest into `gaps` (from the one before, 0
/// between those that arrived together).
#[inline]
fn record_arrivals(
    first: &mut LatencyHistogram,
    gaps: &mut LatencyHistogram,
    n: u32,
    intended_ns: u64,
    arrived_ns: u64,
    last_ns: Option<u64>,
) {
    if n == 0 {
        return;
    }
    match last_ns {
        None => first.record(arrived_ns.saturating_sub(intended_ns)),
        Some(last) => gaps.record(arrived_ns.saturating_sub(last)),
    }
    if n > 1 {
        gaps.record_zeros(u64::from(n - 1));
    }
}

/// LATE_THRESHOLD_NS is how late a send may be before it counts as late (1 ms).
pub(crate) const LATE_THRESHOLD_NS: u64 = 1_000_000;

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// new returns zeroed metrics; it allocates the histograms once.
    pub fn new() -> Self {
        Metrics {
            sent: 0,
            responses: 0,
            unanswered: 0,
            interrupted_unsent: 0,
            retried: 0,
            succeeded: 0,
            status_failed: 0,
            shed: 0,
            dropped: 0,
            late: 0,
            late_dispatched: 0,
            bytes_sent: 0,
            bytes_received: 0,
            connections_opened: 0,
            status_counts: Vec::new(),
            failure_counts: [0; FailureClass::COUNT],
            latency: LatencyHistogram::new(),
            latency_success: LatencyHistogram::new(),
            service_time: LatencyHistogram::new(),
            send_lag: LatencyHistogram::new(),
            first_byte: LatencyHistogram::new(),
            first_event: LatencyHistogram::new(),
            event_gap: LatencyHistogram::new(),
            stream_duration: LatencyHistogram::new(),
            events_per_stream: LatencyHistogram::new(),
            streams: 0,
            empty_streams: 0,
            events: 0,
            ttft: LatencyHistogram::new(),
            itl: LatencyHistogram::new(),
            tpot: LatencyHistogram::new(),
            tokens_per_stream: LatencyHistogram::new(),
            token_streams: 0,
            output_tokens: 0,
            usage_streams: 0,
            good: 0,
        }
    }

    /// record_sent counts one request fully written `lag_ns` after its intended time.
    #[inline]
    pub fn record_sent(&mut self, bytes: usize, lag_ns: u64, open_model: bool) {
        self.sent += 1;
        self.bytes_sent += bytes as u64;
        if open_model {
            self.send_lag.record(lag_ns);
            if lag_ns > LATE_THRESHOLD_NS {
                self.late += 1;
            }
        }
    }

    /// record_events counts `events` events of a stream (`tokens` of them token events) that
    /// arrived `arrived_ns` (ns since the run's start) after its request's intended time
    /// `intended_ns`; `last_event_ns` and `last_token_ns` are the stream's previous event and
    /// token event (None: these are its first). Events that arrived together are apart by 0.
    #[inline]
    pub fn record_events(
        &mut self,
        (events, tokens): (u32, u32),
        intended_ns: u64,
        arrived_ns: u64,
        (last_event_ns, last_token_ns): (Option<u64>, Option<u64>),
    ) {
        record_arrivals(&mut self.first_event, &mut self.event_gap, events, intended_ns, arrived_ns, last_event_ns);
        record_arrivals(&mut self.ttft, &mut self.itl, tokens, intended_ns, arrived_ns, last_token_ns);
    }

    /// record_stream counts a complete event stream from its `stream` times.
    #[inline]
    pub fn record_stream(&mut self, stream: &StreamTimes) {
        self.streams += 1;
        self.events += u64::from(stream.events);
        match stream.first_event_ns {
            Some(first) if stream.events > 0 => {
                self.events_per_stream.record_count(u64::from(stream.events));
                self.stream_duration.record(stream.ended_ns.saturating_sub(first));
            }
            _ => self.empty_streams += 1,
        }
        if stream.first_token_ns.is_none() {
            return;
        }
        let tokens = stream.output_tokens();
        self.token_streams += 1;
        self.usage_streams += u64::from(stream.usage().is_some());
        self.output_tokens += u64::from(tokens);
        self.tokens_per_stream.record_count(u64::from(tokens));
        if let Some(tpot) = stream.tpot_ns() {
            self.tpot.record(tpot);
        }
    }

    /// record_response counts a complete response and its latencies (nanoseconds from the
    /// intended and from the actual send time).
    #[inline]
    pub fn record_response(&mut self, status: u16, latency_ns: u64, service_ns: u64) {
        self.responses += 1;
        self.count_status(if status < STATUS_LIMIT { status } else { 0 }, 1);
        self.latency.record(latency_ns);
        self.service_time.record(service_ns);
        if is_failure_status(status) {
            self.status_failed += 1;
            if is_shed_status(status) {
                self.shed += 1;
            }
        } else {
            self.succeeded += 1;
            self.latency_success.record(latency_ns);
        }
    }

    /// record_failure counts a request that ended without a response; `sent` says whether
    /// it had been completely written (then it is unanswered, or interrupted after it was
    /// sent). Timeouts also enter the latency histogram at the time they fired, so a stall
    /// is never hidden from it.
    #[inline]
    pub fn record_failure(&mut self, class: FailureClass, latency_ns: Option<u64>, sent: bool) {
        self.failure_counts[class.index()] += 1;
        match (class, sent) {
            (FailureClass::Interrupted, false) => self.interrupted_unsent += 1,
            (FailureClass::Interrupted, true) | (_, false) => {}
            (_, true) => self.unanswered += 1,
        }
        // A timeout, of the request or of a stalled stream, took at least this long: it is a
        // latency (a lower bound), as k6 and wrk2 count it.
        if let (FailureClass::RequestTimeout | FailureClass::StreamIdleTimeout, Some(ns)) = (class, latency_ns) {
            self.latency.record(ns);
        }
    }

    /// count_status adds `n` responses with status `code`.
    #[inline]
    fn count_status(&mut self, code: u16, n: u64) {
        match self.status_counts.iter_mut().find(|(c, _)| *c == code) {
            Some((_, count)) => *count += n,
            None => self.status_counts.push((code, n)),
        }
    }

    /// failures counts failed requests: 4xx/5xx responses plus every failure class but
    /// `interrupted` (those are reported on their own, neither failed nor succeeded).
    pub fn failures(&self) -> u64 {
        let classes: u64 = FailureClass::ALL
            .iter()
            .filter(|c| **c != FailureClass::Interrupted)
            .map(|c| self.failure_counts[c.index()])
            .sum();
        self.status_failed + classes
    }

    /// failure_count returns the count for one class.
    pub fn failure_count(&self, class: FailureClass) -> u64 {
        self.failure_counts[class.index()]
    }

    /// add merges another thread's metrics into these.
    pub fn add(&mut self, other: &Metrics) {
        self.sent += other.sent;
        self.responses += other.responses;
        self.unanswered += other.unanswered;
        self.interrupted_unsent += other.interrupted_unsent;
        self.retried += other.retried;
        self.succeeded += other.succeeded;
        self.status_failed += other.status_failed;
        self.shed += other.shed;
        self.dropped += other.dropped;
        self.late += other.late;
        self.late_dispatched += other.late_dispatched;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.connections_opened += other.connections_opened;
        for &(code, n) in &other.status_counts {
            self.count_status(code, n);
        }
        for (mine, theirs) in self.failure_counts.iter_mut().zip(&other.failure_counts) {
            *mine += theirs;
        }
        self.latency.add(&other.latency);
        self.latency_success.add(&other.latency_success);
        self.service_time.add(&other.service_time);
        self.send_lag.add(&other.send_lag);
        self.first_byte.add(&other.first_byte);
        self.first_event.add(&other.first_event);
        self.event_gap.add(&other.event_gap);
        self.stream_duration.add(&other.stream_duration);
        self.events_per_stream.add(&other.events_per_stream);
        self.streams += other.streams;
        self.empty_streams += other.empty_streams;
        self.events += other.events;
        self.ttft.add(&other.ttft);
        self.itl.add(&other.itl);
        self.tpot.add(&other.tpot);
        self.tokens_per_stream.add(&other.tokens_per_stream);
        self.token_streams += other.token_streams;
        self.output_tokens += other.output_tokens;
        self.usage_streams += other.usage_streams;
        self.good += other.good;
    }

    /// reset zeroes everything and gives the histograms' memory back.
    pub fn reset(&mut self) {
        self.sent = 0;
        self.responses = 0;
        self.unanswered = 0;
        self.interrupted_unsent = 0;
        self.retried = 0;
        self.succeeded = 0;
        self.status_failed = 0;
        self.shed = 0;
        self.dropped = 0;
        self.late = 0;
        self.late_dispatched = 0;
        self.bytes_sent = 0;
        self.bytes_received = 0;
        self.connections_opened = 0;
        self.status_counts = Vec::new();
        self.failure_counts = [0; FailureClass::COUNT];
        self.latency.reset();
        self.latency_success.reset();
        self.service_time.reset();
        self.send_lag.reset();
        self.first_byte.reset();
        self.first_event.reset();
        self.event_gap.reset();
        self.stream_duration.reset();
        self.events_per_stream.reset();
        self.streams = 0;
        self.empty_streams = 0;
        self.events = 0;
        self.ttft.reset();
        self.itl.reset();
        self.tpot.reset();
        self.tokens_per_stream.reset();
        self.token_streams = 0;
        self.output_tokens = 0;
        self.usage_streams = 0;
        self.good = 0;
    }

    /// counts reduces these metrics to the serializable counts reports use.
    pub fn counts(&self) -> Counts {
        let status_codes = self
            .status_counts
            .iter()
            .map(|&(code, n)| (if code == 0 { "other".to_string() } else { code.to_string() }, n))
            .collect();
        let failure_classes = FailureClass::ALL
            .iter()
            .filter(|c| self.failure_count(**c) > 0)
            .map(|c| (c.name().to_string(), self.failure_count(*c)))
            .collect();
        let failed = self.failures();
        let interrupted = self.failure_count(FailureClass::Interrupted);
        // Every request that ended, cut off ones included: a run cut short never looks
        // healthier than it was.
        let ended = self.succeeded + failed + interrupted;
        let rate = |n: u64| if ended == 0 { 0.0 } else { n as f64 / ended as f64 };
        Counts {
            success_rate: rate(self.succeeded),
            failure_rate: rate(failed + interrupted),
            sent: self.sent,
            responses: self.responses,
            unanswered: self.unanswered,
            succeeded: self.succeeded,
            failed,
            shed: self.shed,
            timed_out: self.failure_count(FailureClass::RequestTimeout),
            interrupted,
            interrupted_unsent: self.interrupted_unsent,
            retried: self.retried,
            dropped: self.dropped,
            late: self.late,
            late_dispatched: self.late_dispatched,
            bytes_sent: self.bytes_sent,
            bytes_received: self.bytes_received,
            connections_opened: self.connections_opened,
            streams: self.streams,
            empty_streams: self.empty_streams,
            events: self.events,
            events_per_stream: self.events_per_stream.count_summary(),
            token_streams: self.token_streams,
            output_tokens: self.output_tokens,
            usage_streams: self.usage_streams,
            tokens_per_stream: self.tokens_per_stream.count_summary(),
            good: self.good,
            status_codes,
            failure_classes,
        }
    }

    /// latency_summaries returns the summaries of the four histograms, each with the
    /// `extra` percentiles (the plan's `percentiles`).
    pub fn latency_summaries(&self, extra: &[f64]) -> LatencySummaries {
        LatencySummaries {
            all: self.latency.summary(extra),
            success: self.latency_success.summary(extra),
            service_time: self.service_time.summary(extra),
            send_lag: self.send_lag.summary(extra),
            first_byte: self.first_byte.summary(extra),
            first_event: self.first_event.summary(extra),
            event_gap: self.event_gap.summary(extra),
            stream_duration: self.stream_duration.summary(extra),
            ttft: self.ttft.summary(extra),
            itl: self.itl.summary(extra),
            tpot: self.tpot.summary(extra),
        }
    }
}

/// ScenarioCounters count one scenario's iterations and connections on one thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioCounters {
    /// iterations_started counts iterations begun.
    pub iterations_started: u64,
    /// iterations_completed counts iterations that ran all their steps.
    pub iterations_completed: u64,
    /// iterations_dropped counts open-model iterations never started: all `max_vus` were busy.
    pub iterations_dropped: u64,
    /// iterations_dispatched_late counts open-model iterations taken off the schedule more than
    /// [`LATE_THRESHOLD_NS`] after they were due (and not dropped): the worker itself was late.
    pub iterations_dispatched_late: u64,
    /// iterations_interrupted counts iterations cut short by the end of the run.
    pub iterations_interrupted: u64,
    /// iterations_aborted counts iterations ended early because a capture found nothing
    /// (included in completed: they ran to their end, which came early).
    pub iterations_aborted: u64,
    /// connections_opened counts connections established for this scenario.
    pub connections_opened: u64,
}

impl ScenarioCounters {
    /// add merges another thread's counters into these.
    pub fn add(&mut self, other: &ScenarioCounters) {
        self.iterations_started += other.iterations_started;
        self.iterations_completed += other.iterations_completed;
        self.iterations_dropped += other.iterations_dropped;
        self.iterations_dispatched_late += other.iterations_dispatched_late;
        self.iterations_interrupted += other.iterations_interrupted;
        self.iterations_aborted += other.iterations_aborted;
        self.connections_opened += other.connections_opened;
    }
}

/// MetricsShape is how many of each thing a run measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MetricsShape {
    /// slots is the number of (scenario, tag) slots.
    pub slots: usize,
    /// scenarios is the number of scenarios.
    pub scenarios: usize,
    /// checks is the number of checks.
    pub checks: usize,
    /// captures is the number of captures.
    pub captures: usize,
}

/// ThreadMetrics are one thread's measurements for one interval: a [`Metrics`] per slot
/// (scenario and tag) and counters per scenario.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct ThreadMetrics {
    /// slots are the request metrics of each slot.
    pub slots: Vec<Metrics>,
    /// scenarios are the iteration counters of each scenario.
    pub scenarios: Vec<ScenarioCounters>,
    /// checks count passes and fails of each check (plan-wide index).
    pub checks: Vec<Tally>,
    /// captures count values found and missing of each capture (plan-wide index).
    pub captures: Vec<Tally>,
    /// http2 are the thread's HTTP/2 connection and stream figures.
    #[serde(default)]
    pub http2: Http2Counters,
}

/// Tally counts the outcomes of a check (passed/failed) or a capture (found/missing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Tally {
    /// yes counts passes (checks) or values found (captures).
    pub yes: u64,
    /// no counts fails (checks) or values missing (captures).
    pub no: u64,
    /// truncated counts the outcomes (of either kind) decided on a body longer than what is
    /// kept for checks and captures, which saw only its beginning.
    #[serde(default)]
    pub truncated: u64,
}

impl Tally {
    /// record counts one outcome.
    #[inline]
    pub(crate) fn record(&mut self, outcome: bool) {
        if outcome {
            self.yes += 1;
        } else {
            self.no += 1;
        }
    }

    /// record_seen counts one outcome decided on a response body, noting whether the body
    /// seen was cut at the retention limit.
    #[inline]
    pub(crate) fn record_seen(&mut self, outcome: bool, truncated: bool) {
        self.record(outcome);
        self.truncated += u64::from(truncated);
    }
}

/// Http2Counters are one thread's HTTP/2 connection and stream figures (zero over HTTP/1.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Http2Counters {
    /// streams counts the streams opened (requests handed to h2).
    pub streams: u64,
    /// concurrent_sum adds up, over the streams opened, the streams in flight on its
    /// connection when each opened (itself included): / streams = the mean multiplexing.
    pub concurrent_sum: u64,
    /// concurrent_max is the most streams in flight on one connection at once.
    pub concurrent_max: u64,
    /// streams_per_connection_max is the most streams one connection carried in its life.
    pub streams_per_connection_max: u64,
    /// goaways counts the connections the server's GOAWAY closed to new streams.
    pub goaways: u64,
    /// server_max_streams is the lowest SETTINGS_MAX_CONCURRENT_STREAMS a server announced
    /// (0: none announced).
    pub server_max_streams: u64,
}

impl Http2Counters {
    /// record_stream counts a stream opened with `concurrent` in flight on its connection
    /// (itself included), the `nth` stream that connection carried.
    #[inline]
    pub(crate) fn record_stream(&mut self, concurrent: u64, nth: u64) {
        self.streams += 1;
        self.concurrent_sum += concurrent;
        self.concurrent_max = self.concurrent_max.max(concurrent);
        self.streams_per_connection_max = self.streams_per_connection_max.max(nth);
    }

    /// record_server_max notes a server's SETTINGS_MAX_CONCURRENT_STREAMS.
    #[inline]
    pub(crate) fn record_server_max(&mut self, max: u64) {
        self.server_max_streams = lowest_announced(self.server_max_streams, max);
    }

    /// add merges another thread's (or interval's) counters into these.
    pub(crate) fn add(&mut self, other: &Http2Counters) {
        self.streams += other.streams;
        self.concurrent_sum += other.concurrent_sum;
        self.concurrent_max = self.concurrent_max.max(other.concurrent_max);
        self.streams_per_connection_max = self.streams_per_connection_max.max(other.streams_per_connection_max);
        self.goaways += other.goaways;
        self.server_max_streams = lowest_announced(self.server_max_streams, other.server_max_streams);
    }
}

/// lowest_announced is the lower of two announced limits, 0 standing for none announced.
fn lowest_announced(a: u64, b: u64) -> u64 {
    match (a, b) {
        (0, x) | (x, 0) => x,
        (a, b) => a.min(b),
    }
}

impl ThreadMetrics {
    /// new returns zeroed metrics for the given numbers of slots, scenarios, checks and captures.
    pub(crate) fn new(shape: MetricsShape) -> Self {
        ThreadMetrics {
            slots: (0..shape.slots).map(|_| Metrics::new()).collect(),
            scenarios: vec![ScenarioCounters::default(); shape.scenarios],
            checks: vec![Tally::default(); shape.checks],
            captures: vec![Tally::default(); shape.captures],
            http2: Http2Counters::default(),
        }
    }

    /// add merges another thread's metrics into these (same shape).
    pub(crate) fn add(&mut self, other: &ThreadMetrics) {
        for (mine, theirs) in self.slots.iter_mut().zip(&other.slots) {
            mine.add(theirs);
        }
        for (mine, theirs) in self.scenarios.iter_mut().zip(&other.scenarios) {
            mine.add(theirs);
        }
        for (mine, theirs) in
            self.checks.iter_mut().zip(&other.checks).chain(self.captures.iter_mut().zip(&other.captures))
        {
            mine.yes += theirs.yes;
            mine.no += theirs.no;
            mine.truncated += theirs.truncated;
        }
        self.http2.add(&other.http2);
    }

    /// reset zeroes everything and gives the histograms' memory back.
    pub(crate) fn reset(&mut self) {
        self.slots.iter_mut().for_each(Metrics::reset);
        self.scenarios.iter_mut().for_each(|c| *c = ScenarioCounters::default());
        self.checks.iter_mut().chain(self.captures.iter_mut()).for_each(|t| *t = Tally::default());
        self.http2 = Http2Counters::default();
    }

    /// merge_into adds the slots selected by `keep` into `out`, and the iteration-level
    /// counts (dropped iterations, connections) of the scenarios selected by `scenario`.
    pub(crate) fn merge_into(&self, out: &mut Metrics, keep: impl Fn(usize) -> bool, scenario: impl Fn(usize) -> bool) {
        for (i, slot) in self.slots.iter().enumerate() {
            if keep(i) {
                out.add(slot);
            }
        }
        for (i, counters) in self.scenarios.iter().enumerate() {
            if scenario(i) {
                out.dropped += counters.iterations_dropped;
                out.connections_opened += counters.connections_opened;
            }
        }
    }
}

/// Counts are the serializable counters of a run or an interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// sent counts requests completely written on an established connection (for TLS,
    /// handshaken); a request answered before it was completely written (e.g. 413) counts
    /// too; a request the server refused unprocessed and surge sent again counts once per
    /// send. sent = responses + unanswered + retried + interrupted − interrupted_unsent.
    pub sent: u64,
    /// responses counts complete responses of any status.
    pub responses: u64,
    /// unanswered counts requests sent whose connection then failed before a complete
    /// response (included in failed, by class): the server may have received them or not,
    /// so its own count lies between responses and sent.
    pub unanswered: u64,
    /// succeeded counts responses with status < 400.
    pub succeeded: u64,
    /// failed counts 4xx/5xx responses plus requests that failed without a response.
    pub failed: u64,
    /// shed counts 429/503 responses (included in failed).
    pub shed: u64,
    /// timed_out counts requests that hit the timeout (included in failed).
    pub timed_out: u64,
    /// interrupted counts requests cut off by the end of the run or of their scenario
    /// (not in failed; in failure_rate).
    pub interrupted: u64,
    /// interrupted_unsent counts the interrupted requests that were still being written
    /// (not in sent).
    pub interrupted_unsent: u64,
    /// retried counts sends the server refused without processing them (HTTP/2: a stream
    /// above its GOAWAY's last stream id, or reset with REFUSED_STREAM), whose request was
    /// then sent again on another connection (once; a second refusal is a failure).
    #[serde(default)]
    pub retried: u64,
    /// dropped counts scheduled requests never sent: the in-flight limit was reached.
    pub dropped: u64,
    /// late counts requests sent more than 1 ms after their intended time.
    pub late: u64,
    /// late_dispatched counts requests the generator took off its schedule more than 1 ms after
    /// their intended time (its own lateness); `late` − `late_dispatched` waited for a connection.
    pub late_dispatched: u64,
    /// bytes_sent counts request bytes written.
    pub bytes_sent: u64,
    /// bytes_received counts response bytes read.
    pub bytes_received: u64,
    /// connections_opened counts connections established.
    pub connections_opened: u64,
    /// streams counts complete `text/event-stream` responses.
    #[serde(default)]
    pub streams: u64,
    /// empty_streams counts the complete event streams without an event.
    #[serde(default)]
    pub empty_streams: u64,
    /// events counts the events of complete event streams (the `[DONE]` sentinel excluded).
    #[serde(default)]
    pub events: u64,
    /// events_per_stream summarizes the events of each complete stream that had any.
    #[serde(default)]
    pub events_per_stream: CountSummary,
    /// token_streams counts the complete event streams with output tokens.
    #[serde(default)]
    pub token_streams: u64,
    /// output_tokens counts their output tokens (`usage` where sent, else token events).
    #[serde(default)]
    pub output_tokens: u64,
    /// usage_streams counts the token streams whose count came from their `usage`.
    #[serde(default)]
    pub usage_streams: u64,
    /// tokens_per_stream summarizes the output tokens of each token stream.
    #[serde(default)]
    pub tokens_per_stream: CountSummary,
    /// good counts the responses that met every goodput bound (0 without bounds).
    #[serde(default)]
    pub good: u64,
    /// status_codes counts responses per status code.
    pub status_codes: BTreeMap<String, u64>,
    /// failure_classes counts failures per class name.
    pub failure_classes: BTreeMap<String, u64>,
    /// success_rate is succeeded / (succeeded + failed + interrupted), 0 when nothing ended.
    pub success_rate: f64,
    /// failure_rate is (failed + interrupted) / (succeeded + failed + interrupted), 0 when
    /// nothing ended: requests cut off count against the run.
    pub failure_rate: f64,
}

/// LatencySummaries holds the summaries of a run's or an interval's histograms.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummaries {
    /// all: every response and timeout, from the intended send time.
    pub all: LatencySummary,
    /// success: responses with status < 400, from the intended send time.
    pub success: LatencySummary,
    /// service_time: every response, from the actual send time.
    pub service_time: LatencySummary,
    /// send_lag: how late requests were written after their intended time (open model).
    pub send_lag: LatencySummary,
    /// first_byte: every response's first byte, from the intended send time.
    #[serde(default)]
    pub first_byte: LatencySummary,
    /// first_event: each event stream's first event, from the intended send time.
    #[serde(default)]
    pub first_event: LatencySummary,
    /// event_gap: the time between consecutive events of a stream.
    #[serde(default)]
    pub event_gap: LatencySummary,
    /// stream_duration: each event stream's first event to its end.
    #[serde(default)]
    pub stream_duration: LatencySummary,
    /// ttft: each token stream's first token, from the intended send time.
    #[serde(default)]
    pub ttft: LatencySummary,
    /// itl: the time between consecutive token events of a stream.
    #[serde(default)]
    pub itl: LatencySummary,
    /// tpot: each token stream's time per output token after the first.
    #[serde(default)]
    pub tpot: LatencySummary,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// stream is a token stream intended at 0 whose first token came at `ttft_ms`, ending
    /// `tpot_ms` × (tokens − 1) later.
    fn stream(ttft_ms: u64, tpot_ms: u64, tokens: u32) -> StreamTimes {
        let first = ttft_ms * 1_000_000;
        StreamTimes {
            events: tokens,
            first_event_ns: Some(first),
            tokens,
            first_token_ns: Some(first),
            usage_tokens: None,
            ended_ns: first + tpot_ms * 1_000_000 * u64::from(tokens.saturating_sub(1)),
        }
    }

    #[test]
    fn a_good_response_meets_every_bound_set() {
        let ms = 1_000_000;
        let bounds = GoodBounds { latency: None, ttft: Some(500 * ms), tpot: Some(50 * ms) };
        let latency = |s: &StreamTimes| s.ended_ns;
        for (s, good) in [
            (stream(400, 40, 10), true),
            (stream(600, 40, 10), false), // TTFT over
            (stream(400, 60, 10), false), // TPOT over
            (stream(500, 50, 10), true),  // at the bounds
            (stream(400, 900, 1), true),  // one token: no time per token to miss
        ] {
            assert_eq!(bounds.met(latency(&s), 0, Some(&s)), good, "{s:?}");
        }
        // A response with no token (not a stream, or a stream without output) misses TTFT/TPOT bounds,
        // and only those.
        assert!(!bounds.met(ms, 0, None));
        let latency_only = GoodBounds { latency: Some(100 * ms), ttft: None, tpot: None };
        assert!(latency_only.met(100 * ms, 0, None) && !latency_only.met(101 * ms, 0, None));
        // The usage's count, not the token events, divides the stream's time.
        let usage = StreamTimes { usage_tokens: Some(19), ..stream(100, 100, 10) };
        assert_eq!(usage.tpot_ns(), Some(50 * ms));
    }

    #[test]
    fn responses_are_classified_by_status() {
        let mut m = Metrics::new();
        for status in [200, 201, 304, 404, 429, 500, 503, 999] {
            m.record_response(status, 1_000_000, 900_000);
        }
        let c = m.counts();
        assert_eq!((c.responses, c.succeeded, c.failed, c.shed), (8, 3, 5, 2));
        assert_eq!(c.status_codes.get("429"), Some(&1));
        assert_eq!(c.status_codes.get("other"), Some(&1));
        assert_eq!(m.latency.len(), 8);
        assert_eq!(m.latency_success.len(), 3);
    }

    #[test]
    fn failures_count_classes_but_not_interruptions() {
        let mut m = Metrics::new();
        m.record_failure(FailureClass::RequestTimeout, Some(30_000_000_000), true);
        m.record_failure(FailureClass::ConnectionRefused, None, false);
        m.record_failure(FailureClass::Interrupted, None, true);
        let c = m.counts();
        assert_eq!((c.failed, c.timed_out, c.interrupted), (2, 1, 1));
        assert_eq!(m.latency.len(), 1, "timeouts enter the latency histogram");
    }

    #[test]
    fn written_requests_that_fail_are_unanswered_and_cut_off_ones_split_by_whether_they_were_sent() {
        let mut m = Metrics::new();
        // (class, sent): a reset after the write, a refused connect, a write that failed
        // half-way, two interruptions (one after the write, one during it).
        let cases = [
            (FailureClass::ConnectionReset, true),
            (FailureClass::ConnectionRefused, false),
            (FailureClass::ClosedBeforeResponse, false),
            (FailureClass::Interrupted, true),
            (FailureClass::Interrupted, false),
        ];
        for (class, sent) in cases {
            if sent {
                m.record_sent(10, 0, false);
            }
            m.record_failure(class, None, sent);
        }
        m.record_sent(10, 0, false);
        m.record_response(200, 1, 1);
        let c = m.counts();
        assert_eq!((c.sent, c.responses, c.unanswered, c.interrupted, c.interrupted_unsent), (3, 1, 1, 2, 1));
        assert_eq!(c.sent, c.responses + c.unanswered + c.retried + c.interrupted - c.interrupted_unsent);
        assert_eq!((c.succeeded, c.failed), (1, 3));
        // 1 success, 3 failures and 2 interruptions ended: the cut-off ones count against it.
        assert_eq!((c.success_rate, c.failure_rate), (1.0 / 6.0, 5.0 / 6.0));
    }

    #[test]
    fn add_then_reset() {
        let mut a = Metrics::new();
        let mut b = Metrics::new();
        a.record_sent(100, 0, true);
        b.record_sent(100, 2_000_000, true);
        b.record_response(200, 5, 5);
        b.dropped += 3;
        a.add(&b);
        let c = a.counts();
        assert_eq!((c.sent, c.late, c.dropped, c.bytes_sent, c.responses), (2, 1, 3, 200, 1));
        assert_eq!(a.send_lag.len(), 2);
        a.reset();
        assert_eq!(a.counts(), Counts::default());
        assert!(a.latency.is_empty() && a.send_lag.is_empty());
        assert!(a.status_counts.is_empty() && a.latency.allocated_bytes() == 0, "reset gives memory back");
    }
}
