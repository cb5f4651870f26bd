//! HTTP/2 (h2c, prior knowledge): several VUs' streams per connection, in both models, and the
//! counts agree with what an h2 server itself saw: requests answered, streams it reset, streams
//! its GOAWAY refused.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};
use surge_engine::{run, NoObserver, Plan, RunResult};

use crate::common::assert_result_adds_up;

/// H2Behavior is how the test server answers each stream.
#[derive(Clone, Copy, Debug)]
enum H2Behavior {
    /// 200 with a small body.
    Ok,
    /// Every `n`th request on a connection is reset (RST_STREAM INTERNAL_ERROR); the rest are 200.
    ResetEvery(u64),
    /// After answering `n` requests on a connection, a graceful GOAWAY: the streams it took
    /// are answered, those above its last are refused, then it closes.
    GoAwayAfter(u64),
    /// Every `n`th request on a connection is refused (RST_STREAM REFUSED_STREAM, unprocessed).
    RefuseEvery(u64),
    /// After answering `n` requests on a connection, a GOAWAY with INTERNAL_ERROR: every
    /// stream still open fails, processed or not.
    GoAwayErrorAfter(u64),
    /// An event stream of `events` events, `gap_ms` apart.
    Events { events: u32, gap_ms: u64 },
}

/// Counts are what the server saw.
#[derive(Default)]
struct Counts {
    connections: AtomicU64,
    requests: AtomicU64,
    answered: AtomicU64,
    reset: AtomicU64,
    /// seen counts the requests by "METHOD PATH BODY".
    seen: Mutex<BTreeMap<String, u64>>,
}

/// H2Server is a loopback h2c server on its own runtime thread, up until the test ends.
struct H2Server {
    addr: SocketAddr,
    counts: Arc<Counts>,
}

impl H2Server {
    fn start(behavior: H2Behavior) -> H2Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let counts = Arc::new(Counts::default());
        let shared = counts.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                loop {
                    let Ok((socket, _)) = listener.accept().await else { return };
                    tokio::spawn(serve(socket, behavior, shared.clone()));
                }
            });
        });
        H2Server { addr, counts }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn count(&self, of: fn(&Counts) -> &AtomicU64) -> u64 {
        of(&self.counts).load(Ordering::Relaxed)
    }

    fn seen(&self) -> BTreeMap<String, u64> {
        self.counts.seen.lock().expect("seen").clone()
    }
}

