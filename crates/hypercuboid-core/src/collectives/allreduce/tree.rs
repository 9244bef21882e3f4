//! `tree`: binomial-tree reduce to rank 0, then binomial broadcast from rank 0 (PHYS52015
//! coursework, section 2.2, Alg. 2), for any number of ranks.
//!
//! The coursework halves a power-of-two group: first rank `i < P/2` receives from `i + P/2`,
//! then from `i + P/4`, …; its broadcast doubles the group back. This generator uses the same
//! binomial tree with its levels taken in the opposite order — the tree of MPICH's binomial
//! reduce — because then every subtree is a contiguous block of ranks and each partial result
//! stays in rank order: rank `r` with lowest set bit `2^j` (any `2^j` for rank 0) has children
//! `r + 2^i` for `2^i < 2^j` and `r + 2^i < P`, receives from them in increasing `i`
//! (`own ⊕ child(1) ⊕ child(2) ⊕ …`), and sends its partial to its parent `r − 2^j`. The number
//! of levels (`⌈log2 P⌉`), messages and bytes are those of the coursework's tree.
//!
//! The broadcast runs the same tree back: a rank receives the result from its parent, then sends
//! it to its children, largest subtree first (the order the coursework's broadcast uses too, and
//! the one that finishes in `log2 P` message times when a rank sends one message at a time).
//!
//! # Tags
//! The reduce message from a child `r + 2^i` has tag `i`; the broadcast message to it has tag
//! `L + i`, with `L = ⌈log2 P⌉`.
//!
//! # Ops
//! A leaf (no children): `send input` up, `recv output` down — 2 ops, both issued at once.
//! A rank with `c ≥ 1` children: `recv` from the first child into the output and
//! `reduce input into output` (`own ⊕ incoming`), then a fused receive-reduce
//! (`partial ⊕ incoming`) for each further child, the send up and the receive down (rank 0 has
//! neither), and `c` sends down: `2c + 3` ops (`2c + 1` for rank 0).
//! The receive from the parent overwrites the output that the send up read, so it requires that
//! send; the parent posts its receive independently of its own send, so this cannot deadlock.

use super::{ceil_log2, whole, AllreduceSpec};
use crate::schedule::{Combine, OpId, PeerRule, Program, Rank, Slot, ANY_SOURCE};

use super::{plain, unless_trivial, Algorithm, Allreduce};
use crate::collectives::registry::{keyless_entry, ClassDecl, Entry, RankClasses};

/// The `tree` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Allreduce> = keyless_entry! {
    "tree" => Algorithm::Tree, build: unless_trivial(build),
    summary: "binomial-tree reduce to rank 0, then binomial broadcast (the coursework's Alg. 2, any P)",
    cost: "k(α + nβ + nγ) + k(α + nβ) for P = 2^k; recurrences over the tree for any P; exact"
        => |_, spec, m| super::cost::tree(spec, m),
    guarantees: &super::IN_RANK_ORDER,
};

/// The lowest set bit of `rank` as an exponent, `None` for rank 0 (the root has no parent).
fn parent_level(rank: Rank) -> Option<u32> {
    (rank != 0).then(|| rank.trailing_zeros())
}

/// Number of children of `rank` in the binomial tree on `nranks` ranks.
pub fn children(nranks: u32, rank: Rank) -> u32 {
    let limit = parent_level(rank).unwrap_or(32);
    (0..limit)
        .take_while(|&i| (rank as u64) + (1u64 << i) < nranks as u64)
        .count() as u32
}

