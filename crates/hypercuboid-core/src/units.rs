//! Simulated time and the one grammar of quantities with units: times, sizes, bandwidths.
//!
//! | quantity | accepted | a bare number is |
//! |---|---|---|
//! | time ([`parse_time`]) | `500ps`, `1.5ns`, `2us` (or `µs`), `3ms`, `1s` | nanoseconds |
//! | size ([`parse_size`]) | `256`, `256B`, `7.5KB`, `1K`, `1MiB`, `2GB`, `1T` | bytes |
//! | bandwidth ([`parse_bandwidth`]) | `100Gbps`, `100Gb/s`, `400Mbps`, `12.5GB/s`, `1Tbps` | Gb/s |
//!
//! Sizes are binary: `K`, `KB` and `KiB` are all 1024 bytes (the seed's buffer of 100 KB holds
//! 400 packets of 256 B; OSU's and MPI's message sizes are powers of two). Bandwidths are
//! decimal, as networks quote them: `1Gbps` is 10^9 bits per second, `1GB/s` 8·10^9. Units
//! match without regard to case except `b` (bits) against `B` (bytes) in a bandwidth, and blanks
//! between the number and the unit are ignored. Negative and non-finite values are refused;
//! a size must be a whole number of bytes.
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
/// picosecond. Zero bytes cost zero. (A hot path that applies one rate to many sizes keeps it
/// as a [`ByteRate`], which tests once whether the rate is whole.)
pub fn per_byte(bytes: u64, ps_per_byte: f64) -> Time {
    ByteRate::new(ps_per_byte).of(bytes)
}

/// A per-byte rate, with the test of whether it is a whole number of picoseconds made once,
/// when the rate is prepared, rather than at every size it is applied to (a simulator applies
/// the per-byte overhead and gap several times per message). [`ByteRate::of`] is
/// [`per_byte`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ByteRate {
    /// The rate when it is a whole number of picoseconds below 2^31 (zero included), else
    /// `u64::MAX`.
    whole: u64,
    ps_per_byte: f64,
}

impl ByteRate {
    pub fn new(ps_per_byte: f64) -> ByteRate {
        let w = ps_per_byte as i64;
        let whole = if (0..1 << 31).contains(&w) && w as f64 == ps_per_byte {
            w as u64
        } else {
            u64::MAX
        };
        ByteRate { whole, ps_per_byte }
    }

    /// The cost of `bytes` bytes at this rate, rounded to the nearest picosecond.
    #[inline(always)]
    pub fn of(self, bytes: u64) -> Time {
        if bytes < 1 << 22 && self.whole != u64::MAX {
            // A whole rate below 2^31 ps a byte and fewer than 2^22 bytes: the product is
            // below 2^53, so the floating-point product is exact and equals the integer one.
            bytes * self.whole
        } else {
            rounded_product(bytes, self.ps_per_byte)
        }
    }
}

/// `bytes · ps_per_byte` rounded to the nearest picosecond (saturating; a negative or NaN
/// product is 0).
fn rounded_product(bytes: u64, ps_per_byte: f64) -> Time {
    if bytes == 0 || ps_per_byte == 0.0 {
        return 0;
    }
    let t = bytes as f64 * ps_per_byte;
    // A whole number of picoseconds (integral rates) is its own rounding: skip the libm call
    // (a simulator's hot path computes this per message).
    if t < TIME_EXACT && (t as Time) as f64 == t {
        return t as Time;
    }
    t.round() as Time
}

/// Below 2^53 every whole number of picoseconds is exact in an `f64`.
const TIME_EXACT: f64 = (1u64 << 53) as f64;

/// Why a quantity with a unit could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    /// The quantity: `time`, `size` or `bandwidth`.
    pub what: &'static str,
    /// The text that was given.
    pub text: String,
    /// What was wrong with it.
    pub reason: String,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {} '{}': {}", self.what, self.text, self.reason)
    }
}

