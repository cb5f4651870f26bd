//! TargetPlan: a validated configuration, the only thing the server runs.
use std::net::SocketAddr;
use std::time::Duration;

use crate::model::service_time::ServiceTime;
use crate::model::stall::Stall;
use crate::model::usl::Usl;

/// ServicePlan is the service model: `workers` slots, each request holding one for a draw of
/// `service_time` (times the law's slowdown with `usl`), at most `queue` waiting (unbounded
/// when `None`); with `thread_per_connection`, each worker is held by one connection for as
/// long as it stays open and `queue` bounds the connections waiting for one.
#[derive(Debug, Clone, PartialEq)]
pub struct ServicePlan {
    /// workers is the number of service slots (at least 1).
    pub workers: usize,
    /// service_time is how long a request holds a slot.
    pub service_time: ServiceTime,
    /// queue is the most requests (connections, with `thread_per_connection`) that may wait
    /// for a slot; `None` is unbounded.
    pub queue: Option<usize>,
    /// usl makes service time grow with the number of requests in service.
    pub usl: Option<Usl>,
    /// thread_per_connection gives each connection a worker of its own until it closes.
    pub thread_per_connection: bool,
    /// service_cpu makes each worker a thread that burns the service time as CPU (by its own
    /// CPU clock) instead of sleeping it.
    pub service_cpu: bool,
    /// cores is how many CPUs the machine offers this process (for the CPU capacity).
    pub cores: usize,
}

impl ServicePlan {
    /// capacity is the most requests per second the slots can serve: workers / mean service
    /// time; with the law, X(n) at its best n from 1 to workers; with `service_cpu`, the
    /// threads that can burn at once, min(workers, cores), / mean service time (less whatever
    /// other processes take of those cores).
    pub fn capacity(&self) -> f64 {
        let mean_s = self.service_time.mean().as_secs_f64();
        match self.usl {
            Some(usl) => usl.throughput(usl.best_concurrency(self.workers), mean_s),
            None if self.service_cpu => self.workers.min(self.cores.max(1)) as f64 / mean_s,
            None => self.workers as f64 / mean_s,
        }
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

/// LlmPlan is the inference model of `POST /v1/chat/completions` and `POST /v1/completions`:
/// `batch` sequences in service at once (more wait in arrival order), each prefilling its
/// prompt at `prefill` a token, then writing a token every decode step, `decode × (1 +
/// slowdown × (n − 1))` with n sequences in service when the step starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LlmPlan {
    /// prefill is the time per prompt token before the first token.
    pub prefill: Duration,
    /// decode is one decode step's time with one sequence in service.
    pub decode: Duration,
    /// batch is the most sequences in service at once (at least 1).
    pub batch: usize,
    /// slowdown is the share of a decode step each other sequence in service adds (0 or more).
    pub slowdown: f64,
    /// output_tokens is the tokens generated when a request gives no `max_tokens`.
    pub output_tokens: u32,
}

impl LlmPlan {
    /// tpot is the time per output token with `n` sequences in service: decode × (1 + F(n−1)).
    pub fn tpot(&self, n: usize) -> Duration {
        self.decode.mul_f64(1.0 + self.slowdown * n.saturating_sub(1) as f64)
    }

