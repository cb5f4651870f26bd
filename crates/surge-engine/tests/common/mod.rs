//! A small loopback HTTP/1.1 server for engine tests: thread per connection, counts every
//! request it parses, and answers according to a Behavior.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
                let parts: [&[u8]; 4] = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"3\r\nabc\r\n", b"4;ext=1\r\ndefg\r", b"\n0\r\n\r\n"];
                parts.iter().all(|p| stream.write_all(p).and_then(|_| stream.flush()).is_ok())
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

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
