//! histogram: latency histograms (HdrHistogram's layout, microsecond units) and their
//! summaries.
//!
//! A [`LatencyHistogram`] counts values in HdrHistogram's buckets (1 µs to an hour, three
//! significant digits: 23,552 counters) but holds only the counters in use: a sorted list
//! while they are few or scattered, blocks of 128 counters (allocated when a value first
//! falls in them) once blocks take no more memory. A run measures per (scenario, tag) slot
//! and per thread, and copies of those histograms travel once per interval; as dense arrays
//! (184 KiB each) they made a file of 1,000 one-VU scenarios need gigabytes. A busy slot
//! (past 4,096 values, or once blocks are no larger) records into blocks — the same index
//! arithmetic as a dense array, plus one pointer — and a small one into a list of a few
//! hundred entries. Summaries are computed here exactly
//! as HdrHistogram computes them (same buckets, same arithmetic, same order), and the V2
//! serialization goes through a dense `hdrhistogram::Histogram` built on the spot, so logs
//! and other tools read the same bytes.

use std::collections::BTreeMap;

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// HIGHEST_US is the largest latency a histogram records (one hour); larger values are clamped.
pub(crate) const HIGHEST_US: u64 = 3_600_000_000;

/// SIGNIFICANT_DIGITS is the histograms' precision: values are kept within 0.1 %.
pub(crate) const SIGNIFICANT_DIGITS: u8 = 3;

/// SUB_BUCKET_HALF_MAGNITUDE is log2 of half the sub-buckets per bucket: three significant
/// digits need single-unit resolution up to 2,000, so 2,048 sub-buckets (HdrHistogram's rule).
const SUB_BUCKET_HALF_MAGNITUDE: u32 = 10;

/// SUB_BUCKET_HALF is half the sub-buckets per bucket (1,024).
const SUB_BUCKET_HALF: usize = 1 << SUB_BUCKET_HALF_MAGNITUDE;

/// SUB_BUCKET_MASK masks the values that fit in bucket 0.
const SUB_BUCKET_MASK: u64 = (2 * SUB_BUCKET_HALF as u64) - 1;

/// LEADING_ZERO_BASE turns a value's leading zeros into its bucket (64 − 11 for 2,048
/// sub-buckets at a unit of 1).
const LEADING_ZERO_BASE: u32 = 64 - (SUB_BUCKET_HALF_MAGNITUDE + 1);

/// BLOCK_MAGNITUDE is log2 of the counters per block.
const BLOCK_MAGNITUDE: u32 = 7;

/// BLOCK is the counters per block (128: 1 KiB).
const BLOCK: usize = 1 << BLOCK_MAGNITUDE;

