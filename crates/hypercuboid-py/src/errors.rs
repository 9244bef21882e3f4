//! Each core error type becomes one exception class of `hypercuboid.errors`, with its structure
//! kept as attributes: `.accepted` (the names or keys a bad-name error accepts), `.stuck` (the
//! ops a deadlocked schedule left waiting), `.cycle` (the channels a network deadlock waits
//! around). [`ToPyErr`] is the conversion (a local trait: `impl From<CoreError> for PyErr` is
//! not allowed between two foreign types); `result.py()?` applies it.
//!
//! | core error | Python class | attributes |
//! |---|---|---|
//! | `ScheduleError` | `ScheduleError` (a `ValueError`) | `accepted` |
//! | `ScheduleStringError` | `ScheduleError` | `accepted` (schedules that fit) |
//! | `ModelError` | `ModelError` (a `ValueError`) | `accepted` |
//! | `TopologyError` | `TopologyError` (a `ValueError`) | `accepted` |
//! | `NetworkError` | `NetworkError` (a `ValueError`) | `accepted` |
//! | `NetworkError::Deadlock` | `NetworkDeadlockError` (a `DeadlockError`) | `cycle`, `time_ps`, `in_flight` |
//! | `SimError` | `SimulationError` | |
//! | `SimError::Deadlock` | `DeadlockError` (a `SimulationError`) | `stuck`, `unfinished_ops`, `stuck_ranks` |
//! | `SimError::Threads` | `ScheduleError` (bad input: a thread count) | |
//! | `UnitError` | `UnitError` (a `ValueError`) | `accepted` (the units) |
//! | `TuningError` | the class of what it wraps, else `ScheduleError` | |
//! | `PhaseError` | `TopologyError` for a topology, else `ScheduleError` | `accepted` |
//! | `LbmError` | `LbmError` (a `ValueError`) | `accepted` |
//! | `TraceError` | `TraceError` (a `ScheduleError`); `TraceError::Schedule` as what it wraps | |
//! | `*::Memory` (`resources::TooLarge`) | `ResourceError` (a `MemoryError`) | `estimate`, `limit` |
//! | `*::Interrupted` | `KeyboardInterrupt` | |
//!
//! Bad input is a `ValueError`; a simulation that cannot complete is not. The classes are
//! defined in Python (so that input errors can also derive from `ValueError`), looked up once.

use hypercuboid_core::apptrace::TraceError;
use hypercuboid_core::collectives::allreduce::recursive_multiplying::search::TuningError;
use hypercuboid_core::collectives::allreduce::ScheduleStringError;
use hypercuboid_core::collectives::alltoall::phases::PhaseError;
use hypercuboid_core::lbm::LbmError;
use hypercuboid_core::model::ModelError;
use hypercuboid_core::network::NetworkError;
use hypercuboid_core::resources::TooLarge;
use hypercuboid_core::schedule::ScheduleError;
use hypercuboid_core::sim::SimError;
use hypercuboid_core::topology::TopologyError;
use hypercuboid_core::units::UnitError;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    MODULE
        .get_or_try_init(py, || py.import("hypercuboid.errors").map(Bound::unbind))
        .map(|m| m.bind(py))
}

/// The exception classes of `hypercuboid.errors` that the binding raises: the one place a
/// class is named. Bad arguments the binding itself refuses use [`Class::err`]; core errors
/// reach Python through [`ToPyErr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// `ScheduleError` (a `ValueError`).
    Schedule,
    /// `ModelError` (a `ValueError`).
    Model,
    /// `SimulationError`.
    Simulation,
    /// `DeadlockError` (a `SimulationError`).
    Deadlock,
    /// `NetworkDeadlockError` (a `DeadlockError`).
    NetworkDeadlock,
    /// `TopologyError` (a `ValueError`).
    Topology,
    /// `NetworkError` (a `ValueError`).
    Network,
    /// `UnitError` (a `ValueError`).
    Unit,
    /// `LbmError` (a `ValueError`).
    Lbm,
    /// `TraceError` (a `ScheduleError`).
    Trace,
    /// `ResourceError` (a `MemoryError`).
    Resource,
}

