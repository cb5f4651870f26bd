//! surge._engine: thin PyO3 bindings over surge-engine and surge-target.
use pyo3::prelude::*;

mod target;

/// _engine: the compiled module behind the `surge` package (private; import from `surge`).
#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    target::register(m)?;
    Ok(())
}
