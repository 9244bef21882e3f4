//! Symbolic execution of a data-semantic schedule (allreduce).
//!
//! Values are expressions over leaves `xq` (rank q's input element). Nothing is tracked element
//! by element: each buffer of each rank is an interval map of runs `[lo, hi) → (e, sh)`, meaning
//! element `p` holds expression `e` evaluated at element `p + sh`. Expressions are hash-consed in
//! one arena: `Leaf(q)` or `Op(l, r, d)` = `l ⊕ (r shifted by d)`, with the left operand
//! unshifted, so every value has exactly one representation and identical partial results on
//! different ranks share one id (equality is an id comparison).
//!
//! Every node carries a fingerprint of its leaf multiset: the number of leaves and two sums of
//! per-leaf random 64-bit hashes, plus flags for "mixes elements of different positions" and
//! "contains uninitialized data". An output element is correct iff its value has no flag, no
//! shift, `N` leaves and the fingerprint of `{x0, …, x(N-1)}`; the leaf set is then confirmed
//! exactly by a walk of the tree within a budget of node visits (`Semantics::exact` says
//! whether every result was confirmed that way).

use super::graph::Exec;
use super::matching::Links;
use super::{Difference, ExprAt, Meaning, Problem, Semantics};
use crate::schedule::{Combine, OpKind, Payload, Rank, ReduceOp, Schedule, Slice, Slot};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

const LEAF: u32 = u32::MAX;
const UNSET: u32 = u32::MAX;
const F_SHIFTED: u8 = 1;
const F_UNDEF: u8 = 2;
/// Node visits the exact leaf check may spend over the whole schedule.
const EXACT_BUDGET: u64 = 1 << 27;
/// Tree nodes the diagnosis of a wrong result may visit.
const DIAGNOSE_NODES: u64 = 1 << 20;
/// Length of rendered expressions.
const RENDER_CHARS: usize = 120;

fn mix(mut z: u64) -> u64 {
    // splitmix64 finaliser.
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn leaf_hash(q: u32) -> (u64, u64) {
    (
        mix(q as u64 ^ 0x9e37_79b9_7f4a_7c15),
        mix((q as u64).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x6a09_e667_f3bc_c909),
    )
}

/// A value: expression `e` evaluated `sh` elements further on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Val {
    e: u32,
    sh: i64,
}

/// A run of a value over `[lo, hi)` (message or buffer coordinates).
#[derive(Clone, Copy, Debug)]
struct Seg {
    lo: u64,
    hi: u64,
    v: Val,
}

/// A run stored in a buffer map, keyed by its first element.
#[derive(Clone, Copy, Debug)]
struct Run {
    hi: u64,
    v: Val,
}

/// The hash-consed expressions.
struct Arena {
    n: u32,
    l: Vec<u32>,
    r: Vec<u32>,
    count: Vec<u64>,
    h1: Vec<u64>,
    h2: Vec<u64>,
    flags: Vec<u8>,
    plain: FxHashMap<u64, u32>,
    shifted: FxHashMap<(u32, u32, i64), u32>,
    shift_of: FxHashMap<u32, i64>,
}

impl Arena {
    fn new(n: u32) -> Arena {
        let mut a = Arena {
            n,
            l: Vec::new(),
            r: Vec::new(),
            count: Vec::new(),
            h1: Vec::new(),
            h2: Vec::new(),
            flags: Vec::new(),
            plain: FxHashMap::default(),
            shifted: FxHashMap::default(),
            shift_of: FxHashMap::default(),
        };
        for q in 0..=n {
            let (h1, h2) = leaf_hash(q);
            a.l.push(LEAF);
            a.r.push(q);
            a.count.push((q < n) as u64);
            a.h1.push(if q < n { h1 } else { 0 });
            a.h2.push(if q < n { h2 } else { 0 });
            a.flags.push(if q < n { 0 } else { F_UNDEF });
        }
        a
    }

    fn undef(&self) -> Val {
        Val { e: self.n, sh: 0 }
    }

    fn is_leaf(&self, e: u32) -> bool {
        self.l[e as usize] == LEAF
    }

