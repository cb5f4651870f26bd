//! surge-engine: the load engine. A validated [`plan::Plan`] goes in, interval snapshots
//! stream out while it runs, and a final [`result::RunResult`] comes back.

pub mod failure;
pub mod http1;
pub mod pacer;
pub mod histogram;
pub mod metrics;
pub mod executor;
pub mod plan;
pub mod request;
pub mod target;
