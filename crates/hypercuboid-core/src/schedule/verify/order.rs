//! Per-program analysis: the local start order of ops, buffer races, out-of-bounds slices, and
//! sends or receives whose matching depends on timing.
//!
//! Everything here depends only on a program's *shape* (ops and dependencies without peers),
//! so it runs once per distinct shape, however many ranks share it; only the ambiguity check
//! needs the peers, and only for shapes where two same-tag sends (or receives) are unordered.
//!
//! Orders within a rank: op `i` *starts before* op `j` if a dependency path leads from `i` to
//! `j` (both `requires` and `irequires` order starts); `i` *completes before* `j` starts if such a
//! path begins with a `requires` edge. Both are transitive. Reachability is computed with bitsets
//! over the ops in a topological order, in column chunks so that memory stays bounded for
//! programs of any length.

use super::{Cat, Collector, Problem};
use crate::schedule::{
    Combine, DepKind, Op, OpKind, Payload, Rank, RankView, Schedule, Shape, Slice, Slot, ANY_TAG,
};
use rustc_hash::FxHashSet;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Bitset words one chunk of the reachability matrix may hold (8 MiB; tiny in unit tests, to
/// exercise the chunked path and the depth-first fallback).
const REACH_WORDS: usize = if cfg!(test) { 64 } else { 1 << 20 };

/// The local start order of one shape.
#[derive(Debug, Clone)]
pub(super) struct ShapeOrder {
    /// Ops by position in a deterministic topological order of the dependencies (smallest
    /// index first among ready ops); ops on or behind a local dependency cycle come after the
    /// `ordered` ones, in index order (they never start). Empty when the order is the identity
    /// (every dependency on an earlier op, the usual case).
    by_pos: Vec<u32>,
    /// Position of each op (empty for the identity).
    pos: Vec<u32>,
    /// Number of ops.
    pub n: u32,
    /// Number of ops in the topological order.
    pub ordered: u32,
    /// Whether a receive uses `ANY_TAG`.
    pub any_tag: bool,
    /// Whether some message carries only a size (no data semantics).
    pub has_bytes: bool,
}

impl ShapeOrder {
    /// Position of op `i`.
    #[inline]
    pub(super) fn pos(&self, i: u32) -> u32 {
        if self.pos.is_empty() {
            i
        } else {
            self.pos[i as usize]
        }
    }

    /// The op at position `p`.
    #[inline]
    pub(super) fn at(&self, p: u32) -> u32 {
        if self.by_pos.is_empty() {
            p
        } else {
            self.by_pos[p as usize]
        }
    }

    /// Ops in start order.
    pub(super) fn in_order(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.n).map(move |p| self.at(p))
    }

    /// Sends of `shape` (this order's shape) in start order.
    pub(super) fn sends<'a>(&'a self, shape: &'a Shape) -> impl Iterator<Item = u32> + 'a {
        self.in_order()
            .filter(move |&i| matches!(shape.ops[i as usize].kind, OpKind::Send { .. }))
    }

    /// Receives of `shape` (this order's shape) in start order.
    pub(super) fn recvs<'a>(&'a self, shape: &'a Shape) -> impl Iterator<Item = u32> + 'a {
        self.in_order()
            .filter(move |&i| matches!(shape.ops[i as usize].kind, OpKind::Recv { .. }))
    }
}

