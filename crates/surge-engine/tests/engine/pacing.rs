//! Open-model pacing: sends due within the slack go out in one batch, the wait shows in the
//! send lag and the latency (never hidden), the counts stay exact, and a worker that falls
//! behind its schedule does not open a connection per late request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::target;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde_json::{json, Value};
use surge_engine::{run, NoObserver, Plan, RunResult};

fn run_open(url: &str, executor: Value, extra: Value) -> RunResult {
    let mut doc = json!({"target": {"url": url},
                         "scenarios": [{"name": "default", "executor": executor,
                                        "flow": {"sequences": [{"steps": [{"request": {"method": "GET"}}]}]}}],
                         "threads": 1});
    if let (Some(doc), Some(extra)) = (doc.as_object_mut(), extra.as_object()) {
        doc.extend(extra.clone());
    }
    let plan = Plan::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e:?}"));
    run(&plan, &mut NoObserver, Arc::new(AtomicBool::new(false))).unwrap_or_else(|e| panic!("{e}"))
}

fn received(server: &target::Server) -> u64 {
    server.stats()["received_by_route"]["GET /health"].as_u64().unwrap_or(0)
}

#[test]
fn sends_within_the_slack_wait_for_their_batch_and_the_wait_counts_in_the_latency() {
    // 200/s with a 20 ms slack: a send goes out up to 20 ms after its time, with the others
    // due by then, so the send lag spreads over (0, 20 ms] and the latency includes it.
    let server = target::Server::start("{}");
    let url = format!("http://{}/health", server.addr);
    // max_vus holds the whole run: a stalled machine (hypervisor steal) must not meet the cap
    let executor = json!({"type": "constant-arrival-rate", "rate": 200, "duration_s": 1.0, "max_vus": 200});
    let result = run_open(&url, executor, json!({"send_slack_s": 0.02}));
    let r = &result.requests;
    assert_eq!((r.sent, r.responses, r.dropped), (200, 200, 0), "{r:?}");
    assert_eq!(received(&server), 200, "the server counts every request");
    let lag = &result.latency.send_lag;
    assert!(lag.p50_ms >= 4.0, "sends wait for their batch: send lag {lag:?}");
    let all = &result.latency.all;
    assert!(
        all.p50_ms >= lag.p50_ms && all.mean_ms >= lag.mean_ms,
        "latency counts from the intended time: {all:?} vs {lag:?}"
    );
}

#[test]
fn without_slack_the_counts_are_exact_too() {
    let server = target::Server::start("{}");
    let url = format!("http://{}/health", server.addr);
    // max_vus holds the whole run in flight: a machine stalled 100 ms (a hypervisor taking a third
    // of the CPU) put 200 in flight at 2,000/s and dropped 26 at a cap of 200, which is the cap's
    // answer, not the pacing's.
    let executor = json!({"type": "constant-arrival-rate", "rate": 2000, "duration_s": 0.5, "max_vus": 1000});
    let result = run_open(&url, executor, json!({"send_slack_s": 0.0}));
    assert_eq!((result.requests.sent, result.requests.responses), (1000, 1000), "{:?}", result.requests);
    assert_eq!(received(&server), 1000);
}

#[test]
fn a_slack_out_of_range_is_refused_with_its_field() {
    for slack in [-0.001, 0.5] {
        let doc = json!({"target": {"url": "http://127.0.0.1:9/"}, "send_slack_s": slack,
                         "scenarios": [{"name": "default", "executor": {"type": "constant-vus", "vus": 1, "duration_s": 1},
                                        "flow": {"sequences": [{"steps": [{"request": {"method": "GET"}}]}]}}]});
        let errors = Plan::from_json(&doc.to_string()).err().unwrap_or_default();
        assert!(errors.iter().any(|e| e.field == "send_slack_s"), "{slack}: {errors:?}");
    }
}

