//! `rabenseifner`: reduce-scatter by recursive halving, then allgather by recursive doubling
//! (Rabenseifner's algorithm as MPICH implements it in `MPIR_Allreduce_intra_reduce_scatter_
//! allgather`; Thakur, Rabenseifner and Gropp, IJHPCA 2005, seed reference 19), for any `N`
//! and any count.
//!
//! With `p = 2^⌊log2 N⌋`, `rem = N − p` and `K = log2 p`:
//! 1. **Fold** (tag 0, only if `rem > 0`): as in `recursive_doubling`, each even rank
//!    `i < 2·rem` sends its whole input to `i + 1` and drops out; `i + 1` reduces
//!    `incoming ⊕ own` into `out`. The `p` remaining ranks are renumbered `0 .. p` (monotone).
//! 2. **Reduce-scatter**, steps `s = 0 .. K` with mask `2^s` (tag `1 + s`): the vector is cut
//!    into `p` chunks as MPICH cuts it ([`super::block`]: `count / p` elements each, the first
//!    `count mod p` one more). A rank holds a range of chunks (all of them at first); it keeps
//!    the lower half if its virtual rank is below its partner's (`v xor 2^s`), the upper half
//!    otherwise, sends the other half and reduces the partner's copy of its half into `out`. At
//!    the end virtual rank `v` owns one chunk (the bit-reversal of `v`), fully reduced.
//! 3. **Allgather**, steps with masks `2^{K−1} … 1` (tag `1 + K + step`): the reverse; each
//!    rank sends everything it owns to its partner and receives the partner's part into `out`.
//! 4. **Expand** (tag `2K + 1`, only if `rem > 0`): odd ranks `i < 2·rem` send `out` to `i − 1`.
//!
//! Chunks of length 0 (when `count < p`) get no message at all; both partners know.
//!
//! # Ops
//! Each step is one send and one receive (fused with the reduction in the reduce-scatter; the
//! first step of an unfolded rank reads the input as the receive's local operand, so no copy is
//! needed). As with MPICH's blocking `Sendrecv`, a step's receive waits for the previous step's
//! receive; an allgather receive also waits for the reduce-scatter send that read the same part
//! of `out`. Safe with synchronous sends.
//!
//! # Reduction order
//! Every reduce-scatter step combines the ordered reductions of two adjacent, aligned blocks of
//! virtual ranks, lower block on the left (MPICH puts the incoming value on the left
//! regardless, since it only runs this algorithm for commutative operators); each chunk is
//! reduced once and then copied. So every rank gets the same bits, in rank order.

use super::recursive_doubling::Fold;
use super::{block, whole, AllreduceSpec};
use crate::schedule::{Combine, OpId, Program, Rank, Slice, Slot};

use super::{plain, unless_trivial, Algorithm, Allreduce};
use crate::collectives::registry::{keyless_entry, Entry};

/// The `rabenseifner` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Allreduce> = keyless_entry! {
    "rabenseifner" => Algorithm::Rabenseifner, build: unless_trivial(build),
    summary: "reduce-scatter by recursive halving, allgather by recursive doubling, MPICH's fold",
    cost: "Σ_s [2(α + β·n/2^(s+1)) + γ·n/2^(s+1)] for N = 2^K and count divisible by N; exact"
        => |_, spec, m| super::cost::rabenseifner(spec, m),
    guarantees: &super::IN_RANK_ORDER,
};

/// Writes rank `rank`'s program (nranks ≥ 2, count ≥ 1).
pub(super) fn build(spec: &AllreduceSpec, rank: Rank, out: &mut Program) {
    let count = spec.count;
    let input = whole(Slot::Input, count);
    let output = whole(Slot::Output, count);
    let fold = Fold::new(spec.nranks);
    let p = fold.pof2 as u64;
    let k = fold.steps();
    let expand_tag = 2 * k as i32 + 1;
    // First element of chunk i (i = p gives count).
    let off = |i: u64| if i == p { count } else { block(count, p, i).0 };
    let range = |slot: Slot, lo: u64, hi: u64| Slice::new(slot, off(lo), off(hi) - off(lo));

    let Some(v) = fold.virtual_rank(rank) else {
        out.send(rank + 1, 0, input);
        out.recv(rank + 1, expand_tag, output);
        return;
    };
    let collapsed = rank < 2 * fold.rem;
    // The last op that wrote `out` (every later step reads or writes a part of it).
    let mut last: Option<OpId> = None;
    // Whether the running value of the chunks still to be reduced is the input.
    let mut in_input = true;
    if collapsed {
        last = Some(out.recv_reduce_into(rank - 1, 0, input, output, Combine::Before));
        in_input = false;
    }

    // Reduce-scatter. `sent[s]`: the send of step s if it read `out`.
    let (mut lo, mut hi) = (0u64, p);
    let mut sent: Vec<(u64, u64, Option<OpId>)> = Vec::with_capacity(k as usize);
    for s in 0..k {
        let mask = 1u32 << s;
        let pv = v ^ mask;
        let peer = fold.real_rank(pv);
        let half = (hi - lo) / 2;
        let (keep, give) = if v < pv {
            ((lo, lo + half), (lo + half, hi))
        } else {
            ((lo + half, hi), (lo, lo + half))
        };
        let tag = 1 + s as i32;
        let src_slot = if in_input { Slot::Input } else { Slot::Output };
        let give_slice = range(src_slot, give.0, give.1);
        let send = (give_slice.len > 0).then(|| {
            let id = out.send(peer, tag, give_slice);
            if let Some(l) = last {
                out.requires(id, l);
            }
            id
        });
        sent.push((give.0, give.1, if in_input { None } else { send }));
        let keep_out = range(Slot::Output, keep.0, keep.1);
        if keep_out.len > 0 {
            let combine = Combine::rank_order(rank, peer);
            let id = if in_input {
                out.recv_reduce_into(
                    peer,
                    tag,
                    range(Slot::Input, keep.0, keep.1),
                    keep_out,
                    combine,
                )
            } else {
                out.recv_reduce(peer, tag, keep_out, combine)
            };
            if let Some(l) = last {
                out.requires(id, l);
            }
            last = Some(id);
        }
        in_input = false;
        (lo, hi) = keep;
    }

    // Allgather, in the reverse order of the masks.
    for (j, s) in (0..k).rev().enumerate() {
        let mask = 1u32 << s;
        let pv = v ^ mask;
        let peer = fold.real_rank(pv);
        let tag = 1 + k as i32 + j as i32;
        let mine = range(Slot::Output, lo, hi);
        let (glo, ghi, rs_send) = sent[s as usize];
        if mine.len > 0 {
            let id = out.send(peer, tag, mine);
            if let Some(l) = last {
                out.requires(id, l);
            }
        }
        let theirs = range(Slot::Output, glo, ghi);
        if theirs.len > 0 {
            let id = out.recv(peer, tag, theirs);
            if let Some(l) = last {
                out.requires(id, l);
            }
            if let Some(rs) = rs_send {
                out.requires(id, rs);
            }
            last = Some(id);
        }
        (lo, hi) = (lo.min(glo), hi.max(ghi));
    }

    if collapsed {
        out.send_after(rank - 1, expand_tag, output, last);
    }
}
