//! [`TraceError`]: what can go wrong reading or converting an application trace.

use crate::schedule::ScheduleError;

/// An error reading or converting an application trace. Every variant is fatal for the call
/// that returns it; the message is one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// A file is not a trace, or its header is damaged: `what` says which file and how.
    #[error("{what}")]
    File {
        /// The file and what is wrong with it.
        what: String,
    },
    /// A record is wrong or cannot be converted: the rank, the record's number (0 is the
    /// `MPI_Init` record) and its call name it.
    #[error("rank {rank}, record {record} ({call}): {reason}")]
    Record {
        /// The world rank.
        rank: u32,
        /// The record's number in its rank's file.
        record: u64,
        /// The MPI call (`MPI_Recv`), or `call code N` for a code the format does not know.
        call: String,
        /// What is wrong.
        reason: String,
    },
    /// A rank stops before `MPI_Finalize` and a whole trace was asked for.
    #[error(
        "the trace is incomplete: {detail}; convert it with partial=True (--partial) to replay \
         it up to where the ranks stop"
    )]
    Partial {
        /// Where each such rank stops.
        detail: String,
    },
    /// Building the schedule failed (an algorithm refused the communicator's size, ...).
    #[error("{0}")]
    Schedule(ScheduleError),
}

crate::error_from::error_from!(TraceError {
    ScheduleError => TraceError::Schedule,
    crate::cancel::Interrupted => |e| TraceError::Schedule(e.into()),
    crate::resources::TooLarge => |e| TraceError::Schedule(e.into()),
});
