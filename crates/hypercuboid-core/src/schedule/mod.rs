//! The schedule: one program of ops per rank, with GOAL dependencies and data semantics.
//!
//! # Storage
//! Ranks of a collective mostly run the same program up to their peers. A [`Schedule`] therefore
//! stores each distinct program *shape* (ops with the peer left out, and dependencies) once, and
//! per rank only the index of its shape and a column of peers (struct of arrays). Recursive
//! doubling on 2^20 ranks (40 ops a rank) takes 4 bytes an op plus a handful of shapes. Any
//! schedule can be stored (each rank may have a shape of its own); sharing is found by hashing.
//!
//! # Semantics
//! Ops name buffer [`Slice`]s of the rank's `input`, `output` and `scratch k` buffers, so one
//! schedule is simulated (sizes only), verified (symbolically) and executed (real data). A
//! schedule imported from GOAL text carries only sizes ([`Payload::Bytes`]).

pub mod columns;
mod error;
pub mod export_c;
pub mod goal;
pub mod halo;
mod op;
mod program;
pub mod verify;

pub use columns::Columns;
pub use error::ScheduleError;
pub use export_c::{check_c_name, write_c, CExport, CExportOptions};
pub use op::{
    Combine, Dep, DepKind, Op, OpCode, OpKind, Payload, Rank, Region, Slice, Slot, ANY_SOURCE,
    ANY_TAG,
};
pub use program::{OpId, Program};

use rustc_hash::FxHasher;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};

/// Element type of the vectors a collective works on (NumPy names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dtype {
    Int8,
    Int16,
    Int32,
    Int64,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Float32,
    Float64,
    /// Opaque bytes (schedules without data semantics, e.g. imported GOAL).
    Byte,
}

impl Dtype {
    /// Every dtype, in the order error messages list them.
    pub const ALL: [Dtype; 11] = [
        Dtype::Int8,
        Dtype::Int16,
        Dtype::Int32,
        Dtype::Int64,
        Dtype::Uint8,
        Dtype::Uint16,
        Dtype::Uint32,
        Dtype::Uint64,
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Byte,
    ];

    /// The dtype's code, shared with Python and C: its index in [`Dtype::ALL`].
    pub fn code(self) -> u8 {
        Dtype::ALL
            .iter()
            .position(|d| *d == self)
            .expect("every dtype is in ALL") as u8
    }

    /// Size of one element in bytes.
    pub const fn size(self) -> u32 {
        match self {
            Dtype::Int8 | Dtype::Uint8 | Dtype::Byte => 1,
            Dtype::Int16 | Dtype::Uint16 => 2,
            Dtype::Int32 | Dtype::Uint32 | Dtype::Float32 => 4,
            Dtype::Int64 | Dtype::Uint64 | Dtype::Float64 => 8,
        }
    }

    /// The NumPy name (`float64`, `int32`, ...; `byte` for opaque bytes).
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::Int8 => "int8",
            Dtype::Int16 => "int16",
            Dtype::Int32 => "int32",
            Dtype::Int64 => "int64",
            Dtype::Uint8 => "uint8",
            Dtype::Uint16 => "uint16",
            Dtype::Uint32 => "uint32",
            Dtype::Uint64 => "uint64",
            Dtype::Float32 => "float32",
            Dtype::Float64 => "float64",
            Dtype::Byte => "byte",
        }
    }

    /// Parses a NumPy name.
    pub fn parse(name: &str) -> Result<Dtype, ScheduleError> {
        Dtype::ALL
            .iter()
            .copied()
            .find(|d| d.name() == name)
            .ok_or_else(|| ScheduleError::UnknownName {
                what: "dtype",
                name: name.to_string(),
                accepted: Dtype::ALL.iter().map(|d| d.name().to_string()).collect(),
            })
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The reduction operator of a reducing collective (MPI names, lower case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
}

impl ReduceOp {
    /// Every operator.
    pub const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min];

    /// The operator's code, shared with Python and C: its index in [`ReduceOp::ALL`].
    pub fn code(self) -> u8 {
        ReduceOp::ALL
            .iter()
            .position(|o| *o == self)
            .expect("every operator is in ALL") as u8
    }

    /// `sum`, `prod`, `max`, `min`.
    pub const fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }

    /// Parses `sum`, `prod`, `max` or `min`.
    pub fn parse(name: &str) -> Result<ReduceOp, ScheduleError> {
        ReduceOp::ALL
            .iter()
            .copied()
            .find(|o| o.name() == name)
            .ok_or_else(|| ScheduleError::UnknownName {
                what: "reduction op",
                name: name.to_string(),
                accepted: ReduceOp::ALL.iter().map(|o| o.name().to_string()).collect(),
            })
    }
}

