//! Export of a schedule as one self-contained C file: an MPI routine that runs the schedule,
//! for an application to compile in (the user guide is `docs/native.md`, section 2).
//!
//! # The file
//! 1. A comment: what the file is, the schedule (its name, collective, count, dtype, operator,
//!    ranks), the entry point's contract and return codes, and how to compile it.
//! 2. The native runner (`native/hc_runner.c`, from [`sources`]) with the
//!    headers it includes (`hc_runner.h`, the generated `hc_codes.h`) inlined where it includes
//!    them, after `#define HC_API static` (with GCC's `unused` attribute under `__GNUC__`): every
//!    function of the runner has internal linkage and the entry point is the file's only
//!    external symbol, so the routines exported from several schedules link into one program.
//! 3. The program tables (static const arrays, see below).
//! 4. The entry point. For a schedule with data semantics (an allreduce):
//!    `int NAME(const void *sendbuf, void *recvbuf, MPI_Comm comm)`, for the schedule's count,
//!    dtype and operator. For a schedule without (sizes only, such as imported GOAL):
//!    `int NAME(MPI_Comm comm)`; its ops run on private buffers. Both check `comm` (not null,
//!    not an intercommunicator, exactly the schedule's ranks), keep a private duplicate of it
//!    as an attribute (freed with it) on which every message travels, bind the rank's plan on
//!    the first call and rebind it on the next ones. They print nothing and return an MPI
//!    error code (listed in the file's comment and in the guide).
//!
//! Internal identifiers of the export begin with `hce_` (`HCE_` for macros); the runner's
//! with `hc_` (`HC_`). The entry point's name must be a C identifier that none of these
//! uses ([`check_c_name`]).
//!
//! # Tables
//! Ranks run programs of few distinct shapes, which a [`Schedule`] stores once, and differ in
//! their peers and in the operand order of their receives (a shape states it as seen from a
//! peer above the rank). The export keeps that split. A *body* is the columns
//! ([`Columns`]) of one shape but `peer` and `combine`, one `hc_program` initialiser in
//! `hce_bodies`. Per rank: its body (`hce_rank_body`), its peers (a row of one array of every
//! rank's peers, `hce_peers`, from `hce_peer_start[rank]`) and its `combine` column
//! (`hce_rank_combine`, a pointer to one of the distinct combine columns). Every array is
//! written once however many bodies or ranks name it (the `time_ps` of most bodies are the
//! same zeros, the combine columns of a ring are one). A 4096-rank recursive doubling is one
//! body, 4096 rows of peers and 4096 small combine columns (rank r's is r's bits).
//!
//! # Units, and collectives whose pattern does not depend on the count
//! Offsets and lengths in the tables count elements of the schedule's dtype; the runner scales
//! them by the element size when it binds buffers, and computes every message's size from its
//! slice. A count-independent collective (alltoall, halo exchange) will therefore export its
//! schedule generated with one element per block, in the same tables, and an entry point
//! with MPI's signature that takes the count and binds the plan with a unit of
//! `count × element size` bytes: the tables stay the same for every count.
//!
//! # Refused
//! [`CExport::new`] refuses, with a [`ScheduleError`] naming the bad value: an invalid entry
//! point name; more ranks than an MPI communicator has (2^31 − 1); an allreduce of `byte`; a
//! buffer whose bytes exceed 2^63 − 1; a rank of 2^31 − 1 ops or more; a message above the
//! 2^31 − 1 bytes one MPI call of the runner moves; a send with tag −1 (MPI has no "any tag"
//! for a send); and a program whose slices leave its buffers ([`Columns::checked`]).

mod c_text;
mod names;
pub mod sources;
#[cfg(test)]
mod tests;

pub(crate) use c_text::{state_c, STATE_OF_C};
pub use names::check_c_name;

use super::{Collective, Columns, Dtype, OpCode, ReduceOp, Schedule, ScheduleError, Slot};
use c_text::*;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, Write};

/// Options of the C export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CExportOptions {
    /// The entry point's name: a C identifier ([`check_c_name`]).
    pub name: String,
}

impl CExportOptions {
    /// Options with entry point `name`.
    pub fn new(name: impl Into<String>) -> CExportOptions {
        CExportOptions { name: name.into() }
    }

