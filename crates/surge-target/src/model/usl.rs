//! The Universal Scalability Law as a service model: service time that grows with the number
//! of requests in service, so that throughput against concurrency peaks and then falls.
//!
//! Gunther's law gives the throughput of N requests served at once as
//! X(N) = λN / (1 + σ(N−1) + κN(N−1)), where σ (contention) is the share of the work that is
//! serialized (a lock, a single queue) and κ (coherency) the cost of every pair of requests
//! keeping each other's state in step (cache lines, replicas). The target makes every request
//! take `service time × slowdown(n)`, with `slowdown(n) = 1 + σ(n−1) + κn(n−1)` and `n` the
//! number of requests in service when it starts (itself included): n requests in service, each
//! taking D·slowdown(n), complete n / (D·slowdown(n)) per second, which is X(n) with λ = 1/D.

/// MAX_COHERENCY is the largest κ accepted: at κ = 1 two requests in service already take
/// three times as long each, so anything above leaves no curve to measure.
pub const MAX_COHERENCY: f64 = 1.0;

/// Usl holds the law's two coefficients (λ is the service time's: 1 / its mean).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usl {
    /// contention is σ, from 0 (none) to below 1.
    pub contention: f64,
    /// coherency is κ, from 0 (none) to [`MAX_COHERENCY`].
    pub coherency: f64,
}

impl Usl {
    /// slowdown is how many times longer a request takes when it starts with `n` requests in
    /// service, itself included: 1 + σ(n−1) + κn(n−1) (1 for n ≤ 1).
    pub fn slowdown(&self, n: usize) -> f64 {
        let n = n.max(1) as f64;
        1.0 + self.contention * (n - 1.0) + self.coherency * n * (n - 1.0)
    }

    /// throughput is X(n) = λn / slowdown(n): requests per second with `n` in service, each
    /// needing `mean_service_s` seconds alone (λ = 1 / mean_service_s).
    pub fn throughput(&self, n: usize, mean_service_s: f64) -> f64 {
        n.max(1) as f64 / (mean_service_s * self.slowdown(n))
    }

    /// peak_concurrency is N* = √((1−σ)/κ), where X(N) is highest; `None` when κ = 0 (X only
    /// levels off, towards λ/σ, or grows without bound when σ = 0 too).
    pub fn peak_concurrency(&self) -> Option<f64> {
        (self.coherency > 0.0).then(|| ((1.0 - self.contention) / self.coherency).sqrt())
    }

    /// best_concurrency is the whole number of requests in service, from 1 to `workers`, with
    /// the highest throughput: N* rounded down or up, whichever gives more, capped at `workers`.
    pub fn best_concurrency(&self, workers: usize) -> usize {
        let workers = workers.max(1);
        let Some(peak) = self.peak_concurrency() else { return workers };
        let below = (peak.floor() as usize).clamp(1, workers);
        let above = (peak.ceil() as usize).clamp(1, workers);
        // X(n) ∝ n / slowdown(n); compare without λ.
        if above as f64 / self.slowdown(above) > below as f64 / self.slowdown(below) {
            above
        } else {
            below
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAW: Usl = Usl { contention: 0.1, coherency: 0.9 / 64.0 };

    #[test]
    fn slowdown_is_the_denominator() {
        assert_eq!(LAW.slowdown(0), 1.0);
        assert_eq!(LAW.slowdown(1), 1.0);
        // 1 + 0.1·7 + (0.9/64)·8·7 = 1 + 0.7 + 0.7875
        assert!((LAW.slowdown(8) - 2.4875).abs() < 1e-12);
        let none = Usl { contention: 0.0, coherency: 0.0 };
        assert_eq!(none.slowdown(1000), 1.0);
    }

    #[test]
    fn throughput_peaks_at_n_star() {
        // N* = √((1 − 0.1) / (0.9/64)) = 8 exactly.
        assert_eq!(LAW.peak_concurrency(), Some(8.0));
        let x: Vec<f64> = (1..=64).map(|n| LAW.throughput(n, 0.020)).collect();
        let best = x.iter().enumerate().fold(0, |best, (i, v)| if *v > x[best] { i } else { best }) + 1;
        assert_eq!(best, 8);
        assert!((x[7] - 8.0 / (0.020 * 2.4875)).abs() < 1e-9);
        // It falls on both sides: 4 and 16 in service give the same 136.1 req/s.
        assert!((x[3] - x[15]).abs() < 1e-9 && x[3] < x[7]);
        assert_eq!(LAW.best_concurrency(100), 8);
        assert_eq!(LAW.best_concurrency(5), 5);
    }

    #[test]
    fn no_coherency_has_no_peak() {
        let law = Usl { contention: 0.5, coherency: 0.0 };
        assert_eq!(law.peak_concurrency(), None);
        assert_eq!(law.best_concurrency(12), 12);
        // Levels off towards λ/σ = 2λ.
        assert!(law.throughput(10_000, 1.0) < 2.0 && law.throughput(10_000, 1.0) > 1.99);
    }

    #[test]
    fn rounds_n_star_to_the_better_side() {
        // N* = √(0.99/0.0099) = 10; with κ a bit larger N* ≈ 9.6 and 10 still wins or ties.
        let law = Usl { contention: 0.01, coherency: 0.0107 };
        let peak = law.peak_concurrency().unwrap_or(0.0);
        assert!(peak > 9.0 && peak < 10.0, "{peak}");
        let best = law.best_concurrency(1000);
        let x = |n| law.throughput(n, 1.0);
        assert!(x(best) >= x(9) && x(best) >= x(10), "{best}");
    }
}
