//! executor: how many iterations a scenario runs and when, in k6's vocabulary.
//!
//! Closed-model executors keep a number of virtual users (one connection each) busy;
//! open-model executors start iterations on a schedule whatever the server's speed, so
//! that latency is measured from when each iteration was due.

use serde::{Deserialize, Serialize};

use crate::schedule::pacer::{RatePacer, RateStage};
use crate::spec::plan_error::{check_positive, PlanError};

/// VuStage is one stage of a ramping-vus executor: over `duration_s` the number of
/// virtual users moves linearly to `target`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VuStage {
    /// duration_s is the length of the stage in seconds.
    pub duration_s: f64,
    /// target is the number of VUs at the end of the stage.
    pub target: u32,
}

/// Executor is one of k6's executors; the `type` key selects it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Executor {
    /// ConstantVus keeps `vus` virtual users iterating back to back for `duration_s`.
    ConstantVus {
        /// vus is the number of virtual users (connections).
        vus: u32,
        /// duration_s is how long iterations are started.
        duration_s: f64,
    },
    /// RampingVus moves the number of virtual users through linear stages.
    RampingVus {
        /// start_vus is the number of VUs at time zero.
        #[serde(default)]
        start_vus: u32,
        /// stages are the VU targets and how long each ramp takes.
        stages: Vec<VuStage>,
        /// graceful_ramp_down_s is how long a VU removed by a ramp-down may finish its
        /// iteration before its request is interrupted.
        #[serde(default = "default_graceful_ramp_down_s")]
        graceful_ramp_down_s: f64,
    },
    /// PerVuIterations has each of `vus` virtual users run exactly `iterations` iterations.
    PerVuIterations {
        /// vus is the number of virtual users (connections).
        vus: u32,
        /// iterations is the number of iterations each VU runs.
        iterations: u64,
        /// max_duration_s stops the scenario even if iterations remain.
        #[serde(default = "default_max_duration_s")]
        max_duration_s: f64,
    },
    /// SharedIterations has `vus` virtual users share exactly `iterations` iterations.
    SharedIterations {
        /// vus is the number of virtual users (connections).
        vus: u32,
        /// iterations is the exact number of iterations run in total.
        iterations: u64,
        /// max_duration_s stops the scenario even if iterations remain.
        #[serde(default = "default_max_duration_s")]
        max_duration_s: f64,
    },
    /// ConstantArrivalRate starts `rate` iterations per second for `duration_s`.
    ConstantArrivalRate {
        /// rate is the arrival rate in iterations per second.
        rate: f64,
        /// duration_s is how long the schedule runs.
        duration_s: f64,
        /// max_vus caps the iterations in progress at once (and so connections); an
        /// iteration due when all are busy is dropped.
        max_vus: u32,
        /// pre_allocated_vus connections are opened before the first iteration is due
        /// (default: 1 ms of arrivals at the peak rate, the default send slack's worth),
        /// so that the first batches of due iterations do not wait for new connections.
        #[serde(default)]
        pre_allocated_vus: Option<u32>,
    },
    /// RampingArrivalRate follows piecewise-linear rate stages from `start_rate`.
    RampingArrivalRate {
        /// start_rate is the rate at time zero, in iterations per second.
        #[serde(default)]
        start_rate: f64,
        /// stages are the rate targets and how long each ramp takes.
        stages: Vec<RateStage>,
        /// max_vus caps the iterations in progress at once (and so connections).
        max_vus: u32,
        /// pre_allocated_vus connections are opened before the first iteration is due.
        #[serde(default)]
        pre_allocated_vus: Option<u32>,
    },
}

fn default_max_duration_s() -> f64 {
    600.0
}

fn default_graceful_ramp_down_s() -> f64 {
    30.0
}

/// MAX_VUS bounds the virtual users of one scenario.
pub(crate) const MAX_VUS: u32 = 1_000_000;

