//! plan: the validated description of one run: target, scenarios, data pools, limits.
//!
//! A Plan is what Python's scenario and CLI layers compile to (as JSON, see
//! `docs/plan.md`), and what a distributed run hands each machine with its own [`Segment`].

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::spec::plan_error::{check_positive, PlanError};
use crate::spec::scenario::ScenarioSpec;
use crate::spec::segment::Segment;
use crate::spec::target::TargetSpec;

/// Plan is everything the engine needs to run a load test.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// target is where requests go.
    pub target: TargetSpec,
    /// scenarios run in parallel, each from its start time; at least one.
    pub scenarios: Vec<ScenarioSpec>,
    /// pools are named lists of values variables draw from and captures add to.
    #[serde(default)]
    pub pools: BTreeMap<String, Vec<String>>,
    /// limits bound each request and the end of the run.
    #[serde(default)]
    pub limits: Limits,
    /// threads is the number of event-loop threads (default: one per core).
    #[serde(default)]
    pub threads: Option<usize>,
    /// segment is this engine's share of the schedule (the whole of it unless distributed);
    /// its JSON key is `stripe`.
    #[serde(default, rename = "stripe")]
    pub segment: Segment,
    /// interval_s is the period of interval snapshots, in seconds.
    #[serde(default = "default_interval_s")]
    pub interval_s: f64,
    /// interval_totals adds the cumulative totals (per scenario, tag and check) to every
    /// interval, for thresholds judged while the run goes (abort_on_fail).
    #[serde(default)]
    pub interval_totals: bool,
    /// percentiles (percentages, 0 < p <= 100) are added to every latency summary beyond
    /// the standard p50/p90/p95/p99/p99.9, each under its `histogram::percentile_key`
    /// (75 → `p75_ms`): what thresholds such as `p(75) < 200ms` read.
    #[serde(default)]
    pub percentiles: Vec<f64>,
    /// send_slack_s is how late (in seconds) an open-model send may be written so that it
    /// goes out in one batch with others: a worker wakes for the earliest due send only when
    /// a batch is due (at most 16 sends, the last due within this slack of the first; alone
    /// and on time when none joins it), and then writes every send due by then. Latency is still timed from
    /// each request's intended send time, so the slack shows in the send lag and the
    /// latency, never hidden (docs/engine.md, "Pacing").
    #[serde(default = "default_send_slack_s")]
    pub send_slack_s: f64,
    /// start_at_unix_s, when set, is the wall-clock instant (Unix seconds, this machine's
    /// clock) the load starts at, once the plan is prepared and the target reached: the
    /// machines of a distributed run start together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_unix_s: Option<f64>,
    /// goodput, when set, bounds each request: one that succeeded and met every bound counts
    /// as good (`requests.good`, `throughput.good_per_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<GoodputBounds>,
}

/// GoodputBounds are goodput's per-request bounds, in seconds (each optional).
#[allow(clippy::struct_field_names, reason = "the plan's JSON keys carry their unit, as timeout_s does")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoodputBounds {
    /// latency_s bounds the response's latency (from the intended send time in the open model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_s: Option<f64>,
    /// ttft_s bounds the time to first token: a response without a token event misses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<f64>,
    /// tpot_s bounds the time per output token after the first: a response without a token
    /// event misses it; a one-token stream meets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_s: Option<f64>,
}

fn default_interval_s() -> f64 {
    1.0
}

/// DEFAULT_SEND_SLACK_S is the default send slack (docs/engine.md, "Pacing", has the
/// measurements it was chosen from).
pub const DEFAULT_SEND_SLACK_S: f64 = 0.001;

fn default_send_slack_s() -> f64 {
    DEFAULT_SEND_SLACK_S
}

/// Limits bound each request and the end of a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// timeout_s is the per-request timeout, connect included.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: f64,
    /// grace_period_s is how long requests in flight at the end may still complete
    /// before they are reported as interrupted.
    #[serde(default = "default_grace_period_s")]
    pub grace_period_s: f64,
    /// stream_idle_timeout_s bounds the gap between an event stream's events: once its first
    /// event arrived, a stream with no next event for this long fails as
    /// `stream_idle_timeout` (None: only the request timeout bounds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_idle_timeout_s: Option<f64>,
}

