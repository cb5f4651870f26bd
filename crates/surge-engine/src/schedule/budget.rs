//! budget: an exact request count shared by all threads, claimed in small batches so
//! threads rarely touch the shared counter.

use std::sync::atomic::{AtomicU64, Ordering};

/// Budget holds the requests left to send; claims never hand out more than it holds.
#[derive(Debug)]
pub(crate) struct Budget {
    remaining: AtomicU64,
}

impl Budget {
    /// new returns a budget of `total` requests.
    pub(crate) fn new(total: u64) -> Budget {
        Budget { remaining: AtomicU64::new(total) }
    }

    /// claim takes up to `wanted` requests and returns how many were granted (0 when empty).
    pub(crate) fn claim(&self, wanted: u64) -> u64 {
        let mut granted = 0;
        let _ = self.remaining.fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
            granted = left.min(wanted);
            (granted > 0).then(|| left - granted)
        });
        granted
    }

    /// give_back returns unused requests (a thread stopping with tokens in hand).
    pub(crate) fn give_back(&self, unused: u64) {
        if unused > 0 {
            self.remaining.fetch_add(unused, Ordering::AcqRel);
        }
    }

    /// remaining is how many requests are still unclaimed.
    #[cfg(test)]
    pub(crate) fn remaining(&self) -> u64 {
        self.remaining.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn concurrent_claims_hand_out_exactly_the_total() {
        let budget = Arc::new(Budget::new(100_003));
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let budget = budget.clone();
                std::thread::spawn(move || {
                    let mut got = 0;
                    loop {
                        let n = budget.claim(7 + i);
                        if n == 0 {
                            return got;
                        }
                        got += n;
                    }
                })
            })
            .collect();
        let total: u64 = handles.into_iter().map(|h| h.join().unwrap_or(0)).sum();
        assert_eq!(total, 100_003);
        assert_eq!(budget.remaining(), 0);
        budget.give_back(5);
        assert_eq!(budget.claim(10), 5);
    }
}
