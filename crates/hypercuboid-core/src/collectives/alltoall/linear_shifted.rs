//! `linear_shifted:block=B` (also `scattered`, MPICH's name): MPICH's medium-message alltoall
//! (`MPIR_Alltoall_intra_scattered`, `src/mpi/coll/alltoall/alltoall_intra_scattered.c`; the
//! seed paper, section 6: "the order of communications for node i is i → i+1, i → i+2, …,
//! i → (i+N−1) mod N"; Thakur, Rabenseifner and Gropp, IJHPCA 2005).
//!
//! Reproduced from MPICH's behaviour, not its code: the peers `i = 0 … N − 1` are taken in
//! blocks of `B` (MPICH's `MPIR_CVAR_ALLTOALL_THROTTLE`, default 32). For each block the rank
//! posts the receives from `rank + i` and then the sends to `rank − i` (mod N), and waits for
//! all of them before the next block (`MPIC_Waitall`): every op of a block requires every op of
//! the block before. Step `i = 0` is the rank's own block, a local copy here (MPICH sends it
//! to itself); it still counts towards the first block's `B`, as in MPICH.
//!
//! # Ops
//! The own block's copy, then `N − 1` receives and `N − 1` sends (tag 0: one message per pair
//! of ranks); `(2B)²` dependencies between consecutive blocks.

use super::{shift, whole_key, with_own_copy, Algorithm, Alltoall, AlltoallSpec, Prepared};
use crate::collectives::registry::{prepared_build, Entry, Needs};
use crate::schedule::{OpId, Program, Rank, ScheduleError, Slot};
use crate::spec::{Form, Key};

/// MPICH's default block (`MPIR_CVAR_ALLTOALL_THROTTLE`).
pub const DEFAULT_BLOCK: u32 = 32;

/// The `linear_shifted` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Alltoall> = Entry {
    form: Form::named(
        "linear_shifted",
        "peers rank+i in blocks of `block` posted requests, a wait between blocks \
         (MPICH's medium-message scattered)",
    )
    .with_aliases(&["scattered"])
    .with_keys(&[Key::new(
        "block",
        "peers per block of posted requests, 1 ..= 2147483647 (default 32, MPICH's \
         MPIR_CVAR_ALLTOALL_THROTTLE)",
    )])
    .with_example("linear_shifted:block=8"),
    parse: |spec| {
        Ok(Algorithm::LinearShifted {
            block: whole_key(spec, "block", 1, i32::MAX as u32, DEFAULT_BLOCK)?,
        })
    },
    needs: Needs::Nothing,
    prepare: |alg, _, _| match *alg {
        Algorithm::LinearShifted { block: 0 } => Err(ScheduleError::BadParameter {
            name: "linear_shifted block".into(),
            value: "0".into(),
            reason: "a block has 1 ..= 2147483647 peers".into(),
        }),
        Algorithm::LinearShifted { block } => Ok(Prepared::Param(block)),
        _ => unreachable!("a linear_shifted algorithm"),
    },
    build: prepared_build!(Prepared::Param(b) => with_own_copy(build, *b)),
    cost: Some(super::cost::DIRECT_COST),
    guarantees: &[],
    examples: &[
        "linear_shifted",
        "linear_shifted:block=1",
        "linear_shifted:block=3",
        "scattered:block=8",
    ],
};

/// Writes rank `rank`'s exchanges in blocks of `b` peers (nranks ≥ 2, count ≥ 1, b ≥ 1).
pub(super) fn build(b: u32, spec: &AlltoallSpec, rank: Rank, out: &mut Program) {
    let n = spec.nranks;
    let mut prev: Vec<OpId> = Vec::new();
    let mut cur: Vec<OpId> = Vec::new();
    let mut ii = 0u32;
    while ii < n {
        let ss = (n - ii).min(b);
        cur.clear();
        for i in (ii..ii + ss).filter(|&i| i != 0) {
            let src = shift(rank, i as i64, n);
            cur.push(out.recv(src, 0, spec.block(Slot::Output, src)));
        }
        for i in (ii..ii + ss).filter(|&i| i != 0) {
            let dst = shift(rank, -(i as i64), n);
            cur.push(out.send(dst, 0, spec.block(Slot::Input, dst)));
        }
        for &op in &cur {
            out.requires_all(op, &prev);
        }
        std::mem::swap(&mut prev, &mut cur);
        ii += ss;
    }
}
