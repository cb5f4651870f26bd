//! run: `_engine.run(plan_json, on_interval)`, the one long call into the engine, and the
//! checks made without running: `validate_plan` and `check_json_path`.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use surge_engine::plan::JsonPath;
use surge_engine::{Control, EngineError, Incoming, Interval, Observer, ReportSource};

use crate::detach::{detach_polling, Raised};
use crate::errors::{engine_error, json_path_error};

/// PyObserver forwards intervals to a Python callable (as JSON); an exception the callable
/// raises stops the run and is re-raised. A generator of a distributed run also forwards its
/// workers' reports (`on_report`) and is asked whether to stop (`poll`).
struct PyObserver<'a> {
    callback: Option<Py<PyAny>>,
    on_report: Option<Py<PyAny>>,
    poll: Option<Py<PyAny>>,
    raised: &'a Raised,
}

impl PyObserver<'_> {
    /// ask calls `callable` with `text` (or nothing): Continue on a false answer, `yes` on a
    /// true one, Stop (keeping the exception) when it raises.
    fn ask(&self, callable: &Py<PyAny>, text: Option<&str>, yes: Control) -> Control {
        let answer = Python::attach(|py| {
            let called = match text {
                Some(text) => callable.call1(py, (text,)),
                None => callable.call0(py),
            };
            called.and_then(|r| r.bind(py).is_truthy())
        });
        match answer {
            Ok(false) => Control::Continue,
            Ok(true) => yes,
            Err(e) => {
                self.raised.raise(e);
                Control::Stop
            }
        }
    }
}

impl Observer for PyObserver<'_> {
    fn on_interval(&mut self, interval: &Interval) -> Control {
        let Some(callback) = &self.callback else { return Control::Continue };
        let json = serde_json::to_string(interval).unwrap_or_default();
        // A true answer ends the run on its results (a threshold's abort_on_fail).
        self.ask(callback, Some(&json), Control::Abort)
    }

    fn poll(&mut self) -> Control {
        let Some(poll) = &self.poll else { return Control::Continue };
        self.ask(poll, None, Control::Stop)
    }

    fn forwards_reports(&self) -> bool {
        self.on_report.is_some()
    }

    fn on_report(&mut self, report: &str) -> Control {
        let Some(on_report) = &self.on_report else { return Control::Continue };
        self.ask(on_report, Some(report), Control::Stop)
    }
}

/// run validates the plan (JSON), runs it with the GIL released and returns the result as
/// JSON. `on_interval(json)` is called once per interval; returning True ends the run
/// early with stop_reason "aborted". `on_report(text)` (a generator of a distributed run)
/// gets each worker report encoded for the driver, and `poll()` is asked about ten times a
/// second whether to stop; True from either stops the run. Ctrl-C stops the run early and
/// the result (stop_reason "interrupted") is still returned; an exception raised by a
/// callable stops the run and is re-raised.
#[pyfunction]
#[pyo3(signature = (plan_json, on_interval=None, on_report=None, poll=None))]
pub fn run(
    py: Python<'_>,
    plan_json: &str,
    on_interval: Option<Py<PyAny>>,
    on_report: Option<Py<PyAny>>,
    poll: Option<Py<PyAny>>,
) -> PyResult<String> {
    let plan =
        surge_engine::validate_plan(plan_json).map_err(|errors| engine_error(py, EngineError::InvalidPlan(errors)))?;
    let cancel = Arc::new(AtomicBool::new(false));
    let detached = detach_polling(py, &cancel, |raised| {
        let mut observer = PyObserver { callback: on_interval, on_report, poll, raised };
        surge_engine::run(&plan, &mut observer, Arc::clone(&cancel))
    })?;
    let outcome =
        detached.value.ok_or_else(|| PyRuntimeError::new_err("the engine's thread ended without a result"))?;
    let result = outcome.map_err(|e| engine_error(py, e))?;
    serde_json::to_string(&result).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// PySource asks a Python callable for what the generators sent: `receive(wait_s, stopping)`
/// returns a list of `(generator, report)` pairs (report None: the generator is lost), or
/// None once every generator has ended. An exception ends the merge as if every generator
/// had ended, and is re-raised.
struct PySource<'a> {
    receive: Py<PyAny>,
    raised: &'a Raised,
}

impl ReportSource for PySource<'_> {
    fn receive(&mut self, wait: Duration, stopping: bool) -> Option<Vec<Incoming>> {
        let answer = Python::attach(|py| {
            let value = self.receive.call1(py, (wait.as_secs_f64(), stopping))?;
            value.extract::<Option<Vec<(usize, Option<String>)>>>(py)
        });
        match answer {
            Ok(incoming) => incoming.map(|list| {
                list.into_iter()
                    .map(|(generator, report)| match report {
                        Some(report) => Incoming::Report { generator, report },
                        None => Incoming::Lost { generator },
                    })
                    .collect()
            }),
            Err(e) => {
                self.raised.raise(e);
                None
            }
        }
    }
}

/// merge is the driver of a distributed run (`surge_engine::merge`): `plan_json` is the whole
/// plan, run by `generators` generators with their segments from `start_at_unix_s`;
/// `receive` brings their reports (see PySource), `on_interval(json)` gets each merged
/// interval (True: abort, as in `run`). Returns the merged result as JSON. Ctrl-C sets the
/// stop that `receive` is told of.
#[pyfunction]
#[pyo3(signature = (plan_json, generators, start_at_unix_s, receive, on_interval=None))]
pub fn merge(
    py: Python<'_>,
    plan_json: &str,
    generators: usize,
    start_at_unix_s: f64,
    receive: Py<PyAny>,
    on_interval: Option<Py<PyAny>>,
) -> PyResult<String> {
    let plan =
        surge_engine::validate_plan(plan_json).map_err(|errors| engine_error(py, EngineError::InvalidPlan(errors)))?;
    let cancel = Arc::new(AtomicBool::new(false));
    let detached = detach_polling(py, &cancel, |raised| {
        let mut observer = PyObserver { callback: on_interval, on_report: None, poll: None, raised };
        let mut source = PySource { receive, raised };
        surge_engine::merge(&plan, generators, start_at_unix_s, &mut source, &mut observer, Arc::clone(&cancel))
    })?;
    let outcome =
        detached.value.ok_or_else(|| PyRuntimeError::new_err("the driver's thread ended without a result"))?;
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
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(validate_plan, m)?)?;
    m.add_function(wrap_pyfunction!(check_json_path, m)?)?;
    Ok(())
}
