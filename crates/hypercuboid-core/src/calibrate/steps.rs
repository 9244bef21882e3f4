//! LogGOPS from chains of steps, as `hypercuboid calibrate` times them: the runner's cost per
//! call and one step by size ([`fit_chains`]), then `L`, `G`, the protocol switches `S`/`R` and
//! `S2`/`R2`, `X` and the per-byte time of two flows at once from one-way and exchange steps
//! ([`fit_steps`]).

use std::cmp::Ordering;

use super::{
    check_finite, check_len, fit_line, nnls, piecewise, r_squared, FitError, PiecewiseFit,
};

/// Protocol switches are also looked for in the sizes up to this alone (bytes), where the cost
/// per message shows (above, the cost per byte and the memory system's noise hide a jump).
pub const SWITCH_RANGE: f64 = 65536.0;

/// The fewest points of a piecewise segment in [`fit_steps`], and so the fewest sizes it fits.
const STEP_POINTS: usize = 3;

/// The fewest sizes below [`SWITCH_RANGE`] for which [`fit_steps`] also fits them alone.
const SMALL_POINTS: usize = 6;

/// The runner's cost per call and the time of one step of every size, fitted to chains of
/// `k` steps in a row ([`fit_chains`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ChainFit {
    /// `C`, the cost of a call beyond its steps.
    pub call: f64,
    /// The sizes measured, ascending, once each.
    pub sizes: Vec<f64>,
    /// `x(s)`, the time of one step of every size of `sizes`.
    pub step: Vec<f64>,
    /// R² of `C + k·x(s)` against the chains' times (relative weights).
    pub r2: f64,
    /// `C + k·x(s)` of every chain, in the order given.
    pub predicted: Vec<f64>,
    /// Measured less predicted, of every chain.
    pub residuals: Vec<f64>,
}

/// `time(k, s) = C + k·x(s)`: the cost per call `C` and one step's time `x(s)` of every size,
/// from chains of `steps[i]` steps of `sizes[i]` bytes that took `times[i]`. One non-negative
/// least-squares fit over every chain (columns: 1, and per size `k` where the chain has that
/// size; each chain weighted by `1/time`), so that neither `C` nor a step comes out negative.
///
/// ```
/// use hypercuboid_core::calibrate::fit_chains;
/// // C = 0.2, x(8) = 1, x(64) = 2: chains of 1, 2 and 4 steps
/// let sizes = [8.0, 8.0, 8.0, 64.0, 64.0, 64.0];
/// let steps = [1.0, 2.0, 4.0, 1.0, 2.0, 4.0];
/// let times = [1.2, 2.2, 4.2, 2.2, 4.2, 8.2];
/// let fit = fit_chains(&sizes, &steps, &times)?;
/// assert!((fit.call - 0.2).abs() < 1e-12 && fit.sizes == [8.0, 64.0]);
/// assert!((fit.step[0] - 1.0).abs() < 1e-12 && (fit.step[1] - 2.0).abs() < 1e-12);
/// # Ok::<(), hypercuboid_core::calibrate::FitError>(())
/// ```
pub fn fit_chains(sizes: &[f64], steps: &[f64], times: &[f64]) -> Result<ChainFit, FitError> {
    let n = times.len();
    check_len("chain sizes", sizes.len(), n)?;
    check_len("chain steps", steps.len(), n)?;
    check_finite("chain sizes", sizes, false)?;
    check_finite("chain steps", steps, true)?;
    check_finite("chain times", times, true)?;
    let mut distinct: Vec<f64> = sizes.to_vec();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if n < distinct.len() + 1 {
        return Err(FitError::TooFewPoints {
            what: "a chain fit (one per size and one more)",
            needed: distinct.len() + 1,
            got: n,
        });
    }
    let mut columns = vec![vec![1.0; n]];
    for &b in &distinct {
        columns.push(
            (0..n)
                .map(|i| if sizes[i] == b { steps[i] } else { 0.0 })
                .collect(),
        );
    }
    let cols: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
    let w: Vec<f64> = times.iter().map(|t| 1.0 / t).collect();
    let f = nnls(&cols, times, Some(&w))?;
    Ok(ChainFit {
        call: f.coef[0],
        sizes: distinct,
        step: f.coef[1..].to_vec(),
        r2: f.r2,
        predicted: f.predicted,
        residuals: f.residuals,
    })
}

