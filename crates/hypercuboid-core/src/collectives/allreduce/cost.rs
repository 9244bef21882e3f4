//! Closed-form costs of the allreduce algorithms in the postal model, in picoseconds.
//!
//! # The model
//! The postal model with a reduction term (Ruefenacht et al. 2017, section 3, after Chan et al.),
//! a [`PostalModel`] built by [`PostalModel::postal`] without a fixed cost per reduction
//! (`alpha_p = delta = 0`; every function checks, as it checks [`PostalModel::validate`]), and
//! these precise rules, under which a discrete-event simulation of the generated schedules
//! equals the functions below to the picosecond:
//! 1. A message of `b` bytes issued at `t` arrives at `t + α + β·b`, where `β·b` is rounded to the
//!    nearest picosecond once per message ([`crate::units::per_byte`]). A send completes when
//!    its message arrives, without waiting for the matching receive (eager).
//! 2. A rank's sends are serialised: a send occupies its rank's sending port from issue until
//!    its message arrives (the postal model's single message transmission); a ready send waits
//!    for the port, and sends that become ready at the same time issue in program order.
//!    Receives are not serialised.
//! 3. A receive posted at `p` whose message arrives at `a` completes at `max(p, a)`; a fused
//!    receive-reduce completes `γ·b` later (rounded once). A `reduce` of `b` bytes takes `γ·b`;
//!    a `copy` takes no time. Ops start as soon as their dependencies have completed.
//! 4. No contention: any number of messages fly at once without slowing each other.
//!
//! With `count = 0` no algorithm has ops: every cost is 0. With one rank the only op is a copy:
//! every cost is 0.
//!
//! Rule 2 matters only for `tree` (its broadcast is the only place a rank has several sends
//! ready at once): the other algorithms never have a second send ready before the first
//! arrived. Reductions on one rank never overlap in any of these schedules, so a model that
//! serialises a rank's reductions gives the same times.

use super::{floor_log2, Algorithm, AllreduceSpec};
use crate::model::{ModelError, PostalModel};
use crate::schedule::ScheduleError;
use crate::units::{per_byte, Time};

/// `α + β·b`: the time from issuing a message of `bytes` to its arrival (α is the model's
/// `alpha_r`; its `alpha_p` is 0).
fn message(m: &PostalModel, bytes: u64) -> Time {
    m.alpha_r.saturating_add(per_byte(bytes, m.beta))
}

/// `γ·b`: the time to reduce `bytes`.
fn reduction(m: &PostalModel, bytes: u64) -> Time {
    per_byte(bytes, m.gamma)
}

/// Checks that `m` is a valid model ([`PostalModel::validate`]) that the closed forms state:
/// the postal model (`alpha_p = 0`, built by [`PostalModel::postal`]) without a fixed cost per
/// reduction (`delta = 0`).
fn postal(m: &PostalModel) -> Result<(), ScheduleError> {
    let bad = |name: &str, value: String, reason: &str| ScheduleError::BadParameter {
        name: name.into(),
        value,
        reason: reason.into(),
    };
    if let Err(e) = m.validate() {
        let ModelError::Parameter {
            name,
            value,
            reason,
        } = e
        else {
            unreachable!("PostalModel::validate refuses parameters only: {e}")
        };
        return Err(bad(name, value, reason));
    }
    if m.alpha_p != 0 {
        return Err(bad(
            "alpha_p",
            m.alpha_p.to_string(),
            "the closed forms are the postal model's (alpha_p = 0); simulate the pipelined model",
        ));
    }
    if m.delta != 0 {
        return Err(bad(
            "delta",
            m.delta.to_string(),
            "the closed forms have no fixed cost per reduction (delta = 0); simulate",
        ));
    }
    Ok(())
}

