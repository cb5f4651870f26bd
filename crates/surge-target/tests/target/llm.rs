//! The inference routes over loopback: the exact bytes of a stream, keep-alive after it, the
//! non-streaming answer, refusals, a client that leaves mid-stream, and the server's counts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use common::{request_bytes, Server};

/// read_stream reads one chunked response to its zero chunk: the head and each chunk's data
/// with the time it arrived (from `began`).
fn read_stream(client: &mut common::Client, began: Instant) -> (String, Vec<(Duration, String)>) {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    // The head, byte by byte (so nothing after it is consumed).
    while !raw.ends_with(b"\r\n\r\n") {
        assert_eq!(client.stream.read(&mut byte).unwrap(), 1, "the head ended early");
        raw.push(byte[0]);
    }
    let head = String::from_utf8(raw).unwrap();
    let mut chunks = Vec::new();
    loop {
        let mut size_line = Vec::new();
        while !size_line.ends_with(b"\r\n") {
            assert_eq!(client.stream.read(&mut byte).unwrap(), 1, "the stream ended early");
            size_line.push(byte[0]);
        }
        let size = usize::from_str_radix(std::str::from_utf8(&size_line).unwrap().trim(), 16).unwrap();
        let mut data = vec![0u8; size + 2];
        client.stream.read_exact(&mut data).unwrap();
        assert!(data.ends_with(b"\r\n"));
        data.truncate(size);
        if size == 0 {
            return (head, chunks);
        }
        chunks.push((began.elapsed(), String::from_utf8(data).unwrap()));
    }
}