/// Splits `text` into a non-negative finite number and its unit, reads the unit (trimmed) with
/// `unit` (whose error is the reason) before the number, or says why not. `units` names the
/// accepted units and `bound` the accepted range (`>= 0`, `> 0`) for the error.
fn number_and_unit<S>(
    what: &'static str,
    text: &str,
    units: &str,
    bound: &str,
    example: &str,
    unit: impl FnOnce(&str) -> Result<S, String>,
) -> Result<(f64, S), UnitError> {
    let err = |reason: String| UnitError {
        what,
        text: text.to_string(),
        reason,
    };
    let t = text.trim();
    if t.is_empty() {
        return Err(err(format!(
            "empty; expected a number with an optional unit ({units})"
        )));
    }
    // The number: digits, sign, point and an exponent ('1e3ns'); the unit is the rest. An 'e'
    // or 'E' belongs to the number only when a digit or sign follows it ('1e3', not '1EB').
    let b = t.as_bytes();
    let mut split = 0;
    while split < b.len() {
        let c = b[split];
        let exp = (c == b'e' || c == b'E')
            && b.get(split + 1)
                .is_some_and(|d| d.is_ascii_digit() || *d == b'-' || *d == b'+');
        if c.is_ascii_digit() || c == b'.' || c == b'-' || c == b'+' || exp {
            split += if exp { 2 } else { 1 };
        } else {
            break;
        }
    }
    let (num, u) = t.split_at(split);
    let scale = unit(u.trim()).map_err(err)?;
    let value: f64 = num
        .parse()
        .map_err(|_| err(format!("not a number; expected e.g. {example}")))?;
    if !value.is_finite() {
        return Err(err("not a finite number".into()));
    }
    if value < 0.0 {
        return Err(err(format!("negative; {what}s must be {bound}")));
    }
    Ok((value, scale))
}

/// The binary multiples by their letter, each also spelt with `B` or `iB` after it (`K`, `KB`,
/// `KiB`): a size's scale is 2 to the power of its shift.
const SIZE_PREFIXES: &[(&str, u32)] = &[("k", 10), ("m", 20), ("g", 30), ("t", 40)];

/// The bytes of a lower-case size unit (`b`, `k`, `kb`, `kib`, ... `tib`), if it is one.
fn size_scale(unit: &str) -> Option<u64> {
    if unit == "b" {
        return Some(1);
    }
    let prefix = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(unit);
    SIZE_PREFIXES
        .iter()
        .find(|(p, _)| *p == prefix)
        .map(|(_, shift)| 1 << shift)
}

/// Parses a size in bytes: `256`, `256B`, `7.5KB`, `1K`, `1MiB`, `4M`, `2GB`, `1T` (binary
/// multiples: K = KB = KiB = 1024 B; a bare number is bytes). The result must be a whole
/// number of bytes that fits in 64 bits.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    const UNITS: &str = "B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB";
    let (value, scale) =
        number_and_unit("size", text, UNITS, ">= 0", "256, 7.5KB or 1MiB", |unit| {
            if unit.is_empty() {
                return Ok(1);
            }
            let u = unit.to_ascii_lowercase();
            size_scale(&u).ok_or_else(|| {
                format!(
                    "unknown unit '{unit}'; accepted units are {UNITS} (binary: 1 KB = 1024 B; \
                     a bare number is bytes)"
                )
            })
        })?;
    let err = |reason: String| UnitError {
        what: "size",
        text: text.to_string(),
        reason,
    };
    // Whole numbers are read exactly (an f64 holds integers exactly only up to 2^53).
    let digits = text.trim().trim_end_matches(|c: char| !c.is_ascii_digit());
    if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
        if let Ok(n) = digits.parse::<u64>() {
            return n
                .checked_mul(scale)
                .ok_or_else(|| err("too large: above 2^64 - 1 bytes".into()));
        }
    }
    let bytes = value * scale as f64;
    if bytes >= 18_446_744_073_709_551_616.0 {
        return Err(err("too large: above 2^64 - 1 bytes".into()));
    }
    if bytes.fract() != 0.0 {
        return Err(err("not a whole number of bytes".into()));
    }
    Ok(bytes as u64)
}

/// Formats a byte count with the largest binary unit that represents it exactly (`100KiB`,
/// `1MiB`, `256B`), which [`parse_size`] reads back to the same number.
pub fn format_size(bytes: u64) -> String {
    for (unit, scale) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{unit}", bytes / scale);
        }
    }
    format!("{bytes}B")
}

