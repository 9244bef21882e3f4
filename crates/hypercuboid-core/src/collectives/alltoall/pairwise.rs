//! `pairwise`: MPICH's long-message alltoall (`MPIR_Alltoall_intra_pairwise`,
//! `src/mpi/coll/alltoall/alltoall_intra_pairwise.c`; Thakur, Rabenseifner and Gropp,
//! IJHPCA 2005; the seed paper, section 6: "when the number of nodes is a power of two, MPICH
//! uses a pairwise algorithm where node i sends and receives from node i ^ j at step j
//! (1 ≤ j < N). When the number of nodes is not a power of two … at step j, node i sends to
//! node i+j and receives from node i−j").
//!
//! Steps `j = 1 … N − 1`, one exchange each (MPICH's `MPIC_Sendrecv`): the receive and the send
//! of a step run together and both require both ops of the step before.
//!
//! # Ops
//! The own block's copy, then `N − 1` receives and `N − 1` sends (tag 0: one message per pair
//! of ranks), four dependencies a step.

use super::{plain, shift, with_own_copy, Algorithm, Alltoall, AlltoallSpec};
use crate::collectives::registry::{keyless_entry, Entry};
use crate::schedule::{Program, Rank, Slot};

/// The `pairwise` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Alltoall> = keyless_entry! {
    "pairwise" => Algorithm::Pairwise, build: with_own_copy(build),
    summary: "N - 1 exchange steps: partner rank ^ j for N a power of two, else send to \
             rank + j and receive from rank - j (MPICH's long-message algorithm)",
    cost: super::cost::DIRECT => super::cost::alltoall,
    guarantees: &[],
};

/// The peers of `rank` at step `j` of `n` ranks: `(receive from, send to)`.
pub fn partners(rank: Rank, j: u32, n: u32) -> (Rank, Rank) {
    if n.is_power_of_two() {
        (rank ^ j, rank ^ j)
    } else {
        (shift(rank, -(j as i64), n), shift(rank, j as i64, n))
    }
}

/// Writes rank `rank`'s exchanges (nranks ≥ 2, count ≥ 1).
fn build(spec: &AlltoallSpec, rank: Rank, out: &mut Program) {
    let n = spec.nranks;
    let mut prev = None;
    for j in 1..n {
        let (src, dst) = partners(rank, j, n);
        let r = out.recv(src, 0, spec.block(Slot::Output, src));
        let s = out.send(dst, 0, spec.block(Slot::Input, dst));
        if let Some((pr, ps)) = prev {
            out.requires_all(r, &[pr, ps]);
            out.requires_all(s, &[pr, ps]);
        }
        prev = Some((r, s));
    }
}

#[cfg(test)]
mod tests {
    use super::partners;

    #[test]
    fn partners_cover_every_rank_once() {
        for n in 2..40u32 {
            for r in 0..n {
                let mut from = vec![false; n as usize];
                let mut to = vec![false; n as usize];
                for j in 1..n {
                    let (s, d) = partners(r, j, n);
                    assert_ne!(s, r);
                    assert!(!from[s as usize] && !to[d as usize]);
                    from[s as usize] = true;
                    to[d as usize] = true;
                    // the partner sends to r in the same step
                    assert_eq!(partners(s, j, n).1, r);
                }
            }
        }
        assert_eq!(partners(5, 3, 8), (6, 6));
        assert_eq!(partners(5, 3, 7), (2, 1));
    }
}
