//! Bindings of hypercuboid_core::units: the one grammar of times, sizes and bandwidths, for
//! every Python verb and option that reads one. Convert, call, convert.

use hypercuboid_core::units;
use pyo3::prelude::*;

use crate::errors::{Class, PyResultExt};
use crate::guard::call;

/// A duration (`500ns`, `1.5us`, `2ms`; a bare number is ns) in whole picoseconds.
#[pyfunction]
fn parse_time(text: &str) -> PyResult<u64> {
    call(Class::Unit, "parse_time", || units::parse_time(text).py())
}

/// A duration or a time per byte (`0.4ns`, `1.5ps`) in picoseconds, fractions kept.
#[pyfunction]
fn parse_time_f64(text: &str) -> PyResult<f64> {
    call(Class::Unit, "parse_time_f64", || {
        units::parse_time_f64(text).py()
    })
}

/// A size in bytes (`256`, `7.5KB`, `1M`, `1MiB`; binary multiples, a bare number is bytes).
#[pyfunction]
fn parse_size(text: &str) -> PyResult<u64> {
    call(Class::Unit, "parse_size", || units::parse_size(text).py())
}

/// A bandwidth in Gb/s (`100Gbps`, `12.5GB/s`; decimal multiples, a bare number is Gb/s).
#[pyfunction]
fn parse_bandwidth(text: &str) -> PyResult<f64> {
    call(Class::Unit, "parse_bandwidth", || {
        units::parse_bandwidth(text).py()
    })
}

/// Whole picoseconds in the largest unit that holds them exactly (`20us`, `1500ns`, `400ps`),
/// as specs and defaults are written.
#[pyfunction]
fn format_time_exact(ps: u64) -> String {
    units::format_time_exact(ps)
}

/// A byte count in the largest binary unit that holds it exactly (`100KiB`, `256B`).
#[pyfunction]
fn format_size(bytes: u64) -> String {
    units::format_size(bytes)
}

/// Adds this module's functions to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [],
        [
            parse_time,
            parse_time_f64,
            parse_size,
            parse_bandwidth,
            format_size,
            format_time_exact
        ]
    );
    Ok(())
}
