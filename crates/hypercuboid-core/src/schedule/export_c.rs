//! Export of a schedule as one self-contained C file: an MPI routine that runs the schedule,
//! for an application to compile in (the user guide is `docs/native.md`, section 2).
//!
//! # The file
//! 1. A comment: what the file is, the schedule (its name, collective, count, dtype, operator,
//!    ranks), the entry point's contract and return codes, and how to compile it.
//! 2. The native runner (`native/hc_runner.c`, from [`crate::native::sources`]) with the
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

use super::{Collective, Columns, Dtype, OpCode, ReduceOp, Schedule, ScheduleError, Slot};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::sync::OnceLock;

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
        format!("{ENTRY_COMMON}{}", entry.replace("@NAME@", &self.name))
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

/// The C type of a dtype's elements.
fn c_type(d: Dtype) -> &'static str {
    match d {
        Dtype::Int8 => "int8_t",
        Dtype::Int16 => "int16_t",
        Dtype::Int32 => "int32_t",
        Dtype::Int64 => "int64_t",
        Dtype::Uint8 => "uint8_t",
        Dtype::Uint16 => "uint16_t",
        Dtype::Uint32 => "uint32_t",
        Dtype::Uint64 => "uint64_t",
        Dtype::Float32 => "float",
        Dtype::Float64 => "double",
        Dtype::Byte => "unsigned char",
    }
}

/// The predefined MPI datatype of a dtype.
fn mpi_type(d: Dtype) -> &'static str {
    match d {
        Dtype::Int8 => "MPI_INT8_T",
        Dtype::Int16 => "MPI_INT16_T",
        Dtype::Int32 => "MPI_INT32_T",
        Dtype::Int64 => "MPI_INT64_T",
        Dtype::Uint8 => "MPI_UINT8_T",
        Dtype::Uint16 => "MPI_UINT16_T",
        Dtype::Uint32 => "MPI_UINT32_T",
        Dtype::Uint64 => "MPI_UINT64_T",
        Dtype::Float32 => "MPI_FLOAT",
        Dtype::Float64 => "MPI_DOUBLE",
        Dtype::Byte => "MPI_BYTE",
    }
}

fn mpi_op(o: ReduceOp) -> String {
    format!("MPI_{}", o.name().to_uppercase())
}

/// Integers as C constants.
fn strs<T: ToString>(v: &[T]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Unsigned 64-bit integers as C constants ([`c_u64`]).
fn u64s(v: &[u64]) -> Vec<String> {
    v.iter().map(|&x| c_u64(x)).collect()
}

/// An unsigned C constant: with a `u` suffix above `i64::MAX` (an unsuffixed decimal constant
/// is signed).
fn c_u64(v: u64) -> String {
    if v > i64::MAX as u64 {
        format!("{v}u")
    } else {
        v.to_string()
    }
}

/// Free text made safe inside a C comment: printable ASCII on one line, no `*/` or `/*`, no
/// trigraph.
fn comment_text(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if (' '..='~').contains(&c) { c } else { '?' })
        .collect();
    let mut out = flat.replace("*/", "* /").replace("/*", "/ *");
    while out.contains("??") {
        out = out.replace("??", "? ?");
    }
    out
}

/// Column arrays written once each: an array of the same column with the same values as one
/// already written is named by that one's name.
#[derive(Default)]
struct Tables {
    text: String,
    seen: HashMap<(String, String), String>,
}

impl Tables {
    /// The name of the array of `values` (`NULL` when empty), written if new as
    /// `{prefix}_{column}`.
    fn array(&mut self, prefix: &str, column: &str, ctype: &str, values: Vec<String>) -> String {
        let n = values.len();
        if n == 0 {
            return "NULL".to_string();
        }
        let body = wrap(values.into_iter());
        let key = (column.to_string(), body);
        if let Some(name) = self.seen.get(&key) {
            return name.clone();
        }
        let name = format!("{prefix}_{column}");
        let _ = write!(
            self.text,
            "static const {ctype} {name}[{n}] = {{\n{}}};\n",
            key.1
        );
        self.seen.insert(key, name.clone());
        name
    }
}

