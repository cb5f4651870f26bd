//! segment: the share of a run's arrival sequence that one engine (a machine of a distributed
//! run, then each of its threads) sends; k6 calls it the execution segment. A plan carries its
//! machine's segment (JSON key `stripe`), the run splits it over its threads.

use serde::{Deserialize, Serialize};

/// Segment selects every `stride`-th request index starting at `offset`: the share of a
/// schedule one thread (or one machine of a distributed run) sends. Segments with the same
/// stride and offsets 0..stride partition the schedule exactly, and interleave in time so
/// that the parts do not send in step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Segment {
    /// offset is the first index of this share.
    pub offset: u64,
    /// stride is the distance between consecutive indices of this share.
    pub stride: u64,
}

impl Default for Segment {
    fn default() -> Self {
        Segment::WHOLE
    }
}

impl Segment {
    /// WHOLE is the segment holding every index.
    pub const WHOLE: Segment = Segment { offset: 0, stride: 1 };

    /// split divides this segment into `parts` segments that together hold exactly its indices.
    pub fn split(self, parts: u64) -> Vec<Segment> {
        let parts = parts.max(1);
        (0..parts).map(|k| Segment { offset: self.offset + k * self.stride, stride: self.stride * parts }).collect()
    }

    /// index returns the global index of this segment's `nth` request.
    pub fn index(self, nth: u64) -> u64 {
        self.offset + nth * self.stride
    }

    /// share_of returns how many of the indices `0..total` belong to this segment.
    pub fn share_of(self, total: u64) -> u64 {
        if total <= self.offset {
            0
        } else {
            (total - self.offset).div_ceil(self.stride)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_partition_a_schedule() {
        for parts in 1..=5u64 {
            let segments = Segment::WHOLE.split(parts);
            for total in [0u64, 1, 7, 100, 1001] {
                let sum: u64 = segments.iter().map(|s| s.share_of(total)).sum();
                assert_eq!(sum, total, "parts {parts} total {total}");
            }
            let mut seen: Vec<u64> = segments.iter().flat_map(|s| (0..20).map(move |n| s.index(n))).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len() as u64, 20 * parts);
        }
        // nested split: machine 1 of 2, then thread 0 and 1 of it
        let machine = Segment::WHOLE.split(2)[1];
        let threads = machine.split(2);
        assert_eq!(threads[0], Segment { offset: 1, stride: 4 });
        assert_eq!(threads[1], Segment { offset: 3, stride: 4 });
    }
}
