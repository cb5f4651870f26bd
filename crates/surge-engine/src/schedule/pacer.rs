//! pacer: when each request of an open-model schedule is due.
//!
//! Times are computed from the start of the schedule for each request index (never
//! accumulated), so a long run does not drift; the arithmetic is pure and stateless.

use serde::{Deserialize, Serialize};

/// RateStage is one stage of an arrival-rate schedule: over `duration_s` the rate moves
/// linearly to `target_rate` (requests per second) from where the previous stage ended.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateStage {
    /// duration_s is the length of the stage in seconds.
    pub duration_s: f64,
    /// target_rate is the rate reached at the end of the stage, in requests per second.
    pub target_rate: f64,
}

/// Pacer answers when the request with a given index is due, as nanoseconds from the
/// start of the schedule; it is the whole open-model schedule of a run.
pub(crate) trait Pacer: Send + Sync {
    /// due_ns returns the intended send time of request `index`, or None when the
    /// schedule ends before that request would be due.
    fn due_ns(&self, index: u64) -> Option<u64>;

    /// total returns how many requests the whole schedule holds.
    #[cfg(test)]
    fn total(&self) -> u64;

    /// rate_at returns the scheduled rate (requests per second) at `elapsed_s`.
    fn rate_at(&self, elapsed_s: f64) -> f64;
}

/// RatePacer is a piecewise-linear arrival rate: constant, ramps, spikes and pauses.
#[derive(Clone, Debug)]
pub struct RatePacer {
    segments: Vec<Segment>,
    total: u64,
}

#[derive(Clone, Copy, Debug)]
struct Segment {
    start_s: f64,
    duration_s: f64,
    from_rate: f64,
    to_rate: f64,
    /// count_before is the (fractional) number of requests due before this segment.
    count_before: f64,
}

impl Segment {
    fn count(&self) -> f64 {
        f64::midpoint(self.from_rate, self.to_rate) * self.duration_s
    }

    /// offset_of solves count_before + r0·s + (r1−r0)/(2d)·s² = n for s in [0, d].
    fn offset_of(&self, n: f64) -> f64 {
        let k = n - self.count_before;
        let a = (self.to_rate - self.from_rate) / (2.0 * self.duration_s);
        let b = self.from_rate;
        if a.abs() < 1e-12 {
            return if b > 0.0 { k / b } else { f64::INFINITY };
        }
        // Numerically stable root of a·s² + b·s − k = 0.
        let disc = (b * b + 4.0 * a * k).max(0.0);
        2.0 * k / (b + disc.sqrt())
    }
}

impl RatePacer {
    /// constant returns a pacer sending `rate` requests per second for `duration_s`.
    pub fn constant(rate: f64, duration_s: f64) -> RatePacer {
        RatePacer::ramping(rate, &[RateStage { duration_s, target_rate: rate }])
    }

    /// ramping returns a pacer starting at `start_rate` and following `stages`.
    pub fn ramping(start_rate: f64, stages: &[RateStage]) -> RatePacer {
        let mut segments = Vec::with_capacity(stages.len());
        let (mut start_s, mut count, mut rate) = (0.0, 0.0, start_rate);
        for stage in stages {
            if stage.duration_s <= 0.0 {
                rate = stage.target_rate;
                continue;
            }
            let segment = Segment {
                start_s,
                duration_s: stage.duration_s,
                from_rate: rate,
                to_rate: stage.target_rate,
                count_before: count,
            };
            count += segment.count();
            start_s += stage.duration_s;
            rate = stage.target_rate;
            segments.push(segment);
        }
        // Request i is due at the time the cumulative count reaches i, so the schedule
        // holds every index strictly below the final count (rounded to absorb float noise).
        let total = (count - 1e-9).ceil().max(0.0) as u64;
        RatePacer { segments, total }
    }

    /// peak_rate is the highest rate anywhere in the schedule.
    pub fn peak_rate(&self) -> f64 {
        self.segments.iter().map(|s| s.from_rate.max(s.to_rate)).fold(0.0, f64::max)
    }

    /// duration_s is the total length of the schedule.
    pub fn duration_s(&self) -> f64 {
        self.segments.last().map_or(0.0, |s| s.start_s + s.duration_s)
    }
}

impl Pacer for RatePacer {
    fn due_ns(&self, index: u64) -> Option<u64> {
        if index >= self.total {
            return None;
        }
        let n = index as f64;
        // The last segment whose count_before ≤ n holds request n (skipping empty pauses).
        let at = self.segments.partition_point(|s| s.count_before <= n);
        let mut i = at.checked_sub(1)?;
        while self.segments[i].count() <= 0.0 && i > 0 {
            i -= 1;
        }
        let segment = &self.segments[i];
        let offset = segment.offset_of(n).clamp(0.0, segment.duration_s);
        Some(((segment.start_s + offset) * 1e9).round() as u64)
    }