/// `static const ctype name[len] = {...};`, written line by line (the peers of a large
/// schedule).
fn write_array(
    out: &mut impl Write,
    name: &str,
    ctype: &str,
    len: usize,
    values: impl Iterator<Item = String>,
) -> io::Result<()> {
    writeln!(out, "static const {ctype} {name}[{len}] = {{")?;
    write_values(out, values)?;
    writeln!(out, "}};")
}

/// Values separated by commas, on lines of at most about 100 characters, indented by 4.
fn wrap(values: impl Iterator<Item = String>) -> String {
    let mut out = Vec::new();
    write_values(&mut out, values).expect("writing to memory");
    String::from_utf8(out).expect("digits and signs are ASCII")
}

fn write_values(out: &mut impl Write, values: impl Iterator<Item = String>) -> io::Result<()> {
    let mut line = String::with_capacity(128);
    for v in values {
        if line.len() + v.len() + 2 > 96 {
            writeln!(out, "{}", line.trim_end())?;
            line.clear();
        }
        if line.is_empty() {
            line.push_str("    ");
        }
        line.push_str(&v);
        line.push_str(", ");
    }
    if !line.is_empty() {
        writeln!(out, "{}", line.trim_end().trim_end_matches(','))?;
    }
    Ok(())
}

/// The runner's sources as one text: `hc_runner.c` with `hc_runner.h` inlined where it is
/// included, and `hc_codes.h` inlined in it.
fn embedded_runner() -> String {
    let sources: HashMap<&str, String> = crate::native::sources().into_iter().collect();
    let header = inline_include(
        &sources["hc_runner.h"],
        "hc_codes.h",
        &sources["hc_codes.h"],
    );
    let runner = inline_include(&sources["hc_runner.c"], "hc_runner.h", &header);
    format!(
        "/* ==== the native runner (native/hc_runner.c with its headers; see docs/native.md) \
         ==== */\n\n{runner}"
    )
}

/// `text` with its line `#include "name"` replaced by `body` (between two marker comments).
fn inline_include(text: &str, name: &str, body: &str) -> String {
    let line = format!("#include \"{name}\"\n");
    assert_eq!(
        text.matches(&line).count(),
        1,
        "the runner's sources include {name} once"
    );
    text.replacen(
        &line,
        &format!("/* -- {name} (inlined) -- */\n{body}/* -- end of {name} -- */\n"),
        1,
    )
}

/// What every entry point shares: the per-communicator state and its attribute, the checks,
/// the run.
const ENTRY_COMMON: &str = r#"
/* ==== the entry point ======================================================================= */

/* What a communicator keeps between calls, as an attribute (freed with it): the private
 * duplicate every message travels on, the rank's plan (bound on the first call, rebound on the
 * next) and the private buffers (MPI_IN_PLACE's copy of the input; a sizes-only routine's
 * input and output). */
typedef struct hce_state {
    MPI_Comm comm;
    hc_plan *plan;
    void *input;
    void *output;
} hce_state;

static int hce_keyval = MPI_KEYVAL_INVALID;

static int hce_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    hce_state *s = (hce_state *)value;
    int rc = MPI_SUCCESS;
    (void)comm;
    (void)keyval;
    (void)extra;
    hc_plan_free(s->plan);
    free(s->input);
    free(s->output);
    if (s->comm != MPI_COMM_NULL) rc = MPI_Comm_free(&s->comm);
    free(s);
    return rc;
}

/* The MPI error code of a runner code. */
static int hce_code(int rc)
{
    switch (rc) {
    case HC_OK: return MPI_SUCCESS;
    case HC_ERR_MEMORY: return MPI_ERR_NO_MEM;
    case HC_ERR_ARGUMENT: case HC_ERR_CYCLE: case HC_ERR_TIMEOUT: return MPI_ERR_INTERN;
    default: return rc; /* an MPI error code, as the failing call returned it */
    }
}

