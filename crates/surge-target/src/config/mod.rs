//! config: what the target is told to do. TargetConfig holds every knob of the reference target, as JSON or
//! command-line flags; `plan` validates it into the TargetPlan the server runs; `duration` parses the
//! durations people type; `error` names each mistake by its flag.
//!
//! TargetConfig: every knob of the reference target, as JSON or command-line flags.

pub mod duration;
pub mod error;
pub mod plan;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::duration::parse_duration;
use crate::config::error::{ConfigError, ConfigErrors};
use crate::config::plan::{LlmPlan, RateLimitPlan, ServicePlan, TargetPlan};
use crate::model::cpu::MAX_CPU_WORKERS;
use crate::model::service_time::ServiceTime;
use crate::model::stall::Stall;
use crate::model::usl::{Usl, MAX_COHERENCY};

/// MAX_LOCK_HOLD is the longest `--lock-hold` accepted.
pub const MAX_LOCK_HOLD: Duration = Duration::from_secs(1);

/// MAX_LLM_STEP is the longest `--llm-prefill` (a prompt token) and `--llm-decode` (a token)
/// accepted.
pub const MAX_LLM_STEP: Duration = Duration::from_secs(10);

/// MAX_LLM_SLOWDOWN is the largest `--llm-slowdown` accepted.
pub const MAX_LLM_SLOWDOWN: f64 = 100.0;

/// DEFAULT_BIND is where the target listens unless told otherwise.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";

/// TargetConfig is the reference target's configuration as the user wrote it: JSON keys are
/// the flags' names with `_` for `-` (`service_time` is `--service-time`); durations are
/// strings such as `10ms`. Only [`TargetConfig::validate`] turns it into something to serve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TargetConfig {
    /// bind is HOST:PORT to listen on (`--bind`); port 0 picks a free port.
    pub bind: String,
    /// threads is how many server threads, each with its own event loop (`--threads`).
    pub threads: i64,
    /// duration stops the server by itself after this long (`--duration`).
    pub duration: Option<String>,
    /// workers is the number of service slots (`--workers`); none means no service model.
    pub workers: Option<i64>,
    /// service_time is how long a request holds a slot (`--service-time`), e.g. `2ms`,
    /// `exp:2ms`, `uniform:1ms-3ms`, `lognormal:2ms,0.5`.
    pub service_time: Option<String>,
    /// queue is how many requests may wait for a slot (`--queue`); none means unbounded. With
    /// `thread_per_connection` it is how many connections may wait for a worker.
    pub queue: Option<i64>,
    /// contention is the Universal Scalability Law's σ (`--contention`), 0 to below 1.
    pub contention: Option<f64>,
    /// coherency is the Universal Scalability Law's κ (`--coherency`), 0 to 1.
    pub coherency: Option<f64>,
    /// thread_per_connection holds a worker per connection until it closes
    /// (`--thread-per-connection`).
    pub thread_per_connection: bool,
    /// service_cpu burns each request's service time as CPU on one of `workers` threads,
    /// measured by the thread's CPU clock, instead of sleeping it (`--service-cpu`).
    pub service_cpu: bool,
    /// rate_limit is the token bucket's rate in requests per second (`--rate-limit`).
    pub rate_limit: Option<f64>,
    /// burst is the token bucket's size (`--burst`); default one second's worth of tokens.
    pub burst: Option<i64>,
    /// stall_every is the period of whole-server pauses (`--stall-every`).
    pub stall_every: Option<String>,
    /// stall_for is the length of each whole-server pause (`--stall-for`).
    pub stall_for: Option<String>,
    /// error_rate is the share of modeled requests answered 500 (`--error-rate`), 0 to 1.
    pub error_rate: Option<f64>,
    /// close_after closes a connection after this many responses on it (`--close-after`).
    pub close_after: Option<i64>,
    /// keepalive_timeout closes a connection idle for this long (`--keepalive-timeout`).
    pub keepalive_timeout: Option<String>,
    /// max_connections refuses connections beyond this many open ones (`--max-connections`).
    pub max_connections: Option<i64>,
    /// seed makes service times and injected errors repeat from run to run (`--seed`).
    pub seed: Option<u64>,
    /// shards is the number of independently locked parts of the task store (`--shards`).
    pub shards: i64,
    /// lock_hold is how long each Task API operation holds its shard's lock (`--lock-hold`).
    pub lock_hold: Option<String>,
    /// llm_prefill is the inference model's time per prompt token before the first token
    /// (`--llm-prefill`).
    pub llm_prefill: String,
    /// llm_decode is one decode step with one sequence in service (`--llm-decode`).
    pub llm_decode: String,
    /// llm_batch is the most sequences in service at once (`--llm-batch`).
    pub llm_batch: i64,
    /// llm_slowdown is the share of a decode step each other sequence in service adds
    /// (`--llm-slowdown`).
    pub llm_slowdown: f64,
    /// llm_output_tokens is the tokens generated when a request gives no `max_tokens`
    /// (`--llm-output-tokens`).
    pub llm_output_tokens: i64,
}

