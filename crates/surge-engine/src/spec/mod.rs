//! spec: what a run is asked to do — the plan and everything it compiles to (scenarios,
//! executors, flows, requests, templates, variables, data pools, checks and captures) —
//! validated once before the run starts.

pub(crate) mod capture;
pub(crate) mod check;
pub(crate) mod executor;
pub(crate) mod flow;
pub(crate) mod jsonpath;
pub(crate) mod plan;
pub(crate) mod plan_error;
pub(crate) mod pool;
pub(crate) mod request;
pub(crate) mod scenario;
pub(crate) mod segment;
pub(crate) mod target;
pub(crate) mod template;
pub(crate) mod variables;
