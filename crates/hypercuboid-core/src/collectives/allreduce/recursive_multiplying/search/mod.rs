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

mod enumerate;
mod numbers;
mod rank;

pub use enumerate::{
    count_schedules, enumerate_schedules, for_each_schedule, multiplicative_partitions,
    ordered_factorisations, Counts, EnumerateOptions,
};
pub use numbers::{
    b_opt, b_opt_integer, collapse_for, inner_sizes, lambert_w0, largest_prime_factor,
    prime_factors,
};
pub use rank::{
    optimal_factored, rank_schedules, simulate_schedule, suggest, Method, Optimum, RankOptions,
    Ranked, Ranking,
};

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

    /// [`Params::from_model`] for vectors of `count` elements of `dtype`; refuses a vector of
    /// more than 2^64 - 1 bytes.
    pub fn from_model_count(
        model: &ModelSpec,
        count: u64,
        dtype: Dtype,
    ) -> Result<Params, TuningError> {
        let bytes = count.checked_mul(dtype.size() as u64).ok_or_else(|| {
            bad(
                "count",
                count,
                format!("{count} elements of {} exceed 2^64 - 1 bytes", dtype.name()),
            )
        })?;
        Params::from_model(model, bytes)
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
    use super::numbers::gpf_below;
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
