//! aggregator: merges the worker threads' interval reports, in order, into the run's
//! intervals and totals.
//!
//! Intervals tile the run's window: each is `interval_s` long, except the last, which ends
//! where the window ends. The drain after the load (requests in flight finishing) does not
//! make an interval of its own when it is shorter than half an interval: it joins the last
//! interval of the load, so a 3 s run has three intervals, the third ending with the last
//! response, not a fourth sliver whose rates mean nothing. To decide that before emitting,
//! an interval is held back once the load has stopped somewhere, until the window is known
//! to reach half an interval past its end or the run is over; while the load runs, an
//! interval is emitted as soon as every thread has reported it. What the observer sees is
//! what the result lists.

use std::collections::BTreeMap;
use std::sync::mpsc;

use crate::measure::breakdown::{totals, ScenarioSpan};
use crate::measure::metrics::{Metrics, MetricsShape, ThreadMetrics};
use crate::measure::report::Report;
use crate::measure::result::{Interval, ScenarioInterval};
use crate::measure::window::{LoadCounts, Window, WindowEnd};
use crate::schedule::pacer::Pacer;
use crate::spec::executor::Model;
use crate::spec::pool::{merge, PoolSpecs};
use crate::spec::scenario::{Probe, Scenario, Slot};
use crate::system::CpuTime;

/// Aggregator merges the threads' reports in order and keeps the run's totals.
pub(crate) struct Aggregator<'p> {
    threads: usize,
    interval_ns: u64,
    /// percentiles are the plan's extra percentiles, added to every latency summary.
    percentiles: &'p [f64],
    scenarios: &'p [Scenario],
    slots: &'p [Slot],
    pending: BTreeMap<u64, PendingInterval>,
    reported_up_to: Vec<Option<u64>>,
    done: Vec<bool>,
    /// active_until holds, per thread, a lower bound of the run's window end: None while
    /// the thread still runs a scenario (the window goes on at least until now).
    active_until: Vec<Option<u64>>,
    /// final_windows are, per thread that is done, where each scenario's window ended there.
    final_windows: Vec<Option<Vec<WindowEnd>>>,
    next_emit: u64,
    /// totals are the run's measurements so far, per slot and scenario.
    pub totals: ThreadMetrics,
    merged: Metrics,
    /// intervals are the intervals emitted so far.
    pub intervals: Vec<Interval>,
    /// thread_cpu is each thread's CPU time, once it is done.
    pub thread_cpu: Vec<CpuTime>,
    /// thread_waiting_s is how long each thread waited for a core (None: not known here).
    pub thread_waiting_s: Vec<Option<f64>>,
    /// stopped_ns is when the last thread stopped starting iterations.
    pub stopped_ns: u64,
    /// scenario_stopped_ns is, per scenario, when it stopped starting iterations.
    pub scenario_stopped_ns: Vec<u64>,
    /// peak_open_connections is the most connections open at an interval's end.
    pub peak_open_connections: u64,
    /// peak_concurrency is the highest of the intervals' `peak_concurrency`.
    pub peak_concurrency: u64,
    /// worker_errors are the errors of threads that could not run.
    pub worker_errors: Vec<String>,
    /// load is, per slot, what ended within its scenario's load window (threads done so far).
    pub load: Vec<LoadCounts>,
    /// run_load is what ended within the run's load window (threads done so far).
    pub run_load: LoadCounts,
    recyclers: Vec<mpsc::Sender<Box<ThreadMetrics>>>,
    pool: Vec<ThreadMetrics>,
    shape: MetricsShape,
    /// captured_pools are the values the threads captured into pools.
    pub captured_pools: PoolSpecs,
    /// checks names the checks when intervals carry cumulative totals.
    pub checks: Option<&'p [Probe]>,
}

/// PendingInterval accumulates the threads' reports for one interval index.
struct PendingInterval {
    metrics: ThreadMetrics,
    open_connections: u64,
    in_flight: u64,
    /// peak_concurrency sums the threads' peaks (each thread's own; they need not coincide).
    peak_concurrency: u64,
    active_vus: Vec<u64>,
    windows: Vec<WindowEnd>,
}

