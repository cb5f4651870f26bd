//! A small loopback HTTP/1.1 server for engine tests: thread per connection, counts every
//! request it parses, and answers according to a Behavior.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use surge_engine::result::Counts;
use surge_engine::RunResult;

/// Behavior is how the test server answers each request.
#[derive(Clone, Copy, Debug)]
pub enum Behavior {
    /// 200 with Content-Length.
    Ok,
    /// 200 with a chunked body split over several writes.
    Chunked,
    /// 200 with a close-delimited body, then close.
    CloseDelimited,
    /// This status with a small body.
    Status(u16),
    /// Never answer (hold the connection).
    Silent,
    /// Reset the connection (RST) instead of answering.
    Reset,
    /// Answer with bytes that are not HTTP.
    Garbage,
    /// Sleep this many ms, then 200.
    Delay(u64),
    /// Accept the connection and never read from it (the client's writes fill the buffers).
    NoRead,
    // Hostile servers: each streams as fast as the socket takes it (until the client goes
    // away, or HOSTILE_FOR has passed), or drips.
    /// A chunked body whose trailer section never ends.
    EndlessTrailers,
    /// A chunk-size line whose extension never ends.
    EndlessExtension,
    /// A header block that never ends (fields, one after another).
    EndlessHeaders,
    /// One header field whose value never ends.
    HugeHeader,
    /// Interim 100 Continue responses, one after another, never the final one.
    EndlessInterim,
    /// A valid chunked body of one-byte chunks that never ends (slow to parse, quick to send).
    EndlessChunks,
    /// 200 with a body of this many bytes (Content-Length), as fast as the socket takes it.
    BigBody(u64),
    /// A valid 200 whose bytes arrive one at a time, this many ms apart.
    Drip(u64),
    /// A response whose status line carries this code text ("000", "600", "2xx").
    RawStatus(&'static str),
}

/// HOSTILE_FOR bounds how long a hostile server streams to one connection.
pub const HOSTILE_FOR: Duration = Duration::from_secs(20);

/// stream_forever writes `head`, then `unit` again and again until the peer goes away or
/// HOSTILE_FOR has passed.
fn stream_forever(stream: &mut TcpStream, head: &[u8], unit: &[u8]) {
    let started = std::time::Instant::now();
    let unit = unit.repeat((16 * 1024 / unit.len()).max(1));
    if stream.write_all(head).is_err() {
        return;
    }
    while started.elapsed() < HOSTILE_FOR && stream.write_all(&unit).is_ok() {}
}

/// endless_parts is what an endless behavior sends: its head once, then its unit forever.
fn endless_parts(behavior: Behavior) -> (&'static [u8], &'static [u8]) {
    const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    match behavior {
        Behavior::EndlessTrailers => {
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n", b"X-Trailer: more\r\n")
        }
        Behavior::EndlessExtension => (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;ext=", b"abcdefgh"),
        Behavior::EndlessHeaders => (b"HTTP/1.1 200 OK\r\n", b"X-Header: more\r\n"),
        Behavior::HugeHeader => (b"HTTP/1.1 200 OK\r\nX-Huge: ", b"abcdefgh"),
        Behavior::EndlessChunks => (CHUNKED, b"1;e\r\nx\r\n"),
        _ => (b"", b"HTTP/1.1 100 Continue\r\n\r\n"),
    }
}

/// drip writes `bytes` one at a time, `gap_ms` apart, until the peer goes away.
fn drip(stream: &mut TcpStream, bytes: &[u8], gap_ms: u64) -> bool {
    bytes.iter().all(|b| {
        std::thread::sleep(Duration::from_millis(gap_ms));
        stream.write_all(&[*b]).is_ok()
    })
}

/// TestServer runs until dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    pub requests: Arc<AtomicU64>,
    pub connections: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl TestServer {
    pub fn start(behavior: Behavior) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicU64::new(0));
        let connections = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, c, s) = (requests.clone(), connections.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                c.fetch_add(1, Ordering::Relaxed);
                let r = r.clone();
                std::thread::spawn(move || serve(stream, behavior, &r));
            }
        });
        TestServer { addr, requests, connections, stop }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn count(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(mut stream: TcpStream, behavior: Behavior, requests: &AtomicU64) {
    let _ = stream.set_nodelay(true);
    if let Behavior::NoRead = behavior {
        std::thread::sleep(Duration::from_secs(10));
        return;
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        // Read one request head (and body by Content-Length).
        let head_end = loop {
            if let Some(pos) = find(&buf, b"\r\n\r\n") {
                break pos + 4;
            }
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let body_len = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap_or(0)))
            .unwrap_or(0);
        while buf.len() < head_end + body_len {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        buf.drain(..head_end + body_len);
        requests.fetch_add(1, Ordering::SeqCst);
        let keep_going = match behavior {
            Behavior::Ok => stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").is_ok(),
            Behavior::Chunked => {
                let parts: [&[u8]; 4] = [
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                    b"3\r\nabc\r\n",
                    b"4;ext=1\r\ndefg\r",
                    b"\n0\r\n\r\n",
                ];
                parts.iter().all(|p| stream.write_all(p).and_then(|()| stream.flush()).is_ok())
            }
            Behavior::CloseDelimited => {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody until close");
                false
            }
            Behavior::Status(code) => {
                let msg = format!("HTTP/1.1 {code} X\r\nContent-Length: 1\r\n\r\nx");
                stream.write_all(msg.as_bytes()).is_ok()
            }
            Behavior::Silent => {
                std::thread::sleep(Duration::from_secs(60));
                false
            }
            Behavior::Reset => {
                let sock = socket2::SockRef::from(&stream);
                let _ = sock.set_linger(Some(Duration::ZERO));
                false
            }
            Behavior::Garbage => {
                let _ = stream.write_all(b"NOT HTTP AT ALL\r\n\r\n");
                std::thread::sleep(Duration::from_millis(50));
                false
            }
            Behavior::NoRead => false,
            Behavior::EndlessTrailers
            | Behavior::EndlessExtension
            | Behavior::EndlessHeaders
            | Behavior::HugeHeader
            | Behavior::EndlessChunks
            | Behavior::EndlessInterim => {
                let (head, unit) = endless_parts(behavior);
                stream_forever(&mut stream, head, unit);
                false
            }
            Behavior::BigBody(len) => {
                let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n");
                let started = std::time::Instant::now();
                let block = [b'x'; 16 * 1024];
                let mut left = len;
                let mut ok = stream.write_all(head.as_bytes()).is_ok();
                while ok && left > 0 && started.elapsed() < HOSTILE_FOR {
                    let n = left.min(block.len() as u64);
                    ok = stream.write_all(&block[..n as usize]).is_ok();
                    left -= n;
                }
                ok && left == 0
            }
            Behavior::Drip(gap_ms) => drip(&mut stream, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", gap_ms),
            Behavior::RawStatus(code) => {
                let msg = format!("HTTP/1.1 {code} X\r\nContent-Length: 1\r\n\r\nx");
                stream.write_all(msg.as_bytes()).is_ok()
            }
            Behavior::Delay(ms) => {
                std::thread::sleep(Duration::from_millis(ms));
                stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").is_ok()
            }
        };
        if !keep_going {
            return;
        }
    }
}

/// assert_adds_up checks the identities the docs state for one set of counts.
pub fn assert_adds_up(r: &Counts, what: &str) {
    assert_eq!(
        r.sent,
        r.responses + r.unanswered + r.retried + r.interrupted - r.interrupted_unsent,
        "{what}: sent: {r:?}"
    );
    assert_eq!(r.responses, r.status_codes.values().sum::<u64>(), "{what}: responses: {r:?}");
    let classes: u64 = r.failure_classes.iter().filter(|(k, _)| *k != "interrupted").map(|(_, n)| n).sum();
    assert!(r.unanswered <= classes, "{what}: unanswered are failures without a response: {r:?}");
    let ended = r.succeeded + r.failed + r.interrupted;
    if ended > 0 {
        let want = (r.failed + r.interrupted) as f64 / ended as f64;
        assert!((r.failure_rate - want).abs() < 1e-12, "{what}: failure_rate {} want {want}", r.failure_rate);
        assert!((r.success_rate + r.failure_rate - 1.0).abs() < 1e-12, "{what}: rates");
    }
}

/// assert_result_adds_up checks the run, every scenario, tag and interval.
pub fn assert_result_adds_up(result: &RunResult, what: &str) {
    assert_adds_up(&result.requests, what);
    for s in &result.scenarios {
        assert_adds_up(&s.requests, &format!("{what}: scenario {}", s.name));
    }
    for t in &result.tags {
        assert_adds_up(&t.requests, &format!("{what}: tag {}", t.tag));
    }
    let sum = |f: fn(&Counts) -> u64| result.intervals.iter().map(|i| f(&i.requests)).sum::<u64>();
    assert_eq!(sum(|c| c.sent), result.requests.sent, "{what}: intervals add up to the run");
    assert_eq!(sum(|c| c.responses), result.requests.responses, "{what}: intervals add up to the run");
    assert_eq!(sum(|c| c.unanswered), result.requests.unanswered, "{what}: intervals add up to the run");
    assert_eq!(sum(|c| c.interrupted), result.requests.interrupted, "{what}: intervals add up to the run");
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
