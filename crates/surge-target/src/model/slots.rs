//! Service slots and their wait queue, computed rather than slept: a FIFO G/G/N queue.
//!
//! A request that arrives at time `t` goes to the slot that frees up first; it starts at
//! `max(t, free_at)` and holds the slot until `start + service`. The handler then only has to
//! sleep until that finish time. Because occupancy is arithmetic on the intended times, timer
//! lateness (tokio's timers round to the millisecond) never accumulates into lost capacity: N
//! slots with mean service time D serve exactly N / D requests per second under load.
//!
//! With the Universal Scalability Law ([`Usl`]) a request's service time is multiplied by the
//! slowdown of the number of requests in service when it starts, itself included; that number
//! is exact too, because starts come in arrival order (each request takes the slot that frees
//! first, and the clock never goes back), so every request admitted before it has either
//! finished by its start or is still in service then.
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::config::duration::MAX_DURATION;
use crate::model::service_time::nanos_of;
use crate::model::usl::Usl;

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
/// requests (unbounded when `None`), optionally slowed down by the Universal Scalability Law.
/// Calls must come with non-decreasing `now_ns`.
#[derive(Debug)]
pub struct ServiceSlots {
    free_at: BinaryHeap<Reverse<u64>>,
    waiting: VecDeque<u64>,
    queue_limit: Option<usize>,
    usl: Option<Usl>,
    /// finishing holds the finish times of admitted requests not yet known to be done (kept
    /// only with `usl`): after dropping those done by a start, its length is the number in
    /// service then.
    finishing: BinaryHeap<Reverse<u64>>,
}

impl ServiceSlots {
    /// new returns `workers` idle slots (at least one), the given wait-queue limit and, with
    /// `usl`, service times that grow with the number of requests in service.
    pub fn new(workers: usize, queue_limit: Option<usize>, usl: Option<Usl>) -> Self {
        Self {
            free_at: (0..workers.max(1)).map(|_| Reverse(0)).collect(),
            waiting: VecDeque::new(),
            queue_limit,
            usl,
            finishing: BinaryHeap::new(),
        }
    }

    /// admit places a request arriving at `now_ns` that needs `service_ns` of a slot alone
    /// (times the law's slowdown when there is one); it returns `None`, changing nothing, when
    /// every slot is busy and the queue is full.
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
        let service_ns = match self.usl {
            Some(usl) => {
                while self.finishing.peek().is_some_and(|Reverse(finish)| *finish <= start_ns) {
                    self.finishing.pop();
                }
                let slowed = service_ns as f64 * usl.slowdown(self.finishing.len() + 1);
                slowed.round().min(nanos_of(MAX_DURATION) as f64) as u64
            }
            None => service_ns,
        };
        let finish_ns = start_ns.saturating_add(service_ns);
        earliest.0 = finish_ns;
        if self.usl.is_some() {
            self.finishing.push(Reverse(finish_ns));
        }
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
        ("one slot queues unbounded", 1, None, 10, &[0, 1, 2], &[Some((0, 10)), Some((10, 20)), Some((20, 30))]),
        (
            "two slots share",
            2,
            None,
            10,
            &[0, 0, 0, 5],
            &[Some((0, 10)), Some((0, 10)), Some((10, 20)), Some((10, 20))],
        ),
        ("queue 0 rejects when busy", 1, Some(0), 10, &[0, 1, 10], &[Some((0, 10)), None, Some((10, 20))]),
        ("queue 1 holds one", 1, Some(1), 10, &[0, 1, 2, 11], &[Some((0, 10)), Some((10, 20)), None, Some((20, 30))]),
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
            let mut slots = ServiceSlots::new(*workers, *queue, None);
            let got: Vec<Option<(u64, u64)>> =
                arrivals.iter().map(|&t| slots.admit(t, *service).map(|s| (s.start_ns, s.finish_ns))).collect();
            assert_eq!(&got, want, "{name}");
        }
    }

    #[test]
    fn reports_depth_and_busy() {
        let mut slots = ServiceSlots::new(2, None, None);
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
        let mut slots = ServiceSlots::new(4, Some(8), None);
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

    #[test]
    fn usl_slows_each_request_by_those_in_service_at_its_start() {
        // σ = 0.5, κ = 0.25: slowdown(1) = 1, slowdown(2) = 2, slowdown(3) = 3.5.
        let usl = Usl { contention: 0.5, coherency: 0.25 };
        let mut slots = ServiceSlots::new(2, None, Some(usl));
        let got: Vec<(u64, u64)> =
            [0, 0, 0, 100].iter().map(|&t| slots.admit(t, 10).map_or((0, 0), |s| (s.start_ns, s.finish_ns))).collect();
        // 1st alone: 10. 2nd with the 1st: 20. 3rd waits for the 1st (free at 10), starts with
        // the 2nd still in service: 20, so 10..30. 4th at 100 finds both done: 10.
        assert_eq!(got, vec![(0, 10), (0, 20), (10, 30), (100, 110)]);
    }

    #[test]
    fn usl_closed_loop_throughput_is_x_of_n() {
        // N clients that resend the moment they are answered, against a law with N* = 8 and
        // 1 ms alone: in steady state every request starts with N in service, so N clients
        // complete X(N) = N / (1 ms · slowdown(N)) per second.
        let usl = Usl { contention: 0.1, coherency: 0.9 / 64.0 };
        for clients in [2usize, 4, 8, 16, 32] {
            let mut slots = ServiceSlots::new(1000, None, Some(usl));
            // due: when each client's current request is answered (a min-heap of times).
            let mut due: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
            for _ in 0..clients {
                let slot = slots.admit(0, 1_000_000).map_or(0, |s| s.finish_ns);
                due.push(Reverse(slot));
            }
            let (mut done, horizon) = (0u64, 10_000_000_000u64);
            let mut warm = None;
            while let Some(Reverse(t)) = due.pop() {
                if t > horizon {
                    break;
                }
                if t >= 1_000_000_000 {
                    warm.get_or_insert(done);
                }
                done += 1;
                due.push(Reverse(slots.admit(t, 1_000_000).map_or(u64::MAX, |s| s.finish_ns)));
            }
            let measured = (done - warm.unwrap_or(0)) as f64 / 9.0;
            let want = usl.throughput(clients, 0.001);
            assert!((measured / want - 1.0).abs() < 0.01, "{clients} clients: {measured} req/s, X(N) = {want}");
        }
    }
}
