//! run: `_engine.run(plan_json, on_interval)`, the one long call into the engine, and the
//! checks made without running: `validate_plan` and `check_json_path`.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use surge_engine::plan::JsonPath;
use surge_engine::{Control, EngineError, Interval, Observer};

use crate::detach::{detach_polling, Raised};
use crate::errors::{engine_error, json_path_error};

/// PyObserver forwards intervals to a Python callable (as JSON); an exception the callable
/// raises stops the run and is re-raised.
struct PyObserver<'a> {
    callback: Option<Py<PyAny>>,
    raised: &'a Raised,
}

impl Observer for PyObserver<'_> {
    fn on_interval(&mut self, interval: &Interval) -> Control {
        let Some(callback) = &self.callback else { return Control::Continue };
        let json = serde_json::to_string(interval).unwrap_or_default();
        let answer = Python::attach(|py| callback.call1(py, (json,)).and_then(|r| r.bind(py).is_truthy()));
        match answer {
            Ok(false) => Control::Continue,
            // A true answer ends the run on its results (a threshold's abort_on_fail).
            Ok(true) => Control::Abort,
            Err(e) => {
                self.raised.raise(e);
                Control::Stop
            }
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
    let plan =
        surge_engine::validate_plan(plan_json).map_err(|errors| engine_error(py, EngineError::InvalidPlan(errors)))?;
    let cancel = Arc::new(AtomicBool::new(false));
    let detached = detach_polling(py, &cancel, |raised| {
        let mut observer = PyObserver { callback: on_interval, raised };
        surge_engine::run(&plan, &mut observer, Arc::clone(&cancel))
    })?;
    let outcome =
        detached.value.ok_or_else(|| PyRuntimeError::new_err("the engine's thread ended without a result"))?;
    let result = outcome.map_err(|e| engine_error(py, e))?;
    serde_json::to_string(&result).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// validate_plan checks a plan without running it; returns the errors as JSON ("[]" if valid).
#[pyfunction]
pub fn validate_plan(plan_json: &str) -> String {
    match surge_engine::validate_plan(plan_json) {
        Ok(_) => "[]".to_string(),
        Err(errors) => serde_json::to_string(&errors).unwrap_or_else(|_| "[]".to_string()),
    }
}

/// check_json_path parses `path` with the engine's JSONPath parser (the one captures and
/// checks run with); raises PlanError with the engine's message when it refuses the path.
#[pyfunction]
pub fn check_json_path(py: Python<'_>, path: &str) -> PyResult<()> {
    JsonPath::parse(path).map(drop).map_err(|message| json_path_error(py, message))
}

/// register adds the run functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate_plan, m)?)?;
    m.add_function(wrap_pyfunction!(check_json_path, m)?)?;
    Ok(())
}
