//! Bindings of recursive multiplying (`collectives::allreduce::recursive_multiplying`): its
//! schedule strings and its schedule search: parse, fit, enumerate, count, estimate, optimise,
//! rank (GIL released).

use hypercuboid_core::collectives::allreduce::recursive_multiplying::search::{
    self as tuning, EnumerateOptions, Method, Params, RankOptions,
};
use hypercuboid_core::collectives::allreduce::{ScheduleString, Stage};
use hypercuboid_core::model::parse_model;
use pyo3::prelude::*;

use crate::args::{Count, DtypeArg, ModelParam, NRanks, Text};
use crate::errors::{Class, PyResultExt};
use crate::guard::{self, call};

fn parse_schedule(text: &str) -> PyResult<ScheduleString> {
    ScheduleString::parse(text).py()
}

fn options(factored: bool, split: bool, merged: bool, max_schedules: u64) -> EnumerateOptions {
    EnumerateOptions {
        factored,
        split,
        merged,
        max_schedules,
    }
}

/// A schedule string read: its canonical `text`, its `stages` as `(kind, x, y, z)` (kind a/c/e/m/n
/// with (B) / (T, B) / (R, G, B)), whether only factor stages (`factored`), and the N it fits
/// (`nranks`, None if none).
#[pyclass(name = "ScheduleString", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyScheduleString {
    text: String,
    stages: Vec<(&'static str, u32, u32, u32)>,
    factored: bool,
    nranks: Option<u32>,
}

/// How many schedules each family has.
#[pyclass(name = "ScheduleCounts", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyScheduleCounts {
    factored: u128,
    split: u128,
    merged: u128,
    total: u128,
}

impl PyScheduleCounts {
    fn of(c: &tuning::Counts) -> PyScheduleCounts {
        PyScheduleCounts {
            factored: c.factored,
            split: c.split,
            merged: c.merged,
            total: c.total(),
        }
    }
}

/// The model-optimal factored schedule: its text, its time (ps) and the divisors searched.
#[pyclass(
    name = "OptimalSchedule",
    module = "hypercuboid._core",
    frozen,
    get_all
)]
pub(crate) struct PyOptimalSchedule {
    schedule: String,
    time_ps: u64,
    divisors: usize,
}

/// The postal parameters a ranking used (ps, ps per byte) and the vector's bytes.
#[pyclass(name = "TuneParams", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyTuneParams {
    alpha_p_ps: u64,
    alpha_r_ps: u64,
    beta_ps_per_byte: f64,
    gamma_ps_per_byte: f64,
    delta_ps: u64,
    bytes: u64,
}

/// One ranked schedule: its text, its stages, its closed-form time and, when simulated, its
/// simulated time (ps).
#[pyclass(name = "TuneRow", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyTuneRow {
    schedule: String,
    stages: usize,
    predicted_ps: u64,
    simulated_ps: Option<u64>,
}

/// A ranking of schedules: `method` (`exhaustive`, with `counts`, or `dynamic_program`, with
/// `reason` and `divisors`), `b_opt`, how many were `simulated`, and the `rows`.
#[pyclass(name = "TuneReport", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyTuneReport {
    nranks: u32,
    model: String,
    params: Py<PyTuneParams>,
    b_opt: Option<f64>,
    method: &'static str,
    reason: Option<String>,
    divisors: Option<usize>,
    counts: Option<Py<PyScheduleCounts>>,
    simulated: usize,
    rows: Vec<Py<PyTuneRow>>,
}

fn stage_tuple(s: &Stage) -> (&'static str, u32, u32, u32) {
    match *s {
        Stage::Factor(b) => ("a", b, 0, 0),
        Stage::Collapse { threshold, base } => ("c", threshold, base, 0),
        Stage::Expand { threshold, base } => ("e", threshold, base, 0),
        Stage::Merge {
            remainder,
            groups,
            base,
        } => ("m", remainder, groups, base),
        Stage::InverseMerge {
            remainder,
            groups,
            base,
        } => ("n", remainder, groups, base),
    }
}

