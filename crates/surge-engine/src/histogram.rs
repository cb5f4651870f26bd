//! histogram: latency histograms (HdrHistogram, microsecond units) and their summaries.

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// HIGHEST_US is the largest latency a histogram records (one hour); larger values are clamped.
pub const HIGHEST_US: u64 = 3_600_000_000;

/// SIGNIFICANT_DIGITS is the histograms' precision: values are kept within 0.1 %.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// LatencyHistogram records durations in microseconds with 0.1 % precision up to an hour.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// new returns an empty histogram (it allocates its buckets once, here).
    #[allow(clippy::expect_used)] // constant, valid bounds: this cannot fail at run time
    pub fn new() -> Self {
        let inner = Histogram::new_with_bounds(1, HIGHEST_US, SIGNIFICANT_DIGITS)
            .expect("constant histogram bounds are valid");
        LatencyHistogram { inner }
    }

    /// record adds one duration given in nanoseconds (clamped to the histogram's range).
    #[inline]
    pub fn record(&mut self, nanos: u64) {
        let micros = (nanos / 1_000).clamp(1, HIGHEST_US);
        // Cannot fail: the value is clamped into the configured range.
        let _ = self.inner.record(micros);
    }

    /// add merges another histogram into this one.
    pub fn add(&mut self, other: &LatencyHistogram) {
        // Both share the same bounds, so the merge cannot overflow the range.
        let _ = self.inner.add(&other.inner);
    }

    /// reset empties the histogram without freeing its buckets.
    pub fn reset(&mut self) {
        self.inner.reset();
    }

    /// len is the number of recorded values.
    pub fn len(&self) -> u64 {
        self.inner.len()
    }

    /// is_empty tells whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// value_at_quantile returns the value at quantile `q` (0..=1), in microseconds.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        self.inner.value_at_quantile(q)
    }

    /// inner exposes the underlying HdrHistogram (for log writers).
    pub fn inner(&self) -> &Histogram<u64> {
        &self.inner
    }

    /// summary returns count, mean, min, max and the standard percentiles in milliseconds.
    pub fn summary(&self) -> LatencySummary {
        let h = &self.inner;
        if h.is_empty() {
            return LatencySummary::default();
        }
        let ms = |us: u64| us as f64 / 1_000.0;
        LatencySummary {
            count: h.len(),
            min_ms: ms(h.min()),
            mean_ms: h.mean() / 1_000.0,
            stdev_ms: h.stdev() / 1_000.0,
            p50_ms: ms(h.value_at_quantile(0.50)),
            p90_ms: ms(h.value_at_quantile(0.90)),
            p95_ms: ms(h.value_at_quantile(0.95)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            p99_9_ms: ms(h.value_at_quantile(0.999)),
            max_ms: ms(h.max()),
        }
    }

    /// to_base64 serializes the histogram in HdrHistogram's V2 compressed format, base64
    /// encoded: the form .hlog files and other HdrHistogram tools read.
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::new();
        match V2DeflateSerializer::new().serialize(&self.inner, &mut bytes) {
            Ok(_) => base64::engine::general_purpose::STANDARD.encode(bytes),
            Err(_) => String::new(),
        }
    }
}

/// LatencySummary is a histogram reduced to the numbers reports print, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// count is the number of samples.
    pub count: u64,
    /// min_ms is the smallest sample.
    pub min_ms: f64,
    /// mean_ms is the arithmetic mean.
    pub mean_ms: f64,
    /// stdev_ms is the standard deviation.
    pub stdev_ms: f64,
    /// p50_ms is the median.
    pub p50_ms: f64,
    /// p90_ms is the 90th percentile.
    pub p90_ms: f64,
    /// p95_ms is the 95th percentile.
    pub p95_ms: f64,
    /// p99_ms is the 99th percentile.
    pub p99_ms: f64,
    /// p99_9_ms is the 99.9th percentile.
    pub p99_9_ms: f64,
    /// max_ms is the largest sample.
    pub max_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut parts = [LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new()];
        let mut whole = LatencyHistogram::new();
        for i in 0..30_000u64 {
            let nanos = (i * 7919 % 100_000) * 1_000 + 500;
            parts[(i % 3) as usize].record(nanos);
            whole.record(nanos);
        }
        let mut merged = LatencyHistogram::new();
        for part in &parts {
            merged.add(part);
        }
        assert_eq!(merged.len(), 30_000);
        assert_eq!(merged.summary(), whole.summary());
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(merged.value_at_quantile(q), whole.value_at_quantile(q), "q {q}");
        }
    }

    #[test]
    fn summary_percentiles_within_precision() {
        let mut h = LatencyHistogram::new();
        for ms in 1..=1000u64 {
            h.record(ms * 1_000_000);
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        for (got, want) in [(s.p50_ms, 500.0), (s.p90_ms, 900.0), (s.p99_ms, 990.0), (s.max_ms, 1000.0), (s.min_ms, 1.0)] {
            assert!((got - want).abs() / want < 0.001, "got {got} want {want}");
        }
    }

    #[test]
    fn out_of_range_values_are_clamped_not_lost() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        h.record(u64::MAX);
        assert_eq!(h.len(), 2);
        assert!(h.summary().max_ms >= 3_599_000_000.0 / 1_000.0);
    }

    #[test]
    fn reset_keeps_nothing_and_serializes() {
        let mut h = LatencyHistogram::new();
        h.record(5_000_000);
        assert!(!h.to_base64().is_empty());
        h.reset();
        assert!(h.is_empty());
        assert_eq!(h.summary(), LatencySummary::default());
    }
}
