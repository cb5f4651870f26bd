//! worker: one event loop per thread. It owns its connections, counters and histograms,
//! shares nothing per request, and reports merged-able Metrics once per interval.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token};

use crate::budget::Budget;
use crate::conn::{Conn, Phase};
use crate::failure::FailureClass;
use crate::http1::Step;
use crate::metrics::Metrics;
use crate::pacer::{Pacer, RatePacer, Stripe};
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

/// Work is what one thread does: its share of the executor.
pub enum Work {
    /// Closed: `vus` connections sending back to back, optionally from a shared budget.
    Closed {
        /// vus is this thread's number of virtual users.
        vus: u32,
        /// budget is the shared request count (shared-iterations), if any.
        budget: Option<Arc<Budget>>,
    },
    /// Open: this thread's stripe of the pacer's schedule.
    Open {
        /// pacer is the whole run's schedule.
        pacer: Arc<RatePacer>,
        /// stripe selects this thread's requests of it.
        stripe: Stripe,
        /// max_in_flight caps this thread's outstanding requests and connections.
        max_in_flight: u32,
        /// pre_allocated connections are opened at the start.
        pre_allocated: u32,
    },
}

/// WorkerSpec is everything one worker thread needs.
pub struct WorkerSpec {
    /// thread is this worker's index.
    pub thread: usize,
    /// origin is the run's time zero, shared by all threads.
    pub origin: Instant,
    /// addr is the target's socket address.
    pub addr: SocketAddr,
    /// tls is the TLS setup for https targets.
    pub tls: Option<TlsSetup>,
    /// request is the serialized request every connection writes.
    pub request: Arc<[u8]>,
    /// head_request says the request is HEAD (responses carry no body).
    pub head_request: bool,
    /// work is this thread's share of the executor.
    pub work: Work,
    /// end_ns is when new requests stop being issued.
    pub end_ns: u64,
    /// grace_ns is how long requests in flight may still complete after the end.
    pub grace_ns: u64,
    /// timeout_ns is the per-request (and per-connect) timeout.
    pub timeout_ns: u64,
    /// interval_ns is the reporting period.
    pub interval_ns: u64,
    /// cancel is set by the caller to stop the run early.
    pub cancel: Arc<AtomicBool>,
    /// reports carries interval snapshots and the final report to the run.
    pub reports: Sender<Report>,
    /// recycled brings back emptied Metrics from the run, so that handing one over each
    /// interval costs a swap instead of copying the histograms.
    pub recycled: Receiver<Box<Metrics>>,
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
        metrics: Box<Metrics>,
        /// open_connections is the number of connections open now.
        open_connections: u64,
        /// in_flight is the number of outstanding requests now.
        in_flight: u64,
    },
    /// Done is the worker's last report.
    Done {
        /// thread is the reporting worker.
        thread: usize,
        /// stopped_ns is when it stopped issuing requests.
        stopped_ns: u64,
        /// cpu is the thread's CPU time.
        cpu: CpuTime,
        /// error is set if the worker could not run at all.
        error: Option<String>,
    },
}

/// Worker is one thread's event loop.
struct Worker {
    spec: WorkerSpec,
    poll: Poll,
    events: Option<Events>,
    timer: Option<Timer>,
    conns: Vec<Conn>,
    scratch: Box<[u8]>,
    metrics: Metrics,
    open_model: bool,
    in_flight: u64,
    open_conns: u64,
    connecting: u64,
    stopping: bool,
    stopped_ns: u64,
    drain_deadline_ns: u64,
    next_interval_ns: u64,
    interval_index: u64,
    next_scan_ns: u64,
    scan_period_ns: u64,
    // closed model
    tokens: u64,
    exhausted: bool,
    reconnects: std::collections::VecDeque<(u64, usize)>,
    // open model
    nth: u64,
    next_due_ns: Option<u64>,
    pending: std::collections::VecDeque<u64>,
    idle: Vec<usize>,
    free_slots: Vec<usize>,
    retry_connect_ns: Option<u64>,
}

/// run_worker runs one worker to completion and always sends its Done report.
pub fn run_worker(spec: WorkerSpec) {
    let thread = spec.thread;
    let reports = spec.reports.clone();
    let started_cpu = thread_cpu_time();
    match Worker::new(spec) {
        Ok(mut worker) => {
            worker.run();
        }
        Err(e) => {
            let _ = reports.send(Report::Done {
                thread,
                stopped_ns: 0,
                cpu: thread_cpu_time().since(&started_cpu),
                error: Some(e.to_string()),
            });
        }
    }
}

