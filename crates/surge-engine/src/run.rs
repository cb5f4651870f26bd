//! run: the engine's one entry point. A Plan goes in, Interval snapshots go to an
//! Observer while it runs, and a RunResult comes back.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::EngineError;
use crate::http::tls::TlsSetup;
use crate::measure::aggregator::Aggregator;
use crate::measure::breakdown::{breakdowns, capture_results, check_results};
use crate::measure::failure::FailureClass;
use crate::measure::metrics::{GoodBounds, Metrics, MetricsShape, ThreadMetrics};
use crate::measure::report::Report;
use crate::measure::result::{Generator, Histograms, Http2Summary, Interval, RunResult, StopReason, RESULT_SCHEMA};
use crate::schedule::budget::Budget;
use crate::spec::executor::{Iterations, Model};
use crate::spec::plan::Plan;
use crate::spec::plan_error::PlanError;
use crate::spec::pool::Pools;
use crate::spec::scenario::{self, secs_to_ns, Probe, Scenario, Slot};
use crate::spec::segment::Segment;
use crate::spec::target::Target;
use crate::spec::variables::ThreadShare;
use crate::system::{process_usage, raise_open_file_limit, reserve_descriptor_table, unix_now_s, CpuTime};
use crate::worker::{run_worker, Share, WorkerSpec};

/// Control is an observer's answer: go on, or stop the run (its results are kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Continue lets the run go on.
    Continue,
    /// Stop ends the run early, as if interrupted.
    Stop,
    /// Abort ends the run early because its results already decide it (a threshold with
    /// abort_on_fail failed); the stop reason says so.
    Abort,
}

/// Observer receives each interval as soon as all threads have reported it, and is
/// polled about ten times a second so that it can stop the run (e.g. on Ctrl-C).
pub trait Observer {
    /// on_interval is called once per interval, in order.
    fn on_interval(&mut self, interval: &Interval) -> Control;

    /// poll is called between intervals; returning Stop ends the run.
    fn poll(&mut self) -> Control {
        Control::Continue
    }

    /// forwards_reports tells whether the observer takes the workers' own reports too (a
    /// generator of a distributed run forwards them to its driver, see [`merge`](crate::merge)).
    fn forwards_reports(&self) -> bool {
        false
    }

    /// on_report receives one worker report, encoded for the driver, before this machine's
    /// aggregator merges it; returning Stop ends the run.
    fn on_report(&mut self, _report: &str) -> Control {
        Control::Continue
    }
}

/// NoObserver ignores intervals (for callers that only want the result).
pub struct NoObserver;

impl Observer for NoObserver {
    fn on_interval(&mut self, _interval: &Interval) -> Control {
        Control::Continue
    }
}

/// FD_RESERVE is the descriptors kept for the engine itself (polls, timers, files).
const FD_RESERVE: u64 = 64;

/// PREFLIGHT_TIMEOUT caps the reachability check made before the load starts.
const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(5);

/// run executes `plan`, reporting intervals to `observer`; setting `cancel` stops it.
#[allow(clippy::needless_pass_by_value, reason = "the caller hands its cancel flag over, as to a thread")]
pub fn run(plan: &Plan, observer: &mut dyn Observer, cancel: Arc<AtomicBool>) -> Result<RunResult, EngineError> {
    let prepared = prepare(plan)?;
    if let Some(at) = plan.start_at_unix_s {
        wait_until(at, observer, &cancel);
    }
    let started = Started::now();
    let (tx, rx) = mpsc::channel();
    let (handles, recyclers) = spawn(plan, &prepared, &started, &cancel, &tx)?;
    drop(tx);
    let mut aggregator = prepared.compiled.aggregator(plan, prepared.threads, recyclers);
    let mut ending = drive(&mut aggregator, &mut LocalInbox(rx), observer, &cancel, started.origin);
    for handle in handles {
        let _ = handle.join();
    }
    // A cancel set by the caller (not on the run's own results) is an interruption.
    ending.stopped_by_observer |= cancel.load(Ordering::Relaxed) && !ending.aborted;
    if let Some(error) = aggregator.worker_errors.first() {
        return Err(EngineError::Setup(error.clone()));
    }
    let elapsed_s = started.origin.elapsed().as_secs_f64();
    let (cpu_after, max_rss_kib) = process_usage();
    let host = Host {
        addresses: prepared.addresses.iter().map(ToString::to_string).collect(),
        notes: prepared.notes.clone(),
        open_file_limit: prepared.open_file_limit,
        cpu: cpu_after.since(&started.cpu),
        max_rss_kib,
    };
    Ok(assemble(plan, &prepared.compiled, &mut aggregator, &ending, started.unix_s, elapsed_s, host))
}

