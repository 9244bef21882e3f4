//! The one columnar encoding of a rank's program: what the binding hands to Python, what the
//! MPI executor runs, and what the C runner and exports read.
//!
//! A program of `n` ops is a struct of arrays, one entry per op in program order, plus its
//! dependencies as three parallel arrays sorted by op and the sizes of its scratch buffers:
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `kind` | `u8` | [`OpCode`]: 0 send, 1 recv, 2 reduce, 3 copy, 4 compute, 5 sleep, 6 pack, 7 unpack |
//! | `peer` | `i64` | the peer of a send or receive, −1 for none or any source |
//! | `tag` | `i32` | the tag of a send or receive (−1: any), 0 otherwise |
//! | `bytes` | `u64` | bytes moved, reduced or copied ([`Op::bytes`]) |
//! | `combine` | `i8` | [`Combine`]: 0 assign, 1 `dst = x ⊕ dst`, 2 `dst = dst ⊕ x` |
//! | `cpu`, `nic` | `u16` | GOAL's cpu and nic |
//! | `time_ps` | `u64` | the time of a compute or sleep |
//! | `buf_slot`, `buf_offset`, `buf_len` | `i32`, `u64`, `u64` | the sent or received slice, or the destination of a reduce or copy |
//! | `src_slot`, `src_offset`, `src_len` | `i32`, `u64`, `u64` | the source of a reduce or copy, or the local operand of a fused receive (none: in place) |
//! | `region` | `i64` | a pack's source or an unpack's destination: its row in `regions`; −1 for other ops |
//! | `dep_op`, `dep_on`, `dep_kind` | `u32`, `u32`, `u8` | `dep_op` depends on `dep_on`: [`DepKind`] 0 requires (after it completes), 1 irequires (after it starts) |
//! | `scratch` | `u64` | elements of each scratch buffer |
//! | `regions` | `u64` | [`REGION_FIELDS`] per region: slot code, the array's 4 dims, the box's origin (3) and extent (3), the value mask ([`Region`]) |
//!
//! A pack's `buf_*` is its destination slice and its `src_*` names the region's slot from
//! element 0 with the region's element count; an unpack's `src_*` is its source slice and its
//! `buf_*` the region's slot likewise. The region itself is the op's row of `regions`.
//!
//! Slots are coded 0 input, 1 output, 2 + k scratch k, −1 none ([`Slot::code`]). A message
//! without data semantics (GOAL) has no slice (`buf_slot` −1) and only `bytes`.
//!
//! [`Columns::decode`] reads columns back into a [`Program`], refusing unknown codes and
//! ragged columns; [`Columns::checked`] also proves what an executor relies on: the program is
//! valid ([`Program::validate`]) and every slice of the input and output buffers lies within
//! them. Whoever holds checked columns need not check them again.

use super::error::ScheduleError;
use super::op::{Combine, Dep, DepKind, Op, OpCode, OpKind, Payload, Rank, Region, Slice, Slot};
use super::program::Program;
use super::RankView;
use crate::units::Time;

/// A rank's program as columns (see the [module documentation](self)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Columns {
    /// [`OpCode`] of every op.
    pub kind: Vec<u8>,
    /// Peer of a send or receive; −1 for none or any source.
    pub peer: Vec<i64>,
    /// Tag of a send or receive (−1: any); 0 for local ops.
    pub tag: Vec<i32>,
    /// Bytes moved, reduced or copied.
    pub bytes: Vec<u64>,
    /// [`Combine`] code.
    pub combine: Vec<i8>,
    /// CPU index.
    pub cpu: Vec<u16>,
    /// NIC index.
    pub nic: Vec<u16>,
    /// Time of a compute or sleep, in picoseconds.
    pub time_ps: Vec<u64>,
    /// Slot of the sent or received slice, or of a reduce's or copy's destination.
    pub buf_slot: Vec<i32>,
    /// Its first element.
    pub buf_offset: Vec<u64>,
    /// Its length in elements.
    pub buf_len: Vec<u64>,
    /// Slot of a reduce's or copy's source, or of a fused receive's local operand.
    pub src_slot: Vec<i32>,
    /// Its first element.
    pub src_offset: Vec<u64>,
    /// Its length in elements.
    pub src_len: Vec<u64>,
    /// The op of each dependency (sorted).
    pub dep_op: Vec<u32>,
    /// The op it depends on.
    pub dep_on: Vec<u32>,
    /// [`DepKind`] code.
    pub dep_kind: Vec<u8>,
    /// Elements of each scratch buffer.
    pub scratch: Vec<u64>,
    /// Row in `regions` of a pack's or unpack's region; −1 for other ops.
    pub region: Vec<i64>,
    /// [`REGION_FIELDS`] entries per region (see the module documentation).
    pub regions: Vec<u64>,
}