impl Worker {
    fn new(spec: WorkerSpec) -> io::Result<Worker> {
        let poll = Poll::new()?;
        let open_model = matches!(spec.work, Work::Open { .. });
        let (conns, next_due_ns) = match &spec.work {
            Work::Closed { vus, .. } => ((0..*vus).map(|_| Conn::new()).collect(), None),
            Work::Open { pacer, stripe, .. } => (Vec::new(), pacer.due_ns(stripe.index(0))),
        };
        let timer = if open_model {
            set_precise_timer_slack();
            Some(Timer::new(poll.registry(), TIMER_TOKEN)?)
        } else {
            None
        };
        let scan_period_ns = (spec.timeout_ns / 100).clamp(1_000_000, 100_000_000);
        Ok(Worker {
            next_interval_ns: spec.interval_ns,
            scan_period_ns,
            next_scan_ns: scan_period_ns,
            spec,
            poll,
            events: Some(Events::with_capacity(1024)),
            timer,
            conns,
            scratch: vec![0u8; SCRATCH_BYTES].into_boxed_slice(),
            metrics: Metrics::new(),
            open_model,
            in_flight: 0,
            open_conns: 0,
            connecting: 0,
            stopping: false,
            stopped_ns: 0,
            drain_deadline_ns: u64::MAX,
            interval_index: 0,
            tokens: 0,
            exhausted: false,
            reconnects: Default::default(),
            nth: 0,
            next_due_ns,
            pending: Default::default(),
            idle: Vec::new(),
            free_slots: Vec::new(),
            retry_connect_ns: None,
        })
    }

    #[inline]
    fn now_ns(&self) -> u64 {
        self.spec.origin.elapsed().as_nanos() as u64
    }