impl<'p> Aggregator<'p> {
    /// new returns an aggregator for `threads` workers; `recyclers` take emptied metrics
    /// back to each worker.
    pub(crate) fn new(
        threads: usize,
        interval_ns: u64,
        percentiles: &'p [f64],
        scenarios: &'p [Scenario],
        slots: &'p [Slot],
        shape: MetricsShape,
        recyclers: Vec<mpsc::Sender<Box<ThreadMetrics>>>,
    ) -> Self {
        Aggregator {
            threads,
            interval_ns: interval_ns.max(1),
            percentiles,
            scenarios,
            slots,
            pending: BTreeMap::new(),
            reported_up_to: vec![None; threads],
            done: vec![false; threads],
            active_until: vec![None; threads],
            final_windows: vec![None; threads],
            next_emit: 0,
            totals: ThreadMetrics::new(shape),
            merged: Metrics::new(),
            intervals: Vec::new(),
            thread_cpu: vec![CpuTime::default(); threads],
            thread_waiting_s: vec![None; threads],
            stopped_ns: 0,
            scenario_stopped_ns: vec![0; scenarios.len()],
            peak_open_connections: 0,
            peak_concurrency: 0,
            worker_errors: Vec::new(),
            load: vec![LoadCounts::default(); slots.len()],
            run_load: LoadCounts::default(),
            recyclers,
            pool: Vec::new(),
            shape,
            captured_pools: PoolSpecs::new(),
            checks: None,
        }
    }

    /// all_done tells whether every thread has sent its last report.
    pub(crate) fn all_done(&self) -> bool {
        self.done.iter().all(|d| *d)
    }

    /// abandon marks `threads` done without their last report: a lost machine of a
    /// distributed run, whose threads will report nothing more. What they reported stays
    /// counted; intervals stop waiting for them.
    pub(crate) fn abandon(&mut self, threads: std::ops::Range<usize>) {
        for thread in threads {
            if let Some(done) = self.done.get_mut(thread) {
                *done = true;
            }
        }
    }

    /// accept takes one report and returns the intervals that are now complete (`now_ns`
    /// is the time since the run started).
    pub(crate) fn accept(&mut self, report: Report, now_ns: u64) -> Vec<Interval> {
        match report {
            Report::Interval {
                thread,
                index,
                metrics,
                open_connections,
                in_flight,
                peak_concurrency,
                active_vus,
                windows,
                active_until_ns,
            } => {
                let pool = &mut self.pool;
                let (shape, scenarios) = (self.shape, self.scenarios.len());
                let slot = self.pending.entry(index).or_insert_with(|| PendingInterval {
                    metrics: pool.pop().unwrap_or_else(|| ThreadMetrics::new(shape)),
                    open_connections: 0,
                    in_flight: 0,
                    peak_concurrency: 0,
                    active_vus: vec![0; scenarios],
                    windows: vec![WindowEnd::NotStarted; scenarios],
                });
                for (sum, vus) in slot.active_vus.iter_mut().zip(&active_vus) {
                    *sum += vus;
                }
                for (known, reported) in slot.windows.iter_mut().zip(&windows) {
                    *known = known.combine(*reported);
                }
                slot.metrics.add(&metrics);
                let mut spare = metrics;
                spare.reset();
                if let Some(recycler) = self.recyclers.get(thread) {
                    let _ = recycler.send(spare);
                }
                slot.open_connections += open_connections;
                slot.in_flight += in_flight;
                slot.peak_concurrency += peak_concurrency;
                self.reported_up_to[thread] = Some(index);
                if let Some(until) = self.active_until[thread].as_mut() {
                    *until = (*until).max(active_until_ns);
                }
            }
            Report::Stopped { thread, active_until_ns } => {
                let until = self.active_until[thread].get_or_insert(0);
                *until = (*until).max(active_until_ns);
            }
            Report::Done { thread, stopped_ns, stopped, windows, load, run_load, cpu, waiting_s, error, pools } => {
                self.thread_waiting_s[thread] = waiting_s;
                merge(&mut self.captured_pools, pools);
                for (total, part) in self.load.iter_mut().zip(&load) {
                    total.add(part);
                }
                self.run_load.add(&run_load);
                self.done[thread] = true;
                self.thread_cpu[thread] = cpu;
                self.stopped_ns = self.stopped_ns.max(stopped_ns);
                for (known, at) in self.scenario_stopped_ns.iter_mut().zip(&stopped) {
                    *known = (*known).max(*at);
                }
                self.final_windows[thread] = Some(windows);
                if let Some(e) = error {
                    self.worker_errors.push(e);
                }
            }
        }
        self.emit_ready(now_ns)
    }

