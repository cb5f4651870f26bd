//! worker sessions: HTTP/2 connections shared by VUs — attaching a VU to one with room,
//! establishing them, driving h2's I/O and wake-ups, and ending them (GOAWAY, errors).
//!
//! A VU over HTTP/2 goes through the same phases as over HTTP/1.1 (connecting, idle,
//! sending, awaiting) and is counted the same way; only its connection is shared: joining a
//! session is its "connect", and the session's establishment completes it.

#[allow(clippy::wildcard_imports)]
use super::*;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::http::h2::{class_of, H2Stream, Session, SessionState, WakeId};
use crate::http::transport::Transport;

/// SESSION_TOKEN_BASE is the first mio token of HTTP/2 connections (VUs' tokens are their
/// indices, far below it).
pub(super) const SESSION_TOKEN_BASE: usize = usize::MAX / 2;

impl Worker {
    /// attach puts VU `id` on an HTTP/2 connection of its scenario with room for another
    /// stream, opening one if none has; the VU is then connecting until the connection is
    /// established (at once, if it is).
    pub(super) fn attach(&mut self, id: usize, now: u64) {
        let g = self.conns[id].group;
        let streams = self.spec.http2_streams.unwrap_or(1);
        let s = match self.sessions.iter().position(|s| s.has_room(g, streams)) {
            Some(s) => s,
            None => match self.open_session(g, now) {
                Ok(s) => s,
                Err(e) => {
                    self.conns[id].close(self.poll.registry());
                    return self.connect_failed(id, FailureClass::from_connect_error(&e), now);
                }
            },
        };
        self.open_conns += 1;
        if let Some(open) = self.groups[g as usize].open.as_mut() {
            open.connecting += 1;
        }
        let connect_timeout = self.scenarios[g as usize].connect_timeout_ns();
        let session = &mut self.sessions[s];
        let mut stream = Box::new(H2Stream::new(id, session, &self.wakes));
        let conn = &mut self.conns[id];
        conn.requests = 0;
        conn.deadline_ns = now.saturating_add(connect_timeout);
        if let SessionState::Ready { send, .. } = &session.state {
            stream.ready(send);
            conn.stream = Some(stream);
            self.established(id, now, false);
        } else {
            conn.stream = Some(stream);
            conn.phase = Phase::Connecting;
            session.waiting.push(id);
        }
    }

    /// open_session starts a new HTTP/2 connection for scenario `g` and returns its index.
    fn open_session(&mut self, g: u32, now: u64) -> io::Result<usize> {
        let s = if let Some(s) = self.sessions.iter().position(Session::is_free) {
            s
        } else {
            self.sessions.push(Session::new(self.sessions.len(), &self.wakes));
            self.sessions.len() - 1
        };
        let transport = Transport::connect(
            self.spec.addr,
            self.spec.tls.as_ref(),
            false,
            self.poll.registry(),
            Token(SESSION_TOKEN_BASE + s),
        )?;
        let session = &mut self.sessions[s];
        session.state = SessionState::Connecting(transport);
        session.group = g;
        session.deadline_ns = now.saturating_add(self.scenarios[g as usize].connect_timeout_ns());
        Ok(s)
    }

    /// drive_h2 polls every session and stream h2 has woken (and those their polling wakes in
    /// turn) until none is left: requests written, responses read, streams completed.
    pub(super) fn drive_h2(&mut self, now: u64) {
        if self.sessions.is_empty() {
            return;
        }
        let mut woken = std::mem::take(&mut self.woken);
        loop {
            self.wakes.take(&mut woken);
            if woken.is_empty() {
                break;
            }
            for &wake in &woken {
                match wake {
                    WakeId::Session(s) => self.poll_session(s, now),
                    WakeId::Stream(id) => self.poll_stream(id, now),
                }
            }
        }
        self.woken = woken;
    }

