//! breakdown: a run's totals split per scenario, per tag, per check and per capture, as
//! the final result and (when asked) every interval report them.

use crate::measure::metrics::{Metrics, ThreadMetrics};
use crate::measure::result::{CaptureResult, CheckResult, ScenarioResult, TagResult, Totals};
use crate::measure::window::Throughput;
use crate::measure::window::{Drain, LoadCounts, Window};
use crate::spec::scenario::{Probe, Scenario, Slot};

/// ScenarioSpan is where a scenario's load stopped and the window its rates are over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ScenarioSpan {
    /// stopped_ns is when it stopped starting iterations (the end of its load window).
    pub stopped_ns: u64,
    /// window is the window of its rates (and its tags').
    pub window: Window,
}

/// ScenarioSpan's load_window is from its start until it stopped starting iterations.
impl ScenarioSpan {
    fn load_window(&self) -> Window {
        Window { start_ns: self.window.start_ns, end_ns: self.stopped_ns.max(self.window.start_ns) }
    }

    /// rates are `requests` over this span: with `load` (the run is over), what ended in the
    /// load window over the load window, and the drain; without it (mid-run), everything over
    /// the window so far.
    fn rates(&self, requests: &crate::measure::metrics::Counts, load: Option<LoadCounts>) -> (Throughput, Drain) {
        match load {
            Some(load) => {
                (self.load_window().load_throughput(&load), load.drain(requests, self.stopped_ns, self.window.end_ns))
            }
            None => (self.window.throughput(requests), Drain::default()),
        }
    }
}

/// breakdowns splits the totals per scenario and per tag; `spans` are the scenarios' load
/// windows and windows (in plan order); `load` is, per slot, what ended in its scenario's
/// load window, once the run is over (None mid-run); `percentiles` are the plan's extra
/// percentiles.
pub(crate) fn breakdowns(
    totals: &ThreadMetrics,
    scenarios: &[Scenario],
    slots: &[Slot],
    spans: &[ScenarioSpan],
    load: Option<&[LoadCounts]>,
    percentiles: &[f64],
) -> (Vec<ScenarioResult>, Vec<TagResult>) {
    let mut merged = Metrics::new();
    let scenario_results = scenarios
        .iter()
        .zip(spans)
        .enumerate()
        .map(|(index, (scenario, span))| {
            merged.reset();
            totals.merge_into(&mut merged, |slot| slots[slot].scenario == index, |s| s == index);
            let requests = merged.counts();
            let scenario_load = load.map(|load| {
                let mut sum = LoadCounts::default();
                slots.iter().zip(load).filter(|(slot, _)| slot.scenario == index).for_each(|(_, l)| sum.add(l));
                sum
            });
            let (throughput, drain) = span.rates(&requests, scenario_load);
            ScenarioResult {
                name: scenario.name.clone(),
                duration_s: span.stopped_ns.saturating_sub(scenario.start_ns) as f64 / 1e9,
                iterations: totals.scenarios[index],
                throughput,
                drain,
                requests,
                latency: merged.latency_summaries(percentiles),
            }
        })
        .collect();
    let tag_results = slots
        .iter()
        .zip(&totals.slots)
        .enumerate()
        .map(|(index, (slot, metrics))| {
            let requests = metrics.counts();
            let (throughput, _) = spans[slot.scenario].rates(&requests, load.map(|load| load[index]));
            TagResult {
                tag: slot.tag.clone(),
                scenario: scenarios[slot.scenario].name.clone(),
                throughput,
                requests,
                latency: metrics.latency_summaries(percentiles),
            }
        })
        .collect();
    (scenario_results, tag_results)
}

/// check_results lists every check's passes and fails.
pub(crate) fn check_results(totals: &ThreadMetrics, scenarios: &[Scenario], checks: &[Probe]) -> Vec<CheckResult> {
    checks
        .iter()
        .zip(&totals.checks)
        .map(|(probe, tally)| CheckResult {
            name: probe.name.clone(),
            scenario: scenarios[probe.scenario].name.clone(),
            tag: probe.tag.clone(),
            passes: tally.yes,
            fails: tally.no,
            truncated: tally.truncated,
        })
        .collect()
}

/// capture_results lists every capture's values found and missing.
pub(crate) fn capture_results(
    totals: &ThreadMetrics,
    scenarios: &[Scenario],
    captures: &[Probe],
) -> Vec<CaptureResult> {
    captures
        .iter()
        .zip(&totals.captures)
        .map(|(probe, tally)| CaptureResult {
            name: probe.name.clone(),
            scenario: scenarios[probe.scenario].name.clone(),
            tag: probe.tag.clone(),
            found: tally.yes,
            missing: tally.no,
            truncated: tally.truncated,
        })
        .collect()
}

/// totals is the run so far, in the result's shape (for thresholds evaluated mid-run);
/// `spans` are the scenarios' windows so far and `duration_s` the time since the start.
pub(crate) fn totals(
    cumulative: &ThreadMetrics,
    scenarios: &[Scenario],
    slots: &[Slot],
    checks: &[Probe],
    spans: &[ScenarioSpan],
    duration_s: f64,
    percentiles: &[f64],
) -> Totals {
    let mut merged = Metrics::new();
    cumulative.merge_into(&mut merged, |_| true, |_| true);
    let (scenario_results, tag_results) = breakdowns(cumulative, scenarios, slots, spans, None, percentiles);
    let requests = merged.counts();
    let window = spans.iter().map(|s| s.window).fold(Window::default(), Window::union);
    Totals {
        duration_s,
        throughput: window.throughput(&requests),
        requests,
        latency: merged.latency_summaries(percentiles),
        scenarios: scenario_results,
        tags: tag_results,
        checks: check_results(cumulative, scenarios, checks),
    }
}
