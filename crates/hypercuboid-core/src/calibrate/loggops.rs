//! LogGOPS parameters from a ping-pong sweep and two issue-rate trains.

use super::{fit_line, piecewise, r_squared, FitError, LinearFit, PiecewiseFit};

/// LogGOPS fitted to measurements (every time in the unit of the inputs; `G` per byte).
#[derive(Clone, Debug, PartialEq)]
pub struct LogGopsFit {
    /// `L`, wire latency: `a₁ + G − 2o` with `a₁` the first segment's intercept, so that the
    /// model's line starts where that segment starts (0 when `2o` exceeds `a₁ + G`:
    /// `latency_excess` then says by how much).
    pub latency: f64,
    /// How far `2o` exceeds the small-message one-way time (0 when it does not): a sign that
    /// the overheads measured in the trains are not those of the ping-pong.
    pub latency_excess: f64,
    /// `o`, CPU overhead per message: the slope of the train with a delay after the sends.
    pub overhead: f64,
    /// `g`, gap per message: the slope of the train without delay (the steady issue rate).
    pub gap: f64,
    /// `G`, gap per byte: the slope of the segment of the largest messages.
    pub gap_per_byte: f64,
    /// The pipelined model's `α_r`, the issue cost per message: `g`.
    pub alpha_r: f64,
    /// The pipelined model's `α_p`: the rest of the small-message one-way time (the first
    /// segment's intercept less `α_r`), so that `α_p + α_r + n·β` is that segment; 0 when `α_r`
    /// exceeds the intercept (`alpha_p_shortfall` then says by how much).
    pub alpha_p: f64,
    /// How far `α_r` exceeds the first segment's intercept (0 when it does not).
    pub alpha_p_shortfall: f64,
    /// `S`, the largest message of the segment before the first break point where the time
    /// jumps up (a switch from eager to rendezvous), if any.
    pub eager_limit: Option<f64>,
    /// The ping-pong's piecewise fit.
    pub pingpong: PiecewiseFit,
    /// The fit of the train without delay (`coef`: intercept, `g`).
    pub train: LinearFit,
    /// The fit of the train with a delay (`coef`: intercept, `o`).
    pub overhead_train: LinearFit,
    /// R² of the model's one-way time `L + 2o + (s−1)·G` against the ping-pong (relative).
    pub r2: f64,
    /// The model's one-way time at every size.
    pub predicted: Vec<f64>,
    /// Measured less predicted, at every size.
    pub residuals: Vec<f64>,
}

/// Fits LogGOPS as LogGOPSim simulates it ([`crate::model::LogGopsModel`]): a one-way message
/// of `s` bytes takes `L + 2o + (s−1)·G` (the sender's `o`, the wire, the receiver's `o` and its
/// per-byte gap), which is half a ping-pong's round trip.
///
/// - `sizes`, `one_way`: the ping-pong (half round trips), fitted piecewise ([`piecewise`]
///   with `max_segments` and 3 points per segment).
/// - `train_n`, `train_t`: time of `n` back-to-back small sends and their completion on the
///   sender: the slope is `g` (the steady-state issue rate).
/// - `delayed_n`, `delayed_t`: the same with a delay after the sends long enough for the
///   messages to leave: only posting is timed, so the slope is `o` (the sender's CPU time per
///   send).
///
/// Every line is fitted with non-negative coefficients ([`fit_line`]).
#[allow(clippy::too_many_arguments)]
pub fn fit_loggops(
    sizes: &[f64],
    one_way: &[f64],
    train_n: &[f64],
    train_t: &[f64],
    delayed_n: &[f64],
    delayed_t: &[f64],
    max_segments: usize,
) -> Result<LogGopsFit, FitError> {
    let pingpong = piecewise(sizes, one_way, max_segments, 3)?;
    let train = fit_line(train_n, train_t, false)?;
    let overhead_train = fit_line(delayed_n, delayed_t, false)?;
    let o = overhead_train.coef[1];
    let g = train.coef[1];
    let first = &pingpong.segments[0];
    let last = &pingpong.segments[pingpong.segments.len() - 1];
    let big_g = last.slope;
    // first segment: a + b·s = L + 2o + (s−1)·G  =>  L = a − 2o + G
    let l_raw = first.intercept + big_g - 2.0 * o;
    let (latency, latency_excess) = if l_raw >= 0.0 {
        (l_raw, 0.0)
    } else {
        (0.0, -l_raw)
    };
    let alpha_p_raw = first.intercept - g;
    let (alpha_p, alpha_p_shortfall) = if alpha_p_raw < 0.0 {
        (0.0, g - first.intercept)
    } else {
        (alpha_p_raw, 0.0)
    };
    let eager_limit = pingpong.switches().first().map(|&(size, _)| size);
    let predicted: Vec<f64> = sizes
        .iter()
        .map(|&s| latency + 2.0 * o + (s - 1.0).max(0.0) * big_g)
        .collect();
    let w: Vec<f64> = one_way.iter().map(|v| 1.0 / v).collect();
    Ok(LogGopsFit {
        latency,
        latency_excess,
        overhead: o,
        gap: g,
        gap_per_byte: big_g,
        alpha_r: g,
        alpha_p,
        alpha_p_shortfall,
        eager_limit,
        r2: r_squared(one_way, &predicted, Some(&w)),
        residuals: one_way.iter().zip(&predicted).map(|(a, b)| a - b).collect(),
        predicted,
        pingpong,
        train,
        overhead_train,
    })
}
