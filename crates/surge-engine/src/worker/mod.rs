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

use crate::http::conn::{Arrivals, Carried, Conn, Phase};
use crate::http::h2::{Session, WakeId, Wakes};
use crate::http::http1::Step as ParseStep;
use crate::http::response::{JsonCache, ResponseView};
use crate::http::tls::TlsSetup;
use crate::measure::failure::{is_failure_status, FailureClass};
use crate::measure::metrics::{GoodBounds, MetricsShape, StreamTimes, ThreadMetrics, LATE_THRESHOLD_NS};
use crate::measure::report::Report;
use crate::measure::window::{LoadCounts, WindowEnd};
use crate::schedule::budget::Budget;
use crate::schedule::pacer::Pacer;
use crate::schedule::timer::{set_precise_timer_slack, Timer};
use crate::spec::executor::{Iterations, Model};
use crate::spec::pool::{PoolSpecs, Pools};
use crate::spec::request::RequestBytes;
use crate::spec::scenario::{CaptureTarget, Scenario, MAX_RETAINED_BODY};
use crate::spec::segment::Segment;
use crate::spec::variables::{ThreadShare, VariableState};
use crate::system::{thread_cpu_time, thread_run_delay_s, CpuTime};

mod connections;
mod iterations;
mod lifecycle;
mod open_group;
mod requests;
mod sessions;

use open_group::{OpenGroup, Waiting, BEHIND_NS};
use sessions::SESSION_TOKEN_BASE;

/// TIMER_TOKEN identifies the pacing timer among connection tokens.
const TIMER_TOKEN: Token = Token(usize::MAX - 1);

/// SCRATCH_BYTES is the per-thread read buffer; most responses arrive in one read.
const SCRATCH_BYTES: usize = 64 * 1024;

/// MAX_READS_PER_WAKE bounds the reads of one connection per turn of the event loop (1 MiB
/// with the scratch buffer): however fast a server sends, the loop still runs its timers,
/// timeouts and stop checks. Responses of the normal path take one read.
const MAX_READS_PER_WAKE: usize = 16;

/// RECONNECT_BACKOFF_NS spaces connection attempts after a connect-level failure, so a
/// dead target does not turn into a busy loop of failures.
const RECONNECT_BACKOFF_NS: u64 = 10_000_000;

/// RAMP_TICK_NS is how often a ramping-vus scenario re-evaluates its VU count.
const RAMP_TICK_NS: u64 = 10_000_000;

/// DEAF_HORIZON_NS: an open-model worker whose next wake-up is at most the slack plus this far
/// away sleeps through network events until then, and reads what arrived when it wakes (see
/// `wait`): with sends due every few hundred microseconds or less, waking for each response
/// would cost more than it serves.
const DEAF_HORIZON_NS: u64 = 1_000_000;

/// Share is this thread's part of one scenario.
#[derive(Clone, Debug)]
pub(crate) enum Share {
    /// Closed: `vus` virtual users (the peak, for a ramp), optionally from a shared budget.
    Closed {
        /// vus is this thread's number of virtual users.
        vus: u32,
        /// budget is the shared iteration count (shared-iterations), if any.
        budget: Option<Arc<Budget>>,
    },
    /// Open: this thread's segment of the scenario's schedule.
    Open {
        /// segment selects this thread's iterations of the schedule.
        segment: Segment,
        /// max_vus caps this thread's iterations in progress (and connections).
        max_vus: u32,
        /// pre_allocated_vus connections are opened when the scenario starts.
        pre_allocated_vus: u32,
    },
}