    #[cfg(test)]
    fn total(&self) -> u64 {
        self.total
    }

    fn rate_at(&self, elapsed_s: f64) -> f64 {
        for s in &self.segments {
            if elapsed_s < s.start_s + s.duration_s {
                let frac = ((elapsed_s - s.start_s) / s.duration_s).clamp(0.0, 1.0);
                return s.from_rate + (s.to_rate - s.from_rate) * frac;
            }
        }
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_rate_is_exact_and_does_not_drift() {
        let pacer = RatePacer::constant(20_000.0, 30.0);
        assert_eq!(pacer.total(), 600_000);
        assert_eq!(pacer.due_ns(0), Some(0));
        assert_eq!(pacer.due_ns(1), Some(50_000));
        assert_eq!(pacer.due_ns(599_999), Some(29_999_950_000));
        assert_eq!(pacer.due_ns(600_000), None);
        let rate = RatePacer::constant(3.0, 1.0);
        assert_eq!(rate.total(), 3);
        assert_eq!(rate.due_ns(2), Some(666_666_667));
    }

    #[test]
    fn fractional_totals_round_up_to_indices_before_the_end() {
        // 2.5 requests in a second: due at 0, 0.4 and 0.8 s.
        let pacer = RatePacer::constant(2.5, 1.0);
        assert_eq!(pacer.total(), 3);
        assert_eq!(pacer.due_ns(2), Some(800_000_000));
    }

    #[test]
    fn ramp_counts_follow_the_integral_of_the_rate() {
        // 0 → 100/s over 10 s: 500 requests; the n-th is due at sqrt(2n·d/r1) = sqrt(n/5).
        let pacer = RatePacer::ramping(0.0, &[RateStage { duration_s: 10.0, target_rate: 100.0 }]);
        assert_eq!(pacer.total(), 500);
        for n in [1u64, 20, 125, 499] {
            let expected = (n as f64 / 5.0).sqrt();
            let got = pacer.due_ns(n).map(|ns| ns as f64 / 1e9);
            assert!(got.is_some_and(|t| (t - expected).abs() < 1e-6), "n={n} got {got:?} want {expected}");
        }
    }

    #[test]
    fn stages_hold_pause_and_ramp_down() {
        let stages = [
            RateStage { duration_s: 2.0, target_rate: 10.0 }, // hold at 10 → 20 requests
            RateStage { duration_s: 0.0, target_rate: 0.0 },  // jump to 0
            RateStage { duration_s: 5.0, target_rate: 0.0 },  // pause
            RateStage { duration_s: 0.0, target_rate: 10.0 }, // jump back
            RateStage { duration_s: 2.0, target_rate: 0.0 },  // ramp down → 10 requests
        ];
        let pacer = RatePacer::ramping(10.0, &stages);
        assert_eq!(pacer.total(), 30);
        assert_eq!(pacer.due_ns(19), Some(1_900_000_000));
        // request 20 is the first of the ramp-down, right after the pause (t = 7 s).
        assert_eq!(pacer.due_ns(20), Some(7_000_000_000));
        assert!(pacer.due_ns(29).is_some_and(|ns| ns < 9_000_000_000));
        let mut previous = 0;
        for i in 0..pacer.total() {
            let due = pacer.due_ns(i).unwrap_or(u64::MAX);
            assert!(due >= previous, "index {i} went back in time");
            previous = due;
        }
        assert!((pacer.rate_at(8.0) - 5.0).abs() < 1e-9);
        assert_eq!(pacer.rate_at(4.0), 0.0);
    }

    #[test]
    fn per_second_counts_of_a_ramp_are_within_one_percent() {
        let pacer = RatePacer::ramping(1000.0, &[RateStage { duration_s: 10.0, target_rate: 5000.0 }]);
        let mut per_second = [0u64; 10];
        for i in 0..pacer.total() {
            let second = pacer.due_ns(i).map_or(9, |ns| (ns / 1_000_000_000) as usize);
            per_second[second.min(9)] += 1;
        }
        for (s, &count) in per_second.iter().enumerate() {
            let expected = 1000.0 + 400.0 * (s as f64 + 0.5);
            assert!((count as f64 - expected).abs() / expected < 0.01, "second {s}: {count} vs {expected}");
        }
    }
}