/// Prepared is everything a run needs before its first thread starts: the target's
/// addresses, the compiled scenarios and what names their metrics, TLS, and the notes
/// about the machine made on the way.
struct Prepared {
    addresses: Vec<SocketAddr>,
    threads: usize,
    notes: Vec<String>,
    open_file_limit: u64,
    tls: Option<TlsSetup>,
    compiled: Compiled,
}

/// Compiled is a plan's scenarios compiled, and what names their metrics: all that the
/// aggregator and the result need of a plan (a distributed run's driver needs nothing more).
pub(crate) struct Compiled {
    pub(crate) scenarios: Arc<[Scenario]>,
    pub(crate) slots: Vec<Slot>,
    pub(crate) checks: Vec<Probe>,
    pub(crate) captures: Vec<Probe>,
    pub(crate) pools: Pools,
    pub(crate) shape: MetricsShape,
}

impl Compiled {
    /// of compiles `plan`'s scenarios for its target.
    pub(crate) fn of(plan: &Plan, target: &Target) -> Result<Compiled, EngineError> {
        let compiled = scenario::compile(&plan.scenarios, target, plan.limits.timeout_s, &plan.pools)
            .map_err(EngineError::InvalidPlan)?;
        let shape = MetricsShape {
            slots: compiled.slots.len(),
            scenarios: compiled.scenarios.len(),
            checks: compiled.checks.len(),
            captures: compiled.captures.len(),
        };
        Ok(Compiled {
            scenarios: compiled.scenarios.into(),
            slots: compiled.slots,
            checks: compiled.checks,
            captures: compiled.captures,
            pools: compiled.pools,
            shape,
        })
    }

    /// aggregator is the aggregator of `threads` workers running this plan; `recyclers`
    /// take emptied metrics back to each (none: the metrics came from another machine).
    pub(crate) fn aggregator<'p>(
        &'p self,
        plan: &'p Plan,
        threads: usize,
        recyclers: Vec<mpsc::Sender<Box<ThreadMetrics>>>,
    ) -> Aggregator<'p> {
        let mut aggregator = Aggregator::new(
            threads,
            secs_to_ns(plan.interval_s),
            &plan.percentiles,
            &self.scenarios,
            &self.slots,
            self.shape,
            recyclers,
        );
        if plan.interval_totals {
            aggregator.checks = Some(&self.checks);
        }
        aggregator
    }
}

/// Host is what the machine (or machines) that ran the load report of themselves: the
/// target's addresses, notes on limits, the open-file limit, CPU time and peak memory.
pub(crate) struct Host {
    pub(crate) addresses: Vec<String>,
    pub(crate) notes: Vec<String>,
    pub(crate) open_file_limit: u64,
    pub(crate) cpu: CpuTime,
    pub(crate) max_rss_kib: u64,
}

