//! Piecewise lines with break points, and the shared bandwidth of concurrent flows.

use super::{check_finite, check_len, distinct, fit_line, r_squared, FitError};

/// One segment of a [`PiecewiseFit`]: the points `first..end` (ascending x), fitted by
/// `intercept + slope·x` (both `>= 0`).
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// Index of its first point.
    pub first: usize,
    /// One past the index of its last point.
    pub end: usize,
    /// x of its first point.
    pub lo: f64,
    /// x of its last point.
    pub hi: f64,
    /// Fitted intercept.
    pub intercept: f64,
    /// Fitted slope.
    pub slope: f64,
    /// R² within the segment (relative weights).
    pub r2: f64,
}

/// A break point is a protocol switch (an eager limit such as LogGOPS's `S`) when the next
/// segment's line lies above the previous one's at the break by more than this fraction.
pub const SWITCH_JUMP: f64 = 0.05;

/// Piecewise lines fitted to a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct PiecewiseFit {
    /// The segments, in ascending x.
    pub segments: Vec<Segment>,
    /// The break points: the x of the first point of every segment after the first.
    pub breaks: Vec<f64>,
    /// R² over all points (relative weights).
    pub r2: f64,
    /// `ŷ` of every point.
    pub predicted: Vec<f64>,
    /// `y − ŷ` of every point.
    pub residuals: Vec<f64>,
    /// The smallest sum of squared relative residuals with 1, 2, ... segments (as many as were
    /// tried): the evidence for the number chosen.
    pub sse: Vec<f64>,
}

impl PiecewiseFit {
    /// The protocol switches, in ascending size: for every break where the next segment's line
    /// lies more than [`SWITCH_JUMP`] above the previous one's, the largest x before it and the
    /// jump there (in the unit of y).
    pub fn switches(&self) -> Vec<(f64, f64)> {
        self.segments
            .windows(2)
            .filter_map(|w| {
                let at = w[1].lo;
                let before = w[0].intercept + w[0].slope * at;
                let after = w[1].intercept + w[1].slope * at;
                (after > before * (1.0 + SWITCH_JUMP)).then_some((w[0].hi, after - before))
            })
            .collect()
    }
}

/// How much a further segment must reduce the sum of squared relative residuals to be taken:
/// by this factor (the relative RMS error halves).
pub const SEGMENT_GAIN: f64 = 4.0;