impl Class {
    /// The class's name in `hypercuboid.errors`.
    fn name(self) -> &'static str {
        match self {
            Class::Schedule => "ScheduleError",
            Class::Model => "ModelError",
            Class::Simulation => "SimulationError",
            Class::Deadlock => "DeadlockError",
            Class::NetworkDeadlock => "NetworkDeadlockError",
            Class::Topology => "TopologyError",
            Class::Network => "NetworkError",
            Class::Unit => "UnitError",
            Class::Lbm => "LbmError",
            Class::Trace => "TraceError",
            Class::Resource => "ResourceError",
        }
    }

    /// An exception of this class with `message` and no attributes beyond the class's defaults.
    pub(crate) fn err(self, message: impl Into<String>) -> PyErr {
        self.raise(message, |_, _| Ok(()))
    }

    /// An exception of this class whose `accepted` lists the values a bad one could have been.
    pub(crate) fn with_accepted(self, message: impl Into<String>, accepted: Vec<String>) -> PyErr {
        self.raise(message, |_, d| d.set_item("accepted", accepted))
    }

    /// An exception of this class with `message` and the attributes `attrs` sets.
    fn raise(
        self,
        message: impl Into<String>,
        attrs: impl FnOnce(Python<'_>, &Bound<'_, PyDict>) -> PyResult<()>,
    ) -> PyErr {
        let message = message.into();
        Python::attach(|py| {
            let made = (|| -> PyResult<PyErr> {
                let cls = errors_module(py)?
                    .getattr(self.name())?
                    .cast_into::<PyType>()
                    .map_err(PyErr::from)?;
                let exc = cls.call1((message.clone(),))?;
                let d = PyDict::new(py);
                attrs(py, &d)?;
                for (k, v) in d.iter() {
                    exc.setattr(k.extract::<&str>()?, v)?;
                }
                Ok(PyErr::from_value(exc))
            })();
            made.unwrap_or_else(|_| PyRuntimeError::new_err(message))
        })
    }
}

/// A core error converted to its one Python exception.
pub(crate) trait ToPyErr {
    /// The exception.
    fn to_pyerr(self) -> PyErr;
}

/// `result.py()?`: the error as its Python exception.
pub(crate) trait PyResultExt<T> {
    /// Converts the error with [`ToPyErr`].
    fn py(self) -> PyResult<T>;
}

impl<T, E: ToPyErr> PyResultExt<T> for Result<T, E> {
    fn py(self) -> PyResult<T> {
        self.map_err(ToPyErr::to_pyerr)
    }
}

impl ToPyErr for TooLarge {
    fn to_pyerr(self) -> PyErr {
        let (estimate, limit) = (self.estimate, self.limit);
        Class::Resource.raise(self.to_string(), |_, d| {
            d.set_item("estimate", estimate)?;
            d.set_item("limit", limit)
        })
    }
}

/// The exception of a run stopped on request (Ctrl-C).
pub(crate) fn interrupted() -> PyErr {
    PyKeyboardInterrupt::new_err("interrupted")
}

impl ToPyErr for ScheduleError {
    fn to_pyerr(self) -> PyErr {
        match self {
            ScheduleError::Memory(e) => return e.to_pyerr(),
            ScheduleError::Interrupted => return interrupted(),
            _ => {}
        }
        Class::Schedule.with_accepted(self.to_string(), self.accepted())
    }
}

impl ToPyErr for ScheduleStringError {
    /// A `ScheduleError`; `accepted` holds the schedules that fit, where it suggests some.
    fn to_pyerr(self) -> PyErr {
        let accepted = match &self {
            ScheduleStringError::DoesNotFit { suggestions, .. } => suggestions.clone(),
            _ => Vec::new(),
        };
        Class::Schedule.with_accepted(self.to_string(), accepted)
    }
}

impl ToPyErr for ModelError {
    fn to_pyerr(self) -> PyErr {
        Class::Model.with_accepted(self.to_string(), self.accepted())
    }
}

