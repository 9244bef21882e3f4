//! Bindings of the core's choice tables (every enumerated option: its names, aliases and help),
//! its one reader of "XxYxZ" sizes and its one reader of model files. Convert, call, convert.

use hypercuboid_core::collectives::alltoall::phases::{METHODS, PHASE_ROUTINGS};
use hypercuboid_core::collectives::alltoall::sync::SYNCS;
use hypercuboid_core::lbm::LAYOUTS;
use hypercuboid_core::model::{self, LEVELS, MAPPINGS};
use hypercuboid_core::network::packet::NIC_ORDERS;
use hypercuboid_core::network::routing::ROUTINGS;
use hypercuboid_core::schedule::goal::FORMATS;
use hypercuboid_core::spec::{self, Table};
use hypercuboid_core::topology::export::EXPORT_FORMATS;
use pyo3::prelude::*;

use crate::errors::{Class, PyResultExt};
use crate::guard::call;

/// Every table Python can list, by what it chooses.
static TABLES: &[&dyn Table] = &[
    &SYNCS,
    &METHODS,
    &PHASE_ROUTINGS,
    &LEVELS,
    &NIC_ORDERS,
    &MAPPINGS,
    &ROUTINGS,
    &EXPORT_FORMATS,
    &FORMATS,
    &LAYOUTS,
];

/// One value of an enumerated option: its name, the other names it answers to and one line of
/// help.
#[pyclass(name = "Choice", module = "hypercuboid._core", frozen, eq, hash)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PyChoice {
    /// The canonical name.
    #[pyo3(get)]
    name: &'static str,
    /// Other names accepted for it.
    #[pyo3(get)]
    aliases: Vec<&'static str>,
    /// One line of what it means.
    #[pyo3(get)]
    help: &'static str,
}

#[pymethods]
impl PyChoice {
    fn __repr__(&self) -> String {
        format!(
            "Choice(name={:?}, aliases={:?}, help={:?})",
            self.name, self.aliases, self.help
        )
    }
}

fn table(what: &str) -> PyResult<&'static dyn Table> {
    TABLES
        .iter()
        .copied()
        .find(|t| t.what() == what)
        .ok_or_else(|| {
            let names: Vec<&str> = TABLES.iter().map(|t| t.what()).collect();
            Class::Schedule.err(format!(
                "unknown choice table '{what}'; accepted: {}",
                names.join(", ")
            ))
        })
}

/// The values of the option `what` (a name of `choice_tables()`), in order, the default first
/// where it has one.
#[pyfunction]
fn choices(what: &str) -> PyResult<Vec<PyChoice>> {
    call(Class::Schedule, "choices", || {
        Ok(table(what)?
            .listed()
            .into_iter()
            .map(|c| PyChoice {
                name: c.name,
                aliases: c.aliases.to_vec(),
                help: c.help,
            })
            .collect())
    })
}

/// The canonical name of the value of `what` that `text` names (names and aliases match
/// without regard to case); raises a `ValueError` (a `ScheduleError`) "unknown WHAT 'TEXT';
/// accepted: ...".
#[pyfunction]
fn choice_name(what: &str, text: &str) -> PyResult<&'static str> {
    call(Class::Schedule, "choice_name", || {
        table(what)?
            .canonical(text)
            .map_err(|e| Class::Schedule.with_accepted(e.to_string(), e.accepted()))
    })
}

/// The options that have a choice table.
#[pyfunction]
fn choice_tables() -> PyResult<Vec<&'static str>> {
    call(Class::Schedule, "choice_tables", || {
        Ok(TABLES.iter().map(|t| t.what()).collect())
    })
}

/// Sizes joined by `x` (`64x64x64`): `count` whole numbers >= 1 (any number if None). A bad
/// value raises a `ValueError` (a `ScheduleError`) "WHAT 'TEXT': accepted ...".
#[pyfunction]
#[pyo3(signature = (text, what, count = Some(3)))]
fn parse_dims(text: &str, what: &str, count: Option<usize>) -> PyResult<Vec<u32>> {
    call(Class::Schedule, "parse_dims", || {
        spec::parse_dims(text, count)
            .map_err(|reason| Class::Schedule.err(format!("{what} '{text}': {reason}")))
    })
}

/// The model spec string of the model file at `path`, checked; raises `ModelError` starting
/// with the path.
#[pyfunction]
fn read_model_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<String> {
    call(Class::Model, "read_model_file", || {
        py.detach(|| model::read_model_file(&path)).py()
    })
}

/// Adds this module's class and functions to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [PyChoice],
        [
            choices,
            choice_tables,
            choice_name,
            parse_dims,
            read_model_file
        ]
    );
    Ok(())
}
