//! Bindings of hypercuboid_core::resources: the memory limit that every generator, reader,
//! simulation and verification checks its estimate against. Convert, call, convert.

use hypercuboid_core::resources;
use pyo3::prelude::*;

/// Set the memory limit in bytes (`None`: the machine's available memory applies).
#[pyfunction]
#[pyo3(signature = (limit))]
fn set_memory_limit(limit: Option<u64>) {
    resources::set_memory_limit(limit);
}

/// The memory limit set by `set_memory_limit`, in bytes, or `None`.
#[pyfunction]
fn memory_limit() -> Option<u64> {
    resources::memory_limit()
}

/// The memory this machine has available now, in bytes (`None` where it cannot be read).
#[pyfunction]
fn available_memory() -> Option<u64> {
    resources::available_memory()
}

/// Adds this module's functions to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(m, [], [set_memory_limit, memory_limit, available_memory]);
    Ok(())
}
