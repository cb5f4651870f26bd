//! End-to-end engine tests against a loopback test server: counts must match exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{Behavior, TestServer};
use surge_engine::{run, Control, EngineError, Interval, NoObserver, Observer, Plan, RunResult};

fn plan(url: &str, executor: &str, extra: &str) -> Plan {
    let json = format!(
        r#"{{"target": {{"url": "{url}"}},
             "scenarios": [{{"name": "default", "executor": {executor},
                             "flow": {{"sequences": [{{"steps": [{{"request": {{"method": "GET"}}}}]}}]}}}}]{extra}}}"#
    );
    Plan::from_json(&json).unwrap_or_else(|e| panic!("{e:?}"))
}

fn run_plan(plan: &Plan) -> RunResult {
    run(plan, &mut NoObserver, Arc::new(AtomicBool::new(false))).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn shared_iterations_send_exactly_the_budget() {
    let server = TestServer::start(Behavior::Ok);
    for (vus, threads, iterations) in [(1, 1, 1), (8, 2, 1000), (3, 3, 7)] {
        let before = server.count();
        let p = plan(
            &server.url("/"),
            &format!(r#"{{"type": "shared-iterations", "vus": {vus}, "iterations": {iterations}}}"#),
            &format!(r#", "threads": {threads}"#),
        );
        let result = run_plan(&p);
        let r = &result.requests;
        assert_eq!(r.sent, iterations, "vus {vus} threads {threads}");
        assert_eq!(r.responses, iterations);
        assert_eq!(r.succeeded, iterations);
        assert_eq!(server.count() - before, iterations, "server saw a different count");
        assert_eq!(result.latency.all.count, iterations);
    }
}

#[test]
fn timed_closed_run_counts_match_the_server() {
    let server = TestServer::start(Behavior::Ok);
    let p =
        plan(&server.url("/health"), r#"{"type": "constant-vus", "vus": 4, "duration_s": 0.5}"#, r#", "threads": 2"#);
    let result = run_plan(&p);
    assert!(result.requests.sent > 100, "{:?}", result.requests);
    assert_eq!(result.requests.sent, server.count());
    assert_eq!(result.requests.sent, result.requests.responses + result.requests.interrupted);
    assert_eq!(result.requests.connections_opened, 4);
    assert!(!result.intervals.is_empty());
    let per_interval: u64 = result.intervals.iter().map(|i| i.requests.sent).sum();
    assert_eq!(per_interval, result.requests.sent, "intervals must add up to the total");
}

#[test]
fn chunked_and_close_delimited_bodies_are_complete_responses() {
    for (behavior, expect_conns) in [(Behavior::Chunked, Some(2)), (Behavior::CloseDelimited, None)] {
        let server = TestServer::start(behavior);
        let p = plan(&server.url("/"), r#"{"type": "shared-iterations", "vus": 2, "iterations": 50}"#, "");
        let result = run_plan(&p);
        assert_eq!(result.requests.succeeded, 50, "{behavior:?}: {:?}", result.requests);
        assert_eq!(result.requests.failed, 0, "{behavior:?}");
        assert_eq!(server.count(), 50);
        if let Some(conns) = expect_conns {
            assert_eq!(result.requests.connections_opened, conns, "{behavior:?} must keep connections alive");
        } else {
            assert!(result.requests.connections_opened >= 50, "close-delimited needs a new connection per request");
        }
    }
}

#[test]
fn failures_are_classified() {
    let cases = [
        (Behavior::Reset, "connection_reset"),
        (Behavior::Garbage, "invalid_response"),
        (Behavior::Silent, "request_timeout"),
    ];
    for (behavior, class) in cases {
        let server = TestServer::start(behavior);
        let p = plan(
            &server.url("/"),
            r#"{"type": "shared-iterations", "vus": 2, "iterations": 4}"#,
            r#", "limits": {"timeout_s": 0.3}"#,
        );
        let result = run_plan(&p);
        let r = &result.requests;
        assert_eq!(r.failure_classes.get(class).copied(), Some(4), "{behavior:?}: {r:?}");
        assert_eq!(r.failed, 4);
        // The server read each request, then failed it: sent, and unanswered.
        assert_eq!((r.sent, r.unanswered, r.responses), (4, 4, 0), "{behavior:?}: {r:?}");
        assert_eq!(server.count(), 4, "{behavior:?}");
        assert_eq!(r.succeeded, 0);
        if class == "request_timeout" {
            assert_eq!(r.timed_out, 4);
            assert!(
                result.latency.all.min_ms >= 299.0,
                "timeouts enter the histogram at their duration (within its 0.1 % precision)"
            );
        }
    }
}

#[test]
fn error_statuses_fail_and_429_503_are_shed() {
    for (status, shed) in [(500u16, 0u64), (503, 10), (429, 10), (404, 0)] {
        let server = TestServer::start(Behavior::Status(status));
        let p = plan(&server.url("/"), r#"{"type": "shared-iterations", "vus": 1, "iterations": 10}"#, "");
        let r = run_plan(&p).requests;
        assert_eq!((r.failed, r.shed, r.succeeded), (10, shed, 0), "status {status}");
        assert_eq!(r.status_codes.get(&status.to_string()).copied(), Some(10));
    }
}

#[test]
fn open_model_sends_exactly_the_schedule() {
    let server = TestServer::start(Behavior::Ok);
    let p = plan(
        &server.url("/"),
        // max_vus holds the whole run: a stalled machine (hypervisor steal) must not meet the cap
        r#"{"type": "constant-arrival-rate", "rate": 400, "duration_s": 1.0, "max_vus": 400}"#,
        r#", "threads": 2"#,
    );
    let result = run_plan(&p);
    assert_eq!(result.requests.sent, 400, "{:?}", result.requests);
    assert_eq!(server.count(), 400);
    assert_eq!(result.requests.dropped, 0);
    assert!((result.throughput.sent_per_s - 400.0).abs() < 400.0 * 0.02, "{:?}", result.throughput);
}

#[test]
fn open_model_latency_includes_time_waiting_for_a_slow_server() {
    // 100 req/s against a server taking 50 ms with at most 2 in flight: the schedule
    // outruns the server, so requests drop, and those sent queue behind each other.
    let server = TestServer::start(Behavior::Delay(50));
    let p = plan(
        &server.url("/"),
        r#"{"type": "constant-arrival-rate", "rate": 100, "duration_s": 1.0, "max_vus": 2}"#,
        r#", "threads": 1"#,
    );
    let result = run_plan(&p);
    let r = &result.requests;
    assert_eq!(r.sent + r.dropped, 100, "{r:?}");
    assert!(r.dropped > 0, "{r:?}");
    assert!(result.notes.iter().any(|n| n.contains("max_vus")), "{:?}", result.notes);
    assert!(result.latency.all.p50_ms >= result.latency.service_time.p50_ms);
}

#[test]
fn requests_outlasting_the_grace_period_are_interrupted_not_dropped() {
    let server = TestServer::start(Behavior::Silent);
    let p = plan(
        &server.url("/"),
        r#"{"type": "constant-vus", "vus": 3, "duration_s": 0.2}"#,
        r#", "limits": {"timeout_s": 30, "grace_period_s": 0.2}"#,
    );
    let result = run_plan(&p);
    let r = &result.requests;
    assert_eq!(r.sent, 3);
    assert_eq!(r.interrupted, 3, "{r:?}");
    assert_eq!(r.failed, 0, "interrupted requests are not failures");
    assert!(result.elapsed_s < 2.0);
}

#[test]
fn unreachable_and_unresolvable_targets_are_errors() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let p = plan(&format!("http://127.0.0.1:{port}/"), r#"{"type": "constant-vus", "vus": 1, "duration_s": 1}"#, "");
    match run(&p, &mut NoObserver, Arc::new(AtomicBool::new(false))) {
        Err(EngineError::Unreachable { class, .. }) => assert_eq!(class.name(), "connection_refused"),
        other => panic!("expected Unreachable, got {other:?}"),
    }
    let p = plan("http://no-such-host.invalid/", r#"{"type": "constant-vus", "vus": 1, "duration_s": 1}"#, "");
    assert!(matches!(
        run(&p, &mut NoObserver, Arc::new(AtomicBool::new(false))),
        Err(EngineError::Unresolvable { .. })
    ));
}

struct StopAfter {
    intervals: usize,
    seen: usize,
}

impl Observer for StopAfter {
    fn on_interval(&mut self, _interval: &Interval) -> Control {
        self.seen += 1;
        if self.seen >= self.intervals {
            Control::Stop
        } else {
            Control::Continue
        }
    }
}

#[test]
fn an_observer_can_stop_the_run_and_keep_its_results() {
    let server = TestServer::start(Behavior::Ok);
    let p = plan(&server.url("/"), r#"{"type": "constant-vus", "vus": 2, "duration_s": 30}"#, r#", "interval_s": 0.1"#);
    let started = std::time::Instant::now();
    let result = run(&p, &mut StopAfter { intervals: 3, seen: 0 }, Arc::new(AtomicBool::new(false))).unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(result.stop_reason, surge_engine::result::StopReason::Interrupted);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(result.requests.sent, server.count(), "{:?}", result.requests);
    assert_eq!(result.requests.sent, result.requests.responses + result.requests.interrupted);
}

#[test]
fn cancel_flag_stops_a_run() {
    let server = TestServer::start(Behavior::Ok);
    let p = plan(&server.url("/"), r#"{"type": "constant-vus", "vus": 2, "duration_s": 30}"#, "");
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::Relaxed);
    });
    let result = run(&p, &mut NoObserver, cancel).unwrap();
    assert!(result.elapsed_s < 3.0);
    assert!(result.requests.sent > 0);
}

/// Collect keeps every interval the observer is given.
struct Collect(Vec<Interval>);

impl Observer for Collect {
    fn on_interval(&mut self, interval: &Interval) -> Control {
        self.0.push(interval.clone());
        Control::Continue
    }
}

#[test]
fn intervals_tile_the_window_with_no_sliver_after_the_end() {
    // (server, VUs, duration): a fast server drains at once; a 300 ms one leaves requests
    // in flight that end up to 0.3 s after the load.
    for (behavior, vus, duration_s) in [(Behavior::Ok, 2, 1.0), (Behavior::Delay(300), 2, 1.0), (Behavior::Ok, 1, 0.9)]
    {
        let server = TestServer::start(behavior);
        let p = plan(
            &server.url("/"),
            &format!(r#"{{"type": "constant-vus", "vus": {vus}, "duration_s": {duration_s}}}"#),
            r#", "interval_s": 0.25, "threads": 2"#,
        );
        let mut seen = Collect(Vec::new());
        let result = run(&p, &mut seen, Arc::new(AtomicBool::new(false))).unwrap();
        let what = format!("{behavior:?} {duration_s}s");
        let intervals = &result.intervals;
        let last = intervals.last().unwrap();
        for (k, i) in intervals.iter().enumerate() {
            assert_eq!(i.index, k as u64, "{what}");
            assert!((i.start_s - 0.25 * k as f64).abs() < 1e-9, "{what}: {k} starts at {}", i.start_s);
            let length = i.end_s - i.start_s;
            if k + 1 < intervals.len() {
                assert!((length - 0.25).abs() < 1e-9, "{what}: interval {k} is {length} s");
            } else {
                assert!((0.125..0.375).contains(&length), "{what}: the last interval is {length} s");
            }
        }
        let window_end = result.throughput.window_s + result.drain.seconds;
        assert!((last.end_s - window_end).abs() < 1e-6, "{what}: intervals end with the drain, at {window_end}");
        let load_intervals = (duration_s / 0.25_f64).round() as usize;
        let expected = if matches!(behavior, Behavior::Delay(_)) { load_intervals + 1 } else { load_intervals };
        assert_eq!(
            intervals.len(),
            expected,
            "{what}: {:?}",
            intervals.iter().map(|i| (i.start_s, i.end_s)).collect::<Vec<_>>()
        );
        let live: Vec<(u64, f64, u64)> = seen.0.iter().map(|i| (i.index, i.end_s, i.requests.responses)).collect();
        let listed: Vec<(u64, f64, u64)> = intervals.iter().map(|i| (i.index, i.end_s, i.requests.responses)).collect();
        assert_eq!(live, listed, "{what}: the observer saw what the result lists");
        assert_eq!(intervals.iter().map(|i| i.requests.responses).sum::<u64>(), result.requests.responses, "{what}");
        let rate = last.requests.responses as f64 / (last.end_s - last.start_s);
        assert!((last.responses_per_s - rate).abs() <= rate * 1e-9, "{what}: {} vs {rate}", last.responses_per_s);
    }
}

#[test]
fn rates_are_over_the_load_window_and_the_drain_is_counted_apart() {
    // An arrival rate of 4/s for 1 s: 4 requests, the last due at 0.75 s; the window is the
    // schedule's second, so the rate is the one offered.
    let server = TestServer::start(Behavior::Ok);
    let p =
        plan(&server.url("/"), r#"{"type": "constant-arrival-rate", "rate": 4, "duration_s": 1.0, "max_vus": 4}"#, "");
    let result = run_plan(&p);
    let t = &result.throughput;
    assert_eq!(result.requests.responses, 4);
    assert!((t.window_s - 1.0).abs() < 0.01, "{t:?}");
    assert_eq!((t.responses_per_s, t.sent_per_s), (4.0 / t.window_s, 4.0 / t.window_s));
    assert_eq!(result.drain.responses, 0, "{:?}", result.drain);
    // 3 VUs for 0.5 s against 300 ms: the first round ends at 0.3 s, within the load; the
    // second, sent at 0.3 s, ends at 0.6 s, in the drain: counted, but not in the rate, and
    // the window stays the load's.
    let server = TestServer::start(Behavior::Delay(300));
    let p = plan(&server.url("/"), r#"{"type": "constant-vus", "vus": 3, "duration_s": 0.5}"#, "");
    let result = run_plan(&p);
    let (t, d) = (&result.throughput, &result.drain);
    assert_eq!(result.requests.responses, 6, "two rounds of 3 VUs, the second ending at ~0.6 s");
    assert!((result.duration_s - 0.5).abs() < 0.01, "the load window stays the duration: {}", result.duration_s);
    assert!((t.window_s - result.duration_s).abs() < 1e-9, "{t:?}");
    assert_eq!((t.responses_per_s * t.window_s).round(), 3.0, "{t:?}");
    assert_eq!((t.sent_per_s * t.window_s).round(), 6.0, "{t:?}");
    assert_eq!((d.responses, d.succeeded, d.failed, d.interrupted), (3, 3, 0, 0), "{d:?}");
    assert!(d.seconds > 0.05 && d.seconds < 0.3, "the drain lasts to the second round's end: {d:?}");
    let s = &result.scenarios[0];
    assert_eq!((s.throughput, s.drain), (*t, *d));
    assert_eq!(result.tags[0].throughput, s.throughput);
}

#[test]
fn the_peak_of_open_connections_counts_the_interval_the_drain_joined() {
    // One interval of load and a drain that joins it: the connections open at the load's
    // end are still the peak, though none is open when the drain ends.
    let server = TestServer::start(Behavior::Ok);
    let p =
        plan(&server.url("/"), r#"{"type": "constant-vus", "vus": 3, "duration_s": 0.5}"#, r#", "interval_s": 0.5"#);
    let result = run_plan(&p);
    assert_eq!(
        result.intervals.len(),
        1,
        "{:?}",
        result.intervals.iter().map(|i| (i.start_s, i.end_s)).collect::<Vec<_>>()
    );
    assert_eq!(result.peak_open_connections, 3);
}

#[test]
fn a_load_that_ends_with_nothing_in_flight_ends_its_last_interval_with_the_window() {
    // The last iteration's response ends the load (the budget is spent): the worker goes
    // from running to done at once, and its last interval still ends where the window does,
    // not at the interval boundary after it.
    let server = TestServer::start(Behavior::Delay(100));
    let p = plan(
        &server.url("/"),
        r#"{"type": "shared-iterations", "vus": 1, "iterations": 7}"#,
        r#", "interval_s": 0.25"#,
    );
    let result = run_plan(&p);
    let last = result.intervals.last().unwrap();
    assert_eq!(result.requests.responses, 7, "{:?}", result.requests);
    let window_end = result.throughput.window_s + result.drain.seconds;
    assert!((last.end_s - window_end).abs() < 1e-6, "last interval ends at {}, window at {window_end}", last.end_s);
    assert_eq!(result.drain.responses, 0, "the budget's last response ends the load: {:?}", result.drain);
}
