//! Bindings of hypercuboid_core::sim and ::model: simulate a schedule on a cost model.

use hypercuboid_core::model::{parse_model, parse_noise, MODELS, NOISES};
use hypercuboid_core::sim::{self, SimOptions};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{error, PyResultExt};
use crate::schedule::PySchedule;

/// Simulates the schedule on `model` (a spec string). Returns a dict: `model` (canonical
/// spec), `completion_ps`, `rank_finish_ps` (uint64 array), `ops`, `messages`, and `trace`
/// (None, or a dict of NumPy columns) — with `chrome_trace` a path, the trace is also
/// written there as Chrome / Perfetto JSON. The GIL is released while simulating.
pub(crate) fn simulate<'py>(
    this: &PySchedule,
    py: Python<'py>,
    model: &str,
    trace: bool,
    noise: Option<&str>,
    seed: u64,
    chrome_trace: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = parse_model(model).py()?;
    let noise = noise.map(parse_noise).transpose().py()?;
    let opts = SimOptions {
        trace: trace || chrome_trace.is_some(),
        noise,
        seed,
    };
    let s = this.inner.clone();
    let spec2 = spec.clone();
    let res = py.detach(move || sim::simulate(&s, &spec2, &opts)).py()?;
    if let (Some(path), Some(t)) = (&chrome_trace, &res.trace) {
        let t = t.clone();
        let p = path.clone();
        py.detach(move || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&p)?;
            sim::write_chrome_trace(&t, &mut f)
        })
        .map_err(|e| error("SimulationError", format!("{}: {e}", path)))?;
    }
    let d = PyDict::new(py);
    d.set_item("model", spec.to_string())?;
    d.set_item("completion_ps", res.completion)?;
    d.set_item("rank_finish_ps", res.rank_finish.into_pyarray(py))?;
    d.set_item("ops", res.ops)?;
    d.set_item("messages", res.messages)?;
    match (trace, res.trace) {
        (true, Some(t)) => {
            let c = PyDict::new(py);
            c.set_item("op_rank", t.op_rank.into_pyarray(py))?;
            c.set_item("op_index", t.op_index.into_pyarray(py))?;
            let kinds: Vec<u8> = t.op_kind.iter().map(|k| *k as u8).collect();
            c.set_item("op_kind", kinds.into_pyarray(py))?;
            c.set_item("op_start", t.op_start.into_pyarray(py))?;
            c.set_item("op_end", t.op_end.into_pyarray(py))?;
            c.set_item("msg_src", t.msg_src.into_pyarray(py))?;
            c.set_item("msg_dst", t.msg_dst.into_pyarray(py))?;
            c.set_item("msg_src_op", t.msg_src_op.into_pyarray(py))?;
            c.set_item("msg_dst_op", t.msg_dst_op.into_pyarray(py))?;
            c.set_item("msg_depart", t.msg_start.into_pyarray(py))?;
            c.set_item("msg_arrival", t.msg_arrival.into_pyarray(py))?;
            c.set_item("msg_bytes", t.msg_bytes.into_pyarray(py))?;
            d.set_item("trace", c)?;
        }
        _ => d.set_item("trace", py.None())?,
    }
    Ok(d)
}

/// Validates a cost-model spec; returns it in canonical form.
#[pyfunction(name = "parse_model")]
fn parse_model_py(spec: &str) -> PyResult<String> {
    Ok(parse_model(spec).py()?.to_string())
}

/// Validates a noise spec; returns it in canonical form.
#[pyfunction(name = "parse_noise")]
fn parse_noise_py(spec: &str) -> PyResult<String> {
    Ok(parse_noise(spec).py()?.to_string())
}

/// The cost models a spec may name (see `spec::forms` for the dicts).
#[pyfunction]
fn model_forms(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    crate::spec::forms(py, MODELS, |e| &e.form)
}

/// The noise distributions a spec may name (see `spec::forms` for the dicts).
#[pyfunction]
fn noise_forms(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    crate::spec::forms(py, NOISES, |e| &e.form)
}

/// Adds this module's functions and classes to `hypercuboid._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_model_py, m)?)?;
    m.add_function(wrap_pyfunction!(parse_noise_py, m)?)?;
    m.add_function(wrap_pyfunction!(model_forms, m)?)?;
    m.add_function(wrap_pyfunction!(noise_forms, m)?)?;
    Ok(())
}
