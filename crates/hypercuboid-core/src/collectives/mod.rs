//! Collective generators: per-rank communication schedules of collective algorithms.
//!
//! [`registry`] holds one entry per algorithm (names, parameters, parse, build, closed-form
//! cost, guarantees); each collective is a directory with one file per algorithm:
//! [`allreduce`], [`alltoall`], [`halo`]. [`library`] says which of them Open MPI and MPICH
//! would run.
pub mod allreduce;
pub mod alltoall;
pub mod halo;
pub mod library;
pub mod registry;
