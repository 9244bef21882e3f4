//! Errors of model and noise specifications and of model parameters.

use crate::spec::SpecError;
use std::fmt;

/// Why a model or noise specification, or a model's parameter, was refused. Every message
/// names the bad value and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelError {
    /// A model or noise spec string that was refused: an unknown name or key, a repeated key, a
    /// bad value, a malformed string (see [`SpecError`]).
    Spec(SpecError),
    /// A parameter of a model built in code that is out of range (a negative or non-finite
    /// per-byte time, see [`PostalModel::validate`](super::PostalModel::validate)).
    Parameter {
        /// The parameter (`beta`, `gamma`).
        name: &'static str,
        /// Its value.
        value: String,
        /// What is accepted.
        reason: &'static str,
    },
    /// A model file ([`parse_model_file`](super::parse_model_file)) that is not one: not JSON,
    /// not an object, no `model` spec string.
    File {
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Spec(e) => write!(f, "{e}"),
            ModelError::Parameter {
                name,
                value,
                reason,
            } => write!(f, "invalid {name} '{value}': {reason}"),
            ModelError::File { reason } => f.write_str(reason),
        }
    }
}

impl std::error::Error for ModelError {}

impl ModelError {
    /// The accepted values the error names (names, keys), if it names any.
    pub fn accepted(&self) -> Vec<String> {
        match self {
            ModelError::Spec(e) => e.accepted(),
            _ => Vec::new(),
        }
    }
}

crate::error_from::error_from!(ModelError {
    SpecError => ModelError::Spec,
});