#[test]
fn a_worker_behind_its_schedule_does_not_open_a_connection_per_late_request() {
    // A million requests per second is far more than one thread sends: it is behind from the
    // start. Opening a connection for every late request would take all 4,000 slots within
    // milliseconds; reusing the ones that free up, and opening at the bounded rate, keeps far
    // fewer. Over 0.2 s that bound is under 1,000 even where the thread, having caught up by
    // dropping sends at the cap, counts as on time and grows its pool by 1/64 a millisecond
    // (from 64 it doubles in ~45 ms): over 0.3 s that happened in 1 run of 6 and opened 1,600.
    let server = target::Server::start("{}");
    let url = format!("http://{}/health", server.addr);
    let executor = json!({"type": "constant-arrival-rate", "rate": 1_000_000, "duration_s": 0.2,
                          "max_vus": 4000, "pre_allocated_vus": 8});
    let result = run_open(&url, executor, json!({}));
    let r = &result.requests;
    assert!(r.sent > 0, "{r:?}");
    assert!(r.connections_opened < 1000, "opened {} connections for {} sends", r.connections_opened, r.sent);
    // Every scheduled request is either started or counted as dropped, none lost.
    let it = &result.scenarios[0].iterations;
    assert_eq!(it.iterations_started + it.iterations_dropped, 200_000, "{it:?}");
    assert_eq!(r.sent, received(&server), "{r:?}");
}

/// run_against_slow_tasks runs `rate`/s for `duration_s` against `GET /tasks` served in
/// `service`, starting from one pre-opened connection, with no slack; it returns the result
/// and the requests the target counted.
fn run_against_slow_tasks(service: &str, rate: u32, duration_s: f64) -> (RunResult, Option<u64>) {
    let server = target::Server::start(&format!(r#"{{"service_time": "{service}", "workers": 64}}"#));
    let url = format!("http://{}/tasks", server.addr);
    let executor = json!({"type": "constant-arrival-rate", "rate": rate, "duration_s": duration_s,
                          "max_vus": 500, "pre_allocated_vus": 1});
    let result = run_open(&url, executor, json!({"send_slack_s": 0.0}));
    (result, server.stats()["received_by_route"]["GET /tasks"].as_u64())
}

#[test]
fn peak_concurrency_is_what_the_connections_were_opened_for() {
    // 200/s against a 50 ms service time holds about 10 requests at once (Little's law);
    // connections are opened only as requests need them, so never more than that peak.
    let (result, received) = run_against_slow_tasks("50ms", 200, 1.0);
    let r = &result.requests;
    assert_eq!((r.sent, r.responses, r.dropped, received), (200, 200, 0, Some(200)), "{r:?}");
    assert!(result.peak_concurrency >= 10, "200/s × 50 ms: {}", result.peak_concurrency);
    assert!(
        r.connections_opened <= result.peak_concurrency,
        "opened {} for a peak of {}",
        r.connections_opened,
        result.peak_concurrency
    );
    let interval_peak = result.intervals.iter().map(|i| i.peak_concurrency).max().unwrap_or(0);
    assert_eq!(interval_peak, result.peak_concurrency);
}

#[test]
fn peak_concurrency_counts_requests_waiting_for_a_connection_up_to_the_cap() {
    // A target that never answers holds every request: 60 come due, the cap of 20 is reached
    // (in flight plus waiting) and the rest are dropped.
    let server = common::TestServer::start(common::Behavior::Silent);
    let executor = json!({"type": "constant-arrival-rate", "rate": 200, "duration_s": 0.3,
                          "max_vus": 20, "pre_allocated_vus": 1});
    let result = run_open(&server.url("/"), executor, json!({"limits": {"timeout_s": 30, "grace_period_s": 0.1}}));
    assert_eq!(result.peak_concurrency, 20, "{:?}", result.requests);
    assert_eq!(
        result.requests.dropped + result.scenarios[0].iterations.iterations_started,
        60,
        "{:?}",
        result.requests
    );
}

#[test]
fn requests_waiting_for_a_connection_at_the_end_are_sent_while_draining() {
    // 2,000/s against a 30 ms service time from one pre-opened connection: the pool grows by
    // one connection per millisecond, half the arrivals, so a backlog builds in the first 30 ms
    // and is still waiting for connections when the schedule ends. Those requests were due
    // before the end: they go out on the connections that free up, and the counts stay exact.
    let (result, received) = run_against_slow_tasks("30ms", 2000, 0.1);
    let r = &result.requests;
    assert_eq!((r.sent, r.responses, r.dropped, received), (200, 200, 0, Some(200)), "{r:?}");
    assert_eq!(result.scenarios[0].iterations.iterations_started, 200);
}