/// One step's time by size: the sizes (bytes, ascending) and the times.
#[derive(Clone, Copy, Debug)]
pub struct Steps<'a> {
    /// Bytes of each step, strictly ascending.
    pub sizes: &'a [f64],
    /// The time of one step of each size (> 0).
    pub times: &'a [f64],
}

/// LogGOPS's step parameters ([`fit_steps`]); every time in the unit of the inputs, per byte
/// where it is a `G`.
#[derive(Clone, Debug, PartialEq)]
pub struct StepsFit {
    /// `L = c − 2o` (0 when `2o` exceeds `c`: `latency_excess` then says by how much).
    pub latency: f64,
    /// How far `2o` exceeds the fitted constant `c` of a step (0 when it does not): a sign
    /// that `o` is over-estimated.
    pub latency_excess: f64,
    /// `G`: the slope of the one-way steps above `S` (one flow alone), or of their largest
    /// sizes' segment where fewer than 3 sizes lie above `S`.
    pub gap_per_byte: f64,
    /// `G2`: the same of the exchange steps (two flows at once, one each way, which share the
    /// node: its bandwidth is `2/G2`), never below `G`; `G` where no exchange was measured.
    pub two_flows_gap_per_byte: f64,
    /// `S`: the size at the largest switch, the largest one-way size where none was found.
    pub eager_limit: f64,
    /// Whether `S` is a switch found (not the largest size).
    pub eager_found: bool,
    /// `R`: what a step above `S` costs more (0 where no switch was found).
    pub rendezvous: f64,
    /// `S2`: the size at the second largest switch, if any.
    pub second_limit: Option<f64>,
    /// `R2`: what a step above `S2` costs more (0 where there is no `S2`).
    pub second_rendezvous: f64,
    /// `X`: what an exchange step costs beyond a one-way step (0 where no exchange was given).
    pub exchange_wait: f64,
    /// Every switch found, largest jump first: (size, mean jump of the fits that found it).
    pub switches: Vec<(f64, f64)>,
    /// The break points of the piecewise fit of every kind of step (one-way, then exchange).
    pub breaks: Vec<Vec<f64>>,
    /// R² of the model's step times against the measured ones (relative weights).
    pub r2: f64,
    /// The size of every step fitted: the one-way steps, then the exchange steps.
    pub sizes: Vec<f64>,
    /// Whether each step is an exchange.
    pub exchange: Vec<bool>,
    /// The measured time of each step.
    pub times: Vec<f64>,
    /// The model's time of each step.
    pub predicted: Vec<f64>,
    /// Measured less predicted, of each step.
    pub residuals: Vec<f64>,
}

/// The protocol switches of piecewise fits ([`PiecewiseFit::switches`]), largest jump first: a
/// size that several fits give once, with the mean of their jumps (ties in the order found).
pub fn merge_switches(fits: &[&PiecewiseFit]) -> Vec<(f64, f64)> {
    let mut found: Vec<(f64, Vec<f64>)> = Vec::new();
    for f in fits {
        for (size, jump) in f.switches() {
            let size = size.trunc();
            match found.iter_mut().find(|(s, _)| *s == size) {
                Some((_, jumps)) => jumps.push(jump),
                None => found.push((size, vec![jump])),
            }
        }
    }
    let mut out: Vec<(f64, f64)> = found
        .into_iter()
        .map(|(s, j)| (s, j.iter().fold(0.0, |a, b| a + b) / j.len() as f64))
        .collect();
    out.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal));
    out
}

