//! Conversion of hypercuboid_core::spec tables: one dict per entry of a table of spec forms.

use hypercuboid_core::spec::Form;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The forms of a table as dicts: `name`, `aliases`, `summary`, `keys` ((name, help) pairs),
/// `usage` (the name with its positional argument, as error messages list it), `example`.
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
