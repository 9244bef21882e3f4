//! Errors of the network simulator: bad names and parameters, routings a topology cannot
//! serve, and deadlocks found by the watchdog.

use super::routing::channel::{format_cycle, Channel};
use crate::spec::SpecError;
use crate::topology::TopologyError;
use std::fmt;

/// What can go wrong configuring or running a network simulation. Every message names the bad
/// value and what is accepted.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum NetworkError {
    /// A routing, traffic or exchange spec string that was refused: an unknown name or key, a
    /// repeated key, a bad value, a malformed string (see [`SpecError`]).
    Spec(SpecError),
    /// A parameter outside its accepted range (`reason` says what is accepted).
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
    Unsupported {
        /// The routing or traffic (`inr`, `worst`, ...).
        what: String,
        /// The topology's name.
        topology: String,
        /// Why.
        reason: String,
    },
    /// The topology could not be generated or analysed.
    Topology(TopologyError),
    /// The network stopped delivering packets while some were in flight: `cycle` is a cycle of
    /// virtual channels each of whose buffers is full and whose head packet waits for the next.
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
    Interrupted,
    /// The request needs more memory than the limit ([`crate::resources::check`]).
    Memory(crate::resources::TooLarge),
}

crate::error_from::error_from!(NetworkError {
    SpecError => NetworkError::Spec,
    TopologyError => NetworkError::Topology,
    crate::resources::TooLarge => NetworkError::Memory,
    crate::cancel::Interrupted => |_| NetworkError::Interrupted,
});

impl fmt::Display for NetworkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetworkError::Spec(e) => write!(f, "{e}"),
            NetworkError::Parameter {
                name,
                value,
                reason,
            } => write!(f, "invalid {name} {value}: {reason}"),
            NetworkError::Unsupported {
                what,
                topology,
                reason,
            } => write!(f, "{what} cannot run on {topology}: {reason}"),
            NetworkError::Topology(e) => write!(f, "{e}"),
            NetworkError::Deadlock {
                time,
                in_flight,
                cycle,
            } => {
                write!(
                    f,
                    "deadlock at {}: {in_flight} packets in the network stopped moving",
                    crate::units::format_time(*time)
                )?;
                if cycle.is_empty() {
                    write!(f, " (no cycle of waiting channels found)")
                } else {
                    write!(
                        f,
                        "; cycle of {} waiting channels: {}",
                        cycle.len(),
                        format_cycle(cycle)
                    )
                }
            }
            NetworkError::Memory(e) => write!(f, "{e}"),
            NetworkError::Interrupted => write!(f, "network simulation interrupted"),
        }
    }
}

impl std::error::Error for NetworkError {}

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
