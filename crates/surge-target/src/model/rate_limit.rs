//! A token bucket: `rate` tokens per second, at most `burst` saved up.

/// TokenBucket admits a request when a whole token is available; it starts full, so a burst
/// of `burst` requests passes at once, then `rate` per second on average. Calls must come
/// with non-decreasing `now_ns`.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    per_ns: f64,
    burst: f64,
    tokens: f64,
    last_ns: u64,
}

impl TokenBucket {
    /// new returns a full bucket refilled at `rate` tokens per second holding at most `burst`.
    pub fn new(rate: f64, burst: u32) -> Self {
        let burst = f64::from(burst.max(1));
        Self { per_ns: rate / 1e9, burst, tokens: burst, last_ns: 0 }
    }

    /// try_take spends one token at `now_ns`; when none is left it returns the nanoseconds
    /// until one will be (for `Retry-After`).
    pub fn try_take(&mut self, now_ns: u64) -> Result<(), u64> {
        let elapsed = now_ns.saturating_sub(self.last_ns) as f64;
        self.last_ns = self.last_ns.max(now_ns);
        self.tokens = (self.tokens + elapsed * self.per_ns).min(self.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - self.tokens) / self.per_ns).ceil() as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_rate() {
        // name, rate, burst, arrivals (ns), admitted count
        let cases: &[(&str, f64, u32, &[u64], usize)] = &[
            ("burst passes at once", 10.0, 3, &[0, 0, 0, 0], 3),
            ("refills at rate", 10.0, 1, &[0, 50_000_000, 100_000_000, 150_000_000], 2),
            ("never above burst", 1000.0, 2, &[10_000_000_000, 10_000_000_000, 10_000_000_000], 2),
        ];
        for (name, rate, burst, arrivals, want) in cases {
            let mut bucket = TokenBucket::new(*rate, *burst);
            let got = arrivals.iter().filter(|&&t| bucket.try_take(t).is_ok()).count();
            assert_eq!(got, *want, "{name}");
        }
    }

    #[test]
    fn long_run_rate_is_exact() {
        let mut bucket = TokenBucket::new(100.0, 10);
        // Offered 1000/s for 10 s: 10 burst + 100/s × 10 s.
        let admitted = (0..10_000u64).filter(|i| bucket.try_take(i * 1_000_000).is_ok()).count();
        assert!((1005..=1011).contains(&admitted), "admitted {admitted}");
    }

    #[test]
    fn says_when_to_retry() {
        let mut bucket = TokenBucket::new(2.0, 1);
        assert_eq!(bucket.try_take(0), Ok(()));
        assert_eq!(bucket.try_take(0), Err(500_000_000));
        assert_eq!(bucket.try_take(250_000_000), Err(250_000_000));
    }
}
