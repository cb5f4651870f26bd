//! surge-engine: the load engine. A validated [`spec::plan::Plan`] goes in, interval snapshots
//! ([`measure::result::Interval`]) stream out to an [`run::Observer`] while it runs, and a final
//! [`measure::result::RunResult`] comes back from [`run::run`].
//!
//! Modules are grouped by concern: [`spec`] (what to run), [`schedule`] (when to send),
//! [`http`] (the wire), [`worker`] (one event loop per thread), [`measure`] (what is counted
//! and reported); [`mod@run`] ties them together.

pub mod error;
pub mod http;
pub mod measure;
pub mod run;
pub mod schedule;
pub mod spec;
pub mod system;
pub mod worker;

pub use error::EngineError;
pub use measure::result::{Interval, RunResult};
pub use run::{run, Control, NoObserver, Observer};
pub use spec::plan::Plan;