/// Eq. 1 of Ruefenacht et al.: `(α + nβ + nγ)·log2 N` for recursive doubling on `N = 2^k` ranks
/// exchanging `n` bytes. Exact in the model for every power of two (N = 1: 0).
pub fn eq1(nranks: u32, bytes: u64, m: &PostalModel) -> Result<Time, ScheduleError> {
    postal(m)?;
    power_of_two(
        nranks,
        "eq. 1 holds for a power of two; use recursive_doubling for any N",
    )?;
    if bytes == 0 {
        return Ok(0);
    }
    let per_step = message(m, bytes) as u128 + reduction(m, bytes) as u128;
    fit(per_step * floor_log2(nranks) as u128)
}

/// Eq. 2 of Ruefenacht et al.: the small-message cost `α(⌊log2 N⌋ + 0)` for `N` a power of two,
/// `α(⌊log2 N⌋ + 2)` otherwise (the collapse and expand steps). Exact in the model when
/// `β = γ = 0` and the vector is not empty.
pub fn eq2(nranks: u32, alpha: Time) -> Result<Time, ScheduleError> {
    if nranks == 0 {
        return Err(not_exact(
            "nranks",
            nranks,
            "an allreduce has at least 1 rank",
        ));
    }
    let extra = if nranks.is_power_of_two() { 0 } else { 2 };
    fit(alpha as u128 * (floor_log2(nranks) + extra) as u128)
}

/// Recursive doubling with MPICH's fix (`n` = the vector's bytes, `K = ⌊log2 N⌋`):
/// `K(α + nβ + nγ)` for a power of two (eq. 1), otherwise `(K + 2)(α + nβ)` when `γ = 0` — the
/// collapse, `K` exchange steps and the expand, each a message; with `β = 0` this is eq. 2.
///
/// For a non-power of two with `γ > 0` there is no such formula: the folded ranks start the
/// exchanges `α + nβ + nγ` late, and an unfolded peer's message is then already there when a
/// folded rank posts its receive, so some reductions overlap the rank's own sending. The time
/// lies between the `γ = 0` value and [`recursive_doubling_bound`]; simulate for the exact one.
/// This returns an error in that case rather than a wrong number.
pub fn recursive_doubling(spec: &AllreduceSpec, m: &PostalModel) -> Result<Time, ScheduleError> {
    postal(m)?;
    if !spec.nranks.is_power_of_two() && m.gamma != 0.0 && spec.nranks > 1 {
        return Err(ScheduleError::BadParameter {
            name: "gamma".into(),
            value: m.gamma.to_string(),
            reason: format!(
                "recursive doubling on {} ranks (not a power of two) has no exact closed form when \
                 reductions cost time: skew between folded and unfolded ranks overlaps some \
                 reductions; use gamma = 0, recursive_doubling_bound, or simulate",
                spec.nranks
            ),
        });
    }
    // Where exact, the bound is the time: K(α + nβ + nγ), or (K + 2)(α + nβ) with γ = 0.
    recursive_doubling_bound(spec, m)
}

/// An upper bound of recursive doubling's time for any `N` in the same model:
/// `(K + 1)(α + nβ + nγ) + (α + nβ)` (every step as if no reduction overlapped a send), equal
/// to [`recursive_doubling`] wherever that is defined.
pub fn recursive_doubling_bound(
    spec: &AllreduceSpec,
    m: &PostalModel,
) -> Result<Time, ScheduleError> {
    postal(m)?;
    let bytes = checked(spec)?;
    if bytes == 0 || spec.nranks == 1 {
        return Ok(0);
    }
    let msg = message(m, bytes) as u128;
    let step = msg + reduction(m, bytes) as u128;
    let k = floor_log2(spec.nranks) as u128;
    if spec.nranks.is_power_of_two() {
        fit(k * step)
    } else {
        fit((k + 1) * step + msg)
    }
}

/// The coursework's ring rotation, exact for any `P`: `(P − 1)(α + βn + γn)`. The coursework's
/// `T_ring = (P − 1)(α + βB)` (section 3.1) is the case `γ = 0`; the γ term is the reduction of
/// the whole received vector in each of the `P − 1` rounds, which the next round's send waits for.
pub fn ring_rotate(spec: &AllreduceSpec, m: &PostalModel) -> Result<Time, ScheduleError> {
    postal(m)?;
    let bytes = checked(spec)?;
    if bytes == 0 {
        return Ok(0);
    }
    let round = message(m, bytes) as u128 + reduction(m, bytes) as u128;
    fit((spec.nranks as u128 - 1) * round)
}