/// index_of is the counter index of `value` (in 1..=HIGHEST_US), as HdrHistogram computes it.
#[inline]
fn index_of(value: u64) -> usize {
    let bucket = LEADING_ZERO_BASE - (value | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (value >> bucket) as usize;
    ((bucket as usize + 1) << SUB_BUCKET_HALF_MAGNITUDE) + sub_bucket - SUB_BUCKET_HALF
}

/// Bucket is the range of values one counter index stands for.
struct Bucket {
    lowest: u64,
    range: u64,
}

impl Bucket {
    /// at is the range of counter `index`.
    fn at(index: usize) -> Bucket {
        let mut bucket = (index >> SUB_BUCKET_HALF_MAGNITUDE) as i64 - 1;
        let mut sub_bucket = (index & (SUB_BUCKET_HALF - 1)) + SUB_BUCKET_HALF;
        if bucket < 0 {
            sub_bucket -= SUB_BUCKET_HALF;
            bucket = 0;
        }
        Bucket { lowest: (sub_bucket as u64) << bucket, range: 1 << bucket }
    }

    fn highest(&self) -> u64 {
        self.lowest + self.range - 1
    }

    fn median(&self) -> u64 {
        self.lowest + (self.range >> 1)
    }
}

/// SPARSE_FLOOR is the fewest counters in use at which a sparse histogram considers blocks.
const SPARSE_FLOOR: usize = 64;

/// SPARSE_LIMIT is the most counters a sparse histogram holds before it moves to blocks
/// whatever their spread, so that a lookup stays a dozen comparisons.
const SPARSE_LIMIT: usize = 4096;

/// BUSY_RECORDS is how many values a sparse histogram takes before it moves to blocks
/// whatever their spread: a busy slot (thousands of responses an interval on one thread)
/// records at array speed, and there are never many busy slots at once.
const BUSY_RECORDS: u64 = 4096;

/// Counters are a histogram's counts, in whichever form takes less memory.
#[derive(Clone, Debug)]
enum Counters {
    /// Sparse holds (counter index, count) of each counter in use, by index: few values,
    /// however spread (a small scenario's interval: a few hundred values over milliseconds).
    Sparse(Vec<(u32, u64)>),
    /// Blocks hold BLOCK counters per block, None until a value falls in it: many values
    /// (a busy slot, a run's totals), where recording is an index and an add.
    Blocks(Vec<Option<Box<[u64; BLOCK]>>>),
}

impl Default for Counters {
    fn default() -> Self {
        Counters::Sparse(Vec::new())
    }
}

/// LatencyHistogram records durations in microseconds with 0.1 % precision up to an hour,
/// in memory proportional to the values recorded: a sorted list of the counters in use while
/// they are few or scattered, blocks of counters once blocks are no larger.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    counters: Counters,
    total: u64,
    /// min_index and max_index bound the counters in use (min > max when empty).
    min_index: usize,
    max_index: usize,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// new returns an empty histogram; it allocates nothing until a value is recorded.
    pub fn new() -> Self {
        LatencyHistogram { counters: Counters::default(), total: 0, min_index: usize::MAX, max_index: 0 }
    }

    /// record adds one duration given in nanoseconds (clamped to the histogram's range).
    #[inline]
    pub fn record(&mut self, nanos: u64) {
        self.record_n(index_of((nanos / 1_000).clamp(1, HIGHEST_US)), 1);
    }

    #[inline]
    fn record_n(&mut self, index: usize, count: u64) {
        match &mut self.counters {
            Counters::Blocks(blocks) => {
                let (block, slot) = (index >> BLOCK_MAGNITUDE, index & (BLOCK - 1));
                match blocks.get_mut(block) {
                    Some(Some(counters)) => counters[slot] += count,
                    _ => grow(blocks, block)[slot] += count,
                }
            }
            Counters::Sparse(entries) => {
                // A slot this busy records into blocks, where a value costs an index and an
                // add rather than a search, whatever the memory.
                if record_sparse(entries, index, count) || self.total >= BUSY_RECORDS {
                    self.move_to_blocks();
                }
            }
        }
        self.total += count;
        self.min_index = self.min_index.min(index);
        self.max_index = self.max_index.max(index);
    }

    /// move_to_blocks moves the counts into blocks.
    fn move_to_blocks(&mut self) {
        let mut blocks = Vec::new();
        for (index, n) in self.counts() {
            grow(&mut blocks, index >> BLOCK_MAGNITUDE)[index & (BLOCK - 1)] += n;
        }
        self.counters = Counters::Blocks(blocks);
    }

    /// counts lists (counter index, count) of every counter in use, in index order.
    fn counts(&self) -> Box<dyn Iterator<Item = (usize, u64)> + '_> {
        match &self.counters {
            Counters::Sparse(entries) => Box::new(entries.iter().map(|&(i, n)| (i as usize, n))),
            Counters::Blocks(blocks) => Box::new(blocks.iter().enumerate().flat_map(|(b, block)| {
                block.iter().flat_map(move |counters| {
                    counters
                        .iter()
                        .enumerate()
                        .filter(|(_, &n)| n > 0)
                        .map(move |(i, &n)| ((b << BLOCK_MAGNITUDE) + i, n))
                })
            })),
        }
    }

    /// record_zeros records `n` durations of zero (as the smallest value, 1 µs).
    #[inline]
    pub fn record_zeros(&mut self, n: u64) {
        self.record_n(index_of(1), n);
    }

    /// record_count records a count (events, say) rather than a duration: the value itself, in
    /// the histogram's unit, exact up to 2,048 and to 0.1 % beyond (clamped to 1..=HIGHEST_US).
    #[inline]
    pub fn record_count(&mut self, value: u64) {
        self.record_n(index_of(value.clamp(1, HIGHEST_US)), 1);
    }

    /// count_summary is the summary of a histogram of counts ([`Self::record_count`]).
    pub fn count_summary(&self) -> CountSummary {
        if self.is_empty() {
            return CountSummary::default();
        }
        CountSummary {
            count: self.len(),
            min: self.min(),
            mean: self.mean(),
            p50: self.value_at_quantile(0.50),
            p90: self.value_at_quantile(0.90),
            p99: self.value_at_quantile(0.99),
            max: self.max(),
        }
    }

    /// add merges another histogram into this one.
    pub fn add(&mut self, other: &LatencyHistogram) {
        if other.is_empty() {
            return;
        }
        if let (Counters::Sparse(mine), Counters::Sparse(theirs)) = (&mut self.counters, &other.counters) {
            let merged = merge_sorted(mine, theirs);
            let blocks = prefers_blocks(&merged);
            *mine = merged;
            if blocks {
                self.move_to_blocks();
            }
        } else {
            if let Counters::Sparse(_) = self.counters {
                self.move_to_blocks();
            }
            if let Counters::Blocks(blocks) = &mut self.counters {
                for (index, n) in other.counts() {
                    grow(blocks, index >> BLOCK_MAGNITUDE)[index & (BLOCK - 1)] += n;
                }
            }
        }
        self.total += other.total;
        self.min_index = self.min_index.min(other.min_index);
        self.max_index = self.max_index.max(other.max_index);
    }

    /// reset empties the histogram and gives its memory back.
    pub fn reset(&mut self) {
        *self = LatencyHistogram::new();
    }

    /// len is the number of recorded values.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// is_empty tells whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// allocated_bytes is the memory the counters take.
    pub fn allocated_bytes(&self) -> usize {
        match &self.counters {
            Counters::Sparse(entries) => entries.capacity() * std::mem::size_of::<(u32, u64)>(),
            Counters::Blocks(blocks) => {
                blocks.iter().flatten().count() * std::mem::size_of::<[u64; BLOCK]>()
                    + blocks.capacity() * std::mem::size_of::<Option<Box<[u64; BLOCK]>>>()
            }
        }
    }

    /// min is the lowest recorded value (its bucket's lowest), in microseconds; 0 if empty.
    pub fn min(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            Bucket::at(self.min_index).lowest
        }
    }

    /// max is the highest recorded value (its bucket's highest), in microseconds; 0 if empty.
    pub fn max(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            Bucket::at(self.max_index).highest()
        }
    }

    /// mean is the arithmetic mean of the buckets' medians, in microseconds.
    pub fn mean(&self) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        let total = self.total as f64;
        self.counts().fold(0.0, |sum, (i, n)| sum + Bucket::at(i).median() as f64 * n as f64 / total)
    }

    /// stdev is the standard deviation of the buckets' medians, in microseconds.
    pub fn stdev(&self) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        let mean = self.mean();
        let squares = self.counts().fold(0.0, |sum, (i, n)| {
            let deviation = Bucket::at(i).median() as f64 - mean;
            sum + deviation * deviation * n as f64
        });
        (squares / self.total as f64).sqrt()
    }

    /// value_at_quantile returns the value at quantile `q` (0..=1), in microseconds: the
    /// highest value of the bucket where the count reaches `q` of the total (the lowest,
    /// for q = 0), as HdrHistogram does.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        let q = q.min(1.0);
        let wanted = ((q * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in self.counts() {
            seen += n;
            if seen >= wanted {
                let bucket = Bucket::at(i);
                return if q == 0.0 { bucket.lowest } else { bucket.highest() };
            }
        }
        0
    }

    /// to_hdr returns the same counts as a dense HdrHistogram (1 µs to an hour), for log
    /// writers and other HdrHistogram tools.
    #[allow(clippy::expect_used)] // constant, valid bounds: this cannot fail at run time
    pub fn to_hdr(&self) -> Histogram<u64> {
        let mut h =
            Histogram::new_with_bounds(1, HIGHEST_US, SIGNIFICANT_DIGITS).expect("constant histogram bounds are valid");
        for (i, n) in self.counts() {
            // In range by construction: every index came from a clamped value.
            let _ = h.record_n(Bucket::at(i).lowest, n);
        }
        h
    }

    /// summary returns count, mean, min, max and the standard percentiles in milliseconds,
    /// plus each of `extra` (percentages, e.g. 75 or 99.99) not among the standard ones,
    /// under its [`percentile_key`].
    pub fn summary(&self, extra: &[f64]) -> LatencySummary {
        let ms = |us: u64| us as f64 / 1_000.0;
        let extra = extra
            .iter()
            .map(|&q| (percentile_key(q), q))
            .filter(|(key, _)| !STANDARD_KEYS.contains(&key.as_str()))
            .map(|(key, q)| (key, if self.is_empty() { 0.0 } else { ms(self.value_at_quantile(q / 100.0)) }))
            .collect();
        if self.is_empty() {
            return LatencySummary { extra, ..LatencySummary::default() };
        }
        LatencySummary {
            count: self.len(),
            min_ms: ms(self.min()),
            mean_ms: self.mean() / 1_000.0,
            stdev_ms: self.stdev() / 1_000.0,
            p50_ms: ms(self.value_at_quantile(0.50)),
            p90_ms: ms(self.value_at_quantile(0.90)),
            p95_ms: ms(self.value_at_quantile(0.95)),
            p99_ms: ms(self.value_at_quantile(0.99)),
            p99_9_ms: ms(self.value_at_quantile(0.999)),
            max_ms: ms(self.max()),
            extra,
        }
    }

    /// to_base64 serializes the histogram in HdrHistogram's V2 compressed format, base64
    /// encoded: the form .hlog files and other HdrHistogram tools read.
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::new();
        match V2DeflateSerializer::new().serialize(&self.to_hdr(), &mut bytes) {
            Ok(_) => base64::engine::general_purpose::STANDARD.encode(bytes),
            Err(_) => String::new(),
        }
    }

    /// from_base64 reads a histogram [`to_base64`](Self::to_base64) wrote (HdrHistogram V2,
    /// compressed or not, base64), counter for counter; "" is an empty histogram.
    pub fn from_base64(text: &str) -> Result<LatencyHistogram, String> {
        let mut histogram = LatencyHistogram::new();
        if text.is_empty() {
            return Ok(histogram);
        }
        let bytes = base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| format!("histogram: {e}"))?;
        let hdr: Histogram<u64> =
            Deserializer::new().deserialize(&mut bytes.as_slice()).map_err(|e| format!("histogram: {e:?}"))?;
        for value in hdr.iter_recorded() {
            let at = value.value_iterated_to().clamp(1, HIGHEST_US);
            histogram.record_n(index_of(at), value.count_at_value());
        }
        Ok(histogram)
    }
}

