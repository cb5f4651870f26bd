//! The engine's end-to-end tests, one module per concern, in one test binary: one link of the
//! engine instead of one per file. Apart: `descriptor_table` (it reads a process-wide limit) and
//! `hostile` (its servers send as fast as a core allows, which would shake the pacing tests).
#![allow(clippy::needless_pass_by_value, reason = "the tests' plan helpers take their json!() pieces by value")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;
#[path = "../../../surge-target/tests/common/mod.rs"]
mod target;

mod counting;
mod http2;
mod merge;
mod pacing;
mod run;
mod scenarios;