/// The coursework's tree formula `T_tree = 2·log2 P·(α + βn)` (section 3.1): exact for `P` a
/// power of two and `γ = 0`. See [`tree`] for any `P` and `γ`.
pub fn tree_coursework(nranks: u32, bytes: u64, m: &PostalModel) -> Result<Time, ScheduleError> {
    postal(m)?;
    power_of_two(
        nranks,
        "the coursework's tree formula holds for a power of two; use tree for any P",
    )?;
    if m.gamma != 0.0 {
        return Err(ScheduleError::BadParameter {
            name: "gamma".into(),
            value: m.gamma.to_string(),
            reason: "the coursework's tree formula has no reduction term (gamma = 0); use tree"
                .into(),
        });
    }
    if bytes == 0 {
        return Ok(0);
    }
    fit(2 * floor_log2(nranks) as u128 * message(m, bytes) as u128)
}

/// The binomial tree, exact for any `P` (rule 2 of the model matters here). For `P = 2^k`:
/// `k(α + βn + γn) + k(α + βn)` — the reduce waits for each level's message and reduction, the
/// broadcast for `k` messages along rank 0's sends (which the coursework's `2·log2 P·(α + βn)`
/// gives at `γ = 0`). For other `P` it evaluates the same recurrences over the tree (`O(log² P)`):
/// a subtree of `s` ranks is reduced at its root by
/// `R(s) = fold over children i = 0, 1, … of  t ← max(t, R(size_i) + α + βn) + γn`, and
/// broadcast in `B(s) = max over children sent k-th (largest first) of (k + 1)(α + βn) + B(size)`.
pub fn tree(spec: &AllreduceSpec, m: &PostalModel) -> Result<Time, ScheduleError> {
    postal(m)?;
    let bytes = checked(spec)?;
    if bytes == 0 || spec.nranks == 1 {
        return Ok(0);
    }
    let msg = message(m, bytes) as u128;
    let red = reduction(m, bytes) as u128;
    let n = spec.nranks as u64;
    fit(tree_reduce(n, msg, red) + tree_bcast(n, msg))
}

/// Time for the root of a subtree of `size` contiguous ranks to hold their reduction.
fn tree_reduce(size: u64, msg: u128, red: u128) -> u128 {
    if size.is_power_of_two() {
        return size.trailing_zeros() as u128 * (msg + red);
    }
    let mut t = 0u128;
    let mut m = 1u64;
    while m < size {
        let child = m.min(size - m);
        t = t.max(tree_reduce(child, msg, red) + msg) + red;
        m <<= 1;
    }
    t
}

/// Time for the root of a subtree of `size` ranks to broadcast to all of them.
fn tree_bcast(size: u64, msg: u128) -> u128 {
    if size.is_power_of_two() {
        return size.trailing_zeros() as u128 * msg;
    }
    let mut levels = Vec::new();
    let mut m = 1u64;
    while m < size {
        levels.push(m.min(size - m));
        m <<= 1;
    }
    levels
        .iter()
        .rev()
        .enumerate()
        .map(|(k, &child)| (k as u128 + 1) * msg + tree_bcast(child, msg))
        .max()
        .unwrap_or(0)
}

/// The bandwidth-optimal ring for `count` divisible by `P` (chunks of `m = n/P` bytes):
/// `2(P − 1)(α + βm) + (P − 1)γm` — `P − 1` reduce-scatter steps of a message and a reduction,
/// then `P − 1` allgather steps of a message. Exact when every chunk has the same size.
pub fn ring(spec: &AllreduceSpec, m: &PostalModel) -> Result<Time, ScheduleError> {
    postal(m)?;
    let bytes = checked(spec)?;
    if bytes == 0 || spec.nranks == 1 {
        return Ok(0);
    }
    equal_chunks(spec, "the ring's closed form")?;
    let chunk = bytes / spec.nranks as u64;
    let steps = spec.nranks as u128 - 1;
    fit(2 * steps * message(m, chunk) as u128 + steps * reduction(m, chunk) as u128)
}

