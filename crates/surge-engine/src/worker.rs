//! worker: one event loop per thread. It owns its connections (one per virtual user),
//! counters and histograms, runs its share of every scenario, shares nothing per request,
//! and reports mergeable metrics once per interval.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::budget::Budget;
use crate::conn::{Conn, Phase};
use crate::executor::{Iterations, Model};
use crate::failure::FailureClass;
use crate::http1::Step as ParseStep;
use crate::metrics::{MetricsShape, ThreadMetrics};
use crate::response::{JsonCache, ResponseView};
use crate::pacer::{Pacer, Stripe};
use crate::pool::{PoolSpecs, Pools};
use crate::request::RequestBytes;
use crate::scenario::{CaptureTarget, Scenario, MAX_RETAINED_BODY};
use crate::variables::{ThreadShare, VariableState};
use crate::system::{thread_cpu_time, CpuTime};
use crate::timer::{set_precise_timer_slack, Timer};
use crate::tls::TlsSetup;

/// TIMER_TOKEN identifies the pacing timer among connection tokens.
const TIMER_TOKEN: Token = Token(usize::MAX - 1);

/// SCRATCH_BYTES is the per-thread read buffer; most responses arrive in one read.
const SCRATCH_BYTES: usize = 64 * 1024;

/// RECONNECT_BACKOFF_NS spaces connection attempts after a connect-level failure, so a
/// dead target does not turn into a busy loop of failures.
const RECONNECT_BACKOFF_NS: u64 = 10_000_000;

/// RAMP_TICK_NS is how often a ramping-vus scenario re-evaluates its VU count.
const RAMP_TICK_NS: u64 = 10_000_000;

/// Share is this thread's part of one scenario.
#[derive(Clone, Debug)]
pub enum Share {
    /// Closed: `vus` virtual users (the peak, for a ramp), optionally from a shared budget.
    Closed {
        /// vus is this thread's number of virtual users.
        vus: u32,
        /// budget is the shared iteration count (shared-iterations), if any.
        budget: Option<Arc<Budget>>,
    },
    /// Open: this thread's stripe of the scenario's schedule.
    Open {
        /// stripe selects this thread's iterations of the schedule.
        stripe: Stripe,
        /// max_vus caps this thread's iterations in progress (and connections).
        max_vus: u32,
        /// pre_allocated_vus connections are opened when the scenario starts.
        pre_allocated_vus: u32,
    },
}

/// WorkerSpec is everything one worker thread needs.
pub struct WorkerSpec {
    /// thread is this worker's index.
    pub thread: usize,
    /// threads is the number of worker threads of the run (for ramp shares).
    pub threads: usize,
    /// origin is the run's time zero, shared by all threads.
    pub origin: Instant,
    /// addr is the target's socket address.
    pub addr: SocketAddr,
    /// tls is the TLS setup for https targets.
    pub tls: Option<TlsSetup>,
    /// scenarios are the run's compiled scenarios.
    pub scenarios: Arc<[Scenario]>,
    /// shares are this thread's part of each scenario, in the same order.
    pub shares: Vec<Share>,
    /// shape is how many slots, scenarios, checks and captures the metrics hold.
    pub shape: MetricsShape,
    /// grace_ns is how long iterations in progress may still complete after the end.
    pub grace_ns: u64,
    /// scan_period_ns is how often timeouts are checked.
    pub scan_period_ns: u64,
    /// interval_ns is the reporting period.
    pub interval_ns: u64,
    /// seed makes this thread's random draws (sequence choice, think times) reproducible.
    pub seed: u64,
    /// share is this thread's place among all generator threads (for variables).
    pub share: ThreadShare,
    /// pools are this thread's data pools (shared initial values, its own captures).
    pub pools: Pools,
    /// cancel is set by the caller to stop the run early.
    pub cancel: Arc<AtomicBool>,
    /// reports carries interval snapshots and the final report to the run.
    pub reports: Sender<Report>,
    /// recycled brings back emptied metrics from the run, so that handing them over each
    /// interval costs a swap instead of copying the histograms.
    pub recycled: Receiver<Box<ThreadMetrics>>,
}

/// Report is what a worker sends to the run's aggregator.
pub enum Report {
    /// Interval carries one interval's metrics and gauges at its end.
    Interval {
        /// thread is the reporting worker.
        thread: usize,
        /// index is the interval's number.
        index: u64,
        /// metrics are this thread's counts and histograms for the interval.
        metrics: Box<ThreadMetrics>,
        /// open_connections is the number of connections open now.
        open_connections: u64,
        /// in_flight is the number of outstanding requests now.
        in_flight: u64,
        /// active_vus is the number of VUs in an iteration now, per scenario.
        active_vus: Vec<u64>,
    },
    /// Done is the worker's last report.
    Done {
        /// thread is the reporting worker.
        thread: usize,
        /// stopped_ns is when it stopped starting iterations.
        stopped_ns: u64,
        /// cpu is the thread's CPU time.
        cpu: CpuTime,
        /// error is set if the worker could not run at all.
        error: Option<String>,
        /// pools are the values this thread captured into pools.
        pools: PoolSpecs,
    },
}

/// run_worker runs one worker to completion and always sends its Done report.
pub fn run_worker(spec: WorkerSpec) {
    let thread = spec.thread;
    let reports = spec.reports.clone();
    let started_cpu = thread_cpu_time();
    match Worker::new(spec) {
        Ok(mut worker) => worker.run(),
        Err(e) => {
            let _ = reports.send(Report::Done {
                thread,
                stopped_ns: 0,
                cpu: thread_cpu_time().since(&started_cpu),
                error: Some(e.to_string()),
                pools: PoolSpecs::new(),
            });
        }
    }
}

/// Stage is where a scenario is on this thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Waiting for its start time.
    Waiting,
    /// Running: starting iterations.
    Running,
    /// Draining: no new iterations; those in progress may finish until `deadline_ns`.
    Draining { deadline_ns: u64 },
    /// Done: nothing left.
    Done,
}

