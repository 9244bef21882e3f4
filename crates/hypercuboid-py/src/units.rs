//! Bindings of hypercuboid_core::units: the one grammar of times, sizes and bandwidths, for
//! every Python verb and option that reads one. Convert, call, convert.

use hypercuboid_core::units;
use pyo3::prelude::*;

use crate::errors::{Class, PyResultExt};
use crate::guard::call;

/// A `#[pyfunction]` `NAME(text) -> T` that calls the core's `units::NAME`, its error a
/// `UnitError`.
macro_rules! parser {
    ($(#[$doc:meta])* $name:ident -> $t:ty) => {
        $(#[$doc])*
        #[pyfunction]
        fn $name(text: &str) -> PyResult<$t> {
            call(Class::Unit, stringify!($name), || units::$name(text).py())
        }
    };
}

parser!(
    /// A duration (`500ns`, `1.5us`, `2ms`; a bare number is ns) in whole picoseconds.
    parse_time -> u64
);
parser!(
    /// A duration or a time per byte (`0.4ns`, `1.5ps`) in picoseconds, fractions kept.
    parse_time_f64 -> f64
);
parser!(
    /// A size in bytes (`256`, `7.5KB`, `1M`, `1MiB`; binary multiples, a bare number is bytes).
    parse_size -> u64
);
parser!(
    /// A bandwidth in Gb/s (`100Gbps`, `12.5GB/s`; decimal multiples, a bare number is Gb/s).
    parse_bandwidth -> f64
);

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
