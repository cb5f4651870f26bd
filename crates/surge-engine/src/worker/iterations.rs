//! worker iterations: a VU starts an iteration, moves through its steps and pauses, and ends it.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Worker {
    // ----- iterations -----

    /// on_ready gives a connected, idle VU its next piece of work.
    pub(super) fn on_ready(&mut self, id: usize, now: u64) {
        let conn = &self.conns[id];
        if conn.in_iteration {
            if !conn.thinking {
                // A request that moved here keeps its due time; a step after the first is due
                // when the VU is ready for it.
                let intended = match conn.carried {
                    Some(carried) => carried.intended_ns,
                    None if conn.step == 0 => conn.intended_ns,
                    None => now,
                };
                self.send_step(id, intended, now);
            }
            return;
        }
        let g = conn.group as usize;
        if let Some(open) = self.groups[g].open.as_mut() {
            if let Some(waiting) = open.pending.pop_front() {
                self.conns[id].dispatched_late =
                    waiting.queued_ns.saturating_sub(waiting.intended_ns) > LATE_THRESHOLD_NS;
                self.start_iteration(id, waiting.intended_ns, now);
            } else if !self.conns[id].in_idle_list {
                self.conns[id].in_idle_list = true;
                open.idle.push(id);
            }
            return;
        }
        if self.conns[id].active {
            self.start_iteration(id, now, now);
        } else {
            self.retire(id, now);
        }
    }

    /// start_iteration begins an iteration on VU `id`, due at `intended` (closed model:
    /// now), if the scenario still allows one.
    pub(super) fn start_iteration(&mut self, id: usize, intended: u64, now: u64) {
        if !self.claim_iteration(id, now) {
            return;
        }
        let g = self.conns[id].group as usize;
        self.groups[g].busy += 1;
        let scenario = &self.scenarios[g];
        let seq = scenario.picker.pick(&mut self.rng);
        let conn = &mut self.conns[id];
        if scenario.variable_slots > 0 {
            let slots = &mut conn.values[..scenario.variable_slots];
            // Past-the-end unique rows are refused before the run; a draw error leaves
            // that variable empty rather than stopping the VU.
            let _ = scenario.variables.draw(&mut self.variables[g], u64::from(conn.vu), &self.pools, slots);
        }
        conn.in_iteration = true;
        conn.abort_iteration = false;
        conn.thinking = false;
        conn.seq = seq as u16;
        conn.step = 0;
        conn.intended_ns = intended;
        conn.carried = None; // a request carried from an iteration that ended is not this one's
        self.metrics.scenarios[g].iterations_started += 1;
        self.send_step(id, intended, now);
    }

    /// claim_iteration takes one iteration from the scenario's allowance for VU `id`: false
    /// when the scenario no longer runs, or the VU's or the shared budget is spent (the VU
    /// then stops). An open-model scenario that is draining still starts the iterations that
    /// came due before its end and waited for a connection (no others are dispatched then).
    fn claim_iteration(&mut self, id: usize, now: u64) -> bool {
        let g = self.conns[id].group as usize;
        let group = &mut self.groups[g];
        let draining_open = group.open.is_some() && matches!(group.stage, Stage::Draining { .. });
        if group.stage != Stage::Running && !draining_open {
            return false;
        }
        if let Some(closed) = group.closed.as_mut() {
            if !self.conns[id].active {
                return false;
            }
            if let Some(limit) = closed.per_vu {
                if self.conns[id].iterations >= limit {
                    self.conns[id].active = false;
                    self.retire(id, now);
                    return false;
                }
            }
            if let Some(budget) = &closed.budget {
                if closed.tokens == 0 {
                    closed.tokens = if closed.exhausted { 0 } else { budget.claim(u64::from(closed.vus)) };
                    if closed.tokens == 0 {
                        closed.exhausted = true;
                        return false;
                    }
                }
                closed.tokens -= 1;
            }
        }
        true
    }

    /// spend_failed_iteration counts a connection attempt that failed before a closed-model
    /// VU could start an iteration as an iteration whose first request failed with `class`
    /// (in k6 the request returns an error and the iteration ends), so that iteration
    /// budgets run out against a target that refuses connections or handshakes instead of
    /// being retried for ever. False when the VU has no iteration left.
    pub(super) fn spend_failed_iteration(&mut self, id: usize, class: FailureClass, now: u64) -> bool {
        if !self.claim_iteration(id, now) {
            return false;
        }
        let g = self.conns[id].group as usize;
        let seq = self.scenarios[g].picker.pick(&mut self.rng);
        let slot = self.scenarios[g].sequences[seq][0].slot;
        self.metrics.slots[slot].record_failure(class, None, false);
        self.groups[g].last_end_ns = now;
        let counters = &mut self.metrics.scenarios[g];
        counters.iterations_started += 1;
        counters.iterations_completed += 1;
        self.count_vu_iteration(id);
        true
    }

    /// count_vu_iteration counts an iteration VU `id` has run; a per-vu-iterations VU that
    /// has run its last stops at once, so that it does not reconnect for nothing.
    fn count_vu_iteration(&mut self, id: usize) {
        let g = self.conns[id].group as usize;
        let conn = &mut self.conns[id];
        conn.iterations += 1;
        if self.groups[g].closed.as_ref().and_then(|c| c.per_vu).is_some_and(|limit| conn.iterations >= limit) {
            conn.active = false;
        }
    }

    /// after_response moves VU `id` past the step that just ended (with or without a
    /// response): to the next step, a think time, or the end of its iteration.
    pub(super) fn after_response(&mut self, id: usize, now: u64) {
        let g = self.conns[id].group as usize;
        let scenario = &self.scenarios[g];
        let conn = &mut self.conns[id];
        let steps = &scenario.sequences[conn.seq as usize];
        let step = &steps[conn.step as usize];
        let last = conn.step as usize + 1 >= steps.len() || conn.abort_iteration;
        if conn.abort_iteration && conn.step as usize + 1 < steps.len() {
            self.metrics.scenarios[g].iterations_aborted += 1;
        }
        let mut pause = step.think_after.map_or(0, |t| t.sample_ns(&mut self.rng));
        if last {
            pause += scenario.think_after_iteration.map_or(0, |t| t.sample_ns(&mut self.rng));
        }
        if last {
            conn.step = u16::MAX; // past the last step: the iteration ends after the pause
        } else {
            conn.step += 1;
        }
        if pause > 0 {
            conn.thinking = true;
            conn.wake_ns = now.saturating_add(pause);
            self.wakeups.push(Reverse((conn.wake_ns, id)));
            return;
        }
        self.resume(id, now);
    }

    /// resume continues VU `id` after a step or a pause.
    pub(super) fn resume(&mut self, id: usize, now: u64) {
        let conn = &mut self.conns[id];
        conn.thinking = false;
        if conn.step == u16::MAX {
            return self.end_iteration(id, now);
        }
        if conn.retire_deadline_ns <= now {
            // Retired by a ramp-down and out of grace: the iteration stops here.
            return self.abandon_iteration(id, now);
        }
        match conn.phase {
            Phase::Idle => self.send_step(id, now, now),
            Phase::Closed => self.connect(id, now),
            _ => {}
        }
    }

    pub(super) fn end_iteration(&mut self, id: usize, now: u64) {
        let g = self.conns[id].group as usize;
        let conn = &mut self.conns[id];
        conn.in_iteration = false;
        self.count_vu_iteration(id);
        self.groups[g].busy -= 1;
        self.metrics.scenarios[g].iterations_completed += 1;
        if self.conns[id].phase == Phase::Idle {
            self.on_ready(id, now);
        } else if self.groups[g].open.is_some() || !self.conns[id].active {
            self.release_closed_vu(id, now);
        } else if self.conns[id].phase == Phase::Closed && self.needs_connection(id) {
            self.connect(id, now);
        }
    }

    /// release_closed_vu gives a VU without a usable connection back (open model: its
    /// slot; closed model: nothing more to do until it is activated again).
    pub(super) fn release_closed_vu(&mut self, id: usize, now: u64) {
        let g = self.conns[id].group as usize;
        if let Some(open) = self.groups[g].open.as_mut() {
            if self.conns[id].phase == Phase::Closed {
                open.vus -= 1;
                open.free_slots.push(id);
                self.open_connections_for_pending(g, now);
            }
        }
    }

    /// abandon_iteration stops a VU's iteration where it is (ramp-down out of grace).
    pub(super) fn abandon_iteration(&mut self, id: usize, now: u64) {
        let g = self.conns[id].group as usize;
        let conn = &mut self.conns[id];
        conn.in_iteration = false;
        conn.thinking = false;
        self.groups[g].busy -= 1;
        self.metrics.scenarios[g].iterations_interrupted += 1;
        self.retire(id, now);
    }

    pub(super) fn wake_thinkers(&mut self, now: u64) {
        while let Some(&Reverse((at, id))) = self.wakeups.peek() {
            if at > now {
                break;
            }
            self.wakeups.pop();
            let conn = &self.conns[id];
            if conn.thinking && conn.wake_ns == at && conn.in_iteration {
                self.resume(id, now);
            }
        }
    }
}
