//! worker connections: opening, failing, retrying and closing the connections VUs run on.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Worker {
    // ----- connections -----

    pub(super) fn connect(&mut self, id: usize, now: u64) {
        if self.spec.http2_streams.is_some() {
            return self.attach(id, now);
        }
        let tls = self.spec.tls.as_ref();
        let conn = &mut self.conns[id];
        match conn.open(self.spec.addr, tls, self.poll.registry(), Token(id)) {
            Ok(()) => {
                conn.deadline_ns = now.saturating_add(self.scenarios[conn.group as usize].connect_timeout_ns());
                self.open_conns += 1;
                if let Some(open) = self.groups[conn.group as usize].open.as_mut() {
                    open.connecting += 1;
                }
            }
            Err(e) => {
                conn.close(self.poll.registry());
                self.connect_failed(id, FailureClass::from_connect_error(&e), now);
            }
        }
    }

    pub(super) fn on_connect_event(&mut self, id: usize, now: u64) {
        match self.conns[id].connect_result() {
            Ok(false) => {}
            Ok(true) => {
                self.conns[id].phase = Phase::Handshaking;
                self.on_handshake_event(id, now);
            }
            Err(e) => self.fail(id, FailureClass::from_connect_error(&e), now),
        }
    }

    /// on_handshake_event moves a TLS handshake on; a connection counts as established
    /// (opened) only once it completes, and only then is anything written on it. Plain TCP
    /// is established at once.
    pub(super) fn on_handshake_event(&mut self, id: usize, now: u64) {
        let Some(transport) = self.conns[id].transport.as_mut() else { return };
        match transport.handshake() {
            Ok(false) => {}
            Ok(true) => self.established(id, now, true),
            Err(e) => self.fail(id, FailureClass::from_connect_error(&e), now),
        }
    }

    /// established completes VU `id`'s connect: it is idle and goes on. `new_connection` counts
    /// a connection opened (an HTTP/2 VU joins one that is counted once, by its session).
    pub(super) fn established(&mut self, id: usize, now: u64, new_connection: bool) {
        let g = self.conns[id].group as usize;
        if let Some(open) = self.groups[g].open.as_mut() {
            open.connecting -= 1;
        }
        if new_connection {
            self.metrics.scenarios[g].connections_opened += 1;
        }
        let conn = &mut self.conns[id];
        conn.phase = Phase::Idle;
        conn.deadline_ns = u64::MAX;
        self.on_ready(id, now);
    }

    /// connect_failed counts a failed connection attempt as a failed request of the step
    /// it was for (a closed-model VU between iterations spends an iteration on it), and
    /// retries after a short backoff.
    pub(super) fn connect_failed(&mut self, id: usize, class: FailureClass, now: u64) {
        let retry_at = now + RECONNECT_BACKOFF_NS;
        let g = self.conns[id].group as usize;
        let running = matches!(self.groups[g].stage, Stage::Running | Stage::Draining { .. });
        if let Some(open) = self.groups[g].open.as_mut() {
            open.vus -= 1;
            open.free_slots.push(id);
            if self.conns[id].in_iteration {
                // A VU mid-iteration lost its connection and could not get a new one.
                let conn = &mut self.conns[id];
                let slot = self.scenarios[g].sequences[conn.seq as usize][conn.step as usize].slot;
                self.metrics.slots[slot].record_failure(class, None, false);
                self.groups[g].last_end_ns = now;
                conn.in_iteration = false;
                self.metrics.scenarios[g].iterations_interrupted += 1;
                self.groups[g].busy -= 1;
            } else if open.pending.pop_front().is_some() {
                // The attempt was made for the oldest waiting iteration: its first request fails.
                let slot = self.scenarios[g].sequences[0][0].slot;
                self.metrics.slots[slot].record_failure(class, None, false);
                self.groups[g].last_end_ns = now;
            }
            let open = self.groups[g].open.as_mut();
            if let Some(open) = open {
                if !open.pending.is_empty() && open.retry_connect_ns.is_none() {
                    open.retry_connect_ns = Some(retry_at);
                }
            }
            return;
        }
        let conn = &self.conns[id];
        if running && conn.active && self.groups[g].stage == Stage::Running {
            if conn.in_iteration {
                let slot = self.scenarios[g].sequences[conn.seq as usize][conn.step as usize].slot;
                self.metrics.slots[slot].record_failure(class, None, false);
                self.groups[g].last_end_ns = now;
            } else if !self.spend_failed_iteration(id, class, now) {
                return; // no iteration left for this VU: nothing to reconnect for
            }
        }
        self.reconnects.push_back((retry_at, id));
    }

    pub(super) fn retry_connects(&mut self, now: u64) {
        while let Some(&(at, id)) = self.reconnects.front() {
            if at > now {
                break;
            }
            self.reconnects.pop_front();
            if self.conns[id].phase == Phase::Closed && self.needs_connection(id) {
                self.connect(id, now);
            }
        }
        for g in 0..self.groups.len() {
            let due = self.groups[g].open.as_ref().and_then(|o| o.retry_connect_ns).is_some_and(|at| at <= now);
            if due {
                if let Some(open) = self.groups[g].open.as_mut() {
                    open.retry_connect_ns = None;
                }
                self.open_connections_for_pending(g, now);
            }
        }
    }

    /// close_conn closes a connection (not a failure by itself) and decides what its VU
    /// does next: reconnect to go on, or give its slot back.
    pub(super) fn close_conn(&mut self, id: usize, now: u64) {
        let conn = &mut self.conns[id];
        let g = conn.group as usize;
        if conn.is_establishing() {
            if let Some(open) = self.groups[g].open.as_mut() {
                open.connecting -= 1;
            }
        }
        if conn.phase != Phase::Closed {
            self.open_conns -= 1;
        }
        conn.close(self.poll.registry());
        if let Some(open) = self.groups[g].open.as_mut() {
            if conn.in_iteration {
                // Mid-iteration: the VU needs a connection for its next step.
                return self.connect(id, now);
            }
            open.vus -= 1;
            open.free_slots.push(id);
            return self.open_connections_for_pending(g, now);
        }
        // A thinking VU reconnects when it wakes up.
        if !self.conns[id].thinking && self.needs_connection(id) {
            self.connect(id, now);
        }
    }

    /// needs_connection tells whether closed-model VU `id` has a use for a connection: to
    /// finish the iteration it is in (also while draining), or to start one, which it may
    /// only while active (it has iterations left) and its scenario runs. A VU connects only
    /// then: any other connection would be opened and never carry a request.
    pub(super) fn needs_connection(&self, id: usize) -> bool {
        let conn = &self.conns[id];
        conn.in_iteration || (conn.active && self.groups[conn.group as usize].stage == Stage::Running)
    }

    /// open_connections_for_pending opens connections for waiting iterations, as far as
    /// `OpenGroup::wants_connection` allows; it stops at an attempt that fails at once.
    pub(super) fn open_connections_for_pending(&mut self, g: usize, now: u64) {
        loop {
            let Some(open) = self.groups[g].open.as_ref() else { return };
            if !open.wants_connection(now, self.spec.send_slack_ns) {
                return;
            }
            if !self.open_connection(g, now) {
                return;
            }
        }
    }

    /// open_connection opens a new VU connection for an open-model scenario; false if
    /// the attempt failed at once (it was counted and a retry scheduled).
    pub(super) fn open_connection(&mut self, g: usize, now: u64) -> bool {
        let Some(open) = self.groups[g].open.as_mut() else { return false };
        if open.vus >= open.max_vus {
            return false;
        }
        open.vus += 1;
        open.count_opening(now);
        let id = if let Some(id) = open.free_slots.pop() {
            id
        } else {
            let mut conn = Conn::new();
            conn.group = g as u32;
            conn.vu = open.created;
            open.created += 1;
            conn.values = vec![Vec::new(); self.scenarios[g].value_names.len()];
            conn.stamped = true;
            self.conns.push(conn);
            self.conns.len() - 1
        };
        self.conns[id].in_idle_list = false;
        self.connect(id, now);
        self.conns[id].is_establishing()
    }
}