/// Computes the local start order of a shape.
pub(super) fn topo(shape: &Shape) -> ShapeOrder {
    let n = shape.len();
    let mut any_tag = false;
    let mut has_bytes = false;
    for op in &shape.ops {
        match op.kind {
            OpKind::Send { data, .. } => has_bytes |= matches!(data, Payload::Bytes(_)),
            OpKind::Recv { tag, data, .. } => {
                any_tag |= tag == ANY_TAG;
                has_bytes |= matches!(data, Payload::Bytes(_));
            }
            _ => {}
        }
    }
    let mut ord = ShapeOrder {
        by_pos: Vec::new(),
        pos: Vec::new(),
        n: n as u32,
        ordered: n as u32,
        any_tag,
        has_bytes,
    };
    if (0..n).all(|i| shape.deps(i).iter().all(|d| (d.on as usize) < i)) {
        return ord;
    }
    let mut indeg: Vec<u32> = (0..n).map(|i| shape.deps(i).len() as u32).collect();
    let mut heap: BinaryHeap<Reverse<u32>> = (0..n as u32)
        .filter(|&i| indeg[i as usize] == 0)
        .map(Reverse)
        .collect();
    let mut by_pos = Vec::with_capacity(n);
    while let Some(Reverse(i)) = heap.pop() {
        by_pos.push(i);
        for &(k, _) in shape.dependents(i as usize) {
            indeg[k as usize] -= 1;
            if indeg[k as usize] == 0 {
                heap.push(Reverse(k));
            }
        }
    }
    ord.ordered = by_pos.len() as u32;
    if by_pos.len() < n {
        by_pos.extend((0..n as u32).filter(|&i| indeg[i as usize] > 0));
    }
    let mut pos = vec![0u32; n];
    for (p, &i) in by_pos.iter().enumerate() {
        pos[i as usize] = p as u32;
    }
    ord.by_pos = by_pos;
    ord.pos = pos;
    ord
}

/// The ranks running each shape (counting sort of ranks by shape).
pub(super) struct RanksByShape {
    start: Vec<u32>,
    ranks: Vec<Rank>,
}

impl RanksByShape {
    /// Groups the ranks of `s` by shape.
    pub(super) fn new(s: &Schedule) -> RanksByShape {
        let mut start = vec![0u32; s.num_shapes() + 1];
        for r in 0..s.nranks() {
            start[s.shape_index(r) + 1] += 1;
        }
        for k in 0..s.num_shapes() {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut ranks = vec![0; s.nranks() as usize];
        for r in 0..s.nranks() {
            let f = &mut fill[s.shape_index(r)];
            ranks[*f as usize] = r;
            *f += 1;
        }
        RanksByShape { start, ranks }
    }

    /// The ranks running shape `k`, in increasing order.
    pub(super) fn of(&self, k: usize) -> &[Rank] {
        &self.ranks[self.start[k] as usize..self.start[k + 1] as usize]
    }
}

/// Reachability from every op to the ops at positions `c0..c1` (one column chunk).
struct Reach {
    c0: u32,
    c1: u32,
    w: usize,
    rows: Vec<u64>,
}

impl Reach {
    fn build(shape: &Shape, ord: &ShapeOrder, c0: u32, c1: u32, w: usize) -> Reach {
        let mut rows = vec![0u64; c1 as usize * w];
        for p in (0..c1 as usize).rev() {
            let i = ord.at(p as u32) as usize;
            let (head, tail) = rows.split_at_mut((p + 1) * w);
            let row = &mut head[p * w..];
            for &(k, _) in shape.dependents(i) {
                let pk = ord.pos(k);
                if pk >= ord.ordered {
                    continue;
                }
                if pk >= c0 && pk < c1 {
                    let b = (pk - c0) as usize;
                    row[b / 64] |= 1 << (b % 64);
                }
                if pk < c1 {
                    let off = (pk as usize - p - 1) * w;
                    for (x, y) in row.iter_mut().zip(&tail[off..off + w]) {
                        *x |= *y;
                    }
                }
            }
        }
        Reach { c0, c1, w, rows }
    }

    /// Whether a path leads from position `pi` to position `pj` (`pj` in the chunk, `pi < c1`).
    fn get(&self, pi: u32, pj: u32) -> bool {
        let b = (pj - self.c0) as usize;
        (self.rows[pi as usize * self.w + b / 64] >> (b % 64)) & 1 == 1
    }

    /// Whether op `i` starts before op `j` (`pos i < pos j`, `j` in the chunk).
    fn starts_before(&self, ord: &ShapeOrder, i: u32, j: u32) -> bool {
        self.get(ord.pos(i), ord.pos(j))
    }

