//! Alltoall: contention-free phases of all-to-all personalized communication ([`phases`]).
pub mod phases;
