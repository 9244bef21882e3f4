//! [`TraceError`]: what can go wrong reading or converting an application trace.

use crate::schedule::ScheduleError;
use std::fmt;

/// An error reading or converting an application trace. Every variant is fatal for the call
/// that returns it; the message is one line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TraceError {
    /// A file is not a trace, or its header is damaged: `what` says which file and how.
    File {
        /// The file and what is wrong with it.
        what: String,
    },
    /// A record is wrong or cannot be converted: the rank, the record's number (0 is the
    /// `MPI_Init` record) and its call name it.
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
    Partial {
        /// Where each such rank stops.
        detail: String,
    },
    /// Building the schedule failed (an algorithm refused the communicator's size, ...).
    Schedule(ScheduleError),
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::File { what } => write!(f, "{what}"),
            TraceError::Record {
                rank,
                record,
                call,
                reason,
            } => write!(f, "rank {rank}, record {record} ({call}): {reason}"),
            TraceError::Partial { detail } => write!(
                f,
                "the trace is incomplete: {detail}; convert it with partial=True (--partial) \
                 to replay it up to where the ranks stop"
            ),
            TraceError::Schedule(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TraceError {}

impl From<ScheduleError> for TraceError {
    fn from(e: ScheduleError) -> Self {
        TraceError::Schedule(e)
    }
}

impl From<crate::cancel::Interrupted> for TraceError {
    fn from(e: crate::cancel::Interrupted) -> Self {
        TraceError::Schedule(e.into())
    }
}

impl From<crate::resources::TooLarge> for TraceError {
    fn from(e: crate::resources::TooLarge) -> Self {
        TraceError::Schedule(e.into())
    }
}
