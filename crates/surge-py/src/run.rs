//! run: `_engine.run(plan_json, on_interval)`, the one long call into the engine.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use surge_engine::{Control, EngineError, Interval, Observer, Plan};

use crate::errors::to_py_err;

/// PyObserver forwards intervals to a Python callable (as JSON) and turns a pending
/// Ctrl-C into a stop of the run, keeping what was measured so far.
struct PyObserver {
    callback: Option<Py<PyAny>>,
    error: Option<PyErr>,
}

impl PyObserver {
    fn stop_with(&mut self, error: PyErr) -> Control {
        self.error.get_or_insert(error);
        Control::Stop
    }
}

impl Observer for PyObserver {
    fn on_interval(&mut self, interval: &Interval) -> Control {
        let Some(callback) = &self.callback else { return self.poll() };
        let json = serde_json::to_string(interval).unwrap_or_default();
        let answer = Python::attach(|py| callback.call1(py, (json,)).and_then(|r| r.bind(py).is_truthy()));
        match answer {
            Ok(false) => Control::Continue,
            // A true answer ends the run on its results (a threshold's abort_on_fail).
            Ok(true) => Control::Abort,
            Err(e) => self.stop_with(e),
        }
    }

    fn poll(&mut self) -> Control {
        match Python::attach(|py| py.check_signals()) {
            Ok(()) => Control::Continue,
            Err(e) => self.stop_with(e),
        }
    }
}

/// run validates the plan (JSON), runs it with the GIL released and returns the result as
/// JSON. `on_interval(json)` is called once per interval; returning True ends the run
/// early with stop_reason "aborted". Ctrl-C stops the run early and the result
/// (stop_reason "interrupted") is still returned; an exception raised by `on_interval`
/// stops the run and is re-raised.
#[pyfunction]
#[pyo3(signature = (plan_json, on_interval=None))]
pub fn run(py: Python<'_>, plan_json: &str, on_interval: Option<Py<PyAny>>) -> PyResult<String> {
    let plan = Plan::from_json(plan_json).map_err(|errors| to_py_err(EngineError::InvalidPlan(errors)))?;
    let mut observer = PyObserver { callback: on_interval, error: None };
    let cancel = Arc::new(AtomicBool::new(false));
    let outcome = py.detach(|| surge_engine::run(&plan, &mut observer, cancel));
    if let Some(error) = observer.error {
        if !error.is_instance_of::<PyKeyboardInterrupt>(py) {
            return Err(error);
        }
    }
    let result = outcome.map_err(to_py_err)?;
    serde_json::to_string(&result).map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

/// validate_plan checks a plan without running it; returns the errors as JSON ("[]" if valid).
#[pyfunction]
pub fn validate_plan(plan_json: &str) -> String {
    match Plan::from_json(plan_json) {
        Ok(_) => "[]".to_string(),
        Err(errors) => serde_json::to_string(&errors).unwrap_or_else(|_| "[]".to_string()),
    }
}

/// register adds the run functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate_plan, m)?)?;
    Ok(())
}
