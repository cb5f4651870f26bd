//! One connection: read requests, answer them in order, keep it alive.
//!
//! Per request the steady state is one `read` and one `write` system call: requests are parsed
//! in place in a fixed buffer, responses are appended to an output buffer that is written in
//! one go when no further complete request is buffered (so pipelined requests share a write)
//! or before any wait. `/health` is answered from constant bytes with no allocation.
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::model::worker_gate::Worker;
use crate::model::Decision;
use crate::server::http::{self, Framing, Head, Parsed};
use crate::server::openai::{self, Api, Completion, CompletionRequest};
use crate::server::routes::{self, Reply};
use crate::server::shared::Shared;
use crate::server::timer::Timer;
use crate::stats::counters::{Route, ThreadCounters};

/// READ_BUFFER is each connection's read buffer to begin with (enough for common request
/// heads); it grows to [`MAX_HEAD`] for a longer head and to head + body for a body.
pub const READ_BUFFER: usize = 2 * 1024;
/// MAX_HEAD is the largest request head accepted (else 431).
pub const MAX_HEAD: usize = 8 * 1024;
/// MAX_BODY is the largest request body accepted (else 413).
pub const MAX_BODY: usize = 1024 * 1024;

/// Conn is one connection's socket and buffers.
struct Conn {
    stream: TcpStream,
    out: Vec<u8>,
    shared: Arc<Shared>,
    counters: Arc<ThreadCounters>,
    timer: Timer,
    /// worker is the worker this connection holds until it closes (`--thread-per-connection`).
    worker: Option<Worker>,
    /// must_close says the connection must close after this response: it was answered 503 for
    /// want of a place to wait for a worker, or it streamed to an HTTP/1.0 client (no chunks:
    /// the stream's end is the connection's).
    must_close: bool,
}

/// serve_connection answers requests on `stream` until the client closes, an error occurs,
/// or the connection must close (`Connection: close`, `--close-after`, a malformed request).
pub async fn serve_connection(stream: TcpStream, shared: Arc<Shared>, counters: Arc<ThreadCounters>, timer: Timer) {
    let _ = stream.set_nodelay(true);
    let mut conn =
        Conn { stream, out: Vec::with_capacity(256), shared, counters, timer, worker: None, must_close: false };
    let mut buf = vec![0u8; READ_BUFFER];
    let (mut start, mut end) = (0usize, 0usize);
    let mut served: u64 = 0;
    let mut continue_sent = false;
    loop {
        let head = match http::parse(&buf[start..end]) {
            Parsed::Complete(head) => head,
            Parsed::Partial => {
                if end - start == buf.len() {
                    if buf.len() >= MAX_HEAD {
                        conn.reject(431, "request head larger than 8 KiB").await;
                        return;
                    }
                    buf.resize(MAX_HEAD, 0);
                }
                if !conn.flush().await || !conn.read_more(&mut buf, &mut start, &mut end).await {
                    return;
                }
                continue;
            }
            Parsed::Invalid { status, reason } => {
                conn.reject(status, reason).await;
                return;
            }
        };
        let total = head.head_len + head.content_length;
        if head.content_length > MAX_BODY {
            conn.reject(413, "request body larger than 1 MiB").await;
            return;
        }
        if end - start < total {
            if head.expect_continue && !continue_sent {
                conn.out.extend_from_slice(http::CONTINUE);
                continue_sent = true;
            }
            if buf.len() < total {
                buf.resize(total, 0);
            }
            if !conn.flush().await || !conn.read_more(&mut buf, &mut start, &mut end).await {
                return;
            }
            continue;
        }
        continue_sent = false;
        served += 1;
        let close = !head.keep_alive || conn.shared.plan.close_after.is_some_and(|n| served >= n);
        let body = &buf[start + head.head_len..start + total];
        if !conn.answer(&head, body, close).await {
            return;
        }
        let close = close || conn.must_close;
        start += total;
        if start == end {
            (start, end) = (0, 0);
            if buf.len() > MAX_HEAD {
                // Grown for a large body: give the memory back.
                buf.truncate(READ_BUFFER);
                buf.shrink_to_fit();
            }
        }
        if close {
            conn.flush().await;
            return;
        }
    }
}