    /// poll_stream takes what arrived on VU `id`'s stream to its parser, or fails its request.
    fn poll_stream(&mut self, id: usize, now: u64) {
        let conn = &mut self.conns[id];
        let waiting = conn.has_request();
        let Some(stream) = conn.stream.as_mut() else { return };
        stream.rearm();
        if !waiting {
            return;
        }
        match stream.poll() {
            Ok(false) => {}
            Ok(true) => self.read_response(id, now, false),
            Err(_) if stream.refused() && !conn.resent => self.resend_refused(id, now),
            Err(class) => self.fail(id, class, now),
        }
    }

    /// resend_refused sends VU `id`'s request again on another connection: the server
    /// refused it without processing it (a stream above a graceful GOAWAY's last, or
    /// REFUSED_STREAM), as h2 allows and Go's client does. Counted as `retried`; once only.
    fn resend_refused(&mut self, id: usize, now: u64) {
        let conn = &mut self.conns[id];
        let g = conn.group as usize;
        let slot = self.scenarios[g].sequences[conn.seq as usize][conn.step as usize].slot;
        self.metrics.slots[slot].retried += 1;
        conn.carried = Some(Carried { intended_ns: conn.intended_ns, refused: true });
        conn.phase = Phase::Idle;
        self.in_flight -= 1;
        self.close_conn(id, now);
    }

    /// poll_session moves connection `s` on: its TCP connect, TLS handshake, h2 preface, then
    /// its frames both ways (which wake the streams they are for).
    pub(super) fn poll_session(&mut self, s: usize, now: u64) {
        loop {
            let session = &mut self.sessions[s];
            session.waker.rearm();
            match std::mem::replace(&mut session.state, SessionState::Polled) {
                SessionState::Free => return session.state = SessionState::Free,
                SessionState::Polled => return,
                SessionState::Connecting(mut transport) => match transport.connect_result() {
                    Ok(false) => return session.state = SessionState::Connecting(transport),
                    Ok(true) => session.state = SessionState::Securing(transport),
                    Err(e) => return self.end_session(s, FailureClass::from_connect_error(&e), now),
                },
                SessionState::Securing(mut transport) => match transport.handshake() {
                    Ok(false) => return session.state = SessionState::Securing(transport),
                    Ok(true) if transport.is_tls() && !transport.negotiated_h2() => {
                        // The server does not speak HTTP/2 over TLS: nothing can be sent.
                        return self.end_session(s, FailureClass::TlsFailure, now);
                    }
                    Ok(true) => session.start(transport),
                    Err(e) => return self.end_session(s, FailureClass::from_connect_error(&e), now),
                },
                SessionState::Starting(mut handshake) => {
                    let mut cx = Context::from_waker(&session.waker_handle);
                    match handshake.as_mut().poll(&mut cx) {
                        Poll::Pending => return session.state = SessionState::Starting(handshake),
                        Poll::Ready(Err(e)) => return self.end_session(s, class_of(&e), now),
                        Poll::Ready(Ok((send, connection))) => {
                            session.state = SessionState::Ready { send, connection: Box::new(connection) };
                            session.deadline_ns = u64::MAX;
                            let g = session.group as usize;
                            self.metrics.scenarios[g].connections_opened += 1;
                            self.admit_waiting(s, now);
                        }
                    }
                }
                SessionState::Ready { mut send, mut connection } => {
                    let mut cx = Context::from_waker(&session.waker_handle);
                    match Pin::new(&mut *connection).poll(&mut cx) {
                        Poll::Pending => {}
                        Poll::Ready(Ok(())) => {
                            // A graceful end follows a GOAWAY (nginx's after keepalive_requests):
                            // h2 still says so to a request about to be sent.
                            if matches!(send.poll_ready(&mut cx), Poll::Ready(Err(e)) if e.is_go_away()) {
                                self.metrics.http2.goaways += u64::from(session.share.go_away());
                            }
                            return self.end_session(s, FailureClass::ClosedBeforeResponse, now);
                        }
                        Poll::Ready(Err(e)) => {
                            if e.is_go_away() && e.is_remote() {
                                self.metrics.http2.goaways += u64::from(session.share.go_away());
                            }
                            return self.end_session(s, class_of(&e), now);
                        }
                    }
                    // The server's SETTINGS may come after the handshake: read on every poll.
                    let announced = connection.max_concurrent_send_streams();
                    if announced < usize::MAX {
                        self.metrics.http2.record_server_max(announced as u64);
                    }
                    // After the server's GOAWAY no stream may be opened: h2 says so here.
                    let goaway = matches!(send.poll_ready(&mut cx), Poll::Ready(Err(_)));
                    session.state = SessionState::Ready { send, connection };
                    if !session.waiting.is_empty() {
                        self.admit_waiting(s, now);
                    }
                    let session = &mut self.sessions[s];
                    if goaway && session.share.go_away() {
                        self.metrics.http2.goaways += 1;
                        self.leave_draining(s, now);
                    }
                    return;
                }
            }
        }
    }