    fn shift(&self, e: u32) -> i64 {
        if self.flags[e as usize] & F_SHIFTED != 0 {
            self.shift_of.get(&e).copied().unwrap_or(0)
        } else {
            0
        }
    }

    /// `a ⊕ b`.
    fn op(&mut self, a: Val, b: Val) -> Val {
        let d = b.sh - a.sh;
        let found = if d == 0 {
            self.plain.get(&((a.e as u64) << 32 | b.e as u64)).copied()
        } else {
            self.shifted.get(&(a.e, b.e, d)).copied()
        };
        let e = match found {
            Some(e) => e,
            None => {
                let e = self.l.len() as u32;
                let (x, y) = (a.e as usize, b.e as usize);
                self.l.push(a.e);
                self.r.push(b.e);
                self.count.push(self.count[x].saturating_add(self.count[y]));
                self.h1.push(self.h1[x].wrapping_add(self.h1[y]));
                self.h2.push(self.h2[x].wrapping_add(self.h2[y]));
                let mut fl = self.flags[x] | self.flags[y];
                if d == 0 {
                    self.plain.insert((a.e as u64) << 32 | b.e as u64, e);
                } else {
                    fl |= F_SHIFTED;
                    self.shifted.insert((a.e, b.e, d), e);
                    self.shift_of.insert(e, d);
                }
                self.flags.push(fl);
                e
            }
        };
        Val { e, sh: a.sh }
    }
}

/// Per-rank buffers: one interval map per slot in use (the input is implicit).
#[derive(Default)]
struct Bufs {
    maps: Vec<(Slot, BTreeMap<u64, Run>)>,
}

impl Bufs {
    fn get(&self, slot: Slot) -> Option<&BTreeMap<u64, Run>> {
        self.maps.iter().find(|m| m.0 == slot).map(|m| &m.1)
    }

    fn get_mut(&mut self, slot: Slot) -> &mut BTreeMap<u64, Run> {
        let k = match self.maps.iter().position(|m| m.0 == slot) {
            Some(k) => k,
            None => {
                self.maps.push((slot, BTreeMap::new()));
                self.maps.len() - 1
            }
        };
        &mut self.maps[k].1
    }
}

/// Replaces `[a, b)` of `map` with `segs` (buffer coordinates, covering `[a, b)` in order),
/// merging equal neighbours.
fn write_map(map: &mut BTreeMap<u64, Run>, a: u64, b: u64, segs: &[Seg]) {
    if a >= b {
        return;
    }
    if let Some((&k, run)) = map.range(..a).next_back() {
        let old = *run;
        if old.hi > a {
            map.insert(k, Run { hi: a, v: old.v });
            if old.hi > b {
                map.insert(
                    b,
                    Run {
                        hi: old.hi,
                        v: old.v,
                    },
                );
            }
        }
    }
    while let Some((&k, &run)) = map.range(a..b).next() {
        map.remove(&k);
        if run.hi > b {
            map.insert(
                b,
                Run {
                    hi: run.hi,
                    v: run.v,
                },
            );
        }
    }
    let mut merged: Vec<Seg> = Vec::with_capacity(segs.len());
    for s in segs {
        match merged.last_mut() {
            Some(m) if m.v == s.v && m.hi == s.lo => m.hi = s.hi,
            _ => merged.push(*s),
        }
    }
    if let (Some(first), Some((&k, run))) = (merged.first_mut(), map.range(..a).next_back()) {
        if run.hi == a && run.v == first.v {
            first.lo = k;
        }
    }
    if let Some(last) = merged.last_mut() {
        if let Some(run) = map.get(&b).copied() {
            if run.v == last.v {
                map.remove(&b);
                last.hi = run.hi;
            }
        }
    }
    for s in merged {
        map.insert(s.lo, Run { hi: s.hi, v: s.v });
    }
}

