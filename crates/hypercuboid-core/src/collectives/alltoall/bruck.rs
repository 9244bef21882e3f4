//! `bruck` and `k_bruck:k=K`: the Bruck alltoall (Bruck, Ho, Kipnis, Upfal and Weathersby,
//! "Efficient algorithms for all-to-all communications in multiport message-passing systems",
//! IEEE TPDS 8(11), 1997), as MPICH runs it for short messages (`MPIR_Alltoall_intra_brucks`,
//! `src/mpi/coll/alltoall/alltoall_intra_brucks.c`; Thakur, Rabenseifner and Gropp, IJHPCA
//! 2005), and its radix-k form (MPICH's `k_brucks`, `MPIR_Alltoall_intra_k_brucks`, radix
//! `MPIR_CVAR_ALLTOALL_BRUCKS_KVAL`, default 2). `bruck` is radix 2.
//!
//! Reproduced from the published algorithm and MPICH's behaviour, not its code. In the work
//! buffer (scratch 0, `N` blocks):
//! 1. **Rotation up by the rank** (copies): work block `p` = input block `(rank + p) mod N`.
//!    Block 0 is the rank's own, copied straight to the output instead.
//! 2. **Exchanges**, for each digit position `d` (`k^d < N`) and each digit value
//!    `v = 1 … k − 1` with `v·k^d < N`: the work blocks whose base-`k` digit `d` is `v` are
//!    packed (copies into scratch `v`), sent to `rank + v·k^d` and received from
//!    `rank − v·k^d` (into scratch `k' − 1 + v`, `k' = min(k, N)`), then unpacked (copies) into
//!    the same work blocks. The `k − 1` exchanges of one digit run together (disjoint blocks);
//!    the next digit's packs wait for all of them (MPICH's wait, for radix 2 its
//!    `MPIC_Sendrecv`). A block packs only after the copy that last wrote it.
//! 3. **Rotation back and reversal** (copies): output block `i` = work block
//!    `(rank − i) mod N`, which after step 2 holds rank `i`'s block for this rank.
//!
//! MPICH packs with an indexed datatype and receives straight into place; a schedule slice is
//! contiguous, so the packing and unpacking are explicit copies of runs of consecutive blocks
//! (runs of `k^d` blocks).
//!
//! # Ops
//! `⌈log_k N⌉` digits of at most `k − 1` exchanges (one send, one receive, tag = the exchange's
//! index) with `O(N / k^d)` copies each, plus `2 + N − 1` rotation copies. Messages carry about
//! `N / k` blocks: fewer, larger messages than the linear algorithms, for short blocks.

use super::{shift, whole_key, with_own_copy, Algorithm, Alltoall, AlltoallSpec, Prepared};
use crate::collectives::registry::{Cost, Entry, Needs};
use crate::schedule::{OpId, Program, Rank, Slice, Slot};
use crate::spec::{Form, Key};

/// Largest radix: a radix `k` uses scratch buffers up to `2k − 2`, numbered with 16 bits.
pub const MAX_K: u32 = 32768;

/// The radix of `k_bruck` when none is given (MPICH's `MPIR_CVAR_ALLTOALL_BRUCKS_KVAL`
/// default).
pub const DEFAULT_K: u32 = 2;

/// The `bruck` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Alltoall> = Entry {
    form: Form::named("bruck", "ceil(log2 N) exchanges of the blocks whose bit is set, with local rotations \
                  (MPICH's short-message Bruck)"),
    parse: |_| Ok(Algorithm::Bruck),
    needs: Needs::Nothing,
    prepare: |_, _, _| Ok(Prepared::Param(2)),
    build: build_entry,
    cost: Some(Cost {
        formula: "Σ over the ceil(log2 N) steps of (α + β·(blocks whose bit is set)·m); log2 N (α + βmN/2) for N a power of two; exact",
        time: super::cost::alltoall,
    }),
    guarantees: &[],
    examples: &["bruck"],
};

/// The `k_bruck` entry of [`super::ALGORITHMS`].
pub static K_ENTRY: Entry<Alltoall> = Entry {
    form: Form::named(
        "k_bruck",
        "radix-k Bruck: per base-k digit, k - 1 exchanges together (MPICH's \
         k_brucks)",
    )
    .with_keys(&[Key::new("k", "the radix, 2 ..= 32768 (default 2)")])
    .with_example("k_bruck:k=4"),
    parse: |spec| {
        Ok(Algorithm::KBruck {
            k: whole_key(spec, "k", 2, MAX_K, DEFAULT_K)?,
        })
    },
    needs: Needs::Nothing,
    prepare: |alg, _, _| match *alg {
        Algorithm::KBruck { k } if (2..=MAX_K).contains(&k) => Ok(Prepared::Param(k)),
        Algorithm::KBruck { k } => Err(crate::schedule::ScheduleError::BadParameter {
            name: "k_bruck radix".into(),
            value: k.to_string(),
            reason: format!("the radix is 2 ..= {MAX_K}"),
        }),
        _ => unreachable!("a k_bruck algorithm"),
    },
    build: build_entry,
    cost: Some(Cost {
        formula: "Σ over digits d and values v of (α + β·(blocks whose digit d is v)·m); exact",
        time: super::cost::alltoall,
    }),
    guarantees: &[],
    examples: &["k_bruck", "k_bruck:k=3", "k_bruck:k=4", "k_bruck:k=7"],
};

