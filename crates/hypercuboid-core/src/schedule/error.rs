//! Errors of schedule construction, generation and text I/O.

use std::fmt;

/// What can go wrong building, generating, reading or writing a schedule. Every message names
/// the bad value and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScheduleError {
    /// A rank count the schedule or algorithm cannot have.
    BadRankCount { nranks: u64, reason: String },
    /// An op that is malformed on its own (peer out of range, mismatched lengths, ...).
    BadOp { rank: u32, op: u32, reason: String },
    /// A dependency on an op that does not exist or on itself.
    BadDependency {
        rank: u32,
        op: u32,
        on: u32,
        reason: String,
    },
    /// A program was pushed for a rank out of order or twice.
    RankOrder { expected: u32, got: u32 },
    /// The builder was finished before every rank had a program.
    Incomplete { ranks_built: u32, nranks: u32 },
    /// A name the user typed (dtype, reduction op, collective, ...) that is not known.
    UnknownName {
        what: &'static str,
        name: String,
        /// The accepted names.
        accepted: Vec<String>,
    },
    /// A parameter value outside what is accepted.
    BadParameter {
        name: String,
        value: String,
        reason: String,
    },
    /// Parameters of a generator that do not fit the problem (a recursive-multiplying schedule
    /// for another number of ranks), with values that would.
    DoesNotFit {
        /// What the parameter is (`schedule`).
        name: String,
        /// The value given.
        value: String,
        /// Why it does not fit, and what would.
        reason: String,
        /// Values that fit.
        fits: Vec<String>,
    },
    /// Malformed schedule text: line and column are 1-based.
    Parse {
        line: usize,
        column: usize,
        message: String,
    },
    /// Reading or writing a file failed.
    Io { path: String, message: String },
    /// A spec string (an algorithm with its parameters) that is malformed or names an unknown
    /// algorithm or key (boxed: it is larger than the other variants).
    Spec(Box<crate::spec::SpecError>),
    /// Generation or verification stopped because a stop was asked for
    /// ([`crate::cancel::request`], Ctrl-C).
    Interrupted,
    /// The request needs more memory than the limit ([`crate::resources::check`]).
    Memory(crate::resources::TooLarge),
}

crate::error_from::error_from!(ScheduleError {
    crate::spec::SpecError => |e| ScheduleError::Spec(Box::new(e)),
    crate::resources::TooLarge => ScheduleError::Memory,
    crate::cancel::Interrupted => |_| ScheduleError::Interrupted,
});

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleError::BadRankCount { nranks, reason } => {
                write!(f, "invalid number of ranks {nranks}: {reason}")
            }
            ScheduleError::BadOp { rank, op, reason } => write!(f, "rank {rank} op {op}: {reason}"),
            ScheduleError::BadDependency {
                rank,
                op,
                on,
                reason,
            } => {
                write!(f, "rank {rank} op {op} depends on op {on}: {reason}")
            }
            ScheduleError::RankOrder { expected, got } => {
                write!(
                    f,
                    "program for rank {got} pushed, but rank {expected} was expected next"
                )
            }
            ScheduleError::Incomplete {
                ranks_built,
                nranks,
            } => {
                write!(
                    f,
                    "schedule has programs for {ranks_built} of {nranks} ranks"
                )
            }
            ScheduleError::UnknownName {
                what,
                name,
                accepted,
            } => {
                write!(
                    f,
                    "unknown {what} '{name}'; accepted: {}",
                    accepted.join(", ")
                )
            }
            ScheduleError::BadParameter {
                name,
                value,
                reason,
            }
            | ScheduleError::DoesNotFit {
                name,
                value,
                reason,
                ..
            } => {
                write!(f, "invalid {name} '{value}': {reason}")
            }
            ScheduleError::Parse {
                line,
                column,
                message,
            } => {
                write!(f, "line {line}, column {column}: {message}")
            }
            ScheduleError::Io { path, message } => write!(f, "{path}: {message}"),
            ScheduleError::Spec(e) => write!(f, "{e}"),
            ScheduleError::Memory(e) => write!(f, "{e}"),
            ScheduleError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for ScheduleError {}

impl ScheduleError {
    /// The accepted values the error names (names, keys), if it names any.
    pub fn accepted(&self) -> Vec<String> {
        match self {
            ScheduleError::UnknownName { accepted, .. } => accepted.clone(),
            ScheduleError::DoesNotFit { fits, .. } => fits.clone(),
            ScheduleError::Spec(e) => e.accepted(),
            _ => Vec::new(),
        }
    }

    /// Checks a rank count against 1 ..= [`MAX_RANKS`](super::MAX_RANKS): else
    /// [`ScheduleError::BadRankCount`], saying that `what` (`a schedule`, `an allreduce`) has
    /// that many ranks.
    pub fn check_nranks(nranks: u64, what: &str) -> Result<(), ScheduleError> {
        if nranks == 0 || nranks > super::MAX_RANKS {
            return Err(ScheduleError::BadRankCount {
                nranks,
                reason: format!("{what} has 1 to {} ranks", super::MAX_RANKS),
            });
        }
        Ok(())
    }

    /// Refuses the opaque `byte` dtype where values are typed: else
    /// [`ScheduleError::BadParameter`] on `dtype`, saying `reason`.
    pub fn refuse_byte(dtype: super::Dtype, reason: &str) -> Result<(), ScheduleError> {
        if dtype == super::Dtype::Byte {
            return Err(ScheduleError::BadParameter {
                name: "dtype".into(),
                value: "byte".into(),
                reason: reason.into(),
            });
        }
        Ok(())
    }
}