/// A histogram travels (between the machines of a distributed run) in HdrHistogram's V2
/// compressed encoding, base64: "" when empty.
impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&if self.is_empty() { String::new() } else { self.to_base64() })
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        LatencyHistogram::from_base64(&text).map_err(serde::de::Error::custom)
    }
}

/// grow returns block `block`, allocating it (and the table up to it) on first use.
#[cold]
fn grow(blocks: &mut Vec<Option<Box<[u64; BLOCK]>>>, block: usize) -> &mut [u64; BLOCK] {
    if blocks.len() <= block {
        blocks.resize_with(block + 1, || None);
    }
    blocks[block].get_or_insert_with(|| Box::new([0; BLOCK]))
}

/// record_sparse counts `count` at `index` in a sorted sparse list; true when the list has
/// grown to where blocks are no larger (checked at each power of two, so rarely).
#[inline]
fn record_sparse(entries: &mut Vec<(u32, u64)>, index: usize, count: u64) -> bool {
    match entries.binary_search_by_key(&(index as u32), |e| e.0) {
        Ok(at) => {
            entries[at].1 += count;
            false
        }
        Err(at) => {
            entries.insert(at, (index as u32, count));
            entries.len().is_power_of_two() && prefers_blocks(entries)
        }
    }
}

/// prefers_blocks tells whether blocks would hold `entries` in no more memory than the list
/// (or the list has reached SPARSE_LIMIT).
fn prefers_blocks(entries: &[(u32, u64)]) -> bool {
    if entries.len() < SPARSE_FLOOR {
        return false;
    }
    if entries.len() >= SPARSE_LIMIT {
        return true;
    }
    let mut blocks = 0;
    let mut last = None;
    for &(index, _) in entries {
        let block = index >> BLOCK_MAGNITUDE;
        if last != Some(block) {
            blocks += 1;
            last = Some(block);
        }
    }
    blocks * std::mem::size_of::<[u64; BLOCK]>() <= std::mem::size_of_val(entries)
}

