//! result: what a run reports: interval snapshots while it runs, a RunResult at the end.

use serde::{Deserialize, Serialize};

use crate::measure::metrics::{Counts, Http2Counters, LatencySummaries, ScenarioCounters};
pub(crate) use crate::measure::window::{Drain, Throughput};
use crate::spec::plan::GoodputBounds;
use crate::system::CpuTime;

/// RESULT_SCHEMA names the version of the result document.
pub const RESULT_SCHEMA: &str = "surge.result/1";

/// Interval is the merged snapshot of all threads for one interval of the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Interval {
    /// index counts intervals from 0.
    pub index: u64,
    /// start_s is the interval's start, in seconds since the run started.
    pub start_s: f64,
    /// end_s is the interval's end: `interval_s` after its start, except for the last,
    /// which ends with the run's window; a drain after the load shorter than half an
    /// interval joins the last interval of the load instead of making one of its own.
    pub end_s: f64,
    /// requests counts the interval's requests, responses and failures.
    pub requests: Counts,
    /// latency summarizes the interval's latency histograms.
    pub latency: LatencySummaries,
    /// responses_per_s is responses divided by the interval's length.
    pub responses_per_s: f64,
    /// successes_per_s is successful responses divided by the interval's length.
    pub successes_per_s: f64,
    /// sent_per_s is requests sent divided by the interval's length.
    pub sent_per_s: f64,
    /// target_rate_per_s is the open-model schedule's rate at the interval's middle.
    pub target_rate_per_s: Option<f64>,
    /// open_connections is the number of connections open at the interval's end.
    pub open_connections: u64,
    /// in_flight is the number of requests outstanding at the interval's end.
    pub in_flight: u64,
    /// peak_concurrency is the most requests outstanding at once during the interval: in
    /// flight, or due and waiting for a connection (an open-model request waits when every
    /// connection is busy); summed over the threads' own peaks.
    pub peak_concurrency: u64,
    /// latency_histogram is the interval's latency histogram (HdrHistogram V2, base64).
    pub latency_histogram: String,
    /// scenarios are the interval's per-scenario figures, in plan order.
    pub scenarios: Vec<ScenarioInterval>,
    /// totals are the run's cumulative figures at the interval's end, when the plan asks
    /// for them (`interval_totals`), so that thresholds can be judged while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub totals: Option<Totals>,
}

/// Totals are a run's cumulative figures so far, in the final result's shape.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Totals {
    /// duration_s is the time since the run started.
    pub duration_s: f64,
    /// requests counts all requests so far.
    pub requests: Counts,
    /// throughput is the rates so far, over the run's window so far.
    pub throughput: Throughput,
    /// latency summarizes all latencies so far.
    pub latency: LatencySummaries,
    /// scenarios are the per-scenario totals.
    pub scenarios: Vec<ScenarioResult>,
    /// tags are the per-tag totals.
    pub tags: Vec<TagResult>,
    /// checks are the checks' outcomes so far.
    pub checks: Vec<CheckResult>,
}

/// ScenarioInterval is one scenario's share of an interval.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScenarioInterval {
    /// name is the scenario's name.
    pub name: String,
    /// iterations counts the interval's iterations.
    pub iterations: ScenarioCounters,
    /// active_vus is the number of VUs inside an iteration at the interval's end.
    pub active_vus: u64,
    /// responses_per_s is the scenario's responses over the interval's length.
    pub responses_per_s: f64,
}

/// ScenarioResult is one scenario's totals.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// name is the scenario's name.
    pub name: String,
    /// duration_s is the scenario's load window: from its start until it stopped starting
    /// iterations.
    pub duration_s: f64,
    /// iterations counts the scenario's iterations.
    pub iterations: ScenarioCounters,
    /// requests counts the scenario's requests.
    pub requests: Counts,
    /// throughput is the scenario's rates over its load window (`throughput.window_s`),
    /// counting what ended in it.
    pub throughput: Throughput,
    /// drain is what ended after the scenario's load window, and how long that took.
    pub drain: Drain,
    /// latency summarizes the scenario's latencies.
    pub latency: LatencySummaries,
}

