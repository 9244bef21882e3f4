//! Bindings of hypercuboid_core::topology::simgrid: SimGrid platform XML out and in.

use crate::errors::{Class, PyResultExt};
use crate::guard::{self, call};
use crate::topology::{made, PyTopology};
use hypercuboid_core::topology::simgrid;
use pyo3::prelude::*;

/// The topology as a SimGrid platform (version 4.1, one Floyd zone).
#[pyfunction]
fn topology_to_simgrid(py: Python<'_>, topology: &PyTopology) -> PyResult<String> {
    call(Class::Topology, "topology_to_simgrid", || {
        guard::detach(py, || simgrid::to_simgrid(topology.topology())).py()
    })
}

/// Reads a SimGrid platform; `what` names the source in errors.
#[pyfunction]
#[pyo3(signature = (text, what="<simgrid>"))]
fn topology_from_simgrid(py: Python<'_>, text: &str, what: &str) -> PyResult<PyTopology> {
    made(py, "topology_from_simgrid", || {
        simgrid::from_simgrid(text, what)
    })
}

/// Adds this module's functions to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(m, [], [topology_to_simgrid, topology_from_simgrid]);
    Ok(())
}