/// prepare validates and compiles `plan`, resolves its target, raises the open-file limit
/// (refusing a plan that needs more connections than it allows) and checks that the
/// target accepts a connection: every error a run can report before it sends.
fn prepare(plan: &Plan) -> Result<Prepared, EngineError> {
    plan.validate().map_err(EngineError::InvalidPlan)?;
    let target =
        Target::parse(&plan.target.url).map_err(|m| EngineError::InvalidPlan(vec![PlanError::new("target.url", m)]))?;
    let addresses = target
        .resolve()
        .map_err(|e| EngineError::Unresolvable { host: target.host.clone(), message: e.to_string() })?;
    let threads = plan.thread_count();

    let mut notes = Vec::new();
    let open_file_limit = match raise_open_file_limit() {
        Ok((old, new)) => {
            if new > old {
                notes.push(format!("raised the open-file limit from {old} to {new}"));
            }
            new
        }
        Err(e) => {
            notes.push(format!("could not read or raise the open-file limit: {e}"));
            0
        }
    };
    let needed = plan.max_connections();
    let needed_fds = needed + FD_RESERVE + 4 * threads as u64;
    if open_file_limit > 0 && needed_fds > open_file_limit {
        return Err(EngineError::TooManyConnections { needed, needed_fds, limit: open_file_limit });
    }
    // Grown now, not by the workers' first connections (see reserve_descriptor_table); a
    // failure costs only those stalls.
    let _ = reserve_descriptor_table(needed_fds.min(open_file_limit.max(1)) - 1);

    let tls = if target.tls {
        Some(
            TlsSetup::new(&target.host, plan.target.insecure, plan.target.http2.is_some())
                .map_err(EngineError::Setup)?,
        )
    } else {
        None
    };
    let compiled = Compiled::of(plan, &target)?;
    check_unique_rows(&compiled.scenarios, plan.segment, threads).map_err(EngineError::InvalidPlan)?;
    preflight(addresses[0], Duration::from_secs_f64(plan.limits.timeout_s).min(PREFLIGHT_TIMEOUT))?;
    Ok(Prepared { addresses, threads, notes, open_file_limit, tls, compiled })
}

/// Started is when the load started: the wall clock, the process's CPU time and the
/// monotonic origin every worker measures from.
struct Started {
    unix_s: f64,
    cpu: CpuTime,
    origin: Instant,
}

impl Started {
    fn now() -> Started {
        let unix_s = unix_now_s();
        let (cpu, _) = process_usage();
        Started { unix_s, cpu, origin: Instant::now() }
    }
}

/// Spawned is the workers' threads and the channels that bring their emptied metrics back.
type Spawned = (Vec<JoinHandle<()>>, Vec<mpsc::Sender<Box<ThreadMetrics>>>);