impl Default for TargetConfig {
    fn default() -> Self {
        Self {
            bind: DEFAULT_BIND.to_string(),
            threads: 1,
            duration: None,
            workers: None,
            service_time: None,
            queue: None,
            contention: None,
            coherency: None,
            thread_per_connection: false,
            service_cpu: false,
            rate_limit: None,
            burst: None,
            stall_every: None,
            stall_for: None,
            error_rate: None,
            close_after: None,
            keepalive_timeout: None,
            max_connections: None,
            seed: None,
            shards: 32,
            lock_hold: None,
            llm_prefill: "200us".to_string(),
            llm_decode: "20ms".to_string(),
            llm_batch: 8,
            llm_slowdown: 0.0,
            llm_output_tokens: 32,
        }
    }
}

/// FIELDS lists every key with what its value must look like, for error messages.
pub const FIELDS: &[(&str, &str)] = &[
    ("bind", "HOST:PORT text such as \"127.0.0.1:8080\""),
    ("threads", "an integer"),
    ("duration", "a duration such as \"30s\""),
    ("workers", "an integer"),
    ("service_time", "text such as \"2ms\", \"exp:2ms\", \"uniform:1ms-3ms\", \"lognormal:2ms,0.5\""),
    ("queue", "an integer"),
    ("contention", "a number from 0 to below 1 (σ)"),
    ("coherency", "a number from 0 to 1 (κ)"),
    ("thread_per_connection", "true or false"),
    ("service_cpu", "true or false"),
    ("rate_limit", "a number (requests per second)"),
    ("burst", "an integer"),
    ("stall_every", "a duration such as \"10s\""),
    ("stall_for", "a duration such as \"500ms\""),
    ("error_rate", "a number from 0 to 1"),
    ("close_after", "an integer"),
    ("keepalive_timeout", "a duration such as \"5s\""),
    ("max_connections", "an integer"),
    ("seed", "a non-negative integer"),
    ("shards", "an integer"),
    ("lock_hold", "a duration such as \"1ms\""),
    ("llm_prefill", "a duration such as \"200us\""),
    ("llm_decode", "a duration such as \"20ms\""),
    ("llm_batch", "an integer"),
    ("llm_slowdown", "a number from 0 to 100"),
    ("llm_output_tokens", "an integer"),
];

/// SWITCHES are the keys that are flags without a value on a command line
/// (`--thread-per-connection`, `--service-cpu`).
pub const SWITCHES: &[&str] = &["thread_per_connection", "service_cpu"];

/// Limits: (key, lowest, highest) for the integer knobs.
const INT_LIMITS: &[(&str, i64, i64)] = &[
    ("threads", 1, 1024),
    ("workers", 1, 1_000_000),
    ("queue", 0, 100_000_000),
    ("burst", 1, 1_000_000_000),
    ("close_after", 1, i64::MAX),
    ("max_connections", 1, 100_000_000),
    ("shards", 1, 65_536),
    ("llm_batch", 1, 1_000_000),
    ("llm_output_tokens", 1, crate::server::openai::MAX_TOKENS as i64),
];

