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
//! Every step is exactly two ops: a send of the running value and a fused
//! receive-reduce-copy (`dst = incoming ⊕ value` or `value ⊕ incoming`) that writes the new
//! running value into the *other* of two buffers, `out` and `scratch0`, alternating so that the
//! last step writes `out`. Step 0 reads the input directly. Ops a rank: `2K` on a power of two
//! (40 at 2^20), `2K + 2` for the odd ranks below `2·rem`, 2 for the even ones.
//!
//! Because a step never writes the buffer its own send reads, the receive of step `k` needs
//! only the send of step `k − 1` to have completed (it overwrites that send's buffer). A send
//! that waits for its matching receive (rendezvous, synchronous send) therefore never waits in
//! a cycle: the schedule is safe without any MPI buffering, which the verifier checks with
//! `eager_limit = 0`.
//!
//! # Operand order
//! As in MPICH, a rank whose peer is lower computes `incoming ⊕ own`, otherwise `own ⊕ incoming`
//! (the real-to-virtual renumbering is monotone). Every rank's value after step `k` is the
//! ordered reduction of a contiguous block of ranks, so all ranks end with the same expression:
//! bitwise-identical results, correct for a non-commutative operator. Schedules store a
//! receive's operand order relative to its peer, so this costs no extra program shapes.

use super::{floor_log2, whole, AllreduceSpec};
use crate::schedule::{Combine, OpId, PeerRule, Program, Rank, Slice, Slot};

use super::{plain, unless_trivial, Algorithm, Allreduce};
use crate::collectives::registry::{keyless_entry, Entry};

/// The `recursive_doubling` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Allreduce> = keyless_entry! {
    "recursive_doubling" => Algorithm::RecursiveDoubling, build: unless_trivial(build),
    summary: "pairwise exchange with MPICH's collapse/expand fix for a non-power of two",
    cost: "K(α + nβ + nγ) for N = 2^K; (K + 2)(α + nβ) otherwise when γ = 0; exact"
        => |_, spec, m| super::cost::recursive_doubling(spec, m),
    guarantees: &super::IN_RANK_ORDER,
};

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
            if rank.is_multiple_of(2) {
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

/// The running value of a rank in a recursive exchange (the doubling steps here, the
/// elimination's steps in [`super::elimination`]): where it is, the op that wrote it (`None`:
/// it is still the input) and the previous step's send, whose buffer the next receive
/// overwrites.
pub(super) struct Running {
    /// Where the value is.
    value: Slice,
    /// The op that wrote it.
    pub(super) last: Option<OpId>,
    /// The previous step's send.
    prev_send: Option<OpId>,
}

impl Running {
    /// The input, not yet touched.
    pub(super) fn new(input: Slice) -> Running {
        Running {
            value: input,
            last: None,
            prev_send: None,
        }
    }

    /// Receives `peer`'s value with `tag` and reduces it with the input into `dst`
    /// (`combine`), which becomes the value.
    pub(super) fn fold_in(
        &mut self,
        out: &mut Program,
        peer: Rank,
        tag: i32,
        dst: Slice,
        combine: Combine,
    ) {
        self.last = Some(out.recv_reduce_into(peer, tag, self.value, dst, combine));
        self.value = dst;
    }

    /// Sends the value to `peer` with `tag` once it is written.
    pub(super) fn send(&self, out: &mut Program, peer: Rank, tag: i32) -> OpId {
        out.send_after(peer, tag, self.value, self.last)
    }

    /// The receive of an exchange step whose send is `sent`: `peer`'s value with `tag`,
    /// reduced with the value in rank order into `dst`, which becomes the value. It waits for
    /// the value and for the previous step's send.
    pub(super) fn exchange(
        &mut self,
        out: &mut Program,
        rank: Rank,
        peer: Rank,
        tag: i32,
        sent: OpId,
        dst: Slice,
    ) {
        let r = out.recv_reduce_into(peer, tag, self.value, dst, Combine::rank_order(rank, peer));
        if let Some(l) = self.last {
            out.requires(r, l);
        }
        if let Some(ps) = self.prev_send {
            out.requires(r, ps);
        }
        self.prev_send = Some(sent);
        self.value = dst;
        self.last = Some(r);
    }
}

/// The peer of each op of every rank's program when `nranks ≥ 2` is a power of two (all ranks
/// then run one program up to peers): step `k`'s send and receive go to `rank XOR 2^k`.
pub(super) fn rules(nranks: u32) -> Vec<PeerRule> {
    debug_assert!(nranks >= 2 && nranks.is_power_of_two());
    (0..nranks.trailing_zeros())
        .flat_map(|k| [PeerRule::Xor(1 << k); 2])
        .collect()
}

/// Writes rank `rank`'s program (nranks ≥ 2, count ≥ 1).
pub(super) fn build(spec: &AllreduceSpec, rank: Rank, out: &mut Program) {
    let input = whole(Slot::Input, spec.count);
    let output = whole(Slot::Output, spec.count);
    let scratch = whole(Slot::Scratch(0), spec.count);
    let fold = Fold::new(spec.nranks);
    let steps = fold.steps();
    let collapse_tag = steps as i32;
    let expand_tag = steps as i32 + 1;
    // Where the running value after step k lands (k = −1: after the collapse): alternating, so
    // that the last step (k = steps − 1) writes the output.
    let dst = |k: i64| {
        if (steps as i64 - 1 - k) % 2 == 0 {
            output
        } else {
            scratch
        }
    };

    let Some(v) = fold.virtual_rank(rank) else {
        // An even rank below 2·rem: hand the input over, then wait for the result.
        out.send(rank + 1, collapse_tag, input);
        out.recv(rank + 1, expand_tag, output);
        return;
    };
    let collapsed = rank < 2 * fold.rem;
    let mut run = Running::new(input);
    if collapsed {
        // value = incoming (rank − 1) ⊕ own input.
        run.fold_in(out, rank - 1, collapse_tag, dst(-1), Combine::Before);
    }
    for k in 0..steps {
        let peer = fold.real_rank(v ^ (1 << k));
        let tag = k as i32;
        let s = run.send(out, peer, tag);
        run.exchange(out, rank, peer, tag, s, dst(k as i64));
    }
    if collapsed {
        out.send_after(rank - 1, expand_tag, output, run.last);
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
