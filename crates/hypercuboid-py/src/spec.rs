//! Conversion of hypercuboid_core::spec tables: one `SpecForm` per entry of a table of spec
//! forms.

use hypercuboid_core::spec::Form;
use pyo3::prelude::*;

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

/// Adds the form class.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyForm>()?;
    Ok(())
}
