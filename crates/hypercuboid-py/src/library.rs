//! Bindings of hypercuboid_core::collectives::library: what Open MPI and MPICH would run.

use crate::errors::{Class, PyResultExt};
use crate::guard::call;
use hypercuboid_core::collectives::library::{self, LibraryChoice, LIBRARIES, LIBRARY_COLLECTIVES};
use hypercuboid_core::schedule::{Dtype, ScheduleError};
use pyo3::prelude::*;

/// What an MPI library runs for one call: our algorithm (a spec the collective's parser
/// reads), the library's own name for it, and how the two differ (empty: the same).
#[derive(Debug)]
#[pyclass(name = "LibraryChoice", module = "hypercuboid._core", frozen, get_all)]
pub struct PyLibraryChoice {
    /// Our algorithm's spec.
    algorithm: String,
    /// The library's name.
    native: String,
    /// How ours differs, which fallback applied.
    note: String,
}

impl From<LibraryChoice> for PyLibraryChoice {
    fn from(c: LibraryChoice) -> Self {
        PyLibraryChoice {
            algorithm: c.algorithm,
            native: c.native.to_string(),
            note: c.note,
        }
    }
}

#[pymethods]
impl PyLibraryChoice {
    fn __repr__(&self) -> String {
        format!(
            "LibraryChoice(algorithm='{}', native='{}')",
            self.algorithm, self.native
        )
    }
}

/// What `library` (`openmpi`, `mpich`) runs for `collective` (`allreduce`, `alltoall`) on
/// `nranks` ranks with `nbytes` bytes (allreduce: the vector; alltoall: one peer's block) of
/// elements of `dtype` (default float64).
#[pyfunction]
#[pyo3(signature = (library, collective, nranks, nbytes, dtype=None))]
fn library_choice(
    library: &str,
    collective: &str,
    nranks: u32,
    nbytes: u64,
    dtype: Option<&str>,
) -> PyResult<PyLibraryChoice> {
    call(Class::Schedule, "library_choice", || {
        let lib = LIBRARIES
            .parse(library)
            .map_err(|e| ScheduleError::UnknownName {
                what: e.what,
                name: e.value.clone(),
                accepted: e.accepted(),
            })
            .py()?;
        let element_bytes = match dtype {
            Some(d) => Dtype::parse(d).py()?.size(),
            None => library::DEFAULT_ELEMENT_BYTES,
        };
        library::library_choice_for(lib, collective, nranks, nbytes, element_bytes)
            .py()
            .map(PyLibraryChoice::from)
    })
}

/// The libraries: `(name, aliases, help, source)` each, in the order listed.
#[pyfunction]
fn library_names() -> Vec<(&'static str, Vec<&'static str>, &'static str, &'static str)> {
    LIBRARIES
        .entries
        .iter()
        .map(|c| (c.name, c.aliases.to_vec(), c.help, c.value.source()))
        .collect()
}

/// The collectives the library selectors know.
#[pyfunction]
fn library_collectives() -> Vec<&'static str> {
    LIBRARY_COLLECTIVES.to_vec()
}

/// Adds this module's functions and classes to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [PyLibraryChoice],
        [library_choice, library_names, library_collectives]
    );
    Ok(())
}
