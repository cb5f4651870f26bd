//! conn: one client connection's state, owned by exactly one event-loop thread.
//!
//! A connection carries one request at a time (no pipelining). It holds no buffers of
//! its own in the steady state: reads go through the thread's scratch buffer and the
//! request bytes are shared; only a header block split across reads is stashed.

use std::io;
use std::net::SocketAddr;

use mio::{Registry, Token};

use crate::http::h2::H2Stream;
use crate::http::http1::ResponseParser;
use crate::http::tls::TlsSetup;
use crate::http::transport::Transport;

/// Phase is where a connection is in its request cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Closed: no socket.
    Closed,
    /// Connecting: the TCP connect is in progress.
    Connecting,
    /// Handshaking: TCP is connected, the TLS handshake is in progress; the connection is
    /// not established (nothing is written on it) until it completes.
    Handshaking,
    /// Idle: connected, no request outstanding.
    Idle,
    /// Sending: a request is being written.
    Sending,
    /// Awaiting: the request is written; the response is being read.
    Awaiting,
}

/// Conn is one connection's state.
pub(crate) struct Conn {
    /// transport is the socket (and TLS session), None when closed or over HTTP/2.
    pub transport: Option<Transport>,
    /// stream is, over HTTP/2, the VU's place on a shared connection (None when closed or
    /// over HTTP/1.1).
    pub stream: Option<Box<H2Stream>>,
    /// phase is the connection's state.
    pub phase: Phase,
    /// parser parses the response to the outstanding request.
    pub parser: ResponseParser,
    /// written counts bytes of the current request written so far.
    pub written: usize,
    /// intended_ns is when the outstanding request was due (ns since run start).
    pub intended_ns: u64,
    /// sent_ns is when its first byte was written.
    pub sent_ns: u64,
    /// deadline_ns is when the outstanding connect or request times out.
    pub deadline_ns: u64,
    /// in_idle_list marks open-model connections already in the idle stack.
    pub in_idle_list: bool,
    /// requests counts responses received on the current socket.
    pub requests: u64,
    /// group is the scenario this connection's virtual user belongs to.
    pub group: u32,
    /// vu is the virtual user's index within its scenario on this thread.
    pub vu: u32,
    /// seq is the sequence of the iteration in progress.
    pub seq: u16,
    /// step is the step in progress (u16::MAX: past the last step, pausing).
    pub step: u16,
    /// in_iteration tells whether the VU is inside an iteration.
    pub in_iteration: bool,
    /// thinking tells whether the VU is pausing until `wake_ns`.
    pub thinking: bool,
    /// active tells whether a closed-model VU should run iterations.
    pub active: bool,
    /// wake_ns is when a thinking VU resumes.
    pub wake_ns: u64,
    /// retire_deadline_ns is when a VU removed by a ramp-down must have finished.
    pub retire_deadline_ns: u64,
    /// iterations counts the VU's completed iterations.
    pub iterations: u64,
    /// abort_iteration ends the iteration after the current step (a capture found nothing).
    pub abort_iteration: bool,
    /// values are the VU's variable and captured values, by the scenario's value slot.
    pub values: Vec<Vec<u8>>,
    /// out holds the rendered request of a templated step.
    pub out: Vec<u8>,
    /// stamped asks for kernel receive timestamps (open-model connections, which a
    /// batching worker may read a little after their responses arrived).
    pub stamped: bool,
    /// arrived_real_ns is the kernel's receive stamp of the latest bytes read (CLOCK_REALTIME).
    pub arrived_real_ns: Option<i128>,
    /// arrivals are when the outstanding response's first byte and events arrived.
    pub arrivals: Arrivals,
    /// dispatched_late tells whether the open-model iteration in progress was taken off the
    /// schedule more than 1 ms after it was due: its first request, if late, is the worker's own.
    pub dispatched_late: bool,
    /// backlogged tells whether the worker owes this connection a read (its last read
    /// stopped at the per-wake bound with bytes still to come).
    pub backlogged: bool,
    /// carried is the request in progress while it moves to another connection before its
    /// answer (HTTP/2: refused by the server, or its connection closed to new streams).
    pub carried: Option<Carried>,
    /// resent tells whether the request in progress is a second send after a refusal (a
    /// second refusal fails it).
    pub resent: bool,
}

