//! Bindings of `hypercuboid_core::predict`: a grid of algorithms x sizes x rank counts
//! simulated under one model (GIL released), and the algorithms a grid runs by default.

use hypercuboid_core::model::{parse_model, parse_node};
use hypercuboid_core::predict::{self as grid, Collective, Grid};
use pyo3::prelude::*;

use crate::args::{DtypeArg, ModelParam, RanksParam, SizesParam, Text, ThreadsParam, Whole};
use crate::errors::{Class, PyResultExt};
use crate::guard::{self, call};

/// One grid point: `nranks`, `bytes`, the `algorithm` as given, the `schedule` that ran
/// (None if it could not be built), its simulated `time_ps` or the `error` saying why there is
/// none, and whether it is the `best` of its (nranks, bytes).
#[pyclass(name = "Prediction", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyPrediction {
    nranks: u32,
    bytes: u64,
    algorithm: String,
    schedule: Option<String>,
    time_ps: Option<u64>,
    error: Option<String>,
    best: bool,
}

/// A grid's predictions: the `collective`, the `model` (canonical), the element type
/// (`dtype`) and the `rows` (rank counts outermost, then sizes, then algorithms).
#[pyclass(name = "Predicted", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyPredicted {
    collective: &'static str,
    model: String,
    dtype: &'static str,
    rows: Vec<Py<PyPrediction>>,
}

/// Predicts `algorithms` (None: every one that runs from its name, `predict_algorithms`) of
/// `collective` at every size in `sizes` (bytes) and rank count in `ranks` under `model` (with
/// `node`, a `node:ranks=R,bw=BW` spec, on the node level over the LogGOPS host `model`), on
/// `threads` threads (0: every core); `tuning`, a postal or pipelined spec that
/// `recursive_multiplying:auto` is tuned under when `model` is LogGOPS.
#[pyfunction]
#[pyo3(signature = (collective, algorithms, sizes, ranks, model, dtype = None, threads = Whole::of(0), node = None, tuning = None))]
#[allow(clippy::too_many_arguments)]
fn predict(
    py: Python<'_>,
    collective: &str,
    algorithms: Option<Vec<String>>,
    sizes: Vec<Whole<SizesParam, u64>>,
    ranks: Vec<Whole<RanksParam, u32>>,
    model: Text<ModelParam>,
    dtype: Option<DtypeArg>,
    threads: Whole<ThreadsParam, usize>,
    node: Option<&str>,
    tuning: Option<&str>,
) -> PyResult<PyPredicted> {
    call(Class::Schedule, "predict", || {
        let c = Collective::parse(collective).py()?;
        let spec = parse_model(model.as_str()).py()?;
        let node = node.map(parse_node).transpose().py()?;
        let tuning = tuning.map(parse_model).transpose().py()?;
        let g = Grid {
            collective: c,
            algorithms: algorithms.unwrap_or_else(|| c.default_algorithms()),
            sizes: sizes.iter().map(|s| s.0).collect(),
            ranks: ranks.iter().map(|n| n.0).collect(),
            dtype: dtype.map_or(c.default_dtype(), |d| d.0),
            tuning,
        };
        let dtype = g.dtype.name();
        let p = guard::detach(py, move || {
            grid::predict_on(&g, &spec, node.as_ref(), threads.0)
        })
        .py()?;
        let rows = p
            .rows
            .into_iter()
            .map(|r| {
                let (time_ps, error) = match r.time {
                    Ok(t) => (Some(t), None),
                    Err(e) => (None, Some(e)),
                };
                Py::new(
                    py,
                    PyPrediction {
                        nranks: r.nranks,
                        bytes: r.bytes,
                        algorithm: r.algorithm,
                        schedule: r.schedule,
                        time_ps,
                        error,
                        best: r.best,
                    },
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyPredicted {
            collective: p.collective.name(),
            model: p.model,
            dtype,
            rows,
        })
    })
}

/// The algorithms a grid of `collective` runs unless told (`recursive_multiplying:auto` in
/// the place of `recursive_multiplying`), and the collectives predict knows.
#[pyfunction]
fn predict_algorithms(collective: &str) -> PyResult<Vec<String>> {
    call(Class::Schedule, "predict_algorithms", || {
        Ok(Collective::parse(collective).py()?.default_algorithms())
    })
}

/// The collectives predict knows, each with the element type a grid of it uses unless told.
#[pyfunction]
fn predict_collectives() -> Vec<(&'static str, &'static str)> {
    Collective::ALL
        .iter()
        .map(|c| (c.name(), c.default_dtype().name()))
        .collect()
}

/// Adds this module's functions to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [PyPrediction, PyPredicted],
        [predict, predict_algorithms, predict_collectives]
    );
    Ok(())
}
