//! `elimination`: recursive doubling on a power of two, reached from any `N` by the 3-2 and 2-1
//! elimination steps of Rabenseifner and Träff ("More efficient reduction algorithms for
//! non-power-of-two number of processors in message-passing parallel systems", EuroPVM/MPI
//! 2004, LNCS 3241; seed reference 17, simulated in the seed's section 6.4 and Fig. 23).
//!
//! **This is our reconstruction for short vectors (whole-vector messages, as the seed
//! simulates it), not a transcription of Rabenseifner and Träff's protocol**, which splits the
//! vectors into halves during the eliminations (their long-vector algorithm). It keeps what
//! the seed describes: a 3-2 elimination overlaps with the pairwise exchanges, and the third
//! rank of a triple gets its result within the last exchange stage instead of an extra expand
//! stage, so with only 3-2 eliminations there are `⌈log2 N⌉` stages (the last one with two
//! messages per sender); with 2-1 eliminations, `⌈log2 N⌉ + 1`.
//!
//! Measured honestly (tests `allreduce_rm.rs`): this buys nothing over MPICH's fold in our
//! models, because the fold overlaps too — its unfolded ranks start exchanging at once. With
//! the seed's simulator settings elimination takes 1942.8 ns on 6 ranks against recursive
//! doubling's 1932.8 ns (the triple's third rank reduces the two values it gets), and both take
//! 2442.8 ns on 7; in the postal model (one message at a time) both take the same number of α.
//!
//! With `p = 2^⌊log2 N⌋` and `r = N − p` ranks to eliminate, `b = min(r, p − r)` triples and
//! `a = r − b` pairs (triples first, then pairs, then the other ranks; a power of two has
//! neither and is plain recursive doubling):
//! - **3-2 elimination** of triple `(t0, t1, t2)`: in round 0 (tag 0) `t2` sends its input to
//!   `t1`, which folds `x_{t1} ⊕ x_{t2}`, while `t0` starts the exchanges at once. `t0` and `t1`
//!   are virtual ranks `2j` and `2j + 1` and meet in the *last* exchange (the masks run from
//!   `p/2` down to 1), in which both also send their value to `t2`; `t2` folds the two and has
//!   the result with no extra round.
//! - **2-1 elimination** of pair `(p0, p1)` (MPICH's fold): `p0` sends its input to `p1` (tag
//!   0), which folds `x_{p0} ⊕ x_{p1}`, and gets the result back after the exchanges (tag
//!   `K + 1`).
//! - **Exchanges**, steps `1 ..= K` (tag = step): pairwise, as in `recursive_doubling` (two
//!   ops a step, `out` and `scratch0` alternating, the lower virtual rank's value on the left).
//!
//! # Reduction order
//! The virtual numbering is monotone in the real ranks and every exchange puts the lower
//! virtual rank's value on the left, so every rank computes the same expression (bitwise
//! identical). With triples the masks run downwards, so partial results are not contiguous
//! ranges of ranks: the result is not in rank order (not for a non-commutative operator). A
//! power of two has no triple and keeps recursive doubling's rank order.

use super::recursive_doubling::Running;
use super::{floor_log2, whole, AllreduceSpec};
use crate::schedule::{Combine, Program, Rank, Slot};

use super::{plain, unless_trivial, Algorithm, Allreduce};
use crate::collectives::registry::{keyless_entry, Entry};

/// The `elimination` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Allreduce> = keyless_entry! {
    "elimination" => Algorithm::Elimination, build: unless_trivial(build),
    summary: "recursive doubling reached by Rabenseifner-Träff 3-2 and 2-1 eliminations",
    cost: "recursive doubling's K(α + nβ + nγ) for N = 2^K; exact"
        => |_, spec, m| super::cost::elimination(spec, m),
    guarantees: &super::one_expression("N a power of two, or 3", |_, n| {
        n.is_power_of_two() || n == 3
    }),
};

/// How the generator lays out the ranks of `N`: `p = 2^⌊log2 N⌋`, `triples` 3-2 and `pairs` 2-1
/// eliminations (`triples + pairs = N − p`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elimination {
    /// The power of two the exchanges run on.
    pub pof2: u32,
    /// Number of 3-2 eliminations (ranks `3j, 3j+1, 3j+2`).
    pub triples: u32,
    /// Number of 2-1 eliminations (the pairs after the triples).
    pub pairs: u32,
}

/// What a rank does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Exchanges as virtual rank `v` (`t0` or a rank in no group).
    Plain(u32),
    /// `t1` of a triple, virtual rank `v`; `t2` is `rank + 1`.
    TripleT1(u32),
    /// `t2` of a triple: sends to `t1 = rank − 1`, receives from `t0` and `t1`.
    TripleT2,
    /// `p1` of a pair, virtual rank `v`; `p0` is `rank − 1`.
    PairP1(u32),
    /// `p0` of a pair: sends to `p1 = rank + 1` and gets the result back.
    PairP0,
}