/// Group is one scenario's state on this thread.
struct Group {
    scenario: usize,
    stage: Stage,
    /// busy counts VUs inside an iteration.
    busy: u64,
    closed: Option<ClosedGroup>,
    open: Option<OpenGroup>,
}

/// ClosedGroup: VUs are the connections `first..first + vus`.
struct ClosedGroup {
    first: usize,
    vus: u32,
    active: u32,
    budget: Option<Arc<Budget>>,
    tokens: u64,
    exhausted: bool,
    per_vu: Option<u64>,
    next_ramp_ns: Option<u64>,
}

/// OpenGroup: iterations are due on the pacer's schedule and run on pooled VUs.
struct OpenGroup {
    stripe: Stripe,
    max_vus: u64,
    pre_allocated_vus: u32,
    nth: u64,
    next_due_ns: Option<u64>,
    /// pending are iterations due (their intended times) waiting for a connection.
    pending: VecDeque<u64>,
    idle: Vec<usize>,
    free_slots: Vec<usize>,
    /// vus counts connections held (open or connecting).
    vus: u64,
    connecting: u64,
    retry_connect_ns: Option<u64>,
    /// created counts the VUs (connection slots) created, to number them.
    created: u32,
}

/// Worker is one thread's event loop.
struct Worker {
    spec: WorkerSpec,
    scenarios: Arc<[Scenario]>,
    poll: Poll,
    events: Option<Events>,
    timer: Option<Timer>,
    conns: Vec<Conn>,
    groups: Vec<Group>,
    scratch: Box<[u8]>,
    metrics: ThreadMetrics,
    rng: SmallRng,
    in_flight: u64,
    open_conns: u64,
    stopped_ns: u64,
    next_interval_ns: u64,
    interval_index: u64,
    next_scan_ns: u64,
    /// wakeups are (time, connection) pairs of VUs thinking; stale entries are skipped.
    wakeups: BinaryHeap<Reverse<(u64, usize)>>,
    /// reconnects are closed-model VUs waiting out a connect backoff, in time order.
    reconnects: VecDeque<(u64, usize)>,
    /// json caches the parsed body of the response being checked.
    json: JsonCache,
    /// variables are each scenario's variable-drawing state on this thread.
    variables: Vec<VariableState>,
    /// pools are this thread's data pools.
    pools: Pools,
    /// captured holds a value on its way into a pool.
    captured: Vec<u8>,
}

impl Worker {
    fn new(spec: WorkerSpec) -> io::Result<Worker> {
        let poll = Poll::new()?;
        let scenarios = spec.scenarios.clone();
        let mut conns = Vec::new();
        let mut groups = Vec::with_capacity(spec.shares.len());
        let mut any_open = false;
        for (index, share) in spec.shares.iter().enumerate() {
            let scenario = &scenarios[index];
            let mut group = Group { scenario: index, stage: Stage::Waiting, busy: 0, closed: None, open: None };
            match (share, &scenario.model) {
                (Share::Closed { vus, budget }, Model::Closed { iterations, ramp, .. }) => {
                    let first = conns.len();
                    for vu in 0..*vus {
                        let mut conn = Conn::new();
                        conn.group = index as u32;
                        conn.vu = vu;
                        conn.values = vec![Vec::new(); scenario.value_names.len()];
                        conns.push(conn);
                    }
                    group.closed = Some(ClosedGroup {
                        first,
                        vus: *vus,
                        active: 0,
                        budget: budget.clone(),
                        tokens: 0,
                        exhausted: false,
                        per_vu: match iterations {
                            Iterations::PerVu(n) => Some(*n),
                            _ => None,
                        },
                        next_ramp_ns: ramp.as_ref().map(|_| scenario.start_ns),
                    });
                }
                (Share::Open { stripe, max_vus, pre_allocated_vus }, Model::Open { pacer, .. }) => {
                    any_open = true;
                    group.open = Some(OpenGroup {
                        created: 0,
                        stripe: *stripe,
                        max_vus: u64::from(*max_vus),
                        pre_allocated_vus: *pre_allocated_vus,
                        nth: 0,
                        next_due_ns: pacer.due_ns(stripe.index(0)).map(|d| d + scenario.start_ns),
                        pending: VecDeque::new(),
                        idle: Vec::new(),
                        free_slots: Vec::new(),
                        vus: 0,
                        connecting: 0,
                        retry_connect_ns: None,
                    });
                }
                _ => return Err(io::Error::other("scenario share does not match its executor")),
            }
            groups.push(group);
        }
        let timer = if any_open {
            set_precise_timer_slack();
            Some(Timer::new(poll.registry(), TIMER_TOKEN)?)
        } else {
            None
        };
        let metrics = ThreadMetrics::new(spec.shape);
        let variables =
            scenarios.iter().map(|s| s.variables.thread_state(spec.share, spec.seed ^ s.start_ns.rotate_left(17))).collect();
        let pools = spec.pools.fork();
        Ok(Worker {
            next_interval_ns: spec.interval_ns,
            next_scan_ns: spec.scan_period_ns,
            rng: SmallRng::seed_from_u64(spec.seed),
            scenarios,
            spec,
            poll,
            events: Some(Events::with_capacity(1024)),
            timer,
            conns,
            groups,
            scratch: vec![0u8; SCRATCH_BYTES].into_boxed_slice(),
            metrics,
            in_flight: 0,
            open_conns: 0,
            stopped_ns: 0,
            interval_index: 0,
            wakeups: BinaryHeap::new(),
            reconnects: VecDeque::new(),
            json: JsonCache::new(),
            variables,
            pools,
            captured: Vec::new(),
        })
    }

    #[inline]
    fn now_ns(&self) -> u64 {
        self.spec.origin.elapsed().as_nanos() as u64
    }