impl TargetConfig {
    /// from_json reads a configuration from a JSON object; every unknown key and every value
    /// of the wrong type is reported, each naming its flag.
    pub fn from_json(text: &str) -> Result<Self, ConfigErrors> {
        let map: Map<String, Value> = serde_json::from_str(text)
            .map_err(|e| ConfigErrors(vec![ConfigError::new("config", format!("not a JSON object: {e}"))]))?;
        let mut errors = Vec::new();
        for (key, value) in &map {
            let Some((_, expected)) = FIELDS.iter().find(|(name, _)| name == key) else {
                errors.push(ConfigError::new(key, "unknown setting"));
                continue;
            };
            let single = Value::Object(Map::from_iter([(key.clone(), value.clone())]));
            if serde_json::from_value::<TargetConfig>(single).is_err() {
                errors.push(ConfigError::new(key, format!("expected {expected}, got {value}")));
            }
        }
        if !errors.is_empty() {
            return Err(ConfigErrors(errors));
        }
        serde_json::from_value(Value::Object(map))
            .map_err(|e| ConfigErrors(vec![ConfigError::new("config", e.to_string())]))
    }

    /// validate checks every knob and their combinations, returning all mistakes at once
    /// (each naming its flag) or the plan the server runs.
    pub fn validate(&self) -> Result<TargetPlan, ConfigErrors> {
        let mut errors = Vec::new();
        let mut fail = |key: &str, message: String| errors.push(ConfigError::new(key, message));

        for &(key, low, high) in INT_LIMITS {
            if let Some(v) = self.int(key) {
                if v < low || v > high {
                    let range =
                        if high == i64::MAX { format!("at least {low}") } else { format!("from {low} to {high}") };
                    fail(key, format!("must be {range}, got {v}"));
                }
            }
        }
        let bind = parse_bind(&self.bind).map_err(|m| fail("bind", m)).ok();
        let duration = Self::duration("duration", self.duration.as_deref(), &mut fail);
        let service_time = self.service_time.as_deref().and_then(|text| {
            let parsed = ServiceTime::parse(text).map_err(|m| fail("service_time", m)).ok()?;
            if parsed.mean().is_zero() {
                fail("service_time", format!("`{text}` has a mean of 0; give it a length"));
                return None;
            }
            Some(parsed)
        });
        match (self.workers, &self.service_time) {
            (Some(_), None) => fail("service_time", "is required with --workers".into()),
            (None, Some(_)) => fail("service_time", "needs --workers (how many slots)".into()),
            _ => {}
        }
        if self.queue.is_some() && self.workers.is_none() {
            fail("queue", "needs --workers (the queue is for service slots)".into());
        }
        if let Some(sigma) = self.contention {
            if !(0.0..1.0).contains(&sigma) {
                fail("contention", format!("must be from 0 to below 1 (σ, the serialized share), got {sigma}"));
            }
        }
        if let Some(kappa) = self.coherency {
            if !(0.0..=MAX_COHERENCY).contains(&kappa) {
                fail(
                    "coherency",
                    format!("must be from 0 to {MAX_COHERENCY} (κ, the cost per pair in service), got {kappa}"),
                );
            }
        }
        for (key, set) in [
            ("contention", self.contention.is_some()),
            ("coherency", self.coherency.is_some()),
            ("thread_per_connection", self.thread_per_connection),
            ("service_cpu", self.service_cpu),
        ] {
            if set && self.workers.is_none() {
                fail(key, "needs --workers and --service-time (it shapes the service model)".into());
            }
        }
        if self.service_cpu {
            for (key, set) in [("contention", self.contention.is_some()), ("coherency", self.coherency.is_some())] {
                if set {
                    fail(key, "not with --service-cpu (the law slows simulated service; burned CPU slows by itself when threads share cores)".into());
                }
            }
            if let Some(workers) = self.workers.filter(|&w| w > MAX_CPU_WORKERS) {
                fail("workers", format!("with --service-cpu each worker is a thread: must be from 1 to {MAX_CPU_WORKERS}, got {workers}"));
            }
        }
        let lock_hold = Self::duration("lock_hold", self.lock_hold.as_deref(), &mut fail);
        if let Some(hold) = lock_hold.filter(|&h| h > MAX_LOCK_HOLD) {
            fail("lock_hold", format!("must be at most {MAX_LOCK_HOLD:?}, got {hold:?}"));
        }
        let keepalive_timeout = Self::duration("keepalive_timeout", self.keepalive_timeout.as_deref(), &mut fail);
        if let Some(rate) = self.rate_limit {
            if !(rate.is_finite() && rate > 0.0 && rate <= 1e9) {
                fail("rate_limit", format!("must be above 0 and at most 1e9 requests per second, got {rate}"));
            }
        } else if self.burst.is_some() {
            fail("burst", "needs --rate-limit".into());
        }
        if let Some(p) = self.error_rate {
            if !(0.0..=1.0).contains(&p) {
                fail("error_rate", format!("must be from 0 to 1 (a share, 0.01 is 1%), got {p}"));
            }
        }
        let stall_every = Self::duration("stall_every", self.stall_every.as_deref(), &mut fail);
        let stall_for = Self::duration("stall_for", self.stall_for.as_deref(), &mut fail);
        match (&self.stall_every, &self.stall_for) {
            (Some(_), None) => fail("stall_for", "is required with --stall-every".into()),
            (None, Some(_)) => fail("stall_every", "is required with --stall-for".into()),
            _ => {}
        }
        if let (Some(every), Some(length)) = (stall_every, stall_for) {
            if length >= every {
                fail("stall_for", format!("must be shorter than --stall-every ({every:?}), got {length:?}"));
            }
        }
        let llm_prefill = Self::llm_step("llm_prefill", &self.llm_prefill, "a prompt token", &mut fail);
        let llm_decode = Self::llm_step("llm_decode", &self.llm_decode, "a token", &mut fail);
        let slowdown = self.llm_slowdown;
        if !(0.0..=MAX_LLM_SLOWDOWN).contains(&slowdown) {
            fail(
                "llm_slowdown",
                format!("must be from 0 to {MAX_LLM_SLOWDOWN} (the share of a decode step each other sequence in service adds), got {slowdown}"),
            );
        }
        if !errors.is_empty() {
            return Err(ConfigErrors(errors));
        }
        let as_usize = |v: i64| usize::try_from(v).unwrap_or(usize::MAX);
        let (Some(bind), Ok(threads), Ok(shards), Some(prefill), Some(decode)) =
            (bind, usize::try_from(self.threads), usize::try_from(self.shards), llm_prefill, llm_decode)
        else {
            return Err(ConfigErrors(vec![ConfigError::new("config", "inconsistent settings")]));
        };
        let service = match (self.workers, service_time) {
            (Some(workers), Some(service_time)) => Some(ServicePlan {
                workers: as_usize(workers),
                service_time,
                queue: self.queue.map(as_usize),
                usl: (self.contention.is_some() || self.coherency.is_some()).then(|| Usl {
                    contention: self.contention.unwrap_or(0.0),
                    coherency: self.coherency.unwrap_or(0.0),
                }),
                thread_per_connection: self.thread_per_connection,
                service_cpu: self.service_cpu,
                cores: std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            }),
            _ => None,
        };
        let rate_limit = self.rate_limit.map(|rate| RateLimitPlan {
            rate,
            burst: self
                .burst
                .map_or_else(|| rate.ceil().clamp(1.0, 1e9) as u32, |b| u32::try_from(b).unwrap_or(u32::MAX)),
        });
        let stall = match (stall_every, stall_for) {
            (Some(every), Some(length)) => Some(Stall {
                every_ns: crate::model::service_time::nanos_of(every),
                for_ns: crate::model::service_time::nanos_of(length),
            }),
            _ => None,
        };
        Ok(TargetPlan {
            bind,
            threads,
            duration,
            service,
            rate_limit,
            stall,
            error_rate: self.error_rate.unwrap_or(0.0),
            close_after: self.close_after.map(|n| u64::try_from(n).unwrap_or(u64::MAX)),
            keepalive_timeout,
            max_connections: self.max_connections.map(as_usize),
            seed: self.seed,
            shards,
            lock_hold,
            llm: LlmPlan {
                prefill,
                decode,
                batch: as_usize(self.llm_batch),
                slowdown,
                output_tokens: u32::try_from(self.llm_output_tokens).unwrap_or(u32::MAX),
            },
        })
    }