    /// The entry point's name when none is given: `hc_<collective>` (`hc_allreduce`), or
    /// `hc_schedule` for a schedule without data semantics.
    pub fn default_name(collective: &Collective) -> &'static str {
        match collective {
            Collective::Allreduce { .. } => "hc_allreduce",
            Collective::Alltoall { .. } => "hc_alltoall",
            Collective::None => "hc_schedule",
            Collective::Halo(_) => "hc_halo",
        }
    }

    /// Options with the default name for `s`.
    pub fn for_schedule(s: &Schedule) -> CExportOptions {
        CExportOptions::new(CExportOptions::default_name(&s.meta().collective))
    }
}

/// Writes `s` as one self-contained C file (see the [module documentation](self)). What
/// cannot be exported is refused with [`io::ErrorKind::InvalidInput`] before anything is
/// written; [`CExport::new`] gives the same refusal as a [`ScheduleError`].
pub fn write_c(s: &Schedule, opts: &CExportOptions, out: &mut impl Write) -> io::Result<()> {
    let e = CExport::new(s, opts)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    e.write(out)
}

/// A schedule checked for the C export and cut into bodies, ready to write.
#[derive(Debug)]
pub struct CExport<'a> {
    s: &'a Schedule,
    name: String,
    /// The columns of each shape's first rank (its body: peers and combine are the rank's).
    bodies: Vec<Columns>,
    /// The first rank of each shape.
    body_rank: Vec<u32>,
    /// The distinct combine columns.
    combines: Vec<Vec<i8>>,
    /// The first rank of each combine column.
    combine_rank: Vec<u32>,
    /// Each rank's combine column.
    rank_combine: Vec<u32>,
    peer_start: Vec<u64>,
    peers: Vec<i64>,
    max_tag: i32,
}

/// Largest number of ranks (an MPI communicator's size is an `int`).
const MAX_EXPORT_RANKS: u64 = i32::MAX as u64;
/// Largest message one MPI call of the runner moves (an `int` count of bytes).
const MAX_MESSAGE_BYTES: u64 = i32::MAX as u64;
/// Largest buffer, in bytes (a `ptrdiff_t` on a 64-bit machine).
const MAX_BUFFER_BYTES: u64 = i64::MAX as u64;