impl fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a schedule computes (its data semantics), which tells the verifier what "correct" means
/// and the executor which buffers a rank has. Each collective carries what it needs: the
/// reduction operator of a reducing collective, the blocks or the decomposition of the ones to
/// come (alltoall, halo exchange).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Collective {
    /// No data semantics (e.g. imported GOAL): only matching and deadlock are checked.
    None,
    /// Every rank's `output` ends as the reduction with `op` of every rank's `input`, element
    /// by element; both have `count` elements.
    Allreduce {
        /// The reduction operator.
        op: ReduceOp,
    },
    /// Personalised all-to-all exchange: rank `i`'s `input` holds `N` blocks of `block`
    /// elements, block `j` for rank `j`; every rank `j`'s `output` ends with rank `i`'s block
    /// `j` at block position `i`, for every `i` (`MPI_Alltoall` with `sendcount = recvcount =
    /// block`). Both buffers have `N × block` elements ([`Meta::count`]).
    Alltoall {
        /// Elements each rank sends to each rank (MPI's `sendcount`).
        block: u64,
    },
    /// Halo exchange of a 3-D decomposition ([`halo`]): every rank's `output` is its local
    /// array with the halo (its own length per rank, [`Meta::rank_buffer_lens`]), updated in
    /// place; every halo value the stencil requires ends as the value of the neighbour's
    /// subdomain site it mirrors, every other element unchanged. The `input` is empty.
    Halo(halo::HaloSpec),
}

impl Collective {
    /// The names schedule text reads, in the order error messages list them (a halo exchange
    /// carries its decomposition, which the text does not hold: it is generated, not read).
    pub const NAMES: &'static [&'static str] = &["none", "allreduce", "alltoall"];

    /// `none`, `allreduce`, `alltoall`, `halo`.
    pub const fn name(&self) -> &'static str {
        match self {
            Collective::None => "none",
            Collective::Allreduce { .. } => "allreduce",
            Collective::Alltoall { .. } => "alltoall",
            Collective::Halo(_) => "halo",
        }
    }

    /// Whether the collective has data semantics (the verifier checks its result).
    pub const fn has_data(&self) -> bool {
        !matches!(self, Collective::None)
    }

    /// The reduction operator of a reducing collective.
    pub const fn op(&self) -> Option<ReduceOp> {
        match self {
            Collective::Allreduce { op } => Some(*op),
            Collective::None | Collective::Alltoall { .. } | Collective::Halo(_) => None,
        }
    }

    /// The elements each rank sends to each rank, for an alltoall.
    pub const fn block(&self) -> Option<u64> {
        match self {
            Collective::Alltoall { block } => Some(*block),
            Collective::None | Collective::Allreduce { .. } | Collective::Halo(_) => None,
        }
    }

    /// The halo exchange, for a halo collective.
    pub const fn halo(&self) -> Option<&halo::HaloSpec> {
        match self {
            Collective::Halo(h) => Some(h),
            _ => None,
        }
    }

    /// The collective named `name` (one of [`Collective::NAMES`]), with `op` where it reduces
    /// (`sum` when not given; the others ignore it). An alltoall comes with a block of 0
    /// elements: set its block with [`Collective::Alltoall`] (the text form gives it apart).
    pub fn parse(name: &str, op: Option<ReduceOp>) -> Result<Collective, ScheduleError> {
        match name {
            "none" => Ok(Collective::None),
            "allreduce" => Ok(Collective::Allreduce {
                op: op.unwrap_or(ReduceOp::Sum),
            }),
            "alltoall" => Ok(Collective::Alltoall { block: 0 }),
            "halo" => Err(ScheduleError::BadParameter {
                name: "collective".into(),
                value: name.to_string(),
                reason: format!(
                    "a halo exchange carries its decomposition, which schedule text does not \
                     hold; generate it (collectives::halo) instead; accepted here: {}",
                    Collective::NAMES.join(", ")
                ),
            }),
            _ => Err(ScheduleError::UnknownName {
                what: "collective",
                name: name.to_string(),
                accepted: Collective::NAMES.iter().map(|n| n.to_string()).collect(),
            }),
        }
    }
}