    fn int(&self, key: &str) -> Option<i64> {
        match key {
            "threads" => Some(self.threads),
            "workers" => self.workers,
            "queue" => self.queue,
            "burst" => self.burst,
            "close_after" => self.close_after,
            "max_connections" => self.max_connections,
            "shards" => Some(self.shards),
            "llm_batch" => Some(self.llm_batch),
            "llm_output_tokens" => Some(self.llm_output_tokens),
            _ => None,
        }
    }

    /// llm_step reads a per-token time of the inference model: 0 (instant) up to
    /// [`MAX_LLM_STEP`].
    fn llm_step(key: &str, text: &str, per: &str, fail: &mut impl FnMut(&str, String)) -> Option<Duration> {
        let parsed = parse_duration(text).map_err(|m| fail(key, m)).ok()?;
        if parsed > MAX_LLM_STEP {
            fail(key, format!("must be at most {MAX_LLM_STEP:?} {per}, got {parsed:?}"));
            return None;
        }
        Some(parsed)
    }

    fn duration(key: &str, text: Option<&str>, fail: &mut impl FnMut(&str, String)) -> Option<Duration> {
        let parsed = parse_duration(text?).map_err(|m| fail(key, m)).ok()?;
        if parsed.is_zero() {
            fail(key, "must be longer than 0".into());
            return None;
        }
        Some(parsed)
    }
}

