//! Bindings for the reference target (filled in by the surge-target work).
use pyo3::prelude::*;

/// register adds the target's functions to the module.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
