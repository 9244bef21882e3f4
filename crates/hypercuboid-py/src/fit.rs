//! Bindings of the calibration fits (`hypercuboid_core::calibrate`): least squares,
//! non-negative least squares, lines, piecewise lines, contention, the node's bandwidth,
//! LogGOPS, chains of steps and LogGOPS's step parameters. Each converts
//! its lists, calls the core and wraps the result in a typed class. A bad input raises
//! `ModelError` (a `ValueError`) with the core's one-line message.

use hypercuboid_core::calibrate::{self as fit, FitError};
use pyo3::prelude::*;

use crate::errors::{Class, PyResultExt, ToPyErr};
use crate::guard::call;

impl ToPyErr for FitError {
    fn to_pyerr(self) -> PyErr {
        Class::Model.err(self.to_string())
    }
}

/// A linear fit: `coef` (one per column), weighted `r2`, and per point `predicted` and
/// `residuals` (measured less predicted).
#[pyclass(name = "LinearFit", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyLinearFit {
    coef: Vec<f64>,
    r2: f64,
    predicted: Vec<f64>,
    residuals: Vec<f64>,
}

impl From<fit::LinearFit> for PyLinearFit {
    fn from(f: fit::LinearFit) -> Self {
        PyLinearFit {
            coef: f.coef,
            r2: f.r2,
            predicted: f.predicted,
            residuals: f.residuals,
        }
    }
}

/// One segment of a piecewise fit: points `first..end`, x from `lo` to `hi`, the line
/// `intercept + slope·x` and its `r2`.
#[pyclass(name = "FitSegment", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PySegment {
    first: usize,
    end: usize,
    lo: f64,
    hi: f64,
    intercept: f64,
    slope: f64,
    r2: f64,
}

/// Piecewise lines: `segments`, `breaks` (x of each later segment's first point), `r2`,
/// `predicted`, `residuals`, `sse` (the least squared relative error with 1, 2, ...
/// segments) and `switches` (the core's `PiecewiseFit::switches`: (size, jump) per protocol
/// switch, ascending).
#[pyclass(name = "PiecewiseFit", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyPiecewiseFit {
    segments: Vec<Py<PySegment>>,
    breaks: Vec<f64>,
    r2: f64,
    predicted: Vec<f64>,
    residuals: Vec<f64>,
    sse: Vec<f64>,
    switches: Vec<(f64, f64)>,
}

fn piecewise_py(py: Python<'_>, f: fit::PiecewiseFit) -> PyResult<PyPiecewiseFit> {
    let switches = f.switches();
    let segments = f
        .segments
        .into_iter()
        .map(|s| {
            Py::new(
                py,
                PySegment {
                    first: s.first,
                    end: s.end,
                    lo: s.lo,
                    hi: s.hi,
                    intercept: s.intercept,
                    slope: s.slope,
                    r2: s.r2,
                },
            )
        })
        .collect::<PyResult<_>>()?;
    Ok(PyPiecewiseFit {
        segments,
        breaks: f.breaks,
        r2: f.r2,
        predicted: f.predicted,
        residuals: f.residuals,
        sse: f.sse,
        switches,
    })
}

/// A node's shared bandwidth: `bandwidth` (a lower bound unless `saturated`), `r2` (of the
/// logarithms), `predicted` = min(single, bandwidth/k) and `residuals` per point.
#[pyclass(name = "ContentionFit", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyContentionFit {
    bandwidth: f64,
    saturated: bool,
    r2: f64,
    predicted: Vec<f64>,
    residuals: Vec<f64>,
}

/// LogGOPS fitted (times in the inputs' unit): `latency` (L), `latency_excess`, `overhead`
/// (o), `gap` (g), `gap_per_byte` (G), the pipelined model's `alpha_r`, `alpha_p` and
/// `alpha_p_shortfall`, `eager_limit` (S or None), the `pingpong`, `train` and
/// `overhead_train` fits, and the model's `r2`, `predicted` and `residuals` on the ping-pong.
#[pyclass(name = "LogGopsFit", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyLogGopsFit {
    latency: f64,
    latency_excess: f64,
    overhead: f64,
    gap: f64,
    gap_per_byte: f64,
    alpha_r: f64,
    alpha_p: f64,
    alpha_p_shortfall: f64,
    eager_limit: Option<f64>,
    pingpong: Py<PyPiecewiseFit>,
    train: Py<PyLinearFit>,
    overhead_train: Py<PyLinearFit>,
    r2: f64,
    predicted: Vec<f64>,
    residuals: Vec<f64>,
}