/// CheckResult counts one check's outcomes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CheckResult {
    /// name is the check's name.
    pub name: String,
    /// scenario is the scenario's name.
    pub scenario: String,
    /// tag is the tag of the step it checks.
    pub tag: String,
    /// passes counts responses that passed.
    pub passes: u64,
    /// fails counts responses (or failed requests) that did not.
    pub fails: u64,
    /// truncated counts the outcomes decided on a body longer than the 1 MiB kept for checks
    /// and captures (only its beginning was seen); 0 for checks that do not read the body.
    #[serde(default)]
    pub truncated: u64,
}

/// CaptureResult counts one capture's outcomes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaptureResult {
    /// name is the variable (or pool) the capture fills.
    pub name: String,
    /// scenario is the scenario's name.
    pub scenario: String,
    /// tag is the tag of the step it captures from.
    pub tag: String,
    /// found counts values captured.
    pub found: u64,
    /// missing counts responses where the value was not found (the iteration ended there).
    pub missing: u64,
    /// truncated counts the outcomes decided on a body longer than the 1 MiB kept for checks
    /// and captures (only its beginning was seen); 0 for header captures.
    #[serde(default)]
    pub truncated: u64,
}

/// TagResult is the totals of one tag within one scenario (a per-endpoint breakdown).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TagResult {
    /// tag is the steps' tag.
    pub tag: String,
    /// scenario is the scenario's name.
    pub scenario: String,
    /// requests counts the tag's requests.
    pub requests: Counts,
    /// throughput is the tag's rates over its scenario's window.
    pub throughput: Throughput,
    /// latency summarizes the tag's latencies.
    pub latency: LatencySummaries,
}

/// StopReason says why the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Duration: the planned duration elapsed.
    Duration,
    /// Iterations: the planned number of requests was sent.
    Iterations,
    /// Interrupted: the caller cancelled the run (Ctrl-C).
    Interrupted,
    /// Aborted: the observer ended the run on its results (a threshold's abort_on_fail).
    Aborted,
}

/// Histograms are the run's full histograms (HdrHistogram V2 compressed, base64).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Histograms {
    /// latency: every response and timeout, from the intended send time.
    pub latency: String,
    /// latency_success: successful responses, from the intended send time.
    pub latency_success: String,
    /// service_time: every response, from the actual send time.
    pub service_time: String,
}

/// Generator describes the load generator's own resource use, to tell when it, not the
/// target, was the bottleneck.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Generator {
    /// cpu is the whole process's CPU time during the run.
    pub cpu: CpuTime,
    /// cpu_us_per_request is process CPU time per request sent, in microseconds.
    pub cpu_us_per_request: f64,
    /// thread_busy is each worker thread's CPU time over the elapsed time (1.0 = saturated).
    pub thread_busy: Vec<f64>,
    /// thread_waiting is each worker thread's time runnable but waiting for a core (other
    /// processes held it) over the elapsed time; empty where the kernel does not say.
    pub thread_waiting: Vec<f64>,
    /// max_rss_kib is the process's peak resident set size.
    pub max_rss_kib: u64,
    /// open_file_limit is the soft RLIMIT_NOFILE in force during the run.
    pub open_file_limit: u64,
}

/// Http2Summary is how the run's HTTP/2 connections carried its requests.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Http2Summary {
    /// connections counts the HTTP/2 connections established (`requests.connections_opened`).
    pub connections: u64,
    /// streams counts the streams opened, one per request sent.
    pub streams: u64,
    /// streams_per_connection_mean is streams / connections.
    pub streams_per_connection_mean: f64,
    /// streams_per_connection_max is the most streams one connection carried in its life.
    pub streams_per_connection_max: u64,
    /// concurrent_streams_mean is the mean, over the streams opened, of the streams in flight
    /// on its connection when each opened (itself included): the multiplexing achieved.
    pub concurrent_streams_mean: f64,
    /// concurrent_streams_max is the most streams in flight on one connection at once.
    pub concurrent_streams_max: u64,
    /// goaways counts the connections the server's GOAWAY closed to new streams.
    pub goaways: u64,
    /// server_max_concurrent_streams is the lowest SETTINGS_MAX_CONCURRENT_STREAMS a server
    /// announced (None: none announced, no limit).
    pub server_max_concurrent_streams: Option<u64>,
}