/// What a schedule computes and on what data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The collective (what correctness means), with its operator where it reduces.
    pub collective: Collective,
    /// Elements in each rank's input vector (and its output vector, for an allreduce).
    pub count: u64,
    /// Element type.
    pub dtype: Dtype,
    /// Free text naming how the schedule was made (`allreduce recursive_doubling`, a file name).
    pub name: String,
}

impl Meta {
    /// A schedule with no data semantics (sizes only).
    pub fn sizes_only(name: impl Into<String>) -> Meta {
        Meta {
            collective: Collective::None,
            count: 0,
            dtype: Dtype::Byte,
            name: name.into(),
        }
    }

    /// An allreduce of `count` elements of `dtype` with `op`.
    pub fn allreduce(count: u64, dtype: Dtype, op: ReduceOp, name: impl Into<String>) -> Meta {
        Meta {
            collective: Collective::Allreduce { op },
            count,
            dtype,
            name: name.into(),
        }
    }

    /// An alltoall on `nranks` ranks of `block` elements of `dtype` per pair of ranks: both
    /// buffers have `nranks × block` elements (`count`). `None` when that overflows a `u64`.
    pub fn alltoall(
        nranks: u32,
        block: u64,
        dtype: Dtype,
        name: impl Into<String>,
    ) -> Option<Meta> {
        Some(Meta {
            collective: Collective::Alltoall { block },
            count: block.checked_mul(nranks as u64)?,
            dtype,
            name: name.into(),
        })
    }

    /// A halo exchange of `spec` with `dtype` values: `count` is the largest local array (the
    /// lengths of each rank's are [`Meta::rank_buffer_lens`]).
    pub fn halo(spec: halo::HaloSpec, dtype: Dtype, name: impl Into<String>) -> Meta {
        Meta {
            collective: Collective::Halo(spec),
            count: spec.max_local_len(),
            dtype,
            name: name.into(),
        }
    }

    /// Bytes per element.
    pub fn elem_size(&self) -> u32 {
        self.dtype.size()
    }

    /// The reduction operator, for a reducing collective.
    pub fn op(&self) -> Option<ReduceOp> {
        self.collective.op()
    }

    /// Elements of a rank's `input` and `output` buffers (`count` both, for every collective
    /// so far: an alltoall's `count` is its `N × block`), which the executor allocates and
    /// every data slice of a program must fit.
    /// A halo exchange's `input` is empty and its `output` as long as the largest local array.
    pub fn buffer_lens(&self) -> (u64, u64) {
        match self.collective {
            Collective::None | Collective::Allreduce { .. } | Collective::Alltoall { .. } => {
                (self.count, self.count)
            }
            Collective::Halo(_) => (0, self.count),
        }
    }

    /// Elements of rank `rank`'s `input` and `output` buffers: [`Meta::buffer_lens`], except
    /// for a halo exchange, whose local arrays differ between ranks.
    pub fn rank_buffer_lens(&self, rank: Rank) -> (u64, u64) {
        match self.collective {
            Collective::Halo(h) => (0, h.local_len(rank)),
            _ => self.buffer_lens(),
        }
    }
}

/// The form an op takes in a [`Shape`]: no peer, and a receive's [`Combine`] stated as if the
/// peer were above the rank, so that exchanges which put the lower rank's value on the left
/// (MPICH's order for non-commutative operators) share one shape across ranks.
fn canonical(op: &Op, rank: Rank) -> Op {
    let mut c = op.with_peer(0);
    if let (OpKind::Recv { peer, .. }, OpKind::Recv { combine, .. }) = (&op.kind, &mut c.kind) {
        if *peer < rank {
            *combine = combine.flipped();
        }
    }
    c
}

