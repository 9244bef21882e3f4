//! Schedule search for recursive multiplying (Ruefenacht, Bull and Booth 2017, sections 3, 4 and
//! 8): enumerate the legal schedules of `N` ranks, rank them by the pipelined postal model's
//! closed form and by simulation, find the model-optimal factored schedule of large `N` by
//! dynamic programming, and `b_opt` (eq. 5).
//!
//! # The closed form
//! With `c_m = α_r + nβ` (issuing one message of `n` bytes) and `c_r = nγ + δ` (one reduction),
//! a stage costs `α_p + b·c_m + r·c_r`, where `b` is the largest number of messages one rank
//! sends in the stage and `r` the reductions on its critical path:
//!
//! | stage    | `b`                  | `r`                   |
//! |----------|----------------------|-----------------------|
//! | `aB`     | `B − 1`              | `B − 1`               |
//! | `cTmB`   | 1                    | `B − 1`               |
//! | `eTmB`   | `B − 1`              | 0                     |
//! | `mRgGaB` | `B` (a remainder)    | `B − 1 + ⌈R/G⌉`       |
//! | `nRgGaB` | `B − 1 + ⌈R/G⌉`      | `B − 1`               |
//!
//! With `n = 0` and no reduction cost this is the paper's `Σ (α_p + b_i α_r)` (eq. 3 summed over
//! the stages, section 3). For factored schedules (only `a` stages) it is **exact**: the
//! simulator's pipelined model gives the same picoseconds (`tests/integration/tuning.rs` checks every
//! factored schedule of every N ≤ 64). For split and merged schedules it is an estimate: the
//! ranks that fold in or stand aside start or finish at other times (the skew the seed's
//! Figs. 20–22 show), which only simulation captures.
//!
//! # What is enumerated
//! [`for_each_schedule`] produces, for `N` ranks:
//! - **factored**: every ordered factorisation of `N` into factors ≥ 2 (`N = 1`: the empty
//!   schedule), in lexicographic order of the factor lists;
//! - **split** and **merged** variants, when `N` is not a power of two, for two inner sizes
//!   `N'` ([`inner_sizes`]): the largest number below `N` whose prime factors are all smaller
//!   than `N`'s largest prime factor `P` (the fewest ranks set aside to avoid `P`), and the
//!   largest power of two below `N` (MPICH's fix); for `N = 7`: 6 and 4. A split collapses the
//!   `R = N − N'` extra ranks with the smallest base `B` that can (`B − 1` divides `R` and
//!   `T = B·R/(B − 1) ≤ N`; a larger base only costs more messages in the expand stage); a
//!   merge sets the `R` ranks aside. Their bodies are the factorisations of `N'` into factors
//!   smaller than `P` (a variant exists to avoid `P`; a stage that large could be had without
//!   it), at least two for a merge, listed once each as multiplicative partitions with the
//!   largest factor first (the order of the factors does not change the closed form of a
//!   factored body).
//!
//! The counts grow like `N^1.73` (ordered factorisations); [`count_schedules`] computes them
//! without enumerating, and [`DEFAULT_MAX_SCHEDULES`] caps what [`rank_schedules`] accepts.
//! Beyond it, [`optimal_factored`] finds the model-optimal factored schedule exactly by dynamic
//! programming over the divisors of `N` (the cost is additive per stage and independent of the
//! order of the stages).

pub use crate::arith::divisors;
use crate::collectives::allreduce::{self, Algorithm, AllreduceSpec, ScheduleString, Stage};
use crate::model::{ModelError, ModelSpec, PostalModel};
use crate::schedule::{Dtype, ReduceOp, ScheduleError};
use crate::sim::{self, SimError, SimOptions};
use crate::units::{per_byte, Time};
use std::fmt;

/// Largest `N` the enumerator accepts (the inner sizes are found by walking down from `N`).
pub const MAX_ENUMERATE_RANKS: u32 = 1 << 24;

/// Default cap on the number of schedules [`rank_schedules`] enumerates.
pub const DEFAULT_MAX_SCHEDULES: u64 = 200_000;

