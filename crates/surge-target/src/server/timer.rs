//! Timer: sleeps with sub-millisecond precision for one server thread.
//!
//! tokio's timer wheel rounds every deadline up to the next millisecond, which would add
//! 0–1 ms to every response of the service model (a 1.7 ms service time would look like
//! 2–2.7 ms). On Linux each server thread instead keeps its deadlines in a heap and arms one
//! `timerfd` (CLOCK_MONOTONIC, nanoseconds, the clock `Instant` reads) for the earliest; its
//! readiness wakes the event loop like any socket. Elsewhere, or if no timerfd can be made,
//! it falls back to tokio's timer.
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// Driver is the future that keeps a precise [`Timer`] going; spawn it on the timer's runtime.
pub type Driver = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Timer is one server thread's sleeper; cheap to share between its connections.
#[derive(Debug, Clone)]
pub struct Timer {
    precise: Option<Arc<precise::Precise>>,
}

impl Timer {
    /// new makes a timer for the current tokio runtime (call it inside one) and the future
    /// that drives it, to be spawned on the same runtime; `None` means tokio's own timer is
    /// used and nothing needs driving.
    pub fn new() -> (Timer, Option<Driver>) {
        match precise::Precise::new() {
            Some(p) => {
                let p = Arc::new(p);
                let driver: Driver = Box::pin(precise::drive(Arc::clone(&p)));
                (Timer { precise: Some(p) }, Some(driver))
            }
            None => (Timer { precise: None }, None),
        }
    }

    /// is_precise says whether deadlines are kept to the nanosecond (timerfd) rather than
    /// rounded up to the millisecond (tokio).
    pub fn is_precise(&self) -> bool {
        self.precise.is_some()
    }

    /// sleep_until completes at or soon after `at` (never before).
    pub async fn sleep_until(&self, at: Instant) {
        match &self.precise {
            Some(p) => Sleep { timer: p, at }.await,
            None => tokio::time::sleep_until(at.into()).await,
        }
    }
}

/// Sleep is the future of one precise sleep.
struct Sleep<'a> {
    timer: &'a precise::Precise,
    at: Instant,
}

impl Future for Sleep<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.at {
            return Poll::Ready(());
        }
        self.timer.register(self.at, cx.waker().clone());
        Poll::Pending
    }
}

/// Entry is one registered deadline, ordered by time then registration.
#[derive(Debug)]
struct Entry {
    at: Instant,
    seq: u64,
    waker: Waker,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// Deadlines is the heap of pending deadlines and the one the timerfd is armed for.
#[derive(Debug, Default)]
struct Deadlines {
    heap: BinaryHeap<Reverse<Entry>>,
    armed: Option<Instant>,
    seq: u64,
}

impl Deadlines {
    /// push adds a deadline; returns it when the timer must be re-armed for it.
    fn push(&mut self, at: Instant, waker: Waker) -> Option<Instant> {
        self.seq += 1;
        self.heap.push(Reverse(Entry { at, seq: self.seq, waker }));
        if self.armed.is_none_or(|armed| at < armed) {
            self.armed = Some(at);
            return Some(at);
        }
        None
    }

    /// expire removes the deadlines due at `now`, returning their wakers and the next
    /// deadline to arm for.
    fn expire(&mut self, now: Instant) -> (Vec<Waker>, Option<Instant>) {
        let mut due = Vec::new();
        while self.heap.peek().is_some_and(|Reverse(e)| e.at <= now) {
            if let Some(Reverse(e)) = self.heap.pop() {
                due.push(e.waker);
            }
        }
        self.armed = self.heap.peek().map(|Reverse(e)| e.at);
        (due, self.armed)
    }
}

#[cfg(target_os = "linux")]
mod precise {
    use std::os::fd::OwnedFd;
    use std::time::Instant;

    use rustix::time::{
        timerfd_create, timerfd_settime, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec,
    };
    use tokio::io::unix::AsyncFd;
    use tokio::io::Interest;

    use super::{Arc, Deadlines, Mutex, PoisonError, Waker};

    /// Precise is a timerfd registered with the thread's event loop, and its deadlines.
    #[derive(Debug)]
    pub struct Precise {
        fd: AsyncFd<OwnedFd>,
        deadlines: Mutex<Deadlines>,
    }

