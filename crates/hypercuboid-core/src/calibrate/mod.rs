//! Calibration fits: the algorithms `hypercuboid calibrate` fits its measurements with.
//!
//! The measuring happens under MPI (`python/hypercuboid/mpi/calibrate.py`); what it measures is
//! fitted here, so that every fit is one tested function:
//!
//! - [`least_squares`]: weighted linear least squares `y ≈ Σ c_j · column_j`, with R² and
//!   residuals;
//! - [`nnls`]: the same with every coefficient `>= 0` (Lawson and Hanson's active-set method),
//!   which is how a model's times are fitted: a negative latency is not clamped afterwards, it
//!   never comes out, and a poor R² says that the model does not fit;
//! - [`fit_line`]: `y ≈ a + b·x` with `a, b >= 0`, weighted by `1/y` when `relative` (every
//!   decade of a size sweep counts);
//! - [`piecewise`]: SimGrid/SMPI-style piecewise lines: the break points (a protocol switch
//!   such as eager/rendezvous) that make separate lines fit, found by exhaustive search;
//! - [`contention`]: the shared bandwidth `BW` of a node from the per-flow bandwidth of `k`
//!   concurrent flows, `bw(k) ≈ min(single, BW/k)`; [`node_bandwidth`]: the node level's, from
//!   that and two flows at once;
//! - [`fit_loggops`]: LogGOPS's `L, o, g, G, S` and the pipelined model's `α_p, α_r` from a
//!   ping-pong sweep and two issue-rate trains;
//! - [`fit_chains`]: the runner's cost per call and one step's time by size from chains of
//!   `k` steps; [`fit_steps`]: LogGOPS's `L, G, S, R, S2, R2, X` and two flows' `G` from the
//!   one-way and exchange steps (with the switches of several fits merged by
//!   [`merge_switches`]).
//!
//! Every fit reports its R²; [`poor_fit`] is the warning for one below [`R2_THRESHOLD`]. The R²
//! of a weighted fit is `1 − Σ w²(y − ŷ)² / Σ w²(y − ȳ_w)²` with `ȳ_w` the weighted
//! mean; residuals are `y − ŷ`, in the unit of `y`.

mod loggops;
mod piecewise;
mod steps;

pub use loggops::{fit_loggops, LogGopsFit};
pub use piecewise::{
    contention, node_bandwidth, piecewise, ContentionFit, PiecewiseFit, Segment, SEGMENT_GAIN,
    SWITCH_JUMP,
};

pub use steps::{fit_chains, fit_steps, merge_switches, ChainFit, Steps, StepsFit, SWITCH_RANGE};

use std::fmt;

/// What a fit refuses: too few points, lengths that differ, values that are not finite.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FitError {
    /// Fewer points than the fit needs.
    TooFewPoints {
        /// What is fitted.
        what: &'static str,
        /// Points needed.
        needed: usize,
        /// Points given.
        got: usize,
    },
    /// Two inputs of different lengths.
    Length {
        /// Which input.
        what: &'static str,
        /// Its length.
        got: usize,
        /// The length of the measurements.
        expected: usize,
    },
    /// A value that is NaN, infinite, or out of its range.
    Value {
        /// Which input.
        what: &'static str,
        /// Its index.
        index: usize,
        /// The value.
        value: f64,
        /// What is accepted.
        accepted: &'static str,
    },
    /// A single parameter out of its range.
    Parameter {
        /// Which parameter.
        what: &'static str,
        /// The value.
        value: f64,
        /// What is accepted.
        accepted: &'static str,
    },
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FitError::TooFewPoints { what, needed, got } => write!(
                f,
                "{what} needs at least {needed} points with different x, got {got}"
            ),
            FitError::Length {
                what,
                got,
                expected,
            } => write!(
                f,
                "{what} has {got} values, the measurements {expected}: give one per point"
            ),
            FitError::Value {
                what,
                index,
                value,
                accepted,
            } => write!(f, "{what}[{index}] = {value}: {accepted}"),
            FitError::Parameter {
                what,
                value,
                accepted,
            } => write!(f, "{what} = {value}: {accepted}"),
        }
    }
}

impl std::error::Error for FitError {}

/// A fit whose R² is below this does not describe its measurements: [`poor_fit`] says so.
pub const R2_THRESHOLD: f64 = 0.9;