    fn run(&mut self) {
        let started_cpu = thread_cpu_time();
        loop {
            let now = self.now_ns();
            let cancelled = self.spec.cancel.load(Ordering::Relaxed);
            for g in 0..self.groups.len() {
                self.advance_group(g, now, cancelled);
            }
            if self.groups.iter().all(|g| g.stage == Stage::Done) {
                break;
            }
            if now >= self.next_interval_ns {
                self.flush_intervals(now);
            }
            if now >= self.next_scan_ns {
                self.expire_timeouts(now);
                self.next_scan_ns = now + self.spec.scan_period_ns;
            }
            self.retry_connects(now);
            self.wake_thinkers(now);
            let deadline = self.next_deadline();
            if let Err(e) = self.wait(now, deadline) {
                if e.kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            let now = self.now_ns();
            self.handle_events(now);
        }
        self.finish(started_cpu);
    }

    // ----- scenario lifecycle -----

    /// advance_group moves a scenario through its stages and does its time-driven work:
    /// start, ramp, due iterations, end, drain.
    fn advance_group(&mut self, g: usize, now: u64, cancelled: bool) {
        let scenario = &self.scenarios[self.groups[g].scenario];
        let (start_ns, end_ns) = (scenario.start_ns, scenario.end_ns);
        match self.groups[g].stage {
            Stage::Waiting if cancelled => self.groups[g].stage = Stage::Done,
            Stage::Waiting if now >= start_ns => {
                self.groups[g].stage = Stage::Running;
                self.start_group(g, now);
                self.advance_group(g, now, cancelled);
            }
            Stage::Waiting | Stage::Done => {}
            Stage::Running => {
                self.ramp(g, now);
                // Send whatever fell due before the end, even if we woke after it.
                self.dispatch_due(g, now);
                if cancelled || now >= end_ns || self.group_exhausted(g) {
                    self.end_group(g, now, cancelled);
                }
            }
            Stage::Draining { deadline_ns } => {
                let group = &self.groups[g];
                let pending = group.open.as_ref().is_some_and(|o| !o.pending.is_empty());
                if (group.busy == 0 && !pending) || now >= deadline_ns || (cancelled && deadline_ns > now) {
                    self.close_group(g, now);
                }
            }
        }
    }

    fn start_group(&mut self, g: usize, now: u64) {
        if let Some(closed) = &self.groups[g].closed {
            if closed.next_ramp_ns.is_none() {
                let (first, vus) = (closed.first, closed.vus);
                if let Some(c) = self.groups[g].closed.as_mut() {
                    c.active = vus;
                }
                for id in first..first + vus as usize {
                    self.activate(id, now);
                }
            }
        }
        if let Some(open) = &self.groups[g].open {
            for _ in 0..open.pre_allocated_vus {
                self.open_connection(g, now);
            }
        }
    }

    /// group_exhausted tells whether a scenario has nothing more to start: its iterations
    /// are all claimed and done, or its schedule has ended and nothing is waiting.
    fn group_exhausted(&self, g: usize) -> bool {
        let group = &self.groups[g];
        if let Some(closed) = &group.closed {
            if closed.vus == 0 && closed.next_ramp_ns.is_none() {
                return true; // this thread has no share of the scenario's VUs
            }
            if closed.budget.is_some() && closed.exhausted && group.busy == 0 {
                return true;
            }
            if closed.per_vu.is_some() && group.busy == 0 {
                let first = closed.first;
                return (first..first + closed.vus as usize).all(|id| !self.conns[id].active);
            }
            return false;
        }
        group.open.as_ref().is_some_and(|o| o.next_due_ns.is_none() && o.pending.is_empty() && group.busy == 0)
    }

    fn end_group(&mut self, g: usize, now: u64, cancelled: bool) {
        let scenario = &self.scenarios[self.groups[g].scenario];
        self.stopped_ns = self.stopped_ns.max(now.min(scenario.end_ns));
        let grace = if cancelled { 0 } else { self.spec.grace_ns };
        let group = &mut self.groups[g];
        group.stage = Stage::Draining { deadline_ns: now.saturating_add(grace) };
        if let Some(closed) = &mut group.closed {
            if let Some(budget) = &closed.budget {
                budget.give_back(closed.tokens);
                closed.tokens = 0;
            }
        }
        self.advance_group(g, now, cancelled);
    }

    /// close_group ends a scenario on this thread: requests still outstanding are
    /// interrupted, iterations still in progress count as interrupted.
    fn close_group(&mut self, g: usize, now: u64) {
        self.groups[g].stage = Stage::Done;
        for id in 0..self.conns.len() {
            if self.conns[id].group as usize != g {
                continue;
            }
            let conn = &mut self.conns[id];
            if conn.has_request() {
                let slot = self.scenarios[g].sequences[conn.seq as usize][conn.step as usize].slot;
                self.metrics.slots[slot].record_failure(FailureClass::Interrupted, None);
                self.in_flight -= 1;
            }
            if conn.in_iteration {
                self.metrics.scenarios[g].iterations_interrupted += 1;
                conn.in_iteration = false;
            }
            conn.thinking = false;
            conn.active = false;
            if conn.phase != Phase::Closed {
                self.open_conns -= 1;
            }
            conn.close(self.poll.registry());
        }
        self.groups[g].busy = 0;
        if let Some(open) = &mut self.groups[g].open {
            // Iterations that were due but never got a connection were never started.
            self.metrics.scenarios[g].iterations_dropped += open.pending.len() as u64;
            open.pending.clear();
            open.idle.clear();
            open.connecting = 0;
            open.vus = 0;
        }
        let _ = now;
    }

    /// ramp re-evaluates a ramping-vus scenario's VU count on this thread.
    fn ramp(&mut self, g: usize, now: u64) {
        let scenario = &self.scenarios[self.groups[g].scenario];
        let Some(closed) = &self.groups[g].closed else { return };
        let Some(at) = closed.next_ramp_ns else { return };
        if now < at {
            return;
        }
        let Model::Closed { ramp: Some(ramp), .. } = &scenario.model else { return };
        let elapsed_s = now.saturating_sub(scenario.start_ns) as f64 / 1e9;
        let total = ramp.vus_at(elapsed_s);
        let threads = self.spec.threads as u32;
        let me = self.spec.thread as u32;
        let target = (total / threads + u32::from(me < total % threads)).min(closed.vus);
        let (first, active) = (closed.first, closed.active);
        let graceful = ramp.graceful_ramp_down_ns;
        if let Some(c) = self.groups[g].closed.as_mut() {
            c.active = target;
            c.next_ramp_ns = Some(now + RAMP_TICK_NS);
        }
        for vu in active..target {
            self.activate(first + vu as usize, now);
        }
        for vu in target..active {
            self.deactivate(first + vu as usize, now, graceful);
        }
    }

    /// activate makes a closed-model VU run iterations: connect, or start at once.
    fn activate(&mut self, id: usize, now: u64) {
        let conn = &mut self.conns[id];
        conn.active = true;
        conn.retire_deadline_ns = u64::MAX;
        match conn.phase {
            Phase::Closed => {
                if !self.reconnects.iter().any(|&(_, r)| r == id) {
                    self.connect(id, now);
                }
            }
            Phase::Idle if !conn.in_iteration => self.start_iteration(id, now, now),
            _ => {}
        }
    }

    /// deactivate retires a VU: it finishes its iteration (within `graceful_ns`), then stops.
    fn deactivate(&mut self, id: usize, now: u64, graceful_ns: u64) {
        let conn = &mut self.conns[id];
        conn.active = false;
        if conn.in_iteration {
            conn.retire_deadline_ns = now.saturating_add(graceful_ns);
        } else {
            self.retire(id, now);
        }
    }

    /// retire closes an inactive VU's connection.
    fn retire(&mut self, id: usize, _now: u64) {
        let conn = &mut self.conns[id];
        if conn.phase != Phase::Closed {
            self.open_conns -= 1;
        }
        conn.close(self.poll.registry());
    }

    fn next_deadline(&self) -> (u64, bool) {
        let mut deadline = self.next_interval_ns.min(self.next_scan_ns);
        let mut precise = false;
        for group in &self.groups {
            let scenario = &self.scenarios[group.scenario];
            match group.stage {
                Stage::Waiting => deadline = deadline.min(scenario.start_ns),
                Stage::Running => {
                    deadline = deadline.min(scenario.end_ns);
                    if let Some(at) = group.closed.as_ref().and_then(|c| c.next_ramp_ns) {
                        deadline = deadline.min(at);
                    }
                    if let Some(open) = &group.open {
                        if let Some(at) = open.retry_connect_ns {
                            deadline = deadline.min(at);
                        }
                        if let Some(due) = open.next_due_ns {
                            if due < deadline {
                                deadline = due;
                                precise = true;
                            }
                        }
                    }
                }
                Stage::Draining { deadline_ns } => deadline = deadline.min(deadline_ns),
                Stage::Done => {}
            }
        }
        if let Some(&(at, _)) = self.reconnects.front() {
            deadline = deadline.min(at);
        }
        if let Some(Reverse((at, _))) = self.wakeups.peek() {
            if *at < deadline {
                deadline = *at;
                // Think times are user pauses; the timerfd gives them sub-ms precision
                // only when it exists (open model), else epoll's millisecond will do.
                precise = self.timer.is_some();
            }
        }
        (deadline, precise)
    }

    fn wait(&mut self, now: u64, (deadline, precise): (u64, bool)) -> io::Result<()> {
        let delay = deadline.saturating_sub(now);
        let mut events = self.events.take().unwrap_or_else(|| Events::with_capacity(1024));
        let result = match &mut self.timer {
            _ if delay == 0 => self.poll.poll(&mut events, Some(Duration::ZERO)),
            // A send is due: epoll's timeout is whole milliseconds, rounded up, so the
            // pacing deadline always goes through the timerfd.
            Some(timer) if precise => timer.arm(deadline, delay).and_then(|_| self.poll.poll(&mut events, None)),
            // Waking up to a millisecond late is harmless for interval flushes, timeout
            // scans and the end of the run.
            _ => self.poll.poll(&mut events, Some(Duration::from_nanos(delay))),
        };
        self.events = Some(events);
        result
    }

    fn handle_events(&mut self, now: u64) {
        let Some(events) = self.events.take() else { return };
        for event in events.iter() {
            let token = event.token();
            if token == TIMER_TOKEN {
                if let Some(timer) = self.timer.as_mut() {
                    timer.fired();
                }
                continue;
            }
            let id = token.0;
            if id >= self.conns.len() {
                continue;
            }
            let error = event.is_error();
            let hangup = event.is_read_closed() || event.is_write_closed();
            match self.conns[id].phase {
                Phase::Connecting => {
                    if event.is_writable() || error || hangup {
                        self.on_connect_event(id, now);
                    }
                }
                Phase::Sending => {
                    if event.is_writable() || error {
                        self.write_request(id, now);
                    }
                    if self.conns[id].has_request() && (event.is_readable() || hangup) {
                        self.read_response(id, now, hangup);
                    }
                }
                Phase::Awaiting => {
                    if event.is_writable() {
                        self.flush_tls(id, now);
                    }
                    if event.is_readable() || hangup || error {
                        self.read_response(id, now, hangup || error);
                    }
                }
                Phase::Idle => {
                    if event.is_readable() || hangup || error {
                        self.read_while_idle(id, now);
                    }
                }
                Phase::Closed => {}
            }
        }
        self.events = Some(events);
    }

    // ----- connections -----

    fn connect(&mut self, id: usize, now: u64) {
        let tls = self.spec.tls.as_ref();
        let conn = &mut self.conns[id];
        match conn.open(self.spec.addr, tls, self.poll.registry(), Token(id)) {
            Ok(()) => {
                conn.deadline_ns = now.saturating_add(self.scenarios[conn.group as usize].connect_timeout_ns());
                self.open_conns += 1;
                if let Some(open) = self.groups[conn.group as usize].open.as_mut() {
                    open.connecting += 1;
                }
            }
            Err(e) => {
                conn.close(self.poll.registry());
                self.connect_failed(id, FailureClass::from_connect_error(&e), now);
            }
        }
    }

    fn on_connect_event(&mut self, id: usize, now: u64) {
        match self.conns[id].connect_result() {
            Ok(false) => {}
            Ok(true) => {
                let g = self.conns[id].group as usize;
                if let Some(open) = self.groups[g].open.as_mut() {
                    open.connecting -= 1;
                }
                self.metrics.scenarios[g].connections_opened += 1;
                let conn = &mut self.conns[id];
                conn.phase = Phase::Idle;
                conn.deadline_ns = u64::MAX;
                self.on_ready(id, now);
            }
            Err(e) => self.fail(id, FailureClass::from_connect_error(&e), now),
        }
    }

    /// connect_failed counts a failed connection attempt as a failed request of the step
    /// it was for, and retries after a short backoff.
    fn connect_failed(&mut self, id: usize, class: FailureClass, now: u64) {
        let retry_at = now + RECONNECT_BACKOFF_NS;
        let g = self.conns[id].group as usize;
        let running = matches!(self.groups[g].stage, Stage::Running | Stage::Draining { .. });
        if let Some(open) = self.groups[g].open.as_mut() {
            open.vus -= 1;
            open.free_slots.push(id);
            if self.conns[id].in_iteration {
                // A VU mid-iteration lost its connection and could not get a new one.
                let conn = &mut self.conns[id];
                let slot = self.scenarios[g].sequences[conn.seq as usize][conn.step as usize].slot;
                self.metrics.slots[slot].record_failure(class, None);
                conn.in_iteration = false;
                self.metrics.scenarios[g].iterations_interrupted += 1;
                self.groups[g].busy -= 1;
            } else if open.pending.pop_front().is_some() {
                // The attempt was made for the oldest waiting iteration: its first request fails.
                let slot = self.scenarios[g].sequences[0][0].slot;
                self.metrics.slots[slot].record_failure(class, None);
            }
            let open = self.groups[g].open.as_mut();
            if let Some(open) = open {
                if !open.pending.is_empty() && open.retry_connect_ns.is_none() {
                    open.retry_connect_ns = Some(retry_at);
                }
            }
            return;
        }
        let conn = &self.conns[id];
        if running && conn.active && self.groups[g].stage == Stage::Running {
            let (seq, step) = if conn.in_iteration { (conn.seq as usize, conn.step as usize) } else { (0, 0) };
            let slot = self.scenarios[g].sequences[seq][step].slot;
            self.metrics.slots[slot].record_failure(class, None);
        }
        self.reconnects.push_back((retry_at, id));
    }

    fn retry_connects(&mut self, now: u64) {
        while let Some(&(at, id)) = self.reconnects.front() {
            if at > now {
                break;
            }
            self.reconnects.pop_front();
            let conn = &self.conns[id];
            let g = conn.group as usize;
            if conn.active && conn.phase == Phase::Closed && self.groups[g].stage == Stage::Running {
                self.connect(id, now);
            } else if conn.in_iteration && conn.phase == Phase::Closed {
                self.connect(id, now);
            }
        }
        for g in 0..self.groups.len() {
            let due = self.groups[g].open.as_ref().and_then(|o| o.retry_connect_ns).is_some_and(|at| at <= now);
            if due {
                if let Some(open) = self.groups[g].open.as_mut() {
                    open.retry_connect_ns = None;
                }
                self.open_connections_for_pending(g, now);
            }
        }
    }

    /// close_conn closes a connection (not a failure by itself) and decides what its VU
    /// does next: reconnect to go on, or give its slot back.
    fn close_conn(&mut self, id: usize, now: u64) {
        let conn = &mut self.conns[id];
        let g = conn.group as usize;
        if conn.phase == Phase::Connecting {
            if let Some(open) = self.groups[g].open.as_mut() {
                open.connecting -= 1;
            }
        }
        if conn.phase != Phase::Closed {
            self.open_conns -= 1;
        }
        conn.close(self.poll.registry());
        let keep_going = conn.in_iteration || (conn.active && self.groups[g].stage == Stage::Running);
        if let Some(open) = self.groups[g].open.as_mut() {
            if conn.in_iteration {
                // Mid-iteration: the VU needs a connection for its next step.
                return self.connect(id, now);
            }
            open.vus -= 1;
            open.free_slots.push(id);
            return self.open_connections_for_pending(g, now);
        }
        if keep_going && !conn.thinking {
            self.connect(id, now);
        } else if keep_going {
            // A thinking VU reconnects when it wakes up.
        }
    }

    /// open_connections_for_pending opens connections until every waiting iteration has
    /// one on the way, within `max_vus`; it stops at an attempt that fails at once.
    fn open_connections_for_pending(&mut self, g: usize, now: u64) {
        loop {
            let Some(open) = self.groups[g].open.as_ref() else { return };
            if open.connecting >= open.pending.len() as u64 || open.vus >= open.max_vus {
                return;
            }
            if !self.open_connection(g, now) {
                return;
            }
        }
    }

    /// open_connection opens a new VU connection for an open-model scenario; false if
    /// the attempt failed at once (it was counted and a retry scheduled).
    fn open_connection(&mut self, g: usize, now: u64) -> bool {
        let Some(open) = self.groups[g].open.as_mut() else { return false };
        if open.vus >= open.max_vus {
            return false;
        }
        open.vus += 1;
        let id = match open.free_slots.pop() {
            Some(id) => id,
            None => {
                let mut conn = Conn::new();
                conn.group = g as u32;
                conn.vu = open.created;
                open.created += 1;
                conn.values = vec![Vec::new(); self.scenarios[g].value_names.len()];
                self.conns.push(conn);
                self.conns.len() - 1
            }
        };
        self.conns[id].in_idle_list = false;
        self.connect(id, now);
        self.conns[id].phase == Phase::Connecting
    }

    // ----- iterations -----

    /// on_ready gives a connected, idle VU its next piece of work.
    fn on_ready(&mut self, id: usize, now: u64) {
        let conn = &self.conns[id];
        if conn.in_iteration {
            if !conn.thinking {
                let intended = if conn.step == 0 { conn.intended_ns } else { now };
                self.send_step(id, intended, now);
            }
            return;
        }
        let g = conn.group as usize;
        if let Some(open) = self.groups[g].open.as_mut() {
            if let Some(intended) = open.pending.pop_front() {
                self.start_iteration(id, intended, now);
            } else if !self.conns[id].in_idle_list {
                self.conns[id].in_idle_list = true;
                open.idle.push(id);
            }
            return;
        }
        if self.conns[id].active {
            self.start_iteration(id, now, now);
        } else {
            self.retire(id, now);
        }
    }

    /// start_iteration begins an iteration on VU `id`, due at `intended` (closed model:
    /// now), if the scenario still allows one.
    fn start_iteration(&mut self, id: usize, intended: u64, now: u64) {
        let g = self.conns[id].group as usize;
        let group = &mut self.groups[g];
        if group.stage != Stage::Running {
            return;
        }
        if let Some(closed) = group.closed.as_mut() {
            if !self.conns[id].active {
                return;
            }
            if let Some(limit) = closed.per_vu {
                if self.conns[id].iterations >= limit {
                    self.conns[id].active = false;
                    return self.retire(id, now);
                }
            }
            if let Some(budget) = &closed.budget {
                if closed.tokens == 0 {
                    closed.tokens = if closed.exhausted { 0 } else { budget.claim(u64::from(closed.vus)) };
                    if closed.tokens == 0 {
                        closed.exhausted = true;
                        return;
                    }
                }
                closed.tokens -= 1;
            }
        }
        group.busy += 1;
        let scenario = &self.scenarios[g];
        let seq = scenario.picker.pick(&mut self.rng);
        let conn = &mut self.conns[id];
        if scenario.variable_slots > 0 {
            let slots = &mut conn.values[..scenario.variable_slots];
            // Past-the-end unique rows are refused before the run; a draw error leaves
            // that variable empty rather than stopping the VU.
            let _ = scenario.variables.draw(&mut self.variables[g], u64::from(conn.vu), &self.pools, slots);
        }
        conn.in_iteration = true;
        conn.abort_iteration = false;
        conn.thinking = false;
        conn.seq = seq as u16;
        conn.step = 0;
        conn.intended_ns = intended;
        self.metrics.scenarios[g].iterations_started += 1;
        self.send_step(id, intended, now);
    }

    /// after_response moves VU `id` past the step that just ended (with or without a
    /// response): to the next step, a think time, or the end of its iteration.
    fn after_response(&mut self, id: usize, now: u64) {
        let g = self.conns[id].group as usize;
        let scenario = &self.scenarios[g];
        let conn = &mut self.conns[id];
        let steps = &scenario.sequences[conn.seq as usize];
        let step = &steps[conn.step as usize];
        let last = conn.step as usize + 1 >= steps.len() || conn.abort_iteration;
        if conn.abort_iteration && conn.step as usize + 1 < steps.len() {
            self.metrics.scenarios[g].iterations_aborted += 1;
        }
        let mut pause = step.think_after.map_or(0, |t| t.sample_ns(&mut self.rng));
        if last {
            pause += scenario.think_after_iteration.map_or(0, |t| t.sample_ns(&mut self.rng));
        }
        if !last {
            conn.step += 1;
        } else {
            conn.step = u16::MAX; // past the last step: the iteration ends after the pause
        }
        if pause > 0 {
            conn.thinking = true;
            conn.wake_ns = now.saturating_add(pause);
            self.wakeups.push(Reverse((conn.wake_ns, id)));
            return;
        }
        self.resume(id, now);
    }

    /// resume continues VU `id` after a step or a pause.
    fn resume(&mut self, id: usize, now: u64) {
        let conn = &mut self.conns[id];
        conn.thinking = false;
        if conn.step == u16::MAX {
            return self.end_iteration(id, now);
        }
        if conn.retire_deadline_ns <= now {
            // Retired by a ramp-down and out of grace: the iteration stops here.
            return self.abandon_iteration(id, now);
        }
        match conn.phase {
            Phase::Idle => self.send_step(id, now, now),
            Phase::Closed => self.connect(id, now),
            _ => {}
        }
    }

    fn end_iteration(&mut self, id: usize, now: u64) {
        let g = self.conns[id].group as usize;
        let conn = &mut self.conns[id];
        conn.in_iteration = false;
        conn.iterations += 1;
        self.groups[g].busy -= 1;
        self.metrics.scenarios[g].iterations_completed += 1;
        if self.conns[id].phase == Phase::Idle {
            self.on_ready(id, now);
        } else if self.groups[g].open.is_some() || !self.conns[id].active {
            self.release_closed_vu(id, now);
        } else if self.conns[id].phase == Phase::Closed && self.groups[g].stage == Stage::Running {
            self.connect(id, now);
        }
    }

    /// release_closed_vu gives a VU without a usable connection back (open model: its
    /// slot; closed model: nothing more to do until it is activated again).
    fn release_closed_vu(&mut self, id: usize, now: u64) {
        let g = self.conns[id].group as usize;
        if let Some(open) = self.groups[g].open.as_mut() {
            if self.conns[id].phase == Phase::Closed {
                open.vus -= 1;
                open.free_slots.push(id);
                self.open_connections_for_pending(g, now);
            }
        }
    }

    /// abandon_iteration stops a VU's iteration where it is (ramp-down out of grace).
    fn abandon_iteration(&mut self, id: usize, now: u64) {
        let g = self.conns[id].group as usize;
        let conn = &mut self.conns[id];
        conn.in_iteration = false;
        conn.thinking = false;
        self.groups[g].busy -= 1;
        self.metrics.scenarios[g].iterations_interrupted += 1;
        self.retire(id, now);
    }

    fn wake_thinkers(&mut self, now: u64) {
        while let Some(&Reverse((at, id))) = self.wakeups.peek() {
            if at > now {
                break;
            }
            self.wakeups.pop();
            let conn = &self.conns[id];
            if conn.thinking && conn.wake_ns == at && conn.in_iteration {
                self.resume(id, now);
            }
        }
    }

    // ----- requests -----

    fn send_step(&mut self, id: usize, intended_ns: u64, now: u64) {
        let g = self.conns[id].group as usize;
        let conn = &mut self.conns[id];
        let step = &self.scenarios[g].sequences[conn.seq as usize][conn.step as usize];
        conn.intended_ns = intended_ns;
        conn.sent_ns = now;
        conn.deadline_ns = now.saturating_add(step.timeout_ns);
        conn.written = 0;
        if step.retain {
            conn.parser.begin_retaining(step.head, MAX_RETAINED_BODY);
        } else {
            conn.parser.begin(step.head);
        }
        if let RequestBytes::Template(template) = &step.request {
            template.render(&conn.values, &mut conn.out);
        }
        conn.phase = Phase::Sending;
        self.in_flight += 1;
        self.write_request(id, now);
    }

    fn write_request(&mut self, id: usize, now: u64) {
        let conn = &mut self.conns[id];
        let g = conn.group as usize;
        let step = &self.scenarios[g].sequences[conn.seq as usize][conn.step as usize];
        let request: &[u8] = match &step.request {
            RequestBytes::Static(bytes) => bytes,
            RequestBytes::Template(_) => &conn.out,
        };
        let Some(transport) = conn.transport.as_mut() else { return };
        let failure = loop {
            if conn.written >= request.len() {
                break None;
            }
            match transport.write(&request[conn.written..]) {
                Ok(0) => break Some(FailureClass::ClosedBeforeResponse),
                Ok(n) => conn.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Some(FailureClass::from_io_error(&e)),
            }
        };
        match failure {
            Some(class) => self.fail(id, class, now),
            None => {
                conn.phase = Phase::Awaiting;
                let lag = conn.sent_ns.saturating_sub(conn.intended_ns);
                let paced = self.groups[g].open.is_some() && conn.step == 0;
                self.metrics.slots[step.slot].record_sent(request.len(), lag, paced);
            }
        }
    }

    fn flush_tls(&mut self, id: usize, now: u64) {
        let Some(transport) = self.conns[id].transport.as_mut() else { return };
        if let Err(e) = transport.flush() {
            self.fail(id, FailureClass::from_io_error(&e), now);
        }
    }

    /// read_response reads and parses what arrived; `hangup` says the peer has closed
    /// (its FIN may have come in the same edge as the last bytes).
    fn read_response(&mut self, id: usize, now: u64, hangup: bool) {
        let conn = &mut self.conns[id];
        let g = conn.group as usize;
        let Some(transport) = conn.transport.as_mut() else { return };
        let plain = !transport.is_tls();
        loop {
            let n = match transport.read(&mut self.scratch) {
                Ok(0) => return self.on_eof(id, now),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.fail(id, FailureClass::from_io_error(&e), now),
            };
            let slot = self.scenarios[g].sequences[conn.seq as usize][conn.step as usize].slot;
            self.metrics.slots[slot].bytes_received += n as u64;
            match conn.parser.feed(&self.scratch[..n]) {
                Ok(ParseStep::NeedMore) => {
                    // Edge-triggered: a short read means the socket is drained, and the
                    // next bytes will raise a new edge, which saves the read that returns
                    // EAGAIN. Not so when the peer closed: its EOF raises no new edge.
                    let must_drain = hangup || conn.parser.reads_until_close();
                    if plain && n < self.scratch.len() && !must_drain {
                        return;
                    }
                }
                Ok(ParseStep::Complete { consumed }) => return self.on_response(id, now, consumed < n || hangup),
                Err(_) => return self.fail(id, FailureClass::InvalidResponse, now),
            }
        }
    }

    /// read_while_idle handles bytes or a close on a connection with nothing outstanding.
    fn read_while_idle(&mut self, id: usize, now: u64) {
        let Some(transport) = self.conns[id].transport.as_mut() else { return };
        match transport.read(&mut self.scratch) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            // The server closed an idle keep-alive connection, or sent bytes nobody asked
            // for: either way the connection cannot be trusted with a request.
            _ => self.close_conn(id, now),
        }
    }

