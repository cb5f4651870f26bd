//! WorkerGate: the thread-per-connection model, where a worker belongs to one connection.
//!
//! Servers with a blocking thread per connection (cpp-httplib's thread pool, Apache prefork, a
//! blocking Tomcat connector) give a connection a worker and keep it there, reading request
//! after request, until the connection closes: a keep-alive client that sleeps between
//! requests holds its worker through the sleep. Connections beyond the workers are accepted
//! and wait in arrival order (cpp-httplib's task queue) without a byte of answer, so their
//! requests time out at the client while the connections being served stay fast.
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// WorkerGate hands out `workers` workers to connections, first come first served, with at
/// most `queue_limit` connections waiting (unbounded when `None`).
#[derive(Debug)]
pub struct WorkerGate {
    permits: Arc<Semaphore>,
    workers: usize,
    waiting: AtomicUsize,
    queue_limit: Option<usize>,
}

/// Worker is a worker held by a connection; dropping it (the connection closes) hands it to
/// the connection that has waited longest.
#[derive(Debug)]
pub struct Worker(#[allow(dead_code)] OwnedSemaphorePermit);

impl WorkerGate {
    /// new returns a gate with `workers` free workers (at least one).
    pub fn new(workers: usize, queue_limit: Option<usize>) -> Self {
        let workers = workers.clamp(1, Semaphore::MAX_PERMITS);
        Self { permits: Arc::new(Semaphore::new(workers)), workers, waiting: AtomicUsize::new(0), queue_limit }
    }

    /// take waits for a worker, in arrival order; `None` at once when every worker is held and
    /// `queue_limit` connections are already waiting.
    pub async fn take(&self) -> Option<Worker> {
        take_in_order(&self.permits, &self.waiting, self.queue_limit).await.map(Worker)
    }

    /// held is how many workers connections hold now.
    pub fn held(&self) -> usize {
        self.workers.saturating_sub(self.permits.available_permits())
    }

    /// waiting is how many connections wait for a worker now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }
}

/// take_in_order takes a permit of `permits` in arrival order (tokio's semaphore is fair),
/// counting the caller in `waiting` while it waits; `None` at once when none is free and
/// `queue_limit` callers already wait (and if the semaphore were closed, which none here is).
pub async fn take_in_order(
    permits: &Arc<Semaphore>,
    waiting: &AtomicUsize,
    queue_limit: Option<usize>,
) -> Option<OwnedSemaphorePermit> {
    if let Ok(permit) = Arc::clone(permits).try_acquire_owned() {
        return Some(permit);
    }
    // Join the semaphore's line first, and only then count as waiting, so that whoever sees
    // `waiting` go up knows this caller is ahead of any that joins later.
    let mut acquire = std::pin::pin!(Arc::clone(permits).acquire_owned());
    let first = std::future::poll_fn(|cx| Poll::Ready(acquire.as_mut().poll(cx))).await;
    if let Poll::Ready(permit) = first {
        return permit.ok();
    }
    let before = waiting.fetch_add(1, Ordering::AcqRel);
    let _waiting = Waiting(waiting);
    if queue_limit.is_some_and(|limit| before >= limit) {
        // Dropping `acquire` leaves the line (handing on a permit it was just given).
        return None;
    }
    acquire.await.ok()
}

/// Waiting counts a caller as waiting until it gets a permit, is turned away, or is dropped
/// while waiting (the server stopping, the client gone).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build();
        runtime.map_or_else(|e| panic!("runtime: {e}"), |r| r.block_on(future))
    }

    #[test]
    fn workers_go_in_arrival_order_and_the_queue_is_bounded() {
        block_on(async {
            let gate = Arc::new(WorkerGate::new(2, Some(2)));
            let a = gate.take().await;
            let b = gate.take().await;
            assert!(a.is_some() && b.is_some());
            assert_eq!((gate.held(), gate.waiting()), (2, 0));
            // Two connections wait; a third is turned away.
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            for name in ["first", "second"] {
                let (gate, tx) = (Arc::clone(&gate), tx.clone());
                tokio::spawn(async move {
                    let worker = gate.take().await;
                    let _ = tx.send((name, worker.is_some()));
                    tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                    drop(worker);
                });
                tokio::task::yield_now().await;
            }
            assert_eq!(gate.waiting(), 2);
            assert!(gate.take().await.is_none());
            assert_eq!(gate.waiting(), 2);
            drop(b);
            assert_eq!(rx.recv().await, Some(("first", true)));
            drop(a);
            assert_eq!(rx.recv().await, Some(("second", true)));
            assert_eq!((gate.held(), gate.waiting()), (2, 0));
        });
    }
}