/// parse_bind reads HOST:PORT where HOST is an IP address (`[::1]` for IPv6) or `localhost`
/// (taken as 127.0.0.1 without asking a resolver).
fn parse_bind(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let bad = || format!("`{text}` is not HOST:PORT with an IP address or localhost (e.g. 127.0.0.1:8080)");
    let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    let ip = if host.eq_ignore_ascii_case("localhost") {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        host.parse().map_err(|_| bad())?
    };
    Ok(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(json: &str) -> Vec<String> {
        match TargetConfig::from_json(json).and_then(|c| c.validate()) {
            Ok(_) => vec![],
            Err(e) => e.0.iter().map(std::string::ToString::to_string).collect(),
        }
    }

    #[test]
    fn fields_table_matches_struct() {
        let value = serde_json::to_value(TargetConfig::default()).unwrap_or_default();
        let mut keys: Vec<&str> = value.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
        let mut listed: Vec<&str> = FIELDS.iter().map(|(k, _)| *k).collect();
        keys.sort_unstable();
        listed.sort_unstable();
        assert_eq!(keys, listed);
    }

    #[test]
    fn valid_configs() {
        let cases = [
            "{}",
            r#"{"bind": "127.0.0.1:0", "workers": 4, "service_time": "10ms", "queue": 8}"#,
            r#"{"bind": "[::1]:0", "workers": 3, "service_time": "exp:12ms"}"#,
            r#"{"bind": "localhost:9000", "rate_limit": 100, "burst": 10, "seed": 1}"#,
            r#"{"stall_every": "10s", "stall_for": "1s", "error_rate": 0.01, "close_after": 100}"#,
            r#"{"max_connections": 10, "shards": 1, "threads": 2, "duration": "2s", "workers": null}"#,
            r#"{"workers": 100, "service_time": "20ms", "contention": 0, "coherency": 1}"#,
            r#"{"workers": 8, "service_time": "1ms", "thread_per_connection": true, "queue": 0}"#,
            r#"{"keepalive_timeout": "5s", "thread_per_connection": false}"#,
            r#"{"workers": 1, "service_time": "exp:4ms", "service_cpu": true, "queue": 10}"#,
            r#"{"workers": 8, "service_time": "626us", "service_cpu": true, "thread_per_connection": true}"#,
            r#"{"shards": 1, "lock_hold": "1ms"}"#,
            r#"{"llm_prefill": "0s", "llm_decode": "0s", "llm_batch": 1, "llm_slowdown": 0.5}"#,
            r#"{"llm_decode": "10s", "llm_batch": 1000000, "llm_output_tokens": 4096, "llm_slowdown": 100}"#,
        ];
        for json in cases {
            assert_eq!(errors_of(json), Vec::<String>::new(), "{json}");
        }
    }

    #[test]
    fn each_mistake_names_its_flag() {
        let cases: &[(&str, &str)] = &[
            (r"[1]", "--config: not a JSON object"),
            (r#"{"wrokers": 4}"#, "--wrokers: unknown setting"),
            (r#"{"workers": "four"}"#, "--workers: expected an integer, got \"four\""),
            (r#"{"seed": -1}"#, "--seed: expected a non-negative integer"),
            (r#"{"bind": "8080"}"#, "--bind: `8080` is not HOST:PORT"),
            (r#"{"bind": "example.com:80"}"#, "--bind: `example.com:80` is not HOST:PORT"),
            (r#"{"threads": 0}"#, "--threads: must be from 1 to 1024, got 0"),
            (r#"{"workers": 0, "service_time": "1ms"}"#, "--workers: must be from 1"),
            (r#"{"workers": 2}"#, "--service-time: is required with --workers"),
            (r#"{"service_time": "2ms"}"#, "--service-time: needs --workers"),
            (r#"{"workers": 2, "service_time": "2"}"#, "--service-time: `2` has no unit"),
            (r#"{"workers": 2, "service_time": "0ms"}"#, "--service-time: `0ms` has a mean of 0"),
            (r#"{"queue": 3}"#, "--queue: needs --workers"),
            (r#"{"workers": 1, "service_time": "1ms", "queue": -1}"#, "--queue: must be from 0"),
            (r#"{"rate_limit": 0}"#, "--rate-limit: must be above 0"),
            (r#"{"burst": 5}"#, "--burst: needs --rate-limit"),
            (r#"{"rate_limit": 5, "burst": 0}"#, "--burst: must be from 1"),
            (r#"{"error_rate": 1.5}"#, "--error-rate: must be from 0 to 1"),
            (r#"{"stall_every": "1s"}"#, "--stall-for: is required with --stall-every"),
            (r#"{"stall_for": "1s"}"#, "--stall-every: is required with --stall-for"),
            (r#"{"stall_every": "1s", "stall_for": "2s"}"#, "--stall-for: must be shorter than --stall-every"),
            (r#"{"stall_every": "0s", "stall_for": "0s"}"#, "--stall-every: must be longer than 0"),
            (r#"{"close_after": 0}"#, "--close-after: must be at least 1"),
            (r#"{"max_connections": 0}"#, "--max-connections: must be from 1"),
            (r#"{"shards": 0}"#, "--shards: must be from 1 to 65536"),
            (r#"{"duration": "soon"}"#, "--duration: `soon` is not a duration"),
            (r#"{"workers": 9, "service_time": "1ms", "contention": 1}"#, "--contention: must be from 0 to below 1"),
            (r#"{"workers": 9, "service_time": "1ms", "contention": -0.1}"#, "--contention: must be from 0 to below 1"),
            (r#"{"workers": 9, "service_time": "1ms", "coherency": -1e-9}"#, "--coherency: must be from 0 to 1"),
            (r#"{"workers": 9, "service_time": "1ms", "coherency": 1.5}"#, "--coherency: must be from 0 to 1"),
            (r#"{"coherency": 0.01}"#, "--coherency: needs --workers"),
            (r#"{"contention": 0.01}"#, "--contention: needs --workers"),
            (r#"{"thread_per_connection": true}"#, "--thread-per-connection: needs --workers"),
            (r#"{"thread_per_connection": "yes"}"#, "--thread-per-connection: expected true or false"),
            (r#"{"contention": "high"}"#, "--contention: expected a number from 0 to below 1"),
            (r#"{"keepalive_timeout": "0s"}"#, "--keepalive-timeout: must be longer than 0"),
            (r#"{"keepalive_timeout": "5"}"#, "--keepalive-timeout: `5` has no unit"),
            (r#"{"service_cpu": true}"#, "--service-cpu: needs --workers"),
            (r#"{"service_cpu": 1}"#, "--service-cpu: expected true or false"),
            (
                r#"{"workers": 2000, "service_time": "1ms", "service_cpu": true}"#,
                "--workers: with --service-cpu each worker is a thread: must be from 1 to 1024, got 2000",
            ),
            (
                r#"{"workers": 2, "service_time": "1ms", "service_cpu": true, "contention": 0.1}"#,
                "--contention: not with --service-cpu",
            ),
            (
                r#"{"workers": 2, "service_time": "1ms", "service_cpu": true, "coherency": 0.1}"#,
                "--coherency: not with --service-cpu",
            ),
            (r#"{"lock_hold": "0s"}"#, "--lock-hold: must be longer than 0"),
            (r#"{"lock_hold": "1"}"#, "--lock-hold: `1` has no unit"),
            (r#"{"lock_hold": "2s"}"#, "--lock-hold: must be at most 1s, got 2s"),
            (r#"{"lock_hold": 5}"#, "--lock-hold: expected a duration"),
            (r#"{"llm_prefill": "1"}"#, "--llm-prefill: `1` has no unit"),
            (r#"{"llm_prefill": "11s"}"#, "--llm-prefill: must be at most 10s a prompt token, got 11s"),
            (r#"{"llm_decode": "fast"}"#, "--llm-decode: `fast` is not a duration"),
            (r#"{"llm_decode": "1m"}"#, "--llm-decode: must be at most 10s a token, got 60s"),
            (r#"{"llm_decode": 20}"#, "--llm-decode: expected a duration"),
            (r#"{"llm_batch": 0}"#, "--llm-batch: must be from 1 to 1000000, got 0"),
            (r#"{"llm_batch": 2.5}"#, "--llm-batch: expected an integer"),
            (r#"{"llm_slowdown": -0.1}"#, "--llm-slowdown: must be from 0 to 100"),
            (r#"{"llm_slowdown": 101}"#, "--llm-slowdown: must be from 0 to 100"),
            (r#"{"llm_output_tokens": 0}"#, "--llm-output-tokens: must be from 1 to 4096, got 0"),
            (r#"{"llm_output_tokens": 4097}"#, "--llm-output-tokens: must be from 1 to 4096, got 4097"),
        ];
        for (json, want) in cases {
            let got = errors_of(json);
            assert!(got.iter().any(|e| e.starts_with(want)), "{json}: {got:?}");
        }
    }

    #[test]
    fn reports_all_mistakes_at_once() {
        let got = errors_of(r#"{"threads": 0, "shards": 0, "error_rate": 2, "bind": "x"}"#);
        assert_eq!(got.len(), 4, "{got:?}");
    }

    #[test]
    fn burst_defaults_to_one_second() {
        let cases: &[(f64, u32)] = &[(100.0, 100), (0.5, 1), (2.2, 3)];
        for &(rate, burst) in cases {
            let config = TargetConfig { rate_limit: Some(rate), ..TargetConfig::default() };
            let plan = config.validate().map_err(|e| e.to_string());
            assert_eq!(plan.map(|p| p.rate_limit.map(|r| r.burst)), Ok(Some(burst)), "rate {rate}");
        }
    }
}
