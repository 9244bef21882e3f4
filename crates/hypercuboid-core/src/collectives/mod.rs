//! Collective generators: per-rank communication schedules of collective algorithms.
pub mod allreduce;