/// merge_sorted merges two sorted sparse lists, adding the counts of equal indices.
fn merge_sorted(a: &[(u32, u64)], b: &[(u32, u64)]) -> Vec<(u32, u64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1 + b[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// STANDARD_KEYS are the percentile keys every [`LatencySummary`] carries.
const STANDARD_KEYS: [&str; 6] = ["p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99_9_ms", "p100_ms"];

/// percentile_key is the result key of percentile `q` (a percentage): `p` + `q` without
/// trailing zeros, `.` written `_`, + `_ms` (75 → `p75_ms`, 99.99 → `p99_99_ms`), the
/// same rule as the standard keys (`p99_9_ms`). p100 is `max_ms`.
pub(crate) fn percentile_key(q: f64) -> String {
    let text = format!("{q:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("p{}_ms", text.replace('.', "_"))
}

/// CountSummary is a histogram of counts (events per stream) reduced to its percentiles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CountSummary {
    /// count is the number of samples.
    pub count: u64,
    /// min is the smallest sample.
    pub min: u64,
    /// mean is the arithmetic mean.
    pub mean: f64,
    /// p50 is the median.
    pub p50: u64,
    /// p90 is the 90th percentile.
    pub p90: u64,
    /// p99 is the 99th percentile.
    pub p99: u64,
    /// max is the largest sample.
    pub max: u64,
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

    /// dense records the same nanosecond values in a dense HdrHistogram, as the engine did.
    fn dense(values: &[u64]) -> Histogram<u64> {
        let mut h =
            Histogram::<u64>::new_with_bounds(1, HIGHEST_US, SIGNIFICANT_DIGITS).unwrap_or_else(|e| panic!("{e}"));
        for &nanos in values {
            h.record((nanos / 1_000).clamp(1, HIGHEST_US)).unwrap_or_else(|e| panic!("{e}"));
        }
        h
    }

    #[test]
    fn figures_are_exactly_hdrhistograms() {
        // Spreads from loopback microseconds to a stalled hour, and single values at the
        // buckets' edges.
        let mut spreads: Vec<Vec<u64>> = vec![
            (0..20_000u64).map(|i| 40_000 + (i * 7919) % 300_000).collect(),
            (0..20_000u64).map(|i| 1_000 + (i * 104_729) % 40_000_000_000).collect(),
            (0..5_000u64).map(|i| (i * i * 7_919) % (HIGHEST_US * 1_000)).collect(),
            vec![2_047_000, 2_048_000, 4_095_000, 4_096_000],
            vec![1],
            vec![u64::MAX, 0, 30_000_000_000],
        ];
        spreads.push(spreads.concat());
        for values in &spreads {
            let mut h = LatencyHistogram::new();
            for &v in values {
                h.record(v);
            }
            let d = dense(values);
            assert_eq!((h.len(), h.min(), h.max()), (d.len(), d.min(), d.max()), "{} values", values.len());
            assert_eq!((h.mean(), h.stdev()), (d.mean(), d.stdev()), "{} values", values.len());
            for q in [0.0, 0.001, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 0.9999, 1.0] {
                assert_eq!(h.value_at_quantile(q), d.value_at_quantile(q), "q {q}");
            }
            let mut bytes = Vec::new();
            V2DeflateSerializer::new().serialize(&d, &mut bytes).unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(h.to_base64(), base64::engine::general_purpose::STANDARD.encode(bytes), "same V2 bytes");
        }
    }

    #[test]
    fn merging_lists_and_blocks_in_any_order_equals_recording_everything_in_one() {
        // A few scattered values (a list), many clustered ones (blocks), and more scattered.
        let parts: [Vec<u64>; 3] = [
            (0..200u64).map(|i| 2_000_000 + (i * 7_919_000) % 18_000_000).collect(),
            (0..50_000u64).map(|i| 50_000 + (i * 7919) % 250_000).collect(),
            (0..3_000u64).map(|i| 1_000 + (i * 104_729_000) % 40_000_000_000).collect(),
        ];
        let whole = dense(&parts.concat());
        for order in [[0, 1, 2], [2, 1, 0], [1, 0, 2], [0, 2, 1]] {
            let mut merged = LatencyHistogram::new();
            for k in order {
                let mut part = LatencyHistogram::new();
                parts[k].iter().for_each(|&v| part.record(v));
                merged.add(&part);
            }
            assert_eq!(
                (merged.len(), merged.min(), merged.max()),
                (whole.len(), whole.min(), whole.max()),
                "{order:?}"
            );
            for q in [0.0, 0.5, 0.99, 0.999, 1.0] {
                assert_eq!(merged.value_at_quantile(q), whole.value_at_quantile(q), "{order:?} q {q}");
            }
            assert_eq!(merged.to_hdr(), whole, "{order:?}");
        }
    }

    #[test]
    fn memory_follows_the_values_recorded_not_the_range() {
        // 300 values scattered over 2-20 ms (a one-VU scenario's interval): a short list.
        let mut scattered = LatencyHistogram::new();
        for i in 0..300u64 {
            scattered.record(2_000_000 + (i * 7_919_000) % 18_000_000);
        }
        assert!(scattered.allocated_bytes() <= 300 * 16 * 2, "{} bytes for 300 values", scattered.allocated_bytes());
        assert_eq!(scattered.len(), 300);
    }

    #[test]
    fn a_busy_histogram_records_into_blocks_whatever_the_spread() {
        // 170 distinct values would stay a list by memory alone; 4,096 records make it busy.
        let mut h = LatencyHistogram::new();
        for i in 0..5_000u64 {
            h.record(30_000 + (i % 170) * 1_000);
        }
        assert!(matches!(h.counters, Counters::Blocks(_)), "{} bytes", h.allocated_bytes());
        assert_eq!(h.to_hdr(), dense(&(0..5_000u64).map(|i| 30_000 + (i % 170) * 1_000).collect::<Vec<_>>()));
    }

    #[test]
    fn memory_follows_the_spread_of_the_values_not_the_range() {
        let mut h = LatencyHistogram::new();
        assert_eq!(h.allocated_bytes(), 0, "nothing until a value is recorded");
        for i in 0..100_000u64 {
            h.record(50_000 + (i * 7919) % 250_000); // 50-300 µs: loopback
        }
        assert!(h.allocated_bytes() <= 4 * 1024, "{} bytes for 50-300 µs", h.allocated_bytes());
        h.record(30_000_000_000); // one 30 s timeout adds a block, not the range up to it
        assert!(h.allocated_bytes() <= 6 * 1024, "{} bytes with a 30 s outlier", h.allocated_bytes());
        h.reset();
        assert_eq!((h.allocated_bytes(), h.len()), (0, 0));
    }

    #[test]
    fn summary_percentiles_within_precision() {
        let mut h = LatencyHistogram::new();
        for ms in 1..=1000u64 {
            h.record(ms * 1_000_000);
        }
        let s = h.summary(&[]);
        assert_eq!(s.count, 1000);
        for (got, want) in
            [(s.p50_ms, 500.0), (s.p90_ms, 900.0), (s.p99_ms, 990.0), (s.max_ms, 1000.0), (s.min_ms, 1.0)]
        {
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
        for (q, key) in [(50.0, "p50_ms"), (99.9, "p99_9_ms"), (99.99, "p99_99_ms"), (75.0, "p75_ms"), (0.1, "p0_1_ms")]
        {
            assert_eq!(percentile_key(q), key);
        }
    }
}