/// The symbolic state of every rank.
pub(super) struct Sym {
    n: u32,
    count: u64,
    /// An alltoall's block (elements per rank pair); `None` for an allreduce.
    block: Option<u64>,
    op: ReduceOp,
    arena: Arena,
    bufs: Vec<Bufs>,
    msgs: FxHashMap<u64, Vec<Seg>>,
    /// Uninitialized reads found.
    pub uninit: Vec<Problem>,
    tmp: Vec<Seg>,
    tmp2: Vec<Seg>,
}

impl Sym {
    /// The initial state of `s`: every rank's input holds its leaf, nothing else is written.
    pub(super) fn new(s: &Schedule) -> Sym {
        let n = s.nranks();
        Sym {
            n,
            count: s.meta().count,
            block: s.meta().collective.block(),
            // Only schedules with data semantics are evaluated; a collective without an
            // operator combines nothing, and its symbols never meet one.
            op: s.meta().op().unwrap_or(ReduceOp::Sum),
            arena: Arena::new(n),
            bufs: (0..n).map(|_| Bufs::default()).collect(),
            msgs: FxHashMap::default(),
            uninit: Vec::new(),
            tmp: Vec::new(),
            tmp2: Vec::new(),
        }
    }

    /// Reads `sl` of rank `r` into `out` in slice coordinates (element `i` is `sl.offset + i`).
    /// Returns the first never-written range in buffer coordinates.
    fn read(&self, r: Rank, sl: Slice, out: &mut Vec<Seg>) -> Option<(u64, u64)> {
        out.clear();
        let (a, b) = (sl.offset, sl.end());
        let undef = self.arena.undef();
        if a >= b {
            return None;
        }
        if sl.slot == Slot::Input {
            let inside = b.min(self.count.max(a));
            if inside > a {
                out.push(Seg {
                    lo: 0,
                    hi: inside - a,
                    v: Val { e: r, sh: a as i64 },
                });
            }
            if b > inside {
                out.push(Seg {
                    lo: inside - a,
                    hi: b - a,
                    v: undef,
                });
            }
            return None;
        }
        let mut gap = None;
        let mut at = a;
        let emit = |lo: u64, hi: u64, v: Val, out: &mut Vec<Seg>| {
            let v = if v == undef {
                v
            } else {
                Val {
                    e: v.e,
                    sh: v.sh + a as i64,
                }
            };
            out.push(Seg {
                lo: lo - a,
                hi: hi - a,
                v,
            });
        };
        if let Some(map) = self.bufs[r as usize].get(sl.slot) {
            let first = map
                .range(..=a)
                .next_back()
                .filter(|(_, run)| run.hi > a)
                .map(|(&k, &run)| (k, run));
            let rest = map.range(a + 1..b).map(|(&k, &run)| (k, run));
            for (k, run) in first.into_iter().chain(rest) {
                let lo = k.max(a);
                if lo > at {
                    gap.get_or_insert((at, lo));
                    emit(at, lo, undef, out);
                }
                let hi = run.hi.min(b);
                emit(lo, hi, run.v, out);
                at = hi;
            }
        }
        if at < b {
            gap.get_or_insert((at, b));
            emit(at, b, undef, out);
        }
        gap
    }

    fn write(&mut self, r: Rank, dst: Slice, segs: &[Seg]) {
        let c = dst.offset;
        let undef = self.arena.undef();
        let shifted: Vec<Seg> = segs
            .iter()
            .map(|s| Seg {
                lo: s.lo + c,
                hi: s.hi + c,
                v: if s.v == undef {
                    s.v
                } else {
                    Val {
                        e: s.v.e,
                        sh: s.v.sh - c as i64,
                    }
                },
            })
            .collect();
        write_map(
            self.bufs[r as usize].get_mut(dst.slot),
            c,
            dst.end(),
            &shifted,
        );
    }

    /// `dst = incoming ⊕ dst` (`left`) or `dst ⊕ incoming`; `incoming` in slice coordinates.
    fn combine(&mut self, r: Rank, dst: Slice, incoming: &[Seg], left: bool) -> Option<(u64, u64)> {
        self.combine_from(r, dst, dst, incoming, left)
    }

