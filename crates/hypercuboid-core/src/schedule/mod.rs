//! The schedule: one program of ops per rank, with GOAL dependencies and data semantics.
//!
//! # Storage
//! Ranks of a collective mostly run the same program up to their peers. A [`Schedule`] therefore
//! stores each distinct program *shape* (ops with the peer left out, and dependencies) once, and
//! per rank only the index of its shape and its first op's offset (struct of arrays, each in the
//! narrowest integer that holds it; neither when every rank has one shape / programs of one
//! length). Sharing is found by hashing.
//!
//! Peers follow rules: when the schedule is built, each op of a shape gets the [`PeerRule`] that
//! gives its peer from the rank for every rank of that shape (`rank XOR m`, `(rank + d) mod n`,
//! or one constant peer); only the ops that follow none keep an explicit column of peers, for
//! the ranks of their shape. Recursive doubling on 2^20 ranks (40 ops a rank) then stores no
//! peer at all: one shape of 40 ops and nothing per rank. Any schedule can be stored (each rank
//! may have a shape of its own, and a shape's peers may follow no rule).
//!
//! # Building
//! [`ScheduleBuilder::push`] takes one rank's program at a time. A generator that knows its
//! ranks fall into classes that run one program each up to peers that follow rules (the
//! binomial tree's levels) pushes them with [`ScheduleBuilder::push_classes`] without building
//! their programs; the schedule is the same.
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

/// How one op of a [`Shape`] finds its peer from the rank that runs it (the same for every rank
/// of the shape), found when the schedule is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerRule {
    /// The same peer for every rank ([`ANY_SOURCE`] for local ops and wildcard receives).
    Const(Rank),
    /// `rank XOR m`.
    Xor(Rank),
    /// `(rank + d) mod nranks`, `d` in `0..nranks`.
    Shift(Rank),
    /// No rule: entry `k` of the rank's row of explicit peers ([`RankView::peer`] reads it).
    Column(u32),
}

impl PeerRule {
    /// The peer of `rank` in a schedule of `nranks` ranks; `None` for [`PeerRule::Column`],
    /// whose peer is stored.
    #[inline]
    pub fn apply(self, rank: Rank, nranks: u32) -> Option<Rank> {
        match self {
            PeerRule::Const(p) => Some(p),
            PeerRule::Xor(m) => Some(rank ^ m),
            PeerRule::Shift(d) => {
                // rank < nranks and d < nranks: one conditional subtraction, no division.
                let s = rank as u64 + d as u64;
                let n = nranks as u64;
                Some(if s >= n { s - n } else { s } as Rank)
            }
            PeerRule::Column(_) => None,
        }
    }
}

/// What the builder knows of one op's peer rule while ranks of its shape are pushed: the peer
/// of the shape's first rank, and which rules still hold for every rank seen so far.
#[derive(Clone, Copy, Debug)]
struct Candidates {
    /// The peer of the shape's first rank.
    first: Rank,
    /// `HOLD_CONST | HOLD_XOR | HOLD_SHIFT` bits of the rules that still hold; 0: none.
    hold: u8,
}

// The bits in order of preference: `Candidates::best` takes the lowest that holds.
const HOLD_CONST: u8 = 1;
const HOLD_XOR: u8 = 2;
const HOLD_SHIFT: u8 = 4;

/// The `HOLD_*` bit of a rule (none for a column).
fn hold_bit(rule: &PeerRule) -> u8 {
    match rule {
        PeerRule::Const(_) => HOLD_CONST,
        PeerRule::Xor(_) => HOLD_XOR,
        PeerRule::Shift(_) => HOLD_SHIFT,
        PeerRule::Column(_) => 0,
    }
}

impl Candidates {
    fn new(peer: Rank) -> Candidates {
        Candidates {
            first: peer,
            hold: if peer == ANY_SOURCE {
                HOLD_CONST
            } else {
                HOLD_CONST | HOLD_XOR | HOLD_SHIFT
            },
        }
    }

    /// The rules (of a shape whose first rank is `r0`) that also hold for `rank`'s `peer`.
    #[inline]
    fn keep(self, r0: Rank, nranks: u32, rank: Rank, peer: Rank) -> u8 {
        let mut hold = self.hold;
        if hold & HOLD_CONST != 0 && peer != self.first {
            hold &= !HOLD_CONST;
        }
        if hold & HOLD_XOR != 0 && rank ^ self.first ^ r0 != peer {
            hold &= !HOLD_XOR;
        }
        if hold & HOLD_SHIFT != 0
            && self.rule(r0, nranks, HOLD_SHIFT).apply(rank, nranks) != Some(peer)
        {
            hold &= !HOLD_SHIFT;
        }
        hold
    }

    /// The rule of bit `bit` (one of `HOLD_*`).
    fn rule(self, r0: Rank, nranks: u32, bit: u8) -> PeerRule {
        match bit {
            HOLD_CONST => PeerRule::Const(self.first),
            HOLD_XOR => PeerRule::Xor(self.first ^ r0),
            _ => PeerRule::Shift(
                ((self.first as u64 + nranks as u64 - r0 as u64) % nranks as u64) as Rank,
            ),
        }
    }

    /// The cheapest rule that holds (a constant, then XOR, then a shift); `None` when none does.
    fn best(self, r0: Rank, nranks: u32) -> Option<PeerRule> {
        // The lowest bit that holds: the preferred rule.
        let b = self.hold & self.hold.wrapping_neg();
        (b != 0).then(|| self.rule(r0, nranks, b))
    }
}

/// A distinct program, without peers. Shared by every rank that runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Ops in program order, in canonical form: send/recv peers are 0 here (each rank's peers
    /// are stored apart) and a receive's `combine` is stated as seen from a peer above the rank.
    /// Read ops through [`RankView::op`], which restores both.
    pub ops: Vec<Op>,
    /// Each op's peer rule, which holds for every rank of the shape.
    pub peers: Vec<PeerRule>,
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
            // Set when the schedule is finished, once every rank of the shape is known.
            peers: Vec::new(),
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

