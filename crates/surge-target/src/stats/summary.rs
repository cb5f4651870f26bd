//! TargetSummary: what one serve call did, returned when it stops.
use std::collections::BTreeMap;
use std::net::SocketAddr;

use serde::Serialize;

use crate::server::shared::Shared;
use crate::stats::by_status_map;
use crate::stats::counters::LlmCounts;

/// StopReason is why serving ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Stop: the caller's stop flag was set.
    Stop,
    /// Duration: `--duration` elapsed.
    Duration,
}

/// TargetSummary is the whole run's counts (not affected by `/stats/reset`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetSummary {
    /// address is where the server listened.
    pub address: SocketAddr,
    /// elapsed_s is how long it served, in seconds.
    pub elapsed_s: f64,
    /// received is every request parsed.
    pub received: u64,
    /// by_status is responses written, by status code ("other" for uncommon codes).
    pub by_status: BTreeMap<String, u64>,
    /// connections_accepted is connections served.
    pub connections_accepted: u64,
    /// connections_refused is connections closed at once by `--max-connections`.
    pub connections_refused: u64,
    /// connections_abandoned is connections closed by their client while waiting for a worker.
    pub connections_abandoned: u64,
    /// llm is what the inference routes did over the whole run (started − completed −
    /// cancelled were still generating when serving ended).
    pub llm: LlmCounts,
    /// tasks is the number of tasks in the store at the end.
    pub tasks: usize,
    /// stopped_by says why serving ended.
    pub stopped_by: StopReason,
}

impl TargetSummary {
    /// collect summarizes `shared` after serving on `address` ended for `stopped_by`.
    pub fn collect(shared: &Shared, address: SocketAddr, stopped_by: StopReason) -> Self {
        let totals = shared.totals();
        Self {
            address,
            elapsed_s: shared.started.elapsed().as_secs_f64(),
            received: totals.received_total(),
            by_status: by_status_map(&totals),
            connections_accepted: totals.accepted,
            connections_refused: totals.refused,
            connections_abandoned: totals.abandoned,
            llm: totals.llm,
            tasks: shared.store.len(),
            stopped_by,
        }
    }
}