/// Parses a bandwidth into Gb/s: `100Gbps`, `100Gb/s`, `400Mbps`, `1Tbps`, `12.5GB/s` (bytes:
/// × 8), a bare number is Gb/s. Decimal multiples (1 Gb/s = 10^9 bit/s). Must be > 0.
pub fn parse_bandwidth(text: &str) -> Result<f64, UnitError> {
    const UNITS: &str = "bps, Kbps, Mbps, Gbps, Tbps, Gb/s, B/s, KB/s, MB/s, GB/s, TB/s";
    let (value, scale) = number_and_unit(
        "bandwidth",
        text,
        UNITS,
        "> 0",
        "100Gbps or 12.5GB/s",
        |unit| {
            if unit.is_empty() {
                return Ok(1.0);
            }
            // Prefix (case-insensitive), then 'bps' / 'b/s' (bits) or 'Bps' / 'B/s' (bytes).
            let (prefix, rest) = match unit.chars().next() {
                Some(c) if "kKmMgGtT".contains(c) => (c.to_ascii_lowercase(), &unit[1..]),
                _ => (' ', unit),
            };
            let scale = match prefix {
                ' ' => 1e-9,
                'k' => 1e-6,
                'm' => 1e-3,
                'g' => 1.0,
                _ => 1e3,
            };
            match rest {
                "bps" | "b/s" | "bit/s" => Ok(scale),
                "Bps" | "B/s" => Ok(scale * 8.0),
                _ => Err(format!(
                    "unknown unit '{unit}'; accepted units are {UNITS} (decimal: 1 Gbps = 10^9 \
                 bit/s; a bare number is Gb/s)"
                )),
            }
        },
    )?;
    let err = |reason: String| UnitError {
        what: "bandwidth",
        text: text.to_string(),
        reason,
    };
    let gbps = value * scale;
    if gbps <= 0.0 || !gbps.is_finite() {
        return Err(err("a bandwidth must be > 0".into()));
    }
    Ok(gbps)
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
    const UNITS: &str = "ps, ns, us, ms, s";
    let (value, scale) =
        number_and_unit(
            "time",
            text,
            UNITS,
            ">= 0",
            "500ns, 1.5us or 3000",
            |unit| {
                if unit.is_empty() {
                    return Ok(1e3);
                }
                TIME_UNITS
            .iter()
            .find(|(u, _)| u.eq_ignore_ascii_case(unit))
            .map(|(_, s)| *s)
            .ok_or_else(|| {
                format!("unknown unit '{unit}'; accepted units are {UNITS} (a bare number is ns)")
            })
            },
        )?;
    Ok(value * scale)
}

/// Parses a non-negative duration (see [`parse_time_f64`]) into whole picoseconds. A value with a
/// fraction of a picosecond is refused rather than silently rounded.
pub fn parse_time(text: &str) -> Result<Time, UnitError> {
    let ps = parse_time_f64(text)?;
    if ps > u64::MAX as f64 / 2.0 {
        return Err(UnitError {
            what: "time",
            text: text.to_string(),
            reason: "too large".to_string(),
        });
    }
    let rounded = ps.round();
    if (ps - rounded).abs() > 1e-6 * ps.max(1.0) {
        return Err(UnitError {
            what: "time",
            text: text.to_string(),
            reason: "finer than one picosecond, the simulator's resolution".to_string(),
        });
    }
    Ok(rounded as Time)
}

/// Formats whole picoseconds with the largest unit that represents them exactly (`1us`,
/// `1500ns`, `400ps`, `0`), which [`parse_time`] reads back to the same number: the form specs
/// and defaults are written in.
pub fn format_time_exact(t: Time) -> String {
    if t == 0 {
        return "0".into();
    }
    for (unit, scale) in [
        ("s", 1_000_000_000_000u64),
        ("ms", 1_000_000_000),
        ("us", 1_000_000),
        ("ns", 1_000),
    ] {
        if t.is_multiple_of(scale) {
            return format!("{}{unit}", t / scale);
        }
    }
    format!("{t}ps")
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
    } else if t.is_multiple_of(PS_PER_NS) {
        format!("{ns:.0} ns")
    } else {
        format!("{ns:.3} ns")
    }
}