    fn run(&mut self) {
        let started_cpu = thread_cpu_time();
        let now = self.now_ns();
        for id in 0..self.conns.len() {
            self.connect(id, now);
        }
        if let Work::Open { pre_allocated, .. } = self.spec.work {
            for _ in 0..pre_allocated {
                self.open_connection(now);
            }
        }
        loop {
            let now = self.now_ns();
            if self.open_model && !self.stopping {
                // Send whatever fell due before the end, even if we woke after it.
                self.dispatch_due(now);
            }
            if !self.stopping && self.should_stop(now) {
                self.begin_stop(now);
            }
            if self.stopping && ((self.in_flight == 0 && self.pending.is_empty()) || now >= self.drain_deadline_ns) {
                break;
            }
            if now >= self.next_interval_ns {
                self.flush_intervals(now);
            }
            if now >= self.next_scan_ns {
                self.expire_timeouts(now);
                self.next_scan_ns = now + self.scan_period_ns;
            }
            self.retry_connects(now);
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

    fn should_stop(&self, now: u64) -> bool {
        now >= self.spec.end_ns
            || self.spec.cancel.load(Ordering::Relaxed)
            || (self.exhausted && self.in_flight == 0)
            || (self.open_model && self.next_due_ns.is_none() && self.in_flight == 0 && self.pending.is_empty())
    }

    fn begin_stop(&mut self, now: u64) {
        self.stopping = true;
        self.stopped_ns = now.min(self.spec.end_ns);
        let grace = if self.spec.cancel.load(Ordering::Relaxed) { 0 } else { self.spec.grace_ns };
        self.drain_deadline_ns = now.saturating_add(grace);
        if let Work::Closed { budget: Some(budget), .. } = &self.spec.work {
            budget.give_back(self.tokens);
            self.tokens = 0;
        }
    }

    fn next_deadline(&self) -> (u64, bool) {
        let mut deadline = self.next_interval_ns.min(self.next_scan_ns);
        deadline = deadline.min(if self.stopping { self.drain_deadline_ns } else { self.spec.end_ns });
        if let Some(&(at, _)) = self.reconnects.front() {
            deadline = deadline.min(at);
        }
        if let Some(at) = self.retry_connect_ns {
            deadline = deadline.min(at);
        }
        let mut precise = false;
        if self.open_model && !self.stopping {
            if let Some(due) = self.next_due_ns {
                if due < deadline {
                    deadline = due;
                    precise = true;
                }
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
                conn.deadline_ns = now.saturating_add(self.spec.timeout_ns);
                self.open_conns += 1;
                self.connecting += 1;
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
                self.connecting -= 1;
                self.metrics.connections_opened += 1;
                let conn = &mut self.conns[id];
                conn.phase = Phase::Idle;
                conn.deadline_ns = u64::MAX;
                self.on_ready(id, now);
            }
            Err(e) => self.fail(id, FailureClass::from_connect_error(&e), now),
        }
    }

    /// connect_failed counts a failed connection attempt as a failed request and retries
    /// after a short backoff.
    fn connect_failed(&mut self, id: usize, class: FailureClass, now: u64) {
        let retry_at = now + RECONNECT_BACKOFF_NS;
        if self.open_model {
            // The attempt was made for the oldest waiting request: it fails.
            if self.pending.pop_front().is_some() {
                self.metrics.record_failure(class, None);
            }
            self.free_slots.push(id);
            if !self.pending.is_empty() && self.retry_connect_ns.is_none() {
                self.retry_connect_ns = Some(retry_at);
            }
        } else {
            if !self.stopping && !self.exhausted {
                self.metrics.record_failure(class, None);
            }
            self.reconnects.push_back((retry_at, id));
        }
    }

    fn retry_connects(&mut self, now: u64) {
        while let Some(&(at, id)) = self.reconnects.front() {
            if at > now {
                break;
            }
            self.reconnects.pop_front();
            if !self.stopping && !self.exhausted && self.conns[id].phase == Phase::Closed {
                self.connect(id, now);
            }
        }
        if let Some(at) = self.retry_connect_ns {
            if at <= now {
                self.retry_connect_ns = None;
                self.open_connections_for_pending(now);
            }
        }
    }

    /// close_conn closes a connection (not a failure by itself) and decides what its
    /// slot does next.
    fn close_conn(&mut self, id: usize, now: u64) {
        let conn = &mut self.conns[id];
        if conn.phase == Phase::Connecting {
            self.connecting -= 1;
        }
        if conn.phase != Phase::Closed {
            self.open_conns -= 1;
        }
        conn.close(self.poll.registry());
        if self.open_model {
            self.free_slots.push(id);
            self.open_connections_for_pending(now);
        } else if !self.stopping && !self.exhausted {
            self.connect(id, now);
        }
    }

    fn max_in_flight(&self) -> u64 {
        match &self.spec.work {
            Work::Open { max_in_flight, .. } => u64::from(*max_in_flight),
            Work::Closed { vus, .. } => u64::from(*vus),
        }
    }

    /// open_connections_for_pending opens connections until every waiting request has one
    /// on the way, within the in-flight cap; it stops at an attempt that fails at once.
    fn open_connections_for_pending(&mut self, now: u64) {
        while self.connecting < self.pending.len() as u64 && self.open_conns < self.max_in_flight() {
            if !self.open_connection(now) {
                break;
            }
        }
    }

    /// open_connection opens a new open-model connection in a free slot; false if the
    /// attempt failed at once (it was counted and a retry scheduled).
    fn open_connection(&mut self, now: u64) -> bool {
        let id = match self.free_slots.pop() {
            Some(id) => id,
            None => {
                self.conns.push(Conn::new());
                self.conns.len() - 1
            }
        };
        self.connect(id, now);
        self.conns[id].phase == Phase::Connecting
    }

    // ----- requests -----

    /// on_ready gives an idle, connected connection its next request, if any.
    fn on_ready(&mut self, id: usize, now: u64) {
        if self.open_model {
            if let Some(intended) = self.pending.pop_front() {
                self.send(id, intended, now);
            } else if !self.conns[id].in_idle_list {
                self.conns[id].in_idle_list = true;
                self.idle.push(id);
            }
            return;
        }
        if self.stopping || self.exhausted {
            return;
        }
        if let Work::Closed { budget: Some(budget), vus } = &self.spec.work {
            if self.tokens == 0 {
                self.tokens = budget.claim(u64::from(*vus));
                if self.tokens == 0 {
                    self.exhausted = true;
                    return;
                }
            }
            self.tokens -= 1;
        }
        self.send(id, now, now);
    }

    fn send(&mut self, id: usize, intended_ns: u64, now: u64) {
        let head = self.spec.head_request;
        let conn = &mut self.conns[id];
        conn.intended_ns = intended_ns;
        conn.sent_ns = now;
        conn.deadline_ns = now.saturating_add(self.spec.timeout_ns);
        conn.written = 0;
        conn.parser.begin(head);
        conn.phase = Phase::Sending;
        self.in_flight += 1;
        self.write_request(id, now);
    }

    fn write_request(&mut self, id: usize, now: u64) {
        let request = &self.spec.request;
        let conn = &mut self.conns[id];
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
                self.metrics.record_sent(request.len(), lag, self.open_model);
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
            self.metrics.bytes_received += n as u64;
            match conn.parser.feed(&self.scratch[..n]) {
                Ok(Step::NeedMore) => {
                    // Edge-triggered: a short read means the socket is drained, and the
                    // next bytes will raise a new edge, which saves the read that returns
                    // EAGAIN. Not so when the peer closed: its EOF raises no new edge.
                    let must_drain = hangup || conn.parser.reads_until_close();
                    if plain && n < self.scratch.len() && !must_drain {
                        return;
                    }
                }
                Ok(Step::Complete { consumed }) => return self.on_response(id, now, consumed < n || hangup),
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
        let status = conn.parser.status();
        let latency = now.saturating_sub(conn.intended_ns);
        let service = now.saturating_sub(conn.sent_ns);
        if conn.phase == Phase::Sending {
            // The server answered before reading the whole request (e.g. 413): the
            // server did receive it, so it counts as sent; the framing is now unknown.
            let lag = conn.sent_ns.saturating_sub(conn.intended_ns);
            self.metrics.record_sent(self.spec.request.len(), lag, self.open_model);
        }
        let reuse = conn.parser.keep_alive() && !must_close && conn.phase == Phase::Awaiting;
        conn.phase = Phase::Idle;
        conn.deadline_ns = u64::MAX;
        conn.requests += 1;
        self.in_flight -= 1;
        self.metrics.record_response(status, latency, service);
        if reuse {
            self.on_ready(id, now);
        } else {
            self.close_conn(id, now);
        }
    }

    /// fail counts the outstanding request of a connection as failed and closes it.
    fn fail(&mut self, id: usize, class: FailureClass, now: u64) {
        let conn = &mut self.conns[id];
        match conn.phase {
            Phase::Sending | Phase::Awaiting => {
                let latency = now.saturating_sub(conn.intended_ns);
                self.in_flight -= 1;
                self.metrics.record_failure(class, Some(latency));
                conn.phase = Phase::Idle;
                self.close_conn(id, now);
            }
            Phase::Connecting => {
                self.connecting -= 1;
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

    fn dispatch_due(&mut self, now: u64) {
        let max_in_flight = self.max_in_flight();
        while let Some(due) = self.next_due_ns {
            if due >= self.spec.end_ns {
                self.next_due_ns = None;
                break;
            }
            if due > now {
                break;
            }
            self.dispatch_one(due, now, max_in_flight);
            self.nth += 1;
            self.next_due_ns = self.due_ns(self.nth);
        }
    }

    /// due_ns is when this thread's `nth` request is due; None past the schedule's end.
    fn due_ns(&self, nth: u64) -> Option<u64> {
        match &self.spec.work {
            Work::Open { pacer, stripe, .. } => pacer.due_ns(stripe.index(nth)),
            Work::Closed { .. } => None,
        }
    }

    fn dispatch_one(&mut self, due: u64, now: u64, max_in_flight: u64) {
        while let Some(id) = self.idle.pop() {
            self.conns[id].in_idle_list = false;
            if self.conns[id].phase == Phase::Idle {
                return self.send(id, due, now);
            }
        }
        if self.in_flight + self.pending.len() as u64 >= max_in_flight {
            self.metrics.dropped += 1;
            return;
        }
        self.pending.push_back(due);
        if self.connecting < self.pending.len() as u64 && self.open_conns < max_in_flight && self.retry_connect_ns.is_none() {
            self.open_connection(now);
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
            Err(_) => Metrics::new(),
        };
        let metrics = Box::new(std::mem::replace(&mut self.metrics, fresh));
        let _ = self.spec.reports.send(Report::Interval {
            thread: self.spec.thread,
            index: self.interval_index,
            metrics,
            open_connections: self.open_conns,
            in_flight: self.in_flight,
        });
        self.interval_index += 1;
    }

    fn finish(&mut self, started_cpu: CpuTime) {
        let now = self.now_ns();
        if !self.stopping {
            self.begin_stop(now);
        }
        for id in 0..self.conns.len() {
            if self.conns[id].has_request() {
                self.in_flight -= 1;
                self.metrics.record_failure(FailureClass::Interrupted, None);
            }
            self.conns[id].close(self.poll.registry());
        }
        // Requests that were due but never got a connection were never sent.
        self.metrics.dropped += self.pending.len() as u64;
        self.pending.clear();
        self.open_conns = 0;
        self.flush_intervals(now);
        self.send_interval();
        let _ = self.spec.reports.send(Report::Done {
            thread: self.spec.thread,
            stopped_ns: self.stopped_ns,
            cpu: thread_cpu_time().since(&started_cpu),
            error: None,
        });
    }
}
