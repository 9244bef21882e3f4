//! Memory refused before it is allocated.
//!
//! A generator, reader, simulation or verification estimates the memory a request needs from its
//! parameters and calls [`check`] before it allocates. The request is refused with a
//! [`TooLarge`] error, which names the estimate, the memory available and the way out, when the
//! estimate exceeds the limit: the one a front end set ([`set_memory_limit`], the CLI's
//! `--memory-limit`) or else the memory the machine has available now (`MemAvailable` of
//! `/proc/meminfo`; no limit where that cannot be read).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes a schedule holds per rank whatever its programs (where its ops start, its shape,
/// where its peers start): what a generator or reader checks before it allocates its ranks.
pub const SCHEDULE_BYTES_PER_RANK: u64 = 16;
/// Bytes a schedule holds per op of a program of its own (the op, its dependency and its
/// dependent, its peer).
pub const SCHEDULE_BYTES_PER_OP: u64 = 56;

/// The most threads a run may be given: a thread count above it is a mistake (each thread
/// has its stack and its share of the work), refused with a clear error.
pub const MAX_THREADS: usize = 1024;

/// `u64::MAX`: no limit was set; the machine's available memory applies.
static LIMIT: AtomicU64 = AtomicU64::new(u64::MAX);

/// Set the limit that [`check`] applies (bytes), or `None` to apply the machine's available
/// memory again.
pub fn set_memory_limit(limit: Option<u64>) {
    LIMIT.store(limit.unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// The limit set by [`set_memory_limit`], if any.
pub fn memory_limit() -> Option<u64> {
    match LIMIT.load(Ordering::Relaxed) {
        u64::MAX => None,
        n => Some(n),
    }
}

/// The memory this machine has available now (bytes), from `/proc/meminfo`.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The most a text input file (a topology description, a mapping file) may hold: 256 MiB.
pub const MAX_TEXT_FILE: u64 = 256 << 20;

/// The text of the file at `path`, refused past [`MAX_TEXT_FILE`] bytes without reading
/// further (`/dev/zero`, a pipe that never ends) and when it is not UTF-8.
pub fn read_text(path: &str) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_TEXT_FILE + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_TEXT_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "more than {} (a text file of this kind is smaller)",
                format_bytes(MAX_TEXT_FILE)
            ),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// Where the limit came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSource {
    /// Set by the user ([`set_memory_limit`], `--memory-limit`).
    User,
    /// The machine's available memory.
    Available,
}

/// A request whose estimated memory exceeds the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    /// What was asked for (`recursive_doubling on 4294967294 ranks`).
    pub what: String,
    /// The estimate, bytes.
    pub estimate: u64,
    /// The limit, bytes.
    pub limit: u64,
    /// Where the limit came from.
    pub source: LimitSource,
    /// What the user can do instead (`use fewer ranks`).
    pub way_out: String,
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = match self.source {
            LimitSource::User => format!("the memory limit of {}", format_bytes(self.limit)),
            LimitSource::Available => {
                format!(
                    "the {} this machine has available",
                    format_bytes(self.limit)
                )
            }
        };
        write!(
            f,
            "{} needs about {} of memory, more than {limit}: {} (or raise the limit with --memory-limit)",
            self.what,
            format_bytes(self.estimate),
            self.way_out
        )
    }
}

impl std::error::Error for TooLarge {}

/// `1.5 GB`, `512 MB`, `3 kB`, `17 B` (decimal units, three significant digits).
pub fn format_bytes(n: u64) -> String {
    const UNITS: [(&str, f64); 4] = [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)];
    for (unit, scale) in UNITS {
        let x = n as f64 / scale;
        if x >= 1.0 {
            return format!("{} {unit}", three_digits(x));
        }
    }
    format!("{n} B")
}

fn three_digits(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// Refuse `what` if its `estimate` (bytes) exceeds the limit ([`memory_limit`], else the
/// machine's available memory). `way_out` says what the user can do instead.
pub fn check(what: impl FnOnce() -> String, estimate: u64, way_out: &str) -> Result<(), TooLarge> {
    let (limit, source) = match memory_limit() {
        Some(l) => (l, LimitSource::User),
        None => match available_memory() {
            Some(a) => (a, LimitSource::Available),
            None => return Ok(()),
        },
    };
    if estimate <= limit {
        return Ok(());
    }
    Err(TooLarge {
        what: what(),
        estimate,
        limit,
        source,
        way_out: way_out.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_file_is_read_whole_and_an_endless_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("hc-read-text-{}", std::process::id()));
        std::fs::write(&dir, "a b\n").unwrap();
        assert_eq!(read_text(dir.to_str().unwrap()).unwrap(), "a b\n");
        std::fs::write(&dir, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_text(dir.to_str().unwrap()).unwrap_err().to_string(),
            "not UTF-8 text"
        );
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(
            read_text("/dev/zero").unwrap_err().to_string(),
            "more than 268 MB (a text file of this kind is smaller)"
        );
    }

    #[test]
    fn meminfo_gives_available_bytes() {
        let text = "MemTotal:       24576000 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(parse_meminfo(text), Some(20_000_000 * 1024));
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn bytes_read_as_a_person_would() {
        assert_eq!(format_bytes(17), "17 B");
        assert_eq!(format_bytes(3_000), "3.00 kB");
        assert_eq!(format_bytes(512_000_000), "512 MB");
        assert_eq!(format_bytes(34_359_738_368), "34.4 GB");
    }

    #[test]
    fn a_user_limit_refuses_with_estimate_limit_and_way_out() {
        set_memory_limit(Some(1_000_000));
        let e = check(|| "ring on 8 ranks".into(), 2_000_000, "use fewer ranks").unwrap_err();
        assert_eq!(
            e.to_string(),
            "ring on 8 ranks needs about 2.00 MB of memory, more than the memory limit of \
             1.00 MB: use fewer ranks (or raise the limit with --memory-limit)"
        );
        assert_eq!(check(|| unreachable!(), 1_000_000, ""), Ok(()));
        set_memory_limit(None);
        assert_eq!(memory_limit(), None);
    }
}
