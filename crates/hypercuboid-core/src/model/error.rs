//! Errors of model and noise specifications.

use std::fmt;

/// Why a model or noise specification was refused. Every message names the bad value and what
/// is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelError {
    /// A model (or noise distribution) name that is not known.
    UnknownModel {
        /// `model` or `noise distribution`.
        what: &'static str,
        /// The name given.
        name: String,
        /// The accepted names, comma separated.
        accepted: &'static str,
    },
    /// A parameter key the model does not have.
    UnknownParameter {
        /// The model (`postal`, `exp`, ...).
        model: &'static str,
        /// The key given.
        key: String,
        /// The accepted keys, comma separated.
        accepted: &'static str,
    },
    /// A parameter given twice.
    DuplicateParameter {
        /// The model.
        model: &'static str,
        /// The key.
        key: String,
    },
    /// A parameter the model needs but was not given.
    MissingParameter {
        /// The model.
        model: &'static str,
        /// The key.
        key: &'static str,
    },
    /// A parameter value that could not be read or is out of range.
    BadValue {
        /// The model.
        model: &'static str,
        /// The key.
        key: String,
        /// The text given.
        value: String,
        /// What is wrong and what is accepted.
        reason: String,
    },
    /// A specification that is not of the form `name` or `name:key=value,key=value`.
    Malformed {
        /// The whole specification.
        spec: String,
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::UnknownModel {
                what,
                name,
                accepted,
            } => write!(f, "unknown {what} '{name}'; accepted: {accepted}"),
            ModelError::UnknownParameter {
                model,
                key,
                accepted,
            } => write!(
                f,
                "unknown parameter '{key}' for {model}; accepted: {accepted}"
            ),
            ModelError::DuplicateParameter { model, key } => {
                write!(f, "parameter '{key}' given twice for {model}")
            }
            ModelError::MissingParameter { model, key } => {
                write!(f, "missing parameter '{key}' for {model}")
            }
            ModelError::BadValue {
                model,
                key,
                value,
                reason,
            } => write!(f, "invalid value '{value}' for {key} in {model}: {reason}"),
            ModelError::Malformed { spec, reason } => {
                write!(f, "invalid specification '{spec}': {reason}")
            }
        }
    }
}

impl std::error::Error for ModelError {}
