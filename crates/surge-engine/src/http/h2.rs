//! h2: HTTP/2 on the event loop. One TCP (or TLS) connection, a [`Session`], carries the
//! streams of several VUs at once. Framing, HPACK and flow control are the h2 crate's; this
//! module drives its futures from the mio loop, without an async runtime: a socket event or an
//! h2 wake-up puts the session or stream on the worker's [`Wakes`] queue, and the worker polls
//! what is queued. Each stream is turned back into the HTTP/1.1 bytes the rest of the engine
//! parses (status line, headers, the body as it arrives), so checks, captures, event streams
//! and their timing work the same on both protocols.

use std::future::Future;
use std::io::{self, Write};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use bytes::Bytes;
use h2::client::{Connection, ResponseFuture, SendRequest};
use h2::RecvStream;
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH};
use http::{Method, Request, Response, Uri};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::http::transport::Transport;
use crate::measure::failure::FailureClass;

/// STREAM_WINDOW is each stream's receive window: large enough that a response of up to a
/// MiB needs no WINDOW_UPDATE round trip before its end.
const STREAM_WINDOW: u32 = 1 << 20;

/// CONNECTION_WINDOW is the connection's receive window, shared by its streams.
const CONNECTION_WINDOW: u32 = 16 << 20;

/// MAX_REQUEST_HEADERS bounds the header lines of a request turned into HTTP/2.
const MAX_REQUEST_HEADERS: usize = 64;

/// WakeId names what an h2 wake-up is for: a session's connection, or a VU's stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WakeId {
    /// Session is a connection, by its index among the worker's sessions.
    Session(usize),
    /// Stream is a VU's stream, by the VU's index.
    Stream(usize),
}

/// Wakes is the worker's queue of h2 wake-ups, filled by the wakers h2 holds.
#[derive(Debug, Default)]
pub(crate) struct Wakes {
    queue: Mutex<Vec<WakeId>>,
}

impl Wakes {
    /// take moves the queued wake-ups into `into` (emptied first).
    pub(crate) fn take(&self, into: &mut Vec<WakeId>) {
        into.clear();
        if let Ok(mut queue) = self.queue.lock() {
            std::mem::swap(&mut *queue, into);
        }
    }
}

/// IdWaker queues its id once until the worker takes it: h2 may wake a task many times
/// between two polls.
#[derive(Debug)]
pub(crate) struct IdWaker {
    id: WakeId,
    queued: AtomicBool,
    wakes: Arc<Wakes>,
}

impl IdWaker {
    /// new returns the waker of `id` and its handle (to re-arm it before each poll).
    pub(crate) fn new(id: WakeId, wakes: &Arc<Wakes>) -> (Arc<IdWaker>, Waker) {
        let arc = Arc::new(IdWaker { id, queued: AtomicBool::new(false), wakes: wakes.clone() });
        let waker = Waker::from(arc.clone());
        (arc, waker)
    }

    /// rearm lets the next wake-up queue the id again; called as it is polled.
    pub(crate) fn rearm(&self) {
        self.queued.store(false, Ordering::Relaxed);
    }

    /// queue puts the id on the worker's queue unless it is there already.
    pub(crate) fn queue(&self) {
        if !self.queued.swap(true, Ordering::Relaxed) {
            if let Ok(mut queue) = self.wakes.queue.lock() {
                queue.push(self.id);
            }
        }
    }
}

impl Wake for IdWaker {
    fn wake(self: Arc<Self>) {
        self.queue();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.queue();
    }
}

/// SocketIo is a connection's byte stream as h2 wants it. A read or write that would block
/// returns Pending without registering anything: the socket is registered with the worker's
/// poll (edge-triggered), whose next event for it polls the session again.
pub(crate) struct SocketIo(pub(crate) Transport);