    /// `dst = incoming ⊕ acc` (`left`) or `acc ⊕ incoming`, `acc` and `dst` of equal length
    /// (a receive-reduce-copy reads `acc` and writes `dst`).
    fn combine_from(
        &mut self,
        r: Rank,
        acc: Slice,
        dst: Slice,
        incoming: &[Seg],
        left: bool,
    ) -> Option<(u64, u64)> {
        let mut cur = std::mem::take(&mut self.tmp2);
        let gap = self.read(r, acc, &mut cur);
        let mut out = Vec::with_capacity(cur.len().max(incoming.len()));
        let (mut x, mut y) = (0, 0);
        let mut at = 0;
        while x < incoming.len() && y < cur.len() {
            let (a, b) = (incoming[x], cur[y]);
            let hi = a.hi.min(b.hi);
            let v = if left {
                self.arena.op(a.v, b.v)
            } else {
                self.arena.op(b.v, a.v)
            };
            out.push(Seg { lo: at, hi, v });
            at = hi;
            if a.hi == hi {
                x += 1;
            }
            if b.hi == hi {
                y += 1;
            }
        }
        self.write(r, dst, &out);
        self.tmp2 = cur;
        gap
    }

    fn uninit(&mut self, r: Rank, i: u32, s: &Schedule, slot: Slot, gap: Option<(u64, u64)>) {
        if let Some((lo, hi)) = gap {
            self.uninit.push(Problem::UninitializedRead {
                rank: r,
                op: i,
                what: s.rank(r).op(i as usize),
                slice: Slice::new(slot, lo, hi - lo),
            });
        }
    }

    /// Fits a message to the receive's length (only differs in schedules with size problems,
    /// whose semantics are not reported).
    fn fit(&self, mut segs: Vec<Seg>, len: u64) -> Vec<Seg> {
        segs.retain(|s| s.lo < len);
        if let Some(last) = segs.last_mut() {
            last.hi = last.hi.min(len);
        }
        let have = segs.last().map_or(0, |s| s.hi);
        if have < len {
            segs.push(Seg {
                lo: have,
                hi: len,
                v: self.arena.undef(),
            });
        }
        segs
    }
}

impl Exec for Sym {
    fn start(&mut self, s: &Schedule, _l: &Links, r: Rank, i: u32) {
        let op = s.rank(r).shape.ops[i as usize];
        match op.kind {
            OpKind::Send {
                data: Payload::Data(sl),
                ..
            } => {
                let mut segs = Vec::new();
                let gap = self.read(r, sl, &mut segs);
                self.uninit(r, i, s, sl.slot, gap);
                self.msgs.insert(s.op_offset(r) + i as u64, segs);
            }
            OpKind::Reduce { src, dst, combine } => {
                let mut inc = std::mem::take(&mut self.tmp);
                let gap = self.read(r, src, &mut inc);
                let gap2 = self.combine(r, dst, &inc, combine == Combine::Before);
                self.tmp = inc;
                match gap {
                    Some(_) => self.uninit(r, i, s, src.slot, gap),
                    None => self.uninit(r, i, s, dst.slot, gap2),
                }
            }
            OpKind::Copy { src, dst } => {
                let mut inc = std::mem::take(&mut self.tmp);
                let gap = self.read(r, src, &mut inc);
                self.write(r, dst, &inc);
                self.tmp = inc;
                self.uninit(r, i, s, src.slot, gap);
            }
            _ => {}
        }
    }

    fn end(&mut self, s: &Schedule, l: &Links, r: Rank, i: u32) {
        // Through RankView::op: shapes store a receive's operand order relative to its peer.
        let op = s.rank(r).op(i as usize);
        let OpKind::Recv {
            data: Payload::Data(sl),
            combine,
            operand,
            ..
        } = op.kind
        else {
            return;
        };
        let Some(msg) = l.matched_send(s, r, i).and_then(|f| self.msgs.remove(&f)) else {
            return;
        };
        let msg = self.fit(msg, sl.len);
        match combine {
            Combine::Assign => self.write(r, sl, &msg),
            Combine::Before | Combine::After => {
                let acc = operand.unwrap_or(sl);
                let gap = self.combine_from(r, acc, sl, &msg, combine == Combine::Before);
                self.uninit(r, i, s, acc.slot, gap);
            }
        }
    }
}

