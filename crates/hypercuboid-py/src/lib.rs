//! Python bindings of hypercuboid-core: module `hypercuboid._core`. Convert, call, convert.

use pyo3::prelude::*;

mod errors;
mod network;
mod program;
mod schedule;
mod sim;
mod topology;
mod tuning;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    schedule::register(m)?;
    program::register(m)?;
    sim::register(m)?;
    topology::register(m)?;
    network::register(m)?;
    tuning::register(m)?;
    Ok(())
}