/// Parses a schedule string (see [`PyScheduleString`]).
#[pyfunction]
fn rm_parse(text: &str) -> PyResult<PyScheduleString> {
    call(Class::Schedule, "rm_parse", || {
        let s = parse_schedule(text)?;
        Ok(PyScheduleString {
            text: s.to_string(),
            stages: s.stages().iter().map(stage_tuple).collect(),
            factored: s.is_factored(),
            nranks: s.nranks(),
        })
    })
}

/// Checks that a schedule fits `nranks`; raises ScheduleError saying why not (with
/// suggestions).
#[pyfunction]
fn rm_fit(text: &str, nranks: NRanks) -> PyResult<()> {
    call(Class::Schedule, "rm_fit", || {
        let s = parse_schedule(text)?;
        s.fit(nranks.0).py()?;
        Ok(())
    })
}

/// A few schedules that fit `nranks`.
#[pyfunction]
fn rm_suggest(nranks: NRanks) -> PyResult<Vec<String>> {
    call(Class::Schedule, "rm_suggest", || {
        Ok(tuning::suggest(nranks.0)
            .iter()
            .map(|s| s.to_string())
            .collect())
    })
}

/// Every schedule of `nranks` in the selected families (see the core's `for_each_schedule`).
#[pyfunction]
#[pyo3(signature = (nranks, factored = true, split = true, merged = true, max_schedules = tuning::DEFAULT_MAX_SCHEDULES))]
fn rm_enumerate(
    py: Python<'_>,
    nranks: NRanks,
    factored: bool,
    split: bool,
    merged: bool,
    max_schedules: u64,
) -> PyResult<Vec<String>> {
    call(Class::Schedule, "rm_enumerate", || {
        let n = nranks.0;
        let opts = options(factored, split, merged, max_schedules);
        guard::detach(py, move || {
            let mut out = Vec::new();
            tuning::for_each_schedule(n, &opts, &mut |s| out.push(s.to_string())).map(|_| out)
        })
        .py()
    })
}

/// How many schedules each family has: `{factored, split, merged, total}`.
#[pyfunction]
#[pyo3(signature = (nranks, factored = true, split = true, merged = true))]
fn rm_count(
    py: Python<'_>,
    nranks: NRanks,
    factored: bool,
    split: bool,
    merged: bool,
) -> PyResult<PyScheduleCounts> {
    call(Class::Schedule, "rm_count", || {
        let c = guard::detach(py, || {
            tuning::count_schedules(nranks.0, &options(factored, split, merged, 0))
        })
        .py()?;
        Ok(PyScheduleCounts::of(&c))
    })
}

fn params_from(model: &str, bytes: u64) -> PyResult<Params> {
    let spec = parse_model(model).py()?;
    Params::from_model(&spec, bytes).py()
}

/// The closed-form time (ps) of a schedule on `nranks` ranks under `model` (postal or
/// pipelined spec) for vectors of `bytes` bytes.
#[pyfunction]
#[pyo3(signature = (schedule, nranks, model, bytes = 0))]
fn rm_estimate(
    schedule: &str,
    nranks: NRanks,
    model: Text<ModelParam>,
    bytes: u64,
) -> PyResult<u64> {
    call(Class::Schedule, "rm_estimate", || {
        let s = parse_schedule(schedule)?;
        let p = params_from(model.as_str(), bytes)?;
        tuning::estimate(&s, nranks.0, &p).py()
    })
}

/// The model-optimal factored schedule (dynamic program): `{schedule, time_ps, divisors}`.
#[pyfunction]
#[pyo3(signature = (nranks, model, bytes = 0))]
fn rm_optimal(
    py: Python<'_>,
    nranks: NRanks,
    model: Text<ModelParam>,
    bytes: u64,
) -> PyResult<PyOptimalSchedule> {
    call(Class::Schedule, "rm_optimal", || {
        let n = nranks.0;
        let p = params_from(model.as_str(), bytes)?;
        let o = guard::detach(py, move || tuning::optimal_factored(n, &p)).py()?;
        Ok(PyOptimalSchedule {
            schedule: o.schedule.to_string(),
            time_ps: o.time,
            divisors: o.divisors,
        })
    })
}