/// Lazily computed facts about expressions, for the final check.
struct Facts {
    /// Commutative canonical id (children of each `⊕` in a fixed order).
    cid: Vec<u32>,
    ctable: FxHashMap<(u32, u32, i64), u32>,
    /// In-order leaf range `lo << 32 | hi` when the leaves are `lo, lo+1, …, hi` in order.
    inorder: Vec<u64>,
    /// 0 unknown, 1 exactly right, 2 wrong.
    exact: Vec<u8>,
    budget: u64,
    all_exact: bool,
    seen: Vec<u64>,
}

const IN_UNSET: u64 = u64::MAX;
const IN_NONE: u64 = u64::MAX - 1;

impl Facts {
    fn new(nodes: usize, n: u32) -> Facts {
        Facts {
            cid: vec![UNSET; nodes],
            ctable: FxHashMap::default(),
            inorder: vec![IN_UNSET; nodes],
            exact: vec![0; nodes],
            budget: EXACT_BUDGET,
            all_exact: true,
            seen: vec![0; (n as usize).div_ceil(64)],
        }
    }

    /// Post-order evaluation of a memoised function of the expression DAG.
    fn eval<T: Copy + PartialEq>(
        ar: &Arena,
        memo: &mut [T],
        unset: T,
        e: u32,
        mut f: impl FnMut(&Arena, u32, Option<(T, T)>) -> T,
    ) -> T {
        if memo[e as usize] != unset {
            return memo[e as usize];
        }
        let mut stack = vec![e];
        while let Some(&x) = stack.last() {
            if memo[x as usize] != unset {
                stack.pop();
                continue;
            }
            if ar.is_leaf(x) {
                memo[x as usize] = f(ar, x, None);
                stack.pop();
                continue;
            }
            let (a, b) = (ar.l[x as usize], ar.r[x as usize]);
            if memo[a as usize] == unset {
                stack.push(a);
                continue;
            }
            if memo[b as usize] == unset {
                stack.push(b);
                continue;
            }
            memo[x as usize] = f(ar, x, Some((memo[a as usize], memo[b as usize])));
            stack.pop();
        }
        memo[e as usize]
    }

    fn cid(&mut self, ar: &Arena, e: u32) -> u32 {
        let table = &mut self.ctable;
        let base = ar.n + 1;
        Facts::eval(ar, &mut self.cid, UNSET, e, |ar, x, kids| match kids {
            None => x,
            Some((ca, cb)) => {
                let d = ar.shift(x);
                let key = if d == 0 {
                    (ca.min(cb), ca.max(cb), 0)
                } else {
                    (ca, cb, d)
                };
                let next = base + table.len() as u32;
                *table.entry(key).or_insert(next)
            }
        })
    }

    fn inorder(&mut self, ar: &Arena, e: u32) -> Option<(u32, u32)> {
        let v = Facts::eval(
            ar,
            &mut self.inorder,
            IN_UNSET,
            e,
            |ar, x, kids| match kids {
                None => {
                    let q = ar.r[x as usize];
                    if q < ar.n {
                        (q as u64) << 32 | q as u64
                    } else {
                        IN_NONE
                    }
                }
                Some((a, b)) => {
                    if a == IN_NONE || b == IN_NONE || ar.shift(x) != 0 {
                        return IN_NONE;
                    }
                    let (alo, ahi) = (a >> 32, a & 0xffff_ffff);
                    let (blo, bhi) = (b >> 32, b & 0xffff_ffff);
                    if blo == ahi + 1 {
                        alo << 32 | bhi
                    } else {
                        IN_NONE
                    }
                }
            },
        );
        (v != IN_NONE).then_some(((v >> 32) as u32, (v & 0xffff_ffff) as u32))
    }