/// LogGOPS's `L`, `G`, `S`, `R`, `S2`, `R2`, `X` and the per-byte time of two flows at once,
/// from one step by size of one-way messages and (where measured) of exchanges, e.g. the
/// [`ChainFit::step`]s of both kinds of chain; `overhead` is the sender's `o` (the delayed
/// train's slope, [`super::fit_loggops`]).
///
/// - The switches: [`merge_switches`] of the piecewise fits ([`piecewise`] with
///   `max_segments`, 3 points per segment) of both kinds, over every size and over the sizes up
///   to [`SWITCH_RANGE`] alone (where at least 6 lie there): `S` at the largest jump, `S2` at
///   the next.
/// - `G` and `G2`: see [`StepsFit`].
/// - One non-negative least-squares fit over both kinds of step, each weighted by `1/t`:
///   `t − (s−1)·G' = c + R2·[s > S2] + R·[s > S] + X·[exchange]` (`G'` = `G` one way, `G2` for
///   the exchanges); `L = c − 2o`. Nothing comes out negative; a poor `r2` says that the model
///   does not fit.
///
/// ```
/// use hypercuboid_core::calibrate::{fit_steps, Steps};
/// // L + 2o = 1 µs, G = 1 ns/B; 2 µs more above S = 4096
/// let sizes: Vec<f64> = (0..16).map(|k| f64::from(1 << k)).collect();
/// let t: Vec<f64> = sizes.iter().map(|&s| 1.0 + (s - 1.0) * 1e-3 + if s > 4096.0 { 2.0 } else { 0.0 }).collect();
/// let f = fit_steps(0.25, Steps { sizes: &sizes, times: &t }, None, 4)?;
/// assert_eq!((f.eager_limit, f.eager_found), (4096.0, true));
/// assert!((f.latency - 0.5).abs() < 1e-9 && (f.rendezvous - 2.0).abs() < 1e-9);
/// # Ok::<(), hypercuboid_core::calibrate::FitError>(())
/// ```
pub fn fit_steps(
    overhead: f64,
    one_way: Steps<'_>,
    exchange: Option<Steps<'_>>,
    max_segments: usize,
) -> Result<StepsFit, FitError> {
    if !(overhead.is_finite() && overhead >= 0.0) {
        return Err(FitError::Parameter {
            what: "o",
            value: overhead,
            accepted: "a finite time >= 0",
        });
    }
    let one_way_names = [
        "one-way step sizes",
        "one-way step times",
        "a fit of the one-way steps",
    ];
    check_steps(one_way_names, one_way)?;
    if let Some(ex) = exchange {
        let names = [
            "exchange step sizes",
            "exchange step times",
            "a fit of the exchange steps",
        ];
        check_steps(names, ex)?;
    }
    let sets: Vec<(Steps<'_>, bool)> = std::iter::once((one_way, false))
        .chain(exchange.map(|e| (e, true)))
        .collect();
    let mut pws = Vec::with_capacity(sets.len());
    let mut small = Vec::new();
    for (d, _) in &sets {
        pws.push(piecewise(d.sizes, d.times, max_segments, STEP_POINTS)?);
        let n = d.sizes.iter().filter(|&&v| v <= SWITCH_RANGE).count();
        if n >= SMALL_POINTS {
            small.push(piecewise(
                &d.sizes[..n],
                &d.times[..n],
                max_segments,
                STEP_POINTS,
            )?);
        }
    }
    let all: Vec<&PiecewiseFit> = pws.iter().chain(&small).collect();
    let switches = merge_switches(&all);
    let largest = one_way.sizes.iter().copied().fold(f64::MIN, f64::max);
    let eager = switches.first().map_or(largest.trunc(), |w| w.0);
    let second = switches.get(1).map(|w| w.0);
    // the slope of the steps above S (one protocol), else of the largest sizes' segment
    let per_byte = |d: Steps<'_>, pw: &PiecewiseFit| -> Result<f64, FitError> {
        let (xs, ys): (Vec<f64>, Vec<f64>) = d
            .sizes
            .iter()
            .zip(d.times)
            .filter(|(&b, _)| b > eager)
            .unzip();
        if xs.len() < STEP_POINTS {
            return Ok(pw.segments[pw.segments.len() - 1].slope);
        }
        Ok(fit_line(&xs, &ys, true)?.coef[1])
    };
    let big_g = per_byte(one_way, &pws[0])?;
    let last = sets.len() - 1;
    let g2 = per_byte(sets[last].0, &pws[last])?.max(big_g);
    let mut sizes = Vec::new();
    let mut is_exchange = Vec::new();
    let mut times = Vec::new();
    for (d, x) in &sets {
        sizes.extend_from_slice(d.sizes);
        times.extend_from_slice(d.times);
        is_exchange.extend(std::iter::repeat_n(*x, d.sizes.len()));
    }
    let n = times.len();
    // columns: c, then R2 above S2, R above S (where found), X of the exchanges
    let mut columns: Vec<Vec<f64>> = vec![vec![1.0; n]];
    let mut at = [None; 3]; // the columns of R2, R, X
    let limits = [second, switches.first().map(|_| eager)];
    for (slot, limit) in limits.into_iter().enumerate() {
        if let Some(limit) = limit {
            at[slot] = Some(columns.len());
            columns.push(sizes.iter().map(|&s| f64::from(s > limit)).collect());
        }
    }
    if exchange.is_some() {
        at[2] = Some(columns.len());
        columns.push(is_exchange.iter().map(|&x| f64::from(x)).collect());
    }
    let rest: Vec<f64> = (0..n)
        .map(|i| {
            let g = if is_exchange[i] { g2 } else { big_g };
            times[i] - (sizes[i] - 1.0).max(0.0) * g
        })
        .collect();
    let cols: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
    let w: Vec<f64> = times.iter().map(|t| 1.0 / t).collect();
    let f = nnls(&cols, &rest, Some(&w))?;
    let coef = |slot: usize| at[slot].map_or(0.0, |j| f.coef[j]);
    let c = f.coef[0];
    let predicted: Vec<f64> = times.iter().zip(&f.residuals).map(|(t, r)| t - r).collect();
    Ok(StepsFit {
        latency: (c - 2.0 * overhead).max(0.0),
        latency_excess: (2.0 * overhead - c).max(0.0),
        gap_per_byte: big_g,
        two_flows_gap_per_byte: g2,
        eager_limit: eager,
        eager_found: !switches.is_empty(),
        rendezvous: coef(1),
        second_limit: second,
        second_rendezvous: coef(0),
        exchange_wait: coef(2),
        breaks: pws.iter().map(|p| p.breaks.clone()).collect(),
        r2: r_squared(&times, &predicted, Some(&w)),
        residuals: times.iter().zip(&predicted).map(|(t, p)| t - p).collect(),
        switches,
        sizes,
        exchange: is_exchange,
        times,
        predicted,
    })
}

/// One kind of step: as many times as sizes, at least [`STEP_POINTS`] sizes, ascending, and
/// every time `> 0`; `names`: what the sizes, the times and their fit are called in an error.
fn check_steps(names: [&'static str; 3], d: Steps<'_>) -> Result<(), FitError> {
    let [sizes, times, fit] = names;
    check_len(times, d.times.len(), d.sizes.len())?;
    if d.sizes.len() < STEP_POINTS {
        return Err(FitError::TooFewPoints {
            what: fit,
            needed: STEP_POINTS,
            got: d.sizes.len(),
        });
    }
    check_finite(sizes, d.sizes, false)?;
    for i in 1..d.sizes.len() {
        if d.sizes[i] <= d.sizes[i - 1] {
            return Err(FitError::Value {
                what: sizes,
                index: i,
                value: d.sizes[i],
                accepted: "sizes strictly ascending",
            });
        }
    }
    check_finite(times, d.times, true)
}
