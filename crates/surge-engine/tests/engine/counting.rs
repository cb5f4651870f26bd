//! What counts as sent, answered, unanswered and interrupted, against servers that close,
//! reset, stall or speak another protocol: the figures add up exactly and agree with what
//! the server itself received.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::target;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use common::{assert_result_adds_up, Behavior, TestServer};
use serde_json::{json, Value};
use surge_engine::{run, NoObserver, Plan, RunResult};

fn plan(url: &str, executor: Value, extra: Value) -> Plan {
    let mut doc = json!({"target": {"url": url, "insecure": true},
                         "scenarios": [{"name": "default", "executor": executor,
                                        "flow": {"sequences": [{"steps": [{"request": {"method": "GET"}}]}]}}]});
    if let (Some(doc), Some(extra)) = (doc.as_object_mut(), extra.as_object()) {
        doc.extend(extra.clone());
    }
    Plan::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e:?}"))
}

fn run_plan(plan: &Plan) -> RunResult {
    run(plan, &mut NoObserver, Arc::new(AtomicBool::new(false))).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn requests_written_on_connections_the_server_closed_are_sent_but_unanswered() {
    // 12 VUs against a target that keeps 4 connections: the others are accepted by the
    // kernel and closed by the server at once; what surge wrote on them never arrived.
    let server = target::Server::start(r#"{"max_connections": 4}"#);
    let p = plan(
        &format!("http://{}/health", server.addr),
        json!({"type": "constant-vus", "vus": 12, "duration_s": 1.0}),
        json!({"threads": 2}),
    );
    let result = run_plan(&p);
    let stats = server.stats();
    let received = stats["received_by_route"]["GET /health"].as_u64().unwrap();
    let r = &result.requests;
    assert_result_adds_up(&result, "max_connections");
    assert!(r.unanswered > 0, "{r:?}");
    assert!(
        r.responses <= received && received <= r.sent,
        "responses {} <= received {received} <= sent {}",
        r.responses,
        r.sent
    );
    assert_eq!(r.responses, received, "every request the target parsed was answered (no timeouts here)");
    let t = &result.throughput;
    assert!((t.window_s - result.duration_s).abs() < 1e-6, "rates are over the load window: {t:?}");
    let in_window = |rate: f64| (rate * t.window_s).round() as u64;
    let d = &result.drain;
    assert_eq!(in_window(t.responses_per_s) + d.responses, r.responses, "{t:?} {d:?}");
    assert_eq!(in_window(t.successes_per_s) + d.succeeded, r.succeeded, "{t:?} {d:?}");
    assert!(in_window(t.sent_per_s) <= r.sent, "{t:?}");
}

/// run_https_against_plain runs `executor` with an https:// URL against the plain target.
fn run_https_against_plain(server: &target::Server, executor: Value) -> RunResult {
    run_plan(&plan(&format!("https://{}/health", server.addr), executor, json!({"threads": 1})))
}

#[test]
fn https_to_a_plain_server_sends_nothing() {
    // The plain target answers the ClientHello with a 400 and closes: no handshake ever
    // completes, so no request is sent and no request byte counted.
    let server = target::Server::start("{}");
    let result = run_https_against_plain(&server, json!({"type": "constant-vus", "vus": 2, "duration_s": 0.3}));
    let r = &result.requests;
    assert_eq!((r.sent, r.bytes_sent, r.responses, r.connections_opened), (0, 0, 0, 0), "{r:?}");
    assert!(r.failure_classes.get("tls_failure").copied().unwrap_or(0) > 0, "{r:?}");
    assert_eq!(r.interrupted_unsent, r.interrupted, "nothing interrupted was sent: {r:?}");
    assert_eq!(result.throughput.sent_per_s, 0.0);
    assert_result_adds_up(&result, "tls mismatch");
    let stats = server.stats();
    assert_eq!(stats["received_by_route"]["GET /health"].as_u64().unwrap_or(0), 0, "{stats}");
}

#[test]
fn a_handshake_that_fails_spends_an_iteration_so_a_budget_runs_out() {
    // Each failed handshake is an iteration whose request failed before it was sent: 5
    // iterations end the run (they used to be retried until the scenario's max duration).
    let server = target::Server::start("{}");
    let result = run_https_against_plain(&server, json!({"type": "shared-iterations", "vus": 2, "iterations": 5}));
    let r = &result.requests;
    assert_eq!((r.sent, r.failed, r.failure_classes.get("tls_failure").copied()), (0, 5, Some(5)), "{r:?}");
    let it = &result.scenarios[0].iterations;
    assert_eq!((it.iterations_started, it.iterations_completed), (5, 5), "{it:?}");
    assert!(result.elapsed_s < 5.0, "{}", result.elapsed_s);
}

#[test]
fn interrupted_requests_count_in_the_failure_rate() {
    let server = TestServer::start(Behavior::Silent);
    let p = plan(
        &server.url("/"),
        json!({"type": "constant-vus", "vus": 3, "duration_s": 0.2}),
        json!({"limits": {"timeout_s": 30, "grace_period_s": 0.2}}),
    );
    let result = run_plan(&p);
    let r = &result.requests;
    assert_eq!((r.sent, r.interrupted, r.interrupted_unsent, r.failed, r.unanswered), (3, 3, 0, 0, 0), "{r:?}");
    assert_eq!((r.failure_rate, r.success_rate), (1.0, 0.0), "cut-off requests are not hidden: {r:?}");
    assert_result_adds_up(&result, "interrupted");
    let s = &result.scenarios[0].requests;
    assert_eq!(s.failure_rate, 1.0, "{s:?}");
}

#[test]
fn a_request_cut_off_while_being_written_is_interrupted_but_not_sent() {
    // A server that never reads: a 32 MiB body fills the socket buffers, so the request is
    // still being written when the run ends.
    let server = TestServer::start(Behavior::NoRead);
    let body = "x".repeat(32 << 20);
    let doc = json!({"target": {"url": server.url("/")},
                     "scenarios": [{"name": "default",
                                    "executor": {"type": "constant-vus", "vus": 1, "duration_s": 0.2},
                                    "flow": {"sequences": [{"steps": [{"request": {"method": "POST", "body": body}}]}]}}],
                     "limits": {"timeout_s": 30, "grace_period_s": 0.1}});
    let result = run_plan(&Plan::from_json(&doc.to_string()).unwrap());
    let r = &result.requests;
    assert_eq!((r.sent, r.interrupted, r.interrupted_unsent, r.bytes_sent), (0, 1, 1, 0), "{r:?}");
    assert_result_adds_up(&result, "unsent");
}

#[test]
fn answered_requests_add_up_against_every_kind_of_server() {
    for behavior in [Behavior::Ok, Behavior::Chunked, Behavior::CloseDelimited, Behavior::Status(503)] {
        let server = TestServer::start(behavior);
        let p =
            plan(&server.url("/"), json!({"type": "constant-vus", "vus": 4, "duration_s": 0.3}), json!({"threads": 2}));
        let result = run_plan(&p);
        let r = &result.requests;
        assert!(r.responses > 0, "{behavior:?}: {r:?}");
        assert_eq!(r.unanswered, 0, "{behavior:?}: {r:?}");
        assert_eq!(server.count(), r.sent, "{behavior:?}");
        assert_result_adds_up(&result, &format!("{behavior:?}"));
    }
}

#[test]
fn a_vu_whose_last_iteration_timed_out_stops_without_reconnecting() {
    // Every iteration ends in a timeout, which closes the VU's connection; after its last
    // one the VU stops there. It used to reconnect, open a connection it never used, and
    // stop only once that connection was up (the run waited for it).
    let server = TestServer::start(Behavior::Silent);
    for (vus, iterations) in [(3, 1), (2, 2)] {
        let executor = json!({"type": "per-vu-iterations", "vus": vus, "iterations": iterations});
        let p = plan(&server.url("/"), executor.clone(), json!({"limits": {"timeout_s": 0.1}, "threads": 1}));
        let result = run_plan(&p);
        let r = &result.requests;
        let it = &result.scenarios[0].iterations;
        let want = vus * iterations;
        assert_eq!((it.iterations_started, it.iterations_completed), (want, want), "{executor}: {it:?}");
        assert_eq!((r.sent, r.timed_out), (want, want), "{executor}: {r:?}");
        assert_eq!(r.connections_opened, want, "{executor}: one connection per request, none after the last: {r:?}");
        assert_result_adds_up(&result, &executor.to_string());
    }
}