impl AsyncRead for SocketIo {
    fn poll_read(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            match this.0.read(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for SocketIo {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            match this.0.write(buf) {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut().0.flush() {
            Ok(true) => Poll::Ready(Ok(())),
            Ok(false) => Poll::Pending,
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let _ = self.get_mut().0.stream_mut().shutdown(std::net::Shutdown::Write);
        Poll::Ready(Ok(()))
    }
}

/// Handshake is h2's client handshake in progress (writing the connection preface).
type Handshake = Pin<Box<dyn Future<Output = Result<(SendRequest<Bytes>, Connection<SocketIo, Bytes>), h2::Error>>>>;

/// SessionState is where a connection is in its life.
pub(crate) enum SessionState {
    /// Free: the slot holds no connection.
    Free,
    /// Polled: the connection's state is out of the slot while it is polled (the slot is not
    /// free: a VU moving on meanwhile must not open a new connection in it).
    Polled,
    /// Connecting: the TCP connect is in progress.
    Connecting(Transport),
    /// Securing: TCP is connected, the TLS handshake is in progress.
    Securing(Transport),
    /// Starting: h2's handshake (the preface and SETTINGS) is being written.
    Starting(Handshake),
    /// Ready: streams may be opened.
    Ready {
        /// send opens streams (each VU holds a clone).
        send: SendRequest<Bytes>,
        /// connection does the connection's I/O when polled.
        connection: Box<Connection<SocketIo, Bytes>>,
    },
}

/// Share is what a session's VUs and the session both see: how many VUs it holds, and
/// whether the server's GOAWAY closed it to new streams.
#[derive(Debug, Default)]
pub(crate) struct Share {
    /// attached counts the VUs on this connection.
    pub attached: std::cell::Cell<u32>,
    /// draining tells whether the server sent GOAWAY: no new stream goes on it.
    pub draining: std::cell::Cell<bool>,
    /// in_flight counts its streams whose responses have not ended.
    pub in_flight: std::cell::Cell<u32>,
    /// opened counts the streams it carried.
    pub opened: std::cell::Cell<u64>,
}

impl Share {
    /// go_away marks the connection closed to new streams by the server's GOAWAY: true the
    /// first time (one GOAWAY counted per connection, whichever path saw it first).
    pub(crate) fn go_away(&self) -> bool {
        !self.draining.replace(true)
    }
}

/// Session is one HTTP/2 connection of a worker and its VUs.
pub(crate) struct Session {
    /// state is the connection's state.
    pub state: SessionState,
    /// group is the scenario whose VUs it serves.
    pub group: u32,
    /// share is its count of VUs and its GOAWAY flag.
    pub share: Rc<Share>,
    /// waiting are the VUs attached while it was being established.
    pub waiting: Vec<usize>,
    /// deadline_ns is when an establishing connection times out.
    pub deadline_ns: u64,
    /// waker is the session's own (h2's connection task).
    pub waker: Arc<IdWaker>,
    /// waker_handle is `waker` as a Waker.
    pub waker_handle: Waker,
}

impl Session {
    /// new returns a free session slot with index `index`.
    pub(crate) fn new(index: usize, wakes: &Arc<Wakes>) -> Session {
        let (waker, waker_handle) = IdWaker::new(WakeId::Session(index), wakes);
        Session {
            state: SessionState::Free,
            group: 0,
            share: Rc::new(Share::default()),
            waiting: Vec::new(),
            deadline_ns: u64::MAX,
            waker,
            waker_handle,
        }
    }

    /// is_ready tells whether streams may be opened on it now.
    pub(crate) fn is_ready(&self) -> bool {
        matches!(self.state, SessionState::Ready { .. })
    }

    /// was_established tells whether the connection got as far as h2's handshake (its connect
    /// deadline is lifted then), also while its state is out of the slot being polled.
    pub(crate) fn was_established(&self) -> bool {
        self.deadline_ns == u64::MAX
    }

    /// is_free tells whether the slot holds no connection.
    pub(crate) fn is_free(&self) -> bool {
        matches!(self.state, SessionState::Free)
    }

    /// has_room tells whether another VU of `group` may join: open or opening, not draining,
    /// under `streams` VUs.
    pub(crate) fn has_room(&self, group: u32, streams: u32) -> bool {
        !self.is_free() && self.group == group && !self.share.draining.get() && self.share.attached.get() < streams
    }

    /// start begins the h2 handshake over an established transport.
    pub(crate) fn start(&mut self, transport: Transport) {
        let mut builder = h2::client::Builder::new();
        builder.initial_window_size(STREAM_WINDOW).initial_connection_window_size(CONNECTION_WINDOW);
        let handshake = builder.handshake::<SocketIo, Bytes>(SocketIo(transport));
        self.state = SessionState::Starting(Box::pin(handshake));
    }

    /// close drops the connection and frees the slot (a new Share: VUs still holding the old
    /// one are no longer counted).
    pub(crate) fn close(&mut self) {
        self.state = SessionState::Free;
        self.share = Rc::new(Share::default());
        self.waiting.clear();
        self.deadline_ns = u64::MAX;
    }
}

/// H2Stream is a VU's place on a session: the stream of its request in progress, and the
/// response turned into HTTP/1.1 bytes for the VU's parser.
pub(crate) struct H2Stream {
    share: Rc<Share>,
    send: Option<SendRequest<Bytes>>,
    response: Option<ResponseFuture>,
    body: Option<RecvStream>,
    chunked: bool,
    inbound: Vec<u8>,
    read_at: usize,
    ended: bool,
    waker: Arc<IdWaker>,
    waker_handle: Waker,
    converted: Option<Converted>,
    in_flight: std::cell::Cell<bool>,
    refused: bool,
}

/// Converted is the last request head a stream turned into HTTP/2: a VU that sends the same
/// request again (the common case: a static URL) reuses it instead of parsing and validating
/// every header again.
struct Converted {
    head: Vec<u8>,
    request: Request<()>,
}

impl H2Stream {
    /// new attaches VU `vu` to `session` (counted in its share).
    pub(crate) fn new(vu: usize, session: &Session, wakes: &Arc<Wakes>) -> H2Stream {
        let share = session.share.clone();
        share.attached.set(share.attached.get() + 1);
        let (waker, waker_handle) = IdWaker::new(WakeId::Stream(vu), wakes);
        H2Stream {
            share,
            send: None,
            response: None,
            body: None,
            chunked: false,
            inbound: Vec::new(),
            read_at: 0,
            ended: false,
            waker,
            waker_handle,
            converted: None,
            in_flight: std::cell::Cell::new(false),
            refused: false,
        }
    }

    /// is_on tells whether this stream is on the connection `session` holds now (not one
    /// that slot held before).
    pub(crate) fn is_on(&self, session: &Session) -> bool {
        self.shares(&session.share)
    }

    /// shares tells whether this stream is on the connection whose share is `share`.
    pub(crate) fn shares(&self, share: &Rc<Share>) -> bool {
        Rc::ptr_eq(&self.share, share)
    }

    /// ready gives the VU its handle for opening streams, once its session is established.
    pub(crate) fn ready(&mut self, send: &SendRequest<Bytes>) {
        self.send = Some(send.clone());
    }

    /// submit turns an HTTP/1.1 request (`bytes`: head and Content-Length body) into an
    /// HTTP/2 request and opens its stream; `https` gives the `:scheme`. It returns the
    /// streams in flight on the connection now (this one included) and how many it carried.
    pub(crate) fn submit(&mut self, bytes: &[u8], https: bool) -> Result<(u64, u64), FailureClass> {
        let send = self.send.as_mut().ok_or(FailureClass::ClosedBeforeResponse)?;
        // A head ends at its first blank line, so bytes that start with the cached head have
        // that same head.
        let (request, body) = match &self.converted {
            Some(last) if bytes.starts_with(&last.head) => (last.request.clone(), &bytes[last.head.len()..]),
            _ => {
                let (request, head_len) = to_h2_request(bytes, https).ok_or(FailureClass::OtherIo)?;
                self.converted = Some(Converted { head: bytes[..head_len].to_vec(), request: request.clone() });
                (request, &bytes[head_len..])
            }
        };
        let (response, mut stream) = send.send_request(request, body.is_empty()).map_err(|e| class_of(&e))?;
        if !body.is_empty() {
            stream.send_data(Bytes::copy_from_slice(body), true).map_err(|e| class_of(&e))?;
        }
        self.response = Some(response);
        self.body = None;
        self.inbound.clear();
        self.read_at = 0;
        self.ended = false;
        self.end_flight();
        self.refused = false;
        self.in_flight.set(true);
        let share = &self.share;
        share.in_flight.set(share.in_flight.get() + 1);
        share.opened.set(share.opened.get() + 1);
        Ok((u64::from(share.in_flight.get()), share.opened.get()))
    }

    /// end_flight takes the stream out of its connection's count in flight, once.
    fn end_flight(&self) {
        if self.in_flight.replace(false) {
            self.share.in_flight.set(self.share.in_flight.get().saturating_sub(1));
        }
    }

    /// poll takes what arrived for the stream into its bytes: Ok(true) when there is more to
    /// read (or the stream ended), Ok(false) when nothing came, Err when the stream failed.
    pub(crate) fn poll(&mut self) -> Result<bool, FailureClass> {
        let mut cx = Context::from_waker(&self.waker_handle);
        let mut progressed = false;
        if let Some(response) = self.response.as_mut() {
            match Pin::new(response).poll(&mut cx) {
                Poll::Pending => return Ok(false),
                Poll::Ready(Err(e)) => {
                    self.response = None;
                    self.end_flight();
                    self.refused = is_refused(&e);
                    return Err(class_of(&e));
                }
                Poll::Ready(Ok(head)) => {
                    self.response = None;
                    let (parts, body) = head.into_parts();
                    let ended = body.is_end_stream();
                    self.chunked = write_head(&mut self.inbound, &Response::from_parts(parts, ()), ended);
                    if ended {
                        self.ended = true;
                        self.end_flight();
                    } else {
                        self.body = Some(body);
                    }
                    progressed = true;
                }
            }
        }
        if let Some(body) = self.body.as_mut() {
            loop {
                match body.poll_data(&mut cx) {
                    Poll::Pending => break,
                    Poll::Ready(None) => {
                        if self.chunked {
                            self.inbound.extend_from_slice(b"0\r\n\r\n");
                        }
                        self.body = None;
                        self.ended = true;
                        self.end_flight();
                        progressed = true;
                        break;
                    }
                    Poll::Ready(Some(Ok(data))) => {
                        let _ = body.flow_control().release_capacity(data.len());
                        if data.is_empty() {
                            continue;
                        }
                        if self.chunked {
                            let _ = write!(self.inbound, "{:x}\r\n", data.len());
                            self.inbound.extend_from_slice(&data);
                            self.inbound.extend_from_slice(b"\r\n");
                        } else {
                            self.inbound.extend_from_slice(&data);
                        }
                        progressed = true;
                    }
                    Poll::Ready(Some(Err(e))) => {
                        self.body = None;
                        self.end_flight();
                        self.refused = is_refused(&e);
                        return Err(class_of(&e));
                    }
                }
            }
        }
        Ok(progressed)
    }

    /// read gives the response bytes not yet read: WouldBlock when there are none for now,
    /// Ok(0) once the stream ended and all were read.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = &self.inbound[self.read_at..];
        if left.is_empty() {
            return if self.ended { Ok(0) } else { Err(io::ErrorKind::WouldBlock.into()) };
        }
        let n = left.len().min(buf.len());
        buf[..n].copy_from_slice(&left[..n]);
        self.read_at += n;
        if self.read_at == self.inbound.len() {
            self.inbound.clear();
            self.read_at = 0;
        }
        Ok(n)
    }

    /// refused tells whether the stream's last failure was the server refusing it unprocessed
    /// (see [`is_refused`]): its request may be sent again.
    pub(crate) fn refused(&self) -> bool {
        self.refused
    }

    /// rearm lets h2's next wake-up of this stream queue it again (it was taken).
    pub(crate) fn rearm(&self) {
        self.waker.rearm();
    }

    /// go_away marks the VU's connection closed to new streams by the server's GOAWAY: true
    /// the first time ([`Share::go_away`]).
    pub(crate) fn go_away(&self) -> bool {
        self.share.go_away()
    }

    /// draining tells whether the VU's connection is closed to new streams (GOAWAY).
    pub(crate) fn draining(&self) -> bool {
        self.share.draining.get()
    }
}

impl Drop for H2Stream {
    fn drop(&mut self) {
        self.end_flight();
        self.share.attached.set(self.share.attached.get().saturating_sub(1));
    }
}

/// class_of classifies an h2 error: the server's RST_STREAM is `stream_reset`, a stream its
/// GOAWAY refused is `goaway`, socket errors as on HTTP/1.1, anything else (a protocol
/// error, ours or the server's) `invalid_response`.
pub(crate) fn class_of(error: &h2::Error) -> FailureClass {
    if let Some(io) = error.get_io() {
        FailureClass::from_io_error(io)
    } else if error.is_reset() && error.is_remote() {
        FailureClass::StreamReset
    } else if error.is_go_away() && error.is_remote() {
        FailureClass::GoAway
    } else {
        FailureClass::InvalidResponse
    }
}

/// is_refused tells whether an h2 error says the server did not process the stream, so that
/// its request may be sent again (RFC 9113, 8.7): a graceful GOAWAY (NO_ERROR) fails only the
/// streams above its last stream id, and REFUSED_STREAM says so outright. A GOAWAY with an
/// error fails every stream, processed or not: those are not retried.
pub(crate) fn is_refused(error: &h2::Error) -> bool {
    error.is_remote()
        && ((error.is_go_away() && error.reason() == Some(h2::Reason::NO_ERROR))
            || (error.is_reset() && error.reason() == Some(h2::Reason::REFUSED_STREAM)))
}

/// to_h2_request parses an HTTP/1.1 request into an HTTP/2 one and the length of its head
/// (the body follows): the Host header becomes `:authority`, connection-specific headers are
/// dropped. None if it does not parse.
fn to_h2_request(bytes: &[u8], https: bool) -> Option<(Request<()>, usize)> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_REQUEST_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    let httparse::Status::Complete(head_len) = parsed.parse(bytes).ok()? else { return None };
    let method = Method::from_bytes(parsed.method?.as_bytes()).ok()?;
    let mut authority = "localhost";
    let mut request = Request::builder().method(method);
    for header in parsed.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("host") {
            authority = std::str::from_utf8(header.value).ok()?;
        } else if !is_connection_specific(name) {
            request = request
                .header(HeaderName::from_bytes(name.as_bytes()).ok()?, HeaderValue::from_bytes(header.value).ok()?);
        }
    }
    let uri = Uri::builder()
        .scheme(if https { "https" } else { "http" })
        .authority(authority)
        .path_and_query(parsed.path?)
        .build()
        .ok()?;
    let request = request.uri(uri).body(()).ok()?;
    Some((request, head_len))
}

/// is_connection_specific tells whether a header belongs to HTTP/1.1's connection and has no
/// place in HTTP/2 (RFC 9113, 8.2.2).
fn is_connection_specific(name: &str) -> bool {
    ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
}

/// write_head writes a response's status line and headers as HTTP/1.1; true when its body
/// is to be framed as chunks (it has no Content-Length and is not over with the headers).
fn write_head(out: &mut Vec<u8>, head: &Response<()>, ended: bool) -> bool {
    let status = head.status();
    let _ = write!(out, "HTTP/1.1 {} {}\r\n", status.as_u16(), status.canonical_reason().unwrap_or("Status"));
    let has_length = head.headers().contains_key(CONTENT_LENGTH);
    for (name, value) in head.headers() {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let chunked = !has_length && !ended;
    if chunked {
        out.extend_from_slice(b"transfer-encoding: chunked\r\n");
    } else if !has_length {
        out.extend_from_slice(b"content-length: 0\r\n");
    }
    out.extend_from_slice(b"\r\n");
    chunked
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_request_keeps_its_method_path_headers_and_body() {
        let bytes = b"POST /v1/x?q=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        let (request, head_len) = to_h2_request(bytes, false).expect("parses");
        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.uri().to_string(), "http://127.0.0.1:8080/v1/x?q=1");
        assert_eq!(request.headers()["content-type"], "application/json");
        assert!(!request.headers().contains_key("connection"));
        assert!(!request.headers().contains_key("host"));
        assert_eq!(&bytes[head_len..], b"{}");
    }

    #[test]
    fn a_head_without_length_is_chunked_unless_it_ended() {
        let response = Response::builder().status(200).header("content-type", "text/event-stream").body(()).unwrap();
        let mut out = Vec::new();
        assert!(write_head(&mut out, &response, false));
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n") && text.contains("transfer-encoding: chunked\r\n"));
        let mut out = Vec::new();
        assert!(!write_head(&mut out, &response, true));
        assert!(String::from_utf8(out).unwrap().contains("content-length: 0\r\n"));
    }

    #[test]
    fn wakes_queue_an_id_once_until_it_is_polled() {
        let wakes = Arc::new(Wakes::default());
        let (arc, waker) = IdWaker::new(WakeId::Stream(7), &wakes);
        waker.wake_by_ref();
        waker.wake_by_ref();
        let mut taken = Vec::new();
        wakes.take(&mut taken);
        assert_eq!(taken, vec![WakeId::Stream(7)]);
        waker.wake_by_ref();
        wakes.take(&mut taken);
        assert!(taken.is_empty(), "not re-armed yet");
        arc.rearm();
        waker.wake_by_ref();
        wakes.take(&mut taken);
        assert_eq!(taken, vec![WakeId::Stream(7)]);
    }
}
