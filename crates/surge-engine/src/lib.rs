//! surge-engine: the load engine. A validated [`plan::Plan`] goes in, interval snapshots
//! ([`result::Interval`]) stream out to an [`run::Observer`] while it runs, and a final
//! [`result::RunResult`] comes back from [`run::run`].

pub mod aggregator;
pub mod breakdown;
pub mod budget;
pub mod capture;
pub mod check;
pub mod conn;
pub mod error;
pub mod executor;
pub mod failure;
pub mod flow;
pub mod histogram;
pub mod http1;
pub mod jsonpath;
pub mod metrics;
pub mod pacer;
pub mod plan;
pub mod pool;
pub mod request;
pub mod response;
pub mod result;
pub mod run;
pub mod scenario;
pub mod system;
pub mod target;
pub mod template;
pub mod timer;
pub mod tls;
pub mod transport;
pub mod variables;
pub mod window;
pub mod worker;

pub use error::EngineError;
pub use plan::Plan;
pub use result::{Interval, RunResult};
pub use run::{run, Control, NoObserver, Observer};
