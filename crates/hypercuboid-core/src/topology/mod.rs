//! Topologies: generators, analysis and exports.