/// How a fit says that its model does not fit: for a fit of `what` whose R² is below
/// [`R2_THRESHOLD`] (or not a number), the one-line warning naming it, its R² (3 decimals) and
/// the threshold; None when it fits. A fit that does not fit is kept (its parameters are the
/// best non-negative ones), never clamped into shape.
///
/// ```
/// use hypercuboid_core::calibrate::poor_fit;
/// assert_eq!(poor_fit("copy fit", 0.95), None);
/// assert_eq!(
///     poor_fit("copy fit", 0.8804).as_deref(),
///     Some("copy fit: R² = 0.880 is below 0.9: the model does not fit these measurements")
/// );
/// ```
pub fn poor_fit(what: &str, r2: f64) -> Option<String> {
    if r2 >= R2_THRESHOLD {
        return None;
    }
    let shown = if r2.is_nan() {
        "nan".to_string()
    } else {
        format!("{r2:.3}")
    };
    Some(format!(
        "{what}: R² = {shown} is below {R2_THRESHOLD}: the model does not fit these measurements"
    ))
}

/// A linear fit: its coefficients, R², and per point the fitted value and the residual.
#[derive(Clone, Debug, PartialEq)]
pub struct LinearFit {
    /// One coefficient per column.
    pub coef: Vec<f64>,
    /// Weighted R² (1 for a perfect fit; can be negative for a constrained fit worse than the
    /// mean).
    pub r2: f64,
    /// `ŷ`, the fitted value of every point.
    pub predicted: Vec<f64>,
    /// `y − ŷ` of every point.
    pub residuals: Vec<f64>,
}

/// `Ok` when `what` has `got` values, the measurements' `expected`; else [`FitError::Length`].
pub(crate) fn check_len(what: &'static str, got: usize, expected: usize) -> Result<(), FitError> {
    if got == expected {
        Ok(())
    } else {
        Err(FitError::Length {
            what,
            got,
            expected,
        })
    }
}

pub(crate) fn check_finite(what: &'static str, v: &[f64], positive: bool) -> Result<(), FitError> {
    for (index, &value) in v.iter().enumerate() {
        let bad = !value.is_finite() || (positive && value <= 0.0) || (!positive && value < 0.0);
        if bad {
            return Err(FitError::Value {
                what,
                index,
                value,
                accepted: if positive {
                    "a finite number > 0"
                } else {
                    "a finite number >= 0"
                },
            });
        }
    }
    Ok(())
}

fn check_inputs(columns: &[&[f64]], y: &[f64], weights: Option<&[f64]>) -> Result<(), FitError> {
    let n = y.len();
    for (j, c) in columns.iter().enumerate() {
        check_len("a column", c.len(), n)?;
        for (index, &value) in c.iter().enumerate() {
            if !value.is_finite() {
                return Err(FitError::Value {
                    what: ["column 0", "column 1", "column 2", "a column"][j.min(3)],
                    index,
                    value,
                    accepted: "a finite number",
                });
            }
        }
    }
    for (index, &value) in y.iter().enumerate() {
        if !value.is_finite() {
            return Err(FitError::Value {
                what: "y",
                index,
                value,
                accepted: "a finite number",
            });
        }
    }
    if let Some(w) = weights {
        check_len("weights", w.len(), n)?;
        check_finite("weights", w, true)?;
    }
    if n < columns.len().max(1) {
        return Err(FitError::TooFewPoints {
            what: "a fit",
            needed: columns.len().max(1),
            got: n,
        });
    }
    Ok(())
}

/// Solves the weighted least-squares problem restricted to the columns `set` (modified
/// Gram–Schmidt on unit-scaled columns, stable for the few columns a model has). Columns that
/// are dependent on earlier ones get coefficient 0.
fn solve_subset(a: &[Vec<f64>], b: &[f64], set: &[usize]) -> Vec<f64> {
    let k = set.len();
    let mut q: Vec<Vec<f64>> = Vec::with_capacity(k);
    let mut scale = vec![0.0; k];
    let mut r = vec![vec![0.0; k]; k];
    let mut live = vec![true; k];
    for (i, &j) in set.iter().enumerate() {
        let norm = a[j].iter().map(|v| v * v).sum::<f64>().sqrt();
        scale[i] = if norm > 0.0 { norm } else { 1.0 };
        let mut v: Vec<f64> = a[j].iter().map(|x| x / scale[i]).collect();
        for (p, qp) in q.iter().enumerate() {
            if !live[p] {
                continue;
            }
            let d: f64 = qp.iter().zip(&v).map(|(x, y)| x * y).sum();
            r[p][i] = d;
            v.iter_mut().zip(qp).for_each(|(x, y)| *x -= d * y);
        }
        let nv = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if nv <= 1e-12 {
            live[i] = false;
            q.push(vec![0.0; b.len()]);
            continue;
        }
        r[i][i] = nv;
        v.iter_mut().for_each(|x| *x /= nv);
        q.push(v);
    }
    let qtb: Vec<f64> = q
        .iter()
        .map(|qi| qi.iter().zip(b).map(|(x, y)| x * y).sum())
        .collect();
    let mut z = vec![0.0; k];
    for i in (0..k).rev() {
        if !live[i] {
            continue;
        }
        let mut s = qtb[i];
        for p in i + 1..k {
            s -= r[i][p] * z[p];
        }
        z[i] = s / r[i][i];
    }
    z.iter().zip(&scale).map(|(zi, s)| zi / s).collect()
}

