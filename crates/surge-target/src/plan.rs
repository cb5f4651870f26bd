//! TargetPlan: a validated configuration, the only thing the server runs.
use std::net::SocketAddr;
use std::time::Duration;

use crate::service_time::ServiceTime;
use crate::stall::Stall;

/// ServicePlan is the service model: `workers` slots, each request holding one for a draw of
/// `service_time`, at most `queue` waiting (unbounded when `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServicePlan {
    /// workers is the number of service slots (at least 1).
    pub workers: usize,
    /// service_time is how long a request holds a slot.
    pub service_time: ServiceTime,
    /// queue is the most requests that may wait for a slot; `None` is unbounded.
    pub queue: Option<usize>,
}

impl ServicePlan {
    /// capacity is the most requests per second the slots can serve: workers / mean service time.
    pub fn capacity(&self) -> f64 {
        self.workers as f64 / self.service_time.mean().as_secs_f64()
    }
}

/// RateLimitPlan is the token bucket: `rate` requests per second, `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimitPlan {
    /// rate is tokens added per second (above 0).
    pub rate: f64,
    /// burst is the bucket's size (at least 1).
    pub burst: u32,
}

/// TargetPlan is a [`crate::TargetConfig`] that passed validation: every value in range and
/// every duration parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetPlan {
    /// bind is the address to listen on.
    pub bind: SocketAddr,
    /// threads is the number of server threads (at least 1).
    pub threads: usize,
    /// duration stops the server after this long; `None` runs until stopped.
    pub duration: Option<Duration>,
    /// service is the service model; `None` answers at once.
    pub service: Option<ServicePlan>,
    /// rate_limit is the token bucket, if any.
    pub rate_limit: Option<RateLimitPlan>,
    /// stall is the whole-server pause schedule, if any.
    pub stall: Option<Stall>,
    /// error_rate is the share of modeled requests answered 500 (0 to 1).
    pub error_rate: f64,
    /// close_after closes each connection after this many responses.
    pub close_after: Option<u64>,
    /// max_connections is the most connections open at once.
    pub max_connections: Option<usize>,
    /// seed fixes the random draws; `None` draws differently each run.
    pub seed: Option<u64>,
    /// shards is the number of parts of the task store (at least 1).
    pub shards: usize,
}

impl TargetPlan {
    /// warnings are things worth saying before serving: a bind address reachable from other
    /// machines.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.bind.ip().is_loopback() {
            out.push(format!(
                "--bind {} is not a loopback address: anything that can reach this machine can send load to it",
                self.bind
            ));
        }
        out
    }

    /// describe is one line per active knob, saying how the target will behave.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        match &self.service {
            Some(s) => {
                let queue = s.queue.map_or_else(|| "unbounded queue".to_string(), |q| format!("queue {q}"));
                out.push(format!(
                    "service model: {} workers × {} (mean {:?}) = capacity {:.1} req/s, {queue}",
                    s.workers,
                    s.service_time,
                    s.service_time.mean(),
                    s.capacity()
                ));
            }
            None => out.push("service model: none (every request answered at once)".into()),
        }
        if let Some(r) = &self.rate_limit {
            out.push(format!("rate limit: {} req/s, burst {} (429 beyond)", r.rate, r.burst));
        }
        if let Some(s) = &self.stall {
            out.push(format!(
                "stall: {:?} every {:?}",
                Duration::from_nanos(s.for_ns),
                Duration::from_nanos(s.every_ns)
            ));
        }
        if self.error_rate > 0.0 {
            out.push(format!("error rate: {}% answered 500", self.error_rate * 100.0));
        }
        if let Some(n) = self.close_after {
            out.push(format!("close after: {n} responses per connection"));
        }
        if let Some(n) = self.max_connections {
            out.push(format!("max connections: {n}"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::TargetConfig;

    #[test]
    fn warns_only_off_loopback() {
        let cases: &[(&str, bool)] =
            &[("127.0.0.1:0", false), ("127.8.9.10:80", false), ("[::1]:0", false), ("0.0.0.0:8080", true), ("[::]:0", true), ("10.1.2.3:80", true)];
        for &(bind, warns) in cases {
            let config = TargetConfig { bind: bind.into(), ..TargetConfig::default() };
            let warnings = config.validate().map(|p| p.warnings()).unwrap_or_default();
            assert_eq!(warnings.len(), usize::from(warns), "{bind}: {warnings:?}");
            assert!(warnings.iter().all(|w| w.starts_with("--bind ")));
        }
    }

    #[test]
    fn describes_capacity() {
        let config = TargetConfig {
            workers: Some(8),
            service_time: Some("1.7ms".into()),
            queue: Some(100),
            ..TargetConfig::default()
        };
        let lines = config.validate().map(|p| p.describe()).unwrap_or_default();
        assert!(lines[0].contains("capacity 4705.9 req/s, queue 100"), "{lines:?}");
    }
}
