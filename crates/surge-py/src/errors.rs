//! errors: the one Python exception tree for engine errors, and the mapping into it.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use surge_engine::EngineError;

create_exception!(_engine, SurgeError, PyException, "SurgeError is the base of every error surge raises.");
create_exception!(
    _engine,
    PlanError,
    PyValueError,
    "PlanError: the plan is invalid; args are (message, errors as JSON)."
);
create_exception!(
    _engine,
    UnreachableError,
    SurgeError,
    "UnreachableError: the target could not be resolved or connected to."
);
create_exception!(
    _engine,
    ConnectionLimitError,
    SurgeError,
    "ConnectionLimitError: the plan needs more connections than the open-file limit allows."
);
create_exception!(
    _engine,
    SetupError,
    SurgeError,
    "SetupError: the engine could not start (threads, poll, TLS setup)."
);

/// to_py_err maps an engine error to the matching Python exception.
pub fn to_py_err(error: EngineError) -> PyErr {
    let message = error.to_string();
    match error {
        EngineError::InvalidPlan(errors) => {
            let json = serde_json::to_string(&errors).unwrap_or_else(|_| "[]".to_string());
            PlanError::new_err((message, json))
        }
        EngineError::Unresolvable { host, .. } => UnreachableError::new_err((message, "dns_failure", host)),
        EngineError::Unreachable { address, class, .. } => UnreachableError::new_err((message, class.name(), address)),
        EngineError::TooManyConnections { .. } => ConnectionLimitError::new_err(message),
        EngineError::Setup(_) => SetupError::new_err(message),
    }
}

/// register adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SurgeError", py.get_type::<SurgeError>())?;
    m.add("PlanError", py.get_type::<PlanError>())?;
    m.add("UnreachableError", py.get_type::<UnreachableError>())?;
    m.add("ConnectionLimitError", py.get_type::<ConnectionLimitError>())?;
    m.add("SetupError", py.get_type::<SetupError>())?;
    Ok(())
}
