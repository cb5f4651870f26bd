//! Shared: the state every server thread and connection sees.
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use crate::counters::{Counts, ThreadCounters};
use crate::model::ServerModel;
use crate::plan::TargetPlan;
use crate::store::TaskStore;
use crate::worker_gate::WorkerGate;

/// Shared holds the model, the task store and the counters of all threads; it is built once
/// per [`crate::serve`] call and dropped when it returns.
#[derive(Debug)]
pub struct Shared {
    /// plan is the validated configuration being served.
    pub plan: TargetPlan,
    /// model decides what happens to requests on modeled routes.
    pub model: ServerModel,
    /// store holds the Task API's tasks.
    pub store: TaskStore,
    /// counters has one entry per server thread, written only by that thread.
    pub counters: Vec<Arc<ThreadCounters>>,
    /// gate gives each connection a worker of its own (`--thread-per-connection`).
    pub gate: Option<WorkerGate>,
    /// open_connections is the number of connections being served now.
    pub open_connections: AtomicUsize,
    /// started is when serving began.
    pub started: Instant,
    baseline: Mutex<Counts>,
}

impl Shared {
    /// new builds the shared state for `plan` with one counter set per thread.
    pub fn new(plan: TargetPlan) -> Self {
        Self {
            model: ServerModel::new(&plan),
            store: TaskStore::new(plan.shards),
            counters: (0..plan.threads).map(|_| Arc::default()).collect(),
            gate: plan
                .service
                .as_ref()
                .filter(|s| s.thread_per_connection)
                .map(|s| WorkerGate::new(s.workers, s.queue)),
            open_connections: AtomicUsize::new(0),
            started: Instant::now(),
            baseline: Mutex::new(Counts::default()),
            plan,
        }
    }

    /// totals sums every thread's counters since the server started.
    pub fn totals(&self) -> Counts {
        let mut sum = Counts::default();
        for c in &self.counters {
            sum.add(&c.snapshot());
        }
        sum
    }

    /// since_reset is the counts since the last [`Shared::reset`] (or start).
    pub fn since_reset(&self) -> Counts {
        let baseline = self.baseline.lock().unwrap_or_else(PoisonError::into_inner).clone();
        self.totals().since(&baseline)
    }

    /// reset makes every count in `/stats` and `/stats/tasks` start again from zero (the
    /// totals in the final summary are not affected).
    pub fn reset(&self) {
        let totals = self.totals();
        *self.baseline.lock().unwrap_or_else(PoisonError::into_inner) = totals;
        self.store.reset_reads();
    }
}
