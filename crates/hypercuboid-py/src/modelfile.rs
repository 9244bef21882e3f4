//! Bindings of the model-file reader (`hypercuboid_core::model::read_model_file_full`) and of
//! node specs (`hypercuboid_core::model::parse_node`).

use hypercuboid_core::model::{self, parse_node, NODES};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{Class, PyResultExt};
use crate::guard::call;
use crate::spec::{form_list, PyForm};

/// A model file as the core reads it: `model` (the model spec as written), `node` (the node
/// spec, or None), `models` (further model specs by name, a dict), `library`, `nranks`,
/// `ranks_per_node` (or None each) and `fits` (the free-form JSON value, or None).
#[pyclass(name = "ModelFile", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyModelFile {
    model: String,
    node: Option<String>,
    models: Py<PyDict>,
    library: Option<String>,
    nranks: Option<u32>,
    ranks_per_node: Option<u32>,
    fits: Py<PyAny>,
}

#[pymethods]
impl PyModelFile {
    fn __repr__(&self) -> String {
        match &self.node {
            Some(n) => format!("ModelFile(model={:?}, node={n:?})", self.model),
            None => format!("ModelFile(model={:?})", self.model),
        }
    }
}

/// Reads the model file at `path` with every key the core reads; raises `ModelError` starting
/// with the path and saying what is wrong.
#[pyfunction]
fn load_model_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<PyModelFile> {
    call(Class::Model, "load_model_file", || {
        let f = py.detach(|| model::read_model_file_full(&path)).py()?;
        let models = PyDict::new(py);
        for (k, v) in &f.models {
            models.set_item(k, v)?;
        }
        let fits = match &f.fits {
            None => py.None(),
            Some(text) => py
                .import("json")?
                .call_method1("loads", (text.as_str(),))?
                .unbind(),
        };
        Ok(PyModelFile {
            model: f.model,
            node: f.node,
            models: models.unbind(),
            library: f.library,
            nranks: f.nranks,
            ranks_per_node: f.ranks_per_node,
            fits,
        })
    })
}

/// Validates a node spec; returns it in canonical form.
#[pyfunction(name = "parse_node")]
fn parse_node_py(spec: &str) -> PyResult<String> {
    crate::sim::canonical("parse_node", parse_node, spec)
}

/// The node specs a spec may name (one: `node`).
#[pyfunction]
fn node_forms() -> PyResult<Vec<PyForm>> {
    call(Class::Model, "node_forms", || Ok(form_list(NODES, |f| f)))
}

/// Adds this module's class and functions to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [PyModelFile],
        [load_model_file, parse_node_py, node_forms]
    );
    Ok(())
}