/// Iterations is how many iterations a closed-model scenario runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Iterations {
    /// Unlimited: until the duration ends.
    Unlimited,
    /// Shared: exactly this many, shared by all VUs.
    Shared(u64),
    /// PerVu: exactly this many per VU.
    PerVu(u64),
}

/// VuRamp is a ramping-vus schedule: how many VUs are active at any time.
#[derive(Clone, Debug, PartialEq)]
pub struct VuRamp {
    /// start_vus is the count at time zero.
    pub start_vus: u32,
    /// stages are the linear ramps.
    pub stages: Vec<VuStage>,
    /// graceful_ramp_down_ns is how long a removed VU may finish its iteration.
    pub graceful_ramp_down_ns: u64,
}

impl VuRamp {
    /// vus_at is the number of active VUs `t_s` seconds into the scenario (linear
    /// interpolation within a stage, rounded down, as k6 does).
    pub fn vus_at(&self, t_s: f64) -> u32 {
        let mut from = f64::from(self.start_vus);
        let mut start = 0.0;
        for stage in &self.stages {
            let to = f64::from(stage.target);
            if t_s < start + stage.duration_s {
                let progress = if stage.duration_s > 0.0 { (t_s - start) / stage.duration_s } else { 1.0 };
                return (from + (to - from) * progress.max(0.0)).floor() as u32;
            }
            start += stage.duration_s;
            from = to;
        }
        from as u32
    }

    /// peak is the most VUs the ramp ever asks for.
    pub fn peak(&self) -> u32 {
        self.stages.iter().map(|s| s.target).fold(self.start_vus, u32::max)
    }
}

/// Model is an executor reduced to what the event loops act on.
#[derive(Clone, Debug)]
pub enum Model {
    /// Closed: up to `vus` connections, each starting its next iteration when the last ends.
    Closed {
        /// vus is the number of virtual users (the peak, for a ramp).
        vus: u32,
        /// ramp varies the active VUs over time (ramping-vus).
        ramp: Option<VuRamp>,
        /// iterations bounds the iterations.
        iterations: Iterations,
    },
    /// Open: iterations are due on the pacer's schedule, at most `max_vus` in progress.
    Open {
        /// pacer is the schedule.
        pacer: RatePacer,
        /// max_vus caps iterations in progress.
        max_vus: u32,
        /// pre_allocated_vus is the number of connections opened up front.
        pre_allocated_vus: u32,
    },
}

/// PREALLOCATE_WINDOW_S: by default, open enough connections up front for this many
/// seconds of arrivals at the peak rate: the default slack's worth, so that the first batch
/// finds a connection for each send (half a millisecond's made every run's first half-second
/// late while the pool grew; docs/engine.md, "Pacing").
const PREALLOCATE_WINDOW_S: f64 = 0.001;

/// pre_allocated is the number of connections opened up front: the given number, else
/// [`PREALLOCATE_WINDOW_S`] of arrivals at the peak rate, within 1..=max_vus.
fn pre_allocated(pacer: &RatePacer, max_vus: u32, given: Option<u32>) -> u32 {
    let default = (pacer.peak_rate() * PREALLOCATE_WINDOW_S).ceil() as u32;
    given.unwrap_or(default).clamp(1, max_vus.max(1))
}

fn check_vus(errors: &mut Vec<PlanError>, field: String, n: u32) {
    if n == 0 || n > MAX_VUS {
        errors.push(PlanError::new(field, format!("must be from 1 to {MAX_VUS}, got {n}")));
    }
}

/// MAX_RATE is the highest arrival rate a plan may ask for, per second. One machine sends
/// well under a million requests per second, so a rate above this is a typo; refusing it
/// also keeps the schedule's bookkeeping (one step per due iteration) bounded.
pub(crate) const MAX_RATE: f64 = 10_000_000.0;