/// Entries of one region in [`Columns::regions`]: slot code, `dims` (4), `origin` (3),
/// `extent` (3), `values`.
pub const REGION_FIELDS: usize = 12;

fn region_row(r: &Region) -> [u64; REGION_FIELDS] {
    [
        r.slot.code() as u64,
        r.dims[0] as u64,
        r.dims[1] as u64,
        r.dims[2] as u64,
        r.dims[3] as u64,
        r.origin[0] as u64,
        r.origin[1] as u64,
        r.origin[2] as u64,
        r.extent[0] as u64,
        r.extent[1] as u64,
        r.extent[2] as u64,
        r.values,
    ]
}

/// Calls the macro `$then!` with the field names of [`Columns`]'s per-op columns, in the order
/// of the table of [`columns`](crate::schedule::columns): the one list that [`OP_COLUMNS`],
/// [`Columns::with_capacity`], the length check of [`Columns::decode`] and the binding's
/// arrays are written from.
#[macro_export]
macro_rules! op_columns {
    ($then:ident) => {
        $then!(
            kind peer tag bytes combine cpu nic time_ps buf_slot buf_offset buf_len src_slot
            src_offset src_len region
        )
    };
}

macro_rules! names {
    ($($column:ident)*) => {
        [$(stringify!($column)),*]
    };
}

/// The names of the per-op columns, in the order of the table above.
pub const OP_COLUMNS: [&str; 15] = op_columns!(names);

/// The names of the dependency columns.
pub const DEP_COLUMNS: [&str; 3] = ["dep_op", "dep_on", "dep_kind"];

fn slice_cols(s: Option<Slice>) -> (i32, u64, u64) {
    match s {
        Some(s) => (s.slot.code(), s.offset, s.len),
        None => (Slot::NONE_CODE, 0, 0),
    }
}

impl Columns {
    /// Empty columns with room for `ops` ops.
    pub fn with_capacity(ops: usize) -> Columns {
        macro_rules! with_capacity {
            ($($column:ident)*) => {
                Columns {
                    $($column: Vec::with_capacity(ops),)*
                    ..Columns::default()
                }
            };
        }
        op_columns!(with_capacity)
    }

    /// The number of ops.
    pub fn len(&self) -> usize {
        self.kind.len()
    }

    /// Whether there are no ops.
    pub fn is_empty(&self) -> bool {
        self.kind.is_empty()
    }