/// Characters of a value an error message quotes before it cuts it short ([`bounded`]).
pub const QUOTED_CHARS: usize = 60;

/// `text` as an error message quotes it: whole when it has at most [`QUOTED_CHARS`]
/// characters, else its first [`QUOTED_CHARS`] then `... (N bytes)`, so that a megabyte of
/// digits or a 200 KB name makes a one-line error.
pub fn bounded(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(QUOTED_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => {
            std::borrow::Cow::Owned(format!("{}... ({} bytes)", &text[..cut], text.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        for (text, ps) in [
            ("500ns", 500_000),
            ("1.5us", 1_500_000),
            ("1.5µs", 1_500_000),
            ("3000", 3_000_000),
            ("0", 0),
            ("2ms", 2_000_000_000),
            ("1s", 1_000_000_000_000),
            ("0.4ns", 400),
        ] {
            assert_eq!(parse_time(text).unwrap(), ps, "{text}");
        }
        assert_eq!(parse_time_f64("0.0004ns").unwrap(), 0.4);
    }

    #[test]
    fn rejects_bad_times() {
        let e = parse_time("-1ns").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid time '-1ns': negative; times must be >= 0"
        );
        assert_eq!(
            parse_time("5 parsecs").unwrap_err().to_string(),
            "invalid time '5 parsecs': unknown unit 'parsecs'; accepted units are ps, ns, us, \
             ms, s (a bare number is ns)"
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
    fn size_units_are_b_and_each_multiple_bare_with_b_or_ib() {
        let mut accepted = vec![("b".to_string(), 1u64)];
        for (letter, shift) in [("k", 10), ("m", 20), ("g", 30), ("t", 40)] {
            for suffix in ["", "b", "ib"] {
                accepted.push((format!("{letter}{suffix}"), 1 << shift));
            }
        }
        assert_eq!(accepted.len(), 13);
        for (unit, bytes) in &accepted {
            assert_eq!(size_scale(unit), Some(*bytes), "{unit}");
        }
        for unit in ["", "ib", "bb", "kbb", "kibb", "p", "pb", "kk", "bk", "iib"] {
            assert_eq!(size_scale(unit), None, "{unit}");
        }
    }

    #[test]
    fn parses_sizes() {
        for (text, bytes) in [
            ("256", 256),
            ("256B", 256),
            ("100KB", 102_400),
            ("7.5KB", 7_680),
            ("7.5 kib", 7_680),
            ("1M", 1 << 20),
            ("1MiB", 1 << 20),
            ("2GB", 2 << 30),
            ("1T", 1 << 40),
            ("1e3", 1000),
            ("0", 0),
        ] {
            assert_eq!(parse_size(text).unwrap(), bytes, "{text}");
        }
        for (text, message) in [
            ("1.5B", "not a whole number of bytes"),
            (
                "3 parsecs",
                "unknown unit 'parsecs'; accepted units are B, K/KB/KiB, M/MB/MiB, G/GB/GiB, \
                 T/TB/TiB (binary: 1 KB = 1024 B; a bare number is bytes)",
            ),
            ("-1K", "negative; sizes must be >= 0"),
            ("16777216T", "too large: above 2^64 - 1 bytes"),
        ] {
            let e = parse_size(text).unwrap_err();
            assert_eq!(e.to_string(), format!("invalid size '{text}': {message}"));
        }
        assert!(parse_size("").is_err());
        assert!(parse_size("K").is_err());
        for b in [
            0,
            1,
            256,
            1000,
            1024,
            102_400,
            7_680,
            1 << 20,
            3 << 30,
            1 << 40,
            u64::MAX,
        ] {
            assert_eq!(
                parse_size(&format_size(b)).unwrap(),
                b,
                "{}",
                format_size(b)
            );
        }
        assert_eq!(format_size(102_400), "100KiB");
        assert_eq!(format_size(1000), "1000B");
    }

    #[test]
    fn parses_bandwidths() {
        for (text, gbps) in [
            ("100", 100.0),
            ("100Gbps", 100.0),
            ("100 Gb/s", 100.0),
            ("400Mbps", 0.4),
            ("1Tbps", 1000.0),
            ("12.5GB/s", 100.0),
            ("25GBps", 200.0),
            ("1e9bps", 1.0),
        ] {
            assert_eq!(parse_bandwidth(text).unwrap(), gbps, "{text}");
        }
        for (text, message) in [
            ("0", "a bandwidth must be > 0"),
            ("-5", "negative; bandwidths must be > 0"),
        ] {
            let e = parse_bandwidth(text).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("invalid bandwidth '{text}': {message}")
            );
        }
        assert!(parse_bandwidth("100Gbit")
            .unwrap_err()
            .reason
            .starts_with("unknown unit 'Gbit'"));
    }

    #[test]
    fn per_byte_rounds_once() {
        assert_eq!(per_byte(8, 400.0), 3200);
        assert_eq!(per_byte(0, 400.0), 0);
        assert_eq!(per_byte(3, 0.5), 2);
        // The whole-number shortcut gives what rounding the product gives, on both sides of
        // 2^53 and for fractional rates.
        for (bytes, rate) in [
            (7, 6000.0),
            (u64::MAX, 6000.0),
            ((1 << 53) + 1, 1.0),
            (1 << 52, 3.0),
            (12_345, 0.1),
            (5, 2.5),
            (1, -3.0),
            // zero and odd rates, zero bytes at a fractional rate
            (5, 0.0),
            (5, -0.0),
            (5, f64::NAN),
            (0, 0.5),
            // the integer product's bounds: both just inside, then each just outside
            ((1 << 22) - 1, ((1u64 << 31) - 1) as f64),
            (1 << 22, ((1u64 << 31) - 1) as f64),
            ((1 << 22) - 1, (1u64 << 31) as f64),
        ] {
            let expect = (bytes as f64 * rate).round() as Time;
            assert_eq!(per_byte(bytes, rate), expect, "{bytes} bytes at {rate}");
        }
        assert_eq!(per_byte(1 << 52, 3.0), 3 << 52);
    }

    #[test]
    fn a_prepared_rate_is_per_byte() {
        let rates = [
            0.0,
            -0.0,
            6000.0,
            0.5,
            2.5,
            -3.0,
            f64::NAN,
            ((1u64 << 31) - 1) as f64,
            (1u64 << 31) as f64,
            1e300,
        ];
        let sizes = [
            0,
            1,
            7,
            8,
            65_535,
            (1 << 22) - 1,
            1 << 22,
            1 << 52,
            u64::MAX,
        ];
        for rate in rates {
            for bytes in sizes {
                // The product rounded once, whichever path computes it.
                let expect = (bytes as f64 * rate).round() as Time;
                let r = ByteRate::new(rate);
                assert_eq!(r.of(bytes), expect, "{bytes} bytes at {rate}");
                assert_eq!(per_byte(bytes, rate), expect, "{bytes} bytes at {rate}");
            }
        }
        assert_eq!(ByteRate::new(6000.0).of(7), 42_000);
    }

    #[test]
    fn formats_exactly() {
        for (t, text) in [
            (0, "0"),
            (400, "400ps"),
            (1_500_000, "1500ns"),
            (20_000_000, "20us"),
        ] {
            assert_eq!(format_time_exact(t), text);
            assert_eq!(parse_time(text).unwrap(), t);
        }
        assert_eq!(format_time_exact(2_000_000_000_000), "2s");
    }

    #[test]
    fn formats() {
        assert_eq!(format_time(640_000), "640 ns");
        assert_eq!(format_time(1_500_000), "1.500 us");
    }

    #[test]
    fn bounded_quotes_a_prefix_of_a_long_value() {
        assert_eq!(super::bounded("ring"), "ring");
        let sixty = "9".repeat(60);
        assert_eq!(super::bounded(&sixty), sixty);
        let long = "9".repeat(1_000_000);
        assert_eq!(super::bounded(&long), format!("{sixty}... (1000000 bytes)"));
        // Cut at a character, not a byte.
        let wide = "é".repeat(61);
        assert_eq!(
            super::bounded(&wide),
            format!("{}... (122 bytes)", "é".repeat(60))
        );
    }
}
