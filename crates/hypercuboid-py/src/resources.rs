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

/// The text of the file at `path` as the core's readers take it: refused past
/// `resources::MAX_TEXT_FILE` bytes without reading further (`/dev/zero`, a pipe that never
/// ends) and when it is not UTF-8, as an `OSError`.
#[pyfunction]
fn read_text(py: Python<'_>, path: String) -> PyResult<String> {
    py.detach(|| resources::read_text(&path)).map_err(|e| {
        // OSError(errno, strerror, filename): the errno picks the subclass
        // (FileNotFoundError, IsADirectoryError, ...); strerror without Rust's " (os error N)".
        let text = e.to_string();
        let strerror = text
            .split(" (os error ")
            .next()
            .unwrap_or(&text)
            .to_string();
        pyo3::exceptions::PyOSError::new_err((e.raw_os_error().unwrap_or(0), strerror, path))
    })
}

/// Adds this module's functions to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [],
        [set_memory_limit, memory_limit, available_memory, read_text]
    );
    Ok(())
}