/// Chains of `k` steps fitted as `C + k·x(s)`: `call` (C), `sizes` (ascending, once each),
/// `step` (x of each size), `r2`, and per chain `predicted` and `residuals`.
#[pyclass(name = "ChainFit", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyChainFit {
    call: f64,
    sizes: Vec<f64>,
    step: Vec<f64>,
    r2: f64,
    predicted: Vec<f64>,
    residuals: Vec<f64>,
}

/// LogGOPS's step parameters (the core's `StepsFit`): `latency` (L), `latency_excess`,
/// `gap_per_byte` (G), `two_flows_gap_per_byte` (G2), `eager_limit` (S), `eager_found`,
/// `rendezvous` (R), `second_limit` (S2 or None), `second_rendezvous` (R2), `exchange_wait`
/// (X), `switches` ((size, jump), largest first), `breaks` (per kind of step), `r2`, and per
/// step fitted `sizes`, `exchange`, `times`, `predicted` and `residuals`.
#[pyclass(name = "StepsFit", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyStepsFit {
    latency: f64,
    latency_excess: f64,
    gap_per_byte: f64,
    two_flows_gap_per_byte: f64,
    eager_limit: f64,
    eager_found: bool,
    rendezvous: f64,
    second_limit: Option<f64>,
    second_rendezvous: f64,
    exchange_wait: f64,
    switches: Vec<(f64, f64)>,
    breaks: Vec<Vec<f64>>,
    r2: f64,
    sizes: Vec<f64>,
    exchange: Vec<bool>,
    times: Vec<f64>,
    predicted: Vec<f64>,
    residuals: Vec<f64>,
}

/// Least squares `y ≈ Σ coef_j · columns[j]`, each residual multiplied by its weight;
/// `nonnegative`: every coefficient `>= 0` (Lawson–Hanson).
#[pyfunction]
#[pyo3(signature = (columns, y, weights=None, nonnegative=false))]
fn fit_least_squares(
    columns: Vec<Vec<f64>>,
    y: Vec<f64>,
    weights: Option<Vec<f64>>,
    nonnegative: bool,
) -> PyResult<PyLinearFit> {
    call(Class::Model, "fit_least_squares", || {
        let cols: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
        let f = if nonnegative {
            fit::nnls(&cols, &y, weights.as_deref())
        } else {
            fit::least_squares(&cols, &y, weights.as_deref())
        };
        Ok(f.py()?.into())
    })
}

/// `y ≈ a + b·x` with `a, b >= 0`; `relative` weighs each point by `1/y`. `coef` is `[a, b]`.
#[pyfunction]
#[pyo3(signature = (x, y, relative=false))]
fn fit_line(x: Vec<f64>, y: Vec<f64>, relative: bool) -> PyResult<PyLinearFit> {
    call(Class::Model, "fit_line", || {
        Ok(fit::fit_line(&x, &y, relative).py()?.into())
    })
}

/// Piecewise lines with break points (x ascending, y > 0; relative weights).
#[pyfunction]
#[pyo3(signature = (x, y, max_segments=3, min_points=3))]
fn fit_piecewise(
    py: Python<'_>,
    x: Vec<f64>,
    y: Vec<f64>,
    max_segments: usize,
    min_points: usize,
) -> PyResult<PyPiecewiseFit> {
    call(Class::Model, "fit_piecewise", || {
        piecewise_py(py, fit::piecewise(&x, &y, max_segments, min_points).py()?)
    })
}

/// The shared bandwidth `BW` with `per_flow[i] ≈ min(single, BW / flows[i])`.
#[pyfunction]
fn fit_contention(flows: Vec<f64>, per_flow: Vec<f64>, single: f64) -> PyResult<PyContentionFit> {
    call(Class::Model, "fit_contention", || {
        let f = fit::contention(&flows, &per_flow, single).py()?;
        Ok(PyContentionFit {
            bandwidth: f.bandwidth,
            saturated: f.saturated,
            r2: f.r2,
            predicted: f.predicted,
            residuals: f.residuals,
        })
    })
}

