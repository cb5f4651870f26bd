//! CpuPool: service threads that burn each request's service time as CPU (`--service-cpu`).
//!
//! The service slots of `slots.rs` are computed and slept, so the target's own CPU never caps
//! what it models. A CPU-bound server is the opposite: its requests need CPU, and a busy
//! machine makes them slower. With `--service-cpu` each of the `--workers` workers is an OS
//! thread; a request waits in a FIFO queue for a free one, which burns the request's service
//! time draw **measured by its own CPU clock** (`CLOCK_THREAD_CPUTIME_ID`), not the wall
//! clock: when other processes take the core, the burn takes longer, as a real handler would.
//! `--workers 1` is one event loop (a Node.js controller: one thread, at most one core);
//! `--workers 8` is an 8-thread pool, which a 2-core machine runs at most 2 at a time.
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use crate::model::Load;

/// MAX_CPU_WORKERS is the most `--workers` with `--service-cpu` (each is an OS thread).
pub const MAX_CPU_WORKERS: i64 = 1024;

/// Burned is the receiving end of one submitted burn: it resolves to the CPU nanoseconds the
/// worker thread used once it is done (an error if the pool stopped first).
pub type Burned = oneshot::Receiver<u64>;

/// CpuPool runs `workers` threads that take burns in arrival order; at most `queue_limit`
/// burns wait for a thread (unbounded when `None`). Dropping it stops and joins the threads;
/// burns still waiting then are dropped (their receivers see an error).
#[derive(Debug)]
pub struct CpuPool {
    inner: Arc<Inner>,
    handles: Vec<JoinHandle<()>>,
}

#[derive(Debug)]
struct Inner {
    state: Mutex<State>,
    wake: Condvar,
    workers: usize,
    queue_limit: Option<usize>,
    stop: AtomicBool,
    burned_ns: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    waiting: VecDeque<Job>,
    busy: usize,
}

#[derive(Debug)]
struct Job {
    cpu_ns: u64,
    done: oneshot::Sender<u64>,
}

impl CpuPool {
    /// new starts `workers` threads (at least one) named `surge-target-cpu-N`; an error if the
    /// system refuses a thread (those already started are stopped).
    pub fn new(workers: usize, queue_limit: Option<usize>) -> std::io::Result<Self> {
        let workers = workers.max(1);
        let inner = Arc::new(Inner {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            workers,
            queue_limit,
            stop: AtomicBool::new(false),
            burned_ns: AtomicU64::new(0),
        });
        let mut pool = Self { inner, handles: Vec::with_capacity(workers) };
        for index in 0..workers {
            let inner = Arc::clone(&pool.inner);
            let handle =
                std::thread::Builder::new().name(format!("surge-target-cpu-{index}")).spawn(move || inner.run())?;
            pool.handles.push(handle);
        }
        Ok(pool)
    }

    /// submit queues a burn of `cpu_ns` of a worker thread's CPU time; `None`, changing
    /// nothing, when every thread is busy and `queue_limit` burns already wait.
    pub fn submit(&self, cpu_ns: u64) -> Option<Burned> {
        let mut state = self.inner.lock();
        let all_busy = state.busy + state.waiting.len() >= self.inner.workers;
        if all_busy && self.inner.queue_limit.is_some_and(|limit| self.inner.queued(&state) >= limit) {
            return None;
        }
        let (done, burned) = oneshot::channel();
        state.waiting.push_back(Job { cpu_ns, done });
        drop(state);
        self.inner.wake.notify_one();
        Some(burned)
    }

    /// load is the pool now: burns waiting for a thread (`queue_depth`) and threads burning
    /// (`busy_workers`).
    pub fn load(&self) -> Load {
        let state = self.inner.lock();
        Load { queue_depth: self.inner.queued(&state), busy_workers: state.busy }
    }

    /// burned_s is the CPU seconds the threads burned (by their own clocks) since the pool
    /// started or [`CpuPool::reset`].
    pub fn burned_s(&self) -> f64 {
        self.inner.burned_ns.load(Ordering::Relaxed) as f64 / 1e9
    }

    /// reset starts [`CpuPool::burned_s`] again from zero.
    pub fn reset(&self) {
        self.inner.burned_ns.store(0, Ordering::Relaxed);
    }
}

impl Drop for CpuPool {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::Relaxed);
        self.inner.lock().waiting.clear();
        self.inner.wake.notify_all();
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// queued is the burns that wait for a thread: those submitted and not yet taken, less
    /// the idle threads that are about to take them.
    fn queued(&self, state: &State) -> usize {
        (state.busy + state.waiting.len()).saturating_sub(self.workers)
    }

    /// run is one worker thread: take the oldest burn, burn it, report, until stopped.
    fn run(&self) {
        let mut state = self.lock();
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            let Some(job) = state.waiting.pop_front() else {
                state = self.wake.wait(state).unwrap_or_else(PoisonError::into_inner);
                continue;
            };
            state.busy += 1;
            drop(state);
            let used = burn_unless(job.cpu_ns, &self.stop);
            self.burned_ns.fetch_add(used, Ordering::Relaxed);
            state = self.lock();
            state.busy -= 1;
            let _ = job.done.send(used); // the connection may have gone: nothing to tell
        }
    }
}