impl ToPyErr for TopologyError {
    fn to_pyerr(self) -> PyErr {
        if let TopologyError::Interrupted = self {
            return interrupted();
        }
        Class::Topology.with_accepted(self.to_string(), self.accepted())
    }
}

impl ToPyErr for NetworkError {
    fn to_pyerr(self) -> PyErr {
        match &self {
            NetworkError::Deadlock {
                time,
                in_flight,
                cycle,
            } => {
                let cycle: Vec<(u32, u32, u8)> =
                    cycle.iter().map(|c| (c.from, c.to, c.vc)).collect();
                let (time, in_flight) = (*time, *in_flight);
                Class::NetworkDeadlock.raise(self.to_string(), |_, d| {
                    d.set_item("cycle", cycle)?;
                    d.set_item("time_ps", time)?;
                    d.set_item("in_flight", in_flight)
                })
            }
            NetworkError::Spec(e) => Class::Network.with_accepted(self.to_string(), e.accepted()),
            NetworkError::Topology(e) => e.clone().to_pyerr(),
            NetworkError::Memory(e) => e.clone().to_pyerr(),
            NetworkError::Interrupted => interrupted(),
            _ => Class::Network.err(self.to_string()),
        }
    }
}

impl ToPyErr for SimError {
    fn to_pyerr(self) -> PyErr {
        match &self {
            SimError::Deadlock {
                unfinished_ops,
                stuck_ranks,
                stuck,
            } => {
                let (unfinished, ranks) = (*unfinished_ops, *stuck_ranks);
                let stuck: Vec<(u32, u32, String, String)> = stuck
                    .iter()
                    .map(|s| (s.rank, s.op, s.text.clone(), s.waits_for()))
                    .collect();
                Class::Deadlock.raise(self.to_string(), |py, d| {
                    let cls = errors_module(py)?.getattr("StuckOp")?;
                    let ops = stuck
                        .into_iter()
                        .map(|(rank, op, text, waits)| cls.call1((rank, op, text, waits)))
                        .collect::<PyResult<Vec<_>>>()?;
                    d.set_item("stuck", ops)?;
                    d.set_item("unfinished_ops", unfinished)?;
                    d.set_item("stuck_ranks", ranks)
                })
            }
            SimError::Network(e) => (**e).clone().to_pyerr(),
            SimError::Memory(e) => e.clone().to_pyerr(),
            SimError::Threads { .. } => Class::Schedule.err(self.to_string()),
            SimError::Interrupted => interrupted(),
            _ => Class::Simulation.err(self.to_string()),
        }
    }
}

impl ToPyErr for UnitError {
    fn to_pyerr(self) -> PyErr {
        Class::Unit.err(self.to_string())
    }
}

impl ToPyErr for TuningError {
    fn to_pyerr(self) -> PyErr {
        match self {
            TuningError::Schedule(e) => e.to_pyerr(),
            TuningError::Model(e) => e.to_pyerr(),
            TuningError::Simulation(e) => e.to_pyerr(),
            TuningError::BadParameter { ref name, .. } if name == "model" => {
                Class::Model.err(self.to_string())
            }
            e => Class::Schedule.err(e.to_string()),
        }
    }
}

impl ToPyErr for PhaseError {
    /// A topology that cannot be built is a `TopologyError`; every other phase error a
    /// `ScheduleError` (both `ValueError`s), with `accepted` where it names the accepted values.
    fn to_pyerr(self) -> PyErr {
        match self {
            PhaseError::Topology(e) => e.to_pyerr(),
            other => {
                let accepted = other.accepted();
                Class::Schedule.with_accepted(other.to_string(), accepted)
            }
        }
    }
}

impl ToPyErr for TraceError {
    fn to_pyerr(self) -> PyErr {
        match self {
            TraceError::Schedule(e) => e.to_pyerr(),
            e => Class::Trace.err(e.to_string()),
        }
    }
}

impl ToPyErr for LbmError {
    fn to_pyerr(self) -> PyErr {
        let accepted = self.accepted();
        Class::Lbm.with_accepted(self.to_string(), accepted)
    }
}