    fn push(&mut self, op: &Op, deps: &[Dep], elem_size: u32) {
        let i = self.kind.len() as u32;
        let (peer, tag, combine, time, buf, src) = match op.kind {
            OpKind::Send { peer, tag, data } => {
                (Some(peer), tag, Combine::Assign, 0, data.slice(), None)
            }
            OpKind::Recv {
                peer,
                tag,
                data,
                combine,
                operand,
            } => (Some(peer), tag, combine, 0, data.slice(), operand),
            OpKind::Reduce { src, dst, combine } => (None, 0, combine, 0, Some(dst), Some(src)),
            OpKind::Copy { src, dst } => (None, 0, Combine::Assign, 0, Some(dst), Some(src)),
            OpKind::Compute { time } | OpKind::Sleep { time } => {
                (None, 0, Combine::Assign, time, None, None)
            }
            OpKind::Pack { src, dst } => (
                None,
                0,
                Combine::Assign,
                0,
                Some(dst),
                Some(Slice::new(src.slot, 0, src.len())),
            ),
            OpKind::Unpack { src, dst } => (
                None,
                0,
                Combine::Assign,
                0,
                Some(Slice::new(dst.slot, 0, dst.len())),
                Some(src),
            ),
        };
        match op.kind {
            OpKind::Pack { src: r, .. } | OpKind::Unpack { dst: r, .. } => {
                self.region
                    .push((self.regions.len() / REGION_FIELDS) as i64);
                self.regions.extend_from_slice(&region_row(&r));
            }
            _ => self.region.push(-1),
        }
        self.kind.push(op.code() as u8);
        self.peer.push(match peer {
            Some(p) if p != super::ANY_SOURCE => p as i64,
            _ => -1,
        });
        self.tag.push(tag);
        self.bytes.push(op.bytes(elem_size));
        self.combine.push(combine.code());
        self.cpu.push(op.cpu);
        self.nic.push(op.nic);
        self.time_ps.push(time);
        let (s, o, l) = slice_cols(buf);
        self.buf_slot.push(s);
        self.buf_offset.push(o);
        self.buf_len.push(l);
        let (s, o, l) = slice_cols(src);
        self.src_slot.push(s);
        self.src_offset.push(o);
        self.src_len.push(l);
        for d in deps {
            self.dep_op.push(i);
            self.dep_on.push(d.on);
            self.dep_kind.push(d.kind.code());
        }
    }

    /// The columns of a program (its dependencies sorted first, as [`Program::normalize`]
    /// leaves them) with messages of `elem_size`-byte elements.
    pub fn of_program(p: &Program, elem_size: u32) -> Columns {
        let mut c = Columns::with_capacity(p.len());
        for (i, op) in p.ops.iter().enumerate() {
            let deps: Vec<Dep> = p.deps_of(i as u32).iter().map(|(_, d)| *d).collect();
            c.push(op, &deps, elem_size);
        }
        c.scratch = p.scratch_extents();
        c
    }

    /// The columns of one rank of a schedule.
    pub fn of_rank(v: &RankView<'_>, elem_size: u32) -> Columns {
        let mut c = Columns::with_capacity(v.len());
        for i in 0..v.len() {
            c.push(&v.op(i), v.deps(i), elem_size);
        }
        c.scratch = v.shape.scratch.clone();
        c
    }

