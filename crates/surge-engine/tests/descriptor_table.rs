//! The descriptor table is grown for the plan's connections before the run's threads start
//! (system::reserve_descriptor_table): growing it while they run stalls the worker.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../surge-target/tests/common/mod.rs"]
mod target;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde_json::json;
use surge_engine::testing::descriptor_table_size;
use surge_engine::{run, NoObserver, Plan};

#[test]
fn run_sizes_the_descriptor_table_for_the_plans_connections_up_front() {
    let server = target::Server::start("{}");
    let plan = json!({"target": {"url": format!("http://{}/health", server.addr)},
                      "scenarios": [{"name": "default",
                                     "executor": {"type": "constant-arrival-rate", "rate": 50, "duration_s": 0.2,
                                                  "max_vus": 3000, "pre_allocated_vus": 2},
                                     "flow": {"sequences": [{"steps": [{"request": {"method": "GET"}}]}]}}],
                      "threads": 1});
    let plan = Plan::from_json(&plan.to_string()).unwrap_or_else(|e| panic!("{e:?}"));
    let before = descriptor_table_size().unwrap_or(0);
    let result = run(&plan, &mut NoObserver, Arc::new(AtomicBool::new(false))).unwrap();
    assert!(result.requests.sent > 0);
    assert!(before < 3000, "the table was already large: {before}");
    let after = descriptor_table_size().unwrap_or(0);
    assert!(after > 3000, "FDSize {after} after a plan of 3000 connections");
}
