//! window: the stretch of time every rate of a run, a scenario or a tag is measured over.
//!
//! A scenario's window runs from its start until the later of two moments: when it
//! stopped starting iterations (the end of its load window, e.g. its duration) and when its
//! last request ended (answered, failed or interrupted: the end of the drain). Rates are
//! over the load window alone, with what ended in it ([`LoadCounts`]): a request that
//! hangs for 20 s after a 6 s load neither stretches the window nor dilutes the rate, and a
//! rate past a server's capacity levels off at that capacity, since the requests left in
//! flight at the end are not in it. What ended after the load is the [`Drain`], counted and
//! timed on its own. An arrival-rate schedule of 2/s for 2 s measures 2/s over its 2 s,
//! its last arrival at 1.5 s notwithstanding. The run's load window runs from the first
//! scenario's start to the moment the last thread stopped starting iterations.

use serde::{Deserialize, Serialize};

use crate::measure::metrics::{Counts, Metrics};

/// WindowEnd is where one scenario's window ends, as one thread (or a merge of threads)
/// knows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum WindowEnd {
    /// NotStarted: the scenario has not started (or never did): no window yet.
    #[default]
    NotStarted,
    /// Open: the scenario is running or draining: its window goes on.
    Open,
    /// Closed: the scenario is done; its window ended at this time (ns since the run's start).
    Closed(u64),
}

impl WindowEnd {
    /// combine merges what two threads know: open anywhere is open; closed everywhere ends
    /// at the latest end; a thread where it never started adds nothing.
    #[must_use]
    pub(crate) fn combine(self, other: WindowEnd) -> WindowEnd {
        match (self, other) {
            (WindowEnd::Open, _) | (_, WindowEnd::Open) => WindowEnd::Open,
            (WindowEnd::Closed(a), WindowEnd::Closed(b)) => WindowEnd::Closed(a.max(b)),
            (WindowEnd::Closed(a), WindowEnd::NotStarted) | (WindowEnd::NotStarted, WindowEnd::Closed(a)) => {
                WindowEnd::Closed(a)
            }
            (WindowEnd::NotStarted, WindowEnd::NotStarted) => WindowEnd::NotStarted,
        }
    }

    /// window is the window of a scenario that started at `start_ns`, as of `now_ns` (an
    /// open window ends now; one that never started is empty).
    pub(crate) fn window(self, start_ns: u64, now_ns: u64) -> Window {
        let end_ns = match self {
            WindowEnd::NotStarted => start_ns,
            WindowEnd::Open => now_ns,
            WindowEnd::Closed(end) => end,
        };
        Window { start_ns, end_ns: end_ns.max(start_ns) }
    }
}

/// Window is a stretch of the run, in ns since its start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Window {
    /// start_ns is where it begins.
    pub start_ns: u64,
    /// end_ns is where it ends (not before start_ns).
    pub end_ns: u64,
}

impl Window {
    /// seconds is the window's length.
    pub(crate) fn seconds(self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    /// union is the smallest window covering both; an empty window adds nothing.
    #[must_use]
    pub(crate) fn union(self, other: Window) -> Window {
        match (self.end_ns > self.start_ns, other.end_ns > other.start_ns) {
            (_, false) => self,
            (false, true) => other,
            (true, true) => {
                Window { start_ns: self.start_ns.min(other.start_ns), end_ns: self.end_ns.max(other.end_ns) }
            }
        }
    }

    /// throughput is `counts` per second of this window (all 0 for an empty window).
    pub(crate) fn throughput(self, counts: &Counts) -> Throughput {
        self.rates(counts.sent, counts.responses, counts.succeeded, (counts.output_tokens, counts.good))
    }

    /// load_throughput is what ended within the load window (`load`) per second of this
    /// window, which must be that load window.
    pub(crate) fn load_throughput(self, load: &LoadCounts) -> Throughput {
        self.rates(load.sent, load.responses, load.succeeded, (load.output_tokens, load.good))
    }

    fn rates(self, sent: u64, responses: u64, succeeded: u64, (output_tokens, good): (u64, u64)) -> Throughput {
        let seconds = self.seconds();
        let rate = |n: u64| if seconds > 0.0 { n as f64 / seconds } else { 0.0 };
        Throughput {
            window_s: seconds,
            responses_per_s: rate(responses),
            successes_per_s: rate(succeeded),
            sent_per_s: rate(sent),
            output_tokens_per_s: rate(output_tokens),
            good_per_s: rate(good),
        }
    }
}

/// LoadCounts are what one slot (or a sum of slots) sent, and what ended, within the load
/// window: until its scenario (or the run) stopped starting iterations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LoadCounts {
    /// sent counts requests completely written.
    pub sent: u64,
    /// responses counts complete responses, any status.
    pub responses: u64,
    /// succeeded counts responses with status < 400.
    pub succeeded: u64,
    /// failed counts failed requests (4xx/5xx and failures without a response).
    pub failed: u64,
    /// interrupted counts requests cut off (by a stop within the load).
    pub interrupted: u64,
    /// output_tokens counts the output tokens of token streams that ended.
    #[serde(default)]
    pub output_tokens: u64,
    /// good counts the responses that met every goodput bound.
    #[serde(default)]
    pub good: u64,
}

