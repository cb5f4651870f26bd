//! spec: what a run is asked to do — the plan and everything it compiles to (scenarios,
//! executors, flows, requests, templates, variables, data pools, checks and captures) —
//! validated once before the run starts.

pub mod capture;
pub mod check;
pub mod executor;
pub mod flow;
pub mod jsonpath;
pub mod plan;
pub mod plan_error;
pub mod pool;
pub mod request;
pub mod scenario;
pub mod segment;
pub mod target;
pub mod template;
pub mod variables;
