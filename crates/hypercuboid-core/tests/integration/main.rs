//! Every integration test of the core in one binary: one link instead of one per file, and the
//! harness spreads the slow files' tests over all cores at once (docs/performance.md, "CI
//! time"). Run one file's tests with its module as filter, e.g.
//! `cargo test -p hypercuboid-core --test integration lbm::`.

mod common;

mod allreduce_generators;
mod allreduce_rm;
mod allreduce_rm_verified;
mod allreduce_verified;
mod alltoall_phases;
mod alltoall_scheduled;
mod alltoall_verified;
mod goal_export;
mod goal_import;
mod goal_text;
mod lbm;
mod network_cdg;
mod network_engine;
mod network_ethernet;
mod network_partition;
mod network_stepping;
mod network_traffic;
mod peer_rules;
mod repeated_shapes;
mod sim_engine;
mod sim_loggops;
mod sim_loggops_order;
mod sim_model_spec;
mod sim_network;
mod sim_postal;
mod sim_scale;
mod spec_tables;
mod topology_bisection;
mod topology_errors;
mod topology_export;
mod topology_families;
mod topology_galois;
mod topology_seed;
mod topology_tree;
mod tuning;
mod verify_allreduce;
mod verify_scale;