/// check_rate_bound pushes an error when `rate` is above [`MAX_RATE`].
fn check_rate_bound(errors: &mut Vec<PlanError>, field: String, rate: f64) {
    if rate.is_finite() && rate > MAX_RATE {
        errors.push(PlanError::new(
            field,
            format!("{rate} per second is above the most one plan may ask for (10,000,000/s)"),
        ));
    }
}

fn check_pre_allocated(errors: &mut Vec<PlanError>, field: &str, pre_allocated: Option<u32>, max_vus: u32) {
    if let Some(n) = pre_allocated {
        if n > max_vus {
            errors.push(PlanError::new(
                format!("{field}.pre_allocated_vus"),
                format!("{n} is more than max_vus ({max_vus})"),
            ));
        }
    }
}

fn check_stage_durations(errors: &mut Vec<PlanError>, field: &str, durations: impl Iterator<Item = f64>) {
    let mut total = 0.0;
    let mut count = 0;
    for (i, d) in durations.enumerate() {
        count += 1;
        if d.is_finite() && d >= 0.0 {
            total += d;
        } else {
            errors.push(PlanError::new(format!("{field}.stages[{i}].duration_s"), "must be zero or positive"));
        }
    }
    if count == 0 {
        errors.push(PlanError::new(format!("{field}.stages"), "needs at least one stage"));
    } else if total <= 0.0 {
        errors.push(PlanError::new(format!("{field}.stages"), "total duration must be above zero"));
    }
}

impl Executor {
    /// validate pushes an error for every invalid field, under `field` (e.g. `scenarios[0].executor`).
    pub fn validate(&self, field: &str, errors: &mut Vec<PlanError>) {
        let at = |name: &str| format!("{field}.{name}");
        match self {
            Executor::ConstantVus { vus, duration_s } => {
                check_vus(errors, at("vus"), *vus);
                check_positive(errors, &at("duration_s"), *duration_s);
            }
            Executor::RampingVus { start_vus, stages, graceful_ramp_down_s } => {
                check_stage_durations(errors, field, stages.iter().map(|s| s.duration_s));
                if *start_vus > MAX_VUS {
                    errors.push(PlanError::new(at("start_vus"), format!("must be at most {MAX_VUS}")));
                }
                for (i, stage) in stages.iter().enumerate() {
                    if stage.target > MAX_VUS {
                        errors.push(PlanError::new(
                            format!("{field}.stages[{i}].target"),
                            format!("must be at most {MAX_VUS}"),
                        ));
                    }
                }
                if !stages.is_empty() && stages.iter().all(|s| s.target == 0) && *start_vus == 0 {
                    errors.push(PlanError::new(at("stages"), "every stage targets 0 VUs: nothing would run"));
                }
                if !(graceful_ramp_down_s.is_finite() && *graceful_ramp_down_s >= 0.0) {
                    errors.push(PlanError::new(at("graceful_ramp_down_s"), "must be zero or positive"));
                }
            }
            Executor::PerVuIterations { vus, iterations, max_duration_s }
            | Executor::SharedIterations { vus, iterations, max_duration_s } => {
                check_vus(errors, at("vus"), *vus);
                if *iterations == 0 {
                    errors.push(PlanError::new(at("iterations"), "must be at least 1"));
                }
                check_positive(errors, &at("max_duration_s"), *max_duration_s);
            }
            Executor::ConstantArrivalRate { rate, duration_s, max_vus, pre_allocated_vus } => {
                check_positive(errors, &at("rate"), *rate);
                check_rate_bound(errors, at("rate"), *rate);
                check_positive(errors, &at("duration_s"), *duration_s);
                check_vus(errors, at("max_vus"), *max_vus);
                check_pre_allocated(errors, field, *pre_allocated_vus, *max_vus);
            }
            Executor::RampingArrivalRate { start_rate, stages, max_vus, pre_allocated_vus } => {
                if !(start_rate.is_finite() && *start_rate >= 0.0) {
                    errors.push(PlanError::new(at("start_rate"), "must be zero or positive"));
                }
                check_rate_bound(errors, at("start_rate"), *start_rate);
                check_stage_durations(errors, field, stages.iter().map(|s| s.duration_s));
                for (i, stage) in stages.iter().enumerate() {
                    if !(stage.target_rate.is_finite() && stage.target_rate >= 0.0) {
                        errors.push(PlanError::new(
                            format!("{field}.stages[{i}].target_rate"),
                            "must be zero or positive",
                        ));
                    }
                    check_rate_bound(errors, format!("{field}.stages[{i}].target_rate"), stage.target_rate);
                }
                check_vus(errors, at("max_vus"), *max_vus);
                check_pre_allocated(errors, field, *pre_allocated_vus, *max_vus);
            }
        }
    }

