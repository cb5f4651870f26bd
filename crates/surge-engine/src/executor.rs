//! executor: how many requests a run sends and when, in k6's vocabulary.
//!
//! Closed-model executors keep a number of virtual users (one connection each) busy;
//! open-model executors send on a schedule whatever the server's speed, so that latency
//! is measured from when each request was due.

use serde::{Deserialize, Serialize};

use crate::pacer::{RatePacer, RateStage};
use crate::plan::{check_positive, PlanError};

/// Executor is one of k6's executors; the `type` key selects it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Executor {
    /// ConstantVus keeps `vus` virtual users sending back to back for `duration_s`.
    ConstantVus {
        /// vus is the number of virtual users (connections).
        vus: u32,
        /// duration_s is how long requests are issued.
        duration_s: f64,
    },
    /// SharedIterations has `vus` virtual users share exactly `iterations` requests.
    SharedIterations {
        /// vus is the number of virtual users (connections).
        vus: u32,
        /// iterations is the exact number of requests sent in total.
        iterations: u64,
        /// max_duration_s stops the run even if iterations remain.
        #[serde(default = "default_max_duration_s")]
        max_duration_s: f64,
    },
    /// ConstantArrivalRate starts `rate` requests per second for `duration_s`.
    ConstantArrivalRate {
        /// rate is the arrival rate in requests per second.
        rate: f64,
        /// duration_s is how long the schedule runs.
        duration_s: f64,
        /// max_in_flight caps requests outstanding at once (and so connections).
        max_in_flight: u32,
        /// pre_allocated connections are opened before the first request is due
        /// (default: 10 ms of arrivals at the peak rate), so that a burst of due
        /// requests does not wait for new connections.
        #[serde(default)]
        pre_allocated: Option<u32>,
    },
    /// RampingArrivalRate follows piecewise-linear rate stages from `start_rate`.
    RampingArrivalRate {
        /// start_rate is the rate at time zero, in requests per second.
        #[serde(default)]
        start_rate: f64,
        /// stages are the rate targets and how long each ramp takes.
        stages: Vec<RateStage>,
        /// max_in_flight caps requests outstanding at once (and so connections).
        max_in_flight: u32,
        /// pre_allocated connections are opened before the first request is due.
        #[serde(default)]
        pre_allocated: Option<u32>,
    },
}

fn default_max_duration_s() -> f64 {
    600.0
}

fn check_pre_allocated(errors: &mut Vec<PlanError>, pre_allocated: Option<u32>, max_in_flight: u32) {
    if let Some(n) = pre_allocated {
        if n > max_in_flight {
            errors.push(PlanError::new(
                "executor.pre_allocated",
                format!("{n} is more than max_in_flight ({max_in_flight})"),
            ));
        }
    }
}

/// Model is an executor reduced to what the event loops act on.
#[derive(Clone, Debug)]
pub enum Model {
    /// Closed: `vus` connections, each sending its next request when the last completes.
    Closed {
        /// vus is the number of virtual users.
        vus: u32,
        /// iterations is the total request budget shared by all users, if any.
        iterations: Option<u64>,
    },
    /// Open: requests are due on the pacer's schedule, at most `max_in_flight` outstanding.
    Open {
        /// pacer is the schedule.
        pacer: RatePacer,
        /// max_in_flight caps outstanding requests.
        max_in_flight: u32,
        /// pre_allocated is the number of connections opened up front.
        pre_allocated: u32,
    },
}

/// PREALLOCATE_WINDOW_S: by default, open enough connections up front for this many
/// seconds of arrivals at the peak rate.
const PREALLOCATE_WINDOW_S: f64 = 0.010;

/// pre_allocated is the number of connections opened up front: the given number, else
/// [`PREALLOCATE_WINDOW_S`] of arrivals at the peak rate, within 1..=max_in_flight.
fn pre_allocated(pacer: &RatePacer, max_in_flight: u32, given: Option<u32>) -> u32 {
    let default = (pacer.peak_rate() * PREALLOCATE_WINDOW_S).ceil() as u32;
    given.unwrap_or(default).clamp(1, max_in_flight.max(1))
}

