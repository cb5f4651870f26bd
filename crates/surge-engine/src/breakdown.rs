//! breakdown: a run's totals split per scenario, per tag, per check and per capture, as
//! the final result and (when asked) every interval report them.

use crate::metrics::{Metrics, ThreadMetrics};
use crate::result::{CaptureResult, CheckResult, ScenarioResult, TagResult, Totals};
use crate::scenario::{Probe, Scenario, Slot};

/// breakdowns splits the totals per scenario and per tag; `duration_s` is the run's load
/// window so far, from which each scenario's own window is cut; `percentiles` are the
/// plan's extra percentiles.
pub fn breakdowns(
    totals: &ThreadMetrics,
    scenarios: &[Scenario],
    slots: &[Slot],
    duration_s: f64,
    percentiles: &[f64],
) -> (Vec<ScenarioResult>, Vec<TagResult>) {
    let mut merged = Metrics::new();
    let scenario_results = scenarios
        .iter()
        .enumerate()
        .map(|(index, scenario)| {
            merged.reset();
            totals.merge_into(&mut merged, |slot| slots[slot].scenario == index, |s| s == index);
            let start_s = scenario.start_ns as f64 / 1e9;
            let end_s = scenario.end_ns as f64 / 1e9;
            ScenarioResult {
                name: scenario.name.clone(),
                duration_s: (duration_s.min(end_s) - start_s).max(0.0),
                iterations: totals.scenarios[index],
                requests: merged.counts(),
                latency: merged.latency_summaries(percentiles),
            }
        })
        .collect();
    let tag_results = slots
        .iter()
        .zip(&totals.slots)
        .map(|(slot, metrics)| TagResult {
            tag: slot.tag.clone(),
            scenario: scenarios[slot.scenario].name.clone(),
            requests: metrics.counts(),
            latency: metrics.latency_summaries(percentiles),
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

/// totals is the run so far, in the result's shape (for thresholds evaluated mid-run).
pub fn totals(
    cumulative: &ThreadMetrics,
    scenarios: &[Scenario],
    slots: &[Slot],
    checks: &[Probe],
    duration_s: f64,
    percentiles: &[f64],
) -> Totals {
    let mut merged = Metrics::new();
    cumulative.merge_into(&mut merged, |_| true, |_| true);
    let (scenario_results, tag_results) = breakdowns(cumulative, scenarios, slots, duration_s, percentiles);
    Totals {
        duration_s,
        requests: merged.counts(),
        latency: merged.latency_summaries(percentiles),
        scenarios: scenario_results,
        tags: tag_results,
        checks: check_results(cumulative, scenarios, checks),
    }
}