    /// duration_s is the length of the load window (the longest it may last).
    pub fn duration_s(&self) -> f64 {
        match self {
            Executor::ConstantVus { duration_s, .. } | Executor::ConstantArrivalRate { duration_s, .. } => *duration_s,
            Executor::SharedIterations { max_duration_s, .. } | Executor::PerVuIterations { max_duration_s, .. } => {
                *max_duration_s
            }
            Executor::RampingVus { stages, .. } => stages.iter().map(|s| s.duration_s).sum(),
            Executor::RampingArrivalRate { stages, .. } => stages.iter().map(|s| s.duration_s).sum(),
        }
    }

    /// max_connections is the most connections the executor may open at once.
    pub fn max_connections(&self) -> u32 {
        match self {
            Executor::ConstantVus { vus, .. }
            | Executor::SharedIterations { vus, .. }
            | Executor::PerVuIterations { vus, .. } => *vus,
            Executor::RampingVus { start_vus, stages, .. } => {
                stages.iter().map(|s| s.target).fold(*start_vus, u32::max)
            }
            Executor::ConstantArrivalRate { max_vus, .. } | Executor::RampingArrivalRate { max_vus, .. } => *max_vus,
        }
    }

    /// is_open tells whether the executor follows an arrival-rate schedule.
    pub fn is_open(&self) -> bool {
        matches!(self, Executor::ConstantArrivalRate { .. } | Executor::RampingArrivalRate { .. })
    }

