//! Python bindings of hypercuboid-core: module `hypercuboid._core`. Convert, call, convert.

use pyo3::prelude::*;

/// Adds pyclasses and pyfunctions to the module `m`, in a function that returns `PyResult`:
/// `add!(m, [PyClass, ...], [function, ...]);`.
macro_rules! add {
    ($m:ident, [$($class:ty),* $(,)?], [$($function:ident),* $(,)?]) => {
        $($m.add_class::<$class>()?;)*
        $($m.add_function(pyo3::wrap_pyfunction!($function, $m)?)?;)*
    };
}

mod apptrace;
mod args;
#[macro_use]
mod collective;
mod defaults;
mod errors;
mod fit;
mod guard;
mod halo;
mod lbm;
mod library;
mod modelfile;
mod network;
mod phases;
mod predict;
mod program;
mod resources;
mod schedule;
mod sim;
mod sim_result;
mod simgrid;
mod spec;
mod tables;
mod topology;
mod tuning;
mod units;
mod verify;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    defaults::register(m)?;
    schedule::register(m)?;
    halo::register(m)?;
    program::register(m)?;
    sim::register(m)?;
    sim_result::register(m)?;
    verify::register(m)?;
    topology::register(m)?;
    network::register(m)?;
    phases::register(m)?;
    predict::register(m)?;
    tuning::register(m)?;
    units::register(m)?;
    spec::register(m)?;
    lbm::register(m)?;
    resources::register(m)?;
    guard::register(m)?;
    tables::register(m)?;
    apptrace::register(m)?;
    library::register(m)?;
    simgrid::register(m)?;
    modelfile::register(m)?;
    fit::register(m)?;
    Ok(())
}
