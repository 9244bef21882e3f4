//! `mpich_recursive_multiplying:k=K`: MPICH's single-radix recursive multiplying
//! (`MPIR_Allreduce_intra_recursive_multiplying` in `src/mpi/coll/allreduce/
//! allreduce_intra_recursive_multiplying.c`, selected with
//! `MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_multiplying`; the radix is
//! `MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL`, **default 2** per MPICH's
//! `src/mpi/coll/cvars.txt`, which is also our default when `:k=` is omitted).
//!
//! Reproduced from reading MPICH's source (behaviour, not code), so that the paper's mixed radix
//! can be compared with what MPICH ships. With `p = k^⌊log_k N⌋` (the largest power of `k` not
//! above `N`):
//! 1. Every rank copies its input into `out` (MPICH works in the receive buffer).
//! 2. **Pre-stage** (tag 0, only if `p < N`): rank `r ≥ p` sends `out` to `r mod p` and drops
//!    out. Rank `r < p` receives from `r + p, r + 2p, …` (at most `k − 1` ranks) into scratch
//!    buffers, waits for all, and folds them as MPICH does:
//!    `out = ((x_{r+p} ⊕ x_{r+2p}) ⊕ …) ⊕ x_r` (`MPIR_Reduce_local(in, inout)` is
//!    `inout = in ⊕ inout`).
//! 3. **Main stage**, rounds `i = 1 …` with distance `d = k^{i−1}` (tag `i`): the rank's group
//!    is the `k` ranks `start + (r mod d) + j·d` with `start = ⌊r / kd⌋·kd`; the rank posts a
//!    send of `out` and a receive into scratch `j'` for every other member in increasing order,
//!    waits for all of them, then folds the group left to right, `((v₀ ⊕ v₁) ⊕ …) ⊕ v_{k−1}`,
//!    through the scratch buffers exactly as MPICH's loop does, and copies the result to `out`
//!    unless the last reduction already wrote it.
//! 4. **Post-stage** (tag `rounds + 1`, only if `p < N`): rank `r < p` sends `out` to
//!    `r + p, r + 2p, …`; rank `r ≥ p` receives it into `out`.
//!
//! # Ops
//! A copy, then per main round `k − 1` sends, `k − 1` receives, `k − 1` reduces and at most one
//! copy; the reduces wait for every send and receive of the round (MPICH's `MPIC_Waitall`).
//! Scratch buffers `0 .. k − 1` (so `k ≤ 65536`).
//!
//! # Reduction order
//! The main stage's fold is the same on every member, and every value is the ordered reduction
//! of a contiguous block of ranks, so for `N = k^j` the result is in rank order on every rank.
//! When `p < N` the pre-stage puts the folded-in higher ranks first (MPICH asserts a commutative
//! operator in that case): the result is the same expression on every rank (bitwise identical)
//! but not in rank order.

use super::{unless_trivial, whole, Algorithm, Allreduce, AllreduceSpec, Prepared};
use crate::collectives::registry::{prepared_build, Context, Cost, Entry, Needs};
use crate::schedule::{Combine, OpId, Program, Rank, ScheduleError, Slot};
use crate::spec::{Form, Key, Spec};

/// The `mpich_recursive_multiplying` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Allreduce> = Entry {
    form: Form::named(
        "mpich_recursive_multiplying",
        "MPICH's single-radix recursive multiplying (radix k, default 2)",
    )
    .with_keys(&[Key::new(
        "k",
        "the radix, 2 ..= 65536 (default 2, as MPICH)",
    )])
    .with_example("mpich_recursive_multiplying:k=4"),
    parse,
    needs: Needs::Nothing,
    prepare,
    build: prepared_build!(Prepared::Radix(k) => unless_trivial(build, *k)),
    cost: Some(Cost {
        formula: "j(k - 1)(α + nβ + nγ) for N = k^j; exact",
        time: |a, spec, m| {
            let Algorithm::MpichRecursiveMultiplying { k } = a else {
                unreachable!("an mpich_recursive_multiplying algorithm")
            };
            super::cost::mpich_recursive_multiplying(*k, spec, m)
        },
    }),
    guarantees: &super::one_expression(
        "N a power of k",
        |a, n| matches!(a, Algorithm::MpichRecursiveMultiplying { k } if is_power_of(n, *k)),
    ),
    examples: &[
        "mpich_recursive_multiplying",
        "mpich_recursive_multiplying:k=3",
        "mpich_recursive_multiplying:k=4",
        "mpich_recursive_multiplying:k=7",
    ],
};

fn parse(spec: &Spec) -> Result<Algorithm, ScheduleError> {
    let k = spec
        .value("k", |v| {
            let k: u32 = v.parse().map_err(|_| "not a whole number".to_string())?;
            if (2..=MAX_K).contains(&k) {
                Ok(k)
            } else {
                Err(format!("the radix is 2 ..= {MAX_K}"))
            }
        })?
        .unwrap_or(DEFAULT_K);
    Ok(Algorithm::MpichRecursiveMultiplying { k })
}

fn prepare(alg: &Algorithm, _: &AllreduceSpec, _: &Context<'_>) -> Result<Prepared, ScheduleError> {
    let Algorithm::MpichRecursiveMultiplying { k } = *alg else {
        unreachable!("an mpich_recursive_multiplying algorithm")
    };
    if !(2..=MAX_K).contains(&k) {
        return Err(ScheduleError::BadParameter {
            name: "mpich_recursive_multiplying radix".into(),
            value: k.to_string(),
            reason: format!("the radix is 2 ..= {MAX_K}"),
        });
    }
    Ok(Prepared::Radix(k))
}

