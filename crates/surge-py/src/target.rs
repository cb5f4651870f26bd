//! target: `_engine.serve_target(config_json, on_ready)`, the reference target served from
//! Python with the GIL released, and `_engine.check_target_config(config_json)`.
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use surge_target::{TargetConfig, TargetError, TargetPlan};

use crate::detach::detach_polling;
use crate::errors::target_error;

/// plan_of reads and validates a configuration; every mistake becomes one line of a
/// TargetConfigError (a ValueError).
fn plan_of(py: Python<'_>, config_json: &str) -> PyResult<TargetPlan> {
    TargetConfig::from_json(config_json)
        .and_then(|config| config.validate())
        .map_err(|errors| target_error(py, TargetError::Config(errors)))
}

/// check_target_config validates a configuration (JSON) without serving; returns JSON
/// `{"warnings": [...], "describe": [...]}`, or raises TargetConfigError (a ValueError) with
/// one line per mistake, each starting with its flag.
#[pyfunction]
pub fn check_target_config(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let plan = plan_of(py, config_json)?;
    let report = serde_json::json!({"warnings": plan.warnings(), "describe": plan.describe()});
    Ok(report.to_string())
}

/// serve_target serves the reference target until its `duration` ends or a Python signal
/// handler raises (Ctrl-C), with the GIL released; `on_ready(address)` is called once it
/// listens ("127.0.0.1:PORT"). Returns the summary as JSON (`stopped_by` is "interrupted"
/// after Ctrl-C). Raises TargetConfigError (a ValueError) for an invalid configuration,
/// TargetServeError (an OSError) when it cannot listen, and re-raises what `on_ready` or a
/// signal handler raised other than KeyboardInterrupt.
#[pyfunction]
#[allow(clippy::needless_pass_by_value, reason = "pyo3 hands the callable over owned")]
pub fn serve_target(py: Python<'_>, config_json: &str, on_ready: Py<PyAny>) -> PyResult<String> {
    let plan = plan_of(py, config_json)?;
    let stop = Arc::new(AtomicBool::new(false));
    let detached = detach_polling(py, &stop, |raised| {
        let ready = |addr: std::net::SocketAddr| {
            if let Err(e) = Python::attach(|py| on_ready.call1(py, (addr.to_string(),)).map(drop)) {
                raised.raise(e);
            }
        };
        surge_target::serve_plan(plan, ready, Arc::clone(&stop))
    })?;
    let outcome =
        detached.value.unwrap_or_else(|| Err(TargetError::Internal("the server thread ended without a result".into())));
    let summary = outcome.map_err(|e| target_error(py, e))?;
    let mut json = serde_json::to_value(&summary).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    if detached.interrupted {
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