/// A distinct program, without peers. Shared by every rank that runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Ops in program order, in canonical form: send/recv peers are 0 here (each rank's peers
    /// are stored apart) and a receive's `combine` is stated as seen from a peer above the rank.
    /// Read ops through [`RankView::op`], which restores both.
    pub ops: Vec<Op>,
    /// `deps[dep_start[i]..dep_start[i + 1]]` are the dependencies of op `i`, sorted.
    pub dep_start: Vec<u32>,
    /// Dependencies (CSR).
    pub deps: Vec<Dep>,
    /// `dependents[dependent_start[i]..dependent_start[i + 1]]`: ops that depend on op `i`.
    pub dependent_start: Vec<u32>,
    /// Reverse dependencies (CSR): `(op, kind)`.
    pub dependents: Vec<(u32, DepKind)>,
    /// Elements each scratch slot needs.
    pub scratch: Vec<u64>,
}

impl Shape {
    fn from_program(p: &Program, rank: Rank) -> Shape {
        let n = p.ops.len();
        let ops = p.ops.iter().map(|o| canonical(o, rank)).collect();
        let mut dep_start = Vec::with_capacity(n + 1);
        let mut deps = Vec::with_capacity(p.deps.len());
        let mut counts = vec![0u32; n + 1];
        let mut j = 0;
        for i in 0..n as u32 {
            dep_start.push(deps.len() as u32);
            while j < p.deps.len() && p.deps[j].0 == i {
                deps.push(p.deps[j].1);
                counts[p.deps[j].1.on as usize] += 1;
                j += 1;
            }
        }
        dep_start.push(deps.len() as u32);
        let mut dependent_start = Vec::with_capacity(n + 1);
        let mut acc = 0;
        for c in &counts[..n] {
            dependent_start.push(acc);
            acc += c;
        }
        dependent_start.push(acc);
        let mut fill = dependent_start.clone();
        let mut dependents = vec![(0u32, DepKind::Requires); acc as usize];
        for &(a, d) in &p.deps {
            let slot = &mut fill[d.on as usize];
            dependents[*slot as usize] = (a, d.kind);
            *slot += 1;
        }
        Shape {
            ops,
            dep_start,
            deps,
            dependent_start,
            dependents,
            scratch: p.scratch_extents(),
        }
    }

    /// Number of ops.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the shape has no ops.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Dependencies of op `i`.
    pub fn deps(&self, i: usize) -> &[Dep] {
        &self.deps[self.dep_start[i] as usize..self.dep_start[i + 1] as usize]
    }

    /// Ops that depend on op `i`.
    pub fn dependents(&self, i: usize) -> &[(u32, DepKind)] {
        &self.dependents[self.dependent_start[i] as usize..self.dependent_start[i + 1] as usize]
    }

    fn matches(&self, p: &Program, rank: Rank) -> bool {
        if self.ops.len() != p.ops.len() || self.deps.len() != p.deps.len() {
            return false;
        }
        if !self
            .ops
            .iter()
            .zip(&p.ops)
            .all(|(a, b)| *a == canonical(b, rank))
        {
            return false;
        }
        // p.deps are sorted by op; the shape's CSR lists them in the same order.
        let mut k = 0;
        for i in 0..self.ops.len() {
            for d in self.deps(i) {
                if p.deps[k] != (i as u32, *d) {
                    return false;
                }
                k += 1;
            }
        }
        true
    }
}

fn shape_hash(p: &Program, rank: Rank) -> u64 {
    let mut h = FxHasher::default();
    p.ops.len().hash(&mut h);
    for o in &p.ops {
        canonical(o, rank).hash(&mut h);
    }
    p.deps.hash(&mut h);
    h.finish()
}

/// A read-only view of one rank's program inside a [`Schedule`].
#[derive(Clone, Copy, Debug)]
pub struct RankView<'a> {
    /// The rank.
    pub rank: Rank,
    /// Its program shape.
    pub shape: &'a Shape,
    /// Its peers, one per op ([`ANY_SOURCE`] for local ops and wildcard receives).
    pub peers: &'a [Rank],
}

impl<'a> RankView<'a> {
    /// Number of ops.
    pub fn len(&self) -> usize {
        self.shape.ops.len()
    }

    /// Whether the rank has no ops.
    pub fn is_empty(&self) -> bool {
        self.shape.ops.is_empty()
    }

    /// Op `i` with its real peer (and a receive's real operand order).
    pub fn op(&self, i: usize) -> Op {
        let op = self.shape.ops[i];
        match op.kind {
            OpKind::Send { .. } => op.with_peer(self.peers[i]),
            OpKind::Recv { .. } => {
                let peer = self.peers[i];
                let mut op = op.with_peer(peer);
                if peer < self.rank {
                    if let OpKind::Recv { combine, .. } = &mut op.kind {
                        *combine = combine.flipped();
                    }
                }
                op
            }
            _ => op,
        }
    }