    /// Whether `v` is the reduction of every rank's element at the same position, each once.
    fn correct(&mut self, ar: &Arena, v: Val, target: (u64, u64)) -> bool {
        let e = v.e as usize;
        if v.sh != 0
            || ar.flags[e] != 0
            || ar.count[e] != ar.n as u64
            || (ar.h1[e], ar.h2[e]) != target
        {
            return false;
        }
        if self.exact[e] != 0 {
            return self.exact[e] == 1;
        }
        // Exact confirmation: walk the tree (it has 2N-1 nodes) within the budget.
        let cost = 2 * ar.n as u64;
        if self.budget < cost {
            self.all_exact = false;
            return true;
        }
        self.budget -= cost;
        self.seen.iter_mut().for_each(|w| *w = 0);
        let mut ok = true;
        let mut stack = vec![v.e];
        while let Some(x) = stack.pop() {
            if ar.is_leaf(x) {
                let q = ar.r[x as usize] as usize;
                if q >= ar.n as usize || (self.seen[q / 64] >> (q % 64)) & 1 == 1 {
                    ok = false;
                    break;
                }
                self.seen[q / 64] |= 1 << (q % 64);
            } else {
                stack.push(ar.r[x as usize]);
                stack.push(ar.l[x as usize]);
            }
        }
        self.exact[e] = if ok { 1 } else { 2 };
        ok
    }
}