fn bad(name: &str, value: impl ToString, reason: impl Into<String>) -> ScheduleError {
    ScheduleError::BadParameter {
        name: name.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

impl<'a> CExport<'a> {
    /// Checks that `s` can be exported with `opts` and groups its ranks into bodies. Refuses
    /// what the [module documentation](self) lists.
    pub fn new(s: &'a Schedule, opts: &CExportOptions) -> Result<CExport<'a>, ScheduleError> {
        check_c_name(&opts.name)?;
        let meta = s.meta();
        if let Collective::Halo(_) = meta.collective {
            return Err(ScheduleError::BadParameter {
                name: "format".into(),
                value: "c".into(),
                reason: "the C export runs contiguous slices, and a halo exchange packs and \
                         unpacks 3-D regions of each rank's lattice (pack / unpack ops); \
                         export it as GOAL (sizes only) or run it with hypercuboid.mpi.\
                         halo_exchange; accepted formats for halo: goal, trace"
                    .into(),
            });
        }
        let n = s.nranks();
        if n as u64 > MAX_EXPORT_RANKS {
            return Err(ScheduleError::BadRankCount {
                nranks: n as u64,
                reason: format!(
                    "an MPI communicator has at most {MAX_EXPORT_RANKS} ranks (an int), so the C \
                     export takes at most that many"
                ),
            });
        }
        if meta.collective.has_data() && meta.dtype == Dtype::Byte {
            return Err(bad(
                "dtype",
                "byte",
                format!(
                    "an {} needs a numeric dtype{}; accepted: {}",
                    meta.collective.name(),
                    if meta.op().is_some() {
                        " to reduce"
                    } else {
                        ""
                    },
                    numeric_dtypes().join(", ")
                ),
            ));
        }
        let es = meta.elem_size() as u64;
        let (in_len, out_len) = meta.buffer_lens();
        for (what, len) in [("input", in_len), ("output", out_len)] {
            buffer_bytes("count", what, len, meta.dtype)?;
        }
        let mut combine_index: HashMap<Vec<i8>, u32> = HashMap::new();
        let mut ex = CExport {
            s,
            name: opts.name.clone(),
            bodies: (0..s.num_shapes()).map(|_| Columns::default()).collect(),
            body_rank: vec![u32::MAX; s.num_shapes()],
            combines: Vec::new(),
            combine_rank: Vec::new(),
            rank_combine: Vec::with_capacity(n as usize),
            peer_start: Vec::with_capacity(n as usize + 1),
            peers: Vec::with_capacity(s.total_ops() as usize),
            max_tag: 0,
        };
        ex.peer_start.push(0);
        for r in 0..n {
            let cols = Columns::of_rank(&s.rank(r), es as u32);
            ex.peers.extend_from_slice(&cols.peer);
            ex.peer_start.push(ex.peers.len() as u64);
            let c = match combine_index.get(&cols.combine) {
                Some(&c) => c,
                None => {
                    let c = ex.combines.len() as u32;
                    combine_index.insert(cols.combine.clone(), c);
                    ex.combines.push(cols.combine.clone());
                    ex.combine_rank.push(r);
                    c
                }
            };
            ex.rank_combine.push(c);
            let shape = s.shape_index(r);
            if ex.body_rank[shape] == u32::MAX {
                ex.max_tag = ex
                    .max_tag
                    .max(check_body(&cols, r, n, meta.buffer_lens(), es)?);
                for (k, &len) in cols.scratch.iter().enumerate() {
                    let what = format!("scratch {k}");
                    buffer_bytes(&format!("{what} length"), &what, len, meta.dtype)?;
                }
                ex.body_rank[shape] = r;
                ex.bodies[shape] = cols;
            }
        }
        Ok(ex)
    }

    /// The number of program bodies (the schedule's distinct shapes).
    pub fn num_bodies(&self) -> usize {
        self.bodies.len()
    }

    /// The number of distinct combine columns the ranks share.
    pub fn num_combines(&self) -> usize {
        self.combines.len()
    }

    /// The entry point's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The entry point's prototype (`int NAME(const void *sendbuf, void *recvbuf, MPI_Comm
    /// comm)`, or `int NAME(MPI_Comm comm)` for a schedule without data semantics).
    pub fn prototype(&self) -> String {
        if self.has_buffers() {
            format!(
                "int {}(const void *sendbuf, void *recvbuf, MPI_Comm comm)",
                self.name
            )
        } else {
            format!("int {}(MPI_Comm comm)", self.name)
        }
    }

    fn has_buffers(&self) -> bool {
        self.s.meta().collective.has_data()
    }

    /// Writes the C file.
    pub fn write(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(self.header().as_bytes())?;
        out.write_all(embedded_runner().as_bytes())?;
        self.write_tables(out)?;
        out.write_all(self.entry().as_bytes())
    }

    fn header(&self) -> String {
        let s = self.s;
        let m = s.meta();
        let n = s.nranks();
        let name = &self.name;
        let proto = self.prototype();
        let (in_len, _) = m.buffer_lens();
        let mut l: Vec<String> = Vec::new();
        let what = match m.collective {
            Collective::None => "a communication schedule".to_string(),
            c => format!("an {}", c.name()),
        };
        l.push(format!(
            "{name}: {what}, exported by hypercuboid (schedule export --format c)."
        ));
        l.push(
            "Generated: the program tables of every rank and the runner that executes them.".into(),
        );
        l.push(String::new());
        l.push(format!("Schedule:   {}", comment_text(&m.name)));
        l.push(match (m.op(), m.collective.block()) {
            (Some(op), _) => format!(
                "Collective: {} of {} {} ({}) with {op}",
                m.collective.name(),
                m.count,
                m.dtype,
                c_type(m.dtype)
            ),
            (None, Some(block)) => format!(
                "Collective: alltoall of {block} {} ({}) per pair of ranks",
                m.dtype,
                c_type(m.dtype)
            ),
            (None, None) => {
                "Collective: none (sizes only: the ops move bytes, nothing is computed)".into()
            }
        });
        l.push(format!(
            "Ranks:      {n} ({} ops; {} program bodies, {} operand orders)",
            s.total_ops(),
            self.bodies.len(),
            self.combines.len()
        ));
        l.push(String::new());
        l.push("Entry point (the file's only external symbol):".into());
        l.push(format!("    {proto};"));
        l.push(String::new());
        if let Some(op) = m.op() {
            l.push(format!(
                "Collective over comm, which must have {n} ranks: every rank's recvbuf ends as"
            ));
            l.push(format!(
                "the {op} of every rank's sendbuf, {} elements of {} each, as",
                m.count,
                c_type(m.dtype)
            ));
            l.push(format!(
                "    MPI_Allreduce(sendbuf, recvbuf, {}, {}, {}, comm)",
                m.count,
                mpi_type(m.dtype),
                mpi_op(op)
            ));
            l.push("computes it, in the schedule's order of operands (integers wrap).".into());
            l.push("sendbuf may be MPI_IN_PLACE: the input is then recvbuf (copied first).".into());
        } else if let Some(block) = m.collective.block() {
            l.push(format!(
                "Collective over comm, which must have {n} ranks: sendbuf holds {n} blocks of"
            ));
            l.push(format!(
                "{block} elements of {}, block j for rank j; every rank's recvbuf ends with rank",
                c_type(m.dtype)
            ));
            l.push("i's block for it at block i, as".into());
            l.push(format!(
                "    MPI_Alltoall(sendbuf, {block}, {t}, recvbuf, {block}, {t}, comm)",
                t = mpi_type(m.dtype)
            ));
            l.push("computes it.".into());
            l.push("sendbuf may be MPI_IN_PLACE: the input is then recvbuf (copied first).".into());
        } else {
            l.push(format!(
                "Collective over comm, which must have {n} ranks: every rank runs its program"
            ));
            l.push(format!(
                "(sends, receives, computes, sleeps); data ops use private buffers ({in_len} x {})."
                , m.dtype
            ));
        }
        l.push(
            "Messages travel on a private duplicate of comm, kept as an attribute of comm".into(),
        );
        l.push(
            "and freed with it, so they never match the application's. The first call on a".into(),
        );
        l.push("communicator binds the rank's plan; later calls rebind it. Prints nothing.".into());
        l.push(String::new());
        l.push("Returns MPI_SUCCESS, or".into());
        l.push(format!(
            "  MPI_ERR_COMM    comm is MPI_COMM_NULL, an intercommunicator, or has not {n} ranks;"
        ));
        if self.has_buffers() {
            l.push("  MPI_ERR_BUFFER  count > 0 and recvbuf is NULL or MPI_IN_PLACE, or sendbuf is NULL;".into());
        }
        l.push(format!(
            "  MPI_ERR_TAG     the schedule's largest tag ({}) is above MPI_TAG_UB;",
            self.max_tag
        ));
        l.push("  MPI_ERR_NO_MEM  out of memory;".into());
        l.push("  MPI_ERR_INTERN  the program cannot progress (a dependency cycle);".into());
        l.push(
            "  another code    what a failing MPI call returned (if comm's error handler".into(),
        );
        l.push("                  returns errors; the default one aborts).".into());
        l.push(String::new());
        l.push(format!(
            "Compile: mpicc -O2 -c {name}.c (C99), and declare in the application"
        ));
        l.push(format!("    {proto};"));
        l.push("Floating-point results match hypercuboid's other runners when the compiler".into());
        l.push(
            "does not contract a * b + c (GCC: the file turns it off; others: -ffp-contract=off)."
                .into(),
        );
        let mut h = String::from("/* ");
        h.push_str(&l.join("\n * ").replace(" * \n", " *\n"));
        h.push_str("\n */\n\n");
        h.push_str(
            "/* The runner's functions are static here (HC_API), so that several exported \
             routines link\n * into one program. */\n\
             #if defined(__GNUC__)\n\
             #define HC_API static __attribute__((unused))\n\
             #else\n\
             #define HC_API static\n\
             #endif\n\n",
        );
        h
    }

    fn write_tables(&self, out: &mut impl Write) -> io::Result<()> {
        let s = self.s;
        let m = s.meta();
        let n = s.nranks();
        let mut t = Tables::default();
        let (in_len, out_len) = m.buffer_lens();
        let es = m.elem_size() as u64;
        t.text.push_str(
            "\n/* ==== the program tables =================================================== \
             */\n\n",
        );
        let _ = writeln!(t.text, "#define HCE_NRANKS {n}");
        let _ = writeln!(t.text, "#define HCE_COUNT {}", c_u64(m.count));
        let _ = writeln!(
            t.text,
            "#define HCE_DTYPE HC_DTYPE_{}",
            m.dtype.name().to_uppercase()
        );
        let op = m.op().unwrap_or(ReduceOp::Sum);
        let _ = writeln!(
            t.text,
            "#define HCE_OP HC_REDUCE_{}{}",
            op.name().to_uppercase(),
            if m.op().is_none() {
                " /* no reduction: any code */"
            } else {
                ""
            }
        );
        let _ = writeln!(
            t.text,
            "#define HCE_INPUT_BYTES ((size_t){})",
            c_u64(in_len * es)
        );
        let _ = writeln!(
            t.text,
            "#define HCE_OUTPUT_BYTES ((size_t){})",
            c_u64(out_len * es)
        );
        let _ = writeln!(t.text, "#define HCE_MAX_TAG {}\n", self.max_tag);
        t.text.push_str(
            "/* The columns of each program body (docs/schedule.md, \"One program encoding: \
             columns\"):\n * offsets and lengths in elements. An array is written once \
             however many bodies use it. */\n",
        );
        let mut inits = Vec::with_capacity(self.bodies.len());
        for (b, c) in self.bodies.iter().enumerate() {
            let p = format!("hce_b{b}");
            let mut arr = |col: &'static str, ctype: &str, values: Vec<String>| {
                (col, t.array(&p, col, ctype, values))
            };
            // hc_program's fields, in its order
            let fields = [
                ("nops", c.len().to_string()),
                arr("kind", "uint8_t", strs(&c.kind)),
                ("peer", "NULL /* the rank's own: hce_peers */".into()),
                arr("tag", "int32_t", strs(&c.tag)),
                arr("bytes", "uint64_t", u64s(&c.bytes)),
                (
                    "combine",
                    "NULL /* the rank's own: hce_rank_combine */".into(),
                ),
                arr("time_ps", "uint64_t", u64s(&c.time_ps)),
                arr("buf_slot", "int32_t", strs(&c.buf_slot)),
                arr("buf_offset", "uint64_t", u64s(&c.buf_offset)),
                arr("buf_len", "uint64_t", u64s(&c.buf_len)),
                arr("src_slot", "int32_t", strs(&c.src_slot)),
                arr("src_offset", "uint64_t", u64s(&c.src_offset)),
                arr("src_len", "uint64_t", u64s(&c.src_len)),
                ("ndeps", c.dep_op.len().to_string()),
                arr("dep_op", "uint32_t", strs(&c.dep_op)),
                arr("dep_on", "uint32_t", strs(&c.dep_on)),
                arr("dep_kind", "uint8_t", strs(&c.dep_kind)),
                ("nscratch", c.scratch.len().to_string()),
                arr("scratch", "uint64_t", u64s(&c.scratch)),
            ];
            let f: Vec<String> = fields.iter().map(|(k, v)| format!(".{k} = {v}")).collect();
            inits.push(format!(
                "    {{   /* body {b}: the shape of rank {} */\n        {}\n    }},\n",
                self.body_rank[b],
                f.join(",\n        ")
            ));
            if t.text.len() > 1 << 20 {
                out.write_all(t.text.as_bytes())?;
                t.text.clear();
            }
        }
        let _ = writeln!(
            t.text,
            "\nstatic const hc_program hce_bodies[{}] = {{\n{}}};\n",
            self.bodies.len(),
            inits.concat()
        );
        t.text.push_str(
            "/* The distinct combine columns (0 assign, 1 dst = x (+) dst, 2 dst = dst (+) x). \
             */\n",
        );
        let combine_names: Vec<String> = self
            .combines
            .iter()
            .zip(&self.combine_rank)
            .map(|(c, r)| t.array(&format!("hce_r{r}"), "combine", "int8_t", strs(c)))
            .collect();
        t.text.push_str(
            "\n/* Rank r runs body hce_rank_body[r] with the combine column \
             hce_rank_combine[r] and the\n * peers hce_peers[hce_peer_start[r] ..] (-1: none, \
             or any source). */\n",
        );
        out.write_all(t.text.as_bytes())?;
        t.text.clear();
        write_array(
            out,
            "hce_rank_body",
            "uint32_t",
            n as usize,
            (0..n).map(|r| s.shape_index(r).to_string()),
        )?;
        write_array(
            out,
            "hce_rank_combine",
            "int8_t *const",
            n as usize,
            self.rank_combine
                .iter()
                .map(|&c| combine_names[c as usize].clone()),
        )?;
        write_array(
            out,
            "hce_peer_start",
            "uint64_t",
            self.peer_start.len(),
            self.peer_start.iter().map(|&v| c_u64(v)),
        )?;
        if self.peers.is_empty() {
            out.write_all(b"static const int64_t hce_peers[1] = {-1}; /* no ops: unread */\n")
        } else {
            write_array(
                out,
                "hce_peers",
                "int64_t",
                self.peers.len(),
                self.peers.iter().map(|v| v.to_string()),
            )
        }
    }

    fn entry(&self) -> String {
        let entry = if self.has_buffers() {
            ENTRY_BUFFERS
        } else {
            ENTRY_SIZES_ONLY
        };
        format!(
            "{ENTRY_COMMON}{STATE_OF_C}{ENTRY_RUN}{}",
            entry.replace("@NAME@", &self.name)
        )
    }
}

/// Checks the columns of a new body (those of rank `r`): the program is valid and inside its
/// buffers, small enough for the runner, and every send has a tag. Returns the largest tag.
fn check_body(
    c: &Columns,
    r: u32,
    nranks: u32,
    buffer_lens: (u64, u64),
    es: u64,
) -> Result<i32, ScheduleError> {
    c.checked(r, nranks, buffer_lens)?;
    if c.len() as u64 >= i32::MAX as u64 {
        return Err(ScheduleError::BadRankCount {
            nranks: nranks as u64,
            reason: format!(
                "rank {r} has {} ops; the runner takes fewer than 2^31 - 1 ops a rank",
                c.len()
            ),
        });
    }
    let mut max_tag = 0;
    for i in 0..c.len() {
        let kind = c.kind[i];
        if kind != OpCode::Send as u8 && kind != OpCode::Recv as u8 {
            continue;
        }
        let what = if kind == OpCode::Send as u8 {
            "send"
        } else {
            "recv"
        };
        if kind == OpCode::Send as u8 && c.tag[i] < 0 {
            return Err(ScheduleError::BadOp {
                rank: r,
                op: i as u32,
                reason: format!(
                    "a send with tag {} cannot be exported: MPI has no \"any tag\" for a send; \
                     give it a tag of 0 or more",
                    c.tag[i]
                ),
            });
        }
        max_tag = max_tag.max(c.tag[i]);
        let bytes = if c.buf_slot[i] == Slot::NONE_CODE {
            c.bytes[i]
        } else {
            c.buf_len[i].saturating_mul(es)
        };
        if bytes > MAX_MESSAGE_BYTES {
            return Err(ScheduleError::BadOp {
                rank: r,
                op: i as u32,
                reason: format!(
                    "a {what} of {bytes} bytes cannot be exported: one MPI call of the runner \
                     moves at most 2^31 - 1 = {MAX_MESSAGE_BYTES} bytes"
                ),
            });
        }
    }
    Ok(max_tag)
}

/// Refuses a buffer (`what`) of `len` elements of `dtype` whose bytes do not fit; the error
/// names `param`, the parameter that sets the length.
fn buffer_bytes(param: &str, what: &str, len: u64, dtype: Dtype) -> Result<u64, ScheduleError> {
    len.checked_mul(dtype.size() as u64)
        .filter(|&b| b <= MAX_BUFFER_BYTES)
        .ok_or_else(|| {
            bad(
                param,
                len,
                format!(
                    "the {what} buffer of {len} elements of {dtype} ({} bytes each) exceeds \
                     2^63 - 1 bytes, which the C export cannot address",
                    dtype.size()
                ),
            )
        })
}

fn numeric_dtypes() -> Vec<&'static str> {
    Dtype::ALL
        .iter()
        .filter(|d| **d != Dtype::Byte)
        .map(|d| d.name())
        .collect()
}
