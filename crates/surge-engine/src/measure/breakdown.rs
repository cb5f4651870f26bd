//! breakdown: a run's totals split per scenario, per tag, per check and per capture, as
//! the final result and (when asked) every interval report them.

use crate::measure::metrics::{Metrics, ThreadMetrics};
use crate::measure::result::{CaptureResult, CheckResult, ScenarioResult, TagResult, Totals};
use crate::spec::scenario::{Probe, Scenario, Slot};
use crate::measure::window::Window;

/// ScenarioSpan is where a scenario's load stopped and the window its rates are over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScenarioSpan {
    /// stopped_ns is when it stopped starting iterations (the end of its load window).
    pub stopped_ns: u64,
    /// window is the window of its rates (and its tags').
    pub window: Window,
}

/// breakdowns splits the totals per scenario and per tag; `spans` are the scenarios' load
/// windows and windows (in plan order); `percentiles` are the plan's extra percentiles.
pub fn breakdowns(
    totals: &ThreadMetrics,
    scenarios: &[Scenario],
    slots: &[Slot],
    spans: &[ScenarioSpan],
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
            ScenarioResult {
                name: scenario.name.clone(),
                duration_s: span.stopped_ns.saturating_sub(scenario.start_ns) as f64 / 1e9,
                iterations: totals.scenarios[index],
                throughput: span.window.throughput(&requests),
                requests,
                latency: merged.latency_summaries(percentiles),
            }
        })
        .collect();
    let tag_results = slots
        .iter()
        .zip(&totals.slots)
        .map(|(slot, metrics)| {
            let requests = metrics.counts();
            TagResult {
                tag: slot.tag.clone(),
                scenario: scenarios[slot.scenario].name.clone(),
                throughput: spans[slot.scenario].window.throughput(&requests),
                requests,
                latency: metrics.latency_summaries(percentiles),
            }
        })
        .collect();
    (scenario_results, tag_results)
}

/// check_results lists every check's passes and fails.
pub fn check_results(totals: &ThreadMetrics, scenarios: &[Scenario], checks: &[Probe]) -> Vec<CheckResult> {
    checks
        .iter()
        .zip(&totals.checks)
        .map(|(probe, tally)| CheckResult {
            name: probe.name.clone(),
            scenario: scenarios[probe.scenario].name.clone(),
            tag: probe.tag.clone(),
            passes: tally.yes,
            fails: tally.no,
        })
        .collect()
}

/// capture_results lists every capture's values found and missing.
pub fn capture_results(totals: &ThreadMetrics, scenarios: &[Scenario], captures: &[Probe]) -> Vec<CaptureResult> {
    captures
        .iter()
        .zip(&totals.captures)
        .map(|(probe, tally)| CaptureResult {
            name: probe.name.clone(),
            scenario: scenarios[probe.scenario].name.clone(),
            tag: probe.tag.clone(),
            found: tally.yes,
            missing: tally.no,
        })
        .collect()
}

/// totals is the run so far, in the result's shape (for thresholds evaluated mid-run);
/// `spans` are the scenarios' windows so far and `duration_s` the time since the start.
pub fn totals(
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
    let (scenario_results, tag_results) = breakdowns(cumulative, scenarios, slots, spans, percentiles);
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