    fn on_eof(&mut self, id: usize, now: u64) {
        match self.conns[id].parser.finish_on_eof() {
            Ok(()) => self.on_response(id, now, true),
            Err(_) => self.fail(id, FailureClass::ClosedBeforeResponse, now),
        }
    }

    fn on_response(&mut self, id: usize, now: u64, must_close: bool) {
        let conn = &mut self.conns[id];
        let g = conn.group as usize;
        let step = &self.scenarios[g].sequences[conn.seq as usize][conn.step as usize];
        let metrics = &mut self.metrics.slots[step.slot];
        let status = conn.parser.status();
        let latency = now.saturating_sub(conn.intended_ns);
        let service = now.saturating_sub(conn.sent_ns);
        if conn.phase == Phase::Sending {
            // The server answered before reading the whole request (e.g. 413): the
            // server did receive it, so it counts as sent; the framing is now unknown.
            let lag = conn.sent_ns.saturating_sub(conn.intended_ns);
            metrics.record_sent(conn.written, lag, false);
        }
        let reuse = conn.parser.keep_alive() && !must_close && conn.phase == Phase::Awaiting;
        conn.phase = Phase::Idle;
        conn.deadline_ns = u64::MAX;
        conn.requests += 1;
        self.in_flight -= 1;
        metrics.record_response(status, latency, service);
        if !step.checks.is_empty() || !step.captures.is_empty() {
            let view = ResponseView::from_parser(&conn.parser, latency);
            self.json.reset();
            for (index, check) in &step.checks {
                self.metrics.checks[*index].record(check.evaluate(&view, &mut self.json));
            }
            for (index, capture, target) in &step.captures {
                let found = match *target {
                    CaptureTarget::Value(value) => capture.extract(&view, &mut self.json, &mut conn.values[value]),
                    CaptureTarget::Pool(pool) => {
                        let found = capture.extract(&view, &mut self.json, &mut self.captured);
                        // A full pool refuses the value (counted by the pool); the
                        // iteration still had what it needed.
                        if found {
                            self.pools.push(pool, &self.captured);
                        }
                        found
                    }
                };
                self.metrics.captures[*index].record(found);
                // Later steps would send what they could not fill in: end the iteration.
                conn.abort_iteration |= !found;
            }
        }
        if !reuse {
            let conn = &mut self.conns[id];
            self.open_conns -= 1;
            conn.close(self.poll.registry());
        }
        self.after_response(id, now);
    }

