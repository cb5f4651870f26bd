//! window: the stretch of time every rate of a run, a scenario or a tag is measured over.
//!
//! A scenario's window runs from its start until the later of two moments: when it
//! stopped starting iterations (the end of its load window, e.g. its duration) and when its
//! last request ended (answered, failed or interrupted: the end of the drain). So requests
//! still in flight at the end are counted over the time they took, and a rate past a
//! server's capacity levels off at that capacity instead of climbing with the requests the
//! load window alone left unfinished; and an arrival-rate schedule of 2/s for 2 s measures
//! 2/s, its last arrival at 1.5 s notwithstanding. The run's window runs from the first
//! scenario's start to the last scenario's window end.

use serde::{Deserialize, Serialize};

use crate::measure::metrics::Counts;

/// WindowEnd is where one scenario's window ends, as one thread (or a merge of threads)
/// knows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WindowEnd {
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
    pub fn combine(self, other: WindowEnd) -> WindowEnd {
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
    pub fn window(self, start_ns: u64, now_ns: u64) -> Window {
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
pub struct Window {
    /// start_ns is where it begins.
    pub start_ns: u64,
    /// end_ns is where it ends (not before start_ns).
    pub end_ns: u64,
}

impl Window {
    /// seconds is the window's length.
    pub fn seconds(self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    /// union is the smallest window covering both; an empty window adds nothing.
    #[must_use]
    pub fn union(self, other: Window) -> Window {
        match (self.end_ns > self.start_ns, other.end_ns > other.start_ns) {
            (_, false) => self,
            (false, true) => other,
            (true, true) => Window { start_ns: self.start_ns.min(other.start_ns), end_ns: self.end_ns.max(other.end_ns) },
        }
    }

    /// throughput is `counts` per second of this window (all 0 for an empty window).
    pub fn throughput(self, counts: &Counts) -> Throughput {
        let seconds = self.seconds();
        let rate = |n: u64| if seconds > 0.0 { n as f64 / seconds } else { 0.0 };
        Throughput {
            window_s: seconds,
            responses_per_s: rate(counts.responses),
            successes_per_s: rate(counts.succeeded),
            sent_per_s: rate(counts.sent),
        }
    }
}

/// Throughput holds the rates of a run, a scenario or a tag, all over one window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// window_s is the window every rate here is over: from the start until the later of
    /// the end of the load and the end of the last request (see the module docs).
    pub window_s: f64,
    /// responses_per_s is complete responses (any status) per second: the throughput.
    pub responses_per_s: f64,
    /// successes_per_s is successful responses (status < 400) per second: the goodput.
    pub successes_per_s: f64,
    /// sent_per_s is requests sent per second.
    pub sent_per_s: f64,
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