    /// Dependencies of op `i`.
    pub fn deps(&self, i: usize) -> &'a [Dep] {
        self.shape.deps(i)
    }

    /// Ops that depend on op `i`.
    pub fn dependents(&self, i: usize) -> &'a [(u32, DepKind)] {
        self.shape.dependents(i)
    }
}

/// A complete schedule: `nranks` programs and what they compute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    meta: Meta,
    shapes: Vec<Shape>,
    rank_shape: Vec<u32>,
    peer_start: Vec<u64>,
    peers: Vec<Rank>,
}

impl Schedule {
    /// Number of ranks.
    pub fn nranks(&self) -> u32 {
        self.rank_shape.len() as u32
    }

    /// What the schedule computes.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// Bytes per element.
    pub fn elem_size(&self) -> u32 {
        self.meta.elem_size()
    }

    /// Rank `r`'s program as a view into the shared storage.
    pub fn rank(&self, r: Rank) -> RankView<'_> {
        let shape = &self.shapes[self.rank_shape[r as usize] as usize];
        let lo = self.peer_start[r as usize] as usize;
        let hi = self.peer_start[r as usize + 1] as usize;
        RankView {
            rank: r,
            shape,
            peers: &self.peers[lo..hi],
        }
    }

    /// Rank `r`'s program, materialised.
    pub fn program(&self, r: Rank) -> Program {
        let v = self.rank(r);
        let mut p = Program::new();
        for i in 0..v.len() {
            p.ops.push(v.op(i));
            for d in v.deps(i) {
                p.deps.push((i as u32, *d));
            }
        }
        p
    }

    /// Total number of ops over all ranks.
    pub fn total_ops(&self) -> u64 {
        self.peers.len() as u64
    }

    /// Number of distinct program shapes.
    pub fn num_shapes(&self) -> usize {
        self.shapes.len()
    }

    /// The distinct shapes.
    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }

    /// Index of rank `r`'s shape in [`Schedule::shapes`].
    pub fn shape_index(&self, r: Rank) -> usize {
        self.rank_shape[r as usize] as usize
    }

    /// Offset of rank `r`'s first op in a flat numbering of all ops (`0..total_ops()`), for
    /// engines that keep one state column over every op.
    pub fn op_offset(&self, r: Rank) -> u64 {
        self.peer_start[r as usize]
    }

    /// Every op's peer in that flat numbering: rank `r`'s op `i` at `op_offset(r) + i`
    /// ([`ANY_SOURCE`] for local ops and wildcard receives), what [`RankView::peers`] slices.
    pub fn peer_column(&self) -> &[Rank] {
        &self.peers
    }

    /// Bytes of heap the schedule occupies (approximately: shapes are counted by their ops).
    pub fn memory_bytes(&self) -> usize {
        let shapes: usize = self
            .shapes
            .iter()
            .map(|s| {
                s.ops.len() * std::mem::size_of::<Op>()
                    + (s.dep_start.len() + s.dependent_start.len()) * 4
                    + s.deps.len() * std::mem::size_of::<Dep>()
                    + s.dependents.len() * 8
            })
            .sum();
        shapes + self.rank_shape.len() * 4 + self.peer_start.len() * 8 + self.peers.len() * 4
    }

    /// Builds a schedule from one program per rank, in rank order.
    pub fn from_programs(
        meta: Meta,
        programs: impl IntoIterator<Item = Program>,
    ) -> Result<Schedule, ScheduleError> {
        let programs: Vec<Program> = programs.into_iter().collect();
        let mut b = ScheduleBuilder::new(programs.len() as u64, meta)?;
        for mut p in programs {
            b.push(&mut p)?;
        }
        b.finish()
    }
}

/// Builds a [`Schedule`] one rank at a time, sharing identical program shapes.
#[derive(Debug)]
pub struct ScheduleBuilder {
    nranks: u32,
    meta: Meta,
    shapes: Vec<Shape>,
    index: HashMap<u64, Vec<u32>, rustc_hash::FxBuildHasher>,
    rank_shape: Vec<u32>,
    peer_start: Vec<u64>,
    peers: Vec<Rank>,
}