impl LoadCounts {
    /// add_metrics adds an interval's (or part of one's) counts.
    pub(crate) fn add_metrics(&mut self, metrics: &Metrics) {
        self.sent += metrics.sent;
        self.responses += metrics.responses;
        self.succeeded += metrics.succeeded;
        self.failed += metrics.failures();
        self.interrupted += metrics.failure_count(crate::measure::failure::FailureClass::Interrupted);
        self.output_tokens += metrics.output_tokens;
        self.good += metrics.good;
    }

    /// add adds another thread's (or slot's) load counts.
    pub(crate) fn add(&mut self, other: &LoadCounts) {
        self.sent += other.sent;
        self.responses += other.responses;
        self.succeeded += other.succeeded;
        self.failed += other.failed;
        self.interrupted += other.interrupted;
        self.output_tokens += other.output_tokens;
        self.good += other.good;
    }

    /// drain is what ended after the load window, given the totals (`all`), the end of the
    /// load and the end of the window (ns).
    pub(crate) fn drain(&self, all: &Counts, stopped_ns: u64, window_end_ns: u64) -> Drain {
        Drain {
            seconds: window_end_ns.saturating_sub(stopped_ns) as f64 / 1e9,
            responses: all.responses.saturating_sub(self.responses),
            succeeded: all.succeeded.saturating_sub(self.succeeded),
            failed: all.failed.saturating_sub(self.failed),
            interrupted: all.interrupted.saturating_sub(self.interrupted),
        }
    }
}

/// Drain is what happened after the load stopped: requests still in flight ending
/// (answered, failed, or interrupted when the grace period ran out). Its completions are in
/// the request counts, never in the rates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Drain {
    /// seconds is from the end of the load to the end of the last request.
    pub seconds: f64,
    /// responses counts complete responses (any status) that arrived in the drain.
    pub responses: u64,
    /// succeeded counts those with status < 400.
    pub succeeded: u64,
    /// failed counts requests that failed in the drain (timeouts included).
    pub failed: u64,
    /// interrupted counts requests cut off when the grace period ran out.
    pub interrupted: u64,
}

/// Throughput holds the rates of a run, a scenario or a tag, all over one window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// window_s is the window every rate here is over: the load window (from the start
    /// until the load stopped) in a result, each interval's own span in an interval.
    pub window_s: f64,
    /// responses_per_s is complete responses (any status) per second: the throughput.
    pub responses_per_s: f64,
    /// successes_per_s is successful responses (status < 400) per second: the goodput.
    pub successes_per_s: f64,
    /// sent_per_s is requests sent per second.
    pub sent_per_s: f64,
    /// output_tokens_per_s is the output tokens of token streams per second (0 without any).
    #[serde(default)]
    pub output_tokens_per_s: f64,
    /// good_per_s is responses that met every goodput bound per second (0 without bounds).
    #[serde(default)]
    pub good_per_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combining_ends_open_wins_and_closed_takes_the_latest() {
        use WindowEnd::{Closed, NotStarted, Open};
        let cases = [
            (NotStarted, NotStarted, NotStarted),
            (NotStarted, Closed(5), Closed(5)),
            (Closed(5), Closed(7), Closed(7)),
            (Closed(9), Open, Open),
            (Open, NotStarted, Open),
        ];
        for (a, b, want) in cases {
            assert_eq!(a.combine(b), want, "{a:?} + {b:?}");
            assert_eq!(b.combine(a), want, "{b:?} + {a:?}");
        }
    }

    #[test]
    fn windows_and_their_rates() {
        let closed = WindowEnd::Closed(3_000_000_000).window(1_000_000_000, 9_000_000_000);
        assert_eq!(closed.seconds(), 2.0);
        assert_eq!(WindowEnd::Open.window(1_000_000_000, 4_000_000_000).seconds(), 3.0);
        assert_eq!(WindowEnd::NotStarted.window(1_000_000_000, 4_000_000_000).seconds(), 0.0);
        let counts = Counts { sent: 10, responses: 8, succeeded: 6, ..Counts::default() };
        let t = closed.throughput(&counts);
        assert_eq!((t.window_s, t.sent_per_s, t.responses_per_s, t.successes_per_s), (2.0, 5.0, 4.0, 3.0));
        assert_eq!(Window::default().throughput(&counts), Throughput::default());
        let later = Window { start_ns: 2_000_000_000, end_ns: 5_000_000_000 };
        assert_eq!(closed.union(later), Window { start_ns: 1_000_000_000, end_ns: 5_000_000_000 });
        assert_eq!(closed.union(Window::default()), closed);
        assert_eq!(Window::default().union(later), later);
    }
}
