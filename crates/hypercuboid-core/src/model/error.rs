//! Errors of model and noise specifications and of model parameters.

use crate::spec::SpecError;

/// Why a model or noise specification, or a model's parameter, was refused. Every message
/// names the bad value and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A model or noise spec string that was refused: an unknown name or key, a repeated key, a
    /// bad value, a malformed string (see [`SpecError`]).
    #[error("{0}")]
    Spec(SpecError),
    /// A parameter of a model built in code that is out of range (a negative or non-finite
    /// per-byte time, see [`PostalModel::validate`](super::PostalModel::validate)).
    #[error("invalid {name} '{value}': {reason}")]
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
    #[error("{reason}")]
    File {
        /// What is wrong with it.
        reason: String,
    },
}

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