/// Largest number of ranks a schedule may have.
pub const MAX_RANKS: u64 = (u32::MAX - 1) as u64;

impl ScheduleBuilder {
    /// A builder for `nranks` ranks (1 ..= [`MAX_RANKS`]).
    pub fn new(nranks: u64, meta: Meta) -> Result<ScheduleBuilder, ScheduleError> {
        if nranks == 0 || nranks > MAX_RANKS {
            return Err(ScheduleError::BadRankCount {
                nranks,
                reason: format!("a schedule has 1 to {MAX_RANKS} ranks"),
            });
        }
        if let Collective::Alltoall { block } = meta.collective {
            if block.checked_mul(nranks) != Some(meta.count) {
                return Err(ScheduleError::BadParameter {
                    name: "alltoall count".into(),
                    value: meta.count.to_string(),
                    reason: format!(
                        "an alltoall of {nranks} ranks with blocks of {block} elements has \
                         buffers of {nranks} x {block} elements"
                    ),
                });
            }
        }
        let mut peer_start = Vec::with_capacity(nranks as usize + 1);
        peer_start.push(0);
        Ok(ScheduleBuilder {
            nranks: nranks as u32,
            meta,
            shapes: Vec::new(),
            index: HashMap::default(),
            rank_shape: Vec::with_capacity(nranks as usize),
            peer_start,
            peers: Vec::new(),
        })
    }

    /// Reserves room for `ops` more ops in the peer column.
    pub fn reserve_ops(&mut self, ops: usize) {
        self.peers.reserve(ops);
    }

    /// The rank whose program is pushed next.
    pub fn next_rank(&self) -> Rank {
        self.rank_shape.len() as Rank
    }

    /// Appends the program of the next rank. The program's dependencies are sorted in place.
    pub fn push(&mut self, program: &mut Program) -> Result<(), ScheduleError> {
        let rank = self.next_rank();
        if rank >= self.nranks {
            return Err(ScheduleError::RankOrder {
                expected: self.nranks,
                got: rank,
            });
        }
        program.normalize();
        program.validate(rank, self.nranks)?;
        let shape = self.intern(program, rank);
        self.rank_shape.push(shape);
        self.peers
            .extend(program.ops.iter().map(|o| o.peer().unwrap_or(ANY_SOURCE)));
        self.peer_start.push(self.peers.len() as u64);
        Ok(())
    }

    fn intern(&mut self, p: &Program, rank: Rank) -> u32 {
        // Consecutive ranks usually share a shape: try the last one before hashing.
        if let Some(&last) = self.rank_shape.last() {
            if self.shapes[last as usize].matches(p, rank) {
                return last;
            }
        }
        let h = shape_hash(p, rank);
        if let Some(ids) = self.index.get(&h) {
            for &id in ids {
                if self.shapes[id as usize].matches(p, rank) {
                    return id;
                }
            }
        }
        let id = self.shapes.len() as u32;
        self.shapes.push(Shape::from_program(p, rank));
        self.index.entry(h).or_default().push(id);
        id
    }

