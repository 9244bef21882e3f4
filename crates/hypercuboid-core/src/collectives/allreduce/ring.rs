//! `ring`: the bandwidth-optimal ring allreduce, a reduce-scatter followed by an allgather around
//! the ring `r → r + 1 (mod P)`, as MPICH (`MPIR_Allreduce_intra_ring`) and NCCL name it.
//!
//! The vector is split into `P` chunks with [`super::block`] (sizes differ by at most one; chunks
//! of length 0, when `count < P`, get no messages at all).
//! - **Reduce-scatter**, steps `s = 0 .. P − 1` (tag `s`): rank `r` sends chunk `r − s` (its
//!   input in step 0, afterwards the chunk it reduced in step `s − 1`) and receives chunk
//!   `r − s − 1`, reducing it into its output with a fused receive: `incoming ⊕ own`. Rank `r`
//!   ends owning the complete chunk `r + 1`.
//! - **Allgather**, steps `s = 0 .. P − 1` (tag `P − 1 + s`): rank `r` sends chunk `r + 1 − s`
//!   and receives chunk `r − s` into its output.
//!
//! Before the first fused receive, a rank copies its input into its output, except its own chunk
//! `r` (whose output is only written by the allgather): at most two `copy` ops, issued at once,
//! with no dependencies; the step-0 send reads the input directly.
//!
//! # Ops
//! `2(P − 1)` sends, `2(P − 1)` receives and up to 2 copies a rank when every chunk is non-empty
//! (fewer when `count < P`).
//!
//! # Operand order
//! Chunk `c` travels `c → c + 1 → … → c − 1`, each rank appending its contribution, so chunk
//! `c` is `M(c) ⊕ M(c+1) ⊕ … ⊕ M(c−1)` (indices mod P), computed once and distributed by the
//! allgather: bitwise identical on every rank. Chunk 0 is in rank order; the others are a
//! rotation of it, which no single-direction ring can avoid for a non-commutative operator
//! (a running partial can only be extended at its ends, and the chunk's path wraps from
//! `P − 1` to 0).

use super::{block, tag, AllreduceSpec};
use crate::schedule::{Combine, OpId, Program, Rank, Slice, Slot};

use super::{plain, unless_trivial, Algorithm, Allreduce};
use crate::collectives::registry::{keyless_entry, Entry};

/// The `ring` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Allreduce> = keyless_entry! {
    "ring" => Algorithm::Ring, build: unless_trivial(build),
    summary: "reduce-scatter then allgather around the ring, in chunks of count / P (MPICH, NCCL)",
    cost: "2(P - 1)(α + βm) + (P - 1)γm with chunks of m = n/P bytes (count divisible by P); exact"
        => |_, spec, m| super::cost::ring(spec, m),
    guarantees: &super::one_expression("N = 1", |_, n| n == 1),
};

/// Writes rank `rank`'s program (nranks ≥ 2, count ≥ 1).
pub(super) fn build(spec: &AllreduceSpec, rank: Rank, out: &mut Program) {
    let p = spec.nranks as u64;
    let r = rank as u64;
    let count = spec.count;
    let next = ((r + 1) % p) as Rank;
    let prev = ((r + p - 1) % p) as Rank;
    let chunk = |slot: Slot, c: u64| {
        let (offset, len) = block(count, p, c);
        Slice::new(slot, offset, len)
    };
    // Chunk index `r + d` modulo p, for any signed offset d in (−p, p].
    let at = |d: i64| ((r as i64 + d).rem_euclid(p as i64)) as u64;

    // The output outside the own chunk starts as a copy of the input.
    let own = chunk(Slot::Output, r);
    let copy_lo = (own.offset > 0).then(|| {
        out.copy(
            Slice::new(Slot::Input, 0, own.offset),
            Slice::new(Slot::Output, 0, own.offset),
        )
    });
    let copy_hi = (own.end() < count).then(|| {
        let len = count - own.end();
        out.copy(
            Slice::new(Slot::Input, own.end(), len),
            Slice::new(Slot::Output, own.end(), len),
        )
    });

    // Reduce-scatter, then allgather, over the steps where a chunk moves: every step when
    // `count ≥ P`, otherwise only the ≤ 2·count steps whose send or receive chunk is non-empty
    // (a rank's work is then proportional to `count`, not `P`). A skipped step, like a visited
    // one whose received chunk is empty, leaves no receive for the next send to wait on.
    let steps = p - 1;
    let visit = |offsets: [i64; 2]| -> Vec<u64> {
        if count >= p {
            return (0..steps).collect();
        }
        // Step s moves chunk (r + d − s) mod p for each offset d; chunk c < count is non-empty.
        let mut v: Vec<u64> = (0..count)
            .flat_map(|c| offsets.map(|d| (r as i64 + d - c as i64).rem_euclid(p as i64) as u64))
            .filter(|&s| s < steps)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    // `rs_send` (step, send) is kept for the allgather's write-after-read dependencies.
    let mut rs_send: Vec<(u64, OpId)> = Vec::new();
    let mut prev_recv: Option<OpId> = None;
    let mut next_step = 0;
    for s in visit([0, -1]) {
        if s != next_step {
            prev_recv = None;
        }
        next_step = s + 1;
        let t = tag(s);
        let send_c = at(-(s as i64));
        let src = if s == 0 {
            chunk(Slot::Input, send_c)
        } else {
            chunk(Slot::Output, send_c)
        };
        if src.len > 0 {
            let id = out.send(next, t, src);
            if let Some(d) = prev_recv {
                out.requires(id, d);
            }
            rs_send.push((s, id));
        }
        let recv_c = at(-(s as i64) - 1);
        let dst = chunk(Slot::Output, recv_c);
        prev_recv = (dst.len > 0).then(|| {
            let id = out.recv_reduce(prev, t, dst, Combine::Before);
            let copy = if recv_c < r { copy_lo } else { copy_hi };
            if let Some(c) = copy {
                out.requires(id, c);
            }
            id
        });
    }
    if next_step != steps {
        prev_recv = None;
    }

    // Allgather.
    let mut next_step = 0;
    for s in visit([1, 0]) {
        if s != next_step {
            prev_recv = None;
        }
        next_step = s + 1;
        let t = tag(steps + s);
        let send_c = at(1 - s as i64);
        let src = chunk(Slot::Output, send_c);
        if src.len > 0 {
            let id = out.send(next, t, src);
            if let Some(d) = prev_recv {
                out.requires(id, d);
            }
        }
        let recv_c = at(-(s as i64));
        let dst = chunk(Slot::Output, recv_c);
        prev_recv = (dst.len > 0).then(|| {
            let id = out.recv(prev, t, dst);
            // The reduce-scatter's step-s send read this chunk of the output (step 0 read the
            // input instead).
            if s > 0 {
                if let Ok(i) = rs_send.binary_search_by_key(&s, |&(step, _)| step) {
                    out.requires(id, rs_send[i].1);
                }
            }
            id
        });
    }
}