    /// Whether op `i` completes before op `j` starts (`pos i < pos j`, `j` in the chunk).
    fn completes_before(&self, shape: &Shape, ord: &ShapeOrder, i: u32, j: u32) -> bool {
        let pj = ord.pos(j);
        shape.dependents(i as usize).iter().any(|&(k, kind)| {
            let pk = ord.pos(k);
            kind == DepKind::Requires
                && pk < ord.ordered
                && (pk == pj || (pk < pj && pk < self.c1 && self.get(pk, pj)))
        })
    }
}

/// Starts-before queries for shapes too long for one reachability chunk: a depth-first search
/// bounded by the topological position of the target.
fn starts_before_dfs(
    shape: &Shape,
    ord: &ShapeOrder,
    i: u32,
    j: u32,
    seen: &mut Vec<bool>,
    stack: &mut Vec<u32>,
) -> bool {
    let pj = ord.pos(j);
    seen.clear();
    seen.resize(shape.len(), false);
    stack.clear();
    stack.push(i);
    while let Some(a) = stack.pop() {
        for &(k, _) in shape.dependents(a as usize) {
            if k == j {
                return true;
            }
            let pk = ord.pos(k);
            if pk < pj && !seen[k as usize] {
                seen[k as usize] = true;
                stack.push(k);
            }
        }
    }
    false
}

/// One reachability question about a pair of ops (`pos i < pos j`).
struct Query {
    pj: u32,
    i: u32,
    j: u32,
    /// Completes-before (race check) or starts-before (ambiguity chain check).
    completes: bool,
    /// Race: index into the race contexts; chain: index of the group.
    ctx: u32,
}

/// Elements an op reads and writes: `(slice, writes)`; the input buffer and empty slices are
/// left out (nothing writes the input).
fn accesses(op: &Op, mut f: impl FnMut(Slice, bool)) {
    op.for_each_slice(|s, w| {
        if s.slot != Slot::Input && s.len > 0 {
            f(s, w)
        }
    })
}

/// The slices of `in` and `out` an op names.
fn vector_slices(op: &Op, mut f: impl FnMut(Slice)) {
    op.for_each_slice(|s, _| {
        if matches!(s.slot, Slot::Input | Slot::Output) {
            f(s)
        }
    })
}

/// What two same-channel messages must agree on for their order not to matter.
fn match_key(op: &Op) -> (Payload, Option<Combine>) {
    match op.kind {
        OpKind::Send { data, .. } => (data, None),
        OpKind::Recv { data, combine, .. } => (data, Some(combine)),
        _ => unreachable!("match_key of a local op"),
    }
}

/// A group of same-kind, same-tag messages of a shape: `msgs[lo..hi]`, by position.
struct Group {
    lo: usize,
    hi: usize,
    chain: bool,
    recv: bool,
}

/// Fills `msgs` with `(receive?, tag, position, op)` of the ordered messages of a shape, sorted,
/// and `groups` with the runs of two or more messages of one kind and tag.
fn groups(
    shape: &Shape,
    ord: &ShapeOrder,
    msgs: &mut Vec<(bool, i32, u32, u32)>,
    groups: &mut Vec<Group>,
) {
    msgs.clear();
    groups.clear();
    for i in ord.in_order().take(ord.ordered as usize) {
        match shape.ops[i as usize].kind {
            OpKind::Send { tag, .. } => msgs.push((false, tag, ord.pos(i), i)),
            OpKind::Recv { tag, .. } if !ord.any_tag => msgs.push((true, tag, ord.pos(i), i)),
            _ => {}
        }
    }
    msgs.sort_unstable();
    let mut lo = 0;
    while lo < msgs.len() {
        let key = (msgs[lo].0, msgs[lo].1);
        let hi = lo + msgs[lo..].partition_point(|m| (m.0, m.1) == key);
        if hi - lo > 1 {
            groups.push(Group {
                lo,
                hi,
                chain: true,
                recv: key.0,
            });
        }
        lo = hi;
    }
}

/// Where a race query came from: the slot and the elementary segment where both ops meet.
#[derive(Clone, Copy)]
struct RaceCtx {
    slot: Slot,
    lo: u64,
}

/// One access to a buffer: `[lo, hi)` of `slot`, by op `op`.
#[derive(Clone, Copy)]
struct Access {
    slot: Slot,
    lo: u64,
    hi: u64,
    op: u32,
    write: bool,
}

/// Queries whose answers prove that every pair of ops touching a common element, one of them
/// writing, is ordered (the writes form a chain and every read sits between two consecutive
/// writes; completes-before is transitive, so these pairs suffice). Each failing query is a
/// racing pair.
fn race_queries(
    shape: &Shape,
    ord: &ShapeOrder,
    queries: &mut Vec<Query>,
    ctxs: &mut Vec<RaceCtx>,
    accs: &mut Vec<Access>,
) {
    accs.clear();
    for i in ord.in_order().take(ord.ordered as usize) {
        accesses(&shape.ops[i as usize], |s, write| {
            accs.push(Access {
                slot: s.slot,
                lo: s.offset,
                hi: s.end(),
                op: i,
                write,
            })
        });
    }
    accs.sort_unstable_by_key(|a| (a.slot, a.lo));
    let mut seen: FxHashSet<(u32, u32)> = FxHashSet::default();
    let mut start = 0;
    let mut bounds: Vec<u64> = Vec::new();
    let mut active: Vec<usize> = Vec::new();
    let mut entries: Vec<(u32, u32, bool)> = Vec::new();
    let mut reads: Vec<u32> = Vec::new();
    while start < accs.len() {
        let slot = accs[start].slot;
        let end = start + accs[start..].partition_point(|a| a.slot == slot);
        let group = &accs[start..end];
        if group.len() > 1 && group.iter().any(|a| a.write) {
            bounds.clear();
            bounds.extend(group.iter().flat_map(|a| [a.lo, a.hi]));
            bounds.sort_unstable();
            bounds.dedup();
            active.clear();
            let mut next = 0;
            for w in bounds.windows(2) {
                let a = w[0];
                active.retain(|&x| group[x].hi > a);
                while next < group.len() && group[next].lo <= a {
                    if group[next].hi > a {
                        active.push(next);
                    }
                    next += 1;
                }
                if active.len() < 2 || !active.iter().any(|&x| group[x].write) {
                    continue;
                }
                entries.clear();
                entries.extend(active.iter().map(|&x| {
                    let g = &group[x];
                    (ord.pos(g.op), g.op, g.write)
                }));
                entries.sort_unstable();
                // One entry per op (an op may read and write the same elements).
                entries.dedup_by(|b, a| {
                    if a.1 == b.1 {
                        a.2 |= b.2;
                        true
                    } else {
                        false
                    }
                });
                if entries.len() < 2 {
                    continue;
                }
                let mut last_write: Option<u32> = None;
                reads.clear();
                let mut ask = |i: u32, j: u32| {
                    if seen.insert((i, j)) {
                        queries.push(Query {
                            pj: ord.pos(j),
                            i,
                            j,
                            completes: true,
                            ctx: ctxs.len() as u32,
                        });
                        ctxs.push(RaceCtx { slot, lo: a });
                    }
                };
                for &(_, op, write) in entries.iter() {
                    if let Some(w) = last_write {
                        ask(w, op);
                    }
                    if write {
                        for &r in reads.iter() {
                            ask(r, op);
                        }
                        reads.clear();
                        last_write = Some(op);
                    } else {
                        reads.push(op);
                    }
                }
            }
        }
        start = end;
    }
}

/// Runs the per-shape checks for every distinct shape: out-of-bounds slices and buffer races
/// (when `data`), and ambiguous matching. `dynamic(rank)` tells whether the rank's receives are
/// matched at run time (wildcards).
pub(super) fn check_shapes(
    s: &Schedule,
    orders: &[ShapeOrder],
    by_shape: &RanksByShape,
    data: bool,
    dynamic: &dyn Fn(Rank) -> bool,
    col: &mut Collector,
) {
    let count = s.meta().count;
    let mut seen = Vec::new();
    let mut stack = Vec::new();
    let mut queries = Vec::new();
    let mut ctxs = Vec::new();
    let mut accs = Vec::new();
    let mut msgs = Vec::new();
    let mut groups_v = Vec::new();
    let mut failed_races: Vec<(u32, u32, u32)> = Vec::new();
    let mut sub: Vec<(Rank, u32, u32)> = Vec::new();
    for (si, shape) in s.shapes().iter().enumerate() {
        let ord = &orders[si];
        let ranks = by_shape.of(si);
        let Some(&first) = ranks.first() else {
            continue;
        };
        let view = s.rank(first);
        queries.clear();
        ctxs.clear();
        accs.clear();
        if data {
            for (i, op) in shape.ops.iter().enumerate() {
                vector_slices(op, |sl| {
                    if sl.end() > count {
                        col.push(
                            Cat::Bounds,
                            Problem::OutOfBounds {
                                rank: first,
                                op: i as u32,
                                what: view.op(i),
                                slice: sl,
                                count,
                                ranks: ranks.len() as u64,
                            },
                        );
                    }
                });
            }
            race_queries(shape, ord, &mut queries, &mut ctxs, &mut accs);
        }
        groups(shape, ord, &mut msgs, &mut groups_v);
        for (gi, g) in groups_v.iter().enumerate() {
            for w in msgs[g.lo..g.hi].windows(2) {
                queries.push(Query {
                    pj: w[1].2,
                    i: w[0].3,
                    j: w[1].3,
                    completes: false,
                    ctx: gi as u32,
                });
            }
        }
        if queries.is_empty() {
            continue;
        }
        queries.sort_by_key(|q| q.pj);
        let n = ord.ordered as usize;
        let w = (REACH_WORDS / n.max(1)).clamp(1, n.div_ceil(64));
        let width = (w * 64) as u32;
        failed_races.clear();
        let mut full: Option<Reach> = None;
        let mut q = 0;
        while q < queries.len() {
            let c0 = queries[q].pj / width * width;
            let c1 = (c0 + width).min(ord.ordered);
            let reach = Reach::build(shape, ord, c0, c1, w);
            while q < queries.len() && queries[q].pj < c1 {
                let qu = &queries[q];
                if qu.completes {
                    if !reach.completes_before(shape, ord, qu.i, qu.j) {
                        failed_races.push((qu.i, qu.j, qu.ctx));
                    }
                } else if !reach.starts_before(ord, qu.i, qu.j) {
                    groups_v[qu.ctx as usize].chain = false;
                }
                q += 1;
            }
            if c0 == 0 && c1 == ord.ordered {
                full = Some(reach);
            }
        }
        for &(i, j, ctx) in &failed_races {
            let c: RaceCtx = ctxs[ctx as usize];
            let range = |op: u32| {
                accs.iter()
                    .find(|a: &&Access| {
                        a.op == op && a.slot == c.slot && a.lo <= c.lo && c.lo < a.hi
                    })
                    .map_or((c.lo, c.lo + 1), |a| (a.lo, a.hi))
            };
            let (a, b) = (range(i), range(j));
            let lo = a.0.max(b.0);
            let hi = a.1.min(b.1);
            let (ops, what) = in_program_order(&view, i, j);
            col.push(
                Cat::Race,
                Problem::BufferRace {
                    rank: first,
                    ops,
                    what,
                    overlap: Slice::new(c.slot, lo, hi - lo),
                    ranks: ranks.len() as u64,
                },
            );
        }
        // Ambiguity: only groups whose messages are not totally ordered need the peers.
        if groups_v.iter().all(|g| g.chain) {
            continue;
        }
        for &r in ranks {
            let v = s.rank(r);
            for g in groups_v.iter().filter(|g| !g.chain) {
                if g.recv && dynamic(r) {
                    continue;
                }
                sub.clear();
                sub.extend(
                    msgs[g.lo..g.hi]
                        .iter()
                        .map(|m| (v.peer(m.3 as usize), m.2, m.3)),
                );
                sub.sort_unstable();
                for chan in sub.chunk_by(|a, b| a.0 == b.0) {
                    'pairs: for x in 0..chan.len() {
                        for y in x + 1..chan.len() {
                            let (i, j) = (chan[x].2, chan[y].2);
                            if match_key(&shape.ops[i as usize])
                                == match_key(&shape.ops[j as usize])
                            {
                                continue;
                            }
                            let ordered = match &full {
                                Some(reach) => reach.starts_before(ord, i, j),
                                None => starts_before_dfs(shape, ord, i, j, &mut seen, &mut stack),
                            };
                            if !ordered {
                                let (ops, what) = in_program_order(&v, i, j);
                                col.push(
                                    Cat::Ambiguous,
                                    Problem::AmbiguousMatch { rank: r, ops, what },
                                );
                                break 'pairs;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Ops `i` and `j` of a rank in program order, with what they are: the `ops` and `what` of a
/// problem about the two.
fn in_program_order(v: &RankView<'_>, i: u32, j: u32) -> ([u32; 2], [Op; 2]) {
    let (a, b) = (i.min(j), i.max(j));
    ([a, b], [v.op(a as usize), v.op(b as usize)])
}