impl Elimination {
    /// The layout for `n ≥ 1` ranks.
    pub const fn new(n: u32) -> Elimination {
        let pof2 = 1u32 << floor_log2(n);
        let r = n - pof2;
        let triples = if r < pof2 - r { r } else { pof2 - r };
        Elimination {
            pof2,
            triples,
            pairs: r - triples,
        }
    }

    /// Number of exchange steps, `log2 pof2`.
    pub const fn steps(&self) -> u32 {
        self.pof2.trailing_zeros()
    }

    /// The role of `rank`.
    pub const fn role(&self, rank: Rank) -> Role {
        let (b, a) = (self.triples, self.pairs);
        if rank < 3 * b {
            match rank % 3 {
                0 => Role::Plain(2 * (rank / 3)),
                1 => Role::TripleT1(2 * (rank / 3) + 1),
                _ => Role::TripleT2,
            }
        } else if rank < 3 * b + 2 * a {
            let i = (rank - 3 * b) / 2;
            if (rank - 3 * b).is_multiple_of(2) {
                Role::PairP0
            } else {
                Role::PairP1(2 * b + i)
            }
        } else {
            Role::Plain(rank - b - a)
        }
    }

    /// The real rank of virtual rank `v < pof2`.
    pub const fn real_rank(&self, v: u32) -> Rank {
        let (b, a) = (self.triples, self.pairs);
        if v < 2 * b {
            3 * (v / 2) + v % 2
        } else if v < 2 * b + a {
            3 * b + 2 * (v - 2 * b) + 1
        } else {
            v + b + a
        }
    }

    /// The mask of exchange step `i` (0-based): downwards when there are triples (so that each
    /// triple's `t0` and `t1` meet last), upwards otherwise.
    pub const fn mask(&self, i: u32) -> u32 {
        if self.triples > 0 {
            1 << (self.steps() - 1 - i)
        } else {
            1 << i
        }
    }
}

/// Writes rank `rank`'s program (nranks ≥ 2, count ≥ 1).
pub(super) fn build(spec: &AllreduceSpec, rank: Rank, out: &mut Program) {
    let input = whole(Slot::Input, spec.count);
    let output = whole(Slot::Output, spec.count);
    let scratch = whole(Slot::Scratch(0), spec.count);
    let el = Elimination::new(spec.nranks);
    let k = el.steps();
    let last_tag = k as i32;
    let expand_tag = k as i32 + 1;
    let (v, folds_in) = match el.role(rank) {
        Role::TripleT2 => {
            out.send(rank - 1, 0, input);
            // The result is t0's value ⊕ t1's value of before the last exchange.
            let r0 = out.recv(rank - 2, last_tag, output);
            let r1 = out.recv_reduce(rank - 1, last_tag, output, Combine::After);
            out.requires(r1, r0);
            return;
        }
        Role::PairP0 => {
            out.send(rank + 1, 0, input);
            out.recv(rank + 1, expand_tag, output);
            return;
        }
        Role::Plain(v) => (v, None),
        Role::TripleT1(v) => (v, Some((rank + 1, Combine::After))),
        Role::PairP1(v) => (v, Some((rank - 1, Combine::Before))),
    };
    let steps = k + u32::from(folds_in.is_some());
    // Value after the j-th value-producing op (0-based) lands in out when j = steps − 1.
    let dst = |j: u32| {
        if (steps - 1 - j).is_multiple_of(2) {
            output
        } else {
            scratch
        }
    };
    let mut j = 0u32;
    let mut run = Running::new(input);
    if let Some((peer, combine)) = folds_in {
        run.fold_in(out, peer, 0, dst(j), combine);
        j += 1;
    }
    let triple_t1 = matches!(el.role(rank), Role::TripleT1(_));
    let triple_t0 = rank < 3 * el.triples && rank.is_multiple_of(3);
    for i in 0..k {
        let peer = el.real_rank(v ^ el.mask(i));
        let tag = 1 + i as i32;
        let s = run.send(out, peer, tag);
        if i + 1 == k && (triple_t0 || triple_t1) {
            // The 3-2 elimination's delivery to t2 (after the exchange partner).
            let t2 = if triple_t0 { rank + 2 } else { rank + 1 };
            run.send(out, t2, tag);
        }
        run.exchange(out, rank, peer, tag, s, dst(j));
        j += 1;
    }
    if matches!(el.role(rank), Role::PairP1(_)) {
        out.send_after(rank - 1, expand_tag, output, run.last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts() {
        let e = Elimination::new(6);
        assert_eq!(
            e,
            Elimination {
                pof2: 4,
                triples: 2,
                pairs: 0
            }
        );
        let e7 = Elimination::new(7);
        assert_eq!((e7.triples, e7.pairs), (1, 2));
        for n in 1..200u32 {
            let e = Elimination::new(n);
            assert_eq!(e.pof2 + e.triples + e.pairs, n);
            assert!(3 * e.triples + 2 * e.pairs <= n);
            for v in 0..e.pof2 {
                let r = e.real_rank(v);
                match e.role(r) {
                    Role::Plain(w) | Role::TripleT1(w) | Role::PairP1(w) => assert_eq!(w, v),
                    other => panic!("n={n} v={v} real {r} is {other:?}"),
                }
            }
        }
    }
}