/// SimGrid/SMPI-style piecewise lines: `y ≈ a_s + b_s·x` on each segment `s` of the points
/// (x ascending, y > 0), every `a_s, b_s >= 0`, each point weighted by `1/y`. For each number of
/// segments up to `max_segments` the break points are found by exhaustive search (dynamic
/// programming over every split with at least `min_points` points per segment, `min_points`
/// at least 2); a further segment is taken only while it cuts the sum of squared relative
/// residuals by [`SEGMENT_GAIN`] (so that noise does not make segments) and the fit is not
/// already exact.
///
/// ```
/// use hypercuboid_core::calibrate::piecewise;
/// // 1 µs + 0.1 ns/B up to 4 KiB, then 3 µs + 0.1 ns/B (a protocol switch).
/// let x: Vec<f64> = (0..16).map(|k| (1u64 << k) as f64).collect();
/// let y: Vec<f64> = x.iter().map(|&s| if s <= 4096.0 { 1e3 + 0.1 * s } else { 3e3 + 0.1 * s }).collect();
/// let fit = piecewise(&x, &y, 3, 3)?;
/// assert_eq!(fit.breaks, vec![8192.0]);
/// assert!((fit.segments[1].intercept - 3e3).abs() < 1e-6);
/// # Ok::<(), hypercuboid_core::calibrate::FitError>(())
/// ```
pub fn piecewise(
    x: &[f64],
    y: &[f64],
    max_segments: usize,
    min_points: usize,
) -> Result<PiecewiseFit, FitError> {
    let n = y.len();
    check_len("x", x.len(), n)?;
    check_finite("x", x, false)?;
    check_finite("y", y, true)?;
    for i in 1..n {
        if x[i] <= x[i - 1] {
            return Err(FitError::Value {
                what: "x",
                index: i,
                value: x[i],
                accepted: "x strictly ascending",
            });
        }
    }
    let min_points = min_points.max(2);
    if n < min_points.max(2) || distinct(x) < 2 {
        return Err(FitError::TooFewPoints {
            what: "a piecewise fit",
            needed: min_points.max(2),
            got: n,
        });
    }
    // cost[i][j]: squared relative residuals of one line through points i..j
    let mut cost = vec![vec![f64::INFINITY; n + 1]; n + 1];
    for i in 0..n {
        for j in i + min_points..=n {
            let f = fit_line(&x[i..j], &y[i..j], true)?;
            cost[i][j] = f
                .residuals
                .iter()
                .zip(&y[i..j])
                .map(|(r, v)| (r / v).powi(2))
                .sum();
        }
    }
    let kmax = max_segments.max(1).min(n / min_points).max(1);
    // best[k][j]: the least cost of points 0..j in k + 1 segments, and where the last starts
    let mut best = vec![vec![(f64::INFINITY, 0usize); n + 1]; kmax];
    for j in 0..=n {
        best[0][j] = (cost[0][j], 0);
    }
    for k in 1..kmax {
        for j in 0..=n {
            for i in 0..j {
                let c = best[k - 1][i].0 + cost[i][j];
                if c < best[k][j].0 {
                    best[k][j] = (c, i);
                }
            }
        }
    }
    let floor = 1e-20 * n as f64;
    let sse: Vec<f64> = (0..kmax)
        .map(|k| best[k][n].0)
        .filter(|c| c.is_finite())
        .collect();
    let mut k = 0;
    while k + 1 < sse.len() && sse[k] > floor && sse[k + 1] * SEGMENT_GAIN < sse[k] {
        k += 1;
    }
    let mut starts = Vec::with_capacity(k + 1);
    let mut j = n;
    for level in (0..=k).rev() {
        let i = best[level][j].1;
        starts.push((i, j));
        j = i;
    }
    starts.reverse();
    let mut segments = Vec::with_capacity(starts.len());
    let mut predicted = vec![0.0; n];
    for &(i, j) in &starts {
        let f = fit_line(&x[i..j], &y[i..j], true)?;
        predicted[i..j].copy_from_slice(&f.predicted);
        segments.push(Segment {
            first: i,
            end: j,
            lo: x[i],
            hi: x[j - 1],
            intercept: f.coef[0],
            slope: f.coef[1],
            r2: f.r2,
        });
    }
    let w: Vec<f64> = y.iter().map(|v| 1.0 / v).collect();
    let residuals = y.iter().zip(&predicted).map(|(a, b)| a - b).collect();
    Ok(PiecewiseFit {
        breaks: segments[1..].iter().map(|s| s.lo).collect(),
        r2: r_squared(y, &predicted, Some(&w)),
        segments,
        predicted,
        residuals,
        sse: sse[..(k + 2).min(sse.len())].to_vec(),
    })
}

/// The shared bandwidth of a node, fitted to concurrent flows.
#[derive(Clone, Debug, PartialEq)]
pub struct ContentionFit {
    /// `BW`, in the unit of the bandwidths given; with `saturated` false a lower bound (no
    /// measured flow count was limited by it): the largest flow count times `single`.
    pub bandwidth: f64,
    /// Whether some measured flow count was limited by `BW`.
    pub saturated: bool,
    /// R² of `log bw` (how well `min(single, BW/k)` fits).
    pub r2: f64,
    /// `min(single, BW/k)` of every point.
    pub predicted: Vec<f64>,
    /// `bw − predicted` of every point.
    pub residuals: Vec<f64>,
}