/// Renders value `v` (leaf offsets relative to the element), at most [`RENDER_CHARS`] long.
fn render(ar: &Arena, op: ReduceOp, v: Val) -> String {
    enum Item {
        Node(u32, i64, bool),
        Text(&'static str),
    }
    let (infix, name) = match op {
        ReduceOp::Sum => (Some(" + "), ""),
        ReduceOp::Prod => (Some(" * "), ""),
        ReduceOp::Max => (None, "max("),
        ReduceOp::Min => (None, "min("),
    };
    let mut out = String::new();
    let mut stack = vec![Item::Node(v.e, v.sh, true)];
    while let Some(it) = stack.pop() {
        if out.len() > RENDER_CHARS {
            out.push('…');
            break;
        }
        match it {
            Item::Text(t) => out.push_str(t),
            Item::Node(e, off, top) => {
                if ar.is_leaf(e) {
                    let q = ar.r[e as usize];
                    if q >= ar.n {
                        out.push('?');
                    } else if off == 0 {
                        out.push_str(&format!("x{q}"));
                    } else {
                        out.push_str(&format!("x{q}[{off:+}]"));
                    }
                    continue;
                }
                let (a, b) = (ar.l[e as usize], ar.r[e as usize]);
                let d = ar.shift(e);
                match infix {
                    Some(sym) => {
                        if !top {
                            stack.push(Item::Text(")"));
                        }
                        stack.push(Item::Node(b, off + d, false));
                        stack.push(Item::Text(sym));
                        stack.push(Item::Node(a, off, false));
                        if !top {
                            stack.push(Item::Text("("));
                        }
                    }
                    None => {
                        stack.push(Item::Text(")"));
                        stack.push(Item::Node(b, off + d, true));
                        stack.push(Item::Text(", "));
                        stack.push(Item::Node(a, off, true));
                        stack.push(Item::Text(name));
                    }
                }
            }
        }
    }
    out
}

/// Says what is wrong with value `v` as an allreduce result.
fn diagnose(ar: &Arena, v: Val) -> String {
    let e = v.e as usize;
    if v.e == ar.n && ar.is_leaf(v.e) {
        return "never written".into();
    }
    let mut parts: Vec<String> = Vec::new();
    if ar.flags[e] & F_UNDEF != 0 {
        parts.push("includes uninitialized data".into());
    }
    // Count leaves by (rank, offset) with a walk of the tree, within a budget (a value built
    // from uninitialized data only has no leaves counted but may be a huge tree).
    let mut counts: BTreeMap<(u32, i64), u64> = BTreeMap::new();
    let mut stack = vec![(v.e, v.sh)];
    let mut budget = DIAGNOSE_NODES;
    while let Some((x, off)) = stack.pop() {
        if budget == 0 {
            parts.push(format!(
                "has {} contributions where {} are expected",
                ar.count[e], ar.n
            ));
            return parts.join(", ");
        }
        budget -= 1;
        if ar.is_leaf(x) {
            let q = ar.r[x as usize];
            if q < ar.n {
                *counts.entry((q, off)).or_default() += 1;
            }
        } else {
            stack.push((ar.r[x as usize], off + ar.shift(x)));
            stack.push((ar.l[x as usize], off));
        }
    }
    let mut shown = 0;
    let mut push = |parts: &mut Vec<String>, s: String| {
        if shown < 8 {
            parts.push(s);
        } else if shown == 8 {
            parts.push("…".into());
        }
        shown += 1;
    };
    for (&(q, off), &c) in &counts {
        if off != 0 {
            push(
                &mut parts,
                format!("x{q}[{off:+}] is another element's data"),
            );
        } else if c > 1 {
            push(&mut parts, format!("x{q} counted {c} times"));
        }
    }
    for q in 0..ar.n {
        if !counts.contains_key(&(q, 0)) {
            push(&mut parts, format!("x{q} missing"));
        }
    }
    if parts.is_empty() {
        parts.push("wrong contributions".into());
    }
    parts.join(", ")
}

impl Sym {
    /// Checks every rank's output; returns the semantics and one [`Problem::WrongResult`] per
    /// rank with a wrong output (at most `max` of them rendered, the rest counted).
    pub(super) fn finish(mut self, max: usize) -> (Semantics, Vec<Problem>, usize, Vec<Problem>) {
        if let Some(block) = self.block {
            return self.finish_alltoall(max, block);
        }
        let n = self.n;
        let ar = &self.arena;
        let mut facts = Facts::new(ar.l.len(), n);
        let target = (0..n).fold((0u64, 0u64), |(a, b), q| {
            let (x, y) = leaf_hash(q);
            (a.wrapping_add(x), b.wrapping_add(y))
        });
        let out_all = Slice::new(Slot::Output, 0, self.count);
        let mut reference: Vec<Seg> = Vec::new();
        let mut segs: Vec<Seg> = Vec::new();
        let mut sem = Semantics {
            meaning: Meaning::Reduction,
            reduces: true,
            correct: true,
            same_order_commutative: true,
            same_order_noncommutative: true,
            canonical_order: true,
            exact: true,
            noncommutative_difference: None,
            commutative_difference: None,
            noncanonical: None,
        };
        let mut wrong: Vec<Problem> = Vec::new();
        let mut more_wrong = 0usize;
        let at = |ar: &Arena, r: Rank, p: u64, v: Val| ExprAt {
            rank: r,
            element: p,
            expr: render(ar, self.op, v),
        };
        for r in 0..n {
            let _ = self.read(r, out_all, &mut segs);
            let mut first_wrong: Option<Seg> = None;
            let mut nwrong = 0u64;
            for sg in &segs {
                if !facts.correct(ar, sg.v, target) {
                    nwrong += sg.hi - sg.lo;
                    first_wrong.get_or_insert(*sg);
                }
                let canon = sg.v.sh == 0
                    && ar.flags[sg.v.e as usize] == 0
                    && facts.inorder(ar, sg.v.e) == Some((0, n - 1));
                if !canon && sem.canonical_order {
                    sem.canonical_order = false;
                    sem.noncanonical = Some(at(ar, r, sg.lo, sg.v));
                }
            }
            if let Some(sg) = first_wrong {
                sem.correct = false;
                if max == 0 || wrong.len() < max {
                    wrong.push(Problem::WrongResult {
                        rank: r,
                        elements: (sg.lo, sg.hi),
                        wrong: nwrong,
                        got: render(ar, self.op, sg.v),
                        reason: diagnose(ar, sg.v),
                    });
                } else {
                    more_wrong += 1;
                }
            }
            if r == 0 {
                reference = segs.clone();
                continue;
            }
            // Compare with rank 0, piece by piece.
            let (mut x, mut y) = (0, 0);
            while x < reference.len() && y < segs.len() {
                let (a, b) = (reference[x], segs[y]);
                let lo = a.lo.max(b.lo);
                if a.v != b.v && sem.same_order_noncommutative {
                    sem.same_order_noncommutative = false;
                    sem.noncommutative_difference = Some(Difference {
                        a: at(ar, 0, lo, a.v),
                        b: at(ar, r, lo, b.v),
                    });
                }
                if sem.same_order_commutative
                    && (a.v.sh != b.v.sh || facts.cid(ar, a.v.e) != facts.cid(ar, b.v.e))
                {
                    sem.same_order_commutative = false;
                    sem.commutative_difference = Some(Difference {
                        a: at(ar, 0, lo, a.v),
                        b: at(ar, r, lo, b.v),
                    });
                }
                let hi = a.hi.min(b.hi);
                if a.hi == hi {
                    x += 1;
                }
                if b.hi == hi {
                    y += 1;
                }
            }
        }
        if !sem.correct {
            sem.canonical_order = false;
        }
        sem.exact = facts.all_exact;
        let uninit = std::mem::take(&mut self.uninit);
        (sem, wrong, more_wrong, uninit)
    }
}

impl Sym {
    /// The alltoall check: on every rank `j`, output element `i·block + e` must be exactly input
    /// element `j·block + e` of rank `i` (a leaf of rank `i`, read `(j − i)·block` elements
    /// further on), for every `i` and every `e < block`. Nothing may be combined and nothing
    /// left unwritten. Exact: a value is a leaf and a shift, compared without fingerprints.
    fn finish_alltoall(
        mut self,
        max: usize,
        block: u64,
    ) -> (Semantics, Vec<Problem>, usize, Vec<Problem>) {
        let n = self.n;
        let out_all = Slice::new(Slot::Output, 0, self.count);
        let mut segs: Vec<Seg> = Vec::new();
        let mut wrong: Vec<Problem> = Vec::new();
        let mut more_wrong = 0usize;
        let mut correct = true;
        for j in 0..n {
            let _ = self.read(j, out_all, &mut segs);
            let mut first: Option<(u64, u64, Val, u64)> = None;
            let mut nwrong = 0u64;
            for sg in &segs {
                // Split the run at block boundaries: block i expects rank i's leaf.
                let mut lo = sg.lo;
                while lo < sg.hi {
                    let i = lo / block;
                    let hi = sg.hi.min((i + 1) * block);
                    let expect = (j as i64 - i as i64) * block as i64;
                    let ar = &self.arena;
                    let ok = sg.v.e == i as u32
                        && (i as u32) < n
                        && ar.is_leaf(sg.v.e)
                        && sg.v.sh == expect;
                    if !ok {
                        nwrong += hi - lo;
                        if first.is_none() {
                            first = Some((lo, hi, sg.v, i));
                        }
                    }
                    lo = hi;
                }
            }
            if let Some((lo, hi, v, i)) = first {
                correct = false;
                if max == 0 || wrong.len() < max {
                    let ar = &self.arena;
                    let expected = j as u64 * block + (lo - i * block);
                    let got = if ar.is_leaf(v.e) && v.e < n {
                        format!("x{}[{}]", v.e, lo as i64 + v.sh)
                    } else {
                        render(ar, ReduceOp::Sum, v)
                    };
                    let what = if v.e == n && ar.is_leaf(v.e) {
                        "never written".to_string()
                    } else if !ar.is_leaf(v.e) {
                        "a combination of inputs (an alltoall combines none)".to_string()
                    } else {
                        "another element's data".to_string()
                    };
                    wrong.push(Problem::WrongResult {
                        rank: j,
                        elements: (lo, hi),
                        wrong: nwrong,
                        got,
                        reason: format!(
                            "{what}; expected x{i}[{expected}] (rank {i}'s block {j} at block \
                             {i})"
                        ),
                    });
                } else {
                    more_wrong += 1;
                }
            }
        }
        let sem = Semantics::data_movement(Meaning::Blocks, correct);
        let uninit = std::mem::take(&mut self.uninit);
        (sem, wrong, more_wrong, uninit)
    }
}
