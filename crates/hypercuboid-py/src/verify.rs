//! The verifier's report (`hypercuboid_core::schedule::verify::Report`) as frozen classes.

use hypercuboid_core::schedule::verify::{self, Difference};
use pyo3::prelude::*;

/// Sizes of a verified schedule.
#[pyclass(name = "VerifyStats", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyVerifyStats {
    /// Ranks.
    ranks: u32,
    /// Ops over all ranks.
    ops: u64,
    /// Messages.
    messages: u64,
    /// Bytes over all messages.
    bytes: u64,
}

/// What the data semantics check found: flags, and the first difference of each kind (as
/// text, None where there is none).
#[pyclass(
    name = "VerifySemantics",
    module = "hypercuboid._core",
    frozen,
    get_all
)]
pub(crate) struct PyVerifySemantics {
    reduces: bool,
    correct: bool,
    same_order_commutative: bool,
    same_order_noncommutative: bool,
    canonical_order: bool,
    exact: bool,
    noncommutative_difference: Option<String>,
    commutative_difference: Option<String>,
    noncanonical: Option<String>,
}

/// The verifier's findings: `sound`, `problems` (lines) and their `problem_kinds`,
/// `truncated` (problems found but not listed), `notes`, `stats`, `semantics` (None when not
/// checked) and `text` (the whole report as the CLI prints it).
#[pyclass(name = "VerifyReport", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyVerifyReport {
    sound: bool,
    problems: Vec<String>,
    problem_kinds: Vec<String>,
    truncated: usize,
    notes: Vec<String>,
    stats: Py<PyVerifyStats>,
    semantics: Option<Py<PyVerifySemantics>>,
    text: String,
}

fn difference(x: &Option<Difference>) -> Option<String> {
    x.as_ref().map(|x| {
        format!(
            "rank {} element {}: {}  vs  rank {} element {}: {}",
            x.a.rank, x.a.element, x.a.expr, x.b.rank, x.b.element, x.b.expr
        )
    })
}

/// The report's classes.
pub(crate) fn report(py: Python<'_>, rep: &verify::Report) -> PyResult<PyVerifyReport> {
    let st = &rep.stats;
    let semantics = match &rep.semantics {
        None => None,
        Some(sem) => Some(Py::new(
            py,
            PyVerifySemantics {
                reduces: sem.reduces,
                correct: sem.correct,
                same_order_commutative: sem.same_order_commutative,
                same_order_noncommutative: sem.same_order_noncommutative,
                canonical_order: sem.canonical_order,
                exact: sem.exact,
                noncommutative_difference: difference(&sem.noncommutative_difference),
                commutative_difference: difference(&sem.commutative_difference),
                noncanonical: sem
                    .noncanonical
                    .as_ref()
                    .map(|x| format!("rank {} element {}: {}", x.rank, x.element, x.expr)),
            },
        )?),
    };
    Ok(PyVerifyReport {
        sound: rep.is_sound(),
        problems: rep.problems.iter().map(|p| p.to_string()).collect(),
        problem_kinds: rep.problems.iter().map(|p| p.kind().to_string()).collect(),
        truncated: rep.truncated,
        notes: rep.notes.clone(),
        stats: Py::new(
            py,
            PyVerifyStats {
                ranks: st.ranks,
                ops: st.ops,
                messages: st.messages,
                bytes: st.bytes,
            },
        )?,
        semantics,
        text: rep.to_string(),
    })
}

/// Adds the report's classes.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(m, [PyVerifyReport, PyVerifyStats, PyVerifySemantics], []);
    Ok(())
}
