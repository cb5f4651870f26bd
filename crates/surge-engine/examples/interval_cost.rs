//! interval_cost: times the once-per-interval bookkeeping (clone, reset, merge, summarize,
//! serialize) that runs beside the event loops, to check it cannot stall sends.
use std::time::Instant;

use surge_engine::testing::Metrics;

fn main() {
    let mut m = Metrics::new();
    for i in 0..20_000u64 {
        m.record_sent(70, i % 300_000, true);
        m.record_response(200, 100_000 + (i * 7919) % 2_000_000, 90_000 + i % 50_000);
    }
    let rounds = 50;
    let t = Instant::now();
    for _ in 0..rounds {
        let copy = m.clone();
        std::hint::black_box(&copy);
    }
    let clone_us = t.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    let mut total = Metrics::new();
    let t = Instant::now();
    for _ in 0..rounds {
        total.add(&m);
    }
    let add_us = t.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    let t = Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(m.latency_summaries(&[]));
    }
    let summary_us = t.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    let t = Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(m.latency.to_base64());
    }
    let b64_us = t.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    let mut r = m.clone();
    let t = Instant::now();
    for _ in 0..rounds {
        r.reset();
    }
    let reset_us = t.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    println!("per interval: clone {clone_us:.0} µs, reset {reset_us:.0} µs, add {add_us:.0} µs, 4 summaries {summary_us:.0} µs, base64 {b64_us:.0} µs");
}