/// Eq. 5: the real `b` minimising `(α_p + b α_r) log_{b+1} N` for `ratio = α_p/α_r`.
#[pyfunction]
fn b_opt(ratio: f64) -> PyResult<f64> {
    call(Class::Schedule, "b_opt", || tuning::b_opt(ratio).py())
}

/// The best integer `b` for `ratio`.
#[pyfunction]
fn b_opt_integer(ratio: f64) -> PyResult<u32> {
    call(Class::Schedule, "b_opt_integer", || {
        tuning::b_opt_integer(ratio).py()
    })
}

/// Ranks the schedules of `nranks` ranks under `model` (postal or pipelined spec) for `count`
/// elements of `dtype`; with `simulate`, simulates the `pool` best by the closed form on the
/// same model and ranks them by simulated time. Returns `{nranks, model, params, b_opt,
/// method ("exhaustive" or "dynamic_program"), reason, divisors, counts, simulated, rows:
/// [{schedule, stages, predicted_ps, simulated_ps}]}` (a `TuneReport`).
#[pyfunction]
#[pyo3(signature = (
    nranks,
    model,
    count = Count(RankOptions::default().count),
    dtype = DtypeArg(RankOptions::default().dtype),
    top = RankOptions::default().top,
    simulate = false,
    pool = RankOptions::default().pool,
    max_schedules = tuning::DEFAULT_MAX_SCHEDULES,
    factored = true,
    split = true,
    merged = true,
))]
#[allow(clippy::too_many_arguments)]
fn tune_allreduce(
    py: Python<'_>,
    nranks: NRanks,
    model: Text<ModelParam>,
    count: Count,
    dtype: DtypeArg,
    top: usize,
    simulate: bool,
    pool: usize,
    max_schedules: u64,
    factored: bool,
    split: bool,
    merged: bool,
) -> PyResult<PyTuneReport> {
    call(Class::Schedule, "tune_allreduce", || {
        let (n, count, dt) = (nranks.0, count.0, dtype.0);
        let spec = parse_model(model.as_str()).py()?;
        let p = Params::from_model_count(&spec, count, dt).py()?;
        let opts = RankOptions {
            top,
            enumerate: options(factored, split, merged, max_schedules),
            simulate: simulate.then(|| spec.clone()),
            pool,
            count,
            dtype: dt,
        };
        let r = guard::detach(py, move || tuning::rank_schedules(n, &p, &opts)).py()?;
        let m = &r.params.model;
        let params = PyTuneParams {
            alpha_p_ps: m.alpha_p,
            alpha_r_ps: m.alpha_r,
            beta_ps_per_byte: m.beta,
            gamma_ps_per_byte: m.gamma,
            delta_ps: m.delta,
            bytes: r.params.bytes,
        };
        let (method, reason, divisors, counts) = match &r.method {
            Method::Exhaustive { counts } => (
                "exhaustive",
                None,
                None,
                Some(Py::new(py, PyScheduleCounts::of(counts))?),
            ),
            Method::DynamicProgram { reason, divisors } => (
                "dynamic_program",
                Some(reason.clone()),
                Some(*divisors),
                None,
            ),
        };
        let rows = r
            .rows
            .iter()
            .map(|row| {
                Py::new(
                    py,
                    PyTuneRow {
                        schedule: row.schedule.to_string(),
                        stages: row.schedule.len(),
                        predicted_ps: row.predicted,
                        simulated_ps: row.simulated,
                    },
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyTuneReport {
            nranks: r.nranks,
            model: spec.to_string(),
            params: Py::new(py, params)?,
            b_opt: r.b_opt,
            method,
            reason,
            divisors,
            counts,
            simulated: r.simulated,
            rows,
        })
    })
}

/// Adds this module's functions to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [
            PyScheduleString,
            PyScheduleCounts,
            PyOptimalSchedule,
            PyTuneParams,
            PyTuneRow,
            PyTuneReport
        ],
        [
            rm_parse,
            rm_fit,
            rm_suggest,
            rm_enumerate,
            rm_count,
            rm_estimate,
            rm_optimal,
            b_opt,
            b_opt_integer,
            tune_allreduce
        ]
    );
    Ok(())
}