/// The tree's classes of ranks on `spec.nranks ≥ 2` ranks ([`Family::rank_classes`]): a rank's
/// program is set by its parent level `j` (its lowest set bit) and its number of children `c`
/// (`j`, fewer only where `r + 2^(j−1)` passes the last rank), up to its peers, which are
/// `rank XOR 2^i` (child `r + 2^i` for `i < j`, parent `r − 2^j`). Classes `0..L` (`L =
/// ⌈log2 N⌉`): the ranks of level `j` with all `j` children; `L`: rank 0; `L + 1 + j`: the one
/// rank of level `j` with fewer children, if any (at most one: such a rank lies within
/// `2^(j−1)` of `N`, and ranks of level `j` are `2^(j+1)` apart). On a power of two every rank
/// of level `j` has `j` children: `L + 1` classes.
///
/// [`Family::rank_classes`]: crate::collectives::registry::Family::rank_classes
pub(super) fn classes(spec: &AllreduceSpec) -> RankClasses {
    let n = spec.nranks;
    let levels = ceil_log2(n);
    let class = move |r: Rank| -> u32 {
        if r == 0 {
            return levels;
        }
        let j = r.trailing_zeros();
        // The children r + 2^i < N, i < j: ⌈log2 (N − r)⌉ of them below j.
        if ceil_log2(n - r) >= j {
            j
        } else {
            levels + 1 + j
        }
    };
    // A rank of level j has fewer than j children only within 2^(j−1) ≤ 2^(L−2) of N (never
    // on a power of two): below `plain`, a rank's class is its level.
    let plain = if n.is_power_of_two() || levels < 2 {
        n
    } else {
        n - (1 << (levels - 2))
    };
    let class_of = move |first: Rank, out: &mut [u32]| {
        if first > 0 && first as u64 + out.len() as u64 <= plain as u64 {
            for (r, c) in (first..).zip(out) {
                *c = r.trailing_zeros();
            }
        } else {
            for (r, c) in (first..).zip(out) {
                *c = class(r);
            }
        }
    };
    let mut ranks: Vec<Vec<Rank>> = vec![Vec::new(); 2 * levels as usize + 1];
    ranks[levels as usize].push(0);
    for j in 0..levels {
        // Ranks 2^j + m 2^(j+1) of level j have all their children below `limit`.
        let (step, lowest) = (1u64 << (j + 1), 1u64 << j);
        let limit = n as u64 - if j == 0 { 0 } else { 1u64 << (j - 1) };
        let full = if limit > lowest {
            (limit - lowest - 1) / step + 1
        } else {
            0
        };
        let at = |m: u64| (lowest + m * step) as Rank;
        let mut list: Vec<Rank> = [0, 1, full.saturating_sub(1)]
            .into_iter()
            .filter(|&m| m < full)
            .map(at)
            .collect();
        list.dedup();
        ranks[j as usize] = list;
        if lowest + full * step < n as u64 {
            ranks[(levels + 1 + j) as usize].push(at(full));
        }
    }
    let mut p = Program::new();
    let classes = ranks
        .into_iter()
        .map(|ranks| {
            let rules = match ranks.first() {
                Some(&r) => {
                    p.clear();
                    build(spec, r, &mut p);
                    p.ops
                        .iter()
                        .map(|o| {
                            o.peer()
                                .map_or(PeerRule::Const(ANY_SOURCE), |q| PeerRule::Xor(q ^ r))
                        })
                        .collect()
                }
                None => Vec::new(),
            };
            ClassDecl { ranks, rules }
        })
        .collect();
    RankClasses {
        class_of: Box::new(class_of),
        classes,
    }
}

/// Writes rank `rank`'s program (nranks ≥ 2, count ≥ 1).
pub(super) fn build(spec: &AllreduceSpec, rank: Rank, out: &mut Program) {
    let input = whole(Slot::Input, spec.count);
    let output = whole(Slot::Output, spec.count);
    let levels = ceil_log2(spec.nranks) as i32;
    let nchildren = children(spec.nranks, rank);

    // Reduce: children r + 2^i, in increasing i.
    let mut partial: Option<OpId> = None;
    for i in 0..nchildren {
        let child = rank + (1 << i);
        let tag = i as i32;
        partial = Some(match partial {
            None => {
                let r = out.recv(child, tag, output);
                // Before: dst = src ⊕ dst = own ⊕ incoming.
                let d = out.reduce(input, output, Combine::Before);
                out.requires(d, r);
                d
            }
            Some(prev) => {
                // After: dst = dst ⊕ incoming.
                let r = out.recv_reduce(child, tag, output, Combine::After);
                out.requires(r, prev);
                r
            }
        });
    }

    // Up to the parent and the result back down.
    let result = match parent_level(rank) {
        None => partial,
        Some(j) => {
            let parent = rank - (1 << j);
            let up = match partial {
                None => out.send(parent, j as i32, input),
                Some(prev) => {
                    let s = out.send(parent, j as i32, output);
                    out.requires(s, prev);
                    s
                }
            };
            let down = out.recv(parent, levels + j as i32, output);
            if partial.is_some() {
                out.requires(down, up);
            }
            Some(down)
        }
    };

    // Broadcast to the children, largest subtree first.
    for i in (0..nchildren).rev() {
        out.send_after(rank + (1 << i), levels + i as i32, output, result);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_counts() {
        // P = 8: 0 has 1, 2, 4; 4 has 5, 6; 2 and 6 have one; odd ranks none.
        let c: Vec<u32> = (0..8).map(|r| children(8, r)).collect();
        assert_eq!(c, [3, 0, 1, 0, 2, 0, 1, 0]);
        // P = 6: 4 keeps only child 5.
        let c: Vec<u32> = (0..6).map(|r| children(6, r)).collect();
        assert_eq!(c, [3, 0, 1, 0, 1, 0]);
        assert_eq!(children(u32::MAX, 0), 32);
    }
}
