//! errors: the one Python exception tree for the engine's and the target's errors, and the
//! mappings into it.
//!
//! `SurgeError` is defined in Python (`surge.core.errors`, pure Python); the classes here are
//! created once, at module init, as Python subclasses of it and of the builtin each one
//! replaces, so that `except ValueError` (or `OSError`, `RuntimeError`) keeps working:
//!
//! | class                 | bases                         | raised for                              |
//! |-----------------------|-------------------------------|-----------------------------------------|
//! | `PlanError`           | `SurgeError`, `ValueError`    | an invalid plan or JSON path            |
//! | `UnreachableError`    | `SurgeError`                  | a target not resolved or not connected  |
//! | `ConnectionLimitError`| `SurgeError`                  | more connections than open files        |
//! | `SetupError`          | `SurgeError`                  | the engine could not start              |
//! | `TargetConfigError`   | `SurgeError`, `ValueError`    | an invalid target configuration         |
//! | `TargetServeError`    | `SurgeError`, `OSError`       | the target cannot listen or run         |
//! | `TargetInternalError` | `SurgeError`, `RuntimeError`  | a bug in the target's serving thread    |

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::PyErrArguments;
use surge_engine::EngineError;
use surge_engine::PlanError as EnginePlanError;
use surge_target::TargetError;

/// Class is one exception class of the tree: its name, its builtin base besides
/// `SurgeError` (if any), its docstring, and the class once created.
struct Class {
    name: &'static str,
    builtin: Option<fn(Python<'_>) -> Bound<'_, PyType>>,
    doc: &'static str,
    cell: PyOnceLock<Py<PyType>>,
}

impl Class {
    const fn new(name: &'static str, builtin: Option<fn(Python<'_>) -> Bound<'_, PyType>>, doc: &'static str) -> Self {
        Class { name, builtin, doc, cell: PyOnceLock::new() }
    }

    /// create builds the class as `type(name, (SurgeError, builtin), {...})` in module `surge._engine`.
    fn create<'py>(&self, py: Python<'py>, surge_error: &Bound<'py, PyType>) -> PyResult<Bound<'py, PyType>> {
        let bases = match self.builtin {
            Some(builtin) => PyTuple::new(py, [surge_error.clone(), builtin(py)])?,
            None => PyTuple::new(py, [surge_error.clone()])?,
        };
        let namespace = PyDict::new(py);
        namespace.set_item("__doc__", self.doc)?;
        namespace.set_item("__module__", "surge._engine")?;
        let class = py.get_type::<PyType>().call1((self.name, bases, namespace))?;
        Ok(class.cast_into::<PyType>()?)
    }

    /// new_err builds an instance of the class with `args` (the class exists once the module is imported).
    fn new_err(&self, py: Python<'_>, args: impl PyErrArguments + 'static) -> PyErr {
        match self.cell.get(py) {
            Some(class) => PyErr::from_type(class.bind(py).clone(), args),
            None => {
                PyRuntimeError::new_err(format!("surge._engine.{} used before the module was initialised", self.name))
            }
        }
    }
}

fn value_error(py: Python<'_>) -> Bound<'_, PyType> {
    py.get_type::<PyValueError>()
}

fn os_error(py: Python<'_>) -> Bound<'_, PyType> {
    py.get_type::<PyOSError>()
}

fn runtime_error(py: Python<'_>) -> Bound<'_, PyType> {
    py.get_type::<PyRuntimeError>()
}

static PLAN_ERROR: Class =
    Class::new("PlanError", Some(value_error), "PlanError: the plan is invalid; args are (message, errors as JSON).");
static UNREACHABLE_ERROR: Class = Class::new(
    "UnreachableError",
    None,
    "UnreachableError: the target could not be resolved or connected to;\n\
     args are (message, failure class, address or host).",
);
static CONNECTION_LIMIT_ERROR: Class = Class::new(
    "ConnectionLimitError",
    None,
    "ConnectionLimitError: the plan needs more connections than the open-file limit allows.",
);
static SETUP_ERROR: Class =
    Class::new("SetupError", None, "SetupError: the engine could not start (threads, poll, TLS setup).");
static TARGET_CONFIG_ERROR: Class = Class::new(
    "TargetConfigError",
    Some(value_error),
    "TargetConfigError: the target's configuration is invalid; one line per mistake, each starting with its flag.",
);
static TARGET_SERVE_ERROR: Class = Class::new(
    "TargetServeError",
    Some(os_error),
    "TargetServeError: the target could not listen on its address or start its runtime.",
);
static TARGET_INTERNAL_ERROR: Class = Class::new(
    "TargetInternalError",
    Some(runtime_error),
    "TargetInternalError: the target's serving thread failed (a bug in surge).",
);

/// CLASSES are every class of the tree, in the order they are added to the module.
static CLASSES: [&Class; 7] = [
    &PLAN_ERROR,
    &UNREACHABLE_ERROR,
    &CONNECTION_LIMIT_ERROR,
    &SETUP_ERROR,
    &TARGET_CONFIG_ERROR,
    &TARGET_SERVE_ERROR,
    &TARGET_INTERNAL_ERROR,
];

/// plan_errors_json renders a plan's errors as the JSON list PlanError carries.
fn plan_errors_json(errors: &[EnginePlanError]) -> String {
    serde_json::to_string(errors).unwrap_or_else(|_| "[]".to_string())
}

/// json_path_error builds the PlanError for a JSON path the engine refuses: its message is
/// the engine's parse message, its errors one entry for the field `path`.
pub fn json_path_error(py: Python<'_>, message: String) -> PyErr {
    let json = plan_errors_json(&[EnginePlanError::new("path", message.clone())]);
    PLAN_ERROR.new_err(py, (message, json))
}

/// engine_error maps an engine error to the matching Python exception.
pub fn engine_error(py: Python<'_>, error: EngineError) -> PyErr {
    let message = error.to_string();
    match error {
        EngineError::InvalidPlan(errors) => PLAN_ERROR.new_err(py, (message, plan_errors_json(&errors))),
        EngineError::Unresolvable { host, .. } => UNREACHABLE_ERROR.new_err(py, (message, "dns_failure", host)),
        EngineError::Unreachable { address, class, .. } => {
            UNREACHABLE_ERROR.new_err(py, (message, class.name(), address))
        }
        EngineError::TooManyConnections { .. } => CONNECTION_LIMIT_ERROR.new_err(py, (message,)),
        EngineError::Setup(_) => SETUP_ERROR.new_err(py, (message,)),
    }
}

/// target_error maps a target failure: the configuration to TargetConfigError (a
/// ValueError), the socket and runtime to TargetServeError (an OSError), a failed serving
/// thread to TargetInternalError (a RuntimeError).
pub fn target_error(py: Python<'_>, error: TargetError) -> PyErr {
    let message = error.to_string();
    match error {
        TargetError::Config(errors) => TARGET_CONFIG_ERROR.new_err(py, (errors.to_string(),)),
        TargetError::Bind { .. } | TargetError::Runtime(_) => TARGET_SERVE_ERROR.new_err(py, (message,)),
        TargetError::Internal(_) => TARGET_INTERNAL_ERROR.new_err(py, (message,)),
    }
}

/// register creates the exception classes under `surge.core.errors.SurgeError` and adds them to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let surge_error = py.import("surge.core.errors")?.getattr("SurgeError")?.cast_into::<PyType>()?;
    for class in CLASSES {
        let created = class.create(py, &surge_error)?;
        m.add(class.name, &created)?;
        let _ = class.cell.set(py, created.unbind());
    }
    Ok(())
}