/// Whether `n` is a power of `k` (1 included).
fn is_power_of(n: u32, k: u32) -> bool {
    k >= 2 && pofk(n.max(1), k).0 == n
}

/// Largest radix: the scratch buffers are numbered with 16 bits.
pub const MAX_K: u32 = 65536;

/// MPICH's default radix (`MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL`).
pub const DEFAULT_K: u32 = 2;

/// The largest power of `k` not above `n` (`n ≥ 1`, `k ≥ 2`), and the number of main rounds.
pub fn pofk(n: u32, k: u32) -> (u32, u32) {
    let (mut p, mut rounds) = (1u64, 0u32);
    while p * k as u64 <= n as u64 {
        p *= k as u64;
        rounds += 1;
    }
    (p as u32, rounds)
}

/// Writes rank `rank`'s program (nranks ≥ 2, count ≥ 1, 2 ≤ k ≤ [`MAX_K`]).
pub(super) fn build(k: u32, spec: &AllreduceSpec, rank: Rank, out: &mut Program) {
    let n = spec.nranks;
    let count = spec.count;
    let input = whole(Slot::Input, count);
    let result = whole(Slot::Output, count);
    let tmp = |j: u32| whole(Slot::Scratch(j as u16), count);
    let (p, rounds) = pofk(n, k);
    let post_tag = rounds as i32 + 1;

    let copy = out.copy(input, result);
    // The op after which `out` holds the running value.
    let mut last: OpId = copy;

    if p < n {
        if rank >= p {
            let s = out.send(rank % p, 0, result);
            out.requires(s, copy);
            let r = out.recv(rank % p, post_tag, result);
            out.requires(r, s);
            return;
        }
        let srcs: Vec<Rank> = (1..).map(|i| rank + i * p).take_while(|&s| s < n).collect();
        if !srcs.is_empty() {
            let recvs: Vec<OpId> = srcs
                .iter()
                .enumerate()
                .map(|(i, &s)| {
                    let r = out.recv(s, 0, tmp(i as u32));
                    out.requires(r, copy);
                    r
                })
                .collect();
            let c = srcs.len() as u32;
            // tmp[i+1] = tmp[i] ⊕ tmp[i+1], then out = tmp[c-1] ⊕ out.
            let mut prev: Option<OpId> = None;
            for i in 0..c {
                let dst = if i + 1 == c { result } else { tmp(i + 1) };
                let op = out.reduce(tmp(i), dst, Combine::Before);
                out.requires_all(op, &recvs);
                if let Some(q) = prev {
                    out.requires(op, q);
                }
                prev = Some(op);
            }
            last = prev.expect("at least one reduction");
        }
    }

    // Main stage.
    let mut d: u64 = 1;
    let mut round = 1i32;
    while d < p as u64 {
        let next = d * k as u64;
        let r64 = rank as u64;
        let start = r64 / next * next;
        let offset = start + r64 % d;
        let members: Vec<Rank> = (0..k as u64).map(|j| (offset + j * d) as Rank).collect();
        let mut waits: Vec<OpId> = Vec::with_capacity(2 * (k as usize - 1));
        let mut e = 0u32;
        for &m in &members {
            if m == rank {
                continue;
            }
            let s = out.send(m, round, result);
            out.requires(s, last);
            let r = out.recv(m, round, tmp(e));
            out.requires(r, last);
            waits.push(s);
            waits.push(r);
            e += 1;
        }
        // MPICH's reduction loop over the members but the last.
        let mut e = 0u32;
        let mut out_last = false;
        let mut prev: Option<OpId> = None;
        let chain = |op: OpId, out: &mut Program, prev: &mut Option<OpId>| {
            out.requires_all(op, &waits);
            if let Some(q) = *prev {
                out.requires(op, q);
            }
            *prev = Some(op);
        };
        for &m in &members[..k as usize - 1] {
            if d <= rank as u64 && m as u64 == rank as u64 - d {
                let op = out.reduce(tmp(e), result, Combine::Before);
                chain(op, out, &mut prev);
                out_last = true;
                e += 1;
            } else if m == rank {
                let op = out.reduce(result, tmp(e), Combine::Before);
                chain(op, out, &mut prev);
                out_last = false;
            } else {
                let op = out.reduce(tmp(e), tmp(e + 1), Combine::Before);
                chain(op, out, &mut prev);
                out_last = false;
                e += 1;
            }
        }
        if !out_last {
            let op = out.copy(tmp(e), result);
            chain(op, out, &mut prev);
        }
        last = prev.expect("a round reduces at least once");
        d = next;
        round += 1;
    }

    if p < n {
        for i in 1.. {
            let dst = rank + i * p;
            if dst >= n {
                break;
            }
            let s = out.send(dst, post_tag, result);
            out.requires(s, last);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_k() {
        assert_eq!(pofk(1, 2), (1, 0));
        assert_eq!(pofk(7, 2), (4, 2));
        assert_eq!(pofk(8, 2), (8, 3));
        assert_eq!(pofk(10, 3), (9, 2));
        assert_eq!(pofk(5, 8), (1, 0));
        assert_eq!(pofk(u32::MAX, 65536), (65536, 1));
    }
}
