//! `halo_nonblocking` (`nonblocking`): the seed's 26-message halo exchange
//! (`lb_halo_via_copy_nonblocking_start` / `_end`, chapter 2.4.2). Every face, edge and corner
//! is packed into its own buffer, the 26 receives and the 26 sends (`MPI_Issend`: synchronous,
//! so the schedule is verified with every send synchronous) are posted at once and one wait
//! completes them all; then every buffer is unpacked into the halo. `unpack=on_arrival`
//! unpacks each buffer as soon as its receive completes (the seed's "further study").
//!
//! # Ops
//! The receives (tag: the direction the message travels, [`super::DIRECTIONS`]), then per
//! direction a pack and its send, then the unpacks: the first after every receive and send,
//! each next one after the one before (`unpack=at_end`), or each after its own receive
//! (`unpack=on_arrival`). Directions without a neighbour (non-periodic boundaries) have no ops.

use super::{build_posted, prepare, Algorithm, Halo, Unpack, OVERLAP_KEY, UNPACKS};
use crate::collectives::registry::{Entry, Needs};
use crate::schedule::Region;
use crate::spec::{Form, Key};

/// The `halo_nonblocking` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Halo> = Entry {
    form: Form::named(
        "halo_nonblocking",
        "26 messages (6 faces, 12 edges, 8 corners) posted at once with synchronous \
         sends, one wait (the seed's non-blocking version)",
    )
    .with_aliases(&["nonblocking"])
    .with_keys(&[
        Key::new(
            "unpack",
            "at_end (default): unpack every buffer after one wait for all messages; \
             on_arrival: each buffer as its receive completes",
        ),
        OVERLAP_KEY,
    ])
    .with_example("halo_nonblocking:unpack=on_arrival"),
    parse: |spec| {
        let unpack = spec
            .value("unpack", |v| UNPACKS.read(v))?
            .unwrap_or(Unpack::AtEnd);
        Ok(Algorithm::Nonblocking {
            unpack,
            overlap: super::overlap_key(spec)?,
        })
    },
    needs: Needs::Nothing,
    prepare,
    build: |p, problem, rank, out| {
        build_posted(p, problem, rank, out, |_| Region::ALL_VALUES, p.unpack)
    },
    cost: None,
    guarantees: &[],
    examples: &[
        "halo_nonblocking",
        "halo_nonblocking:unpack=on_arrival",
        "halo_nonblocking:overlap=on",
    ],
};
