//! error: why a run could not start or had to stop. Failures of single requests are
//! not errors: they are counted (see [`crate::measure::failure`]).

use crate::measure::failure::FailureClass;
use crate::spec::plan_error::PlanError;

/// EngineError is every reason [`crate::run::run`] returns without a result.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// InvalidPlan lists every invalid field of the plan.
    #[error("invalid plan: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    InvalidPlan(Vec<PlanError>),
    /// Unresolvable: the target's host name could not be resolved.
    #[error("cannot resolve host '{host}': {message}")]
    Unresolvable {
        /// host is the name that failed to resolve.
        host: String,
        /// message is the resolver's error.
        message: String,
    },
    /// Unreachable: a first connection to the target failed before any load was sent.
    #[error("target {address} is not reachable: {message}")]
    Unreachable {
        /// address is the socket address tried.
        address: String,
        /// class is how the connection failed.
        class: FailureClass,
        /// message is the operating system's error.
        message: String,
    },
    /// TooManyConnections: the plan needs more file descriptors than the process may open.
    #[error("{needed} connections need about {needed_fds} file descriptors but the limit is {limit} (raise `ulimit -n` or lower the connections)")]
    TooManyConnections {
        /// needed is the number of connections the plan may open.
        needed: u64,
        /// needed_fds adds the engine's own descriptors.
        needed_fds: u64,
        /// limit is the open-file limit after raising the soft limit to the hard one.
        limit: u64,
    },
    /// Setup: the engine could not create its threads, poll or TLS configuration.
    #[error("engine setup failed: {0}")]
    Setup(String),
}