fn weighted(columns: &[&[f64]], y: &[f64], weights: Option<&[f64]>) -> (Vec<Vec<f64>>, Vec<f64>) {
    let w = |i: usize| weights.map_or(1.0, |w| w[i]);
    let a = columns
        .iter()
        .map(|c| c.iter().enumerate().map(|(i, v)| v * w(i)).collect())
        .collect();
    let b = y.iter().enumerate().map(|(i, v)| v * w(i)).collect();
    (a, b)
}

fn finish(columns: &[&[f64]], y: &[f64], weights: Option<&[f64]>, coef: Vec<f64>) -> LinearFit {
    let predicted: Vec<f64> = (0..y.len())
        .map(|i| columns.iter().zip(&coef).map(|(c, k)| c[i] * k).sum())
        .collect();
    let residuals: Vec<f64> = y.iter().zip(&predicted).map(|(a, b)| a - b).collect();
    let r2 = r_squared(y, &predicted, weights);
    LinearFit {
        coef,
        r2,
        predicted,
        residuals,
    }
}

/// Weighted R² of `predicted` against `y` (weights multiply the residuals; none: all 1).
/// 1 when `y` is constant and matched exactly, `−∞`-free: a constant `y` missed gives 0.
pub fn r_squared(y: &[f64], predicted: &[f64], weights: Option<&[f64]>) -> f64 {
    let w = |i: usize| weights.map_or(1.0, |w| w[i]);
    let sw: f64 = (0..y.len()).map(|i| w(i) * w(i)).sum();
    if y.is_empty() || sw <= 0.0 {
        return 1.0;
    }
    let mean = (0..y.len()).map(|i| w(i) * w(i) * y[i]).sum::<f64>() / sw;
    let ss_res: f64 = (0..y.len())
        .map(|i| (w(i) * (y[i] - predicted[i])).powi(2))
        .sum();
    let ss_tot: f64 = (0..y.len()).map(|i| (w(i) * (y[i] - mean)).powi(2)).sum();
    let scale = (0..y.len()).map(|i| (w(i) * y[i]).powi(2)).sum::<f64>();
    if ss_tot <= 1e-24 * scale.max(f64::MIN_POSITIVE) {
        return if ss_res <= 1e-24 * scale.max(f64::MIN_POSITIVE) {
            1.0
        } else {
            0.0
        };
    }
    1.0 - ss_res / ss_tot
}

/// Weighted least squares: the coefficients `c` minimising `Σ_i (w_i (y_i − Σ_j c_j A_ji))²`
/// over the columns `A_j` (`weights` None: all 1).
///
/// ```
/// use hypercuboid_core::calibrate::least_squares;
/// let x = [1.0, 2.0, 3.0, 4.0];
/// let ones = [1.0; 4];
/// let y: Vec<f64> = x.iter().map(|x| 2.0 + 0.5 * x).collect();
/// let fit = least_squares(&[&ones, &x], &y, None)?;
/// assert!((fit.coef[0] - 2.0).abs() < 1e-12 && (fit.coef[1] - 0.5).abs() < 1e-12);
/// assert!((fit.r2 - 1.0).abs() < 1e-12);
/// # Ok::<(), hypercuboid_core::calibrate::FitError>(())
/// ```
pub fn least_squares(
    columns: &[&[f64]],
    y: &[f64],
    weights: Option<&[f64]>,
) -> Result<LinearFit, FitError> {
    check_inputs(columns, y, weights)?;
    let (a, b) = weighted(columns, y, weights);
    let all: Vec<usize> = (0..columns.len()).collect();
    let coef = solve_subset(&a, &b, &all);
    Ok(finish(columns, y, weights, coef))
}

