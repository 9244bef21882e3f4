//! Errors of topology generation, reading, analysis and export.

use crate::spec::SpecError;
use std::fmt;

/// What can go wrong generating, reading, analysing or exporting a topology. Every message names
/// the bad value and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TopologyError {
    /// A spec string that was refused: an unknown family or key, a repeated key, a bad value,
    /// a malformed string (see [`SpecError`]).
    Spec(SpecError),
    /// A generator parameter outside its accepted values (`reason` names the accepted ones).
    Parameter {
        family: &'static str,
        name: &'static str,
        value: String,
        reason: String,
    },
    /// An Ethernet switched tree description that is not a tree (loop, machine that is not a
    /// leaf, disconnected part).
    NotATree { reason: String },
    /// Malformed input text (a topology JSON, a tree description, an edge list).
    Parse { what: String, reason: String },
    /// Reading or writing a file failed.
    Io { path: String, reason: String },
    /// A graph that violates an invariant of [`Topology`](super::Topology) (self-loop, index out
    /// of range, ...).
    Invalid { reason: String },
    /// The requested topology is larger than this library builds in memory.
    TooLarge {
        family: &'static str,
        what: String,
        limit: String,
    },
    /// An export format that cannot represent this topology.
    Export {
        format: &'static str,
        reason: String,
    },
    /// An analysis that does not apply to this topology (for example a bisection of a
    /// topology with fewer than two endpoints).
    Analysis { reason: String },
    /// A run stopped on a request to stop ([`crate::cancel`]).
    Interrupted,
}

impl TopologyError {
    /// The accepted values the error names (names, keys), if it names any.
    pub fn accepted(&self) -> Vec<String> {
        match self {
            TopologyError::Spec(e) => e.accepted(),
            _ => Vec::new(),
        }
    }
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologyError::Spec(e) => write!(f, "{e}"),
            TopologyError::Parameter {
                family,
                name,
                value,
                reason,
            } => write!(f, "{family}: invalid {name}={value}: {reason}"),
            TopologyError::NotATree { reason } => write!(f, "not a tree: {reason}"),
            TopologyError::Parse { what, reason } => write!(f, "cannot read {what}: {reason}"),
            TopologyError::Io { path, reason } => write!(f, "cannot access '{path}': {reason}"),
            TopologyError::Invalid { reason } => write!(f, "invalid topology: {reason}"),
            TopologyError::TooLarge {
                family,
                what,
                limit,
            } => write!(f, "{family}: too large: {what} (limit {limit})"),
            TopologyError::Export { format, reason } => {
                write!(f, "cannot export to {format}: {reason}")
            }
            TopologyError::Analysis { reason } => write!(f, "cannot analyse: {reason}"),
            TopologyError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for TopologyError {}

crate::error_from::error_from!(TopologyError {
    SpecError => TopologyError::Spec,
    crate::cancel::Interrupted => |_| TopologyError::Interrupted,
});

/// Shorthand for a [`TopologyError::Parameter`].
pub(crate) fn param_err(
    family: &'static str,
    name: &'static str,
    value: impl fmt::Display,
    reason: impl Into<String>,
) -> TopologyError {
    TopologyError::Parameter {
        family,
        name,
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// The [`param_err`] `must be >= MIN...` (`more`: what follows the number, e.g. ` layer`)
/// where `value` is below `min`.
pub(crate) fn at_least<T: PartialOrd + fmt::Display>(
    family: &'static str,
    name: &'static str,
    value: T,
    min: T,
    more: &str,
) -> Result<(), TopologyError> {
    if value < min {
        return Err(param_err(
            family,
            name,
            value,
            format!("must be >= {min}{more}"),
        ));
    }
    Ok(())
}

/// A [`TopologyError::Io`] for `path`, with the OS error's text without its "(os error N)".
pub(crate) fn io_err(path: &str, e: &std::io::Error) -> TopologyError {
    let text = e.to_string();
    let reason = match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    TopologyError::Io {
        path: path.to_string(),
        reason,
    }
}
