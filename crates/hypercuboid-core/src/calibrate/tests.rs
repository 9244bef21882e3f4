use super::*;

/// A fixed sequence of factors in [1 − amp, 1 + amp] (a linear congruential generator), so that
/// the noisy measurements of a test are the same on every run.
pub(super) fn noise(n: usize, amp: f64, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            1.0 + amp * (2.0 * u - 1.0)
        })
        .collect()
}

fn sizes(lo: u32, hi: u32) -> Vec<f64> {
    (lo..=hi).map(|k| (1u64 << k) as f64).collect()
}

/// `f(x)` of every `x`, times noise of relative amplitude `amp` (seeded by `seed`).
fn noisy(x: &[f64], amp: f64, seed: u64, f: impl Fn(f64) -> f64) -> Vec<f64> {
    let n = noise(x.len(), amp, seed);
    x.iter().zip(&n).map(|(&v, e)| f(v) * e).collect()
}

pub(super) fn within(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs()
}

#[test]
fn least_squares_recovers_three_coefficients_exactly() {
    let x: Vec<f64> = (0..10).map(|i| i as f64).collect();
    let x2: Vec<f64> = x.iter().map(|v| v * v).collect();
    let ones = vec![1.0; 10];
    let y: Vec<f64> = x.iter().map(|v| 3.0 - 2.0 * v + 0.5 * v * v).collect();
    let f = least_squares(&[&ones, &x, &x2], &y, None).unwrap();
    for (got, want) in f.coef.iter().zip([3.0, -2.0, 0.5]) {
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    }
    assert!((f.r2 - 1.0).abs() < 1e-12);
    assert!(f.residuals.iter().all(|r| r.abs() < 1e-9));
}

#[test]
fn nnls_equals_least_squares_when_that_is_non_negative() {
    let x = sizes(0, 20);
    let ones = vec![1.0; x.len()];
    let y = noisy(&x, 0.02, 1, |s| 800.0 + 0.2 * s);
    let w: Vec<f64> = y.iter().map(|v| 1.0 / v).collect();
    let a = least_squares(&[&ones, &x], &y, Some(&w)).unwrap();
    let b = nnls(&[&ones, &x], &y, Some(&w)).unwrap();
    assert!(a.coef.iter().all(|c| *c > 0.0));
    for (p, q) in a.coef.iter().zip(&b.coef) {
        assert!((p - q).abs() <= 1e-9 * p.abs(), "{p} vs {q}");
    }
}

#[test]
fn nnls_is_never_negative_and_reports_a_poor_r2() {
    // falling data: an unconstrained line has a negative slope
    let x = sizes(0, 12);
    let ones = vec![1.0; x.len()];
    let y: Vec<f64> = x.iter().map(|s| 5000.0 - 0.9 * s).collect();
    let free = least_squares(&[&ones, &x], &y, None).unwrap();
    assert!(free.coef[1] < 0.0);
    let f = nnls(&[&ones, &x], &y, None).unwrap();
    assert!(f.coef.iter().all(|c| *c >= 0.0), "{:?}", f.coef);
    assert_eq!(f.coef[1], 0.0);
    assert!(f.r2 < 0.9, "{}", f.r2);
    // many random-like problems: never a negative coefficient, never worse than all-zero
    for seed in 0..50 {
        let n1 = noise(x.len(), 1.0, seed);
        let n2 = noise(x.len(), 1.0, seed + 100);
        let yy: Vec<f64> = n1.iter().map(|v| v - 1.0).collect();
        let f = nnls(&[&ones, &n2, &x], &yy, None).unwrap();
        assert!(f.coef.iter().all(|c| *c >= 0.0), "{seed}: {:?}", f.coef);
        let ss: f64 = f.residuals.iter().map(|r| r * r).sum();
        let ss0: f64 = yy.iter().map(|r| r * r).sum();
        assert!(ss <= ss0 * (1.0 + 1e-12), "{seed}: {ss} > {ss0}");
    }
}

#[test]
fn a_postal_line_is_recovered_within_two_percent_from_noisy_measurements() {
    // α = 1.2 µs, β = 0.35 ns/B, as µs; 3 % noise
    let x = sizes(0, 22);
    let y = noisy(&x, 0.03, 7, |s| 1.2 + 0.35e-3 * s);
    let f = fit_line(&x, &y, true).unwrap();
    assert!(within(f.coef[0], 1.2, 0.02), "alpha {}", f.coef[0]);
    assert!(within(f.coef[1], 0.35e-3, 0.02), "beta {}", f.coef[1]);
    assert!(f.r2 > 0.99);
}