/* MPI_SUCCESS if comm is an intracommunicator of HCE_NRANKS ranks, else MPI_ERR_COMM. */
static int hce_check(MPI_Comm comm)
{
    int rc, inter = 0, size = 0;
    if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
    if ((rc = MPI_Comm_test_inter(comm, &inter)) != MPI_SUCCESS) return rc;
    if (inter) return MPI_ERR_COMM;
    if ((rc = MPI_Comm_size(comm, &size)) != MPI_SUCCESS) return rc;
    return size == HCE_NRANKS ? MPI_SUCCESS : MPI_ERR_COMM;
}

/* The state of a checked comm: found, or made on the first call (collective: duplicates comm). */
static int hce_state_of(MPI_Comm comm, hce_state **out)
{
    int rc, flag = 0;
    void *found = NULL;
    *out = NULL;
    if (hce_keyval == MPI_KEYVAL_INVALID) {
        rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, hce_delete, &hce_keyval, NULL);
        if (rc != MPI_SUCCESS) return rc;
    }
    if ((rc = MPI_Comm_get_attr(comm, hce_keyval, &found, &flag)) != MPI_SUCCESS) return rc;
    if (flag) {
        *out = (hce_state *)found;
        return MPI_SUCCESS;
    }
    if (HCE_MAX_TAG > 32767) { /* above the bound every MPI library has: ask */
        void *ub = NULL;
        int world = 0;
        if ((rc = MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag)) != MPI_SUCCESS) return rc;
        if (!flag && MPI_Initialized(&world) == MPI_SUCCESS && world &&
            (rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag)) != MPI_SUCCESS)
            return rc;
        if (!flag || HCE_MAX_TAG > *(int *)ub) return MPI_ERR_TAG;
    }
    hce_state *s = (hce_state *)calloc(1, sizeof *s);
    if (!s) return MPI_ERR_NO_MEM;
    s->comm = MPI_COMM_NULL;
    rc = MPI_Comm_dup(comm, &s->comm);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_attr(comm, hce_keyval, s);
    if (rc != MPI_SUCCESS) {
        if (s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
        free(s);
        return rc;
    }
    *out = s;
    return MPI_SUCCESS;
}

/* Runs the rank's program on input and output: binds its plan on the first call, rebinds it
 * on the next. */
static int hce_run(hce_state *s, const void *input, void *output)
{
    int rc;
    if (!s->plan) {
        int rank = 0;
        if ((rc = MPI_Comm_rank(s->comm, &rank)) != MPI_SUCCESS) return rc;
        hc_program prog = hce_bodies[hce_rank_body[rank]];
        prog.peer = hce_peers + hce_peer_start[rank];
        prog.combine = hce_rank_combine[rank];
        rc = hc_plan_create(&prog, HCE_DTYPE, HCE_OP, input, output, HCE_COUNT, s->comm,
                            &s->plan, NULL, 0);
        if (rc != HC_OK) return hce_code(rc);
    } else {
        hc_plan_rebind(s->plan, input, output);
    }
    return hce_code(hc_plan_run(s->plan, 0, NULL, NULL, 0));
}
"#;

/// The entry point of a schedule with data semantics.
const ENTRY_BUFFERS: &str = r#"
int @NAME@(const void *sendbuf, void *recvbuf, MPI_Comm comm)
{
    hce_state *s = NULL;
    const void *input = sendbuf;
    int rc = hce_check(comm);
    if (rc != MPI_SUCCESS) return rc;
    if (HCE_COUNT > 0 && (recvbuf == NULL || recvbuf == MPI_IN_PLACE || sendbuf == NULL))
        return MPI_ERR_BUFFER;
    if ((rc = hce_state_of(comm, &s)) != MPI_SUCCESS) return rc;
    if (sendbuf == MPI_IN_PLACE) {
        if (!s->input && !(s->input = malloc(HCE_INPUT_BYTES ? HCE_INPUT_BYTES : 1)))
            return MPI_ERR_NO_MEM;
        if (HCE_INPUT_BYTES) memcpy(s->input, recvbuf, HCE_INPUT_BYTES);
        input = s->input;
    }
    return hce_run(s, input, recvbuf);
}
"#;