/// Non-negative least squares: [`least_squares`] with every coefficient `>= 0`, by Lawson and
/// Hanson's active-set method (Solving Least Squares Problems, 1974, chapter 23). A
/// coefficient the data would make negative is 0 and the fit of the others is the best with
/// it at 0 (not the unconstrained fit clamped).
///
/// ```
/// use hypercuboid_core::calibrate::nnls;
/// // y falls with x: the best line with a slope >= 0 is flat, at the mean.
/// let x = [1.0, 2.0, 3.0];
/// let fit = nnls(&[&[1.0; 3], &x], &[3.0, 2.0, 1.0], None)?;
/// assert_eq!(fit.coef[1], 0.0);
/// assert!((fit.coef[0] - 2.0).abs() < 1e-12);
/// assert!(fit.r2 < 0.5);
/// # Ok::<(), hypercuboid_core::calibrate::FitError>(())
/// ```
pub fn nnls(columns: &[&[f64]], y: &[f64], weights: Option<&[f64]>) -> Result<LinearFit, FitError> {
    check_inputs(columns, y, weights)?;
    let (a, b) = weighted(columns, y, weights);
    let k = columns.len();
    let n = b.len();
    let scale = b.iter().map(|v| v.abs()).fold(0.0, f64::max).max(1e-300);
    let tol = 1e-12 * scale * n as f64;
    let mut x = vec![0.0; k];
    let mut passive = vec![false; k];
    let resid = |x: &[f64]| -> Vec<f64> {
        (0..n)
            .map(|i| b[i] - (0..k).map(|j| a[j][i] * x[j]).sum::<f64>())
            .collect()
    };
    for _outer in 0..3 * k + 3 {
        let r = resid(&x);
        // the gradient of -½‖r‖² along each column, scaled by the column's norm
        let grad: Vec<f64> = (0..k)
            .map(|j| {
                let norm = a[j].iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-300);
                a[j].iter().zip(&r).map(|(p, q)| p * q).sum::<f64>() / norm
            })
            .collect();
        let next = (0..k)
            .filter(|&j| !passive[j] && grad[j] > tol)
            .max_by(|&p, &q| grad[p].total_cmp(&grad[q]));
        let Some(j) = next else { break };
        passive[j] = true;
        for _inner in 0..3 * k + 3 {
            let set: Vec<usize> = (0..k).filter(|&j| passive[j]).collect();
            let zs = solve_subset(&a, &b, &set);
            let mut z = vec![0.0; k];
            for (p, &j) in set.iter().enumerate() {
                z[j] = zs[p];
            }
            if set.iter().all(|&j| z[j] > 0.0) {
                x = z;
                break;
            }
            // step from x towards z as far as every passive coefficient stays >= 0
            let mut alpha = 1.0_f64;
            for &j in &set {
                if z[j] <= 0.0 {
                    let d = x[j] - z[j];
                    if d > 0.0 {
                        alpha = alpha.min(x[j] / d);
                    } else {
                        alpha = 0.0;
                    }
                }
            }
            for j in 0..k {
                x[j] += alpha * (z[j] - x[j]);
            }
            for &j in &set {
                if x[j] <= 1e-15 * scale || z[j] <= 0.0 && alpha == 0.0 {
                    x[j] = 0.0;
                    passive[j] = false;
                }
            }
            if !passive.iter().any(|&p| p) {
                break;
            }
        }
    }
    for v in &mut x {
        if *v < 0.0 {
            *v = 0.0; // -0.0 and rounding below zero only
        }
    }
    Ok(finish(columns, y, weights, x))
}

/// `y ≈ a + b·x` with `a, b >= 0` ([`nnls`]); `relative` weighs each point by `1/y` (then every
/// `y` must be > 0), so that a sweep over decades fits its small values too. The fit's `coef`
/// is `[a, b]`.
///
/// ```
/// use hypercuboid_core::calibrate::fit_line;
/// let x = [1.0, 10.0, 100.0, 1000.0];
/// let y: Vec<f64> = x.iter().map(|x| 1.5 + 0.25 * x).collect();
/// let fit = fit_line(&x, &y, true)?;
/// assert!((fit.coef[0] - 1.5).abs() < 1e-9 && (fit.coef[1] - 0.25).abs() < 1e-12);
/// # Ok::<(), hypercuboid_core::calibrate::FitError>(())
/// ```
pub fn fit_line(x: &[f64], y: &[f64], relative: bool) -> Result<LinearFit, FitError> {
    check_len("x", x.len(), y.len())?;
    let distinct = distinct(x);
    if distinct < 2 {
        return Err(FitError::TooFewPoints {
            what: "a line",
            needed: 2,
            got: distinct,
        });
    }
    let w = if relative {
        check_finite("y", y, true)?;
        Some(y.iter().map(|v| 1.0 / v).collect::<Vec<_>>())
    } else {
        None
    };
    let ones = vec![1.0; x.len()];
    nnls(&[&ones, x], y, w.as_deref())
}

/// How many different values `x` has.
pub(crate) fn distinct(x: &[f64]) -> usize {
    let mut v: Vec<f64> = x.iter().copied().filter(|v| v.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.len()
}

#[cfg(test)]
mod steps_tests;
#[cfg(test)]
mod tests;
