//! Service slots and their wait queue, computed rather than slept: a FIFO G/G/N queue.
//!
//! A request that arrives at time `t` goes to the slot that frees up first; it starts at
//! `max(t, free_at)` and holds the slot until `start + service`. The handler then only has to
//! sleep until that finish time. Because occupancy is arithmetic on the intended times, timer
//! lateness (tokio's timers round to the millisecond) never accumulates into lost capacity: N
//! slots with mean service time D serve exactly N / D requests per second under load.
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Slot is where an admitted request sits: it waits until `start_ns`, then is served until
/// `finish_ns` (both in nanoseconds since the server started).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// start_ns is when a slot begins serving the request.
    pub start_ns: u64,
    /// finish_ns is when the request's response is due.
    pub finish_ns: u64,
}

/// ServiceSlots is a pool of `workers` slots with a FIFO wait queue of at most `queue_limit`
/// requests (unbounded when `None`). Calls must come with non-decreasing `now_ns`.
#[derive(Debug)]
pub struct ServiceSlots {
    free_at: BinaryHeap<Reverse<u64>>,
    waiting: VecDeque<u64>,
    queue_limit: Option<usize>,
}

impl ServiceSlots {
    /// new returns `workers` idle slots (at least one) and the given wait-queue limit.
    pub fn new(workers: usize, queue_limit: Option<usize>) -> Self {
        Self {
            free_at: (0..workers.max(1)).map(|_| Reverse(0)).collect(),
            waiting: VecDeque::new(),
            queue_limit,
        }
    }

    /// admit places a request arriving at `now_ns` that needs `service_ns` of a slot; it
    /// returns `None`, changing nothing, when every slot is busy and the queue is full.
    pub fn admit(&mut self, now_ns: u64, service_ns: u64) -> Option<Slot> {
        let depth = self.queue_depth(now_ns);
        let mut earliest = self.free_at.peek_mut()?;
        let start_ns = earliest.0.max(now_ns);
        if start_ns > now_ns {
            if self.queue_limit.is_some_and(|limit| depth >= limit) {
                return None;
            }
            self.waiting.push_back(start_ns);
        }
        let finish_ns = start_ns.saturating_add(service_ns);
        earliest.0 = finish_ns;
        Some(Slot { start_ns, finish_ns })
    }

    /// queue_depth is how many admitted requests are still waiting for a slot at `now_ns`.
    pub fn queue_depth(&mut self, now_ns: u64) -> usize {
        while self.waiting.front().is_some_and(|&start| start <= now_ns) {
            self.waiting.pop_front();
        }
        self.waiting.len()
    }

    /// busy is how many slots are serving a request at `now_ns`.
    pub fn busy(&self, now_ns: u64) -> usize {
        self.free_at.iter().filter(|Reverse(t)| *t > now_ns).count()
    }

    /// workers is the number of slots.
    pub fn workers(&self) -> usize {
        self.free_at.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case: workers, queue limit, service time, arrivals; expected (start, finish) or
    /// None for a rejection, per arrival.
    #[allow(clippy::type_complexity)]
    const CASES: &[(&str, usize, Option<usize>, u64, &[u64], &[Option<(u64, u64)>])] = &[
        ("idle slot starts at once", 1, None, 10, &[0, 20], &[Some((0, 10)), Some((20, 30))]),
        (
            "one slot queues unbounded",
            1,
            None,
            10,
            &[0, 1, 2],
            &[Some((0, 10)), Some((10, 20)), Some((20, 30))],
        ),
        (
            "two slots share",
            2,
            None,
            10,
            &[0, 0, 0, 5],
            &[Some((0, 10)), Some((0, 10)), Some((10, 20)), Some((10, 20))],
        ),
        ("queue 0 rejects when busy", 1, Some(0), 10, &[0, 1, 10], &[Some((0, 10)), None, Some((10, 20))]),
        (
            "queue 1 holds one",
            1,
            Some(1),
            10,
            &[0, 1, 2, 11],
            &[Some((0, 10)), Some((10, 20)), None, Some((20, 30))],
        ),
        (
            "queue drains as slots free",
            2,
            Some(1),
            10,
            &[0, 0, 0, 0, 10, 10],
            &[Some((0, 10)), Some((0, 10)), Some((10, 20)), None, Some((10, 20)), Some((20, 30))],
        ),
    ];

    #[test]
    fn admits_in_fifo_order() {
        for (name, workers, queue, service, arrivals, want) in CASES {
            let mut slots = ServiceSlots::new(*workers, *queue);
            let got: Vec<Option<(u64, u64)>> = arrivals
                .iter()
                .map(|&t| slots.admit(t, *service).map(|s| (s.start_ns, s.finish_ns)))
                .collect();
            assert_eq!(&got, want, "{name}");
        }
    }

    #[test]
    fn reports_depth_and_busy() {
        let mut slots = ServiceSlots::new(2, None);
        for _ in 0..5 {
            slots.admit(0, 10);
        }
        // At 0: two serving, three waiting (starting at 10, 10, 20).
        assert_eq!((slots.busy(0), slots.queue_depth(0)), (2, 3));
        assert_eq!((slots.busy(10), slots.queue_depth(10)), (2, 1));
        assert_eq!((slots.busy(25), slots.queue_depth(25)), (1, 0));
        assert_eq!((slots.busy(30), slots.queue_depth(30)), (0, 0));
    }

    #[test]
    fn capacity_is_workers_over_service_time() {
        // 4 slots × 10 ms: offered 600/s for 10 s with queue 8 serves ~400/s.
        let (mut served, mut rejected) = (0u64, 0u64);
        let mut slots = ServiceSlots::new(4, Some(8));
        let gap = 1_000_000_000 / 600;
        for i in 0..6000u64 {
            match slots.admit(i * gap, 10_000_000) {
                Some(_) => served += 1,
                None => rejected += 1,
            }
        }
        assert!((3990..=4020).contains(&served), "served {served}");
        assert_eq!(served + rejected, 6000);
    }
}