    /// Reads the columns back into a program of rank `rank`: every column as long as `kind`,
    /// every code known, the dependency columns of one length. Does not validate the program
    /// ([`Columns::checked`] does).
    pub fn decode(&self, rank: Rank) -> Result<Program, ScheduleError> {
        let n = self.kind.len();
        macro_rules! lens {
            ($($column:ident)*) => {
                [$((stringify!($column), self.$column.len())),*]
            };
        }
        for (name, len) in op_columns!(lens) {
            if len != n {
                return Err(ScheduleError::BadParameter {
                    name: "program column".into(),
                    value: name.into(),
                    reason: format!("it has {len} entries; the program has {n} ops"),
                });
            }
        }
        if self.dep_on.len() != self.dep_op.len() || self.dep_kind.len() != self.dep_op.len() {
            return Err(ScheduleError::BadParameter {
                name: "program column".into(),
                value: "dep_on, dep_kind".into(),
                reason: format!(
                    "dep_op, dep_on and dep_kind have {}, {} and {} entries; they must be equal",
                    self.dep_op.len(),
                    self.dep_on.len(),
                    self.dep_kind.len()
                ),
            });
        }
        let mut p = Program::new();
        p.ops.reserve(n);
        for i in 0..n {
            let bad = |reason: String| ScheduleError::BadOp {
                rank,
                op: i as u32,
                reason,
            };
            let slice =
                |slot: i32, offset: u64, len: u64| -> Result<Option<Slice>, ScheduleError> {
                    if slot == Slot::NONE_CODE {
                        return Ok(None);
                    }
                    let s = Slot::from_code(slot).ok_or_else(|| {
                        bad(format!(
                            "unknown slot {slot} (0 input, 1 output, 2 + k scratch k, -1 none)"
                        ))
                    })?;
                    Ok(Some(Slice::new(s, offset, len)))
                };
            let code = OpCode::from_code(self.kind[i]).ok_or_else(|| {
                bad(format!(
                    "unknown kind {} (0 send, 1 recv, 2 reduce, 3 copy, 4 compute, 5 sleep, \
                     6 pack, 7 unpack)",
                    self.kind[i]
                ))
            })?;
            let combine = Combine::from_code(self.combine[i]).ok_or_else(|| {
                bad(format!(
                    "unknown combine {} (0 assign, 1 before, 2 after)",
                    self.combine[i]
                ))
            })?;
            let buf = slice(self.buf_slot[i], self.buf_offset[i], self.buf_len[i])?;
            let src = slice(self.src_slot[i], self.src_offset[i], self.src_len[i])?;
            let peer = match self.peer[i] {
                -1 => super::ANY_SOURCE,
                p if (0..super::ANY_SOURCE as i64).contains(&p) => p as Rank,
                p => return Err(bad(format!("peer {p} is not a rank (or -1)"))),
            };
            let data = match buf {
                Some(s) => Payload::Data(s),
                None => Payload::Bytes(self.bytes[i]),
            };
            let need = |what: &str, s: Option<Slice>| -> Result<Slice, ScheduleError> {
                s.ok_or_else(|| bad(format!("a {} needs a {what} slice", code.name())))
            };
            let time: Time = self.time_ps[i];
            let region = || -> Result<Region, ScheduleError> {
                let row = usize::try_from(self.region[i])
                    .ok()
                    .filter(|&k| (k + 1) * REGION_FIELDS <= self.regions.len())
                    .ok_or_else(|| {
                        bad(format!(
                            "a {} needs a region: region {} is not a row of the {} regions",
                            code.name(),
                            self.region[i],
                            self.regions.len() / REGION_FIELDS
                        ))
                    })?;
                let f = &self.regions[row * REGION_FIELDS..(row + 1) * REGION_FIELDS];
                let slot = i32::try_from(f[0])
                    .ok()
                    .and_then(Slot::from_code)
                    .ok_or_else(|| bad(format!("region of unknown slot {}", f[0])))?;
                let small = |x: u64| -> Result<u32, ScheduleError> {
                    u32::try_from(x).map_err(|_| bad(format!("region field {x} exceeds 2^32 - 1")))
                };
                Ok(Region {
                    slot,
                    dims: [small(f[1])?, small(f[2])?, small(f[3])?, small(f[4])?],
                    origin: [small(f[5])?, small(f[6])?, small(f[7])?],
                    extent: [small(f[8])?, small(f[9])?, small(f[10])?],
                    values: f[11],
                })
            };
            let kind = match code {
                OpCode::Send => OpKind::Send {
                    peer,
                    tag: self.tag[i],
                    data,
                },
                OpCode::Recv => OpKind::Recv {
                    peer,
                    tag: self.tag[i],
                    data,
                    combine,
                    operand: src,
                },
                OpCode::Reduce => OpKind::Reduce {
                    src: need("source", src)?,
                    dst: need("destination", buf)?,
                    combine,
                },
                OpCode::Copy => OpKind::Copy {
                    src: need("source", src)?,
                    dst: need("destination", buf)?,
                },
                OpCode::Compute => OpKind::Compute { time },
                OpCode::Sleep => OpKind::Sleep { time },
                OpCode::Pack => OpKind::Pack {
                    src: region()?,
                    dst: need("destination", buf)?,
                },
                OpCode::Unpack => OpKind::Unpack {
                    src: need("source", src)?,
                    dst: region()?,
                },
            };
            p.ops.push(Op {
                kind,
                cpu: self.cpu[i],
                nic: self.nic[i],
            });
        }
        for j in 0..self.dep_op.len() {
            let kind = DepKind::from_code(self.dep_kind[j]).ok_or_else(|| {
                ScheduleError::BadDependency {
                    rank,
                    op: self.dep_op[j],
                    on: self.dep_on[j],
                    reason: format!(
                        "unknown dependency kind {} (0 requires, 1 irequires)",
                        self.dep_kind[j]
                    ),
                }
            })?;
            p.deps.push((
                self.dep_op[j],
                Dep {
                    on: self.dep_on[j],
                    kind,
                },
            ));
        }
        p.normalize();
        Ok(p)
    }

