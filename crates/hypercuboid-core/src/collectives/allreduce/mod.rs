//! Allreduce algorithms.