#[test]
fn piecewise_finds_a_known_break_point_in_noisy_measurements() {
    // eager up to 4 KiB: 0.5 µs + 0.1 ns/B; rendezvous from 8 KiB: 2.5 µs + 0.08 ns/B; 2 % noise
    let x = sizes(0, 22);
    let y = noisy(&x, 0.02, 3, |s| {
        if s <= 4096.0 {
            0.5 + 1e-4 * s
        } else {
            2.5 + 0.8e-4 * s
        }
    });
    let f = piecewise(&x, &y, 3, 3).unwrap();
    assert_eq!(f.breaks, vec![8192.0]);
    assert_eq!((f.segments[0].hi, f.segments[1].lo), (4096.0, 8192.0));
    assert!(within(f.segments[0].intercept, 0.5, 0.02));
    assert!(within(f.segments[1].intercept, 2.5, 0.02));
    assert!(within(f.segments[1].slope, 0.8e-4, 0.02));
    assert!(f.r2 > 0.99);
    assert!(f.sse[1] * SEGMENT_GAIN < f.sse[0]);
    // the switch: after 4 KiB, the lines 3.155 - 1.319 = 1.836 µs apart at 8 KiB
    let switches = f.switches();
    assert_eq!(switches.len(), 1, "{switches:?}");
    assert_eq!(switches[0].0, 4096.0);
    assert!(within(switches[0].1, 1.836, 0.05), "{switches:?}");
}

#[test]
fn piecewise_keeps_one_segment_for_one_noisy_line() {
    let x = sizes(0, 22);
    let y = noisy(&x, 0.02, 11, |s| 1.0 + 1e-4 * s);
    let f = piecewise(&x, &y, 3, 3).unwrap();
    assert!(f.breaks.is_empty(), "{:?}", f.breaks);
    assert_eq!(f.segments.len(), 1);
    assert!(f.switches().is_empty());
    assert_eq!((f.segments[0].first, f.segments[0].end), (0, x.len()));
}

#[test]
fn contention_recovers_the_shared_bandwidth() {
    // one flow 12 GB/s, 30 GB/s shared, 1 % noise; k = 1..8
    let k: Vec<f64> = (1..=8).map(f64::from).collect();
    let bw = noisy(&k, 0.01, 5, |k| (30.0 / k).min(12.0));
    let f = contention(&k, &bw, 12.0).unwrap();
    assert!(f.saturated);
    assert!(within(f.bandwidth, 30.0, 0.02), "{}", f.bandwidth);
    assert!(f.r2 > 0.98, "{}", f.r2);
    // exact data: exact
    let bw: Vec<f64> = k.iter().map(|k| (30.0 / k).min(12.0)).collect();
    assert!((contention(&k, &bw, 12.0).unwrap().bandwidth - 30.0).abs() < 1e-9);
}

#[test]
fn contention_that_never_limits_gives_a_lower_bound() {
    let f = contention(&[1.0, 2.0], &[10.0, 10.0], 10.0).unwrap();
    assert!(!f.saturated);
    assert_eq!(f.bandwidth, 20.0);
    assert_eq!(f.predicted, vec![10.0, 10.0]);
    // all limited from one flow on: BW below a single flow's bandwidth
    let f = contention(&[1.0, 2.0, 4.0], &[8.0, 4.0, 2.0], 10.0).unwrap();
    assert!(f.saturated && (f.bandwidth - 8.0).abs() < 1e-9);
}

#[test]
fn loggops_parameters_are_recovered_within_two_percent() {
    // µs: L = 0.4, o = 0.15, g = 0.25, G = 0.1 ns/B, S = 4 KiB (rendezvous adds 1.5 µs)
    let (l, o, g, big_g) = (0.4, 0.15, 0.25, 1e-4);
    let x = sizes(0, 22);
    let y = noisy(&x, 0.01, 9, |s| {
        l + 2.0 * o + (s - 1.0) * big_g + if s > 4096.0 { 1.5 } else { 0.0 }
    });
    let m: Vec<f64> = (0..7).map(|k| f64::from(1 << k)).collect();
    let train = noisy(&m, 0.01, 10, |m| 1.0 + g * m);
    let nd = noise(m.len(), 0.01, 12);
    // the delay itself is exact; posting is noisy
    let delayed: Vec<f64> = m.iter().zip(&nd).map(|(m, e)| 20.0 + o * m * e).collect();
    let f = fit_loggops(&x, &y, &m, &train, &m, &delayed, 3).unwrap();
    assert!(within(f.overhead, o, 0.02), "o {}", f.overhead);
    assert!(within(f.gap, g, 0.02), "g {}", f.gap);
    assert!(within(f.latency, l, 0.02), "L {}", f.latency);
    assert!(within(f.gap_per_byte, big_g, 0.02), "G {}", f.gap_per_byte);
    assert_eq!(f.eager_limit, Some(4096.0));
    assert_eq!(f.latency_excess, 0.0);
    assert_eq!(f.pingpong.breaks, vec![8192.0]);
    // the pipelined model: α_r = g, α_p the rest of the first segment's intercept
    assert_eq!(f.alpha_r, f.gap);
    assert_eq!(f.alpha_p, f.pingpong.segments[0].intercept - f.gap);
    assert!(
        within(f.alpha_p + f.alpha_r, l + 2.0 * o, 0.02),
        "{}",
        f.alpha_p
    );
    assert_eq!(f.alpha_p_shortfall, 0.0);
}

