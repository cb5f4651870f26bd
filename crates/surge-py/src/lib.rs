//! surge._engine: thin PyO3 bindings over surge-engine and surge-target. Each function
//! converts its arguments, releases the GIL once, delegates, and converts back.
use pyo3::prelude::*;

mod detach;
mod errors;
mod run;
mod target;

/// _engine: the compiled module behind the `surge` package (private; import from `surge`).
#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULT_SEND_SLACK_S", surge_engine::plan::DEFAULT_SEND_SLACK_S)?;
    errors::register(m)?;
    run::register(m)?;
    target::register(m)?;
    Ok(())
}