    /// model reduces the executor to what the event loops act on.
    pub fn model(&self) -> Model {
        match self {
            Executor::ConstantVus { vus, .. } => {
                Model::Closed { vus: *vus, ramp: None, iterations: Iterations::Unlimited }
            }
            Executor::RampingVus { start_vus, stages, graceful_ramp_down_s } => {
                let ramp = VuRamp {
                    start_vus: *start_vus,
                    stages: stages.clone(),
                    graceful_ramp_down_ns: (graceful_ramp_down_s * 1e9) as u64,
                };
                Model::Closed { vus: ramp.peak(), ramp: Some(ramp), iterations: Iterations::Unlimited }
            }
            Executor::SharedIterations { vus, iterations, .. } => {
                Model::Closed { vus: *vus, ramp: None, iterations: Iterations::Shared(*iterations) }
            }
            Executor::PerVuIterations { vus, iterations, .. } => {
                Model::Closed { vus: *vus, ramp: None, iterations: Iterations::PerVu(*iterations) }
            }
            Executor::ConstantArrivalRate { rate, duration_s, max_vus, pre_allocated_vus: given } => {
                let pacer = RatePacer::constant(*rate, *duration_s);
                let pre_allocated_vus = pre_allocated(&pacer, *max_vus, *given);
                Model::Open { pacer, max_vus: *max_vus, pre_allocated_vus }
            }
            Executor::RampingArrivalRate { start_rate, stages, max_vus, pre_allocated_vus: given } => {
                let pacer = RatePacer::ramping(*start_rate, stages);
                let pre_allocated_vus = pre_allocated(&pacer, *max_vus, *given);
                Model::Open { pacer, max_vus: *max_vus, pre_allocated_vus }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_above_the_bound_are_refused_with_their_field() {
        let mut errors = Vec::new();
        Executor::ConstantArrivalRate { rate: 1e12, duration_s: 1.0, max_vus: 1, pre_allocated_vus: None }
            .validate("executor", &mut errors);
        Executor::RampingArrivalRate {
            start_rate: MAX_RATE,
            stages: vec![RateStage { duration_s: 1.0, target_rate: MAX_RATE * 2.0 }],
            max_vus: 1,
            pre_allocated_vus: None,
        }
        .validate("ramp", &mut errors);
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["executor.rate", "ramp.stages[0].target_rate"]);
    }

    #[test]
    fn ramp_interpolates_and_holds() {
        let ramp = VuRamp {
            start_vus: 0,
            stages: vec![
                VuStage { duration_s: 10.0, target: 50 },
                VuStage { duration_s: 10.0, target: 50 },
                VuStage { duration_s: 0.0, target: 200 },
                VuStage { duration_s: 5.0, target: 0 },
            ],
            graceful_ramp_down_ns: 0,
        };
        for (t, vus) in [
            (0.0, 0),
            (1.0, 5),
            (5.0, 25),
            (9.99, 49),
            (10.0, 50),
            (19.0, 50),
            (20.0, 200),
            (22.5, 100),
            (25.0, 0),
            (99.0, 0),
        ] {
            assert_eq!(ramp.vus_at(t), vus, "at {t}s");
        }
        assert_eq!(ramp.peak(), 200);
    }

    #[test]
    fn every_executor_error_names_its_field() {
        let cases = [
            (r#"{"type": "constant-vus", "vus": 0, "duration_s": 0}"#, vec!["e.vus", "e.duration_s"]),
            (r#"{"type": "ramping-vus", "stages": []}"#, vec!["e.stages"]),
            (r#"{"type": "ramping-vus", "stages": [{"duration_s": 0, "target": 5}]}"#, vec!["e.stages"]),
            (r#"{"type": "ramping-vus", "stages": [{"duration_s": 5, "target": 0}]}"#, vec!["e.stages"]),
            (r#"{"type": "per-vu-iterations", "vus": 1, "iterations": 0}"#, vec!["e.iterations"]),
            (
                r#"{"type": "shared-iterations", "vus": 2, "iterations": 5, "max_duration_s": -1}"#,
                vec!["e.max_duration_s"],
            ),
            (
                r#"{"type": "constant-arrival-rate", "rate": 0, "duration_s": 1, "max_vus": 2, "pre_allocated_vus": 3}"#,
                vec!["e.rate", "e.pre_allocated_vus"],
            ),
            (
                r#"{"type": "ramping-arrival-rate", "start_rate": -1, "stages": [{"duration_s": 1, "target_rate": -2}], "max_vus": 0}"#,
                vec!["e.start_rate", "e.stages[0].target_rate", "e.max_vus"],
            ),
        ];
        for (json, expected) in cases {
            let executor: Executor = serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"));
            let mut errors = Vec::new();
            executor.validate("e", &mut errors);
            let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
            assert_eq!(fields, expected, "{json}");
        }
    }

    #[test]
    fn models_carry_the_executor() {
        let executor: Executor = serde_json::from_str(r#"{"type": "per-vu-iterations", "vus": 3, "iterations": 7}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(executor.model(), Model::Closed { vus: 3, ramp: None, iterations: Iterations::PerVu(7) }));
        assert_eq!(executor.duration_s(), 600.0);
        let executor: Executor = serde_json::from_str(r#"{"type": "ramping-vus", "start_vus": 2, "stages": [{"duration_s": 3, "target": 9}, {"duration_s": 3, "target": 1}]}"#).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((executor.max_connections(), executor.duration_s()), (9, 6.0));
    }
}
