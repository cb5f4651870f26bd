//! End-to-end tests of the routes over loopback: health, delay, the Task API, stats, framing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::{Duration, Instant};

use common::{request_bytes, Server};
use serde_json::json;

#[test]
#[allow(clippy::type_complexity)]
fn task_api_round_trip() {
    let server = Server::start("{}");
    let mut c = server.client();
    // method, path, body, expected status, expected body (JSON) or None to skip
    let cases: &[(&str, &str, Option<&str>, u16, Option<serde_json::Value>)] = &[
        (
            "POST",
            "/tasks",
            Some(r#"{"title": "write tests", "id": 42}"#),
            201,
            Some(json!({"id": 1, "title": "write tests"})),
        ),
        ("POST", "/tasks", Some(r#"{"title": "ship"}"#), 201, Some(json!({"id": 2, "title": "ship"}))),
        ("GET", "/tasks/1", None, 200, Some(json!({"id": 1, "title": "write tests"}))),
        (
            "PUT",
            "/tasks/1",
            Some(r#"{"title": "write tests", "done": true}"#),
            200,
            Some(json!({"id": 1, "title": "write tests", "done": true})),
        ),
        (
            "GET",
            "/tasks?limit=1&offset=1",
            None,
            200,
            Some(json!({"tasks": [{"id": 2, "title": "ship"}], "total": 2, "offset": 1, "limit": 1})),
        ),
        ("DELETE", "/tasks/2", None, 204, None),
        (
            "GET",
            "/tasks",
            None,
            200,
            Some(
                json!({"tasks": [{"id": 1, "title": "write tests", "done": true}], "total": 1, "offset": 0, "limit": 100}),
            ),
        ),
        // errors
        ("GET", "/tasks/2", None, 404, Some(json!({"error": "/tasks/2 not found"}))),
        ("GET", "/tasks/abc", None, 404, None),
        ("PUT", "/tasks/99", Some("{}"), 404, None),
        ("DELETE", "/tasks/2", None, 404, None),
        ("POST", "/tasks", Some("{not json"), 400, None),
        ("POST", "/tasks", Some("[1, 2]"), 400, Some(json!({"error": "a task must be a JSON object"}))),
        ("PUT", "/tasks/1", Some(""), 400, None),
        ("GET", "/tasks?limit=5000", None, 400, None),
        ("PATCH", "/tasks/1", Some("{}"), 405, None),
        ("GET", "/nowhere", None, 404, None),
    ];
    for (method, path, body, status, want) in cases {
        let r = c.request(method, path, *body);
        assert_eq!(r.status, *status, "{method} {path}: {}", r.body);
        if let Some(want) = want {
            assert_eq!(&r.json(), want, "{method} {path}");
        }
        if *status >= 400 {
            assert!(r.json()["error"].is_string(), "{method} {path}: error body {}", r.body);
        }
    }
    let created = c.request("POST", "/tasks", Some("{}"));
    assert_eq!(created.header("Location"), Some("/tasks/3"));
    assert_eq!(c.request("PATCH", "/tasks/1", None).header("Allow"), Some("GET, HEAD, PUT, DELETE"));
}

#[test]
fn health_and_delay() {
    let server = Server::start("{}");
    let mut c = server.client();
    let r = c.get("/health");
    assert_eq!((r.status, r.body.as_str(), r.header("Content-Type")), (200, "ok", Some("text/plain")));
    let began = Instant::now();
    assert_eq!(c.get("/delay/150").status, 200);
    assert!(began.elapsed() >= Duration::from_millis(150));
    assert_eq!(c.get("/delay/abc").status, 400);
}

#[test]
fn delay_does_not_block_other_requests() {
    let server = Server::start("{}");
    let mut slow = server.client();
    slow.send(request_bytes("GET", "/delay/1000", None).as_bytes());
    let began = Instant::now();
    for _ in 0..20 {
        assert_eq!(server.client().get("/health").status, 200);
    }
    assert!(began.elapsed() < Duration::from_millis(900), "health waited for the delay");
    assert_eq!(slow.read_response().map(|r| r.status), Some(200));
}

#[test]
fn stats_count_every_request_exactly() {
    let server = Server::start("{}");
    let mut c = server.client();
    for _ in 0..250 {
        c.get("/health");
    }
    for _ in 0..7 {
        c.request("POST", "/tasks", Some("{}"));
    }
    c.get("/tasks/999");
    let stats = server.stats();
    assert_eq!(stats["received"], 250 + 7 + 1 + 1, "{stats}");
    assert_eq!(stats["received_by_route"]["GET /health"], 250);
    assert_eq!(stats["received_by_route"]["GET /stats"], 1);
    assert_eq!(stats["responses"]["GET /health"]["200"], 250);
    assert_eq!(stats["responses"]["POST /tasks"]["201"], 7);
    assert_eq!(stats["by_status"]["404"], 1);
    assert_eq!(stats["tasks"], 7);
    assert_eq!(stats["rejected"]["total"], 0);
    assert_eq!(stats["connections"]["accepted"], 2);

    assert_eq!(c.request("POST", "/stats/reset", None).status, 200);
    c.get("/health");
    let stats = server.stats();
    assert_eq!(stats["received"], 2, "one /health and this /stats: {stats}");
    assert_eq!(stats["responses"]["GET /health"]["200"], 1);
    assert!(stats["responses"].get("POST /tasks").is_none());

    let summary = server.finish();
    assert_eq!(summary.received, 250 + 7 + 1 + 1 + 1 + 1 + 1);
    assert_eq!(summary.by_status.get("201"), Some(&7));
}

#[test]
fn stats_tasks_counts_reads_by_id() {
    let server = Server::start(r#"{"threads": 2, "shards": 3}"#);
    let mut c = server.client();
    for _ in 0..5 {
        c.request("POST", "/tasks", Some("{}"));
    }
    // method, path, times: only GET (or HEAD) of a stored id answered 200 counts
    let cases: &[(&str, &str, usize)] = &[
        ("GET", "/tasks/1", 3),
        ("HEAD", "/tasks/2", 2),
        ("GET", "/tasks/4", 1),
        ("GET", "/tasks/99", 4),
        ("GET", "/tasks/abc", 1),
        ("GET", "/tasks?limit=10", 2),
        ("PUT", "/tasks/3", 1),
    ];
    for &(method, path, times) in cases {
        for _ in 0..times {
            let body = (method == "PUT").then_some("{}");
            c.send(common::request_bytes(method, path, body).as_bytes());
            if method == "HEAD" {
                // No body follows a HEAD response, whatever its Content-Length says.
                let mut head = Vec::new();
                while !head.ends_with(b"\r\n\r\n") {
                    let mut byte = [0u8; 1];
                    assert_eq!(std::io::Read::read(&mut c.stream, &mut byte).unwrap(), 1);
                    head.push(byte[0]);
                }
            } else {
                c.read_response().unwrap();
            }
        }
    }
    // Reads from many connections, and so from both server threads, are merged.
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let mut c = server.client();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    assert_eq!(c.get("/tasks/5").status, 200);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let reads = c.get("/stats/tasks");
    assert_eq!((reads.status, reads.header("Content-Type")), (200, Some("application/json")));
    assert_eq!(reads.json(), json!({"reads_by_id": {"1": 3, "2": 2, "4": 1, "5": 200}, "tasks": 5, "reads": 206}));
    assert!(reads.body.starts_with(r#"{"reads_by_id":{"1":3,"2":2,"4":1,"5":200}"#), "ids in order: {}", reads.body);

    let stats = server.stats();
    assert_eq!(stats["received_by_route"]["GET /stats/tasks"], 1, "{stats}");
    assert_eq!(stats["responses"]["GET /tasks/{id}"]["200"], 206);
    assert_eq!(c.request("POST", "/stats/tasks", None).header("Allow"), Some("GET, HEAD"));

    // A deleted task's reads go with it; a reset starts every read count from zero.
    c.request("DELETE", "/tasks/4", None);
    assert_eq!(c.get("/stats/tasks").json()["reads"], 205);
    assert_eq!(c.request("POST", "/stats/reset", None).status, 200);
    assert_eq!(c.get("/stats/tasks").json(), json!({"reads_by_id": {}, "tasks": 4, "reads": 0}));
    c.get("/tasks/3");
    assert_eq!(c.get("/stats/tasks").json(), json!({"reads_by_id": {"3": 1}, "tasks": 4, "reads": 1}));
}

#[test]
fn stats_tasks_is_outside_the_server_model_and_counts_only_served_reads() {
    // Every modeled request is answered 500 (the route is not executed): no read is counted,
    // and a 1 req/s limit never touches /stats/tasks.
    let server = Server::start(r#"{"error_rate": 1, "rate_limit": 1, "burst": 100}"#);
    let mut c = server.client();
    assert_eq!(c.request("POST", "/tasks", Some("{}")).status, 500);
    for _ in 0..3 {
        assert_eq!(c.get("/tasks/1").status, 500);
    }
    for _ in 0..200 {
        assert_eq!(c.get("/stats/tasks").status, 200);
    }
    assert_eq!(c.get("/stats/tasks").json(), json!({"reads_by_id": {}, "tasks": 0, "reads": 0}));
}

#[test]
fn pipelined_requests_answered_in_order() {
    let server = Server::start("{}");
    let mut c = server.client();
    let mut batch = String::new();
    for i in 0..50 {
        batch.push_str(&request_bytes("POST", "/tasks", Some(&format!(r#"{{"n": {i}}}"#))));
        batch.push_str(&request_bytes("GET", "/health", None));
    }
    c.send(batch.as_bytes());
    for i in 0..50 {
        let created = c.read_response().unwrap();
        assert_eq!(created.json()["n"], i);
        assert_eq!(c.read_response().unwrap().body, "ok");
    }
}

#[test]
fn framing_edge_cases() {
    let server = Server::start("{}");
    // raw request, expected status, connection closed afterwards
    let big_head = format!("GET /health HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(9000));
    let long_head = format!("GET /health HTTP/1.1\r\nX-Long: {}\r\n\r\n", "a".repeat(5000));
    let cases: &[(&str, u16, bool)] = &[
        ("GET /health HTTP/1.0\r\n\r\n", 200, true),
        ("GET /health HTTP/1.1\r\nConnection: close\r\n\r\n", 200, true),
        ("BROKEN\r\n\r\n", 400, true),
        ("POST /tasks HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501, true),
        ("POST /tasks HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n", 413, true),
        (&big_head, 431, true),
        (&long_head, 200, false),
    ];
    for (raw, status, closed) in cases {
        let mut c = server.client();
        c.send(raw.as_bytes());
        let r = c.read_response().expect("a response");
        assert_eq!(r.status, *status, "{}", &raw[..raw.len().min(60)]);
        if *closed {
            assert!(c.is_closed(), "{}", &raw[..raw.len().min(60)]);
        } else {
            assert_eq!(c.get("/health").status, 200, "kept open after {}", &raw[..raw.len().min(60)]);
        }
    }
    // HEAD gets GET's headers, Content-Length included, and no body; the connection stays usable.
    let mut c = server.client();
    c.send(b"HEAD /health HTTP/1.1\r\n\r\nHEAD /tasks/1 HTTP/1.1\r\n\r\nGET /health HTTP/1.1\r\n\r\n");
    let mut raw = Vec::new();
    while !raw.ends_with(b"\r\n\r\nok") {
        let mut chunk = [0u8; 4096];
        let n = std::io::Read::read(&mut c.stream, &mut chunk).unwrap();
        assert!(n > 0, "closed early");
        raw.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&raw);
    let heads: Vec<&str> = text.split("HTTP/1.1 ").filter(|s| !s.is_empty()).collect();
    assert_eq!(heads.len(), 3, "{text}");
    assert!(heads[0].starts_with("200 OK") && heads[0].ends_with("Content-Length: 2\r\n\r\n"), "{text}");
    assert!(heads[1].starts_with("404 Not Found") && heads[1].ends_with("\r\n\r\n"), "{text}");
    // HTTP/1.0 keep-alive is acknowledged and kept.
    let mut c = server.client();
    c.send(b"GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let r = c.read_response().unwrap();
    assert_eq!(r.header("Connection"), Some("keep-alive"));
    assert_eq!(c.get("/health").status, 200);
    // Expect: 100-continue gets the interim response before the body is sent.
    let mut c = server.client();
    c.send(b"POST /tasks HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n");
    assert_eq!(c.read_response().map(|r| r.status), Some(100));
    c.send(b"{}");
    assert_eq!(c.read_response().map(|r| r.status), Some(201));
    // A body split over several writes is reassembled.
    let mut c = server.client();
    let body = format!(r#"{{"blob": "{}"}}"#, "x".repeat(50_000));
    let raw = request_bytes("POST", "/tasks", Some(&body));
    for chunk in raw.as_bytes().chunks(7000) {
        c.send(chunk);
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(c.read_response().map(|r| r.status), Some(201));
    assert_eq!(c.get("/health").status, 200);
    let stats = server.stats();
    assert_eq!(stats["responses"]["invalid"]["400"], 1, "{stats}");
}