    /// emit_ready returns the intervals that can be emitted at `now_ns` (also called while
    /// no report arrives, since an interval may become final by time alone).
    pub(crate) fn emit_ready(&mut self, now_ns: u64) -> Vec<Interval> {
        let mut completed = Vec::new();
        if self.all_done() {
            self.emit_last(&mut completed);
            return completed;
        }
        let reaches = self.window_reaches(now_ns);
        loop {
            let k = self.next_emit;
            let reported = (0..self.threads).all(|t| self.done[t] || self.reported_up_to[t].is_some_and(|i| i >= k));
            let settled = reaches.is_none_or(|at| at >= self.boundary_ns(k + 1) + self.interval_ns / 2);
            if !reported || !settled || !self.pending.contains_key(&k) {
                return completed;
            }
            let end_ns = self.boundary_ns(k + 1);
            if let Some(interval) = self.emit(k, k, end_ns) {
                completed.push(interval);
            }
        }
    }

    /// window_reaches is a lower bound of the run's window end once some thread has
    /// stopped its load (None before: an interval is then final as soon as it is
    /// reported): now while any thread still runs a scenario, else the latest end the
    /// threads have seen.
    fn window_reaches(&self, now_ns: u64) -> Option<u64> {
        let stopping = self.active_until.iter().zip(&self.done).any(|(until, done)| until.is_some() || *done);
        if !stopping {
            return None;
        }
        let mut reaches = 0;
        for (thread, until) in self.active_until.iter().enumerate() {
            match until {
                _ if self.done[thread] => {}
                None => return Some(now_ns),
                Some(at) => reaches = reaches.max(*at),
            }
        }
        Some(reaches)
    }

    /// emit_last emits what is left once every thread is done: full intervals up to the one
    /// the run's window ends in, that one ending with the window, and a short last piece
    /// folded into the interval before it when that one is still pending.
    fn emit_last(&mut self, completed: &mut Vec<Interval>) {
        let Some(&last_reported) = self.pending.keys().next_back() else { return };
        let end_ns = self.run_window().end_ns;
        let mut last = if end_ns == 0 { 0 } else { (end_ns - 1) / self.interval_ns };
        if last > self.next_emit && end_ns - self.boundary_ns(last) < self.interval_ns / 2 {
            last -= 1;
        }
        let last = last.max(self.next_emit);
        while self.next_emit < last {
            let k = self.next_emit;
            let boundary = self.boundary_ns(k + 1);
            if let Some(interval) = self.emit(k, k, boundary) {
                completed.push(interval);
            } else {
                self.next_emit += 1; // nothing was reported for k (a thread that failed)
            }
        }
        let end_ns = end_ns.max(self.boundary_ns(last));
        if let Some(interval) = self.emit(last, last.max(last_reported), end_ns) {
            completed.push(interval);
        }
    }

    /// boundary_ns is where interval `k` starts.
    fn boundary_ns(&self, k: u64) -> u64 {
        k.saturating_mul(self.interval_ns)
    }

    /// windows_at are where each scenario's window ends as of the interval just merged:
    /// what its reports said, with the final word of the threads already done.
    fn windows_at(&self, reported: &[WindowEnd]) -> Vec<WindowEnd> {
        let mut windows = reported.to_vec();
        for finals in self.final_windows.iter().flatten() {
            for (known, end) in windows.iter_mut().zip(finals) {
                *known = known.combine(*end);
            }
        }
        windows
    }

    /// scenario_windows are the scenarios' windows given where they end, an open one
    /// ending at `now_ns`.
    pub(crate) fn scenario_windows(&self, ends: &[WindowEnd], now_ns: u64) -> Vec<Window> {
        self.scenarios.iter().zip(ends).map(|(s, end)| end.window(s.start_ns, now_ns)).collect()
    }

    /// run_window is the run's window once every thread is done.
    pub(crate) fn run_window(&self) -> Window {
        let ends = self.windows_at(&vec![WindowEnd::NotStarted; self.scenarios.len()]);
        self.scenario_windows(&ends, 0).into_iter().fold(Window::default(), Window::union)
    }

    /// spans are the scenarios' load windows and windows once every thread is done.
    pub(crate) fn spans(&self) -> Vec<ScenarioSpan> {
        let ends = self.windows_at(&vec![WindowEnd::NotStarted; self.scenarios.len()]);
        self.scenario_windows(&ends, 0)
            .into_iter()
            .zip(&self.scenario_stopped_ns)
            .map(|(window, &stopped_ns)| ScenarioSpan { stopped_ns: stopped_ns.max(window.start_ns), window })
            .collect()
    }