    /// fail_probes counts a step's checks as failed and its captures as missing when its
    /// request ended without a response.
    fn fail_probes(&mut self, id: usize) {
        let conn = &mut self.conns[id];
        let step = &self.scenarios[conn.group as usize].sequences[conn.seq as usize][conn.step as usize];
        for (index, _) in &step.checks {
            self.metrics.checks[*index].record(false);
        }
        for (index, _, _) in &step.captures {
            self.metrics.captures[*index].record(false);
            conn.abort_iteration = true;
        }
    }

    /// fail counts the outstanding request (or connection attempt) of a VU as failed,
    /// closes the connection, and lets the VU go on.
    fn fail(&mut self, id: usize, class: FailureClass, now: u64) {
        let conn = &mut self.conns[id];
        let g = conn.group as usize;
        match conn.phase {
            Phase::Sending | Phase::Awaiting => {
                let step = &self.scenarios[g].sequences[conn.seq as usize][conn.step as usize];
                let latency = now.saturating_sub(conn.intended_ns);
                self.in_flight -= 1;
                self.metrics.slots[step.slot].record_failure(class, Some(latency));
                conn.phase = Phase::Idle;
                self.open_conns -= 1;
                conn.close(self.poll.registry());
                self.fail_probes(id);
                // The iteration goes on (as in k6, a failed request returns an error and
                // the script continues); the next step reconnects.
                self.after_response(id, now);
            }
            Phase::Connecting => {
                if let Some(open) = self.groups[g].open.as_mut() {
                    open.connecting -= 1;
                }
                self.open_conns -= 1;
                conn.close(self.poll.registry());
                self.connect_failed(id, class, now);
            }
            Phase::Idle => self.close_conn(id, now),
            Phase::Closed => {}
        }
    }

