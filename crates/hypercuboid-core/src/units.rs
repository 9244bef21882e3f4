//! Simulated time and the parsing of quantities with units.
//!
//! All simulated time is an integer number of **picoseconds** ([`Time`]). Integer time makes
//! every closed-form cost exactly comparable with the simulator (no floating-point drift) and
//! still spans 213 days at 64 bits. Per-byte rates (β, γ, G) are kept as `f64` picoseconds per
//! byte and a message's cost is rounded to the nearest picosecond once, see [`per_byte`].

use std::fmt;

/// Simulated time or duration in picoseconds.
pub type Time = u64;

/// Picoseconds per nanosecond.
pub const PS_PER_NS: u64 = 1_000;

/// `ns` nanoseconds as [`Time`].
pub const fn ns(ns: u64) -> Time {
    ns * PS_PER_NS
}

/// `us` microseconds as [`Time`].
pub const fn us(us: u64) -> Time {
    us * 1_000_000
}

/// A [`Time`] as (fractional) nanoseconds, for reporting.
pub fn to_ns(t: Time) -> f64 {
    t as f64 / PS_PER_NS as f64
}

/// The cost of `bytes` bytes at `ps_per_byte` picoseconds per byte, rounded to the nearest
/// picosecond. Zero bytes cost zero.
pub fn per_byte(bytes: u64, ps_per_byte: f64) -> Time {
    if bytes == 0 || ps_per_byte == 0.0 {
        return 0;
    }
    (bytes as f64 * ps_per_byte).round() as Time
}

/// Why a quantity with a unit could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    /// The text that was given.
    pub text: String,
    /// What was wrong with it.
    pub reason: String,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid time '{}': {}", self.text, self.reason)
    }
}

impl std::error::Error for UnitError {}

const TIME_UNITS: &[(&str, f64)] = &[
    ("ps", 1.0),
    ("ns", 1e3),
    ("us", 1e6),
    ("µs", 1e6),
    ("ms", 1e9),
    ("s", 1e12),
];

/// Parses a non-negative duration such as `500ns`, `1.5us`, `2ms`, `0` or `3000` (a bare number
/// is nanoseconds) into picoseconds as `f64`, so that sub-picosecond per-byte rates survive.
///
/// Accepted units: `ps`, `ns`, `us` (or `µs`), `ms`, `s`.
pub fn parse_time_f64(text: &str) -> Result<f64, UnitError> {
    let err = |reason: &str| UnitError {
        text: text.to_string(),
        reason: reason.to_string(),
    };
    let t = text.trim();
    if t.is_empty() {
        return Err(err(
            "empty; expected a number with an optional unit (ps, ns, us, ms, s)",
        ));
    }
    let split = t
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')
        })
        .unwrap_or(t.len());
    // "1e3ns" is fine, but a trailing 'e' belongs to no unit we know; let the number parser judge.
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let scale = if unit.is_empty() {
        1e3
    } else {
        match TIME_UNITS.iter().find(|(u, _)| *u == unit) {
            Some((_, s)) => *s,
            None => {
                return Err(err(&format!(
                "unknown unit '{unit}'; accepted units are ps, ns, us, ms, s (a bare number is ns)"
            )))
            }
        }
    };
    let value: f64 = num
        .parse()
        .map_err(|_| err("not a number; expected e.g. 500ns, 1.5us or 3000"))?;
    if !value.is_finite() {
        return Err(err("not a finite number"));
    }
    if value < 0.0 {
        return Err(err("negative; times must be >= 0"));
    }
    Ok(value * scale)
}

/// Parses a non-negative duration (see [`parse_time_f64`]) into whole picoseconds. A value with a
/// fraction of a picosecond is refused rather than silently rounded.
pub fn parse_time(text: &str) -> Result<Time, UnitError> {
    let ps = parse_time_f64(text)?;
    if ps > u64::MAX as f64 / 2.0 {
        return Err(UnitError {
            text: text.to_string(),
            reason: "too large".to_string(),
        });
    }
    let rounded = ps.round();
    if (ps - rounded).abs() > 1e-6 * ps.max(1.0) {
        return Err(UnitError {
            text: text.to_string(),
            reason: "finer than one picosecond, the simulator's resolution".to_string(),
        });
    }
    Ok(rounded as Time)
}

/// Formats a time for people: `1.5 us`, `640 ns`, `12.000 ms`.
pub fn format_time(t: Time) -> String {
    let ns = to_ns(t);
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3} us", ns / 1e3)
    } else if t % PS_PER_NS == 0 {
        format!("{ns:.0} ns")
    } else {
        format!("{ns:.3} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_time("500ns").unwrap(), 500_000);
        assert_eq!(parse_time("1.5us").unwrap(), 1_500_000);
        assert_eq!(parse_time("1.5µs").unwrap(), 1_500_000);
        assert_eq!(parse_time("3000").unwrap(), 3_000_000);
        assert_eq!(parse_time("0").unwrap(), 0);
        assert_eq!(parse_time("2ms").unwrap(), 2_000_000_000);
        assert_eq!(parse_time("1s").unwrap(), 1_000_000_000_000);
        assert_eq!(parse_time("0.4ns").unwrap(), 400);
        assert_eq!(parse_time_f64("0.0004ns").unwrap(), 0.4);
    }

    #[test]
    fn rejects_bad_times() {
        let e = parse_time("-1ns").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid time '-1ns': negative; times must be >= 0"
        );
        let e = parse_time("5 parsecs").unwrap_err();
        assert!(e.reason.starts_with("unknown unit 'parsecs'"), "{e}");
        assert!(parse_time("abc").is_err());
        assert!(parse_time("").is_err());
        assert!(parse_time("0.0001ns")
            .unwrap_err()
            .reason
            .contains("picosecond"));
    }

    #[test]
    fn per_byte_rounds_once() {
        assert_eq!(per_byte(8, 400.0), 3200);
        assert_eq!(per_byte(0, 400.0), 0);
        assert_eq!(per_byte(3, 0.5), 2);
    }

    #[test]
    fn formats() {
        assert_eq!(format_time(640_000), "640 ns");
        assert_eq!(format_time(1_500_000), "1.500 us");
    }
}
