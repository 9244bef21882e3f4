//! The native runner's C sources (`native/` in the repository), embedded so that every consumer
//! builds the same code. They are defined beside the C export that inlines them
//! ([`crate::schedule::export_c::sources`]) and re-exported here for the binding and the C API.

pub use crate::schedule::export_c::sources::{sources, RUNNER_C, RUNNER_H};