impl Conn {
    /// answer appends the response to one complete request, waiting as the model says;
    /// false when the connection failed.
    async fn answer(&mut self, head: &Head<'_>, body: &[u8], close: bool) -> bool {
        // HEAD is served as GET, without the body.
        let head_only = head.method == "HEAD";
        let method = if head_only { "GET" } else { head.method };
        let framing = Framing { close, http10: head.http10, head_only };
        let route = routes::classify(method, head.path);
        self.counters.record_received(route);
        if route.is_inference() {
            return self.complete(route, body, framing).await;
        }
        if route.is_modeled() && self.worker.is_none() && self.shared.gate.is_some() {
            match self.take_worker().await {
                Some(true) => {}
                Some(false) => {
                    self.must_close = true;
                    let reply = Reply::error(503, "every worker is held and the queue of connections is full");
                    let framing = Framing { close: true, ..framing };
                    http::write_response(
                        &mut self.out,
                        503,
                        reply.content_type,
                        &[("Retry-After", "1")],
                        reply.body.bytes(),
                        framing,
                    );
                    self.counters.record_response(route, 503);
                    return true;
                }
                None => return false,
            }
        }
        if route == Route::Health {
            if self.shared.model.has_stall() && !self.hold(self.shared.model.now_ns()).await {
                return false;
            }
            http::write_health(&mut self.out, framing);
            self.counters.record_response(route, 200);
            return true;
        }
        let reply = if route.is_modeled() {
            match self.shared.model.decide() {
                Decision::RateLimited { retry_after_s } => {
                    Reply::error(429, "rate limit exceeded").with_header("Retry-After", retry_after_s.to_string())
                }
                Decision::Overloaded { retry_after_s } => Reply::error(503, "all workers busy and the queue is full")
                    .with_header("Retry-After", retry_after_s.to_string()),
                Decision::Serve { mut due_ns, burn_ns, fail } => {
                    if let Some(burn_ns) = burn_ns {
                        match self.burn(burn_ns).await {
                            Some(Ok(())) => due_ns = due_ns.max(self.shared.model.now_ns()),
                            Some(Err(reply)) => return self.write(route, reply, framing).await,
                            None => return false,
                        }
                    }
                    let delay = if route == Route::Delay { routes::delay_ms(head.path) } else { Ok(0) };
                    let due_ns = due_ns.saturating_add(delay.as_ref().map_or(0, |ms| ms * 1_000_000));
                    if !self.hold(due_ns).await {
                        return false;
                    }
                    match (fail, delay) {
                        (true, _) => Reply::error(500, "injected error (--error-rate)"),
                        (false, Err(reply)) => reply,
                        (false, Ok(_)) => {
                            let reply = routes::handle(route, method, head.path, head.query, body, &self.shared);
                            let store = &self.shared.store;
                            if let Some(touch) = routes::touch(route, head.path, &reply).filter(|_| store.holds()) {
                                let until = store.lock_until(touch, self.shared.model.now_ns());
                                if !self.hold(until).await {
                                    return false;
                                }
                            }
                            reply
                        }
                    }
                }
            }
        } else {
            routes::handle(route, method, head.path, head.query, body, &self.shared)
        };
        self.write(route, reply, framing).await
    }

    /// write appends `reply` (after any stall) and counts it; false when the connection failed.
    async fn write(&mut self, route: Route, reply: Reply, framing: Framing) -> bool {
        if self.shared.model.has_stall() && !self.hold(self.shared.model.now_ns()).await {
            return false;
        }
        let header = reply.header.as_ref().map(|(name, value)| (*name, value.as_str()));
        http::write_response(
            &mut self.out,
            reply.status,
            reply.content_type,
            header.as_slice(),
            reply.body.bytes(),
            framing,
        );
        self.counters.record_response(route, reply.status);
        true
    }

