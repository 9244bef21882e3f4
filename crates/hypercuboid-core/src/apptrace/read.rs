//! Reading the recorder's files ([`read_rank`]) and packed traces ([`read`], [`pack`]), with
//! bounded reads: every length is checked against what is left before it is used.

use super::{call_of, Call, Class, TraceError, NO_COMM};

/// Magic of a rank file.
pub const RANK_MAGIC: &[u8; 8] = b"HCTRACE\0";
/// Magic of a packed trace.
pub const PACK_MAGIC: &[u8; 8] = b"HCTPACK\0";
/// The rank files' format version the recorder writes: compact records (docs/trace.md).
pub const VERSION: u32 = 2;
/// The first version, with fixed records of [`RECORD_BYTES`]; still read.
pub const VERSION_FIXED: u32 = 1;
/// The packed trace's version.
pub const PACK_VERSION: u32 = 1;
/// Bytes of a version-1 record without its extra words.
pub const RECORD_BYTES: usize = 64;
/// Bytes of a version-2 rank file's header (a version-1 header has 24).
pub const HEADER_BYTES: usize = 32;
/// Longest library string accepted.
const MAX_LIBRARY: u32 = 1 << 16;
/// Most ranks a trace may have.
const MAX_RANKS: u32 = 1 << 24;

/// One recorded call (the fields of the format; docs/trace.md says what each means per call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// The call.
    pub call: &'static Call,
    /// Reduction operator code (0 none, 1 sum, ... 255 user-defined).
    pub op: u16,
    /// Communicator id (0 world, 1 self, then in creation order on this rank).
    pub comm: u32,
    /// When the call was entered, ns since `MPI_Init` returned.
    pub t0: u64,
    /// When it returned.
    pub t1: u64,
    /// Destination, source or root as a rank of the communicator, or a `PEER_*` value.
    pub peer: i32,
    /// Point-to-point: the tag; collectives: the datatype's size in bytes.
    pub tag: i32,
    /// The source the status gave, or `PEER_NONE`.
    pub src: i32,
    /// The tag the status gave, or -1.
    pub mtag: i32,
    /// Bytes sent (collectives: docs/trace.md).
    pub bytes: u64,
    /// Bytes received.
    pub rbytes: u64,
    /// Request id (non-blocking calls) or new communicator id (creations).
    pub req: u32,
    /// Where the record's extra words start in [`RankTrace::extra`].
    pub extra_at: u32,
    /// How many extra words it has.
    pub nextra: u32,
}

/// The records of one rank.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankTrace {
    /// The world rank.
    pub rank: u32,
    /// The world size this rank saw.
    pub nranks: u32,
    /// The MPI library's version string.
    pub library: String,
    /// The records in call order.
    pub records: Vec<Record>,
    /// Every record's extra words, one after the other.
    pub extra: Vec<u64>,
    /// `None` when the rank reached `MPI_Finalize`; else where it stops.
    pub stop: Option<String>,
}

impl RankTrace {
    /// The extra words of record `r`.
    pub fn extra_of(&self, r: &Record) -> &[u64] {
        &self.extra[r.extra_at as usize..(r.extra_at + r.nextra) as usize]
    }
}

/// A whole run: one [`RankTrace`] per world rank, in rank order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppTrace {
    /// The ranks.
    pub ranks: Vec<RankTrace>,
}

impl AppTrace {
    /// The world size.
    pub fn nranks(&self) -> u32 {
        self.ranks.len() as u32
    }

    /// The MPI library the run used (rank 0's string).
    pub fn library(&self) -> &str {
        self.ranks.first().map_or("", |r| r.library.as_str())
    }

    /// Whether every rank reached `MPI_Finalize`.
    pub fn complete(&self) -> bool {
        self.ranks.iter().all(|r| r.stop.is_none())
    }

