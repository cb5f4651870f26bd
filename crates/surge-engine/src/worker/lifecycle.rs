//! worker lifecycle: a scenario on this thread goes from waiting to running, draining and done; VUs are activated and retired (ramps); open-model iterations are dispatched when due.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Worker {
    // ----- scenario lifecycle -----

    /// advance_group moves a scenario through its stages and does its time-driven work:
    /// start, ramp, due iterations, end, drain.
    pub(super) fn advance_group(&mut self, g: usize, now: u64, cancelled: bool) {
        let scenario = &self.scenarios[self.groups[g].scenario];
        let (start_ns, end_ns) = (scenario.start_ns, scenario.end_ns);
        match self.groups[g].stage {
            Stage::Waiting if cancelled => self.groups[g].stage = Stage::Done,
            Stage::Waiting if now >= start_ns => {
                self.groups[g].stage = Stage::Running;
                self.groups[g].started = true;
                self.start_group(g, now);
                self.advance_group(g, now, cancelled);
            }
            Stage::Waiting | Stage::Done => {}
            Stage::Running => {
                self.ramp(g, now);
                // Send whatever fell due before the end, even if we woke after it.
                self.dispatch_due(g, now);
                if self.groups[g].open.as_ref().is_some_and(|o| !o.pending.is_empty() && o.retry_connect_ns.is_none()) {
                    self.open_connections_for_pending(g, now);
                }
                if cancelled || now >= end_ns || self.group_exhausted(g) {
                    self.end_group(g, now, cancelled);
                }
            }
            Stage::Draining { deadline_ns } => {
                let group = &self.groups[g];
                let pending = group.open.as_ref().is_some_and(|o| !o.pending.is_empty());
                if (group.busy == 0 && !pending) || now >= deadline_ns || (cancelled && deadline_ns > now) {
                    self.close_group(g, now);
                }
            }
        }
    }

    pub(super) fn start_group(&mut self, g: usize, now: u64) {
        if let Some(closed) = &self.groups[g].closed {
            if closed.next_ramp_ns.is_none() {
                let (first, vus) = (closed.first, closed.vus);
                if let Some(c) = self.groups[g].closed.as_mut() {
                    c.active = vus;
                }
                for id in first..first + vus as usize {
                    self.activate(id, now);
                }
            }
        }
        if let Some(open) = &self.groups[g].open {
            for _ in 0..open.pre_allocated_vus {
                self.open_connection(g, now);
            }
        }
    }

    /// group_exhausted tells whether a closed scenario has nothing more to start: its
    /// iterations are all claimed and done. An open (arrival-rate) scenario is never
    /// exhausted early: its window is its whole schedule, as in k6, so a rate measured over
    /// it is the rate offered (2/s for 2 s is 4 requests over 2 s, not over the 1.5 s to
    /// the last arrival).
    pub(super) fn group_exhausted(&self, g: usize) -> bool {
        let group = &self.groups[g];
        if let Some(closed) = &group.closed {
            if closed.vus == 0 && closed.next_ramp_ns.is_none() {
                return true; // this thread has no share of the scenario's VUs
            }
            if closed.budget.is_some() && closed.exhausted && group.busy == 0 {
                return true;
            }
            if closed.per_vu.is_some() && group.busy == 0 {
                let first = closed.first;
                return (first..first + closed.vus as usize).all(|id| !self.conns[id].active);
            }
            return false;
        }
        false
    }

    pub(super) fn end_group(&mut self, g: usize, now: u64, cancelled: bool) {
        let scenario = &self.scenarios[self.groups[g].scenario];
        let stopped_ns = now.min(scenario.end_ns);
        self.stopped_ns = self.stopped_ns.max(stopped_ns);
        self.groups[g].stopped_ns = stopped_ns;
        self.close_load(g);
        let grace = if cancelled { 0 } else { self.spec.grace_ns };
        let group = &mut self.groups[g];
        group.stage = Stage::Draining { deadline_ns: now.saturating_add(grace) };
        if let Some(closed) = &mut group.closed {
            if let Some(budget) = &closed.budget {
                budget.give_back(closed.tokens);
                closed.tokens = 0;
            }
        }
        if let Some(open) = &mut group.open {
            // Iterations due before the end and still waiting for a connection are part of
            // the schedule: each starts on the next connection that frees up while draining
            // (claim_iteration). A stop drops them, as does the drain's deadline (close_group).
            if cancelled {
                self.metrics.scenarios[g].iterations_dropped += open.pending.len() as u64;
                open.pending.clear();
            }
        }
        self.advance_group(g, now, cancelled);
    }

    /// close_group ends a scenario on this thread: requests still outstanding are
    /// interrupted, iterations still in progress count as interrupted.
    pub(super) fn close_group(&mut self, g: usize, now: u64) {
        self.groups[g].stage = Stage::Done;
        for id in 0..self.conns.len() {
            if self.conns[id].group as usize != g {
                continue;
            }
            let conn = &mut self.conns[id];
            if conn.has_request() {
                let slot = self.scenarios[g].sequences[conn.seq as usize][conn.step as usize].slot;
                let sent = conn.phase == Phase::Awaiting;
                self.metrics.slots[slot].record_failure(FailureClass::Interrupted, None, sent);
                self.in_flight -= 1;
                self.groups[g].last_end_ns = now;
            }
            if conn.in_iteration {
                self.metrics.scenarios[g].iterations_interrupted += 1;
                conn.in_iteration = false;
            }
            conn.thinking = false;
            conn.active = false;
            if conn.phase != Phase::Closed {
                self.open_conns -= 1;
            }
            conn.close(self.poll.registry());
        }
        self.groups[g].busy = 0;
        for session in &mut self.sessions {
            if session.group as usize == g {
                session.close();
            }
        }
        if let Some(open) = &mut self.groups[g].open {
            // Iterations that were due but never got a connection were never started.
            self.metrics.scenarios[g].iterations_dropped += open.pending.len() as u64;
            open.pending.clear();
            open.idle.clear();
            open.connecting = 0;
            open.vus = 0;
        }
    }

    /// ramp re-evaluates a ramping-vus scenario's VU count on this thread.
    pub(super) fn ramp(&mut self, g: usize, now: u64) {
        let scenario = &self.scenarios[self.groups[g].scenario];
        let Some(closed) = &self.groups[g].closed else { return };
        let Some(at) = closed.next_ramp_ns else { return };
        if now < at {
            return;
        }
        let Model::Closed { ramp: Some(ramp), .. } = &scenario.model else { return };
        let elapsed_s = now.saturating_sub(scenario.start_ns) as f64 / 1e9;
        let total = ramp.vus_at(elapsed_s);
        // This thread's share of the VUs active now, among every thread of every machine.
        let target = (self.spec.share.part_of(u64::from(total)) as u32).min(closed.vus);
        let (first, active) = (closed.first, closed.active);
        let graceful = ramp.graceful_ramp_down_ns;
        if let Some(c) = self.groups[g].closed.as_mut() {
            c.active = target;
            c.next_ramp_ns = Some(now + RAMP_TICK_NS);
        }
        for vu in active..target {
            self.activate(first + vu as usize, now);
        }
        for vu in target..active {
            self.deactivate(first + vu as usize, now, graceful);
        }
    }

    /// activate makes a closed-model VU run iterations: connect, or start at once.
    pub(super) fn activate(&mut self, id: usize, now: u64) {
        let conn = &mut self.conns[id];
        conn.active = true;
        conn.retire_deadline_ns = u64::MAX;
        match conn.phase {
            // A VU waiting out a reconnect backoff connects when the backoff ends.
            Phase::Closed if !self.reconnects.iter().any(|&(_, r)| r == id) => self.connect(id, now),
            Phase::Idle if !conn.in_iteration => self.start_iteration(id, now, now),
            _ => {}
        }
    }

    /// deactivate retires a VU: it finishes its iteration (within `graceful_ns`), then stops.
    pub(super) fn deactivate(&mut self, id: usize, now: u64, graceful_ns: u64) {
        let conn = &mut self.conns[id];
        conn.active = false;
        if conn.in_iteration {
            conn.retire_deadline_ns = now.saturating_add(graceful_ns);
        } else {
            self.retire(id, now);
        }
    }

    /// retire closes an inactive VU's connection.
    pub(super) fn retire(&mut self, id: usize, _now: u64) {
        let conn = &mut self.conns[id];
        if conn.phase != Phase::Closed {
            self.open_conns -= 1;
        }
        conn.close(self.poll.registry());
    }

    // ----- open model -----

    pub(super) fn dispatch_due(&mut self, g: usize, now: u64) {
        loop {
            let scenario = &self.scenarios[g];
            let Model::Open { pacer, .. } = &scenario.model else { return };
            let Some(open) = self.groups[g].open.as_mut() else { return };
            let Some(due) = open.next_due_ns else { return };
            if due >= scenario.end_ns {
                open.next_due_ns = None;
                return;
            }
            if due > now {
                return;
            }
            open.nth += 1;
            open.next_due_ns = pacer.due_ns(open.segment.index(open.nth)).map(|d| d + scenario.start_ns);
            // A send dispatched well past its slack means this thread is behind its schedule.
            open.behind = now.saturating_sub(due) > self.spec.send_slack_ns + BEHIND_NS;
            self.dispatch_one(g, due, now);
        }
    }

    /// dispatch_one takes a send due at `due` off scenario `g`'s schedule at `now`: onto an
    /// idle connection, else into the queue waiting for one, else dropped (in-flight limit).
    /// A dispatch more than LATE_THRESHOLD_NS after `due` is counted: the worker's own lateness.
    pub(super) fn dispatch_one(&mut self, g: usize, due: u64, now: u64) {
        let late = u64::from(now.saturating_sub(due) > LATE_THRESHOLD_NS);
        while let Some(id) = self.groups[g].open.as_mut().and_then(|o| o.idle.pop()) {
            self.conns[id].in_idle_list = false;
            if self.conns[id].phase == Phase::Idle && !self.conns[id].in_iteration {
                self.metrics.scenarios[g].iterations_dispatched_late += late;
                self.conns[id].dispatched_late = late > 0;
                return self.start_iteration(id, due, now);
            }
        }
        let busy = self.groups[g].busy;
        let Some(open) = self.groups[g].open.as_mut() else { return };
        if busy + open.pending.len() as u64 >= open.max_vus {
            self.metrics.scenarios[g].iterations_dropped += 1;
            return;
        }
        self.metrics.scenarios[g].iterations_dispatched_late += late;
        open.pending.push_back(Waiting { intended_ns: due, queued_ns: now });
        let wants = open.wants_connection(now, self.spec.send_slack_ns) && open.retry_connect_ns.is_none();
        self.note_concurrency();
        if wants {
            self.open_connection(g, now);
        }
    }
}
