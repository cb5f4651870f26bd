//! target: `_engine.serve_target(config_json, on_ready)`, the reference target served from
//! Python with the GIL released, and `_engine.check_target_config(config_json)`.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use surge_target::{TargetConfig, TargetError, TargetPlan};

/// SIGNAL_POLL is how often a serving call checks for Ctrl-C (and other Python signals).
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// plan_of reads and validates a configuration; every mistake becomes one line of a ValueError.
fn plan_of(config_json: &str) -> PyResult<TargetPlan> {
    TargetConfig::from_json(config_json)
        .and_then(|config| config.validate())
        .map_err(|errors| PyValueError::new_err(errors.to_string()))
}

/// to_py_err maps a serving failure: the configuration to ValueError, the socket to OSError.
fn to_py_err(error: TargetError) -> PyErr {
    match error {
        TargetError::Config(errors) => PyValueError::new_err(errors.to_string()),
        TargetError::Bind { .. } | TargetError::Runtime(_) => PyOSError::new_err(error.to_string()),
        TargetError::Internal(_) => PyRuntimeError::new_err(error.to_string()),
    }
}

/// check_target_config validates a configuration (JSON) without serving; returns JSON
/// `{"warnings": [...], "describe": [...]}`, or raises ValueError with one line per mistake,
/// each starting with its flag.
#[pyfunction]
pub fn check_target_config(config_json: &str) -> PyResult<String> {
    let plan = plan_of(config_json)?;
    let report = serde_json::json!({"warnings": plan.warnings(), "describe": plan.describe()});
    Ok(report.to_string())
}

/// serve_target serves the reference target until its `duration` ends or a Python signal
/// handler raises (Ctrl-C), with the GIL released; `on_ready(address)` is called once it
/// listens ("127.0.0.1:PORT"). Returns the summary as JSON (`stopped_by` is "interrupted"
/// after Ctrl-C). Raises ValueError for an invalid configuration, OSError when it cannot
/// listen, and re-raises what `on_ready` or a signal handler raised other than KeyboardInterrupt.
#[pyfunction]
pub fn serve_target(py: Python<'_>, config_json: &str, on_ready: Py<PyAny>) -> PyResult<String> {
    let plan = plan_of(config_json)?;
    let stop = Arc::new(AtomicBool::new(false));
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let raise = |error: PyErr| {
        raised.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(error);
        stop.store(true, Ordering::Relaxed);
    };
    let outcome = py.detach(|| {
        std::thread::scope(|scope| {
            let (done, finished) = mpsc::channel();
            let ready = |addr: std::net::SocketAddr| {
                if let Err(e) = Python::attach(|py| on_ready.call1(py, (addr.to_string(),)).map(drop)) {
                    raise(e);
                }
            };
            let server_stop = Arc::clone(&stop);
            scope.spawn(move || {
                let _ = done.send(surge_target::serve_plan(plan, ready, server_stop));
            });
            loop {
                match finished.recv_timeout(SIGNAL_POLL) {
                    Ok(outcome) => return outcome,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if let Err(e) = Python::attach(|py| py.check_signals()) {
                            raise(e);
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        return Err(TargetError::Internal("the server thread ended without a result".into()));
                    }
                }
            }
        })
    });
    let raised = raised.into_inner().unwrap_or_else(PoisonError::into_inner);
    let interrupted = match raised {
        Some(error) if error.is_instance_of::<PyKeyboardInterrupt>(py) => true,
        Some(error) => return Err(error),
        None => false,
    };
    let summary = outcome.map_err(to_py_err)?;
    let mut json = serde_json::to_value(&summary).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    if interrupted {
        json["stopped_by"] = "interrupted".into();
    }
    Ok(json.to_string())
}

/// register adds the target's functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(serve_target, m)?)?;
    m.add_function(wrap_pyfunction!(check_target_config, m)?)?;
    Ok(())
}
