//! Maps the core's error enums to the exception classes of `hypercuboid.errors`.
//!
//! The classes are defined in Python so that input errors can derive from both
//! `HypercuboidError` and `ValueError`; they are looked up once and cached.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The exception classes of `hypercuboid.errors`.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// `ScheduleError`
    Schedule,
    /// `ModelError`
    Model,
    /// `SimulationError`
    Simulation,
    /// `TopologyError`
    Topology,
    /// `NetworkError`
    Network,
    /// `UnitError`
    Unit,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::Schedule => "ScheduleError",
            Kind::Model => "ModelError",
            Kind::Simulation => "SimulationError",
            Kind::Topology => "TopologyError",
            Kind::Network => "NetworkError",
            Kind::Unit => "UnitError",
        }
    }
}

static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// A Python exception of class `kind` carrying `message`.
pub fn error(kind: Kind, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        let class = MODULE
            .get_or_try_init(py, || py.import("hypercuboid.errors").map(Bound::unbind))
            .and_then(|m| m.bind(py).getattr(kind.class_name()))
            .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
        match class {
            Ok(class) => PyErr::from_type(class, message),
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}

/// `Result<T, E: Display>` to `PyResult<T>` with the given exception class.
pub trait IntoPy<T> {
    /// Converts the error, keeping its message.
    fn py_err(self, kind: Kind) -> PyResult<T>;
}

impl<T, E: std::fmt::Display> IntoPy<T> for Result<T, E> {
    fn py_err(self, kind: Kind) -> PyResult<T> {
        self.map_err(|e| error(kind, e.to_string()))
    }
}
