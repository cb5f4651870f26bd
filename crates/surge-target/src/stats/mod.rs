//! stats: what the server counted (`counters`), the `/stats` and `/stats/tasks` documents, and the
//! `summary` one serve call returns.
//!
//! The `/stats` and `/stats/tasks` documents: what the server received, answered and
//! rejected, and how often each task was read.

pub mod counters;
pub mod summary;

use std::fmt::Write;
use std::sync::atomic::Ordering;

use serde_json::{json, Map, Value};

use crate::model::cpu::CpuPool;
use crate::server::shared::Shared;
use crate::stats::counters::{status_name, Counts, Route, STATUS_COUNT};

/// render is the `/stats` JSON. Counts start at the last `POST /stats/reset`:
/// `received` is every request parsed on every route (this `/stats` request included, see
/// `received_by_route`), `responses` is responses written by route and status, `by_status`
/// the same summed over routes, `rejected` the 429s and 503s; `queue_depth` and
/// `busy_workers` are the service model now (with a worker per connection, `busy_workers` is
/// the workers held and `connections.waiting` the connections waiting for one; with
/// `--service-cpu`, the burns waiting for a thread and the threads burning);
/// `service_cpu_s` is the CPU seconds the service threads burned by their own clocks, and
/// `store_capacity_rps` the store's locks' bound with `--lock-hold`; `llm` is the inference
/// routes' counts ([`crate::stats::counters::LlmCounts`]) with the batch now (`in_service`,
/// `waiting`) and its size.
pub fn render(shared: &Shared) -> String {
    let counts = shared.since_reset();
    let load = shared.cpu.as_ref().map_or_else(|| shared.model.load(), CpuPool::load);
    // With a worker per connection, a worker is busy for as long as a connection holds it.
    let busy_workers = shared.gate.as_ref().map_or(load.busy_workers, super::model::worker_gate::WorkerGate::held);
    let service = shared.plan.service.as_ref();
    let by_status = counts.by_status();
    let rejected_429 = counts.responses_for(429);
    let rejected_503 = counts.responses_for(503);
    json!({
        "received": counts.received_total(),
        "received_by_route": received_by_route(&counts),
        "responses": responses(&counts),
        "by_status": statuses(&by_status),
        "rejected": {"429": rejected_429, "503": rejected_503, "total": rejected_429 + rejected_503},
        "queue_depth": load.queue_depth,
        "busy_workers": busy_workers,
        "workers": service.map_or(0, |s| s.workers),
        "capacity_rps": service.map(super::config::plan::ServicePlan::capacity),
        "service_cpu_s": shared.cpu.as_ref().map(super::model::cpu::CpuPool::burned_s),
        "store_capacity_rps": shared.plan.store_capacity(),
        "connections": {
            "open": shared.open_connections.load(Ordering::Relaxed),
            "accepted": counts.accepted,
            "refused": counts.refused,
            "waiting": shared.gate.as_ref().map_or(0, super::model::worker_gate::WorkerGate::waiting),
            "abandoned": counts.abandoned,
            "given_worker": counts.given_worker,
        },
        "llm": llm(&counts, shared),
        "tasks": shared.store.len(),
        "uptime_s": shared.started.elapsed().as_secs_f64(),
    })
    .to_string()
}

/// render_task_reads is the `/stats/tasks` JSON: `{"reads_by_id": {"1": 523, ...},
/// "tasks": N, "reads": total}`, where `reads_by_id` has every stored task answered `200` to
/// `GET /tasks/{id}` (or `HEAD`) since the last reset, keys in id order, and `reads` is
/// their sum. Written by hand: it can hold one entry per task.
pub fn render_task_reads(shared: &Shared) -> String {
    let reads = shared.store.reads();
    let tasks = shared.store.len();
    let mut out = String::with_capacity(48 + reads.by_id.len() * 14);
    out.push_str(r#"{"reads_by_id":{"#);
    for (i, (id, n)) in reads.by_id.iter().enumerate() {
        let comma = if i > 0 { "," } else { "" };
        let _ = write!(out, r#"{comma}"{id}":{n}"#); // writing to a String cannot fail
    }
    let _ = write!(out, r#"}},"tasks":{tasks},"reads":{}}}"#, reads.total);
    out
}

/// llm is the inference routes' counts since the reset, and the batch now.
fn llm(counts: &Counts, shared: &Shared) -> Value {
    let c = counts.llm;
    json!({
        "started": c.started,
        "completed": c.completed,
        "cancelled": c.cancelled,
        "prompt_tokens": c.prompt_tokens,
        "output_tokens": c.output_tokens,
        "in_service": shared.llm.in_service(),
        "waiting": shared.llm.waiting(),
        "batch": shared.llm.batch(),
    })
}

fn received_by_route(counts: &Counts) -> Map<String, Value> {
    Route::ALL
        .iter()
        .filter(|r| **r != Route::Invalid)
        .map(|r| (r.name().to_string(), Value::from(counts.received[*r as usize])))
        .collect()
}

fn responses(counts: &Counts) -> Map<String, Value> {
    Route::ALL
        .iter()
        .zip(&counts.responses)
        .filter(|(_, row)| row.iter().any(|&n| n > 0))
        .map(|(r, row)| (r.name().to_string(), Value::Object(statuses(row))))
        .collect()
}

/// statuses is the non-zero buckets of one status row, keyed by code.
fn statuses(row: &[u64; STATUS_COUNT]) -> Map<String, Value> {
    row.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, &n)| (status_name(i), Value::from(n))).collect()
}

/// by_status_map is the non-zero status buckets of `counts`, keyed by code (for summaries).
pub fn by_status_map(counts: &Counts) -> std::collections::BTreeMap<String, u64> {
    counts.by_status().iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, &n)| (status_name(i), n)).collect()
}
