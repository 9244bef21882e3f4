//! `recursive_doubling`: pairwise-exchange recursive doubling with MPICH's fix for a
//! non-power-of-two rank count (Ruefenacht, Bull, Booth, "Generalisation of recursive doubling
//! for AllReduce", Parallel Computing 2017, section 2, Algorithm 1 and Fig. 2).
//!
//! With `p = 2^⌊log2 N⌋` and `rem = N − p`:
//! 1. **Collapse** (only if `rem > 0`, tag `K = log2 p`): each even rank `i < 2·rem` sends its
//!    input to `i + 1` and drops out; `i + 1` receives it and reduces (`incoming ⊕ own`).
//! 2. **Doubling** steps `k = 0 .. K` (tag `k`): the active ranks, renumbered `0 .. p` (virtual
//!    rank `i / 2` for odd `i < 2·rem`, `i − rem` above), exchange their running value with the
//!    virtual peer `v xor 2^k` and reduce.
//! 3. **Expand** (only if `rem > 0`, tag `K + 1`): each odd rank `i < 2·rem` sends the result
//!    to `i − 1`.
//!
//! # Ops
//! Step 0 of a rank whose running value is still its input is `send input`, `recv` into the
//! output, `reduce input into output` (3 ops, no copy; the receive is posted at once). Every
//! later step is exactly two ops: `send output` and a fused `recv … reduce` into the output.
//! Ops a rank: `2K + 1` on a power of two (41 at 2^20), `2K + 3` for the odd ranks below `2·rem`,
//! 2 for the even ones.
//!
//! A fused receive that reduces into the buffer its step's send reads must `require` that send
//! (otherwise it could overwrite data still being sent), so it is posted only when the send has
//! completed. That is race-free and deadlock-free when sends complete without waiting for the
//! matching receive (eager or buffered sends: the postal model, MPI below its eager limit). An
//! engine that makes a send wait for its matching receive (rendezvous) must post such a
//! receive's transfer into a private buffer as soon as possible and apply the reduction when the
//! dependency allows — MPICH's `Sendrecv` into `tmp_buf` followed by `Reduce_local` does exactly
//! that — or the pair would wait for each other.
//!
//! # Operand order
//! As in MPICH, a rank whose peer is lower computes `incoming ⊕ own`, otherwise `own ⊕ incoming`
//! (the real-to-virtual renumbering is monotone). Every rank's value after step `k` is the
//! ordered reduction of a contiguous block of ranks, so all ranks end with the same expression:
//! bitwise-identical results, correct for a non-commutative operator.
//!
//! This makes a rank's program depend on the bits of its virtual rank (which side of each
//! exchange it is on), so a schedule of `N` ranks stores up to `p` distinct program shapes.

use super::{floor_log2, whole, AllreduceSpec};
use crate::schedule::{Combine, OpId, Program, Rank, Slot};

/// MPICH's folding of `nranks` ranks onto the largest power of two not above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fold {
    /// `2^⌊log2 nranks⌋`: the ranks that take part in the doubling steps.
    pub pof2: u32,
    /// `nranks − pof2`: pairs of ranks collapsed into one before the doubling steps.
    pub rem: u32,
}

impl Fold {
    /// The fold of `nranks ≥ 1` ranks.
    pub const fn new(nranks: u32) -> Fold {
        let pof2 = 1u32 << floor_log2(nranks);
        Fold {
            pof2,
            rem: nranks - pof2,
        }
    }

    /// Number of doubling steps, `log2 pof2`.
    pub const fn steps(&self) -> u32 {
        self.pof2.trailing_zeros()
    }

    /// The virtual rank of `rank` during the doubling steps, `None` if it drops out (even ranks
    /// below `2·rem`).
    pub const fn virtual_rank(&self, rank: Rank) -> Option<u32> {
        if rank < 2 * self.rem {
            if rank % 2 == 0 {
                None
            } else {
                Some(rank / 2)
            }
        } else {
            Some(rank - self.rem)
        }
    }

    /// The real rank of virtual rank `v < pof2`.
    pub const fn real_rank(&self, v: u32) -> Rank {
        if v < self.rem {
            2 * v + 1
        } else {
            v + self.rem
        }
    }
}

/// Writes rank `rank`'s program (nranks ≥ 2, count ≥ 1).
pub(super) fn build(spec: &AllreduceSpec, rank: Rank, out: &mut Program) {
    let input = whole(Slot::Input, spec.count);
    let output = whole(Slot::Output, spec.count);
    let fold = Fold::new(spec.nranks);
    let steps = fold.steps();
    let collapse_tag = steps as i32;
    let expand_tag = steps as i32 + 1;

    let Some(v) = fold.virtual_rank(rank) else {
        // An even rank below 2·rem: hand the input over, then wait for the result.
        out.send(rank + 1, collapse_tag, input);
        out.recv(rank + 1, expand_tag, output);
        return;
    };
    let collapsed = rank < 2 * fold.rem;
    // The last op that wrote the running value into the output (None: it is still the input).
    let mut last: Option<OpId> = None;
    if collapsed {
        let r = out.recv(rank - 1, collapse_tag, output);
        // output = incoming (rank − 1) ⊕ own.
        let d = out.reduce(input, output, Combine::After);
        out.requires(d, r);
        last = Some(d);
    }
    for k in 0..steps {
        let peer = fold.real_rank(v ^ (1 << k));
        let peer_is_lower = peer < rank;
        let tag = k as i32;
        last = Some(match last {
            None => {
                out.send(peer, tag, input);
                let r = out.recv(peer, tag, output);
                // Reduce: After is dst ⊕ src = incoming ⊕ own; Before is own ⊕ incoming.
                let side = if peer_is_lower {
                    Combine::After
                } else {
                    Combine::Before
                };
                let d = out.reduce(input, output, side);
                out.requires(d, r);
                d
            }
            Some(prev) => {
                let s = out.send(peer, tag, output);
                out.requires(s, prev);
                // Fused: Before is incoming ⊕ dst; After is dst ⊕ incoming.
                let side = if peer_is_lower {
                    Combine::Before
                } else {
                    Combine::After
                };
                let r = out.recv_reduce(peer, tag, output, side);
                // The receive writes the buffer the send reads (and follows `prev` through it).
                out.requires(r, s);
                r
            }
        });
    }
    if collapsed {
        let s = out.send(rank - 1, expand_tag, output);
        if let Some(prev) = last {
            out.requires(s, prev);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_of_six_matches_fig_2() {
        let f = Fold::new(6);
        assert_eq!(f, Fold { pof2: 4, rem: 2 });
        let v: Vec<Option<u32>> = (0..6).map(|r| f.virtual_rank(r)).collect();
        assert_eq!(v, [None, Some(0), None, Some(1), Some(2), Some(3)]);
        let real: Vec<u32> = (0..4).map(|v| f.real_rank(v)).collect();
        assert_eq!(real, [1, 3, 4, 5]);
    }
}