/// spawn starts one worker thread per generator thread, each with its share of every
/// scenario; returns their handles and the channels that bring their metrics back.
fn spawn(
    plan: &Plan,
    prepared: &Prepared,
    started: &Started,
    cancel: &Arc<AtomicBool>,
    reports: &mpsc::Sender<Report>,
) -> Result<Spawned, EngineError> {
    let threads = prepared.threads;
    let budgets: Vec<Option<Arc<Budget>>> = prepared
        .compiled
        .scenarios
        .iter()
        .map(|s| match &s.model {
            // A machine of a distributed run sends its segment's share of the iterations.
            Model::Closed { iterations: Iterations::Shared(n), .. } => {
                let machine = ThreadShare { index: plan.segment.offset, count: plan.segment.stride };
                Some(Arc::new(Budget::new(machine.part_of(*n))))
            }
            _ => None,
        })
        .collect();
    let min_timeout_s = plan
        .scenarios
        .iter()
        .flat_map(|s| s.flow.sequences.iter().flat_map(|q| q.steps.iter().filter_map(|st| st.timeout_s)))
        .chain(plan.limits.stream_idle_timeout_s)
        .fold(plan.limits.timeout_s, f64::min);
    let scan_period_ns = secs_to_ns(min_timeout_s / 100.0).clamp(1_000_000, 100_000_000);
    let mut handles = Vec::with_capacity(threads);
    let mut recyclers = Vec::with_capacity(threads);
    for (thread, segment) in plan.segment.split(threads as u64).into_iter().enumerate() {
        let place = thread_share(plan.segment, threads, thread);
        let shares = prepared
            .compiled
            .scenarios
            .iter()
            .zip(&budgets)
            .map(|(s, budget)| match &s.model {
                Model::Closed { .. } => Share::Closed { vus: vus_on_thread(&s.model, place), budget: budget.clone() },
                Model::Open { pre_allocated_vus, .. } => Share::Open {
                    segment,
                    max_vus: vus_on_thread(&s.model, place),
                    pre_allocated_vus: share(*pre_allocated_vus, place),
                },
            })
            .collect();
        let (recycle_tx, recycled) = mpsc::channel();
        recyclers.push(recycle_tx);
        let spec = WorkerSpec {
            thread,
            origin: started.origin,
            addr: prepared.addresses[0],
            tls: prepared.tls.clone(),
            http2_streams: plan.target.http2.map(|h| h.streams),
            scenarios: prepared.compiled.scenarios.clone(),
            shares,
            shape: prepared.compiled.shape,
            grace_ns: secs_to_ns(plan.limits.grace_period_s),
            scan_period_ns,
            send_slack_ns: secs_to_ns(plan.send_slack_s),
            stream_idle_ns: plan.limits.stream_idle_timeout_s.map_or(u64::MAX, secs_to_ns),
            goodput: plan.goodput.map(|g| GoodBounds {
                latency: g.latency_s.map(secs_to_ns),
                ttft: g.ttft_s.map(secs_to_ns),
                tpot: g.tpot_s.map(secs_to_ns),
            }),
            interval_ns: secs_to_ns(plan.interval_s),
            seed: 0x5eed_0000 + (plan.segment.offset * 1024 + thread as u64),
            share: place,
            pools: prepared.compiled.pools.fork(),
            cancel: cancel.clone(),
            reports: reports.clone(),
            recycled,
        };
        let handle = std::thread::Builder::new()
            .name(format!("surge-worker-{thread}"))
            .spawn(move || run_worker(spec))
            .map_err(|e| EngineError::Setup(format!("cannot start worker thread: {e}")))?;
        handles.push(handle);
    }
    Ok((handles, recyclers))
}

/// wait_until waits for the wall-clock instant `at_unix_s` (a distributed run's common
/// start), polling the observer and the cancel flag every 10 ms; a stop ends the wait.
fn wait_until(at_unix_s: f64, observer: &mut dyn Observer, cancel: &AtomicBool) {
    loop {
        let now = unix_now_s();
        if now >= at_unix_s || cancel.load(Ordering::Relaxed) {
            return;
        }
        if observer.poll() != Control::Continue {
            cancel.store(true, Ordering::Relaxed);
            return;
        }
        std::thread::sleep(Duration::from_secs_f64((at_unix_s - now).min(0.01)));
    }
}

/// Ending is how the run's drive ended: stopped by the observer or the caller's cancel
/// (an interruption), or aborted on its results.
pub(crate) struct Ending {
    pub(crate) stopped_by_observer: bool,
    pub(crate) aborted: bool,
}

/// Received is what a drive's inbox gave: a report, the threads of a machine that was lost
/// (a distributed run's generator that died or went silent: they will send nothing more),
/// nothing within the wait, or the end (every sender gone).
pub(crate) enum Received {
    Report(Report),
    Lost(std::ops::Range<usize>),
    Timeout,
    Closed,
}

/// Inbox is where a drive's reports come from: this machine's workers, or a distributed
/// run's generators.
pub(crate) trait Inbox {
    /// receive waits up to `wait` for the next report; `stopping` says the run is ending
    /// early (so that remote senders can be told).
    fn receive(&mut self, wait: Duration, stopping: bool) -> Received;
}

/// LocalInbox is the channel of this machine's workers.
struct LocalInbox(mpsc::Receiver<Report>);