/// `BW` such that `per_flow[i] ≈ min(single, BW / flows[i])`: what `k` flows sharing a node's
/// bandwidth get each, by max–min sharing, when one flow alone gets `single`. Fitted by least
/// squares on the logarithms (a factor off counts the same at every k): for each set of flow
/// counts that `BW` limits, `log BW` is the mean of `log(k·bw)` over them, kept in the range
/// that makes exactly that set limited; the set with the least squared error is taken.
///
/// ```
/// use hypercuboid_core::calibrate::contention;
/// // 10 GB/s per flow, 24 GB/s shared: 10, 10, 8, 6 GB/s with 1..4 flows.
/// let fit = contention(&[1.0, 2.0, 3.0, 4.0], &[10.0, 10.0, 8.0, 6.0], 10.0)?;
/// assert!((fit.bandwidth - 24.0).abs() < 1e-9 && fit.saturated);
/// # Ok::<(), hypercuboid_core::calibrate::FitError>(())
/// ```
pub fn contention(flows: &[f64], per_flow: &[f64], single: f64) -> Result<ContentionFit, FitError> {
    let n = per_flow.len();
    check_len("flows", flows.len(), n)?;
    if n == 0 {
        return Err(FitError::TooFewPoints {
            what: "a contention fit",
            needed: 1,
            got: 0,
        });
    }
    check_finite("flows", flows, true)?;
    check_finite("per_flow", per_flow, true)?;
    check_finite("single", &[single], true)?;
    let ls = single.ln();
    let lb: Vec<f64> = per_flow.iter().map(|b| b.ln()).collect();
    let mut ks: Vec<f64> = flows.to_vec();
    ks.sort_by(f64::total_cmp);
    ks.dedup();
    let sse_of = |log_bw: f64| -> f64 {
        (0..n)
            .map(|i| (lb[i] - (log_bw - flows[i].ln()).min(ls)).powi(2))
            .sum()
    };
    // c = BW / single in [lo, hi): the flow counts above c are limited by BW
    let mut best: Option<(f64, f64)> = None; // (sse, log BW)
    for t in 0..ks.len() {
        let lo = if t == 0 { 0.0 } else { ks[t - 1] };
        let hi = ks[t];
        let limited: Vec<usize> = (0..n).filter(|&i| flows[i] > lo).collect();
        let mean =
            limited.iter().map(|&i| lb[i] + flows[i].ln()).sum::<f64>() / limited.len() as f64;
        let log_lo = if lo > 0.0 {
            ls + lo.ln()
        } else {
            f64::NEG_INFINITY
        };
        let log_bw = mean.clamp(log_lo, ls + hi.ln());
        let s = sse_of(log_bw);
        if best.is_none_or(|(b, _)| s < b) {
            best = Some((s, log_bw));
        }
    }
    let kmax = ks[ks.len() - 1];
    let unsaturated = sse_of(ls + kmax.ln() + 1e-12);
    let (bandwidth, saturated) = match best {
        Some((s, log_bw)) if s < unsaturated && log_bw < ls + kmax.ln() - 1e-12 => {
            (log_bw.exp(), true)
        }
        _ => (single * kmax, false),
    };
    let predicted: Vec<f64> = flows.iter().map(|k| (bandwidth / k).min(single)).collect();
    let lp: Vec<f64> = predicted.iter().map(|p| p.ln()).collect();
    Ok(ContentionFit {
        bandwidth,
        saturated,
        r2: r_squared(&lb, &lp, None),
        residuals: per_flow
            .iter()
            .zip(&predicted)
            .map(|(a, b)| a - b)
            .collect(),
        predicted,
    })
}

/// The node level's shared bandwidth: `2/G2` of two flows at once (one each way, at every size
/// measured; `two_flows_gap_per_byte` is `G2`, the time per byte of each), but the contention
/// fit's `fitted` where that is lower, `saturated`, and saw more than 2 flows per node
/// (`most_flows_per_node`) sharing; `fitted` where no two flows were measured (None or not > 0).
/// The bandwidth is in bytes per unit of `G2`'s time.
///
/// ```
/// use hypercuboid_core::calibrate::node_bandwidth;
/// assert_eq!(node_bandwidth(25.0, true, 4.0, Some(0.05)), 25.0); // 4 flows saw less than 40
/// assert_eq!(node_bandwidth(25.0, true, 2.0, Some(0.05)), 40.0); // 2 flows: the exchanges'
/// assert_eq!(node_bandwidth(25.0, true, 4.0, None), 25.0);
/// ```
pub fn node_bandwidth(
    fitted: f64,
    saturated: bool,
    most_flows_per_node: f64,
    two_flows_gap_per_byte: Option<f64>,
) -> f64 {
    match two_flows_gap_per_byte {
        Some(g2) if g2 > 0.0 => {
            let two = 2.0 / g2;
            if saturated && most_flows_per_node > 2.0 {
                fitted.min(two)
            } else {
                two
            }
        }
        _ => fitted,
    }
}
