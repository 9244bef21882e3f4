//! Conversion of hypercuboid_core::spec tables: one `SpecForm` per entry of a table of spec
//! forms (and, for `netsim_forms`, the dicts the CLI still reads).

use hypercuboid_core::spec::Form;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// One entry of a table of spec forms: `name`, `aliases`, `summary`, `keys` ((name, help)
/// pairs), `positional` (what its positional argument is, None without one), `usage` (the name
/// with its positional argument, as error messages list it), `example`.
#[pyclass(name = "SpecForm", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyForm {
    name: &'static str,
    aliases: Vec<&'static str>,
    summary: &'static str,
    keys: Vec<(&'static str, &'static str)>,
    positional: Option<&'static str>,
    usage: String,
    example: &'static str,
}

impl PyForm {
    /// The class of `f`, its positional argument named `positional`.
    pub(crate) fn with_positional(f: &Form, positional: Option<&'static str>) -> PyForm {
        PyForm {
            name: f.name,
            aliases: f.aliases.to_vec(),
            summary: f.summary,
            keys: f.keys.iter().map(|k| (k.name, k.help)).collect(),
            positional,
            usage: f.usage(),
            example: f.example,
        }
    }

    /// The class of `f`.
    pub(crate) fn of(f: &Form) -> PyForm {
        PyForm::with_positional(f, f.positional_name())
    }
}

/// The forms of a table as classes.
pub(crate) fn form_list<E>(entries: &[E], form: impl Fn(&E) -> &Form) -> Vec<PyForm> {
    entries.iter().map(|e| PyForm::of(form(e))).collect()
}

/// The forms of a table as dicts: `name`, `aliases`, `summary`, `keys` ((name, help) pairs),
/// `usage`, `example` (what `netsim_forms` returns).
pub(crate) fn forms<'py, E>(
    py: Python<'py>,
    entries: &[E],
    form: impl Fn(&E) -> &Form,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for e in entries {
        let f = form(e);
        let d = PyDict::new(py);
        d.set_item("name", f.name)?;
        d.set_item("aliases", f.aliases.to_vec())?;
        d.set_item("summary", f.summary)?;
        let keys: Vec<(&str, &str)> = f.keys.iter().map(|k| (k.name, k.help)).collect();
        d.set_item("keys", keys)?;
        d.set_item("usage", f.usage())?;
        d.set_item("example", f.example)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Adds the form class.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyForm>()?;
    Ok(())
}