/// The entry point of a schedule without data semantics: private buffers.
const ENTRY_SIZES_ONLY: &str = r#"
int @NAME@(MPI_Comm comm)
{
    hce_state *s = NULL;
    int rc = hce_check(comm);
    if (rc != MPI_SUCCESS) return rc;
    if ((rc = hce_state_of(comm, &s)) != MPI_SUCCESS) return rc;
    if (!s->output) {
        if (!s->input && !(s->input = calloc(HCE_INPUT_BYTES ? HCE_INPUT_BYTES : 1, 1)))
            return MPI_ERR_NO_MEM;
        if (!(s->output = calloc(HCE_OUTPUT_BYTES ? HCE_OUTPUT_BYTES : 1, 1)))
            return MPI_ERR_NO_MEM;
    }
    return hce_run(s, s->input, s->output);
}
"#;

/// C's keywords (C99, C11, C23) and `main`: never an entry point's name.
#[rustfmt::skip]
const C_KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "alignas", "alignof", "bool", "constexpr",
    "false", "nullptr", "static_assert", "thread_local", "true", "typeof", "typeof_unqual", "main",
];

/// Every identifier of the C text that the export writes around the entry point's name: the
/// runner's sources and the entry point's code (comments, strings and numbers skipped).
fn file_identifiers() -> &'static HashSet<String> {
    static IDS: OnceLock<HashSet<String>> = OnceLock::new();
    IDS.get_or_init(|| {
        let mut ids = HashSet::new();
        let sources = crate::native::sources();
        let texts = sources.iter().map(|(_, t)| t.as_str()).chain([
            ENTRY_COMMON,
            ENTRY_BUFFERS,
            ENTRY_SIZES_ONLY,
        ]);
        for t in texts {
            c_identifiers(t, |id| {
                if id != "NAME" {
                    ids.insert(id.to_string());
                }
            });
        }
        ids
    })
}

/// Calls `f` with every identifier of C text `t`, outside comments, string and character
/// literals; numbers (`64ull`, `1e9`) are skipped whole.
fn c_identifiers(t: &str, mut f: impl FnMut(&str)) {
    let b = t.as_bytes();
    let mut i = 0;
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        if b[i..].starts_with(b"/*") {
            i = t[i + 2..].find("*/").map_or(b.len(), |j| i + 2 + j + 2);
        } else if b[i..].starts_with(b"//") {
            i = t[i..].find('\n').map_or(b.len(), |j| i + j);
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c.is_ascii_digit() {
            while i < b.len() && (word(b[i]) || b[i] == b'.') {
                i += 1;
            }
        } else if word(c) {
            let start = i;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            f(&t[start..i]);
        } else {
            i += 1;
        }
    }
}