    fn expire_timeouts(&mut self, now: u64) {
        for id in 0..self.conns.len() {
            let conn = &self.conns[id];
            if conn.retire_deadline_ns <= now && conn.in_iteration && !conn.active {
                if conn.has_request() {
                    let g = conn.group as usize;
                    let slot = self.scenarios[g].sequences[conn.seq as usize][conn.step as usize].slot;
                    self.metrics.slots[slot].record_failure(FailureClass::Interrupted, None);
                    self.in_flight -= 1;
                    self.conns[id].phase = Phase::Idle;
                }
                self.abandon_iteration(id, now);
                continue;
            }
            if conn.deadline_ns > now {
                continue;
            }
            match conn.phase {
                Phase::Connecting => self.fail(id, FailureClass::ConnectTimeout, now),
                Phase::Sending | Phase::Awaiting => self.fail(id, FailureClass::RequestTimeout, now),
                _ => {}
            }
        }
    }

    // ----- open model -----

    fn dispatch_due(&mut self, g: usize, now: u64) {
        loop {
            let scenario = &self.scenarios[g];
            let Model::Open { pacer, .. } = &scenario.model else { return };
            let Some(open) = self.groups[g].open.as_mut() else { return };
            let Some(due) = open.next_due_ns else { return };
            if due >= scenario.end_ns {
                open.next_due_ns = None;
                return;
            }
            if due > now {
                return;
            }
            open.nth += 1;
            open.next_due_ns = pacer.due_ns(open.stripe.index(open.nth)).map(|d| d + scenario.start_ns);
            self.dispatch_one(g, due, now);
        }
    }