fn default_timeout_s() -> f64 {
    30.0
}

fn default_grace_period_s() -> f64 {
    5.0
}

impl Default for Limits {
    fn default() -> Self {
        Limits { timeout_s: default_timeout_s(), grace_period_s: default_grace_period_s(), stream_idle_timeout_s: None }
    }
}

impl Plan {
    /// from_json parses a plan from JSON and validates it, returning every error found.
    pub fn from_json(json: &str) -> Result<Plan, Vec<PlanError>> {
        let plan: Plan =
            serde_json::from_str(json).map_err(|e| vec![PlanError::new("plan", format!("invalid plan JSON: {e}"))])?;
        plan.validate()?;
        Ok(plan)
    }

    /// validate checks every field and returns all errors, not just the first.
    pub fn validate(&self) -> Result<(), Vec<PlanError>> {
        let mut errors = Vec::new();
        self.target.validate(&mut errors);
        if self.scenarios.is_empty() {
            errors.push(PlanError::new("scenarios", "needs at least one scenario"));
        }
        let mut names = BTreeSet::new();
        for (i, scenario) in self.scenarios.iter().enumerate() {
            scenario.validate(&format!("scenarios[{i}]"), &mut errors);
            if !names.insert(scenario.name.as_str()) {
                errors.push(PlanError::new(
                    format!("scenarios[{i}].name"),
                    format!("'{}' is used by an earlier scenario", scenario.name),
                ));
            }
        }
        check_positive(&mut errors, "limits.timeout_s", self.limits.timeout_s);
        if let Some(idle) = self.limits.stream_idle_timeout_s {
            check_positive(&mut errors, "limits.stream_idle_timeout_s", idle);
        }
        if let Some(goodput) = &self.goodput {
            for (field, bound) in
                [("latency_s", goodput.latency_s), ("ttft_s", goodput.ttft_s), ("tpot_s", goodput.tpot_s)]
            {
                if let Some(bound) = bound {
                    check_positive(&mut errors, &format!("goodput.{field}"), bound);
                }
            }
        }
        if !(self.limits.grace_period_s.is_finite() && self.limits.grace_period_s >= 0.0) {
            errors.push(PlanError::new("limits.grace_period_s", "must be zero or a positive number"));
        }
        if let Some(threads) = self.threads {
            if threads == 0 || threads > 1024 {
                errors.push(PlanError::new("threads", format!("must be between 1 and 1024, got {threads}")));
            }
        }
        if self.segment.stride == 0 || self.segment.offset >= self.segment.stride {
            errors.push(PlanError::new("stripe", "offset must be below a stride of at least 1"));
        }
        if !(self.interval_s.is_finite() && self.interval_s >= 0.01) {
            errors.push(PlanError::new("interval_s", "must be at least 0.01 seconds"));
        }
        if !(self.send_slack_s.is_finite() && (0.0..=0.1).contains(&self.send_slack_s)) {
            errors.push(PlanError::new(
                "send_slack_s",
                format!("must be between 0 and 0.1 seconds, got {}", self.send_slack_s),
            ));
        }
        if let Some(at) = self.start_at_unix_s {
            if !(at.is_finite() && at > 0.0) {
                errors.push(PlanError::new("start_at_unix_s", format!("must be a positive Unix time, got {at}")));
            }
        }
        for (i, &q) in self.percentiles.iter().enumerate() {
            if !(q.is_finite() && q > 0.0 && q <= 100.0) {
                errors.push(PlanError::new(
                    format!("percentiles[{i}]"),
                    format!("must be a percentage above 0 and at most 100, got {q}"),
                ));
            }
        }
        // Templates, variables, captures and checks are checked by compiling the scenarios,
        // once everything they rest on is valid.
        if errors.is_empty() {
            if let Ok(target) = crate::spec::target::Target::parse(&self.target.url) {
                if let Err(e) =
                    crate::spec::scenario::compile(&self.scenarios, &target, self.limits.timeout_s, &self.pools)
                {
                    errors.extend(e);
                }
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// thread_count is the number of worker threads this plan runs on: the requested
    /// number, else one per core, never more than there are connections to spread.
    pub fn thread_count(&self) -> usize {
        let wanted =
            self.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
        let most = self.max_connections().max(1) as usize;
        wanted.clamp(1, most)
    }

    /// max_connections is the most connections all scenarios may hold at once.
    pub fn max_connections(&self) -> u64 {
        self.scenarios.iter().map(|s| u64::from(s.executor.max_connections())).sum()
    }

    /// duration_s is when the last scenario stops starting iterations.
    pub fn duration_s(&self) -> f64 {
        self.scenarios.iter().map(ScenarioSpec::end_s).fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_json(executor: &str) -> String {
        format!(
            r#"{{"target": {{"url": "http://127.0.0.1:8080/health"}},
                "scenarios": [{{"name": "default", "executor": {executor},
                                "flow": {{"sequences": [{{"steps": [{{"request": {{"method": "GET"}}}}]}}]}}}}]}}"#
        )
    }

    #[test]
    fn valid_plans_parse() {
        for executor in [
            r#"{"type": "constant-vus", "vus": 10, "duration_s": 5}"#,
            r#"{"type": "shared-iterations", "vus": 2, "iterations": 100}"#,
            r#"{"type": "constant-arrival-rate", "rate": 1000, "duration_s": 5, "max_vus": 100}"#,
            r#"{"type": "ramping-vus", "stages": [{"duration_s": 5, "target": 10}]}"#,
            r#"{"type": "per-vu-iterations", "vus": 2, "iterations": 3}"#,
        ] {
            let plan = Plan::from_json(&plan_json(executor));
            assert!(plan.is_ok(), "{executor}: {plan:?}");
        }
    }

    #[test]
    fn every_error_is_reported_with_its_field() {
        let json = r#"{"target": {"url": "ftp://"},
                       "scenarios": [
                         {"name": "a", "executor": {"type": "constant-arrival-rate", "rate": -5, "duration_s": 0, "max_vus": 0},
                          "flow": {"sequences": [{"steps": [{"request": {"method": "G ET", "headers": [["Bad Name", "v"]]}}]}]}},
                         {"name": "a", "start_time_s": -1, "executor": {"type": "constant-vus", "vus": 1, "duration_s": 1},
                          "flow": {"sequences": [{"steps": [{}]}]}}],
                       "limits": {"timeout_s": 0},
                       "percentiles": [75, 0, 101],
                       "threads": 0}"#;
        let errors = Plan::from_json(json).err().unwrap_or_default();
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        for field in [
            "target.url",
            "scenarios[0].flow.sequences[0].steps[0].request.method",
            "scenarios[0].flow.sequences[0].steps[0].request.headers[0]",
            "scenarios[0].executor.rate",
            "scenarios[0].executor.duration_s",
            "scenarios[0].executor.max_vus",
            "scenarios[1].name",
            "scenarios[1].start_time_s",
            "limits.timeout_s",
            "threads",
            "percentiles[1]",
            "percentiles[2]",
        ] {
            assert!(fields.contains(&field), "missing {field} in {fields:?}");
        }
        assert!(!fields.contains(&"percentiles[0]"), "75 is a valid percentile");
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let json = plan_json(r#"{"type": "constant-vus", "vus": 1, "duration_s": 1, "bogus": 1}"#);
        let errors = Plan::from_json(&json).err().unwrap_or_default();
        assert!(errors[0].message.contains("bogus"), "{errors:?}");
    }

    #[test]
    fn threads_never_exceed_connections() {
        let plan = Plan::from_json(&plan_json(r#"{"type": "constant-vus", "vus": 1, "duration_s": 1}"#));
        assert!(plan.is_ok_and(|p| p.thread_count() == 1));
    }
}