#[test]
fn loggops_says_when_the_overheads_exceed_the_latency() {
    let x = sizes(0, 10);
    let y: Vec<f64> = x.iter().map(|s| 1.0 + 1e-4 * s).collect();
    let m = [1.0, 2.0, 4.0, 8.0];
    let t: Vec<f64> = m.iter().map(|m| 0.8 * m).collect();
    let f = fit_loggops(&x, &y, &m, &t, &m, &t, 3).unwrap();
    assert_eq!(f.latency, 0.0);
    assert!((f.latency_excess - (1.6 - 1.0 - 1e-4)).abs() < 1e-9);
    assert_eq!(f.eager_limit, None);
    assert!(f.r2 < 0.9);
    // α_r = g = 0.8 is below the one-way intercept 1: α_p is the rest
    assert!((f.alpha_p - (1.0 - 0.8)).abs() < 1e-9 && f.alpha_p_shortfall == 0.0);
    // a gap above the intercept: α_p is 0 and the shortfall says by how much, never negative
    let slow: Vec<f64> = m.iter().map(|m| 1.5 * m).collect();
    let f = fit_loggops(&x, &y, &m, &slow, &m, &t, 3).unwrap();
    assert_eq!(f.alpha_p, 0.0);
    assert!(
        (f.alpha_p_shortfall - 0.5).abs() < 1e-9,
        "{}",
        f.alpha_p_shortfall
    );
}

#[test]
fn the_node_bandwidth_takes_two_flows_unless_more_flows_saw_less() {
    // 2/G2 = 40 (G2 = 0.05); the contention fit's 25 where it saw more than 2 flows limited
    assert_eq!(node_bandwidth(25.0, true, 4.0, Some(0.05)), 25.0);
    assert_eq!(node_bandwidth(25.0, true, 4.0, Some(0.1)), 20.0);
    assert_eq!(node_bandwidth(25.0, true, 2.0, Some(0.05)), 40.0);
    assert_eq!(node_bandwidth(25.0, false, 4.0, Some(0.05)), 40.0);
    assert_eq!(node_bandwidth(25.0, true, 4.0, None), 25.0);
    assert_eq!(node_bandwidth(25.0, true, 4.0, Some(0.0)), 25.0);
}

#[test]
fn bad_input_is_one_line_naming_it() {
    let e = |r: Result<LinearFit, FitError>| r.unwrap_err().to_string();
    assert_eq!(
        e(fit_line(&[1.0, 1.0], &[2.0, 3.0], false)),
        "a line needs at least 2 points with different x, got 1"
    );
    assert_eq!(
        e(fit_line(&[1.0, 2.0], &[2.0], false)),
        "x has 2 values, the measurements 1: give one per point"
    );
    assert_eq!(
        e(fit_line(&[1.0, 2.0], &[2.0, 0.0], true)),
        "y[1] = 0: a finite number > 0"
    );
    assert_eq!(
        e(nnls(&[&[1.0, f64::NAN]], &[1.0, 2.0], None)),
        "column 0[1] = NaN: a finite number"
    );
    assert_eq!(
        piecewise(&[1.0, 4.0, 2.0], &[1.0, 2.0, 3.0], 2, 3)
            .unwrap_err()
            .to_string(),
        "x[2] = 2: x strictly ascending"
    );
    assert_eq!(
        piecewise(&[1.0, 2.0], &[1.0, 2.0], 2, 3)
            .unwrap_err()
            .to_string(),
        "a piecewise fit needs at least 3 points with different x, got 2"
    );
    assert_eq!(
        contention(&[1.0], &[-1.0], 1.0).unwrap_err().to_string(),
        "per_flow[0] = -1: a finite number > 0"
    );
}

#[test]
fn a_poor_fit_is_said_in_one_line_and_a_good_one_is_not() {
    assert_eq!(poor_fit("x", R2_THRESHOLD), None);
    assert_eq!(poor_fit("x", 1.0), None);
    let says = |r2: f64| poor_fit("postal fit of the intra ping-pong", r2).unwrap();
    assert_eq!(
        says(0.8295),
        "postal fit of the intra ping-pong: R² = 0.830 is below 0.9: the model does not fit \
         these measurements"
    );
    assert!(says(-3.25).contains(": R² = -3.250 is below 0.9: "));
    assert!(says(f64::NAN).contains(": R² = nan is below 0.9: "));
}