    impl Precise {
        /// new creates the timerfd; `None` when the system refuses one.
        pub fn new() -> Option<Self> {
            let owned =
                timerfd_create(TimerfdClockId::Monotonic, TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC).ok()?;
            // SAFETY: an OwnedFd stays open and returns the same descriptor until it is dropped
            // with the AsyncFd that owns it.
            let fd = unsafe { AsyncFd::register_with_interest(owned, Interest::READABLE) }.ok()?;
            Some(Self { fd, deadlines: Mutex::new(Deadlines::default()) })
        }

        /// register asks to wake `waker` at `at`.
        pub fn register(&self, at: Instant, waker: Waker) {
            let arm = self.deadlines.lock().unwrap_or_else(PoisonError::into_inner).push(at, waker);
            if let Some(at) = arm {
                self.arm(at);
            }
        }

        /// arm sets the timerfd to expire at `at` (at least 1 ns from now; 0 would disarm it).
        fn arm(&self, at: Instant) {
            let nanos = at.saturating_duration_since(Instant::now()).as_nanos().max(1);
            let secs = i64::try_from(nanos / 1_000_000_000).unwrap_or(i64::MAX);
            // Below 10^9, so it fits every platform's nanosecond field.
            let value = Timespec { tv_sec: secs, tv_nsec: (nanos % 1_000_000_000) as _ };
            let spec = Itimerspec { it_interval: Timespec { tv_sec: 0, tv_nsec: 0 }, it_value: value };
            let _ = timerfd_settime(self.fd.get_ref(), TimerfdTimerFlags::empty(), &spec);
        }
    }

    /// drive wakes sleepers as their deadlines pass, for as long as the runtime runs.
    pub async fn drive(p: Arc<Precise>) {
        loop {
            let Ok(mut guard) = p.fd.readable().await else { return };
            let mut expirations = [0u8; 8];
            let read = guard.try_io(|fd| Ok(rustix::io::read(fd.get_ref(), &mut expirations)?));
            if read.is_err() {
                continue; // not expired after all (readiness cleared), or re-armed meanwhile
            }
            // The expiration is consumed: skip the read that would only say so. An expiry after
            // this point is a new event, which clear_ready leaves in place.
            guard.clear_ready();
            let (due, next) = p.deadlines.lock().unwrap_or_else(PoisonError::into_inner).expire(Instant::now());
            if let Some(at) = next {
                p.arm(at);
            }
            due.into_iter().for_each(Waker::wake);
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod precise {
    use super::*;

    /// Precise is unavailable off Linux: tokio's timer is used.
    #[derive(Debug)]
    pub struct Precise {
        _deadlines: Mutex<Deadlines>,
    }

    impl Precise {
        pub fn new() -> Option<Self> {
            None
        }

        pub fn register(&self, _at: Instant, _waker: Waker) {}
    }

    pub async fn drive(_p: Arc<Precise>) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn deadlines_arm_for_the_earliest() {
        struct Noop;
        impl std::task::Wake for Noop {
            fn wake(self: Arc<Self>) {}
        }
        let base = Instant::now();
        let at = |ms: u64| base + Duration::from_millis(ms);
        let mut d = Deadlines::default();
        let waker = Waker::from(Arc::new(Noop));
        assert_eq!(d.push(at(10), waker.clone()), Some(at(10)));
        assert_eq!(d.push(at(20), waker.clone()), None);
        assert_eq!(d.push(at(5), waker.clone()), Some(at(5)));
        let (due, next) = d.expire(at(10));
        assert_eq!((due.len(), next), (2, Some(at(20))));
        let (due, next) = d.expire(at(30));
        assert_eq!((due.len(), next), (1, None));
        assert_eq!(d.push(at(40), waker), Some(at(40)));
    }

    #[test]
    fn sleeps_precisely() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let Ok(runtime) = runtime else { return };
        runtime.block_on(async {
            let (timer, driver) = Timer::new();
            if let Some(driver) = driver {
                tokio::spawn(driver);
            }
            let mut late = Vec::new();
            for i in 0..20u64 {
                let at = Instant::now() + Duration::from_micros(1_700 + 37 * i);
                timer.sleep_until(at).await;
                let now = Instant::now();
                assert!(now >= at);
                late.push(now - at);
            }
            late.sort();
            if timer.is_precise() {
                // The median lateness is well under tokio's millisecond rounding.
                assert!(late[10] < Duration::from_micros(500), "{late:?}");
            }
        });
    }
}
