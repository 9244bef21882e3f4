//! Bindings of hypercuboid_core::network.

use pyo3::prelude::*;

/// Adds this module's functions and classes to `hypercuboid._core`.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