    /// The finished schedule; every rank must have a program.
    pub fn finish(self) -> Result<Schedule, ScheduleError> {
        if self.rank_shape.len() as u32 != self.nranks {
            return Err(ScheduleError::Incomplete {
                ranks_built: self.rank_shape.len() as u32,
                nranks: self.nranks,
            });
        }
        let mut peers = self.peers;
        peers.shrink_to_fit();
        Ok(Schedule {
            meta: self.meta,
            shapes: self.shapes,
            rank_shape: self.rank_shape,
            peer_start: self.peer_start,
            peers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairwise(rank: u32, n: u32) -> Program {
        let mut p = Program::new();
        let peer = rank ^ 1;
        let all = Slice::new(Slot::Input, 0, 4);
        let out = Slice::new(Slot::Output, 0, 4);
        let c = p.copy(all, out);
        let s = p.send(peer % n, 0, all);
        let r = p.recv_reduce(peer % n, 0, out, Combine::rank_order(rank, peer % n));
        p.requires(r, c);
        p.irequires(s, c);
        p
    }

    #[test]
    fn shares_shapes_and_restores_peers() {
        let meta = Meta::allreduce(4, Dtype::Float64, ReduceOp::Sum, "test");
        let s = Schedule::from_programs(meta, (0..8).map(|r| pairwise(r, 8))).unwrap();
        assert_eq!(s.nranks(), 8);
        assert_eq!(s.num_shapes(), 1);
        assert_eq!(s.total_ops(), 24);
        for r in 0..8 {
            let mut expect = pairwise(r, 8);
            expect.normalize();
            assert_eq!(s.program(r), expect);
            assert_eq!(s.rank(r).op(1).peer(), Some(r ^ 1));
        }
        let v = s.rank(3);
        assert_eq!(
            v.deps(2),
            &[Dep {
                on: 0,
                kind: DepKind::Requires
            }]
        );
        assert_eq!(
            v.dependents(0),
            &[(1, DepKind::IRequires), (2, DepKind::Requires)]
        );
        assert!(v.dependents(2).is_empty());
    }

    #[test]
    fn rank_ordered_reductions_share_a_shape() {
        // MPICH's order: the lower rank's value on the left. Rank 2k receives from 2k+1 with
        // `After`, rank 2k+1 from 2k with `Before`; stored relative to the peer, both are alike.
        let meta = Meta::allreduce(1, Dtype::Float64, ReduceOp::Sum, "t");
        let progs = (0..4u32).map(|r| {
            let mut p = Program::new();
            let x = Slice::new(Slot::Input, 0, 1);
            let y = Slice::new(Slot::Output, 0, 1);
            p.send(r ^ 1, 0, x);
            p.recv_reduce_into(r ^ 1, 0, x, y, Combine::rank_order(r, r ^ 1));
            p
        });
        let s = Schedule::from_programs(meta, progs).unwrap();
        assert_eq!(s.num_shapes(), 1);
        for r in 0..4 {
            let OpKind::Recv {
                combine, operand, ..
            } = s.rank(r).op(1).kind
            else {
                panic!("op 1 is a recv")
            };
            let expect = if r % 2 == 0 {
                Combine::After
            } else {
                Combine::Before
            };
            assert_eq!(combine, expect, "rank {r}");
            assert_eq!(operand, Some(Slice::new(Slot::Input, 0, 1)));
        }
    }

    #[test]
    fn distinct_shapes_are_kept_apart() {
        let meta = Meta::sizes_only("t");
        let mut progs = vec![Program::new(), Program::new()];
        progs[0].send(1, 0, Slice::new(Slot::Input, 0, 1));
        progs[1].recv(0, 0, Slice::new(Slot::Output, 0, 1));
        let s = Schedule::from_programs(meta, progs).unwrap();
        assert_eq!(s.num_shapes(), 2);
        assert_eq!(s.rank(0).op(0).name(), "send");
        assert_eq!(s.rank(1).op(0).name(), "recv");
    }

    #[test]
    fn rejects_bad_programs() {
        let meta = Meta::sizes_only("t");
        let mut b = ScheduleBuilder::new(2, meta.clone()).unwrap();
        let mut p = Program::new();
        p.send(2, 0, Slice::new(Slot::Input, 0, 1));
        assert_eq!(
            b.push(&mut p).unwrap_err().to_string(),
            "rank 0 op 0: send to rank 2 but the schedule has ranks 0..2"
        );
        let mut p = Program::new();
        let a = p.compute(5);
        p.requires(a, 7);
        assert_eq!(
            b.push(&mut p).unwrap_err().to_string(),
            "rank 0 op 0 depends on op 7: op index out of range (the rank has 1 ops)"
        );
        assert_eq!(
            ScheduleBuilder::new(0, meta.clone())
                .unwrap_err()
                .to_string(),
            format!("invalid number of ranks 0: a schedule has 1 to {MAX_RANKS} ranks")
        );
        let b = ScheduleBuilder::new(3, meta).unwrap();
        assert_eq!(
            b.finish().unwrap_err().to_string(),
            "schedule has programs for 0 of 3 ranks"
        );
        assert!(Dtype::parse("float128")
            .unwrap_err()
            .to_string()
            .contains("accepted: int8"));
    }

    #[test]
    fn scratch_extents() {
        let mut p = Program::new();
        p.recv(0, 0, Slice::new(Slot::Scratch(1), 3, 5));
        assert_eq!(p.scratch_extents(), vec![0, 8]);
    }
}
