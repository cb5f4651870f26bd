//! surge-engine: the load engine. A validated [`Plan`] goes in, interval snapshots
//! ([`result::Interval`]) stream out to an [`Observer`] while it runs, and a final
//! [`result::RunResult`] comes back from [`run()`].
//!
//! The public surface is small: [`plan`] (the plan's types, as JSON gives them), [`run()`]
//! and its [`Observer`], [`validate_plan`], [`result`] (what a run reports) and
//! [`EngineError`]. Everything else is internal (`pub(crate)`), grouped by concern: `spec`
//! (what to run), `schedule` (when to send), `http` (the wire), `worker` (one event loop per
//! thread), `measure` (what is counted and reported), and `run`, which ties them together.

// Internals are `pub(crate)`: only what is re-exported below is the crate's API.
#![warn(unreachable_pub)]

mod error;
mod http;
mod measure;
mod merge;
mod run;
mod schedule;
mod spec;
mod system;
mod worker;

pub use error::EngineError;
pub use merge::{merge, Incoming, ReportSource};
pub use plan::{Plan, PlanError};
pub use result::{Interval, RunResult};
pub use run::{run, Control, NoObserver, Observer};

/// plan: the plan's types, as `docs/plan.md` describes their JSON: what a caller builds or
/// parses ([`Plan::from_json`]) and hands to [`run()`]; [`JsonPath`](plan::JsonPath) is the
/// path language captures and checks use, for callers that validate paths up front.
pub mod plan {
    pub use crate::schedule::pacer::RateStage;
    pub use crate::spec::capture::{CaptureSource, CaptureSpec};
    pub use crate::spec::check::{CheckKind, CheckSpec};
    pub use crate::spec::executor::{Executor, VuStage};
    pub use crate::spec::flow::{FlowSpec, SequenceSpec, StepSpec, ThinkTime};
    pub use crate::spec::jsonpath::JsonPath;
    pub use crate::spec::plan::{Limits, Plan, DEFAULT_SEND_SLACK_S};
    pub use crate::spec::plan_error::PlanError;
    pub use crate::spec::request::RequestSpec;
    pub use crate::spec::scenario::ScenarioSpec;
    pub use crate::spec::segment::Segment;
    pub use crate::spec::target::{Http2Spec, TargetSpec};
    pub use crate::spec::variables::{PoolPick, RowPick, TimeUnit, VariableSpec};
}

/// result: what a run reports, as the result document's JSON (`docs/results.md`): the
/// [`RunResult`](result::RunResult) and its parts, and each [`Interval`](result::Interval).
pub mod result {
    pub use crate::measure::failure::FailureClass;
    pub use crate::measure::metrics::{Counts, LatencySummaries, ScenarioCounters};
    pub use crate::measure::result::*;
    pub use crate::measure::window::{Drain, Throughput};
    pub use crate::system::CpuTime;
}

/// validate_plan parses and validates a plan given as JSON without running it: the plan, or
/// every mistake found (each naming its field).
///
/// # Errors
/// The plan's errors, when the JSON is not a valid plan.
pub fn validate_plan(json: &str) -> Result<Plan, Vec<PlanError>> {
    Plan::from_json(json)
}

/// testing: internals the crate's own integration tests and examples measure with; not part
/// of the API (hidden from the docs, may change at any time).
#[doc(hidden)]
pub mod testing {
    pub use crate::measure::histogram::LatencyHistogram;
    pub use crate::measure::metrics::Metrics;
    pub use crate::system::descriptor_table_size;
}