impl Inbox for LocalInbox {
    fn receive(&mut self, wait: Duration, _stopping: bool) -> Received {
        match self.0.recv_timeout(wait) {
            Ok(report) => Received::Report(report),
            Err(RecvTimeoutError::Timeout) => Received::Timeout,
            Err(RecvTimeoutError::Disconnected) => Received::Closed,
        }
    }
}

/// drive merges the workers' reports into intervals, hands each to `observer` as soon as
/// every thread has reported it, polls the observer about ten times a second, and sets
/// `cancel` when it asks to stop; returns once every worker is done.
pub(crate) fn drive(
    aggregator: &mut Aggregator<'_>,
    inbox: &mut dyn Inbox,
    observer: &mut dyn Observer,
    cancel: &AtomicBool,
    origin: Instant,
) -> Ending {
    let mut ending = Ending { stopped_by_observer: false, aborted: false };
    loop {
        let received = inbox.receive(Duration::from_millis(100), cancel.load(Ordering::Relaxed));
        let now_ns = Instant::now().saturating_duration_since(origin).as_nanos() as u64;
        let completed = match received {
            Received::Report(report) => {
                if observer.forwards_reports() && observer.on_report(&report.encode()) != Control::Continue {
                    ending.stopped_by_observer = true;
                    cancel.store(true, Ordering::Relaxed);
                }
                aggregator.accept(report, now_ns)
            }
            Received::Lost(threads) => {
                aggregator.abandon(threads);
                aggregator.emit_ready(now_ns)
            }
            Received::Timeout => {
                if observer.poll() != Control::Continue {
                    ending.stopped_by_observer = true;
                    cancel.store(true, Ordering::Relaxed);
                }
                aggregator.emit_ready(now_ns)
            }
            Received::Closed => break,
        };
        for interval in completed {
            match observer.on_interval(&interval) {
                Control::Continue => {}
                Control::Stop => ending.stopped_by_observer = true,
                Control::Abort => ending.aborted = true,
            }
            if ending.stopped_by_observer || ending.aborted {
                cancel.store(true, Ordering::Relaxed);
            }
        }
        if aggregator.all_done() {
            break;
        }
    }
    ending
}

/// assemble builds the run's result from what the aggregator merged: the stop reason,
/// totals, per-scenario, tag, check and capture breakdowns, the generator's own costs
/// (`host`) and the notes that diagnose it; the load started at `started_unix_s` and the
/// run took `elapsed_s`.
pub(crate) fn assemble(
    plan: &Plan,
    compiled: &Compiled,
    aggregator: &mut Aggregator<'_>,
    ending: &Ending,
    started_unix_s: f64,
    elapsed_s: f64,
    host: Host,
) -> RunResult {
    let duration_s = (aggregator.stopped_ns as f64 / 1e9).clamp(1e-9, elapsed_s.max(1e-9));
    let stop_reason = if ending.stopped_by_observer {
        StopReason::Interrupted
    } else if ending.aborted {
        StopReason::Aborted
    } else if aggregator.stopped_ns < secs_to_ns(plan.duration_s()) {
        StopReason::Iterations
    } else {
        StopReason::Duration
    };
    let mut totals = Metrics::new();
    aggregator.totals.merge_into(&mut totals, |_| true, |_| true);
    let counts = totals.counts();
    let mut notes = host.notes;
    notes.extend(diagnose(&totals, &aggregator.thread_cpu, elapsed_s, plan));
    let (scenario_results, tag_results) = breakdowns(
        &aggregator.totals,
        &compiled.scenarios,
        &compiled.slots,
        &aggregator.spans(),
        Some(&aggregator.load),
        &plan.percentiles,
    );
    let (run_window, load_window) = (aggregator.run_window(), aggregator.run_load_window());
    let check_results = check_results(&aggregator.totals, &compiled.scenarios, &compiled.checks);
    let capture_results = capture_results(&aggregator.totals, &compiled.scenarios, &compiled.captures);
    let cpu = host.cpu;
    let http2 =
        plan.target.http2.map(|_| Http2Summary::from_counters(&aggregator.totals.http2, counts.connections_opened));
    RunResult {
        schema: RESULT_SCHEMA.to_string(),
        url: plan.target.url.clone(),
        addresses: host.addresses,
        started_at_unix_s: started_unix_s,
        duration_s,
        elapsed_s,
        threads: aggregator.thread_cpu.len(),
        stop_reason,
        throughput: load_window.load_throughput(&aggregator.run_load),
        drain: aggregator.run_load.drain(&counts, load_window.end_ns, run_window.end_ns),
        latency: totals.latency_summaries(&plan.percentiles),
        histograms: Histograms {
            latency: totals.latency.to_base64(),
            latency_success: totals.latency_success.to_base64(),
            service_time: totals.service_time.to_base64(),
        },
        peak_open_connections: aggregator.peak_open_connections,
        peak_concurrency: aggregator.peak_concurrency,
        generator: Generator {
            cpu,
            cpu_us_per_request: if counts.sent > 0 { cpu.total_s() * 1e6 / counts.sent as f64 } else { 0.0 },
            thread_busy: aggregator.thread_cpu.iter().map(|c| c.total_s() / elapsed_s).collect(),
            thread_waiting: aggregator
                .thread_waiting_s
                .iter()
                .map(|w| w.map(|s| s / elapsed_s))
                .collect::<Option<Vec<f64>>>()
                .unwrap_or_default(),
            max_rss_kib: host.max_rss_kib,
            open_file_limit: host.open_file_limit,
        },
        requests: counts,
        scenarios: scenario_results,
        tags: tag_results,
        checks: check_results,
        pools: std::mem::take(&mut aggregator.captured_pools),
        captures: capture_results,
        intervals: std::mem::take(&mut aggregator.intervals),
        notes,
        goodput: plan.goodput,
        http2,
    }
}