    /// tokens_per_second is the output tokens the batch writes per second with `n` in
    /// service: n / TPOT(n) (unbounded for a decode of 0).
    pub fn tokens_per_second(&self, n: usize) -> f64 {
        n as f64 / self.tpot(n).as_secs_f64()
    }
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
    /// keepalive_timeout closes a connection that sends nothing for this long.
    pub keepalive_timeout: Option<Duration>,
    /// max_connections is the most connections open at once.
    pub max_connections: Option<usize>,
    /// seed fixes the random draws; `None` draws differently each run.
    pub seed: Option<u64>,
    /// shards is the number of parts of the task store (at least 1).
    pub shards: usize,
    /// lock_hold is how long each Task API operation holds its shard's lock; `None` is no
    /// modeled hold (the lock is held for the nanoseconds the map operation takes).
    pub lock_hold: Option<Duration>,
    /// llm is the inference model of the OpenAI-compatible routes.
    pub llm: LlmPlan,
}

impl TargetPlan {
    /// store_capacity is the most Task API operations per second the store's locks complete
    /// with `lock_hold`: shards / hold when ids spread evenly over the shards, 1 / hold with
    /// one shard; `None` without a hold.
    pub fn store_capacity(&self) -> Option<f64> {
        self.lock_hold.map(|hold| self.shards as f64 / hold.as_secs_f64())
    }

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
                let waiting = if s.thread_per_connection { "connections" } else { "requests" };
                let queue =
                    s.queue.map_or_else(|| format!("unbounded queue of {waiting}"), |q| format!("queue {q} {waiting}"));
                let capacity = if s.usl.is_some() { "peak" } else { "capacity" };
                out.push(format!(
                    "service model: {} workers × {} (mean {:?}) = {capacity} {:.1} req/s, {queue}",
                    s.workers,
                    s.service_time,
                    s.service_time.mean(),
                    s.capacity()
                ));
                if let Some(usl) = s.usl {
                    let peak = usl.peak_concurrency().map_or_else(
                        || "no peak (κ = 0): throughput levels off".to_string(),
                        |n| format!("peak at N* = {n:.1} in service"),
                    );
                    out.push(format!(
                        "scalability law: σ = {}, κ = {}: service time × (1 + σ(n−1) + κn(n−1)) with n in service; {peak}, {:.1} req/s at n = {}",
                        usl.contention,
                        usl.coherency,
                        s.capacity(),
                        usl.best_concurrency(s.workers)
                    ));
                }
                if s.service_cpu {
                    let bound = if s.workers == 1 {
                        "1 thread (one event loop)".to_string()
                    } else {
                        format!("{} threads", s.workers)
                    };
                    out.push(format!(
                        "service CPU: each request burns its service time as CPU (the thread's own CPU clock) on one of {bound}; capacity min({} threads, {} cores) / {:?} = {:.1} req/s while no other process needs those cores",
                        s.workers,
                        s.cores,
                        s.service_time.mean(),
                        s.capacity()
                    ));
                }
                if s.thread_per_connection {
                    out.push(format!(
                        "thread per connection: each of the {} workers is held by one connection until it closes; more connections wait unanswered",
                        s.workers
                    ));
                }
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
        if let Some(idle) = self.keepalive_timeout {
            out.push(format!("keep-alive timeout: a connection idle for {idle:?} is closed"));
        }
        if let Some(n) = self.max_connections {
            out.push(format!("max connections: {n}"));
        }
        if let (Some(hold), Some(capacity)) = (self.lock_hold, self.store_capacity()) {
            let (locks, spread) = if self.shards == 1 {
                ("the one lock".to_string(), "")
            } else {
                (format!("its shard's lock (one of {})", self.shards), ", ids spread evenly")
            };
            out.push(format!(
                "lock hold: every Task API operation holds {locks} for {hold:?} (a listing {:?} per shard): the store completes at most {capacity:.1} req/s ({} / {hold:?}{spread})",
                hold / self.shards as u32,
                self.shards,
            ));
        }
        let llm = &self.llm;
        let slowdown = if llm.slowdown > 0.0 { format!(" × (1 + {}(n−1))", llm.slowdown) } else { String::new() };
        out.push(format!(
            "inference (/v1/chat/completions, /v1/completions): batch {}, prefill {:?} a prompt word, decode {:?}{slowdown} a token: TPOT {:?} and {:.0} tokens/s with {} in service; {} tokens unless max_tokens says",
            llm.batch,
            llm.prefill,
            llm.decode,
            llm.tpot(llm.batch),
            llm.tokens_per_second(llm.batch),
            llm.batch,
            llm.output_tokens,
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::TargetConfig;

    #[test]
    fn warns_only_off_loopback() {
        let cases: &[(&str, bool)] = &[
            ("127.0.0.1:0", false),
            ("127.8.9.10:80", false),
            ("[::1]:0", false),
            ("0.0.0.0:8080", true),
            ("[::]:0", true),
            ("10.1.2.3:80", true),
        ];
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
        assert!(lines[0].contains("capacity 4705.9 req/s, queue 100 requests"), "{lines:?}");
    }

    #[test]
    fn describes_the_cpu_bound_and_the_lock() {
        let config = TargetConfig {
            workers: Some(1),
            service_time: Some("4ms".into()),
            service_cpu: true,
            shards: 1,
            lock_hold: Some("1ms".into()),
            ..TargetConfig::default()
        };
        let Ok(plan) = config.validate() else { panic!("valid config") };
        let lines = plan.describe();
        assert!(lines[0].contains("= capacity 250.0 req/s"), "{lines:?}");
        assert!(lines[1].starts_with("service CPU: each request burns its service time as CPU"), "{lines:?}");
        assert!(lines[1].contains("one of 1 thread (one event loop); capacity min(1 threads, "), "{lines:?}");
        let lock = "lock hold: every Task API operation holds the one lock for 1ms";
        assert!(lines.iter().any(|l| l.starts_with(lock) && l.contains("at most 1000.0 req/s (1 / 1ms)")), "{lines:?}");
        // Eight threads can burn on at most as many cores as there are.
        let config = TargetConfig {
            workers: Some(8),
            service_time: Some("2ms".into()),
            service_cpu: true,
            ..TargetConfig::default()
        };
        let Ok(plan) = config.validate() else { panic!("valid config") };
        let Some(service) = &plan.service else { panic!("service model") };
        assert_eq!(service.capacity(), service.workers.min(service.cores) as f64 / 0.002);
        assert_eq!(plan.store_capacity(), None);
    }

    #[test]
    fn describes_the_inference_model() {
        let lines = TargetConfig::default().validate().map(|p| p.describe()).unwrap_or_default();
        let want = "inference (/v1/chat/completions, /v1/completions): batch 8, prefill 200µs a prompt word, decode 20ms a token: TPOT 20ms and 400 tokens/s with 8 in service; 32 tokens unless max_tokens says";
        assert_eq!(lines.last().map(String::as_str), Some(want), "{lines:?}");
        let config = TargetConfig { llm_slowdown: 0.1, llm_batch: 4, ..TargetConfig::default() };
        let lines = config.validate().map(|p| p.describe()).unwrap_or_default();
        // TPOT(4) = 20 ms × (1 + 0.1 × 3) = 26 ms: 4 / 0.026 = 153.8 tokens/s.
        let want = "decode 20ms × (1 + 0.1(n−1)) a token: TPOT 26ms and 154 tokens/s with 4 in service";
        assert!(lines.last().is_some_and(|l| l.contains(want)), "{lines:?}");
    }

    #[test]
    fn describes_the_law_and_threads() {
        let config = TargetConfig {
            workers: Some(100),
            service_time: Some("20ms".into()),
            contention: Some(0.1),
            coherency: Some(0.9 / 64.0),
            thread_per_connection: true,
            keepalive_timeout: Some("5s".into()),
            ..TargetConfig::default()
        };
        let lines = config.validate().map(|p| p.describe()).unwrap_or_default();
        // X(8) = 8 / (20 ms × 2.4875) = 160.8 req/s.
        assert!(lines[0].contains("peak 160.8 req/s, unbounded queue of connections"), "{lines:?}");
        assert!(lines[1].contains("peak at N* = 8.0 in service, 160.8 req/s at n = 8"), "{lines:?}");
        assert!(lines[2].starts_with("thread per connection: each of the 100 workers"), "{lines:?}");
        assert!(lines.iter().any(|l| l == "keep-alive timeout: a connection idle for 5s is closed"), "{lines:?}");
    }
}