    /// Records of every rank.
    pub fn total_records(&self) -> u64 {
        self.ranks.iter().map(|r| r.records.len() as u64).sum()
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

fn file_err(what: String) -> TraceError {
    TraceError::File { what }
}

/// Reads one rank's file (`name` names it in errors). A file cut inside a record keeps the
/// records before it and says where it stops ([`RankTrace::stop`]); a damaged header, an
/// unknown call code, a time that runs backwards or an extra-word count that a record cannot
/// have is an error naming the rank, the record and the call.
pub fn read_rank(bytes: &[u8], name: &str) -> Result<RankTrace, TraceError> {
    if bytes.len() < 24 || &bytes[..8] != RANK_MAGIC {
        return Err(file_err(format!(
            "{name}: not a rank file of libhc_trace.so (it starts with HCTRACE and a 24-byte \
             header; this has {} bytes{})",
            bytes.len(),
            if bytes.len() >= 8 {
                " and another start"
            } else {
                ""
            }
        )));
    }
    let version = u32_at(bytes, 8);
    let head = match version {
        VERSION_FIXED => 24,
        VERSION if bytes.len() >= HEADER_BYTES => HEADER_BYTES,
        VERSION => {
            return Err(file_err(format!(
                "{name}: a version-{VERSION} rank file has a {HEADER_BYTES}-byte header; this \
                 has {} bytes",
                bytes.len()
            )))
        }
        _ => {
            return Err(file_err(format!(
                "{name}: format version {version}; this reader reads versions {VERSION_FIXED} \
                 and {VERSION}"
            )))
        }
    };
    let (rank, nranks, liblen) = (u32_at(bytes, 12), u32_at(bytes, 16), u32_at(bytes, 20));
    // version 2: ns per clock tick, 32.32 fixed point
    let rate = if version == VERSION {
        u64_at(bytes, 24)
    } else {
        1 << 32
    };
    if rate == 0 {
        return Err(file_err(format!(
            "{name}: rank {rank}: a clock rate of 0 ns per tick (a damaged header)"
        )));
    }
    if nranks == 0 || nranks > MAX_RANKS || rank >= nranks {
        return Err(file_err(format!(
            "{name}: rank {rank} of {nranks} ranks: expected a rank below a world size of 1 to \
             {MAX_RANKS}"
        )));
    }
    if liblen > MAX_LIBRARY || head + liblen as usize > bytes.len() {
        return Err(file_err(format!(
            "{name}: rank {rank}: a library string of {liblen} bytes does not fit the file's {} \
             bytes",
            bytes.len()
        )));
    }
    let library = String::from_utf8_lossy(&bytes[head..head + liblen as usize]).into_owned();
    let mut t = RankTrace {
        rank,
        nranks,
        library,
        ..RankTrace::default()
    };
    let mut at = head + liblen as usize;
    let mut finalized = false;
    let mut last_t1 = 0u64;
    let mut ticks = 0u64; // version 2: the clock when the record before returned
    while at < bytes.len() {
        let n = t.records.len() as u64;
        let err = |call: String, reason: String| TraceError::Record {
            rank,
            record: n,
            call,
            reason,
        };
        if finalized {
            return Err(err(
                "after MPI_Finalize".into(),
                format!("{} bytes follow the MPI_Finalize record", bytes.len() - at),
            ));
        }
        let decoded = if version == VERSION {
            decode(&bytes[at..], rate, &mut ticks)
        } else {
            decode_fixed(&bytes[at..])
        };
        let (code, fields) = match decoded {
            Decoded::Record(code, fields) => (code, Some(fields)),
            Decoded::Cut(code) => (code, None),
        };
        let call = call_of(code);
        let cname = || call.map_or(format!("call code {code}"), |c| c.name.to_string());
        let Some((f, head_len)) = fields else {
            t.stop = Some(format!(
                "rank {rank}: the file ends inside record {n} ({}); the rank stops after record \
                 {}",
                cname(),
                n.saturating_sub(1)
            ));
            return Ok(t);
        };
        let Some(call) = call else {
            return Err(err(
                cname(),
                "unknown call code: the format has the codes of docs/trace.md (a damaged file, \
                 or a recorder newer than this reader)"
                    .into(),
            ));
        };
        let nextra = f.nextra;
        let rec = Record {
            call,
            extra_at: t.extra.len() as u32,
            ..f
        };
        let most = max_extra(call, nranks);
        if nextra > most {
            return Err(err(
                call.name.into(),
                format!("{nextra} extra words; the call has at most {most} on {nranks} ranks"),
            ));
        }
        if rec.t1 < rec.t0 || rec.t0 < last_t1 {
            return Err(err(
                call.name.into(),
                format!(
                    "times run backwards (entered at {} ns, returned at {} ns, the call before \
                     returned at {last_t1} ns)",
                    rec.t0, rec.t1
                ),
            ));
        }
        let end = (at + head_len).saturating_add(8 * nextra as usize);
        if end > bytes.len() {
            t.stop = Some(format!(
                "rank {rank}: the file ends inside record {n} ({}); the rank stops after record \
                 {}",
                call.name,
                n.saturating_sub(1)
            ));
            return Ok(t);
        }
        if t.extra.len() as u64 + nextra as u64 > u32::MAX as u64 {
            return Err(err(call.name.into(), "more than 2^32 extra words".into()));
        }
        let mut o = at + head_len;
        for _ in 0..nextra {
            t.extra.push(u64_at(bytes, o));
            o += 8;
        }
        last_t1 = rec.t1;
        finalized = call.code == 1;
        if n == 0 && call.code != 0 {
            return Err(err(
                call.name.into(),
                "the first record is not MPI_Init".into(),
            ));
        }
        t.records.push(rec);
        at = end;
    }
    if !finalized {
        let last = t.records.last().map_or("none", |r| r.call.name);
        t.stop = Some(format!(
            "rank {rank} stops after record {} ({last}) without MPI_Finalize",
            t.records.len().saturating_sub(1)
        ));
    }
    Ok(t)
}

/// A record's fields as a file holds them, with the bytes before its extra words; or where the
/// file ends inside it (with the call code read, `u16::MAX` when not even that is there).
enum Decoded {
    Record(u16, (Record, usize)),
    Cut(u16),
}

/// The call of fields not yet looked up (replaced by the reader).
const NO_CALL: &Call = &super::CALLS[0];

/// A version-1 record: 64 fixed bytes.
fn decode_fixed(b: &[u8]) -> Decoded {
    let code = if b.len() >= 2 { u16_at(b, 0) } else { u16::MAX };
    if b.len() < RECORD_BYTES {
        return Decoded::Cut(code);
    }
    let i32_at = |o: usize| u32_at(b, o) as i32;
    let rec = Record {
        call: NO_CALL,
        op: u16_at(b, 2),
        comm: u32_at(b, 4),
        t0: u64_at(b, 8),
        t1: u64_at(b, 16),
        peer: i32_at(24),
        tag: i32_at(28),
        src: i32_at(32),
        mtag: i32_at(36),
        bytes: u64_at(b, 40),
        rbytes: u64_at(b, 48),
        req: u32_at(b, 56),
        extra_at: 0,
        nextra: u32_at(b, 60),
    };
    Decoded::Record(code, (rec, RECORD_BYTES))
}

/// A LEB128 varint at `*at`, advanced past it; `None` where the bytes end first or it does not
/// fit 64 bits.
fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

/// A version-2 record (docs/trace.md): the call (u8), the mask of the fields present, the
/// entry time and the duration in clock ticks, then the fields present, as varints (signed
/// ones zigzagged). `ticks` is the clock when the record before returned; `rate` ns per tick
/// (32.32). A varint too long for its field counts as a cut file: it can only be the last
/// bytes of a crashed run or damage, and both stop the rank there.
fn decode(b: &[u8], rate: u64, ticks: &mut u64) -> Decoded {
    let Some(&code) = b.first() else {
        return Decoded::Cut(u16::MAX);
    };
    let code = u16::from(code);
    let mut at = 1;
    let mut next = || varint(b, &mut at);
    let fields = (|| {
        let mask = next()?;
        let t0 = ticks.checked_add(next()?)?;
        let t1 = t0.checked_add(next()?)?;
        let mut field = |bit: u32, default: u64| -> Option<u64> {
            if mask & (1 << bit) != 0 {
                next()
            } else {
                Some(default)
            }
        };
        let unzig = |v: u64| -> Option<i32> {
            let v = u32::try_from(v).ok()?;
            Some(((v >> 1) as i32) ^ -((v & 1) as i32))
        };
        let small = |v: u64| u32::try_from(v).ok();
        let ns =
            |t: u64| ((u128::from(t) * u128::from(rate)) >> 32).min(u128::from(u64::MAX)) as u64;
        let rec = Record {
            call: NO_CALL,
            op: u16::try_from(field(0, 0)?).ok()?,
            comm: small(field(1, 0)?)?,
            peer: unzig(field(2, zig(super::PEER_NONE))?)?,
            tag: unzig(field(3, 0)?)?,
            src: unzig(field(4, zig(super::PEER_NONE))?)?,
            mtag: unzig(field(5, zig(-1))?)?,
            bytes: field(6, 0)?,
            rbytes: field(7, 0)?,
            req: small(field(8, 0)?)?,
            nextra: small(field(9, 0)?)?,
            t0: ns(t0),
            t1: ns(t1),
            extra_at: 0,
        };
        Some((rec, t1))
    })();
    match fields {
        Some((rec, t1)) => {
            *ticks = t1;
            Decoded::Record(code, (rec, at))
        }
        None => Decoded::Cut(code),
    }
}

/// The zigzag form of a signed field (what the recorder writes).
fn zig(v: i32) -> u64 {
    u64::from(((v as u32) << 1) ^ ((v >> 31) as u32))
}

/// Most extra words a record of `call` has on `nranks` ranks.
fn max_extra(call: &Call, nranks: u32) -> u32 {
    let n = nranks.saturating_mul(3);
    match call.class {
        Class::Sendrecv => 1,
        // three words per completed request: any number of requests
        Class::Complete | Class::Start => u32::MAX,
        Class::Collective | Class::Comm => n,
        _ => 0,
    }
}

/// Reads a packed trace ([`pack`]) or a single rank file (a one-rank run). Every rank of the
/// world must be there once, with the same world size.
pub fn read(bytes: &[u8], name: &str) -> Result<AppTrace, TraceError> {
    if bytes.len() >= 8 && &bytes[..8] == RANK_MAGIC {
        let r = read_rank(bytes, name)?;
        return assemble(vec![r], name);
    }
    if bytes.len() < 16 || &bytes[..8] != PACK_MAGIC {
        return Err(file_err(format!(
            "{name}: not a trace (a .hct file starts with HCTPACK, a rank file of \
             libhc_trace.so with HCTRACE)"
        )));
    }
    let version = u32_at(bytes, 8);
    if version != PACK_VERSION {
        return Err(file_err(format!(
            "{name}: packed format version {version}; this reader reads version {PACK_VERSION}"
        )));
    }
    let nfiles = u32_at(bytes, 12) as usize;
    if nfiles == 0 || 16 + 8 * nfiles > bytes.len() {
        return Err(file_err(format!(
            "{name}: {nfiles} rank files announced; the {}-byte file cannot hold their lengths",
            bytes.len()
        )));
    }
    let mut at = 16 + 8 * nfiles;
    let mut ranks = Vec::with_capacity(nfiles);
    for i in 0..nfiles {
        let len = u64_at(bytes, 16 + 8 * i);
        if len > (bytes.len() - at) as u64 {
            return Err(file_err(format!(
                "{name}: rank file {i} of {len} bytes goes past the end of the file (truncated: \
                 {} bytes are left)",
                bytes.len() - at
            )));
        }
        let part = &bytes[at..at + len as usize];
        ranks.push(read_rank(part, &format!("{name} (rank file {i})"))?);
        at += len as usize;
        crate::cancel::check()?;
    }
    assemble(ranks, name)
}

/// Orders the ranks and checks that the world is whole and agrees on its size.
fn assemble(mut ranks: Vec<RankTrace>, name: &str) -> Result<AppTrace, TraceError> {
    ranks.sort_by_key(|r| r.rank);
    let n = ranks[0].nranks;
    for r in &ranks {
        if r.nranks != n {
            return Err(TraceError::Record {
                rank: r.rank,
                record: 0,
                call: "MPI_Init".into(),
                reason: format!(
                    "recorded in a world of {} ranks; rank {} was in a world of {n}: these \
                     files come from different runs",
                    r.nranks, ranks[0].rank
                ),
            });
        }
    }
    for (i, r) in ranks.iter().enumerate() {
        if r.rank != i as u32 {
            return Err(file_err(format!(
                "{name}: rank {i} of {n} is missing{}",
                if r.rank < i as u32 {
                    format!(" and rank {} appears twice", r.rank)
                } else {
                    String::new()
                }
            )));
        }
    }
    if ranks.len() as u32 != n {
        return Err(file_err(format!(
            "{name}: {} rank files for a world of {n} ranks (ranks {}..{n} are missing)",
            ranks.len(),
            ranks.len()
        )));
    }
    // a communicator creation's extra words are world ranks
    for r in &ranks {
        for (i, rec) in r.records.iter().enumerate() {
            if rec.call.class == Class::Comm && rec.req != NO_COMM {
                if let Some(&w) = r.extra_of(rec).iter().find(|&&w| w >= n as u64) {
                    return Err(TraceError::Record {
                        rank: r.rank,
                        record: i as u64,
                        call: rec.call.name.into(),
                        reason: format!("member {w} is not a world rank (0..{n})"),
                    });
                }
            }
        }
    }
    Ok(AppTrace { ranks })
}

/// Packs rank files (their contents, any order) into one trace: the bytes of a `.hct` file.
pub fn pack(files: &[Vec<u8>]) -> Vec<u8> {
    let total: usize = files.iter().map(|f| f.len()).sum();
    let mut out = Vec::with_capacity(16 + 8 * files.len() + total);
    out.extend_from_slice(PACK_MAGIC);
    out.extend_from_slice(&PACK_VERSION.to_le_bytes());
    out.extend_from_slice(&(files.len() as u32).to_le_bytes());
    for f in files {
        out.extend_from_slice(&(f.len() as u64).to_le_bytes());
    }
    for f in files {
        out.extend_from_slice(f);
    }
    out
}