    /// Decodes the columns as rank `rank` of `nranks` and proves what an executor relies on:
    /// the program is valid ([`Program::validate`]), every slice of `input` and `output` lies
    /// within `buffer_lens` elements, and every scratch buffer is as large as its slices. The
    /// error names the rank, the op and the problem.
    pub fn checked(
        &self,
        rank: Rank,
        nranks: u32,
        buffer_lens: (u64, u64),
    ) -> Result<Program, ScheduleError> {
        let p = self.decode(rank)?;
        p.validate(rank, nranks)?;
        p.check_extents(rank, buffer_lens, &self.scratch)?;
        Ok(p)
    }
}

/// The codes of the encoding as a C header (`#define HC_OP_SEND 0`, ...): op kinds, slots,
/// combines, dependency kinds, dtypes and reduction operators. The native runner, the C export
/// and the C API include it, so C never types a code again.
pub fn c_codes_header() -> String {
    use super::{Dtype, ReduceOp};
    let mut h = String::from(
        "/* The codes of hypercuboid's columnar program encoding, generated by the Rust core\n\
         * (schedule::columns::c_codes_header). Do not edit. */\n\
         #ifndef HC_CODES_H\n#define HC_CODES_H\n\n",
    );
    let mut def = |name: String, value: i64| h.push_str(&format!("#define {name} {value}\n"));
    for k in OpCode::ALL {
        def(format!("HC_OP_{}", k.name().to_uppercase()), k as i64);
    }
    def("HC_SLOT_NONE".into(), Slot::NONE_CODE as i64);
    def("HC_SLOT_INPUT".into(), Slot::Input.code() as i64);
    def("HC_SLOT_OUTPUT".into(), Slot::Output.code() as i64);
    def("HC_SLOT_SCRATCH".into(), Slot::SCRATCH_CODE as i64);
    for c in Combine::ALL {
        def(
            format!("HC_COMBINE_{}", c.name().to_uppercase()),
            c.code() as i64,
        );
    }
    for d in DepKind::ALL {
        def(
            format!("HC_DEP_{}", d.name().to_uppercase()),
            d.code() as i64,
        );
    }
    for d in Dtype::ALL {
        def(
            format!("HC_DTYPE_{}", d.name().to_uppercase()),
            d.code() as i64,
        );
    }
    def("HC_NDTYPES".into(), Dtype::ALL.len() as i64);
    for o in ReduceOp::ALL {
        def(
            format!("HC_REDUCE_{}", o.name().to_uppercase()),
            o.code() as i64,
        );
    }
    def("HC_NREDUCE_OPS".into(), ReduceOp::ALL.len() as i64);
    h.push_str("\n#endif\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Program {
        let mut p = Program::new();
        let a = p.send(1, 3, Slice::new(Slot::Input, 0, 2));
        let b = p.recv_reduce_into(
            1,
            3,
            Slice::new(Slot::Input, 0, 2),
            Slice::new(Slot::Scratch(0), 0, 2),
            Combine::Before,
        );
        let c = p.copy(
            Slice::new(Slot::Scratch(0), 0, 2),
            Slice::new(Slot::Output, 0, 2),
        );
        p.requires(c, b);
        p.irequires(b, a);
        p.compute(1500);
        p.push(Op::new(OpKind::Recv {
            peer: super::super::ANY_SOURCE,
            tag: -1,
            data: Payload::Bytes(64),
            combine: Combine::Assign,
            operand: None,
        }));
        p.normalize();
        p
    }

    #[test]
    fn encodes_and_decodes_every_kind() {
        let p = sample();
        let c = Columns::of_program(&p, 8);
        assert_eq!(c.kind, vec![0, 1, 3, 4, 1]);
        assert_eq!(c.peer, vec![1, 1, -1, -1, -1]);
        assert_eq!(c.tag, vec![3, 3, 0, 0, -1]);
        assert_eq!(c.bytes, vec![16, 16, 16, 0, 64]);
        assert_eq!(c.combine, vec![0, 1, 0, 0, 0]);
        assert_eq!(c.buf_slot, vec![0, 2, 1, -1, -1]);
        assert_eq!(c.src_slot, vec![-1, 0, 2, -1, -1]);
        assert_eq!(c.time_ps, vec![0, 0, 0, 1500, 0]);
        assert_eq!(
            (c.dep_op.clone(), c.dep_on.clone(), c.dep_kind.clone()),
            (vec![1, 2], vec![0, 1], vec![1, 0])
        );
        assert_eq!(c.scratch, vec![2]);
        assert_eq!(c.decode(0).unwrap(), p);
        assert_eq!(c.checked(0, 2, (2, 2)).unwrap(), p);
    }

    #[test]
    fn every_op_column_is_named_and_of_the_programs_length() {
        assert_eq!(
            OP_COLUMNS.join(" "),
            "kind peer tag bytes combine cpu nic time_ps buf_slot buf_offset buf_len src_slot \
             src_offset src_len region"
        );
        let c = Columns::of_program(&sample(), 8);
        for (name, longer) in [
            (
                "peer",
                Columns {
                    peer: vec![0; 6],
                    ..c.clone()
                },
            ),
            (
                "cpu",
                Columns {
                    cpu: vec![0; 6],
                    ..c.clone()
                },
            ),
            (
                "region",
                Columns {
                    region: vec![-1; 6],
                    ..c.clone()
                },
            ),
        ] {
            assert_eq!(
                longer.decode(0).unwrap_err().to_string(),
                format!("invalid program column '{name}': it has 6 entries; the program has 5 ops")
            );
        }
    }

    #[test]
    fn the_c_header_carries_every_code() {
        let h = c_codes_header();
        for line in [
            "#define HC_OP_SEND 0\n",
            "#define HC_OP_SLEEP 5\n",
            "#define HC_SLOT_NONE -1\n",
            "#define HC_SLOT_SCRATCH 2\n",
            "#define HC_COMBINE_AFTER 2\n",
            "#define HC_DEP_IREQUIRES 1\n",
            "#define HC_DTYPE_INT8 0\n",
            "#define HC_DTYPE_FLOAT64 9\n",
            "#define HC_DTYPE_BYTE 10\n",
            "#define HC_REDUCE_MIN 3\n",
        ] {
            assert!(h.contains(line), "{line} missing from\n{h}");
        }
    }

    #[test]
    fn refuses_what_an_executor_cannot_run() {
        let c = Columns::of_program(&sample(), 8);
        // The error of checking `c` after `change`.
        let err = |change: &dyn Fn(&mut Columns)| {
            let mut x = c.clone();
            change(&mut x);
            x.checked(0, 2, (2, 2)).unwrap_err().to_string()
        };
        assert_eq!(
            err(&|x| x.kind[3] = 9),
            "rank 0 op 3: unknown kind 9 (0 send, 1 recv, 2 reduce, 3 copy, 4 compute, 5 sleep, \
             6 pack, 7 unpack)"
        );
        assert_eq!(
            err(&|x| {
                x.peer.pop();
            }),
            "invalid program column 'peer': it has 4 entries; the program has 5 ops"
        );
        assert_eq!(
            err(&|x| x.buf_slot[0] = -7),
            "rank 0 op 0: unknown slot -7 (0 input, 1 output, 2 + k scratch k, -1 none)"
        );
        assert_eq!(
            err(&|x| x.peer[0] = 2),
            "rank 0 op 0: send to rank 2 but the schedule has ranks 0..2"
        );
        assert_eq!(
            err(&|x| {
                x.buf_len[2] = 3;
                x.src_len[2] = 3;
                x.scratch[0] = 3;
            }),
            "rank 0 op 2: copy slice out[0:3] is outside the output buffer (2 elements)"
        );
        assert_eq!(
            err(&|x| x.scratch[0] = 1),
            "rank 0 op 1: recv slice scratch0[0:2] is outside scratch buffer 0 (1 elements)"
        );
        assert_eq!(
            err(&|x| x.dep_kind[0] = 4),
            "rank 0 op 1 depends on op 0: unknown dependency kind 4 (0 requires, 1 irequires)"
        );
        assert_eq!(
            err(&|x| x.dep_on[0] = 1),
            "rank 0 op 1 depends on op 1: an op cannot depend on itself"
        );
    }
}
