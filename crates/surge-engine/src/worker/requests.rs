//! worker requests: writing a step's request, reading and parsing its response, checks and captures, failures and timeouts.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Worker {
    // ----- requests -----

    pub(super) fn send_step(&mut self, id: usize, intended_ns: u64, now: u64) {
        let g = self.conns[id].group as usize;
        let conn = &mut self.conns[id];
        let step = &self.scenarios[g].sequences[conn.seq as usize][conn.step as usize];
        conn.intended_ns = intended_ns;
        conn.resent = conn.carried.take().is_some_and(|carried| carried.refused);
        conn.sent_ns = now;
        conn.deadline_ns = now.saturating_add(step.timeout_ns);
        conn.written = 0;
        conn.arrived_real_ns = None;
        conn.arrivals = Arrivals::NONE;
        if step.retain {
            conn.parser.begin_retaining(step.head, MAX_RETAINED_BODY);
        } else {
            conn.parser.begin(step.head);
        }
        if let RequestBytes::Template(template) = &step.request {
            template.render(&conn.values, &mut conn.out);
        }
        conn.phase = Phase::Sending;
        self.in_flight += 1;
        self.note_concurrency();
        self.write_request(id, now);
    }

    pub(super) fn write_request(&mut self, id: usize, now: u64) {
        let conn = &mut self.conns[id];
        let g = conn.group as usize;
        let step = &self.scenarios[g].sequences[conn.seq as usize][conn.step as usize];
        let request: &[u8] = match &step.request {
            RequestBytes::Static(bytes) => bytes,
            RequestBytes::Template(_) => &conn.out,
        };
        let failure = if let Some(stream) = conn.stream.as_mut() {
            // HTTP/2: the whole request goes to h2 at once; its connection's poll writes it.
            conn.written = request.len();
            match stream.submit(request, self.spec.tls.is_some()) {
                Ok((concurrent, nth)) => {
                    self.metrics.http2.record_stream(concurrent, nth);
                    // Polled once so that h2 knows whom to wake when the response comes.
                    stream.poll().err()
                }
                Err(FailureClass::GoAway) => {
                    // The server's GOAWAY came first: the request was not sent, and goes on
                    // another connection (as h2 allows for a stream never opened).
                    self.metrics.http2.goaways += u64::from(stream.go_away());
                    conn.carried = Some(Carried { intended_ns: conn.intended_ns, refused: conn.resent });
                    conn.phase = Phase::Idle;
                    self.in_flight -= 1;
                    return self.close_conn(id, now);
                }
                Err(class) => Some(class),
            }
        } else {
            let Some(transport) = conn.transport.as_mut() else { return };
            loop {
                if conn.written >= request.len() {
                    // Sent means on the wire: TLS records still buffered wait for the socket.
                    match transport.flush() {
                        Ok(true) => break None,
                        Ok(false) => return,
                        Err(e) => break Some(FailureClass::from_io_error(&e)),
                    }
                }
                match transport.write(&request[conn.written..]) {
                    Ok(0) => break Some(FailureClass::ClosedBeforeResponse),
                    Ok(n) => conn.written += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => break Some(FailureClass::from_io_error(&e)),
                }
            }
        };
        if let Some(class) = failure {
            self.fail(id, class, now);
        } else {
            conn.phase = Phase::Awaiting;
            let lag = conn.sent_ns.saturating_sub(conn.intended_ns);
            // A second send after a refusal is not the schedule's: its first send was paced.
            let paced = self.groups[g].open.is_some() && conn.step == 0 && !conn.resent;
            let metrics = &mut self.metrics.slots[step.slot];
            metrics.record_sent(request.len(), lag, paced);
            // Counted with the send, in its interval: a dispatch just before an interval's end
            // whose send waits past it belongs to the later one, as its late send does.
            if paced && lag > LATE_THRESHOLD_NS && conn.dispatched_late {
                metrics.late_dispatched += 1;
            }
        }
    }

    pub(super) fn flush_tls(&mut self, id: usize, now: u64) {
        let Some(transport) = self.conns[id].transport.as_mut() else { return };
        if let Err(e) = transport.flush() {
            self.fail(id, FailureClass::from_io_error(&e), now);
        }
    }

    /// read_response reads and parses what arrived; `hangup` says the peer has closed
    /// (its FIN may have come in the same edge as the last bytes).
    pub(super) fn read_response(&mut self, id: usize, now: u64, hangup: bool) {
        let conn = &mut self.conns[id];
        let g = conn.group as usize;
        let plain = conn.transport.as_ref().is_some_and(|t| !t.is_tls());
        let mut reads = 0;
        loop {
            if reads == MAX_READS_PER_WAKE {
                // A server sending faster than we parse gets no more of this wake-up: the
                // loop goes round (timers, timeouts, a stop) and comes back for the rest,
                // which raises no new edge.
                if !conn.backlogged {
                    conn.backlogged = true;
                    self.backlog.push((id, hangup));
                }
                return;
            }
            reads += 1;
            let read = match (conn.stream.as_mut(), conn.transport.as_mut()) {
                (Some(stream), _) => stream.read(&mut self.scratch),
                (None, Some(transport)) if conn.stamped => {
                    transport.read_stamped(&mut self.scratch, &mut conn.arrived_real_ns)
                }
                (None, Some(transport)) => transport.read(&mut self.scratch),
                (None, None) => return,
            };
            let n = match read {
                Ok(0) => return self.on_eof(id, now),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.fail(id, FailureClass::from_io_error(&e), now),
            };
            let slot = self.scenarios[g].sequences[conn.seq as usize][conn.step as usize].slot;
            self.metrics.slots[slot].bytes_received += n as u64;
            let fed = conn.parser.feed(&self.scratch[..n]);
            // When the bytes arrived (the kernel's stamp, as for the response's end): the
            // first byte's time, and that of the events they completed.
            let scanned = conn.parser.take_events();
            if conn.arrivals.first_byte_ns == Arrivals::NOT_YET || scanned.events > 0 {
                let arrived = arrival_ns(conn.arrived_real_ns, conn.sent_ns, self.realtime_offset_ns, now);
                let arrivals = &mut conn.arrivals;
                if arrivals.first_byte_ns == Arrivals::NOT_YET {
                    arrivals.first_byte_ns = arrived;
                }
                if scanned.events > 0 {
                    let last = (Arrivals::at(arrivals.last_event_ns), Arrivals::at(arrivals.last_token_ns));
                    let counts = (scanned.events, scanned.tokens);
                    self.metrics.slots[slot].record_events(counts, conn.intended_ns, arrived, last);
                    if last.0.is_none() {
                        arrivals.first_event_ns = arrived;
                    }
                    arrivals.last_event_ns = arrived;
                    arrivals.events += scanned.events;
                    if scanned.tokens > 0 {
                        if last.1.is_none() {
                            arrivals.first_token_ns = arrived;
                        }
                        arrivals.last_token_ns = arrived;
                        arrivals.tokens += scanned.tokens;
                    }
                }
            }
            match fed {
                Ok(ParseStep::NeedMore) => {
                    // Edge-triggered: a short read means the socket is drained, and the
                    // next bytes will raise a new edge, which saves the read that returns
                    // EAGAIN. Not so when the peer closed: its EOF raises no new edge.
                    let must_drain = hangup || conn.parser.reads_until_close();
                    if plain && n < self.scratch.len() && !must_drain {
                        return;
                    }
                }
                Ok(ParseStep::Complete { consumed }) => return self.on_response(id, now, consumed < n || hangup),
                Err(_) => return self.fail(id, FailureClass::InvalidResponse, now),
            }
        }
    }

    /// read_backlog goes on reading the connections whose last read stopped at
    /// [`MAX_READS_PER_WAKE`] with bytes still to come.
    pub(super) fn read_backlog(&mut self, now: u64) {
        let mut backlog = std::mem::take(&mut self.backlog);
        for &(id, hangup) in &backlog {
            self.conns[id].backlogged = false;
            if self.conns[id].has_request() {
                self.read_response(id, now, hangup);
            }
        }
        if self.backlog.is_empty() {
            backlog.clear();
            self.backlog = backlog; // keep the allocation
        }
    }

    /// read_while_idle handles bytes or a close on a connection with nothing outstanding.
    pub(super) fn read_while_idle(&mut self, id: usize, now: u64) {
        let Some(transport) = self.conns[id].transport.as_mut() else { return };
        match transport.read(&mut self.scratch) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            // The server closed an idle keep-alive connection, or sent bytes nobody asked
            // for: either way the connection cannot be trusted with a request.
            _ => self.close_conn(id, now),
        }
    }

    pub(super) fn on_eof(&mut self, id: usize, now: u64) {
        match self.conns[id].parser.finish_on_eof() {
            Ok(()) => self.on_response(id, now, true),
            Err(_) => self.fail(id, FailureClass::ClosedBeforeResponse, now),
        }
    }

    pub(super) fn on_response(&mut self, id: usize, now: u64, must_close: bool) {
        let conn = &mut self.conns[id];
        let g = conn.group as usize;
        let step = &self.scenarios[g].sequences[conn.seq as usize][conn.step as usize];
        let metrics = &mut self.metrics.slots[step.slot];
        let status = conn.parser.status();
        // The response ended when its last bytes reached the machine: the kernel's stamp,
        // when there is one, so a worker that read it a little later (batching) adds nothing.
        let ended = arrival_ns(conn.arrived_real_ns, conn.sent_ns, self.realtime_offset_ns, now);
        conn.arrived_real_ns = None;
        let latency = ended.saturating_sub(conn.intended_ns);
        let service = ended.saturating_sub(conn.sent_ns);
        if conn.phase == Phase::Sending {
            // The server answered before reading the whole request (e.g. 413): the
            // server did receive it, so it counts as sent; the framing is now unknown.
            let lag = conn.sent_ns.saturating_sub(conn.intended_ns);
            metrics.record_sent(conn.written, lag, false);
        }
        // An HTTP/2 VU whose connection got GOAWAY moves to another for its next request.
        let reuse = conn.parser.keep_alive()
            && !must_close
            && conn.phase == Phase::Awaiting
            && !conn.stream.as_ref().is_some_and(|s| s.draining());
        conn.phase = Phase::Idle;
        conn.deadline_ns = u64::MAX;
        conn.requests += 1;
        self.in_flight -= 1;
        self.groups[g].last_end_ns = now;
        metrics.record_response(status, latency, service);
        let first_byte = Arrivals::at(conn.arrivals.first_byte_ns).unwrap_or(ended).min(ended);
        metrics.first_byte.record(first_byte.saturating_sub(conn.intended_ns));
        let arrivals = &conn.arrivals;
        let stream = conn.parser.is_event_stream().then(|| StreamTimes {
            events: arrivals.events,
            first_event_ns: Arrivals::at(arrivals.first_event_ns),
            tokens: arrivals.tokens,
            first_token_ns: Arrivals::at(arrivals.first_token_ns),
            usage_tokens: conn.parser.usage_tokens(),
            ended_ns: ended,
        });
        if let Some(stream) = &stream {
            metrics.record_stream(stream);
        }
        if let Some(bounds) = &self.spec.goodput {
            if !is_failure_status(status) && bounds.met(latency, conn.intended_ns, stream.as_ref()) {
                metrics.good += 1;
            }
        }
        if let Some(open) = self.groups[g].open.as_mut() {
            open.record_service(service);
        }
        if !step.checks.is_empty() || !step.captures.is_empty() {
            let view = ResponseView::from_parser(&conn.parser, latency);
            let truncated = conn.parser.body_truncated();
            self.json.reset();
            for (index, check) in &step.checks {
                let passed = check.evaluate(&view, &mut self.json);
                self.metrics.checks[*index].record_seen(passed, truncated && check.needs_body());
            }
            for (index, capture, target) in &step.captures {
                let found = match *target {
                    CaptureTarget::Value(value) => capture.extract(&view, &mut self.json, &mut conn.values[value]),
                    CaptureTarget::Pool(pool) => {
                        let found = capture.extract(&view, &mut self.json, &mut self.captured);
                        // A full pool refuses the value (counted by the pool); the
                        // iteration still had what it needed.
                        if found {
                            self.pools.push(pool, &self.captured);
                        }
                        found
                    }
                };
                self.metrics.captures[*index].record_seen(found, truncated && capture.needs_body());
                // Later steps would send what they could not fill in: end the iteration.
                conn.abort_iteration |= !found;
            }
        }
        if !reuse {
            let conn = &mut self.conns[id];
            self.open_conns -= 1;
            conn.close(self.poll.registry());
        }
        self.after_response(id, now);
    }

    /// fail_probes counts a step's checks as failed and its captures as missing when its
    /// request ended without a response.
    pub(super) fn fail_probes(&mut self, id: usize) {
        let conn = &mut self.conns[id];
        let step = &self.scenarios[conn.group as usize].sequences[conn.seq as usize][conn.step as usize];
        for (index, _) in &step.checks {
            self.metrics.checks[*index].record(false);
        }
        for (index, _, _) in &step.captures {
            self.metrics.captures[*index].record(false);
            conn.abort_iteration = true;
        }
    }

    /// fail counts the outstanding request (or connection attempt) of a VU as failed,
    /// closes the connection, and lets the VU go on.
    pub(super) fn fail(&mut self, id: usize, class: FailureClass, now: u64) {
        let conn = &mut self.conns[id];
        let g = conn.group as usize;
        match conn.phase {
            Phase::Sending | Phase::Awaiting => {
                let step = &self.scenarios[g].sequences[conn.seq as usize][conn.step as usize];
                let latency = now.saturating_sub(conn.intended_ns);
                self.in_flight -= 1;
                let sent = conn.phase == Phase::Awaiting;
                self.metrics.slots[step.slot].record_failure(class, Some(latency), sent);
                self.groups[g].last_end_ns = now;
                conn.phase = Phase::Idle;
                self.open_conns -= 1;
                conn.close(self.poll.registry());
                self.fail_probes(id);
                // The iteration goes on (as in k6, a failed request returns an error and
                // the script continues); the next step reconnects.
                self.after_response(id, now);
            }
            Phase::Connecting | Phase::Handshaking => {
                if let Some(open) = self.groups[g].open.as_mut() {
                    open.connecting -= 1;
                }
                self.open_conns -= 1;
                conn.close(self.poll.registry());
                self.connect_failed(id, class, now);
            }
            Phase::Idle => self.close_conn(id, now),
            Phase::Closed => {}
        }
    }

    pub(super) fn expire_timeouts(&mut self, now: u64) {
        for id in 0..self.conns.len() {
            let conn = &self.conns[id];
            if conn.retire_deadline_ns <= now && conn.in_iteration && !conn.active {
                if conn.has_request() {
                    let g = conn.group as usize;
                    let slot = self.scenarios[g].sequences[conn.seq as usize][conn.step as usize].slot;
                    let sent = conn.phase == Phase::Awaiting;
                    self.metrics.slots[slot].record_failure(FailureClass::Interrupted, None, sent);
                    self.groups[g].last_end_ns = now;
                    self.in_flight -= 1;
                    self.conns[id].phase = Phase::Idle;
                }
                self.abandon_iteration(id, now);
                continue;
            }
            // A stream past its first event whose next one is overdue stalled mid-stream.
            let stalled = conn.phase == Phase::Awaiting
                && Arrivals::at(conn.arrivals.last_event_ns)
                    .is_some_and(|last| last.saturating_add(self.spec.stream_idle_ns) <= now);
            if conn.deadline_ns > now && !stalled {
                continue;
            }
            match conn.phase {
                Phase::Connecting | Phase::Handshaking => self.fail(id, FailureClass::ConnectTimeout, now),
                Phase::Awaiting if conn.deadline_ns > now => self.fail(id, FailureClass::StreamIdleTimeout, now),
                Phase::Sending | Phase::Awaiting => self.fail(id, FailureClass::RequestTimeout, now),
                _ => {}
            }
        }
    }
}

/// arrival_ns is when the bytes a connection read last arrived, in ns since the run's start:
/// their kernel receive stamp `arrived_real_ns` when there is one (so a worker that read them a
/// little later, batching, adds nothing), within the request's send `sent_ns` and `now`; else
/// `now`.
fn arrival_ns(arrived_real_ns: Option<i128>, sent_ns: u64, realtime_offset_ns: i128, now: u64) -> u64 {
    match arrived_real_ns {
        Some(real) => u64::try_from(real - realtime_offset_ns).unwrap_or(now).clamp(sent_ns, now),
        None => now,
    }
}
