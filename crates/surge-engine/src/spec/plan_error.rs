//! plan_error: PlanError, one invalid field of a plan, and the checks that build it. Its own
//! module so that the spec files (scenario, flow, executor, ...) and plan.rs, which holds
//! them, do not import each other in a circle.

use serde::{Deserialize, Serialize};

/// PlanError names one invalid field of a plan and says what was expected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanError {
    /// field is the dotted path of the offending field (e.g. `executor.rate`).
    pub field: String,
    /// message says what is wrong and what was expected.
    pub message: String,
}

impl PlanError {
    /// new builds a PlanError for `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        PlanError { field: field.into(), message: message.into() }
    }
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// check_positive pushes an error unless `value` is a finite number above zero.
pub(crate) fn check_positive(errors: &mut Vec<PlanError>, field: &str, value: f64) {
    if !(value.is_finite() && value > 0.0) {
        errors.push(PlanError::new(field, format!("must be a positive number, got {value}")));
    }
}
