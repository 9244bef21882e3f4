//! Errors of the network simulator: bad names and parameters, routings a topology cannot
//! serve, and deadlocks found by the watchdog.

use super::routing::channel::{format_cycle, Channel};
use crate::spec::SpecError;
use crate::topology::TopologyError;
use std::fmt;

/// What can go wrong configuring or running a network simulation. Every message names the bad
/// value and what is accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NetworkError {
    /// A routing, traffic or exchange spec string that was refused: an unknown name or key, a
    /// repeated key, a bad value, a malformed string (see [`SpecError`]).
    #[error("{0}")]
    Spec(SpecError),
    /// A parameter outside its accepted range (`reason` says what is accepted).
    #[error("invalid {name} {value}: {reason}")]
    Parameter {
        /// The parameter (`load`, `buffer`, `ugal.c`, ...).
        name: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        reason: String,
    },
    /// A routing or traffic pattern that this topology cannot serve (disconnected routers,
    /// no intermediate router, no worst case defined, too many virtual channels, ...).
    #[error("{what} cannot run on {topology}: {reason}")]
    Unsupported {
        /// The routing or traffic (`inr`, `worst`, ...).
        what: String,
        /// The topology's name.
        topology: String,
        /// Why.
        reason: String,
    },
    /// The topology could not be generated or analysed.
    #[error("{0}")]
    Topology(TopologyError),
    /// The network stopped delivering packets while some were in flight: `cycle` is a cycle of
    /// virtual channels each of whose buffers is full and whose head packet waits for the next.
    #[error(
        "deadlock at {}: {in_flight} packets in the network stopped moving{}",
        crate::units::format_time(*time),
        cycle_note(cycle)
    )]
    Deadlock {
        /// Simulated time (ps) at which the watchdog fired.
        time: u64,
        /// Packets in the network.
        in_flight: u64,
        /// The cycle of waiting channels (empty if none was found: the network stalled without
        /// a cyclic wait, which is a simulator bug).
        cycle: Vec<Channel>,
    },
    /// The run stopped because a stop was asked for ([`crate::cancel::request`], Ctrl-C).
    #[error("network simulation interrupted")]
    Interrupted,
    /// The request needs more memory than the limit ([`crate::resources::check`]).
    #[error("{0}")]
    Memory(crate::resources::TooLarge),
}

crate::error_from::error_from!(NetworkError {
    SpecError => NetworkError::Spec,
    TopologyError => NetworkError::Topology,
    crate::resources::TooLarge => NetworkError::Memory,
    crate::cancel::Interrupted => |_| NetworkError::Interrupted,
});

/// What a deadlock's message says of its cycle of waiting channels.
fn cycle_note(cycle: &[Channel]) -> String {
    if cycle.is_empty() {
        " (no cycle of waiting channels found)".to_string()
    } else {
        format!(
            "; cycle of {} waiting channels: {}",
            cycle.len(),
            format_cycle(cycle)
        )
    }
}

/// Shorthand for a [`NetworkError::Parameter`].
pub(crate) fn param(
    name: &'static str,
    value: impl fmt::Display,
    reason: impl Into<String>,
) -> NetworkError {
    NetworkError::Parameter {
        name,
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// A name no entry of a choice table answers to, as a [`NetworkError::Parameter`]
/// (`invalid level 'fluid': accepted: packet, flow`).
pub(crate) fn refused(e: crate::spec::ChoiceError) -> NetworkError {
    param(e.what, format!("'{}'", e.value), e.reason())
}
