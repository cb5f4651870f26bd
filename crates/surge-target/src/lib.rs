//! surge-target: the reference system under test, an HTTP/1.1 server with known capacity.
//!
//! `GET /health` is answered as fast as the machine allows (the bar is 0.8 × nginx on one
//! core); every other route goes through a configurable server model (service slots with a
//! service-time distribution, a bounded wait queue, a token-bucket rate limit, injected
//! errors) so tests and demos know the capacity they are measuring. `POST /v1/chat/completions`
//! and `POST /v1/completions` answer as an OpenAI-compatible inference server with a model of
//! its own (a batch, prefill and decode steps: `model::llm`), streamed or not, so TTFT and the
//! time between tokens are known answers too. See `docs/target.md`.
//!
//! ```no_run
//! use std::sync::{atomic::AtomicBool, Arc};
//! use surge_target::{serve, TargetConfig};
//!
//! let config = TargetConfig::from_json(r#"{"bind": "127.0.0.1:0", "workers": 4, "service_time": "10ms"}"#)?;
//! let stop = Arc::new(AtomicBool::new(false));
//! let summary = serve(config, |addr| println!("listening on http://{addr}"), stop)?;
//! println!("{} requests", summary.received);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod config;
pub mod model;
pub mod server;
pub mod stats;

pub use config::duration::parse_duration;
pub use config::error::{ConfigError, ConfigErrors, TargetError};
pub use config::plan::{LlmPlan, TargetPlan};
pub use config::TargetConfig;
pub use model::service_time::ServiceTime;
pub use model::usl::Usl;
pub use server::{serve, serve_plan};
pub use stats::summary::{StopReason, TargetSummary};