/// Carried is a request that moves to another connection: it keeps the time it was due (its
/// latency includes the move) and whether a server already refused it once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Carried {
    /// intended_ns is when the request was due (ns since run start).
    pub intended_ns: u64,
    /// refused tells whether a server refused it unprocessed.
    pub refused: bool,
}

impl Conn {
    /// new returns a closed connection slot.
    pub(crate) fn new() -> Conn {
        Conn {
            transport: None,
            stream: None,
            phase: Phase::Closed,
            parser: ResponseParser::new(),
            written: 0,
            intended_ns: 0,
            sent_ns: 0,
            deadline_ns: u64::MAX,
            in_idle_list: false,
            requests: 0,
            group: 0,
            vu: 0,
            seq: 0,
            step: 0,
            in_iteration: false,
            thinking: false,
            active: false,
            wake_ns: 0,
            retire_deadline_ns: u64::MAX,
            iterations: 0,
            abort_iteration: false,
            values: Vec::new(),
            out: Vec::new(),
            stamped: false,
            arrived_real_ns: None,
            arrivals: Arrivals::NONE,
            dispatched_late: false,
            backlogged: false,
            carried: None,
            resent: false,
        }
    }

    /// has_request tells whether a request is outstanding on this connection.
    pub(crate) fn has_request(&self) -> bool {
        matches!(self.phase, Phase::Sending | Phase::Awaiting)
    }

    /// is_establishing tells whether the connection is being opened (TCP connect or TLS
    /// handshake in progress).
    pub(crate) fn is_establishing(&self) -> bool {
        matches!(self.phase, Phase::Connecting | Phase::Handshaking)
    }

    /// open starts a non-blocking connect to `addr` and registers the socket under `token`.
    pub(crate) fn open(
        &mut self,
        addr: SocketAddr,
        tls: Option<&TlsSetup>,
        registry: &Registry,
        token: Token,
    ) -> io::Result<()> {
        self.transport = Some(Transport::connect(addr, tls, self.stamped, registry, token)?);
        self.phase = Phase::Connecting;
        self.requests = 0;
        Ok(())
    }

    /// connect_result checks a connecting socket after an event: Ok(true) once connected,
    /// Ok(false) if still in progress, Err with the connect error otherwise.
    pub(crate) fn connect_result(&mut self) -> io::Result<bool> {
        match self.transport.as_mut() {
            Some(transport) => transport.connect_result(),
            None => Err(io::Error::from(io::ErrorKind::NotConnected)),
        }
    }

    /// close drops the socket (deregistering it) and marks the slot closed.
    pub(crate) fn close(&mut self, registry: &Registry) {
        if let Some(mut transport) = self.transport.take() {
            let _ = registry.deregister(transport.stream_mut());
        }
        // An HTTP/2 VU gives its stream back (h2 resets it if it is still open); the
        // connection stays with its other streams.
        self.stream = None;
        self.phase = Phase::Closed;
        self.deadline_ns = u64::MAX;
    }
}

impl Default for Conn {
    fn default() -> Self {
        Conn::new()
    }
}

/// Arrivals are when a response's first byte and its events (an event stream's) arrived, in
/// ns since the run's start ([`Arrivals::NOT_YET`] until they do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arrivals {
    /// first_byte_ns is when the response's first byte arrived.
    pub first_byte_ns: u64,
    /// first_event_ns is when its first event was complete.
    pub first_event_ns: u64,
    /// last_event_ns is when its latest event was complete.
    pub last_event_ns: u64,
    /// events counts its events so far.
    pub events: u32,
    /// first_token_ns is when its first token event (an event with output text) was complete.
    pub first_token_ns: u64,
    /// last_token_ns is when its latest token event was complete.
    pub last_token_ns: u64,
    /// tokens counts its token events so far.
    pub tokens: u32,
}

impl Arrivals {
    /// NOT_YET marks a time that has not come.
    pub(crate) const NOT_YET: u64 = u64::MAX;
    /// NONE is a response of which nothing has arrived.
    pub(crate) const NONE: Arrivals = Arrivals {
        first_byte_ns: Self::NOT_YET,
        first_event_ns: Self::NOT_YET,
        last_event_ns: Self::NOT_YET,
        events: 0,
        first_token_ns: Self::NOT_YET,
        last_token_ns: Self::NOT_YET,
        tokens: 0,
    };

    /// at is `ns`, or None while it is [`Arrivals::NOT_YET`].
    pub(crate) fn at(ns: u64) -> Option<u64> {
        (ns != Self::NOT_YET).then_some(ns)
    }
}