    fn dispatch_one(&mut self, g: usize, due: u64, now: u64) {
        while let Some(id) = self.groups[g].open.as_mut().and_then(|o| o.idle.pop()) {
            self.conns[id].in_idle_list = false;
            if self.conns[id].phase == Phase::Idle && !self.conns[id].in_iteration {
                return self.start_iteration(id, due, now);
            }
        }
        let busy = self.groups[g].busy;
        let Some(open) = self.groups[g].open.as_mut() else { return };
        if busy + open.pending.len() as u64 >= open.max_vus {
            self.metrics.scenarios[g].iterations_dropped += 1;
            return;
        }
        open.pending.push_back(due);
        if open.connecting < open.pending.len() as u64 && open.vus < open.max_vus && open.retry_connect_ns.is_none() {
            self.open_connection(g, now);
        }
    }

    // ----- reporting -----

    fn flush_intervals(&mut self, now: u64) {
        while now >= self.next_interval_ns {
            self.send_interval();
            self.next_interval_ns += self.spec.interval_ns;
        }
    }

    fn send_interval(&mut self) {
        let fresh = match self.spec.recycled.try_recv() {
            Ok(spare) => *spare,
            Err(_) => ThreadMetrics::new(self.spec.shape),
        };
        let metrics = Box::new(std::mem::replace(&mut self.metrics, fresh));
        let _ = self.spec.reports.send(Report::Interval {
            thread: self.spec.thread,
            index: self.interval_index,
            metrics,
            open_connections: self.open_conns,
            in_flight: self.in_flight,
            active_vus: self.groups.iter().map(|g| g.busy).collect(),
        });
        self.interval_index += 1;
    }

    fn finish(&mut self, started_cpu: CpuTime) {
        let now = self.now_ns();
        for g in 0..self.groups.len() {
            if self.groups[g].stage != Stage::Done {
                if self.groups[g].stage == Stage::Running {
                    let end = self.scenarios[g].end_ns;
                    self.stopped_ns = self.stopped_ns.max(now.min(end));
                }
                self.close_group(g, now);
            }
        }
        self.open_conns = 0;
        self.flush_intervals(now);
        self.send_interval();
        let _ = self.spec.reports.send(Report::Done {
            thread: self.spec.thread,
            stopped_ns: self.stopped_ns,
            cpu: thread_cpu_time().since(&started_cpu),
            error: None,
            pools: self.pools.take_local(),
        });
    }
}