impl Http2Summary {
    /// from_counters summarizes a run's HTTP/2 counters over its `connections` established.
    pub(crate) fn from_counters(counters: &Http2Counters, connections: u64) -> Http2Summary {
        let per = |n: u64, of: u64| if of > 0 { n as f64 / of as f64 } else { 0.0 };
        Http2Summary {
            connections,
            streams: counters.streams,
            streams_per_connection_mean: per(counters.streams, connections),
            streams_per_connection_max: counters.streams_per_connection_max,
            concurrent_streams_mean: per(counters.concurrent_sum, counters.streams),
            concurrent_streams_max: counters.concurrent_max,
            goaways: counters.goaways,
            server_max_concurrent_streams: (counters.server_max_streams > 0).then_some(counters.server_max_streams),
        }
    }
}

/// RunResult is everything a run measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    /// schema is [`RESULT_SCHEMA`].
    pub schema: String,
    /// url is the target URL.
    pub url: String,
    /// addresses are the addresses the host resolved to (the first one is used).
    pub addresses: Vec<String>,
    /// started_at_unix_s is the wall-clock start time.
    pub started_at_unix_s: f64,
    /// duration_s is the load window: from start until no new request was issued.
    pub duration_s: f64,
    /// elapsed_s is the whole run as the engine ran it, thread start-up and shut-down
    /// included.
    pub elapsed_s: f64,
    /// threads is the number of event-loop threads.
    pub threads: usize,
    /// stop_reason says why the run ended.
    pub stop_reason: StopReason,
    /// requests counts the run's requests, responses and failures.
    pub requests: Counts,
    /// latency summarizes the total histograms.
    pub latency: LatencySummaries,
    /// throughput holds the run's rates, all over its load window (`throughput.window_s`:
    /// from the first scenario's start until the load stopped), counting what ended in it.
    pub throughput: Throughput,
    /// drain is what ended after the load window (requests in flight finishing, failing or
    /// cut off), and how long it took: counted in `requests`, never in the rates.
    pub drain: Drain,
    /// histograms are the full histograms for logs and later merging.
    pub histograms: Histograms,
    /// peak_open_connections is the most connections open at an interval end.
    pub peak_open_connections: u64,
    /// peak_concurrency is the highest interval `peak_concurrency`: the most requests
    /// outstanding at once (in flight or waiting for a connection), which is what the
    /// connections opened were needed for.
    pub peak_concurrency: u64,
    /// generator is the load generator's own resource use.
    pub generator: Generator,
    /// scenarios are the per-scenario totals, in plan order.
    pub scenarios: Vec<ScenarioResult>,
    /// tags are the per-tag totals, one per scenario and tag.
    pub tags: Vec<TagResult>,
    /// checks are the outcomes of every check, in plan order.
    pub checks: Vec<CheckResult>,
    /// captures are the outcomes of every capture, in plan order.
    pub captures: Vec<CaptureResult>,
    /// pools are the values captured into each pool during the run (a setup phase's
    /// results, handed to the main run).
    pub pools: std::collections::BTreeMap<String, Vec<String>>,
    /// intervals are the per-interval snapshots, in order.
    pub intervals: Vec<Interval>,
    /// notes are things the user should know (limits raised, generator saturated, …).
    pub notes: Vec<String>,
    /// goodput is the plan's per-request goodput bounds, which `requests.good` and
    /// `throughput.good_per_s` count against (absent: goodput not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<GoodputBounds>,
    /// http2 is how HTTP/2 connections carried the requests (absent over HTTP/1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2: Option<Http2Summary>,
}
