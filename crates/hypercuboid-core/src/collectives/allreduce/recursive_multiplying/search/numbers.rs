//! `b_opt` (eq. 5) and the number theory the search needs: prime factors, the inner sizes of
//! split and merged schedules, collapse bases.

use super::*;

/// The principal branch `W₀(x)` of the Lambert W function (`W e^W = x`) for `x ≥ −1/e`,
/// by Halley's iteration to full double precision; NaN below `−1/e`.
pub fn lambert_w0(x: f64) -> f64 {
    let branch = -(-1.0f64).exp(); // −1/e
    if x.is_nan() || x < branch {
        return f64::NAN;
    }
    if x == 0.0 {
        return 0.0;
    }
    if x == f64::INFINITY {
        return f64::INFINITY;
    }
    // Starting point: near the branch point a series in sqrt(2(ex + 1)), else log-based.
    let mut w = if x < 1.0 {
        let p = (2.0 * (std::f64::consts::E * x + 1.0)).sqrt();
        -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p
    } else {
        let l = x.ln();
        l - l.ln().max(0.0)
    };
    for _ in 0..64 {
        let ew = w.exp();
        let f = w * ew - x;
        let wp1 = w + 1.0;
        if wp1 == 0.0 {
            break;
        }
        let denom = ew * wp1 - (w + 2.0) * f / (2.0 * wp1);
        let next = w - f / denom;
        if (next - w).abs() <= 1e-15 * (1.0 + next.abs()) {
            w = next;
            break;
        }
        w = next;
    }
    w
}

/// Eq. 5 of the paper: the `b` (messages per stage) that minimises
/// `(α_p + b α_r)·log_{b+1} N` over real `b`, for `ratio = α_p / α_r`:
/// `b_opt = e^{W((ratio − 1)/e) + 1} − 1`. It solves `(b + 1)(ln(b + 1) − 1) = ratio − 1`, so
/// `ratio = 1` gives `e − 1 ≈ 1.718`, not 1: even when overlapping buys nothing, a 3-way
/// exchange (`b = 2`) beats pairwise exchange in this model. Defined for `ratio ≥ 0`.
pub fn b_opt(ratio: f64) -> Result<f64, TuningError> {
    if !ratio.is_finite() || ratio < 0.0 {
        return Err(bad(
            "alpha_p / alpha_r",
            ratio,
            "the overlap ratio is a finite number >= 0 (the paper calls ratios below 1 \
             unreasonable)",
        ));
    }
    Ok((lambert_w0((ratio - 1.0) / std::f64::consts::E) + 1.0).exp() - 1.0)
}

/// The integer `b ≥ 1` that minimises `(ratio + b)/ln(b + 1)` (the per-doubling cost of
/// `b`-message stages in units of α_r), the smaller one on a tie.
pub fn b_opt_integer(ratio: f64) -> Result<u32, TuningError> {
    let real = b_opt(ratio)?;
    let f = |b: f64| (ratio + b) / (b + 1.0).ln();
    let lo = real.floor().max(1.0);
    let hi = real.ceil().max(1.0);
    Ok(if f(hi) < f(lo) { hi as u32 } else { lo as u32 })
}

// ---------------------------------------------------------------------------------------------
// Number theory helpers
// ---------------------------------------------------------------------------------------------

/// The prime factors of `n ≥ 1` with multiplicity, ascending.
pub fn prime_factors(mut n: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut q: u32 = 2;
    while (q as u64) * (q as u64) <= n as u64 {
        while n.is_multiple_of(q) {
            out.push(q);
            n /= q;
        }
        q += if q == 2 { 1 } else { 2 };
    }
    if n > 1 {
        out.push(n);
    }
    out
}

/// The largest prime factor of `m` (1 for `m = 1`) if it is below `bound`, else `None` (trial
/// division that stops at `bound`).
pub(super) fn gpf_below(m: u32, bound: u32) -> Option<u32> {
    let mut rem = m;
    let mut g = 1;
    let mut q: u32 = 2;
    while (q as u64) * (q as u64) <= rem as u64 {
        if q >= bound {
            return None;
        }
        if rem.is_multiple_of(q) {
            g = q;
            while rem.is_multiple_of(q) {
                rem /= q;
            }
        }
        q += if q == 2 { 1 } else { 2 };
    }
    if rem > 1 {
        g = g.max(rem);
    }
    (g < bound).then_some(g)
}

/// The inner sizes of split and merged schedules of `n` ranks, largest first: the largest
/// number below `n` whose prime factors are all smaller than `n`'s largest (the fewest ranks set
/// aside to avoid that prime), and the largest power of two below `n` (MPICH's choice). None
/// when `n ≤ 2` or `n` is a power of two. `n ≤` [`MAX_ENUMERATE_RANKS`].
pub fn inner_sizes(n: u32) -> Result<Vec<u32>, TuningError> {
    if n > MAX_ENUMERATE_RANKS {
        return Err(bad(
            "nranks",
            n,
            format!("split and merged schedules are enumerated up to {MAX_ENUMERATE_RANKS} ranks"),
        ));
    }
    let mut out = Vec::new();
    if n <= 2 || n.is_power_of_two() {
        return Ok(out);
    }
    let bound = largest_prime_factor(n);
    let pof2 = 1u32 << (31 - (n - 1).leading_zeros());
    // The walk ends at pof2 at the latest: a power of two qualifies whenever bound > 2.
    let mut m = n - 1;
    while m > pof2 && gpf_below(m, bound).is_none() {
        m -= 1;
    }
    out.push(m);
    if m != pof2 {
        out.push(pof2);
    }
    Ok(out)
}

/// The largest prime factor of `n ≥ 2`.
pub fn largest_prime_factor(n: u32) -> u32 {
    *prime_factors(n).last().expect("n >= 2 has a prime factor")
}

/// The smallest collapse base for `r` extra ranks on `n`: `B − 1` divides `r` and
/// `T = B·r/(B − 1) ≤ n`. Returns `(T, B)`.
pub fn collapse_for(n: u32, r: u32) -> Option<(u32, u32)> {
    divisors(r).into_iter().find_map(|d| {
        let b = d as u64 + 1;
        let t = (r / d) as u64 * b;
        (t <= n as u64).then_some((t as u32, b as u32))
    })
}
