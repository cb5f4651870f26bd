//! detach: the one way the bindings make a long call. The work runs on its own thread with the
//! GIL released while the calling (main) thread polls for Python signals, so that Ctrl-C stops
//! the work (through its stop flag) and the work keeps what it measured.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;

/// SIGNAL_POLL is how often a detached call checks for Ctrl-C (and other Python signals).
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Raised keeps the first Python error raised during a detached call (by a signal handler or
/// by a callback the work makes) and sets the work's stop flag when one is raised.
pub struct Raised {
    first: Mutex<Option<PyErr>>,
    stop: Arc<AtomicBool>,
}

impl Raised {
    /// raise keeps `error` unless one came first, and asks the work to stop.
    pub fn raise(&self, error: PyErr) {
        self.first.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(error);
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Detached is what a detached call ended with: the work's value (None if its thread ended
/// without one), and whether Ctrl-C stopped it.
pub struct Detached<T> {
    /// value is the work's result.
    pub value: Option<T>,
    /// interrupted is true when a KeyboardInterrupt was raised during the call.
    pub interrupted: bool,
}

/// detach_polling runs `work` on a thread of its own with the GIL released, polling for Python
/// signals every 100 ms on this thread; a raised error sets `stop`. KeyboardInterrupt is
/// reported as `interrupted`; any other error raised (by a signal handler or through
/// [`Raised::raise`]) is returned as the call's error once the work has ended.
pub fn detach_polling<T: Send>(
    py: Python<'_>,
    stop: &Arc<AtomicBool>,
    work: impl FnOnce(&Raised) -> T + Send,
) -> PyResult<Detached<T>> {
    let raised = Raised { first: Mutex::new(None), stop: Arc::clone(stop) };
    let value = py.detach(|| {
        std::thread::scope(|scope| {
            let (done, finished) = mpsc::channel();
            let raised = &raised;
            scope.spawn(move || {
                let _ = done.send(work(raised));
            });
            loop {
                match finished.recv_timeout(SIGNAL_POLL) {
                    Ok(value) => return Some(value),
                    Err(mpsc::RecvTimeoutError::Timeout) =>
                    {
                        #[allow(
                            clippy::redundant_closure_for_method_calls,
                            reason = "the method is not general over 'py"
                        )]
                        if let Err(e) = Python::attach(|py| py.check_signals()) {
                            raised.raise(e);
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => return None,
                }
            }
        })
    });
    match raised.first.into_inner().unwrap_or_else(PoisonError::into_inner) {
        Some(error) if error.is_instance_of::<PyKeyboardInterrupt>(py) => Ok(Detached { value, interrupted: true }),
        Some(error) => Err(error),
        None => Ok(Detached { value, interrupted: false }),
    }
}
