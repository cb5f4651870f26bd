//! measure: what a run counts and reports — failure classes, latency histograms, per-thread
//! metrics, the windows rates are measured over, their merge into intervals, and the result.

pub(crate) mod aggregator;
pub(crate) mod breakdown;
pub(crate) mod failure;
pub(crate) mod histogram;
pub(crate) mod metrics;
pub(crate) mod report;
pub(crate) mod result;
pub(crate) mod window;