async fn serve(socket: tokio::net::TcpStream, behavior: H2Behavior, counts: Arc<Counts>) {
    let Ok(mut connection) = h2::server::Builder::new().max_concurrent_streams(256).handshake(socket).await else {
        return; // the engine's reachability probe, or a connection that never spoke h2
    };
    counts.connections.fetch_add(1, Ordering::Relaxed);
    let mut taken = 0u64;
    while let Some(Ok((request, mut respond))) = connection.accept().await {
        taken += 1;
        counts.requests.fetch_add(1, Ordering::Relaxed);
        let (head, mut body) = request.into_parts();
        let mut text = String::new();
        if !body.is_end_stream() {
            while let Some(Ok(data)) = body.data().await {
                let _ = body.flow_control().release_capacity(data.len());
                text.push_str(&String::from_utf8_lossy(&data));
            }
        }
        let key = format!("{} {} {text}", head.method, head.uri.path());
        *counts.seen.lock().expect("seen").entry(key).or_default() += 1;
        match behavior {
            H2Behavior::ResetEvery(n) if taken.is_multiple_of(n) => {
                respond.send_reset(h2::Reason::INTERNAL_ERROR);
                counts.reset.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            H2Behavior::RefuseEvery(n) if taken.is_multiple_of(n) => {
                respond.send_reset(h2::Reason::REFUSED_STREAM);
                counts.reset.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            H2Behavior::Events { events, gap_ms } => {
                let counts = counts.clone();
                tokio::spawn(async move {
                    let head = http::Response::builder()
                        .status(200)
                        .header("content-type", "text/event-stream")
                        .body(())
                        .expect("response");
                    let Ok(mut body) = respond.send_response(head, false) else { return };
                    for i in 0..events {
                        tokio::time::sleep(Duration::from_millis(gap_ms)).await;
                        let event = Bytes::from(format!("data: {i}\n\n"));
                        if body.send_data(event, i + 1 == events).is_err() {
                            return;
                        }
                    }
                    counts.answered.fetch_add(1, Ordering::Relaxed);
                });
                continue;
            }
            _ => {}
        }
        let head = http::Response::builder().status(200).header("content-length", "2").body(()).expect("response");
        if let Ok(mut body) = respond.send_response(head, false) {
            if body.send_data(Bytes::from_static(b"ok"), true).is_ok() {
                counts.answered.fetch_add(1, Ordering::Relaxed);
            }
        }
        if let H2Behavior::GoAwayAfter(n) = behavior {
            if taken == n {
                connection.graceful_shutdown();
            }
        }
        if let H2Behavior::GoAwayErrorAfter(n) = behavior {
            if taken == n {
                connection.abrupt_shutdown(h2::Reason::INTERNAL_ERROR);
            }
        }
    }
}

fn plan(url: &str, streams: u32, executor: Value) -> Plan {
    let doc = json!({"target": {"url": url, "http2": {"streams": streams}},
                     "threads": 1,
                     "scenarios": [{"name": "default", "executor": executor,
                                    "flow": {"sequences": [{"steps": [{"request": {"method": "GET"}}]}]}}]});
    Plan::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e:?}"))
}

fn run_plan(plan: &Plan) -> RunResult {
    run(plan, &mut NoObserver, Arc::new(AtomicBool::new(false))).unwrap_or_else(|e| panic!("{e}"))
}

fn failures(result: &RunResult, class: &str) -> u64 {
    result.requests.failure_classes.get(class).copied().unwrap_or(0)
}

#[test]
fn closed_model_vus_share_connections_by_streams_and_every_answer_is_counted() {
    let server = H2Server::start(H2Behavior::Ok);
    let result = run_plan(&plan(&server.url("/"), 10, json!({"type": "constant-vus", "vus": 20, "duration_s": 1.0})));
    let r = &result.requests;
    assert_result_adds_up(&result, "h2 closed");
    assert!(r.responses > 100, "{r:?}");
    assert_eq!(r.failed, 0, "{r:?}");
    assert_eq!(r.responses, server.count(|c| &c.answered), "every answer the server sent was counted");
    assert_eq!(r.sent, server.count(|c| &c.requests), "every request sent reached the server");
    assert_eq!(server.count(|c| &c.connections), 2, "20 VUs at 10 streams a connection");
    assert_eq!(r.connections_opened, 2);
    let h2 = result.http2.as_ref().expect("http2 figures");
    assert_eq!((h2.connections, h2.streams, h2.goaways), (2, r.sent, 0), "{h2:?}");
    assert!((h2.streams_per_connection_mean - r.sent as f64 / 2.0).abs() < 1e-9, "{h2:?}");
    assert!(h2.streams_per_connection_max >= r.sent.div_ceil(2), "{h2:?}");
    // Ten VUs a connection, each with a request in flight nearly all the time.
    assert_eq!(h2.concurrent_streams_max, 10, "{h2:?}");
    assert!(h2.concurrent_streams_mean > 5.0, "{h2:?}");
    assert_eq!(h2.server_max_concurrent_streams, Some(256), "the test server's SETTINGS");
}

#[test]
fn open_model_sends_the_schedule_over_few_connections() {
    let server = H2Server::start(H2Behavior::Ok);
    let executor = json!({"type": "constant-arrival-rate", "rate": 2000.0, "duration_s": 1.0, "max_vus": 200});
    let result = run_plan(&plan(&server.url("/"), 50, executor));
    let r = &result.requests;
    assert_result_adds_up(&result, "h2 open");
    assert_eq!(r.sent, 2000, "{r:?}");
    assert_eq!(r.responses, 2000, "{r:?}");
    assert_eq!(server.count(|c| &c.answered), 2000);
    let connections = server.count(|c| &c.connections);
    assert!((1..=4).contains(&connections), "{connections} connections for 2000/s of a fast target");
}

#[test]
fn streams_the_server_resets_are_stream_reset_failures() {
    let server = H2Server::start(H2Behavior::ResetEvery(3));
    let result = run_plan(&plan(&server.url("/"), 5, json!({"type": "constant-vus", "vus": 5, "duration_s": 0.5})));
    let r = &result.requests;
    assert_result_adds_up(&result, "h2 reset");
    let reset = server.count(|c| &c.reset);
    assert!(reset > 10, "{r:?}");
    assert_eq!(failures(&result, "stream_reset"), reset, "{r:?}");
    assert_eq!(r.responses, server.count(|c| &c.answered), "{r:?}");
    assert_eq!(r.sent, server.count(|c| &c.requests), "{r:?}");
}

#[test]
fn a_goaway_moves_the_vus_to_new_connections_and_what_it_refused_is_sent_again() {
    let server = H2Server::start(H2Behavior::GoAwayAfter(40));
    let result = run_plan(&plan(&server.url("/"), 10, json!({"type": "constant-vus", "vus": 10, "duration_s": 0.5})));
    let r = &result.requests;
    assert_result_adds_up(&result, "h2 goaway");
    let connections = server.count(|c| &c.connections);
    assert!(connections > 3, "the VUs moved on to new connections: {connections}");
    assert_eq!(r.responses, server.count(|c| &c.answered), "{r:?}");
    // Streams a GOAWAY refused (h2's graceful shutdown refuses few: its first GOAWAY names the
    // highest stream id) were never processed: each was sent again on another connection and
    // answered there; nothing failed. nginx's GOAWAY refuses more (tests/e2e/test_http2_nginx.py).
    assert_eq!(r.failed, 0, "{r:?}");
    assert_eq!(r.sent, server.count(|c| &c.requests) + r.retried, "{r:?}");
    let h2 = result.http2.as_ref().expect("http2 figures");
    // Each connection but the last the run's end may have cut short took its GOAWAY after 40.
    assert!(h2.goaways >= connections - 1 && h2.goaways <= connections, "{h2:?} of {connections}");
    assert!(h2.streams_per_connection_max >= 40, "{h2:?}");
    assert_eq!(r.sent, server.count(|c| &c.requests) + r.failed, "{r:?}");
}

#[test]
fn event_streams_over_http2_are_timed_event_by_event() {
    let server = H2Server::start(H2Behavior::Events { events: 5, gap_ms: 20 });
    let result = run_plan(&plan(
        &server.url("/"),
        4,
        json!({"type": "per-vu-iterations", "vus": 4, "iterations": 2, "max_duration_s": 10.0}),
    ));
    let r = &result.requests;
    assert_result_adds_up(&result, "h2 events");
    assert_eq!(r.responses, 8, "{r:?}");
    assert_eq!(r.streams, 8, "{r:?}");
    assert_eq!(r.events, 40, "{r:?}");
    // The first event comes 20 ms after the send, the stream ends 100 ms after it.
    let first = result.latency.first_event.p50_ms;
    assert!((15.0..80.0).contains(&first), "first event at {first} ms");
    let duration = result.latency.all.p50_ms;
    assert!((95.0..200.0).contains(&duration), "stream took {duration} ms");
}

#[test]
fn each_request_of_a_flow_reaches_the_server_as_written() {
    // A VU alternates two requests: each stream carries its own method, path and body (a VU
    // reuses the conversion of a request it sent before only when the request is the same).
    let server = H2Server::start(H2Behavior::Ok);
    let doc = json!({"target": {"url": server.url("/"), "http2": {"streams": 4}},
                     "threads": 1,
                     "scenarios": [{"name": "default",
                                    "executor": {"type": "per-vu-iterations", "vus": 4, "iterations": 5, "max_duration_s": 10.0},
                                    "flow": {"sequences": [{"steps": [
                                        {"request": {"method": "GET", "path": "/a"}},
                                        {"request": {"method": "POST", "path": "/b", "body": "xy"}},
                                        {"request": {"method": "GET", "path": "/a"}}]}]}}]});
    let result = run_plan(&Plan::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e:?}")));
    assert_result_adds_up(&result, "h2 flow");
    assert_eq!(result.requests.responses, 60, "{:?}", result.requests);
    let seen = server.seen();
    assert_eq!(seen.get("GET /a "), Some(&40), "{seen:?}");
    assert_eq!(seen.get("POST /b xy"), Some(&20), "{seen:?}");
    assert_eq!(seen.len(), 2, "{seen:?}");
}

#[test]
fn a_refused_stream_is_sent_again_once_and_a_second_refusal_fails() {
    // Every 2nd stream on a connection is refused: a retry lands on the same connection or
    // another, and is refused again half the time.
    let server = H2Server::start(H2Behavior::RefuseEvery(2));
    let result = run_plan(&plan(&server.url("/"), 4, json!({"type": "constant-vus", "vus": 4, "duration_s": 0.5})));
    let r = &result.requests;
    assert_result_adds_up(&result, "h2 refused");
    let refused = server.count(|c| &c.reset);
    assert!(r.retried > 10, "{r:?}");
    // Each refusal was either sent again (retried) or, refused a second time, failed.
    assert_eq!(r.retried + failures(&result, "stream_reset"), refused, "{r:?}");
    assert_eq!(failures(&result, "stream_reset"), r.failed, "{r:?}");
    assert!(r.failed > 0, "some retries were refused too: {r:?}");
    assert_eq!(r.responses, server.count(|c| &c.answered), "{r:?}");
    assert_eq!(r.sent, server.count(|c| &c.requests), "every send reached the server: {r:?}");
}

#[test]
fn a_goaway_with_an_error_fails_its_streams_without_a_retry() {
    // A GOAWAY with an error code fails every open stream, processed or not: none is retried.
    let server = H2Server::start(H2Behavior::GoAwayErrorAfter(20));
    let result = run_plan(&plan(&server.url("/"), 5, json!({"type": "constant-vus", "vus": 5, "duration_s": 0.5})));
    let r = &result.requests;
    assert_result_adds_up(&result, "h2 goaway error");
    assert_eq!(r.retried, 0, "{r:?}");
    assert!(r.failed > 0, "{r:?}");
    // The server closes at once: answers it wrote may not have left it.
    assert!(r.responses <= server.count(|c| &c.answered), "{r:?}");
}
