//! measure: what a run counts and reports — failure classes, latency histograms, per-thread
//! metrics, the windows rates are measured over, their merge into intervals, and the result.

pub mod aggregator;
pub mod breakdown;
pub mod failure;
pub mod histogram;
pub mod metrics;
pub mod report;
pub mod result;
pub mod window;
