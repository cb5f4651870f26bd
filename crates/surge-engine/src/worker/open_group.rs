//! worker open group: an open-model scenario's state on one thread (its place in the
//! schedule, the iterations waiting for a connection, its pool) and the rules for when a new
//! connection is opened.

use std::collections::VecDeque;

use crate::schedule::pacer::Pacer;
use crate::spec::segment::Segment;

/// OpenGroup: iterations are due on the pacer's schedule and run on pooled VUs.
pub(super) struct OpenGroup {
    pub(super) segment: Segment,
    pub(super) max_vus: u64,
    pub(super) pre_allocated_vus: u32,
    pub(super) nth: u64,
    pub(super) next_due_ns: Option<u64>,
    /// pending are iterations due waiting for a connection, oldest first.
    pub(super) pending: VecDeque<Waiting>,
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

/// Waiting is an iteration due but not started for want of an idle connection.
#[derive(Clone, Copy, Debug)]
pub(super) struct Waiting {
    /// intended_ns is when it was due: its latency is timed from here.
    pub(super) intended_ns: u64,
    /// queued_ns is when it began to wait (its dispatch): its patience is counted from here,
    /// so that sends this thread dispatched late (a stall of its own) do not look like a target
    /// holding every connection, and open connections it does not need.
    pub(super) queued_ns: u64,
}

/// OPENING_WINDOW_NS is the window the opening rate of an open-model scenario is counted in.
const OPENING_WINDOW_NS: u64 = 1_000_000;

/// OPENING_MIN is how many connections an open-model scenario may open per window however
/// few it holds.
const OPENING_MIN: u64 = 1;

/// OPENING_SHARE_DIVISOR bounds the connections opened per window to a 64th of those held:
/// beyond 64 connections the pool grows by at most 1/64 per millisecond (doubling in ~45 ms).
const OPENING_SHARE_DIVISOR: u64 = 64;

/// SEND_BATCH is the most sends one wake-up waits for: a batch closes at the slack or when this
/// many sends are due, whichever comes first. Sixteen sends amortize a wake-up (and the target's
/// own wake-up for the burst) to a fraction of a send's cost; waiting for more would add send
/// lag at high rates for little gain (docs/engine.md, "Pacing").
pub(super) const SEND_BATCH: u64 = 16;

/// SLACK_ROUNDING_NS: due times are rounded to the nanosecond, so sends exactly a slack apart
/// may come out a nanosecond closer; a batch does not join a send within this of the slack.
const SLACK_ROUNDING_NS: u64 = 1_000;

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
    /// new returns the state of a scenario's `segment` of the schedule before its first send,
    /// due at `first_due_ns` (None for an empty share).
    pub(super) fn new(segment: Segment, max_vus: u32, pre_allocated_vus: u32, first_due_ns: Option<u64>) -> OpenGroup {
        OpenGroup {
            segment,
            max_vus: u64::from(max_vus),
            pre_allocated_vus,
            nth: 0,
            next_due_ns: first_due_ns,
            pending: VecDeque::new(),
            idle: Vec::new(),
            free_slots: Vec::new(),
            vus: 0,
            connecting: 0,
            retry_connect_ns: None,
            created: 0,
            behind: false,
            window_start_ns: 0,
            opened_in_window: 0,
            service_ewma_ns: 0,
        }
    }

    /// patience_ns is how long a request waiting for a connection waits for a busy one to
    /// free up before a new one is opened for it: twice the recent service time (a connection
    /// usually frees up by then when the target keeps pace) plus the slack (a freed connection
    /// is used at the next batch), within PATIENCE_MIN_NS..=PATIENCE_MAX_NS. Latency is timed
    /// from the intended send time, so the wait shows in the send lag.
    pub(super) fn patience_ns(&self, slack_ns: u64) -> u64 {
        (2 * self.service_ewma_ns + slack_ns).clamp(PATIENCE_MIN_NS, PATIENCE_MAX_NS)
    }

    /// batch_close_ns is when the batch opened by the next due send goes out: at the due time
    /// of the last of the next SEND_BATCH sends due within `slack_ns` of the first (and before
    /// `end_ns`). Waiting past a due time therefore always gathers another send: at a rate below
    /// one send per slack each send goes out on time, alone. Times are absolute (the pacer's
    /// plus `start_ns`).
    pub(super) fn batch_close_ns(&self, pacer: &dyn Pacer, start_ns: u64, end_ns: u64, slack_ns: u64) -> Option<u64> {
        let first = self.next_due_ns?;
        // A send due a whole slack after the first is not joined (the microsecond absorbs the
        // rounding of due times), so that one send per slack still goes out on time.
        let limit = first.saturating_add(slack_ns.saturating_sub(SLACK_ROUNDING_NS)).min(end_ns.saturating_sub(1));
        let due = |k: u64| pacer.due_ns(self.segment.index(self.nth + k)).map(|d| d + start_ns);
        // Due times never decrease: find the last k < SEND_BATCH with due(k) ≤ limit.
        let (mut lo, mut hi) = (0, SEND_BATCH); // due(lo) ≤ limit (or lo = 0); due(hi) past it
        while hi - lo > 1 {
            let mid = u64::midpoint(lo, hi);
            match due(mid) {
                Some(d) if d <= limit => lo = mid,
                _ => hi = mid,
            }
        }
        Some(if lo == 0 { first } else { due(lo).unwrap_or(first) })
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
        let oldest_queued = self.pending.front().map_or(now, |w| w.queued_ns);
        if now.saturating_sub(oldest_queued) < self.patience_ns(slack_ns) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::pacer::RatePacer;

    const MS: u64 = 1_000_000;

    fn close_at(rate: f64, slack_ns: u64, nth: u64, end_ns: u64) -> u64 {
        let pacer = RatePacer::constant(rate, 10.0);
        let mut group = OpenGroup::new(Segment::WHOLE, 100, 1, pacer.due_ns(nth));
        group.nth = nth;
        group.batch_close_ns(&pacer, 0, end_ns, slack_ns).unwrap_or(0)
    }

    #[test]
    fn a_batch_closes_at_the_last_send_due_within_the_slack() {
        // 5,000/s: a send every 200 µs, so the sends 200, 400, 600 and 800 µs after the first join it.
        assert_eq!(close_at(5_000.0, MS, 0, u64::MAX), 800_000);
        assert_eq!(close_at(5_000.0, MS, 10, u64::MAX), 2 * MS + 800_000);
    }

    #[test]
    fn a_batch_holds_at_most_send_batch_sends() {
        // 80,000/s: a send every 12.5 µs; SEND_BATCH of them come due well within the slack.
        assert_eq!(close_at(80_000.0, MS, 0, u64::MAX), (SEND_BATCH - 1) * 12_500);
    }

    #[test]
    fn at_one_send_per_slack_or_slower_each_send_goes_out_on_time() {
        for rate in [1_000.0, 999.0, 10.0] {
            let first = (1e9 / rate) as u64 * 3;
            let close = close_at(rate, MS, 3, u64::MAX);
            assert!(close.abs_diff(first) <= 1, "{rate}/s: the batch waits for nothing, closed at {close} for {first}");
        }
        assert_eq!(close_at(20_000.0, 0, 0, u64::MAX), 0, "no slack, no batch");
    }

    #[test]
    fn a_batch_never_waits_for_a_send_due_after_the_end() {
        assert_eq!(close_at(5_000.0, MS, 0, 500_000), 400_000);
    }
}
