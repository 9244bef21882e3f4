//! `linear`: LAM/MPI's alltoall. Every rank posts a receive from every other rank and a send to
//! every other rank at once, then waits for all of them (seed paper, section 6: "LAM/MPI
//! implements all-to-all by simply posting all nonblocking receives and sends and then waiting
//! for all communications to finish … the order of communications for node i is i → 0,
//! i → 1, …, i → N − 1").
//!
//! # Ops
//! The own block's copy, then `N − 1` receives (from ranks `0, 1, …` in order, skipping the
//! rank itself) into their output blocks and `N − 1` sends of the input blocks in the same
//! order, all without dependencies (tag 0: one message per pair of ranks).

use super::{plain, with_own_copy, Algorithm, Alltoall, AlltoallSpec};
use crate::collectives::registry::{keyless_entry, Entry};
use crate::schedule::{Program, Rank, Slot};

/// The `linear` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Alltoall> = keyless_entry! {
    "linear" => Algorithm::Linear, build: with_own_copy(build),
    summary: "post every receive and send at once, wait for all (LAM/MPI)",
    cost: super::cost::DIRECT => super::cost::alltoall,
    guarantees: &[],
};

/// Writes rank `rank`'s exchanges (nranks ≥ 2, count ≥ 1).
fn build(spec: &AlltoallSpec, rank: Rank, out: &mut Program) {
    let n = spec.nranks;
    for i in (0..n).filter(|&i| i != rank) {
        out.recv(i, 0, spec.block(Slot::Output, i));
    }
    for i in (0..n).filter(|&i| i != rank) {
        out.send(i, 0, spec.block(Slot::Input, i));
    }
}
