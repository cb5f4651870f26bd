//! model: the server model, what happens to a request on a modeled route before it is answered: service
//! slots and their queue (`slots`), service times (`service_time`, `usl`, `cpu`), rate limits, stalls and
//! the thread-per-connection gate, drawn from a seeded `rng`; `llm` is the inference routes' own model (a
//! batch of sequences, prefill and decode steps).
//!
//! The server model: what happens to a request on a modeled route before it is answered.
//!
//! Order: the rate limit first (429 costs no slot), then a service slot or a place in the wait
//! queue (503 when full), then the error draw (500 after the service time, like a real failure).

pub mod cpu;
pub mod llm;
pub mod rate_limit;
pub mod rng;
pub mod service_time;
pub mod slots;
pub mod stall;
pub mod usl;
pub mod worker_gate;

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::config::plan::TargetPlan;
use crate::model::rate_limit::TokenBucket;
use crate::model::rng::Rng;
use crate::model::service_time::{nanos_of, ServiceTime};
use crate::model::slots::ServiceSlots;
use crate::model::stall::Stall;

/// Decision is the model's verdict on one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Serve: answer at `due_ns` (server time), after burning `burn_ns` of CPU on a service
    /// thread if set (`--service-cpu`); with `fail`, answer 500 instead of the route.
    Serve {
        /// due_ns is when the response is due, in nanoseconds since the server started (with
        /// `burn_ns`, the earliest: the burn takes what it takes).
        due_ns: u64,
        /// burn_ns is the service time to burn as CPU on a service thread (`--service-cpu`).
        burn_ns: Option<u64>,
        /// fail says to answer 500 (the `--error-rate` draw).
        fail: bool,
    },
    /// RateLimited: no token left; answer 429 with `Retry-After`.
    RateLimited {
        /// retry_after_s is the whole seconds until a token is available (at least 1).
        retry_after_s: u64,
    },
    /// Overloaded: every slot busy and the queue full; answer 503 with `Retry-After`.
    Overloaded {
        /// retry_after_s is a whole-second estimate of when a place frees up (at least 1).
        retry_after_s: u64,
    },
}

/// Load is the service model's state at one instant, for `/stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Load {
    /// queue_depth is requests waiting for a slot.
    pub queue_depth: usize,
    /// busy_workers is slots serving a request.
    pub busy_workers: usize,
}

#[derive(Debug)]
struct ModelState {
    bucket: Option<TokenBucket>,
    slots: Option<(ServiceSlots, ServiceTime)>,
    /// burn is the service time burned as CPU instead of slots (`--service-cpu`).
    burn: Option<ServiceTime>,
    error_rate: f64,
    rng: Rng,
}

/// ServerModel is shared by all server threads; its clock starts when it is built. Routes
/// with no knob configured never take its lock.
#[derive(Debug)]
pub struct ServerModel {
    origin: Instant,
    stall: Option<Stall>,
    state: Option<Mutex<ModelState>>,
}

impl ServerModel {
    /// new builds the model for `plan`, starting its clock now.
    pub fn new(plan: &TargetPlan) -> Self {
        let needs_state = plan.service.is_some() || plan.rate_limit.is_some() || plan.error_rate > 0.0;
        let state = needs_state.then(|| {
            Mutex::new(ModelState {
                bucket: plan.rate_limit.map(|r| TokenBucket::new(r.rate, r.burst)),
                // With a worker per connection, the queue is of connections (the gate's): at
                // most one request per worker is ever in service, so the slots never queue.
                slots: plan.service.as_ref().filter(|s| !s.service_cpu).map(|s| {
                    let queue = if s.thread_per_connection { None } else { s.queue };
                    (ServiceSlots::new(s.workers, queue, s.usl), s.service_time)
                }),
                burn: plan.service.as_ref().filter(|s| s.service_cpu).map(|s| s.service_time),
                error_rate: plan.error_rate,
                rng: plan.seed.map_or_else(Rng::from_entropy, Rng::seeded),
            })
        });
        Self { origin: Instant::now(), stall: plan.stall, state }
    }

    /// now_ns is the time since the model was built, in nanoseconds.
    pub fn now_ns(&self) -> u64 {
        nanos_of(self.origin.elapsed())
    }

    /// instant_at turns a server time into an [`Instant`].
    pub fn instant_at(&self, ns: u64) -> Instant {
        self.origin + Duration::from_nanos(ns)
    }

    /// has_stall says whether `--stall-every` is set (so the hot path can skip the clock).
    pub fn has_stall(&self) -> bool {
        self.stall.is_some()
    }