/// LogGOPS from a ping-pong (sizes, one-way times) and the issue-rate trains (message
/// counts and times without and with a delay after the sends).
#[pyfunction]
#[pyo3(signature = (sizes, one_way, train_n, train_t, delayed_n, delayed_t, max_segments=3))]
#[allow(clippy::too_many_arguments)]
fn fit_loggops(
    py: Python<'_>,
    sizes: Vec<f64>,
    one_way: Vec<f64>,
    train_n: Vec<f64>,
    train_t: Vec<f64>,
    delayed_n: Vec<f64>,
    delayed_t: Vec<f64>,
    max_segments: usize,
) -> PyResult<PyLogGopsFit> {
    call(Class::Model, "fit_loggops", || {
        let f = fit::fit_loggops(
            &sizes,
            &one_way,
            &train_n,
            &train_t,
            &delayed_n,
            &delayed_t,
            max_segments,
        )
        .py()?;
        Ok(PyLogGopsFit {
            latency: f.latency,
            latency_excess: f.latency_excess,
            overhead: f.overhead,
            gap: f.gap,
            gap_per_byte: f.gap_per_byte,
            alpha_r: f.alpha_r,
            alpha_p: f.alpha_p,
            alpha_p_shortfall: f.alpha_p_shortfall,
            eager_limit: f.eager_limit,
            pingpong: Py::new(py, piecewise_py(py, f.pingpong)?)?,
            train: Py::new(py, PyLinearFit::from(f.train))?,
            overhead_train: Py::new(py, PyLinearFit::from(f.overhead_train))?,
            r2: f.r2,
            predicted: f.predicted,
            residuals: f.residuals,
        })
    })
}

/// The node level's bandwidth: `2 / two_flows_gap_per_byte`, or the contention fit's
/// `fitted` where that is lower, `saturated` and more than 2 flows per node shared it; `fitted`
/// where no two flows were measured.
#[pyfunction]
fn node_bandwidth(
    fitted: f64,
    saturated: bool,
    most_flows_per_node: f64,
    two_flows_gap_per_byte: Option<f64>,
) -> f64 {
    fit::node_bandwidth(
        fitted,
        saturated,
        most_flows_per_node,
        two_flows_gap_per_byte,
    )
}

/// `time(k, s) = C + k·x(s)` from chains of `steps[i]` steps of `sizes[i]` bytes.
#[pyfunction]
fn fit_chains(sizes: Vec<f64>, steps: Vec<f64>, times: Vec<f64>) -> PyResult<PyChainFit> {
    call(Class::Model, "fit_chains", || {
        let f = fit::fit_chains(&sizes, &steps, &times).py()?;
        Ok(PyChainFit {
            call: f.call,
            sizes: f.sizes,
            step: f.step,
            r2: f.r2,
            predicted: f.predicted,
            residuals: f.residuals,
        })
    })
}

/// LogGOPS's step parameters from one step by size of one-way messages (`sizes`, `times`)
/// and, where measured, of exchanges (`exchange`: their sizes and times); `overhead` is o.
#[pyfunction]
#[pyo3(signature = (overhead, sizes, times, exchange=None, max_segments=3))]
fn fit_steps(
    overhead: f64,
    sizes: Vec<f64>,
    times: Vec<f64>,
    exchange: Option<(Vec<f64>, Vec<f64>)>,
    max_segments: usize,
) -> PyResult<PyStepsFit> {
    call(Class::Model, "fit_steps", || {
        let one_way = fit::Steps {
            sizes: &sizes,
            times: &times,
        };
        let ex = exchange
            .as_ref()
            .map(|(s, t)| fit::Steps { sizes: s, times: t });
        let f = fit::fit_steps(overhead, one_way, ex, max_segments).py()?;
        Ok(PyStepsFit {
            latency: f.latency,
            latency_excess: f.latency_excess,
            gap_per_byte: f.gap_per_byte,
            two_flows_gap_per_byte: f.two_flows_gap_per_byte,
            eager_limit: f.eager_limit,
            eager_found: f.eager_found,
            rendezvous: f.rendezvous,
            second_limit: f.second_limit,
            second_rendezvous: f.second_rendezvous,
            exchange_wait: f.exchange_wait,
            switches: f.switches,
            breaks: f.breaks,
            r2: f.r2,
            sizes: f.sizes,
            exchange: f.exchange,
            times: f.times,
            predicted: f.predicted,
            residuals: f.residuals,
        })
    })
}

/// The warning for a fit of `what` whose R² is below `R2_THRESHOLD`; None when it fits.
#[pyfunction]
fn poor_fit(what: &str, r2: f64) -> Option<String> {
    fit::poor_fit(what, r2)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [
            PyLinearFit,
            PySegment,
            PyPiecewiseFit,
            PyContentionFit,
            PyLogGopsFit,
            PyChainFit,
            PyStepsFit
        ],
        [
            fit_least_squares,
            fit_line,
            fit_piecewise,
            fit_contention,
            fit_loggops,
            node_bandwidth,
            fit_chains,
            fit_steps,
            poor_fit
        ]
    );
    m.add("R2_THRESHOLD", fit::R2_THRESHOLD)?;
    Ok(())
}