/// Whether every send's peer is a rank below `nranks` and every receive's is one or
/// [`ANY_SOURCE`] (what [`Program::validate`] checks of peers).
fn peers_in_range(p: &Program, nranks: u32) -> bool {
    p.ops
        .iter()
        .all(|o| peer_in_range(o, o.peer().unwrap_or(ANY_SOURCE), nranks))
}

/// Whether `peer` is a valid peer for op `o` (any value for a local op).
fn peer_in_range(o: &Op, peer: Rank, nranks: u32) -> bool {
    match o.kind {
        OpKind::Send { .. } => peer < nranks,
        OpKind::Recv { .. } => peer < nranks || peer == ANY_SOURCE,
        _ => true,
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
    /// Ranks in the schedule (what a shift rule wraps at).
    nranks: u32,
    /// The rank's explicit peers, one per [`PeerRule::Column`] op of its shape.
    row: &'a [Rank],
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

    /// The peer of op `i` ([`ANY_SOURCE`] for local ops and wildcard receives).
    #[inline]
    pub fn peer(&self, i: usize) -> Rank {
        let rule = self.shape.peers[i];
        match rule.apply(self.rank, self.nranks) {
            Some(p) => p,
            None => {
                let PeerRule::Column(k) = rule else {
                    unreachable!("only a column rule has no peer of its own")
                };
                self.row[k as usize]
            }
        }
    }

    /// Every op's peer in program order ([`RankView::peer`]).
    pub fn peers(&self) -> impl ExactSizeIterator<Item = Rank> + 'a {
        let v = *self;
        (0..v.len()).map(move |i| v.peer(i))
    }

    /// Op `i` with its real peer (and a receive's real operand order).
    pub fn op(&self, i: usize) -> Op {
        let op = self.shape.ops[i];
        match op.kind {
            OpKind::Send { .. } => op.with_peer(self.peer(i)),
            OpKind::Recv { .. } => {
                let peer = self.peer(i);
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

/// A column of unsigned integers in the narrowest of 1, 2, 4 or 8 bytes that holds every value
/// pushed so far (widened once when a value needs more): per-rank shape indices take a byte
/// while a schedule has at most 256 shapes, op offsets 4 bytes below 2^32 ops.
#[derive(Clone, Debug)]
enum UintColumn {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
}

impl Default for UintColumn {
    fn default() -> UintColumn {
        UintColumn::U8(Vec::new())
    }
}

impl PartialEq for UintColumn {
    fn eq(&self, other: &UintColumn) -> bool {
        self.len() == other.len() && (0..self.len()).all(|i| self.get(i) == other.get(i))
    }
}

impl Eq for UintColumn {}

impl UintColumn {
    fn with_capacity(n: usize) -> UintColumn {
        UintColumn::U8(Vec::with_capacity(n))
    }

    fn len(&self) -> usize {
        match self {
            UintColumn::U8(c) => c.len(),
            UintColumn::U16(c) => c.len(),
            UintColumn::U32(c) => c.len(),
            UintColumn::U64(c) => c.len(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn last(&self) -> Option<u64> {
        self.len().checked_sub(1).map(|i| self.get(i))
    }

    /// Bytes of one value.
    fn width(&self) -> usize {
        match self {
            UintColumn::U8(_) => 1,
            UintColumn::U16(_) => 2,
            UintColumn::U32(_) => 4,
            UintColumn::U64(_) => 8,
        }
    }

    /// Bytes of the values held.
    fn bytes(&self) -> usize {
        self.len() * self.width()
    }

    #[inline(always)]
    fn get(&self, i: usize) -> u64 {
        match self {
            UintColumn::U8(c) => c[i] as u64,
            UintColumn::U16(c) => c[i] as u64,
            UintColumn::U32(c) => c[i] as u64,
            UintColumn::U64(c) => c[i],
        }
    }

    #[inline(always)]
    fn push(&mut self, v: u64) {
        match self {
            UintColumn::U8(c) if v <= u8::MAX as u64 => c.push(v as u8),
            UintColumn::U16(c) if v <= u16::MAX as u64 => c.push(v as u16),
            UintColumn::U32(c) if v <= u32::MAX as u64 => c.push(v as u32),
            UintColumn::U64(c) => c.push(v),
            _ => {
                self.widen(v);
                self.push(v)
            }
        }
    }

    /// `cnt` more copies of `v`.
    fn fill(&mut self, cnt: usize, v: u64) {
        if cnt == 0 {
            return;
        }
        self.push(v);
        let len = self.len() + cnt - 1;
        match self {
            UintColumn::U8(c) => c.resize(len, v as u8),
            UintColumn::U16(c) => c.resize(len, v as u16),
            UintColumn::U32(c) => c.resize(len, v as u32),
            UintColumn::U64(c) => c.resize(len, v),
        }
    }

    /// Room for `n` more values, at the current width.
    fn reserve_exact(&mut self, n: usize) {
        match self {
            UintColumn::U8(c) => c.reserve_exact(n),
            UintColumn::U16(c) => c.reserve_exact(n),
            UintColumn::U32(c) => c.reserve_exact(n),
            UintColumn::U64(c) => c.reserve_exact(n),
        }
    }

    /// The column in the narrowest width that holds `v` too, with the same room.
    #[cold]
    fn widen(&mut self, v: u64) {
        let cap = match self {
            UintColumn::U8(c) => c.capacity(),
            UintColumn::U16(c) => c.capacity(),
            UintColumn::U32(c) => c.capacity(),
            UintColumn::U64(c) => c.capacity(),
        };
        let values = (0..self.len()).map(|i| self.get(i));
        let wide = if v <= u16::MAX as u64 && self.width() < 2 {
            let mut c = Vec::with_capacity(cap);
            c.extend(values.map(|x| x as u16));
            UintColumn::U16(c)
        } else if v <= u32::MAX as u64 && self.width() < 4 {
            let mut c = Vec::with_capacity(cap);
            c.extend(values.map(|x| x as u32));
            UintColumn::U32(c)
        } else {
            let mut c = Vec::with_capacity(cap);
            c.extend(values);
            UintColumn::U64(c)
        };
        *self = wide;
    }
}

/// A complete schedule: `nranks` programs and what they compute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    meta: Meta,
    nranks: u32,
    shapes: Vec<Shape>,
    /// Each rank's shape; empty when there is one shape (every rank's).
    rank_shape: UintColumn,
    /// Each rank's first op in the flat numbering (`nranks + 1` entries); empty when every
    /// shape has `uniform_len` ops (rank `r` starts at `r × uniform_len`).
    op_start: UintColumn,
    uniform_len: u64,
    total_ops: u64,
    /// Each rank's row in `peers` (`nranks + 1` entries); empty when no op needs a column.
    peer_start: Vec<u64>,
    /// Explicit peers of the ops whose peers follow no rule, rank by rank.
    peers: Vec<Rank>,
}

impl Schedule {
    /// Number of ranks.
    pub fn nranks(&self) -> u32 {
        self.nranks
    }

    /// What the schedule computes.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// Bytes per element.
    pub fn elem_size(&self) -> u32 {
        self.meta.elem_size()
    }

    /// Rank `r`'s program as a view into the shared storage (always inline: the caller reads
    /// one or two of its fields, and an out-of-line call returns all of them through memory).
    #[inline(always)]
    pub fn rank(&self, r: Rank) -> RankView<'_> {
        RankView {
            rank: r,
            shape: &self.shapes[self.shape_index(r)],
            nranks: self.nranks,
            row: self.peer_row(r),
        }
    }

    /// Rank `r`'s explicit peers (those of its shape's [`PeerRule::Column`] ops, in order).
    #[inline]
    pub fn peer_row(&self, r: Rank) -> &[Rank] {
        if self.peer_start.is_empty() {
            return &[];
        }
        let lo = self.peer_start[r as usize] as usize;
        let hi = self.peer_start[r as usize + 1] as usize;
        &self.peers[lo..hi]
    }

    /// The peer of rank `r`'s op `i` ([`RankView::peer`]).
    #[inline]
    pub fn peer(&self, r: Rank, i: usize) -> Rank {
        self.rank(r).peer(i)
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
        self.total_ops
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
    #[inline]
    pub fn shape_index(&self, r: Rank) -> usize {
        if self.rank_shape.is_empty() {
            0
        } else {
            self.rank_shape.get(r as usize) as usize
        }
    }

    /// Offset of rank `r`'s first op in a flat numbering of all ops (`0..total_ops()`), for
    /// engines that keep one state column over every op.
    #[inline]
    pub fn op_offset(&self, r: Rank) -> u64 {
        if self.op_start.is_empty() {
            r as u64 * self.uniform_len
        } else {
            self.op_start.get(r as usize)
        }
    }

    /// Number of explicit peers stored (ops whose peers follow no [`PeerRule`], over all ranks).
    pub fn explicit_peers(&self) -> usize {
        self.peers.len()
    }

    /// Bytes of heap the schedule occupies (approximately: shapes are counted by their ops).
    pub fn memory_bytes(&self) -> usize {
        let shapes: usize = self
            .shapes
            .iter()
            .map(|s| {
                s.ops.len() * std::mem::size_of::<Op>()
                    + s.peers.len() * std::mem::size_of::<PeerRule>()
                    + (s.dep_start.len() + s.dependent_start.len()) * 4
                    + s.deps.len() * std::mem::size_of::<Dep>()
                    + s.dependents.len() * 8
            })
            .sum();
        shapes
            + self.rank_shape.bytes()
            + self.op_start.bytes()
            + self.peer_start.len() * 8
            + self.peers.len() * 4
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

/// The program that every rank of one class runs up to its peers: the program of one of its
/// ranks, and each op's [`PeerRule`] (`Const(ANY_SOURCE)` for local ops), which gives that
/// op's peer for every rank of the class. [`ScheduleBuilder::push_classes`] pushes the ranks
/// of several such classes without building their programs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankClass {
    program: Program,
    rank: Rank,
    rules: Vec<PeerRule>,
}

impl RankClass {
    /// The class whose ranks run `program`, the program of `rank` (its dependencies are sorted
    /// here), up to their peers: op `i` of rank `r` talks to `rules[i].apply(r, nranks)`.
    pub fn new(mut program: Program, rank: Rank, rules: Vec<PeerRule>) -> RankClass {
        program.normalize();
        RankClass {
            program,
            rank,
            rules,
        }
    }

    /// The program it was made from.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The rank whose program it is.
    pub fn rank(&self) -> Rank {
        self.rank
    }

    /// Each op's peer rule.
    pub fn rules(&self) -> &[PeerRule] {
        &self.rules
    }

    /// Whether `program`, the program of `rank` in a schedule of `nranks` ranks (its
    /// dependencies are sorted in place), is this class's program up to its peers and its
    /// peers are the rules': what [`ScheduleBuilder::push_classes`] assumes of every rank of
    /// the class, checked on one rank by building it.
    pub fn admits(&self, program: &mut Program, rank: Rank, nranks: u32) -> bool {
        program.normalize();
        self.rules.len() == self.program.ops.len()
            && program.ops.len() == self.program.ops.len()
            && program.deps == self.program.deps
            && self
                .program
                .ops
                .iter()
                .zip(&program.ops)
                .zip(&self.rules)
                .all(|((t, o), rule)| {
                    canonical(t, self.rank) == canonical(o, rank)
                        && rule.apply(rank, nranks) == Some(o.peer().unwrap_or(ANY_SOURCE))
                })
    }

    /// The program of `rank` whose op `i` talks to `peers[i]`: this class's ops with those
    /// peers and each receive's operand order restored for `rank` (as [`RankView::op`] does).
    fn instantiate(&self, rank: Rank, peers: &[Rank]) -> Program {
        let ops = self
            .program
            .ops
            .iter()
            .zip(peers)
            .map(|(o, &peer)| {
                let mut op = canonical(o, self.rank).with_peer(peer);
                if let OpKind::Recv { combine, .. } = &mut op.kind {
                    if peer < rank {
                        *combine = combine.flipped();
                    }
                }
                op
            })
            .collect();
        Program {
            ops,
            deps: self.program.deps.clone(),
        }
    }

    /// Whether the rules' peers are in range for every rank of a schedule of `nranks` ranks,
    /// decided from the rules alone; `false` where it depends on the rank (a XOR on a number
    /// of ranks that is not a power of two).
    fn in_range_for_all(&self, nranks: u32) -> bool {
        self.program.ops.iter().zip(&self.rules).all(|(o, rule)| {
            let any_ok = matches!(o.kind, OpKind::Recv { .. });
            match *rule {
                PeerRule::Const(p) => {
                    p < nranks || (any_ok && p == ANY_SOURCE) || o.peer().is_none()
                }
                PeerRule::Xor(m) => nranks.is_power_of_two() && m < nranks,
                PeerRule::Shift(d) => d < nranks,
                PeerRule::Column(_) => false,
            }
        })
    }
}

/// What [`ScheduleBuilder::push_classes`] knows of one class while it pushes its ranks.
#[derive(Clone, Copy, Debug)]
struct ClassState {
    /// The class's shape, once its first rank is pushed.
    shape: Option<u32>,
    /// Ops a rank of the class has.
    len: u64,
    /// Whether the class's ranks may stop being tracked once its rules settle: they are the
    /// schedule's last ranks and no other class of the same shape declares other rules.
    may_settle: bool,
    /// Settled: each op's rule in the finished schedule is the declared one whatever the
    /// remaining ranks of the class do, so they cost a shape index each.
    settled: bool,
    /// Whether the rules' peers are in range for every rank ([`RankClass::in_range_for_all`]).
    in_range: bool,
}

/// What the builder knows of a shape's peers: the rules that still hold per op, and, once some
/// op follows none, from which rank on the ranks of the shape keep their peers.
#[derive(Debug)]
struct ShapePeers {
    /// The shape's first rank.
    r0: Rank,
    cands: Vec<Candidates>,
    /// Set when an op of the shape first followed no rule, at rank `.0`: the candidates just
    /// before, which hold for every rank of the shape below it (their peers are not stored).
    stored_from: Option<(Rank, Vec<Candidates>)>,
}

/// Builds a [`Schedule`] one rank at a time, sharing identical program shapes and finding each
/// shape op's [`PeerRule`].
#[derive(Debug)]
pub struct ScheduleBuilder {
    nranks: u32,
    meta: Meta,
    shapes: Vec<Shape>,
    shape_peers: Vec<ShapePeers>,
    index: HashMap<u64, Vec<u32>, rustc_hash::FxBuildHasher>,
    rank_shape: UintColumn,
    /// Empty while every rank pushed has `uniform_len` ops.
    op_start: UintColumn,
    uniform_len: u64,
    total_ops: u64,
    /// Every peer of the ranks pushed after their shape's `stored_from`, rank by rank.
    rows: Vec<Rank>,
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
        Ok(ScheduleBuilder {
            nranks: nranks as u32,
            meta,
            shapes: Vec::new(),
            shape_peers: Vec::new(),
            index: HashMap::default(),
            rank_shape: UintColumn::with_capacity(nranks as usize),
            op_start: UintColumn::default(),
            uniform_len: 0,
            total_ops: 0,
            rows: Vec::new(),
        })
    }

    /// A hint that about `ops` more ops come. Peers that follow rules take no room, so the
    /// builder reserves nothing ahead (kept for callers that size their input).
    pub fn reserve_ops(&mut self, ops: usize) {
        let _ = ops;
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
        let before = self.shapes.len();
        let last = self
            .rank_shape
            .last()
            .map(|l| l as u32)
            .filter(|&l| self.shapes[l as usize].matches(program, rank));
        let shape = match last {
            // Consecutive ranks usually share a shape, whose program was validated: only the
            // peers can be out of range (the full check then says which and how).
            Some(l) => {
                if !peers_in_range(program, self.nranks) {
                    program.validate(rank, self.nranks)?;
                }
                l
            }
            None => {
                program.validate(rank, self.nranks)?;
                self.intern(program, rank)
            }
        };
        self.rank_shape.push(shape as u64);
        self.count_ops(rank, program.ops.len() as u64);
        let peer = |o: &Op| o.peer().unwrap_or(ANY_SOURCE);
        if self.shapes.len() > before {
            self.shape_peers.push(ShapePeers {
                r0: rank,
                cands: program
                    .ops
                    .iter()
                    .map(|o| Candidates::new(peer(o)))
                    .collect(),
                stored_from: None,
            });
            return Ok(());
        }
        let ops = &program.ops;
        self.track(shape, rank, ops.len(), |i| peer(&ops[i]));
        Ok(())
    }

    /// Whether `program`, the program of `rank` (its dependencies are sorted in place), is the
    /// program of the last rank pushed up to its peers, op `i` talking to
    /// `rules[i].apply(rank)`: what [`ScheduleBuilder::push_repeated`] assumes of the ranks it
    /// pushes, checked on one rank by building it. Pushes nothing.
    pub fn follows(&self, program: &mut Program, rank: Rank, rules: &[PeerRule]) -> bool {
        let Some(last) = self.rank_shape.last() else {
            return false;
        };
        program.normalize();
        rules.len() == program.ops.len()
            && self.shapes[last as usize].matches(program, rank)
            && program.ops.iter().zip(rules).all(|(o, rule)| {
                rule.apply(rank, self.nranks) == Some(o.peer().unwrap_or(ANY_SOURCE))
            })
    }

    /// Appends the next `count` ranks, each running `template`, the program of the last rank
    /// pushed (as [`ScheduleBuilder::push`] left it), up to its peers: op `i` of rank `r`
    /// talks to `rules[i].apply(r, nranks)` (`Const(ANY_SOURCE)` for local ops). The caller
    /// vouches that each of these ranks' programs is that one (a generator that knows its
    /// ranks share one shape; [`ScheduleBuilder::follows`] checks a rank); the schedule is
    /// then identical to the one `push` builds rank by rank, errors included. The work per
    /// rank stops, when these are the schedule's last ranks, once every op's rule is the one
    /// the finished schedule will give it: from then on the remaining ranks cost one shape
    /// index each.
    pub fn push_repeated(
        &mut self,
        template: &Program,
        rules: &[PeerRule],
        count: u32,
    ) -> Result<(), ScheduleError> {
        let first = self.next_rank();
        let n = self.nranks;
        if first as u64 + count as u64 > n as u64 {
            return Err(ScheduleError::RankOrder {
                expected: n,
                got: n,
            });
        }
        let Some(shape) = self.rank_shape.last() else {
            return Err(ScheduleError::BadParameter {
                name: "repeated program".into(),
                value: format!("{count} ranks"),
                reason: "push the program it repeats first".into(),
            });
        };
        let len = template.ops.len();
        if rules.len() != len
            || rules.iter().any(|r| matches!(r, PeerRule::Column(_)))
            || !self.shapes[shape as usize].matches(template, first - 1)
        {
            return Err(ScheduleError::BadParameter {
                name: "repeated program".into(),
                value: format!("{} ops, {} peer rules", len, rules.len()),
                reason: "the template is the last program pushed and each of its ops has one \
                         rule (const, xor or shift)"
                    .into(),
            });
        }
        let class = RankClass::new(template.clone(), first - 1, rules.to_vec());
        self.push_classes(std::slice::from_ref(&class), |_, out| out.fill(0), count)
    }

    /// Appends the next `count` ranks, each running the program of its class in `classes` up
    /// to its peers (op `i` of rank `r` talks to `rules[i].apply(r, nranks)`, see
    /// [`RankClass`]); `class_of(first, out)` writes the classes (indices into `classes`) of
    /// ranks `first..first + out.len()` into `out`, asked for blocks of ranks in rank order.
    /// The caller vouches that every rank's program is its class's (a generator that knows its
    /// ranks' classes; [`RankClass::admits`] checks a rank); the schedule is then identical to
    /// the one [`ScheduleBuilder::push`] builds rank by rank, errors included: a class's shape
    /// is found or added at its first rank, in rank order, and each rank's peers update the
    /// candidate rules as `push` would. When these are the schedule's last ranks, that work
    /// stops for a class once each of its ops' rules is the one the finished schedule will
    /// give it (it still holds, none that `finish` prefers does, no peer of the shape is
    /// stored, and no other class of the same shape declares other rules): from then on a
    /// rank of the class costs a shape index and its op count, and a range check of its
    /// peers only where the rules cannot decide it for every rank. With one class, `class_of`
    /// is not asked for the ranks after it settles.
    pub fn push_classes(
        &mut self,
        classes: &[RankClass],
        mut class_of: impl FnMut(Rank, &mut [u32]),
        count: u32,
    ) -> Result<(), ScheduleError> {
        let first = self.next_rank();
        let n = self.nranks;
        let end = first as u64 + count as u64;
        if end > n as u64 {
            return Err(ScheduleError::RankOrder {
                expected: n,
                got: n,
            });
        }
        if let Some((c, k)) = classes.iter().enumerate().find(|(_, k)| {
            k.rules.len() != k.program.ops.len()
                || k.rules.iter().any(|r| matches!(r, PeerRule::Column(_)))
        }) {
            return Err(ScheduleError::BadParameter {
                name: "rank class".into(),
                value: format!(
                    "class {c}: {} ops, {} peer rules",
                    k.program.ops.len(),
                    k.rules.len()
                ),
                reason: "each op of a class has one rule (const, xor or shift)".into(),
            });
        }
        let mut state = self.class_states(classes, end == n as u64);
        // Per class: its shape once its ranks cost only that (settled, peers in range for
        // every rank), else `u32::MAX`; and its ops per rank.
        let mut fast = vec![u32::MAX; classes.len()];
        let lens: Vec<u64> = classes.iter().map(|k| k.program.ops.len() as u64).collect();
        const BLOCK: u32 = 4096;
        let end = end as Rank;
        let mut block = vec![0u32; BLOCK.min(count) as usize];
        let mut peers: Vec<Rank> = Vec::new();
        let mut from = first;
        while from < end {
            let m = BLOCK.min(end - from);
            let block = &mut block[..m as usize];
            class_of(from, block);
            let mut i = 0;
            while i < block.len() {
                // A run of ranks of settled classes, at a shape index and an op count each.
                let run = block[i..]
                    .iter()
                    .take_while(|&&c| fast.get(c as usize).is_some_and(|&s| s != u32::MAX))
                    .count();
                if run > 0 {
                    self.push_run(&block[i..i + run], from + i as Rank, &fast, &lens);
                    i += run;
                    continue;
                }
                let (r, c) = (from + i as Rank, block[i]);
                i += 1;
                let Some(k) = classes.get(c as usize) else {
                    return Err(ScheduleError::BadParameter {
                        name: "rank class".into(),
                        value: c.to_string(),
                        reason: format!(
                            "the class of rank {r} is one of the {} classes given, 0..{}",
                            classes.len(),
                            classes.len()
                        ),
                    });
                };
                let st = &mut state[c as usize];
                peers.clear();
                peers.extend(
                    k.rules
                        .iter()
                        .map(|rule| rule.apply(r, n).unwrap_or(ANY_SOURCE)),
                );
                let shape = match st.shape {
                    Some(shape) if st.settled => {
                        // Settled, but its peers' range depends on the rank.
                        self.check_repeated_peers(&k.program, r, &peers)?;
                        shape
                    }
                    Some(shape) => {
                        self.check_repeated_peers(&k.program, r, &peers)?;
                        self.track(shape, r, peers.len(), |i| peers[i]);
                        shape
                    }
                    None => {
                        // The class's first rank: checked and interned as `push` does.
                        let p = k.instantiate(r, &peers);
                        p.validate(r, n)?;
                        let before = self.shapes.len();
                        let shape = self.intern(&p, r);
                        if self.shapes.len() > before {
                            self.shape_peers.push(ShapePeers {
                                r0: r,
                                cands: peers.iter().map(|&p| Candidates::new(p)).collect(),
                                stored_from: None,
                            });
                        } else {
                            self.track(shape, r, peers.len(), |i| peers[i]);
                        }
                        st.shape = Some(shape);
                        shape
                    }
                };
                self.rank_shape.push(shape as u64);
                self.count_ops(r, st.len);
                st.settled = st.settled || st.may_settle && self.settled(shape, &k.rules);
                if st.settled && st.in_range {
                    if classes.len() == 1 {
                        // One class, settled: the remaining ranks are its, a shape index each.
                        self.push_settled(shape, st.len, r + 1, end);
                        return Ok(());
                    }
                    fast[c as usize] = shape;
                }
            }
            from += m;
        }
        Ok(())
    }

    /// The state [`ScheduleBuilder::push_classes`] starts from for each class; `last`: its
    /// ranks are the schedule's last. Classes of one shape that declare different rules are
    /// never settled (the shape's rules are then what holds for all of their ranks).
    fn class_states(&self, classes: &[RankClass], last: bool) -> Vec<ClassState> {
        // A program with a dependency out of range has no shape: its first rank gives
        // `push`'s error.
        let shapes: Vec<Option<Shape>> = classes
            .iter()
            .map(|k| {
                let len = k.program.ops.len() as u32;
                let ok = k.program.deps.iter().all(|&(a, d)| a < len && d.on < len);
                ok.then(|| Shape::from_program(&k.program, k.rank))
            })
            .collect();
        let mut by_hash: HashMap<u64, Vec<usize>, rustc_hash::FxBuildHasher> = HashMap::default();
        for (c, k) in classes.iter().enumerate() {
            by_hash
                .entry(shape_hash(&k.program, k.rank))
                .or_default()
                .push(c);
        }
        let mut state: Vec<ClassState> = classes
            .iter()
            .map(|k| ClassState {
                shape: None,
                len: k.program.ops.len() as u64,
                may_settle: last,
                settled: false,
                in_range: k.in_range_for_all(self.nranks),
            })
            .collect();
        for group in by_hash.values() {
            for &c in group {
                if shapes[c].is_none()
                    || group
                        .iter()
                        .any(|&d| shapes[d] == shapes[c] && classes[d].rules != classes[c].rules)
                {
                    state[c].may_settle = false;
                }
            }
        }
        state
    }

    /// Whether every op of `shape` ends with the declared rule in `rules` whatever further
    /// ranks following those rules do: it holds for every rank so far, no rule that
    /// [`Candidates::best`] prefers to it does, and no peer of the shape is stored.
    fn settled(&self, shape: u32, rules: &[PeerRule]) -> bool {
        let sp = &self.shape_peers[shape as usize];
        sp.stored_from.is_none()
            && sp.cands.iter().zip(rules).all(|(c, rule)| {
                // `best` prefers the lower bits to a rule's own bit `b`.
                let b = hold_bit(rule);
                c.hold & b != 0 && c.hold & (b - 1) == 0 && c.rule(sp.r0, self.nranks, b) == *rule
            })
    }

    /// Ranks `first..` of classes `run` (indices into `shapes` and `lens`, the classes' shapes and
    /// op counts), pushed at once: their peers need no tracking nor checking.
    fn push_run(&mut self, run: &[u32], first: Rank, shapes: &[u32], lens: &[u64]) {
        let n = self.shapes.len();
        match &mut self.rank_shape {
            UintColumn::U8(col) if n <= 1 << 8 => {
                col.extend(run.iter().map(|&c| shapes[c as usize] as u8))
            }
            UintColumn::U16(col) if n <= 1 << 16 => {
                col.extend(run.iter().map(|&c| shapes[c as usize] as u16))
            }
            UintColumn::U32(col) => col.extend(run.iter().map(|&c| shapes[c as usize])),
            col => {
                for &c in run {
                    col.push(shapes[c as usize] as u64);
                }
            }
        }
        let most = lens.iter().max().copied().unwrap_or(0);
        let mut total = self.total_ops;
        match &mut self.op_start {
            // Numbered ranks (so `first` > 0) whose offsets stay in 4 bytes.
            UintColumn::U32(col)
                if total.saturating_add(most.saturating_mul(run.len() as u64))
                    <= u32::MAX as u64 =>
            {
                col.extend(run.iter().map(|&c| {
                    total += lens[c as usize];
                    total as u32
                }));
                self.total_ops = total;
            }
            UintColumn::U64(col) => {
                col.extend(run.iter().map(|&c| {
                    total += lens[c as usize];
                    total
                }));
                self.total_ops = total;
            }
            _ => {
                for (r, &c) in (first..).zip(run) {
                    self.count_ops(r, lens[c as usize]);
                }
            }
        }
    }

    /// Ranks `from..end`, each of `shape` with `len` ops, pushed at once (their peers need no
    /// tracking nor checking).
    fn push_settled(&mut self, shape: u32, len: u64, from: Rank, end: Rank) {
        let cnt = (end - from) as usize;
        self.rank_shape.fill(cnt, shape as u64);
        if self.op_start.is_empty() && len == self.uniform_len {
            self.total_ops += len * cnt as u64;
        } else {
            for r in from..end {
                self.count_ops(r, len);
            }
        }
    }

    /// Updates the candidate rules of `shape` with the `len` peers of `rank` (`peer(i)`, op
    /// `i`'s), as one more rank of the shape, and keeps its peers once some op follows none.
    #[inline]
    fn track(&mut self, shape: u32, rank: Rank, len: usize, peer: impl Fn(usize) -> Rank) {
        let n = self.nranks;
        let sp = &mut self.shape_peers[shape as usize];
        for i in 0..len {
            let c = sp.cands[i];
            if c.hold == 0 {
                continue;
            }
            let hold = c.keep(sp.r0, n, rank, peer(i));
            if hold == 0 && sp.stored_from.is_none() {
                // The first op of the shape that follows no rule: every earlier rank of the
                // shape followed the rules that hold so far; from this rank on, peers are kept.
                sp.stored_from = Some((rank, sp.cands.clone()));
            }
            sp.cands[i].hold = hold;
        }
        if sp.stored_from.is_some() {
            self.rows.extend((0..len).map(peer));
        }
    }

    /// The error [`ScheduleBuilder::push`] gives `rank` running `template` with `peers`, if
    /// a peer is out of range.
    fn check_repeated_peers(
        &self,
        template: &Program,
        rank: Rank,
        peers: &[Rank],
    ) -> Result<(), ScheduleError> {
        let n = self.nranks;
        let ok = template
            .ops
            .iter()
            .zip(peers)
            .all(|(o, &p)| peer_in_range(o, p, n));
        if ok {
            return Ok(());
        }
        let mut p = Program {
            ops: template
                .ops
                .iter()
                .zip(peers)
                .map(|(o, &peer)| o.with_peer(peer))
                .collect(),
            deps: template.deps.clone(),
        };
        p.normalize();
        p.validate(rank, n)
    }

    #[inline(always)]
    fn count_ops(&mut self, rank: Rank, len: u64) {
        if rank == 0 {
            self.uniform_len = len;
        }
        if self.op_start.is_empty() && len != self.uniform_len {
            self.number_ranks(rank);
        }
        self.total_ops += len;
        if !self.op_start.is_empty() {
            self.op_start.push(self.total_ops);
        }
    }

    /// Rank `rank` is the first of another length than the ranks before: number every rank so
    /// far explicitly (room for every rank at once: no reallocation as the column grows).
    #[cold]
    fn number_ranks(&mut self, rank: Rank) {
        self.op_start.reserve_exact(self.nranks as usize + 1);
        for r in 0..=rank as u64 {
            self.op_start.push(r * self.uniform_len);
        }
    }

    /// The shape of `p` (of `rank`), found by hashing or added (the last rank's shape was
    /// tried already).
    fn intern(&mut self, p: &Program, rank: Rank) -> u32 {
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
        let n = self.nranks;
        let mut shapes = self.shapes;
        let mut columns = 0usize;
        for (shape, sp) in shapes.iter_mut().zip(&self.shape_peers) {
            let mut k = 0;
            shape.peers = sp
                .cands
                .iter()
                .map(|c| {
                    c.best(sp.r0, n).unwrap_or_else(|| {
                        k += 1;
                        PeerRule::Column(k - 1)
                    })
                })
                .collect();
            columns += k as usize;
        }
        let (mut peer_start, mut peers) = (Vec::new(), Vec::new());
        if columns > 0 {
            peer_start.reserve_exact(n as usize + 1);
            peer_start.push(0);
            let mut next = 0;
            for r in 0..n {
                let si = self.rank_shape.get(r as usize) as usize;
                let shape = &shapes[si];
                if let Some((from, before)) = &self.shape_peers[si].stored_from {
                    let r0 = self.shape_peers[si].r0;
                    let stored = r >= *from;
                    for (i, rule) in shape.peers.iter().enumerate() {
                        if let PeerRule::Column(_) = rule {
                            peers.push(if stored {
                                self.rows[next + i]
                            } else {
                                let rule = before[i].best(r0, n).expect("held before");
                                rule.apply(r, n).expect("a rule")
                            });
                        }
                    }
                    if stored {
                        next += shape.len();
                    }
                }
                peer_start.push(peers.len() as u64);
            }
            peers.shrink_to_fit();
        }
        let mut rank_shape = self.rank_shape;
        if shapes.len() == 1 {
            rank_shape = UintColumn::default();
        }
        Ok(Schedule {
            meta: self.meta,
            nranks: n,
            shapes,
            rank_shape,
            op_start: self.op_start,
            uniform_len: self.uniform_len,
            total_ops: self.total_ops,
            peer_start,
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
        let b = ScheduleBuilder::new(3, meta.clone()).unwrap();
        assert_eq!(
            b.finish().unwrap_err().to_string(),
            "schedule has programs for 0 of 3 ranks"
        );
        // A program of the last rank's shape is checked for its peers only, with the same
        // messages as the full check.
        let mut b = ScheduleBuilder::new(2, meta).unwrap();
        let program = |peer: Rank, from: Rank| {
            let mut p = Program::new();
            p.send(peer, 0, Slice::new(Slot::Input, 0, 1));
            p.recv(from, 0, Slice::new(Slot::Output, 0, 1));
            p
        };
        b.push(&mut program(1, 1)).unwrap();
        assert_eq!(
            b.push(&mut program(2, 0)).unwrap_err().to_string(),
            "rank 1 op 0: send to rank 2 but the schedule has ranks 0..2"
        );
        assert_eq!(
            b.push(&mut program(0, 5)).unwrap_err().to_string(),
            "rank 1 op 1: recv from rank 5 but the schedule has ranks 0..2 (or -1 for any)"
        );
        b.push(&mut program(0, ANY_SOURCE)).unwrap();
        assert_eq!(b.finish().unwrap().num_shapes(), 1);
        assert!(Dtype::parse("float128")
            .unwrap_err()
            .to_string()
            .contains("accepted: int8"));
    }

    /// Builds a schedule of `n` ranks whose programs `f` writes, checking that every rank's
    /// program (peers included) reads back as written.
    fn built(n: u32, f: impl Fn(Rank, &mut Program)) -> Schedule {
        let progs: Vec<Program> = (0..n)
            .map(|r| {
                let mut p = Program::new();
                f(r, &mut p);
                p.normalize();
                p
            })
            .collect();
        let s = Schedule::from_programs(Meta::sizes_only("rules"), progs.clone()).unwrap();
        for (r, p) in progs.iter().enumerate() {
            assert_eq!(&s.program(r as Rank), p, "rank {r}");
            let peers: Vec<Rank> = s.rank(r as Rank).peers().collect();
            let expect: Vec<Rank> = p
                .ops
                .iter()
                .map(|o| o.peer().unwrap_or(ANY_SOURCE))
                .collect();
            assert_eq!(peers, expect, "rank {r}");
        }
        s
    }

    #[test]
    fn peer_rules_xor_shift_and_constants() {
        let x = Slice::new(Slot::Input, 0, 1);
        let y = Slice::new(Slot::Output, 0, 1);
        // Pairwise exchange: XOR 1 (a shift by 1 fails at rank 1), the copy has no peer.
        let s = built(8, |r, p| {
            p.compute(5);
            p.send(r ^ 1, 0, x);
            p.recv(r ^ 1, 0, y);
        });
        assert_eq!(s.num_shapes(), 1);
        assert_eq!(
            s.shapes()[0].peers,
            [
                PeerRule::Const(ANY_SOURCE),
                PeerRule::Xor(1),
                PeerRule::Xor(1)
            ]
        );
        assert_eq!(s.explicit_peers(), 0);
        // A ring on 6 ranks (not a power of two): shifts by 1 and by n − 1, wrapping.
        let s = built(6, |r, p| {
            p.send((r + 1) % 6, 0, x);
            p.recv((r + 5) % 6, 0, y);
        });
        assert_eq!(
            s.shapes()[0].peers,
            [PeerRule::Shift(1), PeerRule::Shift(5)]
        );
        assert_eq!(s.rank(5).peer(0), 0);
        assert_eq!(s.rank(0).peer(1), 5);
        assert_eq!(s.explicit_peers(), 0);
        // Every rank sends to rank 0 and receives from anyone: constants.
        let s = built(4, |r, p| {
            if r != 0 {
                p.send(0, 0, x);
            }
            p.recv(ANY_SOURCE, 0, y);
        });
        assert_eq!(s.num_shapes(), 2);
        assert_eq!(
            s.shapes()[1].peers,
            [PeerRule::Const(0), PeerRule::Const(ANY_SOURCE)]
        );
        // A shape of one rank: its peers are constants.
        assert_eq!(s.shapes()[0].peers, [PeerRule::Const(ANY_SOURCE)]);
        assert_eq!(s.explicit_peers(), 0);
        // Ranks with programs of different lengths are numbered from a stored column.
        assert_eq!(
            (0..4).map(|r| s.op_offset(r)).collect::<Vec<_>>(),
            [0, 1, 3, 5]
        );
        assert_eq!(s.total_ops(), 7);
    }

    #[test]
    fn peers_without_a_rule_are_stored() {
        let x = Slice::new(Slot::Input, 0, 1);
        let y = Slice::new(Slot::Output, 0, 1);
        // Op 1 follows no rule in this one shape (a permutation that is neither a XOR nor a
        // shift nor constant), op 0 does: only op 1's peers are stored, one a rank.
        const PERM: [Rank; 8] = [5, 3, 6, 1, 7, 0, 2, 4];
        let s = built(8, |r, p| {
            p.send(r ^ 2, 0, x);
            p.send(PERM[r as usize], 1, x);
        });
        assert_eq!(s.num_shapes(), 1);
        assert_eq!(s.shapes()[0].peers, [PeerRule::Xor(2), PeerRule::Column(0)]);
        assert_eq!(s.explicit_peers(), 8);
        assert_eq!(s.peer_row(3), &[1]);
        // A shared shape whose rule holds for some ranks only: ranks 0..5 send to r + 1 (rank 4's
        // r XOR 1 = 5 agrees too), ranks 5..8 to r XOR 1. The shift fails first at rank 5; the
        // peers of ranks 0..5, not kept while they were pushed, come back from the shift.
        let s = built(8, |r, p| {
            p.compute(1);
            p.send(if r < 5 { r + 1 } else { r ^ 1 }, 0, x);
            p.recv(r ^ 4, 0, y);
        });
        assert_eq!(s.num_shapes(), 1);
        assert_eq!(
            s.shapes()[0].peers,
            [
                PeerRule::Const(ANY_SOURCE),
                PeerRule::Column(0),
                PeerRule::Xor(4)
            ]
        );
        assert_eq!(
            (0..8).map(|r| s.peer_row(r)[0]).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5, 4, 7, 6]
        );
        assert_eq!(s.explicit_peers(), 8);
        // Two shapes: only the ranks of the one without a rule have rows.
        let s = built(6, |r, p| {
            if r < 3 {
                p.send(r + 3, 0, x);
            } else {
                p.recv([1, 2, 0][r as usize - 3], 0, y);
            }
        });
        assert_eq!(s.num_shapes(), 2);
        assert_eq!(s.shapes()[0].peers, [PeerRule::Shift(3)]);
        assert_eq!(s.shapes()[1].peers, [PeerRule::Column(0)]);
        assert_eq!(s.explicit_peers(), 3);
        assert!(s.peer_row(1).is_empty());
        assert_eq!(s.peer_row(4), &[2]);
    }

    #[test]
    fn uint_columns_widen_and_compare_by_value() {
        let mut c = UintColumn::with_capacity(4);
        let values = [0, 255, 256, 65_535, 65_536, u32::MAX as u64, 1 << 32, 7];
        let widths = [1, 1, 2, 2, 4, 4, 8, 8];
        let mut narrow = UintColumn::default();
        for (i, (&v, &w)) in values.iter().zip(&widths).enumerate() {
            c.push(v);
            assert_eq!((c.len(), c.width(), c.bytes()), (i + 1, w, (i + 1) * w));
            assert_eq!(c.last(), Some(v));
            if w == 1 {
                narrow.push(v);
            }
        }
        assert_eq!((0..c.len()).map(|i| c.get(i)).collect::<Vec<_>>(), values);
        // Equal values in different widths are equal columns.
        let mut wide = UintColumn::default();
        wide.push(1 << 40);
        let mut wide = match wide {
            UintColumn::U64(mut v) => {
                v.clear();
                UintColumn::U64(v)
            }
            _ => panic!("a value of 2^40 needs 8 bytes"),
        };
        wide.push(0);
        wide.push(255);
        assert_eq!(wide, narrow);
        assert_ne!(wide.bytes(), narrow.bytes());
        // `fill` widens first, then repeats.
        let mut f = UintColumn::default();
        f.fill(0, 9);
        assert!(f.is_empty() && f.last().is_none());
        f.push(3);
        f.fill(3, 300);
        assert_eq!((f.len(), f.width()), (4, 2));
        assert_eq!(
            (0..4).map(|i| f.get(i)).collect::<Vec<_>>(),
            [3, 300, 300, 300]
        );
    }

    #[test]
    fn scratch_extents() {
        let mut p = Program::new();
        p.recv(0, 0, Slice::new(Slot::Scratch(1), 3, 5));
        assert_eq!(p.scratch_extents(), vec![0, 8]);
    }
}