    /// release_ns is when something due at `due_ns` may be answered, after any stall.
    pub fn release_ns(&self, due_ns: u64) -> u64 {
        self.stall.map_or(due_ns, |s| s.release_ns(due_ns))
    }

    /// decide admits, limits or rejects one request arriving now (or at the end of the
    /// current stall: a paused server reads nothing).
    pub fn decide(&self) -> Decision {
        let Some(state) = &self.state else {
            return Decision::Serve { due_ns: self.release_ns(self.now_ns()), burn_ns: None, fail: false };
        };
        let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
        // Read the clock under the lock so every structure sees non-decreasing times.
        let now_ns = self.release_ns(self.now_ns());
        let ModelState { bucket, slots, burn, error_rate, rng } = &mut *state;
        if let Some(bucket) = bucket {
            if let Err(wait_ns) = bucket.try_take(now_ns) {
                return Decision::RateLimited { retry_after_s: whole_seconds(wait_ns) };
            }
        }
        let mut due_ns = now_ns;
        if let Some((slots, service_time)) = slots {
            let service_ns = service_time.sample_nanos(rng);
            if let Some(slot) = slots.admit(now_ns, service_ns) {
                due_ns = slot.finish_ns;
            } else {
                let wait = nanos_of(service_time.mean()).saturating_mul(slots.queue_depth(now_ns) as u64 + 1);
                return Decision::Overloaded { retry_after_s: whole_seconds(wait / slots.workers() as u64) };
            }
        }
        let burn_ns = burn.map(|b| b.sample_nanos(rng));
        let fail = *error_rate > 0.0 && rng.next_f64() < *error_rate;
        Decision::Serve { due_ns: self.release_ns(due_ns), burn_ns, fail }
    }

    /// load is the queue depth and busy slots now (zero without a service model).
    pub fn load(&self) -> Load {
        let Some(state) = &self.state else {
            return Load::default();
        };
        let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
        let now_ns = self.now_ns();
        match &mut state.slots {
            Some((slots, _)) => Load { queue_depth: slots.queue_depth(now_ns), busy_workers: slots.busy(now_ns) },
            None => Load::default(),
        }
    }
}

/// whole_seconds rounds nanoseconds up to whole seconds, at least 1 (for `Retry-After`).
fn whole_seconds(ns: u64) -> u64 {
    ns.div_ceil(1_000_000_000).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TargetConfig;

    fn model(json: &str) -> Option<ServerModel> {
        let plan = TargetConfig::from_json(json).ok()?.validate().ok()?;
        Some(ServerModel::new(&plan))
    }

    #[test]
    fn no_knobs_serves_now() {
        let Some(m) = model("{}") else { panic!("valid config") };
        assert!(matches!(m.decide(), Decision::Serve { fail: false, .. }));
        assert_eq!(m.load(), Load::default());
    }

    #[test]
    fn rate_limit_comes_before_slots() {
        let Some(m) = model(r#"{"rate_limit": 1, "burst": 2, "workers": 1, "service_time": "1s", "queue": 0}"#) else {
            panic!("valid config")
        };
        assert!(matches!(m.decide(), Decision::Serve { .. }));
        assert_eq!(m.decide(), Decision::Overloaded { retry_after_s: 1 });
        assert_eq!(m.decide(), Decision::RateLimited { retry_after_s: 1 });
        assert_eq!(m.load(), Load { queue_depth: 0, busy_workers: 1 });
    }

    #[test]
    fn error_rate_draws_are_seeded() {
        let draw = |seed: u64| -> Vec<bool> {
            let json = format!(r#"{{"error_rate": 0.3, "seed": {seed}}}"#);
            let Some(m) = model(&json) else { return vec![] };
            (0..200).map(|_| matches!(m.decide(), Decision::Serve { fail: true, .. })).collect()
        };
        let (a, b) = (draw(5), draw(5));
        assert_eq!(a, b);
        assert_ne!(a, draw(6));
        let failures = a.iter().filter(|&&f| f).count();
        assert!((40..=80).contains(&failures), "{failures} of 200");
    }

    #[test]
    fn service_time_sets_due() {
        let Some(m) = model(r#"{"workers": 1, "service_time": "50ms"}"#) else { panic!("valid config") };
        let before = m.now_ns();
        let Decision::Serve { due_ns, .. } = m.decide() else { panic!("served") };
        assert!(due_ns >= before + 50_000_000 && due_ns < before + 60_000_000);
        let Decision::Serve { due_ns: second, .. } = m.decide() else { panic!("queued") };
        assert_eq!(second, due_ns + 50_000_000);
        assert_eq!(m.load(), Load { queue_depth: 1, busy_workers: 1 });
    }
}