/// Recursive multiplying with a factored schedule `aB₁,…,aB_s` (only `a` stages):
/// `Σ (B_i − 1)(α + nβ + nγ)`. In each stage a rank sends `B_i − 1` messages one after the
/// other; the member whose fold waits for the last of them then does `B_i − 1` reductions, and
/// every group's members start the stage together (they share their history), so the sum is
/// exact. Split and merged schedules skew the ranks: no closed form (an error says so).
pub fn recursive_multiplying(
    schedule: &super::ScheduleString,
    spec: &AllreduceSpec,
    m: &PostalModel,
) -> Result<Time, ScheduleError> {
    postal(m)?;
    let bytes = checked(spec)?;
    schedule.fit(spec.nranks)?;
    if !schedule.is_factored() {
        return Err(ScheduleError::BadParameter {
            name: "schedule".into(),
            value: schedule.to_string(),
            reason: "collapse/expand and merge stages skew the ranks, so there is no exact \
                     closed form; simulate, or use search::estimate for the model's estimate"
                .into(),
        });
    }
    if bytes == 0 || spec.nranks == 1 {
        return Ok(0);
    }
    let per = message(m, bytes) as u128 + reduction(m, bytes) as u128;
    let b: u128 = schedule.factors().iter().map(|&f| f as u128 - 1).sum();
    fit(b * per)
}

/// MPICH's recursive multiplying with radix `k` on `N = k^j` ranks: `j(k − 1)(α + nβ + nγ)`
/// (each round: `k − 1` messages one after the other, then `k − 1` reductions once all have
/// arrived). Other `N` fold ranks in first: an error says to simulate.
pub fn mpich_recursive_multiplying(
    k: u32,
    spec: &AllreduceSpec,
    m: &PostalModel,
) -> Result<Time, ScheduleError> {
    postal(m)?;
    let bytes = checked(spec)?;
    let (p, rounds) = super::mpich_recursive_multiplying::pofk(spec.nranks, k.max(2));
    if k < 2 || p != spec.nranks {
        return Err(not_exact(
            "nranks",
            spec.nranks,
            &format!("the closed form holds when nranks is a power of k = {k}; simulate otherwise"),
        ));
    }
    if bytes == 0 || spec.nranks == 1 {
        return Ok(0);
    }
    let per = message(m, bytes) as u128 + reduction(m, bytes) as u128;
    fit(rounds as u128 * (k as u128 - 1) * per)
}

/// Rabenseifner's algorithm on `N = 2^K` ranks with `count` divisible by `N`: step `s` of the
/// reduce-scatter moves and reduces `n/2^{s+1}` bytes, the allgather's step moves the same, so
/// `Σ_s [2(α + β·n/2^{s+1}) + γ·n/2^{s+1}]` (each message rounded once), which tends to
/// `2Kα + 2(N−1)/N·nβ + (N−1)/N·nγ`. Other cases skew the ranks (uneven chunks, the fold):
/// an error says to simulate.
pub fn rabenseifner(spec: &AllreduceSpec, m: &PostalModel) -> Result<Time, ScheduleError> {
    postal(m)?;
    let bytes = checked(spec)?;
    power_of_two(
        spec.nranks,
        "the closed form holds for a power of two; simulate otherwise",
    )?;
    equal_chunks(spec, "the closed form")?;
    if bytes == 0 || spec.nranks == 1 {
        return Ok(0);
    }
    let es = spec.dtype.size() as u64;
    let mut t: u128 = 0;
    let mut elems = spec.count;
    for _ in 0..floor_log2(spec.nranks) {
        elems /= 2;
        let b = elems * es;
        t += 2 * message(m, b) as u128 + reduction(m, b) as u128;
    }
    fit(t)
}