    /// complete answers an inference request (`POST /v1/chat/completions`, `/v1/completions`):
    /// 400 for an invalid one; else it waits for a place in the batch, prefills, and writes each
    /// token when it is due, as an event on its own or all in one response at the end. False
    /// when the connection failed or its client went away (the place is given up at once).
    async fn complete(&mut self, route: Route, body: &[u8], framing: Framing) -> bool {
        let api = if route == Route::ChatCompletions { Api::Chat } else { Api::Completions };
        let request = match openai::parse_request(api, body, self.shared.plan.llm.output_tokens) {
            Ok(request) => request,
            Err(bad) => return self.write(route, bad.reply(), framing).await,
        };
        self.counters.record_llm_started(request.prompt_tokens);
        let created = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let completion = Completion::new(api, self.shared.llm.next_id(), created, &request.model);
        let framing = Framing { close: framing.close || (request.stream && framing.http10), ..framing };
        if request.stream {
            // The head goes out at once, as a streaming server's does; the tokens follow.
            http::write_stream_head(&mut self.out, framing);
            self.counters.record_response(route, 200);
            self.must_close |= framing.close;
        }
        let completed = self.generate(route, &request, &completion, framing).await;
        if completed {
            self.counters.record_llm_completed();
        } else {
            self.counters.record_llm_cancelled();
        }
        completed
    }

    /// generate runs one request through the batch (see `model::llm`): the wait for a place,
    /// the prefill, then a token per decode step, each written and flushed when due (when
    /// streaming); true once the whole completion is written or buffered for the connection's
    /// next write.
    async fn generate(
        &mut self,
        route: Route,
        request: &CompletionRequest,
        completion: &Completion,
        framing: Framing,
    ) -> bool {
        if !self.flush().await {
            return false;
        }
        let shared = Arc::clone(&self.shared);
        let Some(_sequence) = shared.llm.admit().await else { return false };
        // A client that left while it waited gives its place up before the prefill.
        if peer_closed(&self.stream) {
            return false;
        }
        // Due times are computed from the model, not from when the previous write ended, so
        // a late wake-up is not carried into the next token.
        let mut due = Instant::now() + shared.llm.prefill(request.prompt_tokens);
        let tokens = request.max_tokens;
        for index in 0..tokens {
            if index > 0 {
                due += shared.llm.step();
            }
            self.timer.sleep_until(due).await;
            if peer_closed(&self.stream) {
                return false;
            }
            if !request.stream {
                continue;
            }
            let last = index + 1 == tokens;
            http::write_chunk(&mut self.out, completion.token_event(index, last).as_bytes(), framing);
            if last {
                break; // the end of the stream goes out in the same write
            }
            if !self.flush().await {
                return false;
            }
            self.counters.record_llm_tokens(1);
        }
        if request.stream {
            if request.include_usage {
                let usage = completion.usage_event(request.prompt_tokens, tokens);
                http::write_chunk(&mut self.out, usage.as_bytes(), framing);
            }
            http::write_chunk(&mut self.out, openai::DONE, framing);
            http::write_last_chunk(&mut self.out, framing);
            if !self.flush().await {
                return false;
            }
            self.counters.record_llm_tokens(1);
        } else {
            let body = completion.body(request.prompt_tokens, tokens);
            http::write_response(&mut self.out, 200, routes::JSON, &[], body.as_bytes(), framing);
            self.counters.record_response(route, 200);
            self.counters.record_llm_tokens(tokens);
        }
        true
    }

    /// take_worker waits for a worker of this connection's own (`--thread-per-connection`):
    /// `Some(true)` once it holds one, `Some(false)` when there is no place left to wait, and
    /// `None` when the connection failed or its client closed it while it waited (counted as
    /// abandoned: it is dropped unanswered and the worker moves on).
    async fn take_worker(&mut self) -> Option<bool> {
        if !self.flush().await {
            return None;
        }
        let Some(gate) = &self.shared.gate else { return Some(true) };
        let Some(worker) = gate.take().await else { return Some(false) };
        self.worker = Some(worker);
        if peer_closed(&self.stream) {
            self.counters.record_abandoned();
            return None;
        }
        self.counters.record_given_worker();
        Some(true)
    }