fn build_entry(p: &Prepared, spec: &AlltoallSpec, rank: Rank, out: &mut Program) {
    let Prepared::Param(k) = *p else {
        unreachable!("prepared by prepare")
    };
    with_own_copy(spec, rank, out, |spec, rank, out| build(k, spec, rank, out))
}

/// The runs of consecutive blocks below `n` whose base-`k` digit at weight `dist` is `v`:
/// `(first block, blocks)`.
pub fn runs(n: u32, k: u32, dist: u64, v: u32) -> impl Iterator<Item = (u32, u32)> {
    let period = dist * k as u64;
    let first = v as u64 * dist;
    (0..)
        .map(move |m| first + m * period)
        .take_while(move |&lo| lo < n as u64)
        .map(move |lo| (lo as u32, (dist.min(n as u64 - lo)) as u32))
}

/// Writes rank `rank`'s program after its own block's copy (nranks ≥ 2, count ≥ 1,
/// 2 ≤ k ≤ [`MAX_K`]).
pub(super) fn build(k: u32, spec: &AlltoallSpec, rank: Rank, out: &mut Program) {
    let n = spec.nranks;
    let c = spec.count;
    let work = Slot::Scratch(0);
    let kk = k.min(n);
    let pack_slot = |v: u32| Slot::Scratch(v as u16);
    let recv_slot = |v: u32| Slot::Scratch((kk - 1 + v) as u16);
    let elems = |b: u32| b as u64 * c;

    // 1. Rotation: work[p] = in[(rank + p) mod n] for p = 1 .. n - 1.
    let mut last_writer: Vec<OpId> = vec![0; n as usize];
    let hi = n - rank - 1; // blocks rank + 1 .. n - 1 go to work[1 .. n - rank]
    if hi > 0 {
        let a = out.copy(
            spec.blocks(Slot::Input, rank + 1, hi),
            spec.blocks(work, 1, hi),
        );
        last_writer[1..=hi as usize].fill(a);
    }
    if rank > 0 {
        let b = out.copy(
            spec.blocks(Slot::Input, 0, rank),
            spec.blocks(work, n - rank, rank),
        );
        last_writer[(n - rank) as usize..].fill(b);
    }

    // 2. Exchanges, digit by digit.
    let mut tag = 0i32;
    let mut waits: Vec<OpId> = Vec::new(); // the previous digit's sends and receives
    let mut unpacked: Vec<Vec<OpId>> = vec![Vec::new(); kk as usize]; // readers of recv_slot(v)
    let mut dist = 1u64;
    while dist < n as u64 {
        let mut this_digit: Vec<OpId> = Vec::new();
        for v in 1..kk {
            let d = v as u64 * dist;
            if d >= n as u64 {
                break;
            }
            let mut packs: Vec<(OpId, u32, u32, u64)> = Vec::new();
            let mut at = 0u64;
            for (lo, len) in runs(n, k, dist, v) {
                let cp = out.copy(
                    spec.blocks(work, lo, len),
                    Slice::new(pack_slot(v), at, elems(len)),
                );
                let mut prev_w = None;
                for &w in &last_writer[lo as usize..(lo + len) as usize] {
                    if prev_w != Some(w) {
                        out.requires(cp, w);
                        prev_w = Some(w);
                    }
                }
                out.requires_all(cp, &waits);
                packs.push((cp, lo, len, at));
                at += elems(len);
            }
            let snd = out.send(
                shift(rank, d as i64, n),
                tag,
                Slice::new(pack_slot(v), 0, at),
            );
            for &(cp, ..) in &packs {
                out.requires(snd, cp);
            }
            let rcv = out.recv(
                shift(rank, -(d as i64), n),
                tag,
                Slice::new(recv_slot(v), 0, at),
            );
            out.requires_all(rcv, &unpacked[v as usize]);
            unpacked[v as usize].clear();
            for &(cp, lo, len, off) in &packs {
                let u = out.copy(
                    Slice::new(recv_slot(v), off, elems(len)),
                    spec.blocks(work, lo, len),
                );
                out.requires(u, rcv);
                out.requires(u, cp);
                last_writer[lo as usize..(lo + len) as usize].fill(u);
                unpacked[v as usize].push(u);
            }
            this_digit.push(snd);
            this_digit.push(rcv);
            tag += 1;
        }
        waits = this_digit;
        dist *= k as u64;
    }

    // 3. out[i] = work[(rank - i) mod n] for every i but the rank.
    for i in (0..n).filter(|&i| i != rank) {
        let p = shift(rank, -(i as i64), n);
        let cp = out.copy(spec.blocks(work, p, 1), spec.block(Slot::Output, i));
        out.requires(cp, last_writer[p as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn runs_are_the_blocks_with_the_digit() {
        for n in 2..60u32 {
            for k in 2..6u32 {
                let mut dist = 1u64;
                while dist < n as u64 {
                    for v in 1..k {
                        let mut got = Vec::new();
                        for (lo, len) in runs(n, k, dist, v) {
                            got.extend(lo..lo + len);
                        }
                        let want: Vec<u32> = (0..n)
                            .filter(|&p| (p as u64 / dist) % k as u64 == v as u64)
                            .collect();
                        assert_eq!(got, want, "n={n} k={k} dist={dist} v={v}");
                    }
                    dist *= k as u64;
                }
            }
        }
        assert_eq!(runs(8, 2, 2, 1).collect::<Vec<_>>(), [(2, 2), (6, 2)]);
    }
}
