//! The verifier: matching, deadlock, buffer hazards and the data semantics of a schedule.
