//! Shared: the state every server thread and connection sees.
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use crate::config::plan::TargetPlan;
use crate::model::cpu::CpuPool;
use crate::model::llm::LlmModel;
use crate::model::worker_gate::WorkerGate;
use crate::model::ServerModel;
use crate::server::store::TaskStore;
use crate::stats::counters::{Counts, ThreadCounters};

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
    /// cpu is the threads that burn service time as CPU (`--service-cpu`).
    pub cpu: Option<CpuPool>,
    /// llm is the inference routes' batch, shared by every thread.
    pub llm: LlmModel,
    /// open_connections is the number of connections being served now.
    pub open_connections: AtomicUsize,
    /// started is when serving began.
    pub started: Instant,
    baseline: Mutex<Counts>,
}

impl Shared {
    /// new builds the shared state for `plan` with one counter set per thread, starting the
    /// service threads of `--service-cpu` (an error if the system refuses one).
    pub fn new(plan: TargetPlan) -> std::io::Result<Self> {
        let cpu = match plan.service.as_ref().filter(|s| s.service_cpu) {
            // With a worker per connection the gate's queue is the one bounded: at most one
            // request per worker is ever burning, so the threads never queue.
            Some(s) => Some(CpuPool::new(s.workers, if s.thread_per_connection { None } else { s.queue })?),
            None => None,
        };
        let hold_ns = plan.lock_hold.map_or(0, crate::model::service_time::nanos_of);
        Ok(Self {
            model: ServerModel::new(&plan),
            store: TaskStore::with_hold(plan.shards, hold_ns),
            counters: (0..plan.threads).map(|_| Arc::default()).collect(),
            gate: plan
                .service
                .as_ref()
                .filter(|s| s.thread_per_connection)
                .map(|s| WorkerGate::new(s.workers, s.queue)),
            cpu,
            llm: LlmModel::new(&plan.llm),
            open_connections: AtomicUsize::new(0),
            started: Instant::now(),
            baseline: Mutex::new(Counts::default()),
            plan,
        })
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
        if let Some(cpu) = &self.cpu {
            cpu.reset();
        }
    }
}
