//! Stopping a long run on request (Ctrl-C).
//!
//! One process-wide flag: a front end sets it ([`request`]) when the user asks to stop (the
//! Python binding on SIGINT, a C caller), and every long loop of the core (simulation,
//! verification, generation, network runs) polls it ([`check`]) often enough to stop within a
//! fraction of a second, returning its subsystem's `Interrupted` error. A front end clears it
//! ([`clear`]) before it starts a run.
//!
//! Polling is one relaxed atomic load; loops call it once per batch of work (thousands of
//! events), not per event.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

/// Units of work (events, ops, lines) a loop handles between two polls: a few hundred
/// microseconds of work at most.
pub const EVERY: u64 = 4096;

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Ask every long run in this process to stop at its next check.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Forget an earlier request (a front end calls it before it starts a run).
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}

/// Whether a stop was asked for since the last [`clear`].
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// `Err(Interrupted)` once a stop was asked for.
#[inline]
pub fn check() -> Result<(), Interrupted> {
    if requested() {
        Err(Interrupted)
    } else {
        Ok(())
    }
}

/// A run stopped because a stop was asked for ([`request`]). Each subsystem's error enum has an
/// `Interrupted` variant converted from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted;

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_seen_until_cleared() {
        clear();
        assert_eq!(check(), Ok(()));
        request();
        assert!(requested());
        assert_eq!(check(), Err(Interrupted));
        assert_eq!(Interrupted.to_string(), "interrupted");
        clear();
        assert_eq!(check(), Ok(()));
    }
}
