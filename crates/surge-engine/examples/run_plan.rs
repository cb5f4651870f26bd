//! run_plan: runs a plan given as JSON on stdin and prints the result JSON (engine smoke tool).
use std::io::Read;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn main() {
    let mut json = String::new();
    if std::io::stdin().read_to_string(&mut json).is_err() {
        eprintln!("cannot read stdin");
        std::process::exit(2);
    }
    let plan = match surge_engine::Plan::from_json(&json) {
        Ok(plan) => plan,
        Err(errors) => {
            for e in errors {
                eprintln!("{e}");
            }
            std::process::exit(2);
        }
    };
    match surge_engine::run(&plan, &mut surge_engine::NoObserver, Arc::new(AtomicBool::new(false))) {
        Ok(result) => {
            println!("{}", serde_json::to_string_pretty(&result).unwrap_or_default());
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(3);
        }
    }
}
