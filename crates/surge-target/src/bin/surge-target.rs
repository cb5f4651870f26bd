//! surge-target: the reference target as a standalone binary, with the same flags as
//! `surge target` (for Rust integration tests and benchmarks).
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde_json::{Map, Value};
use surge_target::config::{FIELDS, SWITCHES};
use surge_target::{serve_plan, TargetConfig};

/// USAGE is the `--help` text.
const USAGE: &str = "usage: surge-target [--bind HOST:PORT] [--threads N] [--duration D]
                    [--workers N --service-time D|exp:D|uniform:D-D|lognormal:MEDIAN,SIGMA]
                    [--queue Q] [--contention SIGMA] [--coherency KAPPA]
                    [--thread-per-connection] [--service-cpu] [--rate-limit R [--burst B]]
                    [--stall-every D --stall-for D] [--error-rate P] [--close-after N]
                    [--keepalive-timeout D] [--max-connections N] [--seed S] [--shards N]
                    [--lock-hold D] [--llm-prefill D] [--llm-decode D] [--llm-batch N]
                    [--llm-slowdown F] [--llm-output-tokens N]
Serves /health, /delay/{ms}, the Task API (/tasks), /stats and an OpenAI-compatible
inference model (POST /v1/chat/completions, /v1/completions) on 127.0.0.1:8080 until
stopped or --duration elapses. See docs/target.md.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let plan = match flags_to_json(&args)
        .and_then(|json| TargetConfig::from_json(&json).map_err(|e| e.to_string()))
        .and_then(|config| config.validate().map_err(|e| e.to_string()))
    {
        Ok(plan) => plan,
        Err(message) => {
            for line in message.lines() {
                eprintln!("surge-target: error: {line}");
            }
            return ExitCode::from(2);
        }
    };
    for warning in plan.warnings() {
        eprintln!("surge-target: warning: {warning}");
    }
    let describe = plan.describe();
    let on_ready = |addr| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "surge target listening on http://{addr}");
        for line in &describe {
            let _ = writeln!(out, "  {line}");
        }
        let _ = out.flush();
    };
    match serve_plan(plan, on_ready, Arc::new(AtomicBool::new(false))) {
        Ok(summary) => {
            println!("{}", serde_json::to_string(&summary).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("surge-target: error: {e}");
            ExitCode::from(1)
        }
    }
}

/// flags_to_json turns `--flag value` / `--flag=value` pairs into the JSON configuration; a
/// value that reads as a JSON number (or `true`/`false`) is passed as one, anything else as
/// text, so the configuration's own checks name the flag of a wrong value. A switch
/// (`--thread-per-connection`) alone means true.
fn flags_to_json(args: &[String]) -> Result<String, String> {
    let mut map = Map::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let Some(flag) = arg.strip_prefix("--") else {
            return Err(format!("unexpected argument `{arg}` (flags look like --workers 4)"));
        };
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, value.to_string()),
            None if SWITCHES.contains(&flag.replace('-', "_").as_str()) => (flag, "true".to_string()),
            None => {
                let value = iter.next().ok_or_else(|| format!("--{flag}: needs a value"))?;
                (flag, value.clone())
            }
        };
        let key = name.replace('-', "_");
        if !FIELDS.iter().any(|(k, _)| *k == key) {
            return Err(format!("--{name}: unknown flag (see --help)"));
        }
        let value = match serde_json::from_str::<Value>(&value) {
            Ok(value @ (Value::Number(_) | Value::Bool(_))) => value,
            _ => Value::String(value),
        };
        map.insert(key, value);
    }
    Ok(Value::Object(map).to_string())
}
