//! Hostile servers: endless trailers, extensions, headers and interim responses, a huge
//! header, endless bodies, a byte-at-a-time drip, statuses outside 100-599. Whatever the
//! server does, a run ends within duration + grace + timeout + 1 s, a stop ends it within
//! a second, each over-bound response is an invalid response, and the counts add up.
#![allow(clippy::needless_pass_by_value, reason = "the tests' plan helpers take their json!() pieces by value")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{assert_result_adds_up, Behavior, TestServer};
use serde_json::{json, Value};
use surge_engine::{run, NoObserver, Plan, RunResult};

/// (duration, grace, timeout) of every hostile run, in seconds.
const DURATION_S: f64 = 1.0;
const GRACE_S: f64 = 0.5;
const TIMEOUT_S: f64 = 0.5;

fn hostile_plan(server: &TestServer, duration_s: f64, timeout_s: f64, checks: Value) -> Plan {
    let doc = json!({"target": {"url": server.url("/")}, "threads": 1,
                     "limits": {"timeout_s": timeout_s, "grace_period_s": GRACE_S},
                     "scenarios": [{"name": "default",
                                    "executor": {"type": "constant-vus", "vus": 2, "duration_s": duration_s},
                                    "flow": {"sequences": [{"steps": [{"request": {"method": "GET"}, "checks": checks}]}]}}]});
    Plan::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e:?}"))
}

/// run_timed runs `plan`, setting the stop flag after `stop_after` if given; returns the
/// result and the wall-clock time the run took.
fn run_timed(plan: &Plan, stop_after: Option<Duration>) -> (RunResult, Duration) {
    let cancel = Arc::new(AtomicBool::new(false));
    if let Some(after) = stop_after {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(after);
            cancel.store(true, Ordering::Relaxed);
        });
    }
    let started = Instant::now();
    let result = run(plan, &mut NoObserver, cancel).unwrap_or_else(|e| panic!("{e}"));
    (result, started.elapsed())
}

/// assert_server_agrees checks the server's count of requests against the run's: every
/// response answered a request the server parsed, and it parsed only requests sent.
fn assert_server_agrees(server: &TestServer, result: &RunResult, what: &str) {
    let r = &result.requests;
    let received = server.count();
    assert!(
        r.responses <= received && received <= r.sent,
        "{what}: responses {} <= received {received} <= sent {}",
        r.responses,
        r.sent
    );
}

#[test]
fn a_hostile_server_cannot_hold_a_run_past_its_bounds() {
    let invalid = "invalid_response";
    let timeout = "request_timeout";
    // (server, the failure class of each of its responses)
    let cases: &[(Behavior, &str)] = &[
        (Behavior::EndlessTrailers, invalid),
        (Behavior::EndlessExtension, invalid),
        (Behavior::EndlessHeaders, invalid),
        (Behavior::HugeHeader, invalid),
        (Behavior::EndlessInterim, invalid),
        (Behavior::EndlessChunks, timeout),
        (Behavior::BigBody(1 << 40), timeout),
        (Behavior::Drip(25), timeout),
        (Behavior::RawStatus("000"), invalid),
        (Behavior::RawStatus("099"), invalid),
        (Behavior::RawStatus("600"), invalid),
        (Behavior::RawStatus("999"), invalid),
        (Behavior::RawStatus("2xx"), invalid),
        (Behavior::RawStatus("20"), invalid),
    ];
    let bound = Duration::from_secs_f64(DURATION_S + GRACE_S + TIMEOUT_S + 1.0);
    std::thread::scope(|scope| {
        for &(behavior, class) in cases {
            scope.spawn(move || {
                let server = TestServer::start(behavior);
                let (result, took) = run_timed(&hostile_plan(&server, DURATION_S, TIMEOUT_S, json!([])), None);
                let what = format!("{behavior:?}");
                assert!(took <= bound, "{what}: the run took {took:?}, bound {bound:?}");
                let r = &result.requests;
                assert_eq!((r.responses, r.succeeded), (0, 0), "{what}: {r:?}");
                assert!(r.status_codes.is_empty(), "{what}: no status class for an invalid status: {r:?}");
                assert!(r.failure_classes.get(class).copied().unwrap_or(0) > 0, "{what}: {class}: {r:?}");
                // On a busy machine the server may answer a request after its timeout, and a
                // server busy writing to its other connections may not accept one in time.
                let allowed = [class, "request_timeout", "connect_timeout", "interrupted"];
                assert!(r.failure_classes.keys().all(|k| allowed.contains(&k.as_str())), "{what}: {r:?}");
                // A timed-out request ends at its timeout (a timer tick later: 5 ms here; the
                // margin is for a machine running all these servers at once), never when the
                // server lets go.
                let max_ms = result.latency.all.max_ms;
                assert!(max_ms <= TIMEOUT_S * 1000.0 + 1000.0, "{what}: max latency {max_ms} ms");
                assert_result_adds_up(&result, &what);
                assert_server_agrees(&server, &result, &what);
            });
        }
    });
}

#[test]
fn a_stop_ends_a_run_against_a_hostile_server_within_a_second() {
    // Long duration and timeout: only the stop can end these runs early. (server, whether a
    // request is always in progress: an over-bound response ends at once, and the next
    // request may not have started when the stop comes.)
    let cases = [
        (Behavior::EndlessChunks, true),
        (Behavior::BigBody(1 << 40), true),
        (Behavior::Drip(25), true),
        (Behavior::Silent, true),
        (Behavior::EndlessExtension, false),
        (Behavior::EndlessInterim, false),
        (Behavior::EndlessTrailers, false),
    ];
    let stop_after = Duration::from_millis(700);
    std::thread::scope(|scope| {
        for (behavior, in_progress) in cases {
            scope.spawn(move || {
                let server = TestServer::start(behavior);
                let (result, took) = run_timed(&hostile_plan(&server, 30.0, 20.0, json!([])), Some(stop_after));
                let what = format!("{behavior:?}");
                assert!(took <= stop_after + Duration::from_secs(1), "{what}: stopped after {took:?}");
                let r = &result.requests;
                assert!(r.interrupted > 0 || !in_progress, "{what}: the request in progress is interrupted: {r:?}");
                assert_result_adds_up(&result, &what);
                assert_server_agrees(&server, &result, &what);
            });
        }
    });
}

#[test]
fn checks_on_a_body_longer_than_kept_say_they_saw_it_truncated() {
    // 2 MiB bodies: checks and captures see the first 1 MiB and say so; a status check does
    // not read the body.
    let server = TestServer::start(Behavior::BigBody(2 << 20));
    let checks = json!([{"name": "status", "type": "status", "in": [200]},
                        {"name": "body", "type": "body_contains", "text": "x"}]);
    let (result, took) = run_timed(&hostile_plan(&server, 0.5, 5.0, checks), None);
    assert!(took <= Duration::from_secs_f64(0.5 + GRACE_S + 5.0 + 1.0), "{took:?}");
    let r = &result.requests;
    assert!(r.responses > 0 && r.succeeded == r.responses, "{r:?}");
    let outcomes: Vec<(&str, u64, u64)> =
        result.checks.iter().map(|c| (c.name.as_str(), c.passes, c.truncated)).collect();
    assert_eq!(outcomes, [("status", r.responses, 0), ("body", r.responses, r.responses)], "{r:?}");
    assert_result_adds_up(&result, "big body");
    assert_server_agrees(&server, &result, "big body");
}