/// WorkerSpec is everything one worker thread needs.
pub(crate) struct WorkerSpec {
    /// thread is this worker's index.
    pub thread: usize,
    /// origin is the run's time zero, shared by all threads.
    pub origin: Instant,
    /// addr is the target's socket address.
    pub addr: SocketAddr,
    /// tls is the TLS setup for https targets.
    pub tls: Option<TlsSetup>,
    /// http2_streams is, over HTTP/2, the most streams (VUs) one connection carries; None:
    /// HTTP/1.1, a connection per VU.
    pub http2_streams: Option<u32>,
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
    /// send_slack_ns is how late an open-model send may go out, to be batched with others.
    pub send_slack_ns: u64,
    /// stream_idle_ns is the longest gap between an event stream's events after its first
    /// (u64::MAX: none).
    pub stream_idle_ns: u64,
    /// goodput is the per-request bounds a good response meets (None: goodput not measured).
    pub goodput: Option<GoodBounds>,
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

/// run_worker runs one worker to completion and always sends its Done report.
pub(crate) fn run_worker(spec: WorkerSpec) {
    let thread = spec.thread;
    let reports = spec.reports.clone();
    let started_cpu = thread_cpu_time();
    match Worker::new(spec) {
        Ok(mut worker) => worker.run(),
        Err(e) => {
            let _ = reports.send(Report::Done {
                thread,
                stopped_ns: 0,
                stopped: Vec::new(),
                windows: Vec::new(),
                load: Vec::new(),
                run_load: Box::default(),
                cpu: thread_cpu_time().since(&started_cpu),
                waiting_s: None,
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
    /// started tells whether the scenario ever started here.
    started: bool,
    /// stopped_ns is when it stopped starting iterations here.
    stopped_ns: u64,
    /// last_end_ns is when its last request ended here (answered, failed or interrupted).
    last_end_ns: u64,
    closed: Option<ClosedGroup>,
    open: Option<OpenGroup>,
}

impl Group {
    /// window_end is where this scenario's window ends on this thread, as known now.
    fn window_end(&self) -> WindowEnd {
        match self.stage {
            _ if !self.started => WindowEnd::NotStarted,
            Stage::Done => WindowEnd::Closed(self.stopped_ns.max(self.last_end_ns)),
            _ => WindowEnd::Open,
        }
    }
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
    /// peak_concurrency is the most requests outstanding at once this interval so far.
    peak_concurrency: u64,
    open_conns: u64,
    stopped_ns: u64,
    next_interval_ns: u64,
    interval_index: u64,
    next_scan_ns: u64,
    /// stopped_reported tells whether the Stopped report was sent.
    stopped_reported: bool,
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
    /// realtime_offset_ns is CLOCK_REALTIME less this run's clock, as of the last wake-up:
    /// it turns kernel receive stamps into run time.
    realtime_offset_ns: i128,
    /// load is, per slot, what ended in the intervals already sent while its scenario was
    /// still in its load window, plus (once it stopped) the part of the interval up to then.
    load: Vec<LoadCounts>,
    /// run_load is the same for the whole thread, until it stopped starting iterations.
    run_load: LoadCounts,
    /// slot_groups is the group (scenario) of each slot.
    slot_groups: Vec<usize>,
    /// backlog holds (connection, hangup seen) of reads cut short by MAX_READS_PER_WAKE.
    backlog: Vec<(usize, bool)>,
    /// sessions are the HTTP/2 connections (empty over HTTP/1.1).
    sessions: Vec<Session>,
    /// wakes queues h2's wake-ups of sessions and streams.
    wakes: Arc<Wakes>,
    /// woken holds the wake-ups being handled (kept for its allocation).
    woken: Vec<WakeId>,
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
            let mut group = Group {
                scenario: index,
                stage: Stage::Waiting,
                busy: 0,
                started: false,
                stopped_ns: 0,
                last_end_ns: 0,
                closed: None,
                open: None,
            };
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
                (Share::Open { segment, max_vus, pre_allocated_vus }, Model::Open { pacer, .. }) => {
                    any_open = true;
                    let first_due_ns = pacer.due_ns(segment.index(0)).map(|d| d + scenario.start_ns);
                    group.open = Some(OpenGroup::new(*segment, *max_vus, *pre_allocated_vus, first_due_ns));
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
        let mut slot_groups = vec![0; spec.shape.slots];
        for (index, scenario) in scenarios.iter().enumerate() {
            for step in scenario.sequences.iter().flatten() {
                if let Some(group) = slot_groups.get_mut(step.slot) {
                    *group = index;
                }
            }
        }
        let variables = scenarios
            .iter()
            .map(|s| s.variables.thread_state(spec.share, spec.seed ^ s.start_ns.rotate_left(17)))
            .collect();
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
            peak_concurrency: 0,
            open_conns: 0,
            stopped_ns: 0,
            interval_index: 0,
            stopped_reported: false,
            wakeups: BinaryHeap::new(),
            reconnects: VecDeque::new(),
            json: JsonCache::new(),
            variables,
            pools,
            captured: Vec::new(),
            realtime_offset_ns: 0,
            load: vec![LoadCounts::default(); slot_groups.len()],
            run_load: LoadCounts::default(),
            slot_groups,
            backlog: Vec::new(),
            sessions: Vec::new(),
            wakes: Arc::new(Wakes::default()),
            woken: Vec::new(),
        })
    }

    #[inline]
    fn now_ns(&self) -> u64 {
        self.spec.origin.elapsed().as_nanos() as u64
    }

    fn run(&mut self) {
        let started_cpu = thread_cpu_time();
        let started_delay = thread_run_delay_s();
        loop {
            let now = self.now_ns();
            let cancelled = self.spec.cancel.load(Ordering::Relaxed);
            for g in 0..self.groups.len() {
                self.advance_group(g, now, cancelled);
            }
            // Stopped goes out even when every scenario went from running to done in this
            // pass: the aggregator holds back the last intervals only once it has heard it.
            if !self.stopped_reported
                && self.groups.iter().all(|g| matches!(g.stage, Stage::Draining { .. } | Stage::Done))
            {
                self.close_run_load();
                self.stopped_reported = true;
                let _ = self
                    .spec
                    .reports
                    .send(Report::Stopped { thread: self.spec.thread, active_until_ns: self.active_until(now) });
            }
            if self.groups.iter().all(|g| g.stage == Stage::Done) {
                break;
            }
            if now >= self.next_interval_ns {
                self.flush_intervals(now);
            }
            if now >= self.next_scan_ns {
                self.expire_timeouts(now);
                self.expire_sessions(now);
                self.next_scan_ns = now + self.spec.scan_period_ns;
            }
            self.retry_connects(now);
            self.wake_thinkers(now);
            // Requests just sent over HTTP/2 are written by their connection's poll.
            self.drive_h2(now);
            let deadline = self.next_deadline();
            if let Err(e) = self.wait(now, deadline) {
                if e.kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            let now = self.now_ns();
            if self.timer.is_some() {
                self.realtime_offset_ns = crate::http::transport::realtime_ns() - i128::from(now);
            }
            self.handle_events(now);
            if !self.backlog.is_empty() {
                self.read_backlog(now);
            }
            self.drive_h2(now);
        }
        self.finish(started_cpu, started_delay);
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
                        // Requests waiting for a connection get one when their patience ends.
                        if let Some(oldest) = open.pending.front() {
                            if open.vus < open.max_vus && open.retry_connect_ns.is_none() {
                                let at = oldest.queued_ns.saturating_add(open.patience_ns(self.spec.send_slack_ns));
                                if at < deadline {
                                    deadline = at;
                                    precise = true;
                                }
                            }
                        }
                        // Wake for a due send only once a batch of them is due, at most
                        // `send_slack_ns` after the first (one wake-up, not one each). A
                        // wake-up for any other reason sends what is due at once.
                        if let Model::Open { pacer, .. } = &scenario.model {
                            let close =
                                open.batch_close_ns(pacer, scenario.start_ns, scenario.end_ns, self.spec.send_slack_ns);
                            if let Some(at) = close.filter(|&at| at < deadline) {
                                deadline = at;
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
        // Reads cut short are resumed at once: no sleep while bytes wait.
        let delay = if self.backlog.is_empty() { deadline.saturating_sub(now) } else { 0 };
        // A wake-up costs more than the sends it serves when they come every few tens of
        // microseconds: sleep through the network events until the next batch is due, and
        // read then what arrived (timed by the kernel's receive stamps, so late reading
        // adds nothing to the latency). Not over TLS or HTTP/2 (no stamps) nor for closed-model VUs,
        // which must see each response at once.
        let deaf = precise
            && delay <= self.spec.send_slack_ns.saturating_add(DEAF_HORIZON_NS)
            && self.spec.tls.is_none()
            && self.spec.http2_streams.is_none()
            && self.all_paced();
        let mut events = self.events.take().unwrap_or_else(|| Events::with_capacity(1024));
        let result = match &mut self.timer {
            _ if delay == 0 => self.poll.poll(&mut events, Some(Duration::ZERO)),
            _ if deaf => {
                std::thread::sleep(Duration::from_nanos(delay));
                self.poll.poll(&mut events, Some(Duration::ZERO))
            }
            // A send is due: epoll's timeout is whole milliseconds, rounded up, so the
            // pacing deadline always goes through the timerfd.
            Some(timer) if precise => timer.arm(deadline, delay).and_then(|()| self.poll.poll(&mut events, None)),
            // Waking up to a millisecond late is harmless for interval flushes, timeout
            // scans and the end of the run.
            _ => self.poll.poll(&mut events, Some(Duration::from_nanos(delay))),
        };
        self.events = Some(events);
        result
    }

    /// concurrency is the number of requests outstanding now: in flight, or due and waiting for
    /// a connection.
    fn concurrency(&self) -> u64 {
        let waiting: usize = self.groups.iter().filter_map(|g| g.open.as_ref()).map(|o| o.pending.len()).sum();
        self.in_flight + waiting as u64
    }

    /// note_concurrency raises this interval's peak concurrency to the present one.
    pub(super) fn note_concurrency(&mut self) {
        self.peak_concurrency = self.peak_concurrency.max(self.concurrency());
    }

    /// all_paced tells whether every scenario still running here is open-model (none in
    /// the closed model, whose VUs must see each response at once).
    fn all_paced(&self) -> bool {
        self.groups.iter().all(|g| g.open.is_some() || matches!(g.stage, Stage::Waiting | Stage::Done))
    }

    fn handle_events(&mut self, now: u64) {
        let Some(events) = self.events.take() else { return };
        for event in &events {
            let token = event.token();
            if token == TIMER_TOKEN {
                if let Some(timer) = self.timer.as_mut() {
                    timer.fired();
                }
                continue;
            }
            let id = token.0;
            if id >= SESSION_TOKEN_BASE {
                self.poll_session(id - SESSION_TOKEN_BASE, now);
                continue;
            }
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
                Phase::Handshaking => self.on_handshake_event(id, now),
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
        // What ended in this interval is in the load window of every scenario still in it.
        for (slot, metrics) in self.metrics.slots.iter().enumerate() {
            if matches!(self.groups[self.slot_groups[slot]].stage, Stage::Waiting | Stage::Running) {
                self.load[slot].add_metrics(metrics);
            }
        }
        if !self.stopped_reported {
            for metrics in &self.metrics.slots {
                self.run_load.add_metrics(metrics);
            }
        }
        let metrics = Box::new(std::mem::replace(&mut self.metrics, fresh));
        // The next interval's peak starts from what is outstanding as it begins.
        let concurrency_now = self.concurrency();
        let _ = self.spec.reports.send(Report::Interval {
            thread: self.spec.thread,
            index: self.interval_index,
            metrics,
            open_connections: if self.spec.http2_streams.is_some() { self.open_sessions() } else { self.open_conns },
            in_flight: self.in_flight,
            peak_concurrency: std::mem::replace(&mut self.peak_concurrency, concurrency_now),
            active_vus: self.groups.iter().map(|g| g.busy).collect(),
            windows: self.groups.iter().map(Group::window_end).collect(),
            active_until_ns: self.active_until(self.now_ns()),
        });
        self.interval_index += 1;
    }

    /// active_until is a lower bound of where the run's window ends: it goes on at least
    /// until now while a scenario runs or is yet to start; otherwise it ends no earlier
    /// than the last end seen (requests still draining may move it later).
    fn active_until(&self, now: u64) -> u64 {
        let mut until = 0;
        for group in &self.groups {
            match group.stage {
                Stage::Waiting | Stage::Running => return now,
                Stage::Draining { .. } | Stage::Done => until = until.max(group.stopped_ns.max(group.last_end_ns)),
            }
        }
        until
    }

    /// close_load adds the current interval's counts so far to the load window of scenario
    /// `g`, which has just stopped starting iterations on this thread.
    pub(super) fn close_load(&mut self, g: usize) {
        for (slot, metrics) in self.metrics.slots.iter().enumerate() {
            if self.slot_groups[slot] == g {
                self.load[slot].add_metrics(metrics);
            }
        }
    }

    /// close_run_load adds the current interval's counts so far to the thread's load window,
    /// which ends now (every scenario here has stopped starting iterations).
    fn close_run_load(&mut self) {
        for metrics in &self.metrics.slots {
            self.run_load.add_metrics(metrics);
        }
    }

    fn finish(&mut self, started_cpu: CpuTime, started_delay: Option<f64>) {
        let now = self.now_ns();
        if !self.stopped_reported {
            self.close_run_load();
            self.stopped_reported = true;
        }
        for g in 0..self.groups.len() {
            if self.groups[g].stage != Stage::Done {
                if self.groups[g].stage == Stage::Running {
                    let end = self.scenarios[g].end_ns;
                    self.groups[g].stopped_ns = now.min(end);
                    self.stopped_ns = self.stopped_ns.max(now.min(end));
                    self.close_load(g);
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
            stopped: self.groups.iter().map(|g| if g.started { g.stopped_ns } else { 0 }).collect(),
            windows: self.groups.iter().map(Group::window_end).collect(),
            load: std::mem::take(&mut self.load),
            run_load: Box::new(self.run_load),
            cpu: thread_cpu_time().since(&started_cpu),
            waiting_s: started_delay.zip(thread_run_delay_s()).map(|(before, after)| (after - before).max(0.0)),
            error: None,
            pools: self.pools.take_local(),
        });
    }
}