/// What can go wrong in schedule search.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TuningError {
    /// A parameter outside what is accepted.
    BadParameter {
        /// Its name.
        name: String,
        /// The value given.
        value: String,
        /// What is accepted.
        reason: String,
    },
    /// More schedules than the cap: enumerate with a larger cap or use the dynamic program.
    TooMany {
        /// Number of ranks.
        nranks: u32,
        /// How many schedules the enumeration would produce.
        count: u128,
        /// The cap.
        cap: u64,
    },
    /// Generating a schedule failed.
    Schedule(ScheduleError),
    /// Simulating a schedule failed.
    Simulation(SimError),
    /// The model's parameters are out of range ([`PostalModel::validate`]).
    Model(ModelError),
}

impl fmt::Display for TuningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TuningError::BadParameter {
                name,
                value,
                reason,
            } => write!(f, "invalid {name} '{value}': {reason}"),
            TuningError::TooMany { nranks, count, cap } => write!(
                f,
                "{nranks} ranks have {count} schedules, more than the cap of {cap}; raise the \
                 cap, or use the dynamic program (optimal_factored), which finds the \
                 model-optimal factored schedule without enumerating"
            ),
            TuningError::Schedule(e) => write!(f, "{e}"),
            TuningError::Simulation(e) => write!(f, "simulation failed: {e}"),
            TuningError::Model(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TuningError {}

impl From<ScheduleError> for TuningError {
    fn from(e: ScheduleError) -> Self {
        TuningError::Schedule(e)
    }
}

impl From<ModelError> for TuningError {
    fn from(e: ModelError) -> Self {
        TuningError::Model(e)
    }
}

impl From<SimError> for TuningError {
    fn from(e: SimError) -> Self {
        TuningError::Simulation(e)
    }
}

fn bad(name: &str, value: impl fmt::Display, reason: impl Into<String>) -> TuningError {
    TuningError::BadParameter {
        name: name.into(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Model parameters and the closed form
// ---------------------------------------------------------------------------------------------

/// What the closed form reads: the pipelined postal model (the postal model is the case
/// `alpha_p = 0`) and the bytes of each rank's vector.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The model: α_p, α_r, β, γ, δ.
    pub model: PostalModel,
    /// Bytes of each rank's vector (`n`).
    pub bytes: u64,
}

impl Params {
    /// Small messages, no reduction cost: the paper's `Σ (α_p + b α_r)`.
    pub fn latency(alpha_p: Time, alpha_r: Time) -> Params {
        Params {
            model: PostalModel {
                alpha_p,
                alpha_r,
                beta: 0.0,
                gamma: 0.0,
                delta: 0,
            },
            bytes: 0,
        }
    }

    /// The paper's Table 1 fit, minimum: α_p = 1.34 µs, α_r = 0.34 µs.
    pub fn table1_minimum() -> Params {
        Params::latency(1_340_000, 340_000)
    }

    /// The paper's Table 1 fit, median: α_p = 1.51 µs, α_r = 0.38 µs.
    pub fn table1_median() -> Params {
        Params::latency(1_510_000, 380_000)
    }

    /// The postal or pipelined model a spec names, for vectors of `bytes` bytes. LogGOPS has no
    /// closed form here: an error says so.
    pub fn from_model(model: &ModelSpec, bytes: u64) -> Result<Params, TuningError> {
        match model {
            ModelSpec::Postal(m) | ModelSpec::Pipelined(m) => Ok(Params { model: *m, bytes }),
            ModelSpec::LogGops(_) => Err(bad(
                "model",
                model.name(),
                "the closed form is the pipelined postal model's (postal or pipelined); \
                 simulate to rank schedules under LogGOPS",
            )),
        }
    }

    /// Checks the model ([`PostalModel::validate`]).
    pub fn validate(&self) -> Result<(), TuningError> {
        Ok(self.model.validate()?)
    }

    /// `c_m = α_r + nβ`: one message issued.
    pub fn per_message(&self) -> u128 {
        self.model.alpha_r as u128 + per_byte(self.bytes, self.model.beta) as u128
    }

    /// `c_r = nγ + δ`: one reduction.
    pub fn per_reduction(&self) -> u128 {
        per_byte(self.bytes, self.model.gamma) as u128 + self.model.delta as u128
    }

    /// The closed-form cost of an `aB` stage, `α_p + (B − 1)(c_m + c_r)`.
    pub fn factor_stage(&self, b: u32) -> u128 {
        self.model.alpha_p as u128 + (b as u128 - 1) * (self.per_message() + self.per_reduction())
    }

    /// The closed-form cost of one stage (see the module docs).
    pub fn stage(&self, s: &Stage) -> u128 {
        let (m, r, a) = (
            self.per_message(),
            self.per_reduction(),
            self.model.alpha_p as u128,
        );
        let up = |x: u32, y: u32| x.div_ceil(y) as u128;
        match *s {
            Stage::Factor(b) => self.factor_stage(b),
            Stage::Collapse { base, .. } => a + m + (base as u128 - 1) * r,
            Stage::Expand { base, .. } => a + (base as u128 - 1) * m,
            Stage::Merge {
                remainder,
                groups,
                base,
            } => a + base as u128 * m + (base as u128 - 1 + up(remainder, groups)) * r,
            Stage::InverseMerge {
                remainder,
                groups,
                base,
            } => a + (base as u128 - 1 + up(remainder, groups)) * m + (base as u128 - 1) * r,
        }
    }
}

fn clamp(t: u128) -> Time {
    t.min(Time::MAX as u128) as Time
}

/// The closed-form time of `schedule` on `nranks` ranks (exact for factored schedules, an
/// estimate for split and merged ones; see the module docs). The schedule must fit.
pub fn estimate(schedule: &ScheduleString, nranks: u32, p: &Params) -> Result<Time, TuningError> {
    p.validate()?;
    schedule
        .fit(nranks)
        .map_err(|e| TuningError::Schedule(e.into()))?;
    Ok(clamp(schedule.stages().iter().map(|s| p.stage(s)).sum()))
}

// ---------------------------------------------------------------------------------------------
// b_opt (eq. 5)
// ---------------------------------------------------------------------------------------------

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
fn gpf_below(m: u32, bound: u32) -> Option<u32> {
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

// ---------------------------------------------------------------------------------------------
// Counting and enumeration
// ---------------------------------------------------------------------------------------------

/// Which families to enumerate, and how many schedules at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnumerateOptions {
    /// Ordered factorisations.
    pub factored: bool,
    /// Collapse/expand variants.
    pub split: bool,
    /// Merge variants.
    pub merged: bool,
    /// At most this many schedules (0: no cap).
    pub max_schedules: u64,
}

impl Default for EnumerateOptions {
    fn default() -> Self {
        EnumerateOptions {
            factored: true,
            split: true,
            merged: true,
            max_schedules: DEFAULT_MAX_SCHEDULES,
        }
    }
}

/// How many schedules each family has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Ordered factorisations (`H(N)`).
    pub factored: u128,
    /// Split variants.
    pub split: u128,
    /// Merged variants.
    pub merged: u128,
}

impl Counts {
    /// All families together.
    pub fn total(&self) -> u128 {
        self.factored + self.split + self.merged
    }
}

/// Memoised counts over the divisors of one number.
struct DivisorTable {
    divs: Vec<u32>,
}

impl DivisorTable {
    fn new(n: u32) -> DivisorTable {
        DivisorTable { divs: divisors(n) }
    }
    fn index(&self, d: u32) -> usize {
        self.divs.binary_search(&d).expect("a divisor")
    }
    /// Ordered factorisations of every divisor (index-aligned with `divs`).
    fn ordered(&self) -> Vec<u128> {
        let mut h = vec![0u128; self.divs.len()];
        h[0] = 1; // divs[0] = 1
        for i in 1..self.divs.len() {
            let d = self.divs[i];
            let mut s = 0u128;
            for &f in &self.divs[1..=i] {
                if d.is_multiple_of(f) {
                    s = s.saturating_add(h[self.index(d / f)]);
                }
            }
            h[i] = s;
        }
        h
    }
    /// Multiplicative partitions of `d` into factors `≤ maxf`.
    fn partitions(
        &self,
        d: u32,
        maxf: u32,
        memo: &mut std::collections::HashMap<(u32, u32), u128>,
    ) -> u128 {
        if d == 1 {
            return 1;
        }
        if let Some(&v) = memo.get(&(d, maxf)) {
            return v;
        }
        let mut s = 0u128;
        for &f in &self.divs[1..] {
            if f > maxf || f > d {
                break;
            }
            if d.is_multiple_of(f) {
                s = s.saturating_add(self.partitions(d / f, f, memo));
            }
        }
        memo.insert((d, maxf), s);
        s
    }
}

/// The number of ordered factorisations of `n` (`H(n)`; `H(1) = 1`).
pub fn ordered_factorisations(n: u32) -> u128 {
    if n == 0 {
        return 0;
    }
    *DivisorTable::new(n).ordered().last().expect("1 divides n")
}

/// The number of multiplicative partitions of `n` (unordered factorisations; 1 for `n = 1`).
pub fn multiplicative_partitions(n: u32) -> u128 {
    if n == 0 {
        return 0;
    }
    DivisorTable::new(n).partitions(n, n, &mut Default::default())
}

/// The largest stage factor of the split and merged variants of `n` ranks: below `n`'s largest
/// prime factor, the prime the variants avoid.
fn variant_max_factor(n: u32) -> u32 {
    if n < 2 {
        1
    } else {
        largest_prime_factor(n) - 1
    }
}

/// How many schedules [`for_each_schedule`] would produce, without producing them.
pub fn count_schedules(n: u32, opts: &EnumerateOptions) -> Result<Counts, TuningError> {
    if n == 0 {
        return Err(bad("nranks", n, "an allreduce has at least 1 rank"));
    }
    let mut c = Counts::default();
    if opts.factored {
        c.factored = ordered_factorisations(n);
    }
    if opts.split || opts.merged {
        let maxf = variant_max_factor(n);
        for m in inner_sizes(n)? {
            let t = DivisorTable::new(m);
            let parts = t.partitions(m, maxf, &mut Default::default());
            if opts.split && collapse_for(n, n - m).is_some() {
                c.split += parts;
            }
            if opts.merged {
                // At least two factors: drop the one-stage body `am`.
                c.merged += parts - u128::from(m <= maxf);
            }
        }
    }
    Ok(c)
}

fn for_each_ordered(n: u32, divs: &[u32], prefix: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) {
    if n == 1 {
        f(prefix);
        return;
    }
    for &d in &divs[1..] {
        if d > n {
            break;
        }
        if n.is_multiple_of(d) {
            prefix.push(d);
            for_each_ordered(n / d, divs, prefix, f);
            prefix.pop();
        }
    }
}

fn for_each_partition(
    n: u32,
    maxf: u32,
    divs: &[u32],
    prefix: &mut Vec<u32>,
    f: &mut dyn FnMut(&[u32]),
) {
    if n == 1 {
        f(prefix);
        return;
    }
    // Largest factor first.
    for &d in divs[1..].iter().rev() {
        if d > maxf || d > n || !n.is_multiple_of(d) {
            continue;
        }
        prefix.push(d);
        for_each_partition(n / d, d, divs, prefix, f);
        prefix.pop();
    }
}

/// Calls `f` with every schedule of `n` ranks in the families `opts` selects (see the module
/// docs for what is enumerated and in which order). Refuses more than `opts.max_schedules`
/// before producing any.
pub fn for_each_schedule(
    n: u32,
    opts: &EnumerateOptions,
    f: &mut dyn FnMut(&ScheduleString),
) -> Result<Counts, TuningError> {
    let counts = count_schedules(n, opts)?;
    if opts.max_schedules > 0 && counts.total() > opts.max_schedules as u128 {
        return Err(TuningError::TooMany {
            nranks: n,
            count: counts.total(),
            cap: opts.max_schedules,
        });
    }
    let factored = |fs: &[u32]| -> Vec<Stage> { fs.iter().map(|&b| Stage::Factor(b)).collect() };
    let make = |stages: Vec<Stage>| {
        ScheduleString::new(stages).expect("enumerated schedules are well formed")
    };
    if opts.factored {
        let divs = divisors(n);
        for_each_ordered(n, &divs, &mut Vec::new(), &mut |fs| f(&make(factored(fs))));
    }
    if opts.split || opts.merged {
        let maxf = variant_max_factor(n);
        for m in inner_sizes(n)? {
            let r = n - m;
            let divs = divisors(m);
            if opts.split {
                if let Some((t, b)) = collapse_for(n, r) {
                    for_each_partition(m, maxf, &divs, &mut Vec::new(), &mut |fs| {
                        let mut st = vec![Stage::Collapse {
                            threshold: t,
                            base: b,
                        }];
                        st.extend(factored(fs));
                        st.push(Stage::Expand {
                            threshold: t,
                            base: b,
                        });
                        f(&make(st));
                    });
                }
            }
            if opts.merged {
                for_each_partition(m, maxf, &divs, &mut Vec::new(), &mut |fs| {
                    if fs.len() < 2 {
                        return;
                    }
                    let k = fs.len() - 1;
                    let mut st = Vec::with_capacity(fs.len());
                    st.push(Stage::Merge {
                        remainder: r,
                        groups: m / fs[0],
                        base: fs[0],
                    });
                    st.extend(factored(&fs[1..k]));
                    st.push(Stage::InverseMerge {
                        remainder: r,
                        groups: m / fs[k],
                        base: fs[k],
                    });
                    f(&make(st));
                });
            }
        }
    }
    Ok(counts)
}

/// Every schedule of `n` ranks that [`for_each_schedule`] produces, in its order.
pub fn enumerate_schedules(
    n: u32,
    opts: &EnumerateOptions,
) -> Result<Vec<ScheduleString>, TuningError> {
    let mut out = Vec::new();
    for_each_schedule(n, opts, &mut |s| out.push(s.clone()))?;
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Dynamic programming
// ---------------------------------------------------------------------------------------------

/// A schedule and its closed-form time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Optimum {
    /// The schedule (factors largest first).
    pub schedule: ScheduleString,
    /// Its closed-form time (exact for a factored schedule).
    pub time: Time,
    /// How many divisors of `N` the program visited.
    pub divisors: usize,
}

/// The factored schedule of `n` ranks with the least closed-form time, by dynamic programming
/// over the divisors of `n`: `best(d) = min over factors f of d of stage(f) + best(d / f)`,
/// `best(1) = 0`, exact because a factored schedule's time is the sum of its stages' and does
/// not depend on their order. Ties go to fewer stages, then to the larger factor. Work:
/// `O(d(n)²)` for `d(n)` divisors (240 for the highly composite 720720, 49 for 10⁶), plus
/// `O(√n)` to find them.
pub fn optimal_factored(n: u32, p: &Params) -> Result<Optimum, TuningError> {
    p.validate()?;
    if n == 0 {
        return Err(bad("nranks", n, "an allreduce has at least 1 rank"));
    }
    let table = DivisorTable::new(n);
    let divs = &table.divs;
    // (cost, stages, first factor)
    let mut best: Vec<(u128, u32, u32)> = vec![(0, 0, 0); divs.len()];
    for i in 1..divs.len() {
        let d = divs[i];
        let mut b: Option<(u128, u32, u32)> = None;
        for &f in &divs[1..=i] {
            if !d.is_multiple_of(f) {
                continue;
            }
            let (c, s, _) = best[table.index(d / f)];
            let cand = (c + p.factor_stage(f), s + 1, f);
            b = Some(match b {
                None => cand,
                Some(cur) => {
                    if (cand.0, cand.1) < (cur.0, cur.1)
                        || ((cand.0, cand.1) == (cur.0, cur.1) && cand.2 > cur.2)
                    {
                        cand
                    } else {
                        cur
                    }
                }
            });
        }
        best[i] = b.expect("d divides itself");
    }
    let mut factors = Vec::new();
    let mut d = n;
    while d > 1 {
        let f = best[table.index(d)].2;
        factors.push(f);
        d /= f;
    }
    factors.sort_unstable_by(|a, b| b.cmp(a));
    Ok(Optimum {
        schedule: ScheduleString::factored(&factors).expect("factors >= 2"),
        time: clamp(best[divs.len() - 1].0),
        divisors: divs.len(),
    })
}

// ---------------------------------------------------------------------------------------------
// Suggestions
// ---------------------------------------------------------------------------------------------

/// A few schedules that fit `n` ranks, for error messages: the model-optimal factored schedule
/// for the paper's Table 1 minimum fit, the prime factorisation (largest first), and when `n`
/// is not a power of two, MPICH's fix `c{2r}m2,a2,…,e{2r}m2` and, when `n − 1` factors, the merge
/// of one rank. Every suggestion fits `n`.
pub fn suggest(n: u32) -> Vec<ScheduleString> {
    let mut out: Vec<ScheduleString> = Vec::new();
    let mut add = |s: ScheduleString| {
        if !out.contains(&s) && out.len() < 4 {
            out.push(s);
        }
    };
    if n == 0 {
        return Vec::new();
    }
    if n == 1 {
        add(ScheduleString::empty());
        return out;
    }
    if let Ok(o) = optimal_factored(n, &Params::table1_minimum()) {
        add(o.schedule);
    }
    let mut pf = prime_factors(n);
    pf.reverse();
    if let Ok(s) = ScheduleString::factored(&pf) {
        add(s);
    }
    if !n.is_power_of_two() && n > 2 {
        let pof2 = 1u32 << (31 - n.leading_zeros());
        let rem = n - pof2;
        let mut st = vec![Stage::Collapse {
            threshold: 2 * rem,
            base: 2,
        }];
        st.extend(std::iter::repeat_n(
            Stage::Factor(2),
            pof2.trailing_zeros() as usize,
        ));
        st.push(Stage::Expand {
            threshold: 2 * rem,
            base: 2,
        });
        if let Ok(s) = ScheduleString::new(st) {
            add(s);
        }
        let m = n - 1;
        let mut f = prime_factors(m);
        if f.len() >= 2 {
            f.reverse();
            let k = f.len() - 1;
            let mut st = vec![Stage::Merge {
                remainder: 1,
                groups: m / f[0],
                base: f[0],
            }];
            st.extend(f[1..k].iter().map(|&b| Stage::Factor(b)));
            st.push(Stage::InverseMerge {
                remainder: 1,
                groups: m / f[k],
                base: f[k],
            });
            if let Ok(s) = ScheduleString::new(st) {
                add(s);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Ranking
// ---------------------------------------------------------------------------------------------

/// One ranked schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranked {
    /// The schedule.
    pub schedule: ScheduleString,
    /// Its closed-form time.
    pub predicted: Time,
    /// Its simulated completion time, when simulated.
    pub simulated: Option<Time>,
}

/// How the schedules were searched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    /// Every enumerated schedule was ranked by the closed form.
    Exhaustive {
        /// The families' sizes.
        counts: Counts,
    },
    /// Too many schedules (or too many ranks) to enumerate: the dynamic program's optimum only.
    DynamicProgram {
        /// Why enumeration was skipped.
        reason: String,
        /// Divisors of `N` the program visited.
        divisors: usize,
    },
}

/// What [`rank_schedules`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// Number of ranks.
    pub nranks: u32,
    /// The model's parameters.
    pub params: Params,
    /// `b_opt` of eq. 5 for the parameters' `α_p / α_r` (None when `α_r = 0`).
    pub b_opt: Option<f64>,
    /// How the schedules were searched.
    pub method: Method,
    /// The best schedules, best first: by simulated time when simulated, else by the closed
    /// form (ties: fewer stages, then the schedule's text).
    pub rows: Vec<Ranked>,
    /// How many schedules were simulated.
    pub simulated: usize,
}

/// Options of [`rank_schedules`].
#[derive(Clone, Debug, PartialEq)]
pub struct RankOptions {
    /// How many rows to return.
    pub top: usize,
    /// Which families, and the cap beyond which only the dynamic program runs.
    pub enumerate: EnumerateOptions,
    /// Simulate the `pool` best schedules by the closed form on this model, and rank those by
    /// simulated time.
    pub simulate: Option<ModelSpec>,
    /// How many schedules to simulate (at least `top`).
    pub pool: usize,
    /// Element count and type of the simulated vectors (`count × size` must equal the
    /// parameters' bytes).
    pub count: u64,
    /// Element type.
    pub dtype: Dtype,
}

impl Default for RankOptions {
    fn default() -> Self {
        RankOptions {
            top: 10,
            enumerate: EnumerateOptions::default(),
            simulate: None,
            pool: 40,
            count: 1,
            dtype: Dtype::Float64,
        }
    }
}

/// Simulated completion time of recursive multiplying with `schedule` on `n` ranks.
pub fn simulate_schedule(
    schedule: &ScheduleString,
    n: u32,
    count: u64,
    dtype: Dtype,
    model: &ModelSpec,
) -> Result<Time, TuningError> {
    let spec = AllreduceSpec::new(n, count, dtype, ReduceOp::Sum);
    let s = allreduce::generate(&Algorithm::RecursiveMultiplying(schedule.clone()), &spec)?;
    Ok(sim::simulate(&s, model, &SimOptions::default())?.completion)
}

/// Ranks the schedules of `n` ranks: enumerates them when there are at most
/// `opts.enumerate.max_schedules` (and `n ≤` [`MAX_ENUMERATE_RANKS`]), keeping the `top` (or
/// `pool`) best by the closed form, else returns the dynamic program's optimum alone; then
/// optionally simulates and re-ranks.
pub fn rank_schedules(n: u32, p: &Params, opts: &RankOptions) -> Result<Ranking, TuningError> {
    p.validate()?;
    if n == 0 {
        return Err(bad("nranks", n, "an allreduce has at least 1 rank"));
    }
    if opts.top == 0 {
        return Err(bad("top", 0, "at least one row"));
    }
    let keep = if opts.simulate.is_some() {
        opts.pool.max(opts.top)
    } else {
        opts.top
    };
    let counts = if n <= MAX_ENUMERATE_RANKS {
        Some(count_schedules(n, &opts.enumerate)?)
    } else {
        None
    };
    let cap = opts.enumerate.max_schedules;
    let too_many = match counts {
        None => Some(format!(
            "{n} ranks is beyond the enumerator's {MAX_ENUMERATE_RANKS}"
        )),
        Some(c) if cap > 0 && c.total() > cap as u128 => Some(format!(
            "{} schedules ({} factored) exceed the cap of {cap}",
            c.total(),
            c.factored
        )),
        Some(c) if c.total() == 0 => Some("no family selected".to_string()),
        _ => None,
    };
    let mut rows: Vec<Ranked>;
    let method;
    if let Some(reason) = too_many {
        let o = optimal_factored(n, p)?;
        rows = vec![Ranked {
            schedule: o.schedule,
            predicted: o.time,
            simulated: None,
        }];
        method = Method::DynamicProgram {
            reason,
            divisors: o.divisors,
        };
    } else {
        // Keep the `keep` best by (time, stages, text) with a bounded max-heap.
        use std::collections::BinaryHeap;
        #[derive(PartialEq, Eq, PartialOrd, Ord)]
        struct Key(Time, usize, String);
        let mut heap: BinaryHeap<(Key, usize)> = BinaryHeap::new();
        let mut store: Vec<Option<ScheduleString>> = Vec::new();
        let counts = for_each_schedule(n, &opts.enumerate, &mut |s| {
            let t = clamp(s.stages().iter().map(|st| p.stage(st)).sum());
            let key = Key(t, s.len(), s.to_string());
            if heap.len() < keep {
                store.push(Some(s.clone()));
                heap.push((key, store.len() - 1));
            } else if let Some(top) = heap.peek() {
                if key < top.0 {
                    let (_, slot) = heap.pop().expect("non-empty");
                    store[slot] = Some(s.clone());
                    heap.push((key, slot));
                }
            }
        })?;
        let mut v = heap.into_vec();
        v.sort();
        rows = v
            .into_iter()
            .map(|(Key(t, _, _), slot)| Ranked {
                schedule: store[slot].take().expect("stored"),
                predicted: t,
                simulated: None,
            })
            .collect();
        method = Method::Exhaustive { counts };
    }
    let mut simulated = 0;
    if let Some(model) = &opts.simulate {
        let es = opts.dtype.size() as u64;
        if opts.count.checked_mul(es) != Some(p.bytes) {
            return Err(bad(
                "count",
                opts.count,
                format!(
                    "count x {} bytes must equal the model's vector of {} bytes",
                    es, p.bytes
                ),
            ));
        }
        for r in rows.iter_mut() {
            r.simulated = Some(simulate_schedule(
                &r.schedule,
                n,
                opts.count,
                opts.dtype,
                model,
            )?);
            simulated += 1;
        }
        rows.sort_by(|a, b| {
            (
                a.simulated,
                a.predicted,
                a.schedule.len(),
                a.schedule.to_string(),
            )
                .cmp(&(
                    b.simulated,
                    b.predicted,
                    b.schedule.len(),
                    b.schedule.to_string(),
                ))
        });
    }
    rows.truncate(opts.top);
    Ok(Ranking {
        nranks: n,
        params: *p,
        b_opt: (p.model.alpha_r > 0)
            .then(|| b_opt(p.model.alpha_p as f64 / p.model.alpha_r as f64).ok())
            .flatten(),
        method,
        rows,
        simulated,
    })
}

// ---------------------------------------------------------------------------------------------
// `recursive_multiplying:auto`
// ---------------------------------------------------------------------------------------------

/// The argument of `recursive_multiplying` that asks for the schedule this search ranks first
/// for the number of ranks at hand: `recursive_multiplying:auto`.
pub const AUTO: &str = "auto";

/// Whether `text` is `recursive_multiplying:auto` (spaces around the name and the argument
/// allowed), which [`resolve`] turns into a schedule once the number of ranks is known.
pub fn is_auto(text: &str) -> bool {
    let form = &super::ENTRY.form;
    match text.trim().split_once(':') {
        Some((name, arg)) => {
            let name = name.trim();
            arg.trim() == AUTO && (name == form.name || form.aliases.contains(&name))
        }
        None => false,
    }
}

/// The schedule of `n` ranks that [`rank_schedules`] ranks first under `p` by the closed form:
/// every schedule enumerated when there are at most [`DEFAULT_MAX_SCHEDULES`], else the
/// dynamic program's model-optimal factored schedule. What `hypercuboid tune allreduce` prints
/// first, and what `recursive_multiplying:auto` runs.
pub fn tuned(n: u32, p: &Params) -> Result<Ranked, TuningError> {
    let opts = RankOptions {
        top: 1,
        ..RankOptions::default()
    };
    let mut r = rank_schedules(n, p, &opts)?;
    Ok(r.rows.swap_remove(0))
}

/// The allreduce algorithm a spec names for `n` ranks: `recursive_multiplying:auto` becomes
/// recursive multiplying with the [`tuned`] schedule of `n` ranks under `p`; any other spec is
/// read by [`Algorithm::parse`] (and `p` is not looked at).
pub fn resolve(text: &str, n: u32, p: &Params) -> Result<Algorithm, TuningError> {
    if is_auto(text) {
        return Ok(Algorithm::RecursiveMultiplying(tuned(n, p)?.schedule));
    }
    Ok(Algorithm::parse(text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisors_and_factors() {
        assert_eq!(divisors(12), [1, 2, 3, 4, 6, 12]);
        assert_eq!(divisors(1), [1]);
        assert_eq!(divisors(49), [1, 7, 49]);
        assert_eq!(prime_factors(360), [2, 2, 2, 3, 3, 5]);
        assert_eq!(prime_factors(u32::MAX), [3, 5, 17, 257, 65537]);
        assert_eq!(prime_factors(4_294_967_291), [4_294_967_291]); // largest u32 prime
        assert_eq!(gpf_below(12, 5), Some(3));
        assert_eq!(gpf_below(14, 7), None);
        assert_eq!(gpf_below(1, 2), Some(1));
    }

    #[test]
    fn lambert_w() {
        for x in [-0.3678794411714423, -0.2, 0.0, 0.5, 1.0, 3.0, 100.0, 1e10] {
            let w = lambert_w0(x);
            assert!(
                (w * w.exp() - x).abs() <= 1e-12 * (1.0 + x.abs()),
                "x={x} w={w}"
            );
        }
        assert!((lambert_w0(1.0) - 0.567_143_290_409_783_8).abs() < 1e-15);
        assert!(lambert_w0(-1.0).is_nan());
    }

    #[test]
    fn auto_resolves_to_the_first_ranked_schedule() {
        assert!(is_auto("recursive_multiplying:auto"));
        assert!(is_auto(" recursive_multiplying : auto "));
        assert!(!is_auto("recursive_multiplying:a4"));
        assert!(!is_auto("auto"));
        assert!(!is_auto("ring:auto"));
        let p = Params::table1_minimum();
        for n in [1, 2, 3, 7, 8, 12, 64, 1000] {
            let first = rank_schedules(n, &p, &RankOptions::default()).unwrap().rows[0].clone();
            assert_eq!(tuned(n, &p).unwrap(), first, "N = {n}");
            assert_eq!(
                resolve("recursive_multiplying:auto", n, &p).unwrap(),
                Algorithm::RecursiveMultiplying(first.schedule)
            );
        }
        // Beyond the enumeration cap: the dynamic program's optimum.
        let n = 720_720;
        assert_eq!(
            tuned(n, &p).unwrap().schedule,
            optimal_factored(n, &p).unwrap().schedule
        );
        assert_eq!(resolve("ring", 5, &p).unwrap(), Algorithm::Ring);
        assert_eq!(
            resolve("recursive_multiplying:auto", 0, &p)
                .unwrap_err()
                .to_string(),
            "invalid nranks '0': an allreduce has at least 1 rank"
        );
    }
}
