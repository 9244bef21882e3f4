//! `linear_sync:max=M`: Open MPI's linear alltoall with a bounded number of outstanding
//! requests (`ompi_coll_base_alltoall_intra_linear_sync`, `ompi/mca/coll/base/
//! coll_base_alltoall.c`; the `coll_tuned` component selects it for small communicators).
//!
//! Reproduced from Open MPI's behaviour, not its code: after the own block's copy, the rank
//! receives from `rank + 1, rank + 2, …` and sends to `rank − 1, rank − 2, …` (mod N), with at
//! most `M` receives and `M` sends outstanding. Open MPI posts the first `M` of each, then,
//! whenever a request completes (`wait_any`), posts the next one of its direction. A schedule
//! has no `wait_any`: here the `j`-th receive requires the `(j − M)`-th receive, and likewise
//! for sends, which is Open MPI's order when the requests of a direction complete in the order
//! they were posted. `max=0` means no limit (Open MPI treats a limit ≤ 0 or ≥ N − 1 the same
//! way): every request is posted at once, as `linear` does but in the shifted order.
//!
//! # Ops
//! The own block's copy, `N − 1` receives and `N − 1` sends (tag 0: one message per pair of
//! ranks), one dependency per op beyond the first `M` of each direction.

use super::{shift, whole_key, with_own_copy, Algorithm, Alltoall, AlltoallSpec, Prepared};
use crate::collectives::registry::{prepared_build, Entry, Needs};
use crate::schedule::{OpId, Program, Rank, Slot};
use crate::spec::{Form, Key};

/// The window a caller that names none gets.
pub const DEFAULT_MAX: u32 = 8;

/// The `linear_sync` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Alltoall> = Entry {
    form: Form::named(
        "linear_sync",
        "receives from rank+i and sends to rank-i with at most `max` of each \
         outstanding (Open MPI's linear_sync)",
    )
    .with_keys(&[Key::new(
        "max",
        "requests outstanding in each direction, 0 ..= 2147483647; 0: no limit (default 8)",
    )])
    .with_example("linear_sync:max=4"),
    parse: |spec| {
        Ok(Algorithm::LinearSync {
            max: whole_key(spec, "max", 0, i32::MAX as u32, DEFAULT_MAX)?,
        })
    },
    needs: Needs::Nothing,
    prepare: |alg, _, _| match *alg {
        Algorithm::LinearSync { max } => Ok(Prepared::Param(max)),
        _ => unreachable!("a linear_sync algorithm"),
    },
    build: prepared_build!(Prepared::Param(max) => with_own_copy(build, *max)),
    cost: Some(super::cost::DIRECT_COST),
    guarantees: &[],
    examples: &[
        "linear_sync",
        "linear_sync:max=1",
        "linear_sync:max=2",
        "linear_sync:max=0",
    ],
};

/// Writes rank `rank`'s exchanges with a window of `max` (nranks ≥ 2, count ≥ 1).
fn build(max: u32, spec: &AlltoallSpec, rank: Rank, out: &mut Program) {
    let n = spec.nranks;
    let peers = n - 1;
    let window = if max == 0 || max > peers { peers } else { max } as usize;
    let mut recvs: Vec<OpId> = Vec::with_capacity(peers as usize);
    for j in 1..n {
        let src = shift(rank, j as i64, n);
        let r = out.recv(src, 0, spec.block(Slot::Output, src));
        if recvs.len() >= window {
            out.requires(r, recvs[recvs.len() - window]);
        }
        recvs.push(r);
    }
    let mut sends: Vec<OpId> = Vec::with_capacity(peers as usize);
    for j in 1..n {
        let dst = shift(rank, -(j as i64), n);
        let s = out.send(dst, 0, spec.block(Slot::Input, dst));
        if sends.len() >= window {
            out.requires(s, sends[sends.len() - window]);
        }
        sends.push(s);
    }
}
