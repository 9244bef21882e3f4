//! The storage of a finished [`Schedule`]: its shapes, and per rank the index of its shape, its
//! first op's offset and the peers that follow no rule, each column in the narrowest integer
//! that holds it ([`UintColumn`]); [`RankView`] reads one rank's program out of it.

use super::{
    Dep, DepKind, Meta, Op, OpKind, PeerRule, Program, Rank, ScheduleBuilder, ScheduleError, Shape,
};

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

    /// The peer of op `i` ([`ANY_SOURCE`](super::ANY_SOURCE) for local ops and wildcard receives).
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
pub(super) enum UintColumn {
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
    pub(super) fn with_capacity(n: usize) -> UintColumn {
        UintColumn::U8(Vec::with_capacity(n))
    }

    pub(super) fn len(&self) -> usize {
        match self {
            UintColumn::U8(c) => c.len(),
            UintColumn::U16(c) => c.len(),
            UintColumn::U32(c) => c.len(),
            UintColumn::U64(c) => c.len(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(super) fn last(&self) -> Option<u64> {
        self.len().checked_sub(1).map(|i| self.get(i))
    }

    /// Bytes of one value.
    pub(super) fn width(&self) -> usize {
        match self {
            UintColumn::U8(_) => 1,
            UintColumn::U16(_) => 2,
            UintColumn::U32(_) => 4,
            UintColumn::U64(_) => 8,
        }
    }

    /// Bytes of the values held.
    pub(super) fn bytes(&self) -> usize {
        self.len() * self.width()
    }

    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> u64 {
        match self {
            UintColumn::U8(c) => c[i] as u64,
            UintColumn::U16(c) => c[i] as u64,
            UintColumn::U32(c) => c[i] as u64,
            UintColumn::U64(c) => c[i],
        }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, v: u64) {
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
    pub(super) fn fill(&mut self, cnt: usize, v: u64) {
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
    pub(super) fn reserve_exact(&mut self, n: usize) {
        match self {
            UintColumn::U8(c) => c.reserve_exact(n),
            UintColumn::U16(c) => c.reserve_exact(n),
            UintColumn::U32(c) => c.reserve_exact(n),
            UintColumn::U64(c) => c.reserve_exact(n),
        }
    }

    /// The column in the narrowest width that holds `v` too, with the same room.
    #[cold]
    pub(super) fn widen(&mut self, v: u64) {
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
    pub(super) meta: Meta,
    pub(super) nranks: u32,
    pub(super) shapes: Vec<Shape>,
    /// Each rank's shape; empty when there is one shape (every rank's).
    pub(super) rank_shape: UintColumn,
    /// Each rank's first op in the flat numbering (`nranks + 1` entries); empty when every
    /// shape has `uniform_len` ops (rank `r` starts at `r × uniform_len`).
    pub(super) op_start: UintColumn,
    pub(super) uniform_len: u64,
    pub(super) total_ops: u64,
    /// Each rank's row in `peers` (`nranks + 1` entries); empty when no op needs a column.
    pub(super) peer_start: Vec<u64>,
    /// Explicit peers of the ops whose peers follow no rule, rank by rank.
    pub(super) peers: Vec<Rank>,
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
