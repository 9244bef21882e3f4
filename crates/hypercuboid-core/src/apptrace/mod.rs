//! Application traces: what `libhc_trace.so` (native/hc_trace.c) records of an unmodified MPI
//! program, read back ([`read`]), summarised ([`summary`]), exported to Chrome / Perfetto
//! ([`write_chrome`]) and converted to a [`crate::schedule::Schedule`] ([`convert`]) that the
//! simulator replays under any model or network.
//!
//! # The format (docs/trace.md)
//! One file per rank, little-endian: a 24-byte header (`HCTRACE\0`, version `u32` = 1, world
//! rank `u32`, world size `u32`, library string length `u32`), the MPI library's version
//! string, then records. A record is 64 bytes ([`Record`]: call `u16`, operator `u16`,
//! communicator id `u32`, entry and return times `u64` in ns since `MPI_Init` returned, peer,
//! tag, matched source and matched tag `i32`, bytes and received bytes `u64`, request id `u32`
//! and the number of 8-byte words that follow it `u32`). A trace of a whole run (`.hct`)
//! packs the rank files ([`pack`]): `HCTPACK\0`, version `u32` = 1, rank files `u32`, each
//! file's length `u64`, then the files in rank order.
//!
//! A rank whose last record is not `MPI_Finalize` did not finish (a crash, a kill): reading
//! keeps every whole record before the end and says where the rank stops; [`convert`] refuses
//! such a trace unless asked to convert up to where the ranks stop ([`ConvertOptions::partial`]).

mod build;
mod convert;
mod error;
mod expand;
mod read;
mod summary;

pub use convert::{convert, ConvertOptions, Converted, DEFAULT_ALLREDUCE, DEFAULT_ALLTOALL};
pub use error::TraceError;
pub use read::{
    pack, read, read_rank, AppTrace, RankTrace, Record, HEADER_BYTES, PACK_MAGIC, PACK_VERSION,
    RANK_MAGIC, RECORD_BYTES, VERSION, VERSION_FIXED,
};
pub use summary::{summary, write_chrome, Summary};

/// What a recorded call is, for conversion and summaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// `MPI_Init` / `MPI_Finalize`: the ends of the run.
    Bounds,
    /// A send (blocking or not).
    Send,
    /// A receive (blocking or not).
    Recv,
    /// `MPI_Sendrecv(_replace)`.
    Sendrecv,
    /// A probe: no data moves.
    Probe,
    /// A wait or test: completes requests.
    Complete,
    /// The creation of a persistent request (`MPI_Send_init`, `MPI_Recv_init`).
    Persistent,
    /// `MPI_Start(all)`: starts persistent requests.
    Start,
    /// A collective (blocking or not).
    Collective,
    /// The creation of a communicator.
    Comm,
}

/// One recorded call: its code in the format, its MPI name and its class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// The code of the format (native/hc_trace.c).
    pub code: u16,
    /// `MPI_Send`.
    pub name: &'static str,
    /// What it does.
    pub class: Class,
    /// Whether it starts a request (`MPI_Isend`, `MPI_Iallreduce`).
    pub nonblocking: bool,
}

const fn call(code: u16, name: &'static str, class: Class, nonblocking: bool) -> Call {
    Call {
        code,
        name,
        class,
        nonblocking,
    }
}

/// The collectives the recorder knows, by their code: 50 + index; the non-blocking form is
/// 70 + index.
pub const COLLECTIVE_NAMES: [&str; 12] = [
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "allgather",
    "allgatherv",
    "alltoall",
    "alltoallv",
    "reduce_scatter",
    "reduce_scatter_block",
    "scan",
    "exscan",
];

/// Code of the first collective (`MPI_Barrier`); its non-blocking form is `+ NB`.
pub const COLL_BASE: u16 = 50;
/// The non-blocking form of collective code `c` is `c + NB`.
pub const NB: u16 = 20;

