//! report: what a worker sends to the run's aggregator (its intervals, its stop, its last
//! report). Defined here, with the aggregator that reads it, so that measure depends on no
//! worker: the workers import it from below. A report also travels between machines: a
//! generator of a distributed run forwards its workers' reports to the driver, whose
//! aggregator merges every machine's threads as a local run merges its own (`encode`,
//! `decode`: JSON, histograms in HdrHistogram's V2 compressed encoding).

use crate::measure::metrics::ThreadMetrics;
use crate::measure::window::{LoadCounts, WindowEnd};
use crate::spec::pool::PoolSpecs;
use crate::system::CpuTime;
use serde::{Deserialize, Serialize};

/// Report is what a worker sends to the run's aggregator.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Report {
    /// Interval carries one interval's metrics and gauges at its end.
    Interval {
        /// thread is the reporting worker.
        thread: usize,
        /// index is the interval's number.
        index: u64,
        /// metrics are this thread's counts and histograms for the interval.
        metrics: Box<ThreadMetrics>,
        /// open_connections is the number of connections open now.
        open_connections: u64,
        /// in_flight is the number of outstanding requests now.
        in_flight: u64,
        /// peak_concurrency is the most requests outstanding at once during the interval: in
        /// flight, or due and waiting for a connection (what connections are needed for).
        peak_concurrency: u64,
        /// active_vus is the number of VUs in an iteration now, per scenario.
        active_vus: Vec<u64>,
        /// windows are where each scenario's window ends, as far as this thread knows now.
        windows: Vec<WindowEnd>,
        /// active_until_ns is a lower bound of where the run's window will end: now while a
        /// scenario runs (or is yet to start), else the last end seen.
        active_until_ns: u64,
    },
    /// Stopped says the worker has stopped starting iterations (every scenario is draining
    /// or done): from now on its part of the run's window grows only as requests end.
    Stopped {
        /// thread is the reporting worker.
        thread: usize,
        /// active_until_ns is the latest end it has seen (its load's end, its last request's).
        active_until_ns: u64,
    },
    /// Done is the worker's last report.
    Done {
        /// thread is the reporting worker.
        thread: usize,
        /// stopped_ns is when it stopped starting iterations.
        stopped_ns: u64,
        /// stopped is, per scenario, when it stopped starting iterations (0: never started).
        stopped: Vec<u64>,
        /// windows are where each scenario's window ended on this thread.
        windows: Vec<WindowEnd>,
        /// load is, per slot, what ended within its scenario's load window on this thread.
        load: Vec<LoadCounts>,
        /// run_load is what ended on this thread before it stopped starting iterations (boxed:
        /// the one large field of the one report each thread sends once).
        run_load: Box<LoadCounts>,
        /// cpu is the thread's CPU time.
        cpu: CpuTime,
        /// waiting_s is how long the thread was runnable but waited for a core (None: unknown).
        waiting_s: Option<f64>,
        /// error is set if the worker could not run at all.
        error: Option<String>,
        /// pools are the values this thread captured into pools.
        pools: PoolSpecs,
    },
}

impl Report {
    /// thread is the reporting worker's number.
    pub(crate) fn thread(&self) -> usize {
        match self {
            Report::Interval { thread, .. } | Report::Stopped { thread, .. } | Report::Done { thread, .. } => *thread,
        }
    }

    /// renumbered is this report as worker `thread` sent it (a generator's thread `t` is the
    /// driver's thread `first + t`).
    pub(crate) fn renumbered(mut self, to: usize) -> Report {
        match &mut self {
            Report::Interval { thread, .. } | Report::Stopped { thread, .. } | Report::Done { thread, .. } => {
                *thread = to;
            }
        }
        self
    }

    /// encode is the report as it travels to another machine (JSON).
    pub(crate) fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// decode reads a report [`encode`](Self::encode) wrote.
    pub(crate) fn decode(text: &str) -> Result<Report, String> {
        serde_json::from_str(text).map_err(|e| format!("a generator's report: {e}"))
    }
}
