//! End-to-end tests of the service models that change with concurrency: a worker per
//! connection (`thread_per_connection`, `keepalive_timeout`) and the Universal Scalability
//! Law (`contention`, `coherency`). Assertions are on counts and on who gets answered; the
//! only waits bound from below ("no answer yet"), where the model guarantees there is none.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::Read;
use std::time::{Duration, Instant};

use common::{request_bytes, Client, Server};

const MS: Duration = Duration::from_millis(1);

/// answered_within says whether a response (any byte) arrives on `client` within `wait`.
fn answered_within(client: &mut Client, wait: Duration) -> bool {
    client.stream.set_read_timeout(Some(wait)).unwrap();
    let mut byte = [0u8; 1];
    let got = client.stream.peek(&mut byte).is_ok_and(|n| n > 0);
    client.stream.set_read_timeout(Some(common::TIMEOUT)).unwrap();
    got
}

/// stats_until polls /stats until `done` holds for it (at most 10 s) and returns it.
fn stats_until(server: &Server, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let began = Instant::now();
    loop {
        let stats = server.stats();
        if done(&stats) || began.elapsed() > common::TIMEOUT {
            return stats;
        }
        std::thread::sleep(10 * MS);
    }
}

#[test]
fn a_worker_belongs_to_one_connection_until_it_closes() {
    let server = Server::start(r#"{"workers": 2, "service_time": "1ms", "thread_per_connection": true}"#);
    let mut holders: Vec<Client> = (0..2).map(|_| server.client()).collect();
    for h in &mut holders {
        assert_eq!(h.get("/tasks").status, 200);
    }
    // Each waiter joins the line only once the one before it is in it: the server's tasks
    // run on several threads, so requests sent back to back may join in any order.
    let mut waiters: Vec<Client> = (0..3).map(|_| server.client()).collect();
    for (ahead, w) in waiters.iter_mut().enumerate() {
        w.send(request_bytes("GET", "/tasks", None).as_bytes());
        stats_until(&server, |s| s["connections"]["waiting"] == ahead + 1);
    }
    let stats = server.stats();
    assert_eq!(stats["connections"]["waiting"], 3, "{stats}");
    assert_eq!(stats["busy_workers"], 2, "{stats}");
    assert_eq!(stats["received_by_route"]["GET /tasks"], 5, "{stats}");
    assert_eq!(stats["responses"]["GET /tasks"]["200"], 2, "{stats}");
    // The holders stay fast, request after request; the waiters get nothing.
    for _ in 0..20 {
        for h in &mut holders {
            assert_eq!(h.get("/tasks").status, 200);
        }
    }
    assert!(!answered_within(&mut waiters[0], 200 * MS));
    // /health and /stats need no worker.
    assert_eq!(server.client().get("/health").status, 200);
    // A waiter whose client gives up is dropped unanswered when its turn comes.
    drop(waiters.remove(0));
    drop(holders.pop());
    assert_eq!(waiters[0].read_response().map(|r| r.status), Some(200));
    let stats = stats_until(&server, |s| s["connections"]["abandoned"] == 1);
    assert_eq!(stats["connections"]["abandoned"], 1, "{stats}");
    assert_eq!(stats["connections"]["waiting"], 1, "{stats}");
    assert!(!answered_within(&mut waiters[1], 100 * MS));
    drop(holders.pop());
    assert_eq!(waiters[1].read_response().map(|r| r.status), Some(200));
    // Every request was read; all but the abandoned one were answered.
    let stats = server.stats();
    assert_eq!(stats["received_by_route"]["GET /tasks"], 2 + 3 + 40, "{stats}");
    assert_eq!(stats["responses"]["GET /tasks"]["200"], 2 + 40 + 2, "{stats}");
    assert_eq!(stats["connections"]["given_worker"], 4, "{stats}");
    assert_eq!(server.finish().connections_abandoned, 1);
}

#[test]
fn a_full_queue_of_connections_answers_503_and_closes() {
    let server = Server::start(r#"{"workers": 1, "service_time": "1ms", "thread_per_connection": true, "queue": 1}"#);
    let mut holder = server.client();
    assert_eq!(holder.get("/tasks").status, 200);
    let mut waiter = server.client();
    waiter.send(request_bytes("GET", "/tasks", None).as_bytes());
    stats_until(&server, |s| s["connections"]["waiting"] == 1);
    let mut turned_away = server.client();
    let r = turned_away.get("/tasks");
    assert_eq!((r.status, r.header("Connection"), r.header("Retry-After")), (503, Some("close"), Some("1")));
    assert!(turned_away.is_closed());
    assert_eq!(server.stats()["rejected"]["503"], 1);
    drop(holder);
    assert_eq!(waiter.read_response().map(|r| r.status), Some(200));
}

#[test]
fn an_idle_connection_is_closed_after_the_keepalive_timeout() {
    let server = Server::start(
        r#"{"workers": 1, "service_time": "1ms", "thread_per_connection": true, "keepalive_timeout": "300ms"}"#,
    );
    let mut idle = server.client();
    assert_eq!(idle.get("/tasks").status, 200);
    let mut waiter = server.client();
    let began = Instant::now();
    waiter.send(request_bytes("GET", "/tasks", None).as_bytes());
    // The idle holder is closed by the server, and its worker serves the waiter.
    assert_eq!(waiter.read_response().map(|r| r.status), Some(200));
    assert!(began.elapsed() >= 250 * MS, "served after {:?}", began.elapsed());
    let mut byte = [0u8; 1];
    assert!(matches!(idle.stream.read(&mut byte), Ok(0) | Err(_)));
}

#[test]
fn the_law_slows_requests_by_how_many_are_in_service() {
    // σ = 0.5, κ = 0.25: alone 100 ms; four at once take 100 ms × (1 + 1.5 + 3) = 550 ms each,
    // except that they arrive one after another: the k-th sees k in service (1, 2, 3.5, 5.5).
    let server = Server::start(r#"{"workers": 100, "service_time": "100ms", "contention": 0.5, "coherency": 0.25}"#);
    let mut alone = server.client();
    let began = Instant::now();
    assert_eq!(alone.get("/tasks").status, 200);
    let took = began.elapsed();
    assert!(took >= 95 * MS && took < 1000 * MS, "alone: {took:?}");
    let mut clients: Vec<Client> = (0..4).map(|_| server.client()).collect();
    let began = Instant::now();
    for c in &mut clients {
        c.send(request_bytes("GET", "/tasks", None).as_bytes());
    }
    let stats = server.stats();
    assert_eq!(stats["busy_workers"], 4, "{stats}");
    let mut latencies: Vec<Duration> = clients
        .iter_mut()
        .map(|c| {
            assert_eq!(c.read_response().map(|r| r.status), Some(200));
            began.elapsed()
        })
        .collect();
    latencies.sort();
    // The last one started with 4 in service: at least 550 ms.
    assert!(latencies[3] >= 540 * MS, "{latencies:?}");
    // /stats states the curve's peak: N* = √(0.5/0.25) ≈ 1.41, best whole n = 1: 10 req/s.
    assert_eq!(stats["capacity_rps"], 10.0, "{stats}");
}