/// Every call the format knows.
pub const CALLS: &[Call] = &[
    call(0, "MPI_Init", Class::Bounds, false),
    call(1, "MPI_Finalize", Class::Bounds, false),
    call(10, "MPI_Send", Class::Send, false),
    call(11, "MPI_Ssend", Class::Send, false),
    call(12, "MPI_Bsend", Class::Send, false),
    call(13, "MPI_Rsend", Class::Send, false),
    call(14, "MPI_Isend", Class::Send, true),
    call(15, "MPI_Issend", Class::Send, true),
    call(16, "MPI_Ibsend", Class::Send, true),
    call(17, "MPI_Irsend", Class::Send, true),
    call(20, "MPI_Recv", Class::Recv, false),
    call(21, "MPI_Irecv", Class::Recv, true),
    call(22, "MPI_Sendrecv", Class::Sendrecv, false),
    call(23, "MPI_Sendrecv_replace", Class::Sendrecv, false),
    call(24, "MPI_Probe", Class::Probe, false),
    call(25, "MPI_Iprobe", Class::Probe, false),
    call(26, "MPI_Send_init", Class::Persistent, false),
    call(27, "MPI_Recv_init", Class::Persistent, false),
    call(28, "MPI_Start", Class::Start, false),
    call(29, "MPI_Startall", Class::Start, false),
    call(30, "MPI_Wait", Class::Complete, false),
    call(31, "MPI_Waitall", Class::Complete, false),
    call(32, "MPI_Waitany", Class::Complete, false),
    call(33, "MPI_Waitsome", Class::Complete, false),
    call(34, "MPI_Test", Class::Complete, false),
    call(35, "MPI_Testall", Class::Complete, false),
    call(36, "MPI_Testany", Class::Complete, false),
    call(37, "MPI_Testsome", Class::Complete, false),
    call(50, "MPI_Barrier", Class::Collective, false),
    call(51, "MPI_Bcast", Class::Collective, false),
    call(52, "MPI_Reduce", Class::Collective, false),
    call(53, "MPI_Allreduce", Class::Collective, false),
    call(54, "MPI_Allgather", Class::Collective, false),
    call(55, "MPI_Allgatherv", Class::Collective, false),
    call(56, "MPI_Alltoall", Class::Collective, false),
    call(57, "MPI_Alltoallv", Class::Collective, false),
    call(58, "MPI_Reduce_scatter", Class::Collective, false),
    call(59, "MPI_Reduce_scatter_block", Class::Collective, false),
    call(60, "MPI_Scan", Class::Collective, false),
    call(61, "MPI_Exscan", Class::Collective, false),
    call(70, "MPI_Ibarrier", Class::Collective, true),
    call(71, "MPI_Ibcast", Class::Collective, true),
    call(72, "MPI_Ireduce", Class::Collective, true),
    call(73, "MPI_Iallreduce", Class::Collective, true),
    call(74, "MPI_Iallgather", Class::Collective, true),
    call(75, "MPI_Iallgatherv", Class::Collective, true),
    call(76, "MPI_Ialltoall", Class::Collective, true),
    call(77, "MPI_Ialltoallv", Class::Collective, true),
    call(78, "MPI_Ireduce_scatter", Class::Collective, true),
    call(79, "MPI_Ireduce_scatter_block", Class::Collective, true),
    call(80, "MPI_Iscan", Class::Collective, true),
    call(81, "MPI_Iexscan", Class::Collective, true),
    call(90, "MPI_Comm_dup", Class::Comm, false),
    call(91, "MPI_Comm_split", Class::Comm, false),
    call(92, "MPI_Comm_create", Class::Comm, false),
    call(93, "MPI_Comm_split_type", Class::Comm, false),
];

/// The call of a code, if the format knows it.
pub fn call_of(code: u16) -> Option<&'static Call> {
    // the table is sorted by code
    CALLS
        .binary_search_by_key(&code, |c| c.code)
        .ok()
        .map(|i| &CALLS[i])
}

/// The collective of a collective call's code (`allreduce` for `MPI_Allreduce` and
/// `MPI_Iallreduce`).
pub fn collective_of(code: u16) -> Option<&'static str> {
    let c = if code >= COLL_BASE + NB {
        code - NB
    } else {
        code
    };
    c.checked_sub(COLL_BASE)
        .and_then(|i| COLLECTIVE_NAMES.get(i as usize).copied())
}

/// Peer value: `MPI_ANY_SOURCE`.
pub const PEER_ANY: i32 = -1;
/// Peer value: none (collectives without a root, completions).
pub const PEER_NONE: i32 = -2;
/// Peer value: `MPI_PROC_NULL`.
pub const PEER_NULL: i32 = -3;
/// Communicator id of `MPI_COMM_WORLD`.
pub const COMM_WORLD: u32 = 0;
/// Communicator id of `MPI_COMM_SELF`.
pub const COMM_SELF: u32 = 1;
/// Request id of a communicator creation that gave this rank no communicator
/// (`MPI_COMM_NULL`).
pub const NO_COMM: u32 = u32::MAX;

#[cfg(test)]
mod tests;