/// CHECK_EVERY is how many rounds of work [`burn`] does between readings of the CPU clock
/// (a few microseconds' worth, so a burn overshoots its target by about that much).
const CHECK_EVERY: u32 = 2_000;

/// burn keeps the calling thread busy computing until it has used at least `cpu_ns` of its
/// own CPU time ([`thread_cpu_ns`]), and returns the CPU time it used. Time the thread spends
/// descheduled does not count, so on a busy core it takes longer than `cpu_ns` of wall time.
pub fn burn(cpu_ns: u64) -> u64 {
    burn_unless(cpu_ns, &AtomicBool::new(false))
}

/// burn_unless is [`burn`] that gives up early, returning what it used, once `stop` is set
/// (so a server stopping never waits for a long burn).
fn burn_unless(cpu_ns: u64, stop: &AtomicBool) -> u64 {
    let start = thread_cpu_ns();
    let mut x: u64 = start | 1;
    loop {
        for _ in 0..CHECK_EVERY {
            // xorshift64*: real arithmetic the optimizer cannot drop (black_box below).
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        }
        std::hint::black_box(x);
        let used = thread_cpu_ns().saturating_sub(start);
        if used >= cpu_ns || stop.load(Ordering::Relaxed) {
            return used;
        }
    }
}

/// thread_cpu_ns is the calling thread's CPU time (user and system) in nanoseconds, from
/// `CLOCK_THREAD_CPUTIME_ID`; off Unix, where there is no such clock, the wall clock since
/// the first call.
#[cfg(unix)]
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer; the clock id is a
    // constant every supported Unix defines.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut ts) };
    if rc != 0 {
        return 0;
    }
    u64::try_from(ts.tv_sec).unwrap_or(0).saturating_mul(1_000_000_000) + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

/// thread_cpu_ns is the wall clock since the first call (no thread CPU clock off Unix).
#[cfg(not(unix))]
pub fn thread_cpu_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    u64::try_from(ORIGIN.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    const MS: u64 = 1_000_000;

    #[test]
    fn burn_uses_the_thread_cpu_time_asked_for() {
        for want in [MS, 5 * MS, 20 * MS] {
            let (cpu0, wall0) = (thread_cpu_ns(), Instant::now());
            let used = burn(want);
            let (cpu, wall) = (thread_cpu_ns() - cpu0, wall0.elapsed());
            // Measured independently of burn's own figure: at least what was asked, within
            // half a millisecond (a check every few µs), and never more than the wall time.
            assert!(used >= want && cpu >= want, "asked {want}, burn said {used}, clock says {cpu}");
            assert!(cpu < want + MS / 2, "asked {want}, used {cpu}");
            assert!(wall >= Duration::from_nanos(cpu - 100_000), "cpu {cpu} ns in {wall:?}");
        }
    }

    /// pin_to puts the calling thread on one CPU.
    fn pin_to(cpu: usize) {
        // SAFETY: cpu_set_t is plain data; sched_setaffinity(0, ..) affects the calling thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set);
        }
    }

    #[test]
    fn a_shared_core_makes_a_burn_slower_not_shorter() {
        // Two threads burning on one core each get about half of it: 30 ms of CPU each takes
        // about 60 ms of wall time. (Other processes on the core only make it longer.)
        let cpu = 0;
        let other = std::thread::spawn(move || {
            pin_to(cpu);
            burn(30 * MS)
        });
        pin_to(cpu);
        let wall0 = Instant::now();
        let used = burn(30 * MS);
        let wall = wall0.elapsed();
        let other_used = other.join().unwrap_or(0);
        assert!(used >= 30 * MS && other_used >= 30 * MS);
        assert!(wall >= Duration::from_millis(45), "30 ms of CPU on a shared core took {wall:?}");
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        let runtime = tokio::runtime::Builder::new_current_thread().build();
        runtime.map_or_else(|e| panic!("runtime: {e}"), |r| r.block_on(future))
    }

    #[test]
    fn one_thread_burns_one_at_a_time_and_the_queue_is_bounded() {
        let pool = CpuPool::new(1, Some(2)).unwrap_or_else(|e| panic!("pool: {e}"));
        let wall0 = Instant::now();
        let burns: Vec<Burned> = (0..3).filter_map(|_| pool.submit(10 * MS)).collect();
        let zero = CpuPool::new(1, Some(0)).unwrap_or_else(|e| panic!("pool: {e}"));
        assert!(zero.submit(MS).is_some() && zero.submit(MS).is_none(), "queue 0: only a free thread takes one");
        // One burning (or about to), two waiting: a fourth finds the queue full.
        assert_eq!(burns.len(), 3);
        assert!(pool.submit(MS).is_none());
        let used: Vec<u64> = block_on(async {
            let mut out = Vec::new();
            for b in burns {
                out.push(b.await.unwrap_or(0));
            }
            out
        });
        assert!(used.iter().all(|&u| u >= 10 * MS), "{used:?}");
        // One thread: three 10 ms burns one after the other, however many cores there are.
        assert!(wall0.elapsed() >= Duration::from_millis(30), "{:?}", wall0.elapsed());
        assert!(pool.burned_s() >= 0.030, "{}", pool.burned_s());
        assert_eq!(pool.load(), Load::default());
        pool.reset();
        assert_eq!(pool.burned_s(), 0.0);
    }
}
