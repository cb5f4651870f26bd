//! The reference target's end-to-end tests, one module per concern, in one test binary: one
//! link of the target instead of one per file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod api;
mod bin;
mod cpu_and_locks;
mod knobs;
mod llm;
mod models;
