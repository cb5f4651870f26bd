//! worker open group: an open-model scenario's state on one thread (its place in the
//! schedule, the iterations waiting for a connection, its pool) and the rules for when a new
//! connection is opened.

use std::collections::VecDeque;

use crate::schedule::pacer::Stripe;

/// OpenGroup: iterations are due on the pacer's schedule and run on pooled VUs.
pub(super) struct OpenGroup {
    pub(super) stripe: Stripe,
    pub(super) max_vus: u64,
    pub(super) pre_allocated_vus: u32,
    pub(super) nth: u64,
    pub(super) next_due_ns: Option<u64>,
    /// pending are iterations due (their intended times) waiting for a connection.
    pub(super) pending: VecDeque<u64>,
    pub(super) idle: Vec<usize>,
    pub(super) free_slots: Vec<usize>,
    /// vus counts connections held (open or connecting).
    pub(super) vus: u64,
    pub(super) connecting: u64,
    pub(super) retry_connect_ns: Option<u64>,
    /// created counts the VUs (connection slots) created, to number them.
    pub(super) created: u32,
    /// behind tells whether the last send dispatched was late by more than the slack and
    /// BEHIND_NS: this thread, not the target, is what holds the schedule back.
    pub(super) behind: bool,
    /// window_start_ns is when the current opening-rate window began.
    pub(super) window_start_ns: u64,
    /// opened_in_window counts the connections opened in that window.
    pub(super) opened_in_window: u64,
    /// service_ewma_ns is the recent service time (send to response), in nanoseconds.
    pub(super) service_ewma_ns: u64,
}

/// OPENING_WINDOW_NS is the window the opening rate of an open-model scenario is counted in.
const OPENING_WINDOW_NS: u64 = 1_000_000;

/// OPENING_MIN is how many connections an open-model scenario may open per window however
/// few it holds.
const OPENING_MIN: u64 = 1;

/// OPENING_SHARE_DIVISOR bounds the connections opened per window to a 64th of those held:
/// beyond 64 connections the pool grows by at most 1/64 per millisecond (doubling in ~45 ms).
const OPENING_SHARE_DIVISOR: u64 = 64;

/// BEHIND_NS: a send dispatched this long past its due time plus the slack means the thread
/// is behind its schedule (its own CPU, not the target, is what is late).
pub(super) const BEHIND_NS: u64 = 1_000_000;

/// PATIENCE_MIN_NS and PATIENCE_MAX_NS bound how long a waiting request waits for a busy
/// connection to free up before one is opened for it (see `OpenGroup::patience_ns`). The
/// ceiling is short: against a target that queues (its latency growing to seconds) every new
/// request needs a new connection, and waiting longer would only make the sends late.
const PATIENCE_MIN_NS: u64 = 100_000;
const PATIENCE_MAX_NS: u64 = 1_000_000;

impl OpenGroup {
    /// patience_ns is how long a request waiting for a connection waits for a busy one to
    /// free up before a new one is opened for it: twice the recent service time (a connection
    /// usually frees up by then when the target keeps pace) plus the slack (a freed connection
    /// is used at the next batch), within PATIENCE_MIN_NS..=PATIENCE_MAX_NS. Latency is timed
    /// from the intended send time, so the wait shows in the send lag.
    pub(super) fn patience_ns(&self, slack_ns: u64) -> u64 {
        (2 * self.service_ewma_ns + slack_ns).clamp(PATIENCE_MIN_NS, PATIENCE_MAX_NS)
    }

    /// record_service folds a response's service time into the recent service time (an
    /// exponentially weighted mean over about eight responses).
    pub(super) fn record_service(&mut self, service_ns: u64) {
        self.service_ewma_ns = (self.service_ewma_ns * 7 + service_ns) / 8;
    }

    /// wants_connection tells whether a new connection should be opened at `now`: iterations
    /// wait without one on the way, the VU cap has room, and the opening rate allows it.
    ///
    /// The rate is bounded because opening costs both sides: eight system calls here, an
    /// accept and a set-up on the target. Opening one connection per waiting request made a
    /// start at 80,000/s open 1,500 connections for an in-flight level of 30 (each opening
    /// slowing the target and this thread, so that more requests waited), and a thread that
    /// fell behind open thousands. A thread on time whose connections are all busy has a slow
    /// target: its pool grows by one connection per millisecond, or by 1/64 of itself beyond 64
    /// (a pool of 64 doubles in about 45 ms), without overreacting to a hiccup of a few
    /// milliseconds: opening hundreds then made nginx slower and the hiccup a collapse. A
    /// thread behind its schedule opens one per millisecond: its connections look busy only
    /// because responses wait to be read, and more cannot help.
    pub(super) fn wants_connection(&self, now: u64, slack_ns: u64) -> bool {
        if self.connecting >= self.pending.len() as u64 || self.vus >= self.max_vus {
            return false;
        }
        let oldest_due = self.pending.front().copied().unwrap_or(now);
        if now.saturating_sub(oldest_due) < self.patience_ns(slack_ns) {
            return false; // a busy connection is likely to free up first
        }
        if now >= self.window_start_ns.saturating_add(OPENING_WINDOW_NS) {
            return true; // a new window: open_connection starts counting it
        }
        let allowed = if self.behind { 1 } else { OPENING_MIN.max(self.vus / OPENING_SHARE_DIVISOR) };
        self.opened_in_window < allowed
    }

    /// count_opening counts a connection opened at `now` against the opening rate.
    pub(super) fn count_opening(&mut self, now: u64) {
        if now >= self.window_start_ns.saturating_add(OPENING_WINDOW_NS) {
            self.window_start_ns = now;
            self.opened_in_window = 0;
        }
        self.opened_in_window += 1;
    }
}