/// Checks that `name` can name the entry point: a C identifier (a letter or `_`, then letters,
/// digits and `_`), not a keyword or `main`, not reserved (`_` followed by a capital or `_`:
/// the C library; `MPI_`, `PMPI_` in any case: the MPI library; `hce_`: the export's own
/// tables), and not an identifier the exported file uses (the runner's `reduce`,
/// `hc_plan_run`, ...).
pub fn check_c_name(name: &str) -> Result<(), ScheduleError> {
    let refuse = |reason: String| bad("C entry point name", name, reason);
    let b = name.as_bytes();
    let ident = !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_');
    if !ident {
        return Err(refuse(
            "a C identifier is a letter or '_' followed by letters, digits and '_' (ASCII)".into(),
        ));
    }
    if C_KEYWORDS.contains(&name) {
        return Err(refuse(format!("'{name}' is a C keyword or main")));
    }
    if b[0] == b'_' && b.len() > 1 && (b[1] == b'_' || b[1].is_ascii_uppercase()) {
        return Err(refuse(
            "names beginning with '_' and a capital letter or a second '_' are reserved for \
             the C implementation"
                .into(),
        ));
    }
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("mpi_") || lower.starts_with("pmpi_") {
        return Err(refuse(
            "the MPI standard reserves names beginning with MPI_ and PMPI_ (in any case) for \
             the MPI library"
                .into(),
        ));
    }
    if lower.starts_with("hce_") {
        return Err(refuse(
            "names beginning with hce_ name the exported file's own tables and functions".into(),
        ));
    }
    if file_identifiers().contains(name) {
        return Err(refuse(format!(
            "'{name}' is an identifier the exported file already uses (the embedded runner or \
             the entry point's code); choose another, e.g. hc_allreduce_{name}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::allreduce::{self, Algorithm, AllreduceSpec};

    fn allreduce(alg: &str, n: u32, count: u64, dtype: Dtype, op: ReduceOp) -> Schedule {
        let alg = Algorithm::parse(alg).unwrap();
        allreduce::generate(&alg, &AllreduceSpec::new(n, count, dtype, op)).unwrap()
    }

    fn text(s: &Schedule, name: &str) -> String {
        let mut out = Vec::new();
        write_c(s, &CExportOptions::new(name), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_entry_point_has_the_exact_signature() {
        let s = allreduce("recursive_doubling", 4, 37, Dtype::Float64, ReduceOp::Sum);
        let t = text(&s, "hc_allreduce");
        assert!(t.contains(
            "\nint hc_allreduce(const void *sendbuf, void *recvbuf, MPI_Comm comm)\n{\n"
        ));
        // the only function at file scope without `static` (the runner's have HC_API)
        let lines: Vec<&str> = t.lines().collect();
        let external: Vec<&str> = (1..lines.len())
            .filter(|&i| lines[i].starts_with("int ") || lines[i].starts_with("void "))
            .filter(|&i| lines[i - 1] != "HC_API")
            .map(|i| lines[i])
            .collect();
        assert_eq!(
            external,
            ["int hc_allreduce(const void *sendbuf, void *recvbuf, MPI_Comm comm)"]
        );
        for line in [
            "#define HCE_NRANKS 4\n",
            "#define HCE_COUNT 37\n",
            "#define HCE_DTYPE HC_DTYPE_FLOAT64\n",
            "#define HCE_OP HC_REDUCE_SUM\n",
            "#define HCE_INPUT_BYTES ((size_t)296)\n",
            "#define HC_API static __attribute__((unused))\n",
            " * Collective: allreduce of 37 float64 (double) with sum\n",
            " *     MPI_Allreduce(sendbuf, recvbuf, 37, MPI_DOUBLE, MPI_SUM, comm)\n",
            " *     int hc_allreduce(const void *sendbuf, void *recvbuf, MPI_Comm comm);\n",
        ] {
            assert!(t.contains(line), "{line:?} missing");
        }
        // the runner and its headers are inlined, not included
        assert!(!t.contains("#include \"hc_"));
        assert!(t.contains("#define HC_OP_SEND 0\n"));
        assert!(t.contains("HC_API\nint hc_plan_create("));
    }

    #[test]
    fn a_sizes_only_schedule_takes_only_the_communicator() {
        let g = "num_ranks 2\nrank 0 {\nsend 8b to 1 tag 5\ncalc 100\n}\nrank 1 {\nrecv 8b from -1 tag 5\n}\n";
        let s = crate::schedule::goal::parse(g, "two.goal").unwrap();
        let opts = CExportOptions::for_schedule(&s);
        assert_eq!(opts.name, "hc_schedule");
        let e = CExport::new(&s, &opts).unwrap();
        assert_eq!(e.prototype(), "int hc_schedule(MPI_Comm comm)");
        let t = text(&s, "hc_schedule");
        assert!(t.contains("\nint hc_schedule(MPI_Comm comm)\n{\n"));
        assert!(t.contains("#define HCE_MAX_TAG 5\n"));
        assert!(t.contains("#define HCE_DTYPE HC_DTYPE_BYTE\n"));
        assert!(t.contains("static const int64_t hce_peers[3] = {\n    1, -1, -1\n};\n"));
        assert!(t.contains("static const uint64_t hce_peer_start[3] = {\n    0, 2, 3\n};\n"));
    }

    #[test]
    fn ranks_of_one_shape_share_their_tables() {
        let s = allreduce(
            "recursive_doubling",
            4096,
            1000,
            Dtype::Float64,
            ReduceOp::Sum,
        );
        assert_eq!(s.num_shapes(), 1);
        let e = CExport::new(&s, &CExportOptions::new("hc_rd")).unwrap();
        // one body: its ops are written once
        assert_eq!(e.num_bodies(), 1);
        let t = text(&s, "hc_rd");
        assert_eq!(t.matches("static const uint8_t hce_b0_kind[").count(), 1);
        // kind and dep_kind of body 0 only
        assert_eq!(t.matches("static const uint8_t hce_").count(), 2);
        assert_eq!(t.matches(".kind = hce_b0_kind,").count(), 1);
        assert!(t.contains("static const hc_program hce_bodies[1] = {\n"));
        assert!(t.contains("static const uint32_t hce_rank_body[4096] = {\n    0, 0, 0, 0,"));
        // a receive's operand order is the rank's own (the lower rank's value on the left):
        // rank r's combine column spells r's bits, 4096 distinct small columns
        assert_eq!(e.num_combines(), 4096);
        assert_eq!(t.matches("static const int8_t hce_r").count(), 4096);
        assert!(t.contains(
            "static const int8_t *const hce_rank_combine[4096] = {\n    hce_r0_combine, \
             hce_r1_combine,"
        ));
        let ops = s.total_ops();
        assert!(t.contains(&format!("static const int64_t hce_peers[{ops}] = {{\n")));
        assert!(t.contains("static const uint64_t hce_peer_start[4097] = {\n"));
        // rank 1's peers in the flat array (recursive doubling: 1 ^ 2^k)
        let start = s.op_offset(1) as usize;
        let v = s.rank(1);
        let first: Vec<i64> = (0..v.len())
            .map(|i| v.op(i).peer().map_or(-1, |p| p as i64))
            .collect();
        assert_eq!(&e.peers[start..start + v.len()], first.as_slice());
        assert!(e.peers[start..start + v.len()].contains(&3));
        // one table of ops, not 4096: the file stays small
        assert!(t.len() < 2_000_000, "{} bytes", t.len());
    }

    #[test]
    fn distinct_shapes_get_their_own_bodies() {
        let s = allreduce("tree", 3, 10, Dtype::Int32, ReduceOp::Max);
        let e = CExport::new(&s, &CExportOptions::new("hc_tree")).unwrap();
        assert_eq!(s.num_shapes(), 3);
        assert_eq!(e.num_bodies(), 3);
        assert_eq!(e.body_rank, vec![0, 1, 2]);
        let t = text(&s, "hc_tree");
        assert!(t.contains("#define HCE_OP HC_REDUCE_MAX\n"));
        assert!(t.contains("#define HCE_DTYPE HC_DTYPE_INT32\n"));
        assert_eq!(t.matches("    {   /* body ").count(), 3);
    }

    #[test]
    fn names_must_be_c_identifiers_the_file_does_not_use() {
        for ok in [
            "hc_allreduce",
            "my_allreduce2",
            "_private",
            "allreduce_f64",
            "hc_schedule",
        ] {
            check_c_name(ok).unwrap();
        }
        let err = |n: &str| check_c_name(n).unwrap_err().to_string();
        assert_eq!(
            err("2fast"),
            "invalid C entry point name '2fast': a C identifier is a letter or '_' followed by \
             letters, digits and '_' (ASCII)"
        );
        assert!(err("hc-allreduce").contains("a C identifier is a letter"));
        assert!(err("").contains("a C identifier is a letter"));
        assert!(err("héllo").contains("(ASCII)"));
        assert_eq!(
            err("int"),
            "invalid C entry point name 'int': 'int' is a C keyword or main"
        );
        assert!(err("main").contains("C keyword or main"));
        assert!(err("_Foo").contains("reserved for the C implementation"));
        assert!(err("__foo").contains("reserved for the C implementation"));
        assert!(err("MPI_Allreduce").contains("reserves names beginning with MPI_ and PMPI_"));
        assert!(err("pmpi_x").contains("reserves names beginning with MPI_ and PMPI_"));
        assert!(err("hce_bodies").contains("hce_"));
        assert_eq!(
            err("reduce"),
            "invalid C entry point name 'reduce': 'reduce' is an identifier the exported file \
             already uses (the embedded runner or the entry point's code); choose another, e.g. \
             hc_allreduce_reduce"
        );
        for used in [
            "hc_plan_run",
            "hc_plan_create",
            "memcpy",
            "HC_OK",
            "int64_t",
            "rc",
        ] {
            assert!(err(used).contains("already uses"), "{used}");
        }
        // through the writer: refused before anything is written
        let s = allreduce("ring", 2, 4, Dtype::Int32, ReduceOp::Sum);
        let mut out = Vec::new();
        let e = write_c(&s, &CExportOptions::new("9lives"), &mut out).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(out.is_empty());
    }

    #[test]
    fn identifiers_skip_comments_strings_and_numbers() {
        let mut ids = Vec::new();
        c_identifiers(
            "/* alpha */ int beta = 64ull; // gamma\nchar *d = \"delta \\\" eps\"; 'z' x1e9",
            |i| ids.push(i.to_string()),
        );
        assert_eq!(ids, ["int", "beta", "char", "d", "x1e9"]);
    }

    #[test]
    fn refuses_what_cannot_run() {
        let err = |s: &Schedule| {
            CExport::new(s, &CExportOptions::new("f"))
                .unwrap_err()
                .to_string()
        };
        // a message above 2^31 - 1 bytes (ring: each message is a chunk of count / N)
        let s = allreduce(
            "recursive_doubling",
            2,
            1 << 28,
            Dtype::Float64,
            ReduceOp::Sum,
        );
        assert_eq!(
            err(&s),
            "rank 0 op 0: a send of 2147483648 bytes cannot be exported: one MPI call of the \
             runner moves at most 2^31 - 1 = 2147483647 bytes"
        );
        // a buffer whose bytes overflow
        let mut b = crate::schedule::ScheduleBuilder::new(
            1,
            crate::schedule::Meta::allreduce(u64::MAX / 4, Dtype::Float64, ReduceOp::Sum, "big"),
        )
        .unwrap();
        b.push(&mut crate::schedule::Program::new()).unwrap();
        let s = b.finish().unwrap();
        assert_eq!(
            err(&s),
            format!(
                "invalid count '{}': the input buffer of {} elements of float64 (8 bytes each) \
                 exceeds 2^63 - 1 bytes, which the C export cannot address",
                u64::MAX / 4,
                u64::MAX / 4
            )
        );
        // a send with tag -1
        let g =
            "num_ranks 2\nrank 0 {\nsend 8b to 1 tag -1\n}\nrank 1 {\nrecv 8b from 0 tag -1\n}\n";
        let s = crate::schedule::goal::parse(g, "t").unwrap();
        assert_eq!(
            err(&s),
            "rank 0 op 0: a send with tag -1 cannot be exported: MPI has no \"any tag\" for a \
             send; give it a tag of 0 or more"
        );
        // an allreduce of bytes
        let b = crate::schedule::ScheduleBuilder::new(
            1,
            crate::schedule::Meta::allreduce(4, Dtype::Byte, ReduceOp::Sum, "b"),
        )
        .unwrap();
        let mut b = b;
        b.push(&mut crate::schedule::Program::new()).unwrap();
        assert!(err(&b.finish().unwrap()).starts_with(
            "invalid dtype 'byte': an allreduce needs a numeric dtype to reduce; accepted: int8"
        ));
    }

    #[test]
    fn schedule_names_cannot_break_the_comment() {
        assert_eq!(comment_text("a */ b /* c\nd ??/"), "a * / b / * c?d ? ?/");
        let mut s = allreduce("ring", 2, 4, Dtype::Int32, ReduceOp::Sum);
        s = Schedule::from_programs(
            crate::schedule::Meta::allreduce(4, Dtype::Int32, ReduceOp::Sum, "evil */ x"),
            (0..2).map(|r| s.program(r)),
        )
        .unwrap();
        let t = text(&s, "f");
        assert!(t.contains(" * Schedule:   evil * / x\n"));
    }

    #[test]
    fn empty_programs_export() {
        let s = Schedule::from_programs(
            crate::schedule::Meta::sizes_only("empty"),
            [crate::schedule::Program::new()],
        )
        .unwrap();
        let t = text(&s, "hc_empty");
        assert!(t.contains(".nops = 0,\n        .kind = NULL,"));
        assert!(t.contains("static const int64_t hce_peers[1] = {-1};"));
    }
}