    /// run_load_window is the run's load window once every thread is done: from the first
    /// scenario's start until the last thread stopped starting iterations.
    pub(crate) fn run_load_window(&self) -> Window {
        let window = self.run_window();
        Window {
            start_ns: window.start_ns,
            end_ns: self.stopped_ns.clamp(window.start_ns, window.end_ns.max(window.start_ns)),
        }
    }

    /// emit merges the pending intervals `first..=last` into interval `first`, ending at
    /// `end_ns`, adds them to the totals and returns it (None if nothing was reported).
    fn emit(&mut self, first: u64, last: u64, end_ns: u64) -> Option<Interval> {
        let mut slot = self.pending.remove(&first)?;
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() > last {
                break;
            }
            self.peak_open_connections = self.peak_open_connections.max(slot.open_connections);
            let later = entry.remove();
            slot.metrics.add(&later.metrics);
            for (known, reported) in slot.windows.iter_mut().zip(&later.windows) {
                *known = known.combine(*reported);
            }
            slot.peak_concurrency = slot.peak_concurrency.max(later.peak_concurrency);
            // Gauges are read at the end of the merged stretch.
            (slot.open_connections, slot.in_flight, slot.active_vus) =
                (later.open_connections, later.in_flight, later.active_vus);
            let mut spent = later.metrics;
            spent.reset();
            self.pool.push(spent);
        }
        self.next_emit = last + 1;
        let mut thread_metrics = slot.metrics;
        self.totals.add(&thread_metrics);
        self.peak_open_connections = self.peak_open_connections.max(slot.open_connections);
        self.peak_concurrency = self.peak_concurrency.max(slot.peak_concurrency);
        let start_ns = self.boundary_ns(first);
        let length = Window { start_ns, end_ns }.seconds().max(1e-9);
        let (start_s, end_s) = (start_ns as f64 / 1e9, end_ns as f64 / 1e9);
        let totals = self.checks.map(|checks| {
            let windows = self.scenario_windows(&self.windows_at(&slot.windows), end_ns);
            let spans: Vec<ScenarioSpan> = self
                .scenarios
                .iter()
                .zip(windows)
                .map(|(s, window)| ScenarioSpan {
                    stopped_ns: window.end_ns.min(s.end_ns).max(window.start_ns),
                    window,
                })
                .collect();
            totals(&self.totals, self.scenarios, self.slots, checks, &spans, end_s, self.percentiles)
        });
        let metrics = &mut self.merged;
        metrics.reset();
        thread_metrics.merge_into(metrics, |_| true, |_| true);
        let counts = metrics.counts();
        let scenario_figures = self
            .scenarios
            .iter()
            .enumerate()
            .map(|(index, scenario)| {
                let responses: u64 = self
                    .slots
                    .iter()
                    .zip(&thread_metrics.slots)
                    .filter(|(s, _)| s.scenario == index)
                    .map(|(_, m)| m.responses)
                    .sum();
                ScenarioInterval {
                    name: scenario.name.clone(),
                    iterations: thread_metrics.scenarios[index],
                    active_vus: slot.active_vus[index],
                    responses_per_s: responses as f64 / length,
                }
            })
            .collect();
        let interval = Interval {
            index: first,
            start_s,
            end_s,
            responses_per_s: counts.responses as f64 / length,
            successes_per_s: counts.succeeded as f64 / length,
            sent_per_s: counts.sent as f64 / length,
            target_rate_per_s: target_rate(self.scenarios, f64::midpoint(start_s, end_s)),
            requests: counts,
            latency: metrics.latency_summaries(self.percentiles),
            open_connections: slot.open_connections,
            in_flight: slot.in_flight,
            peak_concurrency: slot.peak_concurrency,
            latency_histogram: metrics.latency.to_base64(),
            scenarios: scenario_figures,
            totals,
        };
        thread_metrics.reset();
        self.pool.push(thread_metrics);
        self.intervals.push(interval.clone());
        Some(interval)
    }
}

/// target_rate is the open-model scenarios' summed scheduled rate at `t_s`, if any.
fn target_rate(scenarios: &[Scenario], t_s: f64) -> Option<f64> {
    let mut any = false;
    let mut total = 0.0;
    for scenario in scenarios {
        if let Model::Open { pacer, .. } = &scenario.model {
            any = true;
            let start_s = scenario.start_ns as f64 / 1e9;
            let end_s = scenario.end_ns as f64 / 1e9;
            if t_s >= start_s && t_s < end_s {
                total += pacer.rate_at(t_s - start_s);
            }
        }
    }
    any.then_some(total)
}
