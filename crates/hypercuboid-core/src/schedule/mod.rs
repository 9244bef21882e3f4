//! The schedule: one program of ops per rank, with GOAL dependencies and data semantics.
//!
//! # Storage
//! Ranks of a collective mostly run the same program up to their peers. A [`Schedule`] therefore
//! stores each distinct program *shape* (ops with the peer left out, and dependencies) once, and
//! per rank only the index of its shape and its first op's offset (struct of arrays, each in the
//! narrowest integer that holds it; neither when every rank has one shape / programs of one
//! length). Sharing is found by hashing.
//!
//! Peers follow rules: when the schedule is built, each op of a shape gets the [`PeerRule`] that
//! gives its peer from the rank for every rank of that shape (`rank XOR m`, `(rank + d) mod n`,
//! or one constant peer); only the ops that follow none keep an explicit column of peers, for
//! the ranks of their shape. Recursive doubling on 2^20 ranks (40 ops a rank) then stores no
//! peer at all: one shape of 40 ops and nothing per rank. Any schedule can be stored (each rank
//! may have a shape of its own, and a shape's peers may follow no rule).
//!
//! # Building
//! [`ScheduleBuilder::push`] takes one rank's program at a time. A generator that knows its
//! ranks fall into classes that run one program each up to peers that follow rules (the
//! binomial tree's levels) pushes them with [`ScheduleBuilder::push_classes`] without building
//! their programs; the schedule is the same.
//!
//! # Semantics
//! Ops name buffer [`Slice`]s of the rank's `input`, `output` and `scratch k` buffers, so one
//! schedule is simulated (sizes only), verified (symbolically) and executed (real data). A
//! schedule imported from GOAL text carries only sizes ([`Payload::Bytes`]).

mod builder;
pub mod columns;
mod error;
pub mod export_c;
pub mod goal;
pub mod halo;
mod op;
mod program;
mod shape;
mod storage;
#[cfg(test)]
mod tests;
mod types;
pub mod verify;

pub use builder::{ScheduleBuilder, MAX_RANKS};
pub use columns::Columns;
pub use error::ScheduleError;
pub use export_c::{check_c_name, write_c, CExport, CExportOptions};
pub use op::{
    Combine, Dep, DepKind, Op, OpCode, OpKind, Payload, Rank, Region, Slice, Slot, ANY_SOURCE,
    ANY_TAG,
};
pub use program::{OpId, Program};
pub use shape::{PeerRule, RankClass, Shape};
pub use storage::{RankView, Schedule};
pub use types::{Collective, Dtype, Meta, ReduceOp};