/// thread_share is local thread `thread`'s place among all generator threads of the run
/// (the machine's segment, then its threads).
fn thread_share(segment: Segment, threads: usize, thread: usize) -> ThreadShare {
    ThreadShare { index: segment.offset * threads as u64 + thread as u64, count: segment.stride * threads as u64 }
}

/// vus_on_thread is how many VUs (connection slots) the thread at `place` among all the run's
/// generator threads runs of a scenario: the closed VUs or the open `max_vus`, split over
/// every thread of every machine, so that the machines of a distributed run together run
/// exactly the plan's VUs.
fn vus_on_thread(model: &Model, place: ThreadShare) -> u32 {
    match model {
        Model::Closed { vus, .. } => share(*vus, place),
        Model::Open { max_vus, .. } => share(*max_vus, place).max(1),
    }
}

/// check_unique_rows refuses a plan whose `unique` rows cannot give every VU its own row:
/// VU `v` of the thread at `index` of `count` (its `ThreadShare`) takes row `index + count·v`,
/// so the rows needed are one past the largest such row over this machine's threads (for
/// an even split on one machine, exactly the VU count).
fn check_unique_rows(scenarios: &[Scenario], segment: Segment, threads: usize) -> Result<(), Vec<PlanError>> {
    let mut errors = Vec::new();
    for (index, scenario) in scenarios.iter().enumerate() {
        let Some(rows) = scenario.variables.unique_rows_capacity() else { continue };
        let on = |thread| vus_on_thread(&scenario.model, thread_share(segment, threads, thread));
        let needed = unique_rows_needed(on, segment, threads);
        if needed > rows as u64 {
            let vus = (0..threads).map(on).sum::<u32>();
            errors.push(PlanError::new(
                format!("scenarios[{index}].variables"),
                format!("'unique' rows: {rows} rows for {vus} VUs on {threads} threads (needs {needed}); add rows or lower the VUs"),
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// unique_rows_needed is one past the largest row a `unique` variable gives: VU `v` of
/// the thread at `index` of `count` takes row `index + count·v`, thread `t` of this
/// machine running `vus_on(t)` VUs.
fn unique_rows_needed(vus_on: impl Fn(usize) -> u32, segment: Segment, threads: usize) -> u64 {
    (0..threads)
        .filter_map(|thread| {
            let place = thread_share(segment, threads, thread);
            u64::from(vus_on(thread)).checked_sub(1).map(|last| place.index + place.count * last + 1)
        })
        .max()
        .unwrap_or(0)
}

/// share is the part of `total` the thread at `place` takes (`ThreadShare::part_of`).
fn share(total: u32, place: ThreadShare) -> u32 {
    place.part_of(u64::from(total)) as u32
}

/// preflight opens and closes one connection so that a target that is down, or a port
/// nobody listens on, is reported at once instead of as a run full of failures.
fn preflight(addr: SocketAddr, timeout: Duration) -> Result<(), EngineError> {
    match TcpStream::connect_timeout(&addr, timeout) {
        Ok(_) => Ok(()),
        Err(e) => Err(EngineError::Unreachable {
            address: addr.to_string(),
            class: FailureClass::from_connect_error(&e),
            message: e.to_string(),
        }),
    }
}

/// diagnose turns signs of a saturated or misconfigured generator into notes.
fn diagnose(totals: &Metrics, thread_cpu: &[CpuTime], elapsed_s: f64, plan: &Plan) -> Vec<String> {
    let mut notes = Vec::new();
    for (thread, cpu) in thread_cpu.iter().enumerate() {
        let busy = cpu.total_s() / elapsed_s;
        if busy > 0.9 {
            notes.push(format!(
                "generator thread {thread} was busy {:.0}% of the run: the load generator itself may be the bottleneck",
                busy * 100.0
            ));
        }
    }
    if totals.dropped > 0 {
        let limits: Vec<String> = plan
            .scenarios
            .iter()
            .filter(|s| s.executor.is_open())
            .map(|s| format!("{} ({} VUs)", s.name, s.executor.max_connections()))
            .collect();
        notes.push(format!(
            "{} scheduled iterations were not started because all VUs were busy (max_vus: {}): the target is not keeping up with the rate, or the limit is too low",
            totals.dropped,
            limits.join(", ")
        ));
    }
    if totals.sent > 0 && totals.late * 100 > totals.sent {
        notes.push(format!(
            "{} requests ({:.1}%) were sent more than 1 ms after their intended time; their latency includes that wait",
            totals.late,
            totals.late as f64 * 100.0 / totals.sent as f64
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_rows_needed_is_the_vu_count_when_vus_split_evenly() {
        let whole = Segment { offset: 0, stride: 1 };
        // (VUs, threads, open-model minimum of one VU per thread, rows needed)
        let cases = [
            (4, 1, false, 4),
            (4, 2, false, 4),
            (4, 3, false, 4), // 2 + 1 + 1 VUs: rows 0, 3 | 1 | 2
            (5, 3, false, 5),
            (7, 4, false, 7),
            (1, 2, false, 1), // the second thread has no VU
            (1, 2, true, 2),  // open: every thread holds at least one slot, the second takes row 1
        ];
        for (vus, threads, open, needed) in cases {
            let on = |t: usize| {
                let place = ThreadShare { index: t as u64, count: threads as u64 };
                if open {
                    share(vus, place).max(1)
                } else {
                    share(vus, place)
                }
            };
            assert_eq!(unique_rows_needed(on, whole, threads), needed, "{vus} VUs on {threads} threads");
        }
        // Second of two machines, 2 threads each: global threads 2 and 3 of 4, 2 VUs each.
        let second = Segment { offset: 1, stride: 2 };
        assert_eq!(unique_rows_needed(|_| 2, second, 2), 3 + 4 + 1);
    }

    #[test]
    fn shares_add_up() {
        for total in [1u32, 7, 64, 10_000] {
            for parts in 1..=5usize {
                let sum: u32 =
                    (0..parts).map(|k| share(total, ThreadShare { index: k as u64, count: parts as u64 })).sum();
                assert_eq!(sum, total);
            }
        }
    }
}
