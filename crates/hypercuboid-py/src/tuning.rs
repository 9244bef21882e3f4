//! Bindings of recursive multiplying (`collectives::allreduce::recursive_multiplying`): its
//! schedule strings and its schedule search: parse, fit, enumerate, count, estimate, optimise,
//! rank (GIL released).

use hypercuboid_core::collectives::allreduce::recursive_multiplying::search::{
    self as tuning, EnumerateOptions, Method, Params, RankOptions,
};
use hypercuboid_core::collectives::allreduce::{ScheduleString, Stage};
use hypercuboid_core::model::parse_model;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

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

/// Parses a schedule string: `{text, stages: [(kind, x, y, z)], factored, nranks}` where kind is
/// a/c/e/m/n with (B) / (T, B) / (R, G, B) and `nranks` the N it fits (None if none).
#[pyfunction]
fn rm_parse<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    call(Class::Schedule, "rm_parse", || {
        let s = parse_schedule(text)?;
        let d = PyDict::new(py);
        d.set_item("text", s.to_string())?;
        let stages: Vec<(&str, u32, u32, u32)> = s.stages().iter().map(stage_tuple).collect();
        d.set_item("stages", stages)?;
        d.set_item("factored", s.is_factored())?;
        d.set_item("nranks", s.nranks())?;
        Ok(d)
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
fn rm_count<'py>(
    py: Python<'py>,
    nranks: NRanks,
    factored: bool,
    split: bool,
    merged: bool,
) -> PyResult<Bound<'py, PyDict>> {
    call(Class::Schedule, "rm_count", || {
        let c = guard::detach(py, || {
            tuning::count_schedules(nranks.0, &options(factored, split, merged, 0))
        })
        .py()?;
        let d = PyDict::new(py);
        d.set_item("factored", c.factored)?;
        d.set_item("split", c.split)?;
        d.set_item("merged", c.merged)?;
        d.set_item("total", c.total())?;
        Ok(d)
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
fn rm_optimal<'py>(
    py: Python<'py>,
    nranks: NRanks,
    model: Text<ModelParam>,
    bytes: u64,
) -> PyResult<Bound<'py, PyDict>> {
    call(Class::Schedule, "rm_optimal", || {
        let n = nranks.0;
        let p = params_from(model.as_str(), bytes)?;
        let o = guard::detach(py, move || tuning::optimal_factored(n, &p)).py()?;
        let d = PyDict::new(py);
        d.set_item("schedule", o.schedule.to_string())?;
        d.set_item("time_ps", o.time)?;
        d.set_item("divisors", o.divisors)?;
        Ok(d)
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
/// [{schedule, stages, predicted_ps, simulated_ps}]}`.
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
fn tune_allreduce<'py>(
    py: Python<'py>,
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
) -> PyResult<Bound<'py, PyDict>> {
    call(Class::Schedule, "tune_allreduce", || {
        let (n, count, dt) = (nranks.0, count.0, dtype.0);
        let spec = parse_model(model.as_str()).py()?;
        let bytes = count.checked_mul(dt.size() as u64).ok_or_else(|| {
            Class::Schedule.err(format!(
                "invalid count {count}: {count} elements of {} exceed 2^64 - 1 bytes",
                dt.name()
            ))
        })?;
        let p = Params::from_model(&spec, bytes).py()?;
        let opts = RankOptions {
            top,
            enumerate: options(factored, split, merged, max_schedules),
            simulate: simulate.then(|| spec.clone()),
            pool,
            count,
            dtype: dt,
        };
        let r = guard::detach(py, move || tuning::rank_schedules(n, &p, &opts)).py()?;
        let d = PyDict::new(py);
        d.set_item("nranks", r.nranks)?;
        d.set_item("model", spec.to_string())?;
        let pd = PyDict::new(py);
        pd.set_item("alpha_p_ps", r.params.model.alpha_p)?;
        pd.set_item("alpha_r_ps", r.params.model.alpha_r)?;
        pd.set_item("beta_ps_per_byte", r.params.model.beta)?;
        pd.set_item("gamma_ps_per_byte", r.params.model.gamma)?;
        pd.set_item("delta_ps", r.params.model.delta)?;
        pd.set_item("bytes", r.params.bytes)?;
        d.set_item("params", pd)?;
        d.set_item("b_opt", r.b_opt)?;
        match &r.method {
            Method::Exhaustive { counts } => {
                d.set_item("method", "exhaustive")?;
                d.set_item("reason", py.None())?;
                d.set_item("divisors", py.None())?;
                let c = PyDict::new(py);
                c.set_item("factored", counts.factored)?;
                c.set_item("split", counts.split)?;
                c.set_item("merged", counts.merged)?;
                c.set_item("total", counts.total())?;
                d.set_item("counts", c)?;
            }
            Method::DynamicProgram { reason, divisors } => {
                d.set_item("method", "dynamic_program")?;
                d.set_item("reason", reason)?;
                d.set_item("divisors", *divisors)?;
                d.set_item("counts", py.None())?;
            }
        }
        d.set_item("simulated", r.simulated)?;
        let rows = PyList::empty(py);
        for row in &r.rows {
            let x = PyDict::new(py);
            x.set_item("schedule", row.schedule.to_string())?;
            x.set_item("stages", row.schedule.len())?;
            x.set_item("predicted_ps", row.predicted)?;
            x.set_item("simulated_ps", row.simulated)?;
            rows.append(x)?;
        }
        d.set_item("rows", rows)?;
        Ok(d)
    })
}

/// Adds this module's functions to `hypercuboid._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rm_parse, m)?)?;
    m.add_function(wrap_pyfunction!(rm_fit, m)?)?;
    m.add_function(wrap_pyfunction!(rm_suggest, m)?)?;
    m.add_function(wrap_pyfunction!(rm_enumerate, m)?)?;
    m.add_function(wrap_pyfunction!(rm_count, m)?)?;
    m.add_function(wrap_pyfunction!(rm_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(rm_optimal, m)?)?;
    m.add_function(wrap_pyfunction!(b_opt, m)?)?;
    m.add_function(wrap_pyfunction!(b_opt_integer, m)?)?;
    m.add_function(wrap_pyfunction!(tune_allreduce, m)?)?;
    Ok(())
}
