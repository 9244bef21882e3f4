//! hypercuboid-core: design, verify and simulate the communication of HPC programs.
//!
//! One intermediate representation, the [`schedule::Schedule`] (a program of ops per rank), is
//! produced by generators ([`collectives`]) or read from GOAL text ([`schedule::goal`]), checked
//! by the verifier ([`schedule::verify`]), and run on a cost model ([`model`]) by the
//! discrete-event engine ([`sim`]). Topologies ([`topology`]) model the machine and the network
//! simulator ([`network`]) runs traffic on them.
//!
//! This crate has no Python dependency; `hypercuboid-py` wraps it as `hypercuboid._core`.

pub mod arith;
mod barrier;
pub mod cancel;
pub mod collectives;
mod hint;
pub mod lattice;
pub mod lbm;
pub mod model;
pub mod native;
pub mod network;
pub mod resources;
pub mod schedule;
pub mod sim;
pub mod spec;
pub mod topology;
pub mod units;
