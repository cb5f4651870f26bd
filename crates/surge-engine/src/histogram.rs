//! histogram: latency histograms (HdrHistogram, microsecond units) and their summaries.

use std::collections::BTreeMap;

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

    /// summary returns count, mean, min, max and the standard percentiles in milliseconds,
    /// plus each of `extra` (percentages, e.g. 75 or 99.99) not among the standard ones,
    /// under its [`percentile_key`].
    pub fn summary(&self, extra: &[f64]) -> LatencySummary {
        let h = &self.inner;
        let ms = |us: u64| us as f64 / 1_000.0;
        let extra = extra
            .iter()
            .map(|&q| (percentile_key(q), q))
            .filter(|(key, _)| !STANDARD_KEYS.contains(&key.as_str()))
            .map(|(key, q)| (key, if h.is_empty() { 0.0 } else { ms(h.value_at_quantile(q / 100.0)) }))
            .collect();
        if h.is_empty() {
            return LatencySummary { extra, ..LatencySummary::default() };
        }
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
            extra,
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

/// STANDARD_KEYS are the percentile keys every [`LatencySummary`] carries.
const STANDARD_KEYS: [&str; 6] = ["p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99_9_ms", "p100_ms"];

/// percentile_key is the result key of percentile `q` (a percentage): `p` + `q` without
/// trailing zeros, `.` written `_`, + `_ms` (75 → `p75_ms`, 99.99 → `p99_99_ms`), the
/// same rule as the standard keys (`p99_9_ms`). p100 is `max_ms`.
pub fn percentile_key(q: f64) -> String {
    let text = format!("{q:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("p{}_ms", text.replace('.', "_"))
}

/// LatencySummary is a histogram reduced to the numbers reports print, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// extra holds the percentiles the plan asked for beyond the standard ones, by
    /// [`percentile_key`] (flattened into the summary: `"p75_ms": 1.2`).
    #[serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, f64>,
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
        assert_eq!(merged.summary(&[75.0]), whole.summary(&[75.0]));
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
        let s = h.summary(&[]);
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
        assert!(h.summary(&[]).max_ms >= 3_599_000_000.0 / 1_000.0);
    }

    #[test]
    fn reset_keeps_nothing_and_serializes() {
        let mut h = LatencyHistogram::new();
        h.record(5_000_000);
        assert!(!h.to_base64().is_empty());
        h.reset();
        assert!(h.is_empty());
        assert_eq!(h.summary(&[]), LatencySummary::default());
    }

    #[test]
    fn extra_percentiles_are_added_under_their_keys_and_standard_ones_are_not_repeated() {
        let mut h = LatencyHistogram::new();
        for ms in 1..=10_000u64 {
            h.record(ms * 1_000_000);
        }
        let s = h.summary(&[75.0, 99.99, 99.9, 95.0, 100.0, 12.5]);
        let keys: Vec<&str> = s.extra.keys().map(String::as_str).collect();
        assert_eq!(keys, ["p12_5_ms", "p75_ms", "p99_99_ms"]);
        for (key, want) in [("p12_5_ms", 1250.0), ("p75_ms", 7500.0), ("p99_99_ms", 9999.0)] {
            assert!((s.extra[key] - want).abs() / want < 0.001, "{key}: got {} want {want}", s.extra[key]);
        }
        let json = serde_json::to_value(&s).unwrap_or_default();
        assert!(json["p75_ms"].is_number() && json.get("extra").is_none(), "{json}");
        // An empty histogram still has the keys (zero), so a scope's shape does not vary.
        assert_eq!(LatencyHistogram::new().summary(&[75.0]).extra["p75_ms"], 0.0);
        assert!(serde_json::to_value(h.summary(&[])).unwrap_or_default().get("p75_ms").is_none());
    }

    #[test]
    fn percentile_keys_follow_the_standard_naming() {
        for (q, key) in [(50.0, "p50_ms"), (99.9, "p99_9_ms"), (99.99, "p99_99_ms"), (75.0, "p75_ms"), (0.1, "p0_1_ms")] {
            assert_eq!(percentile_key(q), key);
        }
    }
}