    /// admit_waiting completes the connect of the VUs that joined session `s` while it was
    /// being established.
    fn admit_waiting(&mut self, s: usize, now: u64) {
        let waiting = std::mem::take(&mut self.sessions[s].waiting);
        for &id in &waiting {
            let session = &self.sessions[s];
            let SessionState::Ready { send, .. } = &session.state else { break };
            let conn = &mut self.conns[id];
            let Some(stream) = conn.stream.as_mut() else { continue };
            if conn.phase != Phase::Connecting || !stream.is_on(session) {
                continue;
            }
            stream.ready(send);
            self.established(id, now, false);
        }
    }

    /// members are the VUs on session `s` now.
    fn members(&self, s: usize) -> Vec<usize> {
        let session = &self.sessions[s];
        (0..self.conns.len()).filter(|&id| self.conns[id].stream.as_ref().is_some_and(|st| st.is_on(session))).collect()
    }

    /// leave_draining moves the idle VUs of session `s`, which the server's GOAWAY closed to new
    /// streams, to another connection; those with a request in flight move once it ends.
    fn leave_draining(&mut self, s: usize, now: u64) {
        for id in self.members(s) {
            if self.conns[id].phase == Phase::Idle {
                self.close_conn(id, now);
            }
        }
    }

    /// end_session closes connection `s` and fails what was on it with `class`: requests in
    /// flight, VUs still connecting; idle VUs go on on another connection.
    pub(super) fn end_session(&mut self, s: usize, class: FailureClass, now: u64) {
        let members = self.members(s);
        // No stream goes on it any more: VUs whose answers are read below move on.
        self.sessions[s].share.draining.set(true);
        // What h2 took off the socket before the end is each stream's to give first: the
        // answers to streams at or below a GOAWAY's last, the refusal of those above it.
        for &id in &members {
            if self.conns[id].has_request() {
                self.poll_stream(id, now);
            }
        }
        let waiting = std::mem::take(&mut self.sessions[s].waiting);
        // The slot may hold a new connection before this ends (a VU moved on re-opens it):
        // what was on this one is known by its share, not its index.
        let ended = self.sessions[s].share.clone();
        let established = self.sessions[s].was_established();
        self.sessions[s].close();
        for id in members.into_iter().chain(waiting) {
            let on_it = self.conns[id].stream.as_ref().is_some_and(|st| st.shares(&ended));
            match self.conns[id].phase {
                _ if !on_it => {}
                Phase::Idle => self.close_conn(id, now),
                Phase::Closed => {}
                // A VU still joining a connection that had been established tried nothing.
                Phase::Connecting if established => self.close_conn(id, now),
                _ => self.fail(id, class, now),
            }
        }
    }

    /// expire_sessions ends connections whose establishment timed out, and closes those no VU
    /// is on any more.
    pub(super) fn expire_sessions(&mut self, now: u64) {
        for s in 0..self.sessions.len() {
            let session = &self.sessions[s];
            if session.is_free() {
                continue;
            }
            if !session.is_ready() && session.deadline_ns <= now {
                self.end_session(s, FailureClass::ConnectTimeout, now);
            } else if session.share.attached.get() == 0 && session.waiting.is_empty() {
                self.sessions[s].close();
            }
        }
    }

    /// open_sessions counts the HTTP/2 connections open or opening.
    pub(super) fn open_sessions(&self) -> u64 {
        self.sessions.iter().filter(|s| !s.is_free()).count() as u64
    }
}