#[test]
fn streams_one_event_per_chunk_and_keeps_the_connection() {
    let server = Server::start(r#"{"llm_prefill": "1ms", "llm_decode": "5ms"}"#);
    let mut c = server.client();
    let body = r#"{"model": "m", "messages": [{"role": "user", "content": "one two three"}],
                   "max_tokens": 2, "stream": true, "stream_options": {"include_usage": true}}"#;
    let began = Instant::now();
    c.send(request_bytes("POST", "/v1/chat/completions", Some(body)).as_bytes());
    let (head, chunks) = read_stream(&mut c, began);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    for line in ["Content-Type: text/event-stream", "Cache-Control: no-cache", "Transfer-Encoding: chunked"] {
        assert!(head.contains(&format!("{line}\r\n")), "{head}");
    }
    let events: Vec<&str> = chunks.iter().map(|(_, e)| e.as_str()).collect();
    assert_eq!(events.len(), 4, "{events:?}");
    let json = |event: &str| -> serde_json::Value {
        serde_json::from_str(event.strip_prefix("data: ").unwrap().strip_suffix("\n\n").unwrap()).unwrap()
    };
    let first = json(events[0]);
    assert_eq!(first["object"], "chat.completion.chunk");
    assert_eq!(first["model"], "m");
    assert_eq!(first["choices"][0]["delta"], serde_json::json!({"role": "assistant", "content": "tok "}));
    assert_eq!(first["choices"][0]["finish_reason"], serde_json::Value::Null);
    let second = json(events[1]);
    assert_eq!(second["id"], first["id"]);
    assert_eq!(second["choices"][0]["delta"], serde_json::json!({"content": "tok "}));
    assert_eq!(second["choices"][0]["finish_reason"], "length");
    let usage = json(events[2]);
    assert_eq!(usage["choices"], serde_json::json!([]));
    assert_eq!(usage["usage"], serde_json::json!({"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}));
    assert_eq!(events[3], "data: [DONE]\n\n");
    // The first token comes after the prefill (3 × 1 ms), the second a decode step (5 ms) later.
    assert!(chunks[0].0 >= Duration::from_millis(3), "{chunks:?}");
    assert!(chunks[1].0.saturating_sub(chunks[0].0) >= Duration::from_millis(4), "{chunks:?}");
    // The same connection serves the next request.
    let r = c.request("POST", "/v1/completions", Some(r#"{"prompt": "hi there", "max_tokens": 3}"#));
    assert_eq!(r.status, 200);
    let completion = r.json();
    assert_eq!(completion["object"], "text_completion");
    assert_eq!(completion["choices"][0]["text"], "tok tok tok ");
    assert_eq!(completion["usage"], serde_json::json!({"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}));
    assert_eq!(c.get("/health").status, 200);
    let llm = &server.stats()["llm"];
    assert_eq!(llm["started"], 2);
    assert_eq!(llm["completed"], 2);
    assert_eq!(llm["prompt_tokens"], 5);
    assert_eq!(llm["output_tokens"], 5);
    assert_eq!((llm["in_service"].as_u64(), llm["batch"].as_u64()), (Some(0), Some(8)));
    let summary = server.finish();
    assert_eq!((summary.llm.started, summary.llm.completed, summary.llm.output_tokens), (2, 2, 5));
}

#[test]
fn refuses_bad_requests_and_other_methods() {
    let server = Server::start("{}");
    let mut c = server.client();
    let cases: &[(&str, &str, Option<&str>, u16)] = &[
        ("POST", "/v1/chat/completions", Some("{oops"), 400),
        ("POST", "/v1/chat/completions", Some(r#"{"messages": []}"#), 400),
        ("POST", "/v1/completions", Some(r#"{"prompt": "x", "max_tokens": 5000}"#), 400),
        ("POST", "/v1/completions", Some(r#"{"prompt": "x", "stream": 1}"#), 400),
        ("GET", "/v1/completions", None, 405),
    ];
    for &(method, path, body, status) in cases {
        let r = c.request(method, path, body);
        assert_eq!(r.status, status, "{method} {path} {body:?}: {}", r.body);
        if status == 400 {
            let message = r.json()["error"]["message"].as_str().unwrap_or_default().to_string();
            assert!(!message.is_empty() && !message.contains('\n'), "{}", r.body);
        } else {
            assert_eq!(r.header("Allow"), Some("POST"));
        }
    }
    let stats = server.stats();
    assert_eq!(stats["llm"]["started"], 0);
    assert_eq!(stats["responses"]["POST /v1/chat/completions"]["400"], 2);
    assert_eq!(stats["received_by_route"]["POST /v1/completions"], 2);
}

#[test]
fn a_client_that_leaves_frees_its_place() {
    // One place; the first client leaves after its first token, the second gets the place.
    let server = Server::start(r#"{"llm_batch": 1, "llm_prefill": "0s", "llm_decode": "20ms"}"#);
    let body = r#"{"prompt": "x", "max_tokens": 500, "stream": true}"#;
    let mut first = server.client();
    let began = Instant::now();
    first.send(request_bytes("POST", "/v1/completions", Some(body)).as_bytes());
    let mut buf = [0u8; 4096];
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("data: ") {
        let n = first.stream.read(&mut buf).unwrap();
        assert!(n > 0);
        seen.extend_from_slice(&buf[..n]);
    }
    drop(first);
    let mut second = server.client();
    let short = r#"{"prompt": "x", "max_tokens": 2}"#;
    second.stream.write_all(request_bytes("POST", "/v1/completions", Some(short)).as_bytes()).unwrap();
    let r = second.read_response().unwrap();
    assert_eq!(r.status, 200);
    // Far sooner than the 10 s the first request would have held the place.
    assert!(began.elapsed() < Duration::from_secs(5), "{:?}", began.elapsed());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let llm = server.stats()["llm"].clone();
        if llm["cancelled"] == 1 || Instant::now() > deadline {
            assert_eq!((llm["started"].as_u64(), llm["completed"].as_u64()), (Some(2), Some(1)), "{llm}");
            assert_eq!(llm["cancelled"], 1, "{llm}");
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn http10_streams_end_with_the_connection() {
    let server = Server::start(r#"{"llm_decode": "1ms"}"#);
    let mut c = server.client();
    let body = r#"{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3, "stream": true}"#;
    let raw = format!("POST /v1/chat/completions HTTP/1.0\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    c.send(raw.as_bytes());
    let mut text = String::new();
    c.stream.read_to_string(&mut text).unwrap();
    assert!(text.contains("Connection: close\r\n") && !text.contains("Transfer-Encoding"), "{text}");
    assert_eq!(text.matches("data: {").count(), 3, "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
}

#[test]
fn the_batch_is_shared_by_every_thread() {
    // Two threads, one place: four requests on four connections run one after the other,
    // whichever thread each connection lands on, each holding the place 3 × 5 ms.
    let server = Server::start(r#"{"threads": 2, "llm_batch": 1, "llm_prefill": "0s", "llm_decode": "5ms"}"#);
    let body = r#"{"prompt": "p", "max_tokens": 4}"#;
    let mut clients: Vec<common::Client> = (0..4).map(|_| server.client()).collect();
    let began = Instant::now();
    for c in &mut clients {
        c.send(request_bytes("POST", "/v1/completions", Some(body)).as_bytes());
    }
    let handles: Vec<_> = clients
        .into_iter()
        .map(|mut c| std::thread::spawn(move || (c.read_response().unwrap().status, began.elapsed())))
        .collect();
    let mut done: Vec<(u16, Duration)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    done.sort_by_key(|(_, t)| *t);
    assert!(done.iter().all(|(status, _)| *status == 200), "{done:?}");
    assert!(done[3].1 >= Duration::from_millis(4 * 15), "{done:?}");
    let llm = server.finish().llm;
    assert_eq!((llm.started, llm.completed, llm.output_tokens), (4, 4, 16));
}