impl Executor {
    /// validate pushes an error for every invalid field.
    pub fn validate(&self, errors: &mut Vec<PlanError>) {
        let check_vus = |errors: &mut Vec<PlanError>, field: &str, n: u32| {
            if n == 0 {
                errors.push(PlanError::new(field, "must be at least 1"));
            }
        };
        match self {
            Executor::ConstantVus { vus, duration_s } => {
                check_vus(errors, "executor.vus", *vus);
                check_positive(errors, "executor.duration_s", *duration_s);
            }
            Executor::SharedIterations { vus, iterations, max_duration_s } => {
                check_vus(errors, "executor.vus", *vus);
                if *iterations == 0 {
                    errors.push(PlanError::new("executor.iterations", "must be at least 1"));
                }
                check_positive(errors, "executor.max_duration_s", *max_duration_s);
            }
            Executor::ConstantArrivalRate { rate, duration_s, max_in_flight, pre_allocated } => {
                check_pre_allocated(errors, *pre_allocated, *max_in_flight);
                check_positive(errors, "executor.rate", *rate);
                check_positive(errors, "executor.duration_s", *duration_s);
                check_vus(errors, "executor.max_in_flight", *max_in_flight);
            }
            Executor::RampingArrivalRate { start_rate, stages, max_in_flight, pre_allocated } => {
                check_pre_allocated(errors, *pre_allocated, *max_in_flight);
                if !(start_rate.is_finite() && *start_rate >= 0.0) {
                    errors.push(PlanError::new("executor.start_rate", "must be zero or positive"));
                }
                if stages.is_empty() {
                    errors.push(PlanError::new("executor.stages", "needs at least one stage"));
                }
                for (i, stage) in stages.iter().enumerate() {
                    if !(stage.duration_s.is_finite() && stage.duration_s >= 0.0) {
                        errors.push(PlanError::new(format!("executor.stages[{i}].duration_s"), "must be zero or positive"));
                    }
                    if !(stage.target_rate.is_finite() && stage.target_rate >= 0.0) {
                        errors.push(PlanError::new(format!("executor.stages[{i}].target_rate"), "must be zero or positive"));
                    }
                }
                if stages.iter().map(|s| s.duration_s).sum::<f64>() <= 0.0 {
                    errors.push(PlanError::new("executor.stages", "total duration must be above zero"));
                }
                check_vus(errors, "executor.max_in_flight", *max_in_flight);
            }
        }
    }

    /// duration_s is the length of the load window (the longest it may last).
    pub fn duration_s(&self) -> f64 {
        match self {
            Executor::ConstantVus { duration_s, .. } | Executor::ConstantArrivalRate { duration_s, .. } => *duration_s,
            Executor::SharedIterations { max_duration_s, .. } => *max_duration_s,
            Executor::RampingArrivalRate { stages, .. } => stages.iter().map(|s| s.duration_s).sum(),
        }
    }

    /// max_connections is the most connections the executor may open at once.
    pub fn max_connections(&self) -> u32 {
        match self {
            Executor::ConstantVus { vus, .. } | Executor::SharedIterations { vus, .. } => *vus,
            Executor::ConstantArrivalRate { max_in_flight, .. }
            | Executor::RampingArrivalRate { max_in_flight, .. } => *max_in_flight,
        }
    }

    /// model reduces the executor to what the event loops act on.
    pub fn model(&self) -> Model {
        match self {
            Executor::ConstantVus { vus, .. } => Model::Closed { vus: *vus, iterations: None },
            Executor::SharedIterations { vus, iterations, .. } => {
                Model::Closed { vus: *vus, iterations: Some(*iterations) }
            }
            Executor::ConstantArrivalRate { rate, duration_s, max_in_flight, pre_allocated: given } => {
                let pacer = RatePacer::constant(*rate, *duration_s);
                let pre_allocated = pre_allocated(&pacer, *max_in_flight, *given);
                Model::Open { pacer, max_in_flight: *max_in_flight, pre_allocated }
            }
            Executor::RampingArrivalRate { start_rate, stages, max_in_flight, pre_allocated: given } => {
                let pacer = RatePacer::ramping(*start_rate, stages);
                let pre_allocated = pre_allocated(&pacer, *max_in_flight, *given);
                Model::Open { pacer, max_in_flight: *max_in_flight, pre_allocated }
            }
        }
    }
}
