//! Errors of topology generation, reading, analysis and export.

use crate::spec::SpecError;
use std::fmt;

/// What can go wrong generating, reading, analysing or exporting a topology. Every message names
/// the bad value and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// A spec string that was refused: an unknown family or key, a repeated key, a bad value,
    /// a malformed string (see [`SpecError`]).
    #[error("{0}")]
    Spec(SpecError),
    /// A generator parameter outside its accepted values (`reason` names the accepted ones).
    #[error("{family}: invalid {name}={value}: {reason}")]
    Parameter {
        family: &'static str,
        name: &'static str,
        value: String,
        reason: String,
    },
    /// An Ethernet switched tree description that is not a tree (loop, machine that is not a
    /// leaf, disconnected part).
    #[error("not a tree: {reason}")]
    NotATree { reason: String },
    /// Malformed input text (a topology JSON, a tree description, an edge list).
    #[error("cannot read {what}: {reason}")]
    Parse { what: String, reason: String },
    /// Reading or writing a file failed.
    #[error("cannot access '{path}': {reason}")]
    Io { path: String, reason: String },
    /// A graph that violates an invariant of [`Topology`](super::Topology) (self-loop, index out
    /// of range, ...).
    #[error("invalid topology: {reason}")]
    Invalid { reason: String },
    /// The requested topology is larger than this library builds in memory.
    #[error("{family}: too large: {what} (limit {limit})")]
    TooLarge {
        family: &'static str,
        what: String,
        limit: String,
    },
    /// An export format that cannot represent this topology.
    #[error("cannot export to {format}: {reason}")]
    Export {
        format: &'static str,
        reason: String,
    },
    /// An analysis that does not apply to this topology (for example a bisection of a
    /// topology with fewer than two endpoints).
    #[error("cannot analyse: {reason}")]
    Analysis { reason: String },
    /// A run stopped on a request to stop ([`crate::cancel`]).
    #[error("interrupted")]
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
