//! The inference model: an LLM server's batch, the time of its prefill and decode steps, and
//! the target's tokenizer.
//!
//! A request waits, first come first served across every server thread, for one of
//! `--llm-batch` places in the batch and holds it for its whole generation: its prompt is
//! prefilled at `--llm-prefill` a prompt token, its first token is written, then one more token
//! every decode step of `--llm-decode × (1 + F(n−1))`, with F the `--llm-slowdown` and n the
//! sequences in service when the step starts (itself included, those still prefilling too).
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::plan::LlmPlan;
use crate::model::service_time::nanos_of;
use crate::model::worker_gate::take_in_order;

/// prompt_tokens is the target's tokenizer: the whitespace-separated words of every text, at
/// least 1 (a prompt of nothing still costs a step, as a real server's special tokens do).
pub fn prompt_tokens<'a>(texts: impl IntoIterator<Item = &'a str>) -> u32 {
    let words: usize = texts.into_iter().map(|t| t.split_whitespace().count()).sum();
    u32::try_from(words).unwrap_or(u32::MAX).max(1)
}

/// step_ns is one decode step with `in_service` sequences in the batch: decode × (1 + F(n−1)).
pub fn step_ns(decode_ns: u64, slowdown: f64, in_service: usize) -> u64 {
    let factor = 1.0 + slowdown * in_service.saturating_sub(1) as f64;
    (decode_ns as f64 * factor).round() as u64
}

/// LlmModel is the batch every server thread shares, and the model's step times.
#[derive(Debug)]
pub struct LlmModel {
    places: Arc<Semaphore>,
    batch: usize,
    waiting: AtomicUsize,
    next_id: AtomicU64,
    prefill_ns: u64,
    decode_ns: u64,
    slowdown: f64,
}

/// Sequence is a request's place in the batch; dropping it (the last token written, or the
/// client gone) hands the place to the request that has waited longest.
#[derive(Debug)]
pub struct Sequence(#[allow(dead_code, reason = "held for its drop")] OwnedSemaphorePermit);

impl LlmModel {
    /// new builds the model of `plan` with an empty batch.
    pub fn new(plan: &LlmPlan) -> Self {
        let batch = plan.batch.clamp(1, Semaphore::MAX_PERMITS);
        Self {
            places: Arc::new(Semaphore::new(batch)),
            batch,
            waiting: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            prefill_ns: nanos_of(plan.prefill),
            decode_ns: nanos_of(plan.decode),
            slowdown: plan.slowdown,
        }
    }

    /// admit waits for a place in the batch, in arrival order (tokio's semaphore is fair);
    /// `None` only if the batch were closed, which it never is.
    pub async fn admit(&self) -> Option<Sequence> {
        take_in_order(&self.places, &self.waiting, None).await.map(Sequence)
    }

    /// in_service is the sequences holding a place in the batch now.
    pub fn in_service(&self) -> usize {
        self.batch.saturating_sub(self.places.available_permits())
    }

    /// waiting is the requests waiting for a place now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// batch is the most sequences in service at once.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// next_id numbers a completion (`chatcmpl-1`, `cmpl-2`, ...), unique in this server.
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// prefill is the time from a place in the batch to the first token: prompt tokens ×
    /// `--llm-prefill`.
    pub fn prefill(&self, prompt_tokens: u32) -> Duration {
        Duration::from_nanos(self.prefill_ns.saturating_mul(u64::from(prompt_tokens)))
    }

    /// step is the next decode step's time, starting now, with the batch as it is now.
    pub fn step(&self) -> Duration {
        Duration::from_nanos(step_ns(self.decode_ns, self.slowdown, self.in_service()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(batch: usize, slowdown: f64) -> LlmPlan {
        LlmPlan {
            prefill: Duration::from_micros(200),
            decode: Duration::from_millis(20),
            batch,
            slowdown,
            output_tokens: 32,
        }
    }

    #[test]
    fn counts_words_as_tokens() {
        let cases: &[(&[&str], u32)] = &[
            (&["hello world"], 2),
            (&["  one\ttwo\nthree  "], 3),
            (&["a b", "c", ""], 3),
            (&[""], 1),
            (&[], 1),
            (&["   "], 1),
            (&["naïve café, déjà-vu"], 3),
        ];
        for &(texts, want) in cases {
            assert_eq!(prompt_tokens(texts.iter().copied()), want, "{texts:?}");
        }
    }

    #[test]
    fn steps_slow_down_with_the_batch() {
        let cases: &[(u64, f64, usize, u64)] = &[
            (20_000_000, 0.0, 8, 20_000_000),
            (20_000_000, 0.5, 1, 20_000_000),
            (20_000_000, 0.5, 0, 20_000_000),
            (20_000_000, 0.5, 2, 30_000_000),
            (20_000_000, 1.0, 2, 40_000_000),
            (20_000_000, 0.1, 8, 34_000_000),
            (0, 3.0, 8, 0),
            (1_000, 0.25, 5, 2_000),
        ];
        for &(decode, slowdown, n, want) in cases {
            assert_eq!(step_ns(decode, slowdown, n), want, "decode {decode} F {slowdown} n {n}");
        }
        let p = plan(8, 0.1);
        assert_eq!(p.tpot(8), Duration::from_millis(34));
        assert!((p.tokens_per_second(8) - 8.0 / 0.034).abs() < 1e-9);
    }

    #[test]
    fn the_batch_admits_in_arrival_order() {
        let runtime = tokio::runtime::Builder::new_current_thread().build();
        let Ok(runtime) = runtime else { panic!("runtime") };
        runtime.block_on(async {
            let model = Arc::new(LlmModel::new(&plan(2, 1.0)));
            assert_eq!(model.prefill(10), Duration::from_millis(2));
            let a = model.admit().await;
            assert_eq!(model.step(), Duration::from_millis(20));
            let b = model.admit().await;
            assert_eq!((model.in_service(), model.waiting()), (2, 0));
            assert_eq!(model.step(), Duration::from_millis(40));
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            for name in ["first", "second"] {
                let (model, tx) = (Arc::clone(&model), tx.clone());
                tokio::spawn(async move {
                    let place = model.admit().await;
                    let _ = tx.send(name);
                    std::future::pending::<()>().await;
                    drop(place);
                });
                tokio::task::yield_now().await;
            }
            assert_eq!(model.waiting(), 2);
            drop(b);
            assert_eq!(rx.recv().await, Some("first"));
            drop(a);
            assert_eq!(rx.recv().await, Some("second"));
            assert_eq!((model.in_service(), model.waiting()), (2, 0));
            assert_eq!((model.next_id(), model.next_id()), (1, 2));
        });
    }
}
