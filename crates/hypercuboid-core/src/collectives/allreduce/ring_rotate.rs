//! `ring_rotate`: the coursework's ring allreduce (PHYS52015 coursework, section 2.1, Alg. 1),
//! for any number of ranks `P ≥ 2`.
//!
//! In round `k = 0 .. P − 1` (tag `k`) every rank sends its running vector (its input in round 0)
//! to the next rank, receives the previous rank's running vector and reduces its own input into
//! it: `running = incoming ⊕ own`. After `P − 1` rounds rank `r` holds
//! `M(r+1) ⊕ M(r+2) ⊕ … ⊕ M(r)` (indices mod P): every contribution once, but each rank in its
//! own rotation of rank order. Only rank `P − 1` gets rank order; the others differ for a
//! non-commutative operator and may differ in the last bits for floating point. This is the
//! algorithm as published; it cannot keep a common order.
//!
//! # Ops
//! Per round: `send`, `recv` (into a fresh buffer, posted as soon as that buffer is free) and
//! `reduce input into it`: `3(P − 1)` ops a rank. The coursework reduces after receiving, so the
//! receive is not fused (a fused receive would need a copy of the input in its buffer first).
//! Rounds alternate between the output and `scratch 0` so that the last lands in the output;
//! a round's receive therefore waits for the send two rounds back, which read the same buffer.

use super::{tag, whole, AllreduceSpec};
use crate::schedule::{Combine, OpId, Program, Rank, Slot};

use super::{plain, unless_trivial, Algorithm, Allreduce};
use crate::collectives::registry::{keyless_entry, Entry, Guarantee, Property};

/// The `ring_rotate` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Allreduce> = keyless_entry! {
    "ring_rotate" => Algorithm::RingRotate, build: unless_trivial(build),
    summary: "the coursework's ring: P - 1 rounds passing the whole running vector on",
    cost: "(P - 1)(α + nβ + nγ); exact" => |_, spec, m| super::cost::ring_rotate(spec, m),
    guarantees: &[
        Guarantee {
            property: Property::SameBitsCommutative,
            when: "N ≤ 2",
            holds: |_, n| n <= 2,
        },
        Guarantee {
            property: Property::SameExpression,
            when: "N = 1",
            holds: |_, n| n == 1,
        },
        Guarantee {
            property: Property::RankOrder,
            when: "N = 1",
            holds: |_, n| n == 1,
        },
    ],
};

/// Writes rank `rank`'s program (nranks ≥ 2, count ≥ 1).
pub(super) fn build(spec: &AllreduceSpec, rank: Rank, out: &mut Program) {
    let p = spec.nranks;
    let input = whole(Slot::Input, spec.count);
    let next = if rank + 1 == p { 0 } else { rank + 1 };
    let prev = if rank == 0 { p - 1 } else { rank - 1 };
    let rounds = p - 1;
    // Round k receives into buf(k): the output for the last round, alternating backwards.
    let buf = |k: u32| {
        if (rounds - 1 - k).is_multiple_of(2) {
            whole(Slot::Output, spec.count)
        } else {
            whole(Slot::Scratch(0), spec.count)
        }
    };
    let mut prev_send: Option<OpId> = None;
    let mut prev_reduce: Option<OpId> = None;
    for k in 0..rounds {
        let t = tag(k as u64);
        let s = match prev_reduce {
            None => out.send(next, t, input),
            Some(d) => {
                let s = out.send(next, t, buf(k - 1));
                out.requires(s, d);
                s
            }
        };
        let r = out.recv(prev, t, buf(k));
        if k >= 2 {
            // buf(k) is buf(k − 2), which the previous round's send reads.
            if let Some(ps) = prev_send {
                out.requires(r, ps);
            }
        }
        // running = incoming ⊕ own (After: dst ⊕ src).
        let d = out.reduce(input, buf(k), Combine::After);
        out.requires(d, r);
        prev_send = Some(s);
        prev_reduce = Some(d);
    }
}
