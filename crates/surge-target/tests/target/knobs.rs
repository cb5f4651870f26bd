//! One end-to-end test per knob of the server model, over loopback. Timing assertions only
//! bound from below what sleeps guarantee (a response is never early) and give wide room above.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::{Duration, Instant};

use common::{request_bytes, Client, Response, Server};
use surge_target::{serve, StopReason, TargetConfig};

const MS: Duration = Duration::from_millis(1);

/// concurrent sends `n` requests at once, each on its own connection, and returns each
/// response with its latency, sorted by latency.
fn concurrent(server: &Server, n: usize, path: &str) -> Vec<(Duration, Response)> {
    let mut clients: Vec<Client> = (0..n).map(|_| server.client()).collect();
    let began = Instant::now();
    for c in &mut clients {
        c.send(request_bytes("GET", path, None).as_bytes());
    }
    let handles: Vec<_> = clients
        .into_iter()
        .map(|mut c| std::thread::spawn(move || (c.read_response().unwrap(), began.elapsed())))
        .collect();
    let mut out: Vec<(Duration, Response)> =
        handles.into_iter().map(|h| h.join().unwrap()).map(|(r, t)| (t, r)).collect();
    out.sort_by_key(|(t, _)| *t);
    out
}

#[test]
fn workers_and_service_time_set_capacity() {
    let server = Server::start(r#"{"workers": 2, "service_time": "100ms"}"#);
    let mut probe = server.client();
    let observer = std::thread::spawn({
        let addr = server.addr;
        move || {
            std::thread::sleep(50 * MS);
            let mut c = Client::connect(addr);
            c.get("/stats").json()
        }
    });
    let results = concurrent(&server, 6, "/tasks");
    for (i, (latency, r)) in results.iter().enumerate() {
        assert_eq!(r.status, 200);
        let floor = ((i / 2 + 1) as u32) * 100 * MS;
        assert!(*latency >= floor.checked_sub(5 * MS).unwrap(), "request {i} took {latency:?}, at least {floor:?}");
    }
    assert!(results[5].0 < 1500 * MS, "slowest took {:?}", results[5].0);
    let during = observer.join().unwrap();
    assert_eq!((during["busy_workers"].as_u64(), during["queue_depth"].as_u64()), (Some(2), Some(4)), "{during}");
    assert_eq!(during["capacity_rps"], 20.0);
    // /health is outside the model: answered at once even with every slot busy.
    let began = Instant::now();
    assert_eq!(probe.get("/health").status, 200);
    assert!(began.elapsed() < 100 * MS);
}

#[test]
fn service_time_distributions() {
    // spec, lowest and highest latency a request may see alone (highest with room for timers)
    let cases: &[(&str, u64, u64)] =
        &[("uniform:40ms-60ms", 40, 400), ("fixed:30ms", 30, 300), ("lognormal:30ms,0", 30, 300)];
    for (spec, low, high) in cases {
        let server = Server::start(&format!(r#"{{"workers": 1, "service_time": "{spec}", "seed": 1}}"#));
        let mut c = server.client();
        for _ in 0..3 {
            let began = Instant::now();
            assert_eq!(c.get("/tasks").status, 200);
            let took = began.elapsed();
            assert!(
                took >= ((*low as u32) * MS).checked_sub(2 * MS).unwrap() && took < (*high as u32) * MS,
                "{spec}: {took:?}"
            );
        }
    }
}

#[test]
fn full_queue_answers_503_at_once() {
    let server = Server::start(r#"{"workers": 1, "service_time": "300ms", "queue": 2}"#);
    let results = concurrent(&server, 5, "/tasks");
    let rejected: Vec<_> = results.iter().filter(|(_, r)| r.status == 503).collect();
    let served = results.iter().filter(|(_, r)| r.status == 200).count();
    assert_eq!((served, rejected.len()), (3, 2));
    for (latency, r) in rejected {
        assert!(*latency < 250 * MS, "503 took {latency:?}");
        assert_eq!(r.header("Retry-After"), Some("1"));
        assert!(r.json()["error"].is_string());
    }
    let stats = server.stats();
    assert_eq!(stats["rejected"]["503"], 2, "{stats}");
}

#[test]
fn rate_limit_answers_429_beyond_the_bucket() {
    let server = Server::start(r#"{"rate_limit": 2, "burst": 3}"#);
    let mut c = server.client();
    let statuses: Vec<u16> = (0..10).map(|_| c.get("/tasks").status).collect();
    let ok = statuses.iter().filter(|&&s| s == 200).count();
    assert!((3..=4).contains(&ok), "{statuses:?}");
    assert_eq!(statuses[..3], [200, 200, 200]);
    let limited = c.get("/tasks");
    assert_eq!(limited.status, 429);
    assert!(limited.header("Retry-After").is_some());
    // /health and /stats are not limited.
    assert!((0..20).all(|_| c.get("/health").status == 200));
    let stats = server.stats();
    assert_eq!(stats["rejected"]["429"].as_u64(), Some(11 - ok as u64), "{stats}");
}

#[test]
fn stall_freezes_the_whole_server() {
    let server = Server::start(r#"{"stall_every": "300ms", "stall_for": "150ms"}"#);
    let mut c = server.client();
    let mut latencies = Vec::new();
    let began = Instant::now();
    while began.elapsed() < 1000 * MS {
        let sent = Instant::now();
        assert_eq!(c.get("/health").status, 200);
        latencies.push(sent.elapsed());
        std::thread::sleep(10 * MS);
    }
    let stalled = latencies.iter().filter(|&&l| l > 40 * MS).count();
    let longest = latencies.iter().max().copied().unwrap_or_default();
    assert!(longest >= 100 * MS && longest < 400 * MS, "longest {longest:?}");
    assert!(stalled >= 1 && stalled < latencies.len() / 2, "{stalled} of {} stalled", latencies.len());
}

#[test]
fn error_rate_is_seeded_and_spares_health() {
    let statuses = |seed: u64| -> Vec<u16> {
        let server = Server::start(&format!(r#"{{"error_rate": 0.3, "seed": {seed}}}"#));
        let mut c = server.client();
        assert!((0..50).all(|_| c.get("/health").status == 200));
        (0..200).map(|_| c.get("/tasks").status).collect()
    };
    let (a, b, other) = (statuses(11), statuses(11), statuses(12));
    assert_eq!(a, b, "same seed, same errors");
    assert_ne!(a, other);
    let errors = a.iter().filter(|&&s| s == 500).count();
    assert!((30..=90).contains(&errors), "{errors} errors of 200");
    assert!(a.iter().all(|&s| s == 200 || s == 500));
}

#[test]
fn close_after_closes_the_connection() {
    let server = Server::start(r#"{"close_after": 3}"#);
    let mut c = server.client();
    let first = c.get("/health");
    assert_eq!(first.header("Connection"), None);
    c.get("/tasks");
    let third = c.get("/health");
    assert_eq!((third.status, third.header("Connection")), (200, Some("close")));
    assert!(c.is_closed());
    assert_eq!(server.stats()["connections"]["accepted"], 2);
}

#[test]
fn max_connections_refuses_the_excess() {
    let server = Server::start(r#"{"max_connections": 2}"#);
    let mut a = server.client();
    let mut b = server.client();
    assert_eq!((a.get("/health").status, b.get("/health").status), (200, 200));
    let mut refused = server.client();
    refused.send(request_bytes("GET", "/health", None).as_bytes());
    assert!(refused.read_response().is_none(), "third connection was served");
    drop(a);
    // Once one closes, a new connection is served (the close is seen asynchronously).
    let began = Instant::now();
    let served = loop {
        let mut c = server.client();
        c.send(request_bytes("GET", "/stats", None).as_bytes());
        if let Some(r) = c.read_response() {
            break r;
        }
        assert!(began.elapsed() < 5 * MS * 1000, "never served again");
        std::thread::sleep(20 * MS);
    };
    assert!(served.json()["connections"]["refused"].as_u64() >= Some(1), "{}", served.body);
    assert_eq!(b.get("/health").status, 200);
}

#[test]
fn threads_share_one_port_and_one_count() {
    let server = Server::start(r#"{"threads": 2}"#);
    let handles: Vec<_> = (0..16)
        .map(|_| {
            let addr = server.addr;
            std::thread::spawn(move || {
                let mut c = Client::connect(addr);
                (0..25).filter(|_| c.get("/health").status == 200).count()
            })
        })
        .collect();
    let ok: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(ok, 400);
    let stats = server.stats();
    assert_eq!(stats["received"], 401, "{stats}");
    assert_eq!(stats["connections"]["accepted"], 17);
}

#[test]
fn shards_change_nothing_visible() {
    for shards in [1, 7, 64] {
        let server = Server::start(&format!(r#"{{"shards": {shards}}}"#));
        let mut c = server.client();
        for i in 0..20 {
            assert_eq!(c.request("POST", "/tasks", Some(&format!(r#"{{"n": {i}}}"#))).status, 201);
        }
        let page = c.get("/tasks?offset=5&limit=3").json();
        let ids: Vec<u64> = page["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_u64().unwrap()).collect();
        assert_eq!((ids, page["total"].as_u64()), (vec![6, 7, 8], Some(20)), "shards {shards}");
    }
}

#[test]
fn duration_stops_by_itself() {
    let config = TargetConfig::from_json(r#"{"bind": "127.0.0.1:0", "duration": "300ms"}"#).unwrap();
    let began = Instant::now();
    let summary = serve(config, |_| {}, std::sync::Arc::default()).unwrap();
    let took = began.elapsed();
    assert!(took >= 300 * MS && took < 2000 * MS, "{took:?}");
    assert_eq!(summary.stopped_by, StopReason::Duration);
}

#[test]
fn binds_ipv6_loopback_when_available() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        return; // no IPv6 on this machine
    }
    let server = Server::start(r#"{"bind": "[::1]:0"}"#);
    assert!(server.addr.is_ipv6());
    assert_eq!(server.client().get("/health").status, 200);
}

#[test]
fn invalid_config_is_refused_before_binding() {
    let config = TargetConfig::from_json(r#"{"bind": "127.0.0.1:0", "threads": 0}"#).unwrap();
    let mut called = false;
    let err = serve(config, |_| called = true, std::sync::Arc::default()).unwrap_err();
    assert!(err.to_string().starts_with("--threads:"), "{err}");
    assert!(!called);
}

#[test]
fn many_short_service_times_never_lose_a_wakeup() {
    // One request at a time, so each response depends on one timer expiry and nothing else
    // would wake the server: a lost wakeup would hang here (reads time out after 10 s).
    let server = Server::start(r#"{"workers": 1, "service_time": "uniform:50us-300us", "seed": 3}"#);
    let mut c = server.client();
    let mut slowest = Duration::ZERO;
    let began = Instant::now();
    for _ in 0..2000 {
        let sent = Instant::now();
        assert_eq!(c.get("/tasks").status, 200);
        slowest = slowest.max(sent.elapsed());
    }
    assert!(slowest < 2000 * MS, "slowest {slowest:?}");
    assert!(began.elapsed() >= 2000 * Duration::from_micros(50));
}