/// `elimination`: on a power of two it is recursive doubling, `K(α + nβ + nγ)`; elsewhere the
/// eliminations skew the ranks: an error says to simulate.
pub fn elimination(spec: &AllreduceSpec, m: &PostalModel) -> Result<Time, ScheduleError> {
    if spec.nranks.is_power_of_two() {
        recursive_doubling(spec, m)
    } else {
        checked(spec)?;
        Err(not_exact(
            "nranks",
            spec.nranks,
            "elimination skews the ranks of a non-power of two; simulate",
        ))
    }
}

/// The exact cost of `alg` on `spec` in the model, where its entry has a closed form that is
/// exact here: [`ring_rotate`], [`ring`], [`tree`], [`recursive_doubling`],
/// [`recursive_multiplying`] (factored schedules), [`rabenseifner`] (powers of two),
/// [`mpich_recursive_multiplying`] (powers of k), [`elimination`] (powers of two). Elsewhere an
/// error says why there is none.
pub fn allreduce(
    alg: &Algorithm,
    spec: &AllreduceSpec,
    m: &PostalModel,
) -> Result<Time, ScheduleError> {
    postal(m)?;
    let entry = alg.entry();
    match &entry.cost {
        Some(c) => (c.time)(alg, spec, m),
        None => {
            checked(spec)?;
            Err(ScheduleError::BadParameter {
                name: "allreduce algorithm".into(),
                value: alg.name().into_owned(),
                reason: "it has no closed form; simulate".into(),
            })
        }
    }
}

fn checked(spec: &AllreduceSpec) -> Result<u64, ScheduleError> {
    spec.validate()?;
    Ok(spec.bytes().unwrap_or(u64::MAX))
}

fn fit(t: u128) -> Result<Time, ScheduleError> {
    Time::try_from(t).map_err(|_| ScheduleError::BadParameter {
        name: "cost".into(),
        value: format!("{t} ps"),
        reason: "exceeds the 2^64 - 1 ps (213 days) that simulated time can hold".into(),
    })
}

/// Checks that `nranks` is a power of two, which the closed form needs; `otherwise` says
/// what to use instead.
fn power_of_two(nranks: u32, otherwise: &str) -> Result<(), ScheduleError> {
    if nranks.is_power_of_two() {
        Ok(())
    } else {
        Err(not_exact("nranks", nranks, otherwise))
    }
}

/// Checks that `count` splits into `nranks` equal chunks, which `form` (the closed form, as
/// its error names it) needs.
fn equal_chunks(spec: &AllreduceSpec, form: &str) -> Result<(), ScheduleError> {
    if spec.count.is_multiple_of(spec.nranks as u64) {
        return Ok(());
    }
    Err(ScheduleError::BadParameter {
        name: "count".into(),
        value: spec.count.to_string(),
        reason: format!(
            "{form} needs equal chunks: count divisible by nranks = {}",
            spec.nranks
        ),
    })
}

fn not_exact(name: &str, value: u32, reason: &str) -> ScheduleError {
    ScheduleError::BadParameter {
        name: name.into(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Dtype, ReduceOp};

    fn spec(n: u32, count: u64) -> AllreduceSpec {
        AllreduceSpec::new(n, count, Dtype::Float64, ReduceOp::Sum)
    }

    #[test]
    fn tree_general_form_reduces_to_powers_of_two() {
        let m = PostalModel::postal(1000, 2.0, 0.5, 0);
        let (msg, red) = (1000 + 32, 8); // 16 bytes at 2 and 0.5 ps/B
        assert_eq!(tree(&spec(8, 2), &m).unwrap(), 3 * (msg + red) + 3 * msg);
        // P = 3: rank 0's children 1 and 2 are leaves: both messages arrive at msg, then two
        // reductions; the broadcast sends to 2, then 1.
        assert_eq!(tree(&spec(3, 2), &m).unwrap(), msg + 2 * red + 2 * msg);
        // P = 5: children 1, 2, 4 (a leaf) of rank 0: its message arrives before the others
        // are done, so the reduce takes 2 levels + 1 reduction; the broadcast goes to 4 first.
        assert_eq!(
            tree(&spec(5, 2), &m).unwrap(),
            2 * (msg + red) + red + 3 * msg
        );
    }
}