    /// burn has a service thread burn `burn_ns` of its CPU time for this request
    /// (`--service-cpu`), first writing what is buffered: `Some(Ok(()))` once done,
    /// `Some(Err(503))` at once when every thread is busy and the queue is full, `None` when the
    /// connection failed or the server is stopping.
    async fn burn(&mut self, burn_ns: u64) -> Option<Result<(), Reply>> {
        let Some(cpu) = &self.shared.cpu else { return Some(Ok(())) };
        let Some(burned) = cpu.submit(burn_ns) else {
            let waiting = cpu.load().queue_depth as u64 + 1;
            let (mean_ns, workers) = self.shared.plan.service.as_ref().map_or((0, 1), |s| {
                (crate::model::service_time::nanos_of(s.service_time.mean()), s.workers.max(1) as u64)
            });
            let retry_after_s = (mean_ns.saturating_mul(waiting) / workers).div_ceil(1_000_000_000).max(1);
            let reply = Reply::error(503, "all workers busy and the queue is full")
                .with_header("Retry-After", retry_after_s.to_string());
            return Some(Err(reply));
        };
        if !self.flush().await {
            return None;
        }
        burned.await.ok().map(|_| Ok(()))
    }

    /// hold waits until server time `due_ns` (and past any stall), first writing what is
    /// buffered so waiting never delays earlier responses; false when the write failed.
    async fn hold(&mut self, due_ns: u64) -> bool {
        let model = &self.shared.model;
        let release = model.release_ns(due_ns);
        if release <= model.now_ns() {
            return true;
        }
        let at = model.instant_at(release);
        if !self.flush().await {
            return false;
        }
        self.timer.sleep_until(at).await;
        true
    }

    /// flush writes the output buffer; false when the connection failed.
    async fn flush(&mut self) -> bool {
        if self.out.is_empty() {
            return true;
        }
        let ok = self.stream.write_all(&self.out).await.is_ok();
        self.out.clear();
        ok
    }

    /// read_more moves unread bytes to the front of `buf` and reads more after them; false on
    /// end of stream or error.
    async fn read_more(&mut self, buf: &mut [u8], start: &mut usize, end: &mut usize) -> bool {
        if *start > 0 {
            buf.copy_within(*start..*end, 0);
            *end -= *start;
            *start = 0;
        }
        let read = self.stream.read(&mut buf[*end..]);
        let read = match self.shared.plan.keepalive_timeout {
            // An idle client past the keep-alive timeout is closed, freeing its worker.
            Some(idle) => tokio::time::timeout(idle, read).await.unwrap_or(Ok(0)),
            None => read.await,
        };
        match read {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                *end += n;
                true
            }
        }
    }

    /// reject answers a request that cannot be served with `status` and closes.
    async fn reject(&mut self, status: u16, reason: &str) {
        let reply = Reply::error(status, reason);
        let framing = Framing { close: true, ..Framing::default() };
        http::write_response(&mut self.out, status, reply.content_type, &[], reply.body.bytes(), framing);
        self.counters.record_response(Route::Invalid, status);
        self.flush().await;
    }
}

/// peer_closed says whether the client has closed (or reset) the connection, without
/// consuming anything: a peek that finds the end of the stream. Bytes waiting, or nothing yet,
/// mean it is still open.
#[cfg(unix)]
fn peer_closed(stream: &TcpStream) -> bool {
    let mut byte = [std::mem::MaybeUninit::<u8>::uninit()];
    match socket2::SockRef::from(stream).peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::Interrupted,
    }
}

#[cfg(not(unix))]
fn peer_closed(_stream: &TcpStream) -> bool {
    false
}
