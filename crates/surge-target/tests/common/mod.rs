//! Test helpers: a target served in-process on a free loopback port, and a tiny blocking
//! HTTP/1.1 client over std's TcpStream.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use surge_target::{serve, TargetConfig, TargetError, TargetSummary};

/// TIMEOUT bounds every socket read and write in the tests.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Server is a target running in a background thread; dropping it stops it.
pub struct Server {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<TargetSummary, TargetError>>>,
}

impl Server {
    /// start serves `json` (its `bind` defaults to 127.0.0.1:0) and waits until it listens.
    pub fn start(json: &str) -> Server {
        let mut config = TargetConfig::from_json(json).expect("valid config");
        if config.bind == surge_target::config::DEFAULT_BIND {
            config.bind = "127.0.0.1:0".into();
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || serve(config, move |addr| tx.send(addr).unwrap(), flag));
        let addr = rx.recv_timeout(TIMEOUT).expect("server listens");
        Server { addr, stop, handle: Some(handle) }
    }

    /// finish stops the server and returns its summary.
    pub fn finish(mut self) -> TargetSummary {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().unwrap().join().unwrap().unwrap()
    }

    /// client opens a keep-alive connection.
    pub fn client(&self) -> Client {
        Client::connect(self.addr)
    }

    /// stats fetches /stats on a fresh connection; a connection the server turns away at once
    /// (`max_connections` still counting a load's connections that are closing) is tried again
    /// until TIMEOUT.
    pub fn stats(&self) -> serde_json::Value {
        let deadline = std::time::Instant::now() + TIMEOUT;
        loop {
            let mut client = self.client();
            client.send(request_bytes("GET", "/stats", None).as_bytes());
            match client.read_response() {
                Some(r) => {
                    assert_eq!(r.status, 200);
                    return serde_json::from_str(&r.body).unwrap();
                }
                None if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                None => panic!("no answer to /stats within {TIMEOUT:?}"),
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Response is a parsed response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    /// header is the value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// json parses the body.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// Client is one blocking keep-alive connection.
pub struct Client {
    pub stream: TcpStream,
    pending: Vec<u8>,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect_timeout(&addr, TIMEOUT).unwrap();
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        stream.set_write_timeout(Some(TIMEOUT)).unwrap();
        stream.set_nodelay(true).unwrap();
        Client { stream, pending: Vec::new() }
    }

    /// send writes raw bytes.
    pub fn send(&mut self, raw: &[u8]) {
        self.stream.write_all(raw).unwrap();
    }

    /// request sends one request and reads its response.
    pub fn request(&mut self, method: &str, path: &str, body: Option<&str>) -> Response {
        self.send(request_bytes(method, path, body).as_bytes());
        self.read_response().expect("a response")
    }

    pub fn get(&mut self, path: &str) -> Response {
        self.request("GET", path, None)
    }

    /// read_response reads one response; None when the server closed first.
    pub fn read_response(&mut self) -> Option<Response> {
        loop {
            if let Some(end) = find(&self.pending, b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.pending[..end]).to_string();
                let mut lines = head.split("\r\n");
                let status: u16 = lines.next()?.split(' ').nth(1)?.parse().ok()?;
                let headers: Vec<(String, String)> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
                    .collect();
                let len: usize = headers
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                    .map_or(0, |(_, v)| v.parse().unwrap());
                let total = end + 4 + len;
                while self.pending.len() < total {
                    if !self.fill() {
                        return None;
                    }
                }
                let body = String::from_utf8_lossy(&self.pending[end + 4..total]).to_string();
                self.pending.drain(..total);
                return Some(Response { status, headers, body });
            }
            if !self.fill() {
                return None;
            }
        }
    }

    /// is_closed says whether the server closed the connection (read returns 0 or an error).
    pub fn is_closed(&mut self) -> bool {
        let mut byte = [0u8; 1];
        matches!(self.stream.read(&mut byte), Ok(0) | Err(_))
    }

    fn fill(&mut self) -> bool {
        let mut buf = [0u8; 16 * 1024];
        let read = loop {
            match self.stream.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {} // a signal, not the server
                other => break other,
            }
        };
        match read {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.pending.extend_from_slice(&buf[..n]);
                true
            }
        }
    }
}

/// request_bytes builds a request with Host and, for a body, Content-Length.
pub fn request_bytes(method: &str, path: &str, body: Option<&str>) -> String {
    match body {
        Some(b) => format!("{method} {path} HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n{b}", b.len()),
        None => format!("{method} {path} HTTP/1.1\r\nHost: t\r\n\r\n"),
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
