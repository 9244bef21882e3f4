//! The wait-for graph of a schedule, its canonical execution, and deadlock cycles.
//!
//! Every op has two nodes, *start* and *end*, and `start → end`. `a requires b` adds
//! `end b → start a`; `a irequires b` adds `start b → start a`. A matched message adds
//! `start send → end recv` (a receive completes once the send has started) and, when the send
//! is synchronous (rendezvous: larger than the eager limit), `start recv → end send`.
//!
//! The graph is peeled in Kahn's manner, first-in first-out (one round of ready nodes after
//! another): that is a structural check, with no notion of time, and the peel order is also the
//! canonical execution in which wildcard receives are matched and the symbolic execution runs.
//! Nodes left over never fire. Their root causes are receives (or synchronous sends) that no
//! message matches, and cycles: everything reachable from a root cause is a consequence and is
//! not reported. A cycle is found by walking backwards from a left-over node along left-over
//! predecessors until a node repeats (every left-over node that is not a consequence of an
//! unmatched op has a left-over predecessor, so the walk always closes a cycle); then every node
//! reachable from the cycle is marked as explained and the scan goes on. This costs linear time
//! and 4 bytes of state per op (plus 2 bits per node for the explanation marks), against the
//! several words per node of an SCC algorithm. The state sits next to the op's partner
//! ([`super::matching::OpState`]): an event reads both from one cache line.
//!
//! Without an observer (every run but the symbolic one and the wildcard matching), the peel
//! goes block by block of ranks, on one thread or several ([`super::peel`]): a message to
//! another block waits in that block's inbox instead of touching memory far away at once, so
//! that the work stays within a cache-sized block; the left-over nodes are the same in any
//! order.

use super::matching::{check_sizes, compatible, Links, DYN, NONE};
use super::{Collector, CycleStep, Problem, Unmatched, Wait};
use crate::schedule::{DepKind, Op, OpKind, Rank, RankView, Schedule};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Which sends are synchronous.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Protocol {
    /// Every send completes without its receive (buffered).
    Eager,
    /// Sends of more than this many bytes wait for the receive to be posted.
    Limit(u64),
    /// Every send waits for its receive.
    Sync,
}

impl Protocol {
    /// Whether a send of `bytes` is synchronous.
    pub(super) fn sync(self, bytes: u64) -> bool {
        match self {
            Protocol::Eager => false,
            Protocol::Limit(l) => bytes > l,
            Protocol::Sync => true,
        }
    }
}

/// Side effects of the execution (the symbolic executor).
pub(super) trait Exec {
    /// Whether the callbacks observe the order of events. When they do not, a run without
    /// wildcard matching takes the cache-friendly blocked order of [`Engine::run`].
    const OBSERVES: bool = true;
    /// Op `i` of rank `r` starts.
    fn start(&mut self, _s: &Schedule, _l: &Links, _r: Rank, _i: u32) {}
    /// Op `i` of rank `r` completes.
    fn end(&mut self, _s: &Schedule, _l: &Links, _r: Rank, _i: u32) {}
}

/// An execution without side effects.
pub(super) struct NoExec;
impl Exec for NoExec {
    const OBSERVES: bool = false;
}

/// `pending` word: end conditions not yet met (start, message, rendezvous) in the low bits, a
/// synchronous-send flag, and the dependencies not yet met above.
pub(super) const END_MASK: u32 = 3;
pub(super) const SYNC: u32 = 4;
pub(super) const START_SHIFT: u32 = 3;
pub(super) const START_ONE: u32 = 1 << START_SHIFT;

/// A node: `rank << 32 | op << 1 | end`.
pub(super) type Node = u64;

/// The pending word of an op before an execution under `proto`: its `deps` dependencies, and
/// the end conditions of its kind (a receive waits for its message, a synchronous send for its
/// receive too).
#[inline]
pub(super) fn initial_pending(op: &Op, deps: u32, proto: Protocol, elem: u32) -> u32 {
    let word = match op.kind {
        OpKind::Recv { .. } => 2,
        OpKind::Send { data, .. } if proto.sync(data.bytes(elem)) => 2 | SYNC,
        _ => 1,
    };
    deps << START_SHIFT | word
}

#[inline]
pub(super) fn node(r: Rank, i: u32, end: bool) -> Node {
    (r as u64) << 32 | (i as u64) << 1 | end as u64
}

#[inline]
pub(super) fn unnode(k: Node) -> (Rank, u32, bool) {
    (
        (k >> 32) as Rank,
        ((k >> 1) & 0x7fff_ffff) as u32,
        k & 1 == 1,
    )
}

/// Calls `release(flat index, start node)` for every dependent of op `i` of rank `r` (view
/// `v`, whose ops start at flat index `base`) that waits for `kind` of it: an op's start
/// releases its `IRequires` dependents, its end its `Requires` ones.
#[inline]
pub(super) fn release_dependents(
    v: &RankView<'_>,
    i: u32,
    base: usize,
    kind: DepKind,
    mut release: impl FnMut(usize, Node),
) {
    for &(k2, k) in v.dependents(i as usize) {
        if k == kind {
            release(base + k2 as usize, node(v.rank, k2, false));
        }
    }
}

fn get_bit(v: &[u64], b: usize) -> bool {
    (v[b / 64] >> (b % 64)) & 1 == 1
}

fn set_bit(v: &mut [u64], b: usize) {
    v[b / 64] |= 1 << (b % 64);
}

/// Posted receives and unexpected messages of a rank with wildcard receives.
#[derive(Default)]
struct DynQueue {
    posted: Vec<u32>,
    unexpected: Vec<(Rank, u32)>,
}

/// The wait-for graph and its execution state.
pub(super) struct Engine<'a> {
    s: &'a Schedule,
    /// The matching (completed by the first, eager execution for wildcard receives).
    pub links: Links,
    proto: Protocol,
    queues: FxHashMap<Rank, DynQueue>,
    /// Threads of the blocked peel ([`super::peel`]).
    threads: usize,
}

/// The left-over nodes of one execution, explained.
pub(super) struct Analysis {
    /// Cycles found (up to the cap), each as its steps.
    pub cycles: Vec<Vec<CycleStep>>,
    /// Cycles beyond the cap.
    pub more: usize,
    /// Receives at wildcard ranks that were posted but met no message and have no sender left.
    pub dyn_unmatched: Vec<(Rank, u32)>,
    /// Left-over nodes (2 bits per op: start, end).
    pub unfired: Vec<u64>,
    /// Whether any node was left over.
    pub stuck: bool,
}

impl<'a> Engine<'a> {
    /// An engine over `s` with the static matching `links`, whose blocked peel runs on
    /// `threads` threads (at least 1).
    pub(super) fn new(s: &'a Schedule, links: Links, threads: usize) -> Engine<'a> {
        for (k, shape) in s.shapes().iter().enumerate() {
            for i in 0..shape.len() {
                let deps = shape.deps(i).len();
                assert!(
                    deps < 1 << (32 - START_SHIFT),
                    "op {i} of program shape {k} has {deps} dependencies"
                );
            }
        }
        Engine {
            s,
            links,
            proto: Protocol::Eager,
            queues: FxHashMap::default(),
            threads: threads.max(1),
        }
    }

    fn flat(&self, r: Rank, i: u32) -> usize {
        self.s.op_offset(r) as usize + i as usize
    }

    fn fired(&self, k: Node) -> bool {
        let (r, i, end) = unnode(k);
        let p = self.links.ops[self.flat(r, i)].pending;
        if end {
            p & END_MASK == 0
        } else {
            p >> START_SHIFT == 0
        }
    }

    fn bit_index(&self, k: Node) -> usize {
        let (r, i, end) = unnode(k);
        2 * self.flat(r, i) + end as usize
    }

    #[inline]
    fn dec_start(&mut self, q: &mut Vec<Node>, f: usize, k: Node) {
        let p = &mut self.links.ops[f].pending;
        *p -= START_ONE;
        if *p >> START_SHIFT == 0 {
            q.push(k);
        }
    }

    #[inline]
    fn dec_end(&mut self, q: &mut Vec<Node>, f: usize, k: Node) {
        let p = &mut self.links.ops[f].pending;
        *p -= 1;
        if *p & END_MASK == 0 {
            q.push(k | 1);
        }
    }

    /// Executes the schedule under `proto`, calling `exec` at every start and end. With
    /// `dynamic`, receives of wildcard ranks are matched as they are posted (MPI's rule: an
    /// arriving message meets the earliest posted receive that accepts it; a posted receive
    /// takes the earliest unexpected message it accepts), and ready events are taken first in,
    /// first out (round by round: the canonical order); otherwise last in, first out, which
    /// keeps a rank's events together, or, when `exec` does not observe the order, block by
    /// block ([`super::peel`]). Any order gives the same left-over nodes: a node fires
    /// once all its predecessors have, whatever the order they fired in. `col` gets
    /// the size mismatches of the run-time matches.
    pub(super) fn run<E: Exec>(
        &mut self,
        proto: Protocol,
        exec: &mut E,
        dynamic: bool,
        equal_len: bool,
        col: &mut Collector,
    ) {
        let s = self.s;
        self.proto = proto;
        let mut f = 0;
        self.queues.clear();
        let fifo = dynamic && self.links.any_dynamic;
        if !fifo && !E::OBSERVES {
            super::peel::run(
                s,
                &mut self.links.ops,
                proto,
                &self.links.dyn_source,
                self.threads,
            );
            return;
        }
        let mut q: Vec<Node> = Vec::new();
        let elem = s.elem_size();
        for r in 0..s.nranks() {
            let v = s.rank(r);
            for i in 0..v.len() {
                let deps = v.deps(i).len() as u32;
                self.links.ops[f].pending = initial_pending(&v.shape.ops[i], deps, proto, elem);
                f += 1;
                if deps == 0 {
                    q.push(node(r, i as u32, false));
                }
            }
        }
        // (Stopped early on a request to stop: [`super::try_verify`] reports it.)
        let mut steps = 0u64;
        let mut stop = || {
            steps += 1;
            steps.is_multiple_of(crate::cancel::EVERY) && crate::cancel::requested()
        };
        if fifo {
            let mut fq: VecDeque<Node> = q.drain(..).collect();
            while let Some(k) = fq.pop_front() {
                if stop() {
                    return;
                }
                self.step(k, exec, dynamic, equal_len, col, &mut q);
                fq.extend(q.drain(..));
            }
        } else {
            while let Some(k) = q.pop() {
                if stop() {
                    return;
                }
                self.step(k, exec, dynamic, equal_len, col, &mut q);
            }
        }
    }

    #[inline]
    fn step(
        &mut self,
        k: Node,
        exec: &mut impl Exec,
        dynamic: bool,
        equal_len: bool,
        col: &mut Collector,
        q: &mut Vec<Node>,
    ) {
        let s = self.s;
        let (r, i, end) = unnode(k);
        let v = s.rank(r);
        let base = s.op_offset(r) as usize;
        if end {
            exec.end(s, &self.links, r, i);
            release_dependents(&v, i, base, DepKind::Requires, |f, k2| {
                self.dec_start(q, f, k2)
            });
            return;
        }
        exec.start(s, &self.links, r, i);
        let f = base + i as usize;
        self.dec_end(q, f, k);
        release_dependents(&v, i, base, DepKind::IRequires, |f, k2| {
            self.dec_start(q, f, k2)
        });
        match v.shape.ops[i as usize].kind {
            OpKind::Send { tag, .. } => {
                let peer = v.peer(i as usize);
                let p = self.links.ops[f].partner;
                if p == DYN {
                    if dynamic {
                        self.arrive(q, (r, i, tag), peer, equal_len, col);
                    }
                } else if p != NONE {
                    let fp = s.op_offset(peer) as usize + p as usize;
                    self.dec_end(q, fp, node(peer, p, false));
                }
            }
            OpKind::Recv { .. } => {
                if dynamic && self.links.is_dynamic(r) {
                    self.post(q, r, i, equal_len, col);
                } else {
                    let p = self.links.ops[f].partner;
                    if p != NONE && p != DYN && self.proto != Protocol::Eager {
                        if let Some(src) = self.links.source(s, r, i) {
                            let fp = s.op_offset(src) as usize + p as usize;
                            if self.links.ops[fp].pending & SYNC != 0 {
                                self.dec_end(q, fp, node(src, p, false));
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn recv_key(&self, d: Rank, j: u32) -> (Rank, i32) {
        let v = self.s.rank(d);
        match v.shape.ops[j as usize].kind {
            OpKind::Recv { tag, .. } => (v.peer(j as usize), tag),
            _ => unreachable!("recv_key of a non-receive"),
        }
    }

    fn send_tag(&self, r: Rank, i: u32) -> i32 {
        match self.s.rank(r).shape.ops[i as usize].kind {
            OpKind::Send { tag, .. } => tag,
            _ => unreachable!("send_tag of a non-send"),
        }
    }

    fn arrive(
        &mut self,
        q: &mut Vec<Node>,
        (r, i, tag): (Rank, u32, i32),
        d: Rank,
        equal_len: bool,
        col: &mut Collector,
    ) {
        let mut queue = self.queues.remove(&d).unwrap_or_default();
        let hit = queue.posted.iter().position(|&j| {
            let (peer, rtag) = self.recv_key(d, j);
            compatible(r, tag, peer, rtag)
        });
        match hit {
            Some(x) => {
                let j = queue.posted.remove(x);
                self.meet(q, (r, i), (d, j), equal_len, col);
            }
            None => queue.unexpected.push((r, i)),
        }
        self.queues.insert(d, queue);
    }

    fn post(&mut self, q: &mut Vec<Node>, d: Rank, j: u32, equal_len: bool, col: &mut Collector) {
        let mut queue = self.queues.remove(&d).unwrap_or_default();
        let (peer, rtag) = self.recv_key(d, j);
        let hit = queue
            .unexpected
            .iter()
            .position(|&(src, i)| compatible(src, self.send_tag(src, i), peer, rtag));
        match hit {
            Some(x) => {
                let (src, i) = queue.unexpected.remove(x);
                self.meet(q, (src, i), (d, j), equal_len, col);
            }
            None => queue.posted.push(j),
        }
        self.queues.insert(d, queue);
    }

    fn meet(
        &mut self,
        q: &mut Vec<Node>,
        (r, i): (Rank, u32),
        (d, j): (Rank, u32),
        equal_len: bool,
        col: &mut Collector,
    ) {
        let fs = self.flat(r, i);
        let fr = self.flat(d, j);
        self.links.ops[fs].partner = j;
        self.links.ops[fr].partner = i;
        if self.s.rank(d).peer(j as usize) == crate::schedule::ANY_SOURCE {
            self.links.dyn_source.insert(fr as u64, r);
        }
        self.links.messages += 1;
        self.links.bytes += check_sizes(self.s, (r, i), (d, j), equal_len, col);
        self.dec_end(q, fr, node(d, j, false));
        if self.links.ops[fs].pending & SYNC != 0 {
            self.dec_end(q, fs, node(r, i, false));
        }
    }

    /// After the execution that matched wildcard receives: sends to wildcard ranks that
    /// started, met no receive, and have no unposted receive left that could take them are
    /// unmatched; every unmatched send is then final ([`NONE`]).
    pub(super) fn finish_dynamic(&mut self, col: &mut Collector) {
        if !self.links.any_dynamic {
            return;
        }
        let s = self.s;
        let elem = s.elem_size();
        let mut dests: Vec<Rank> = self.links.dyn_incoming.keys().copied().collect();
        dests.sort_unstable();
        for d in dests {
            let incoming = self.links.dyn_incoming[&d].clone();
            let dv = s.rank(d);
            for (r, i) in incoming {
                let f = self.flat(r, i);
                if self.links.ops[f].partner != DYN {
                    continue;
                }
                self.links.ops[f].partner = NONE;
                if !self.fired(node(r, i, false)) {
                    continue;
                }
                let tag = self.send_tag(r, i);
                let waiting = (0..dv.len() as u32).any(|j| {
                    matches!(dv.shape.ops[j as usize].kind, OpKind::Recv { .. })
                        && self.links.ops[self.flat(d, j)].partner == NONE
                        && !self.fired(node(d, j, false))
                        && {
                            let (peer, rtag) = self.recv_key(d, j);
                            compatible(r, tag, peer, rtag)
                        }
                });
                if !waiting {
                    let what = s.rank(r).op(i as usize);
                    col.push(
                        super::Cat::Matching,
                        Problem::UnmatchedSend(Unmatched::wildcard(r, i, what, elem)),
                    );
                }
            }
        }
    }

    /// Calls `f` on each successor of node `k` in the graph of the last execution.
    fn successors(&self, k: Node, mut f: impl FnMut(Node)) {
        let (r, i, end) = unnode(k);
        let v = self.s.rank(r);
        if end {
            for &(k2, kind) in v.dependents(i as usize) {
                if kind == DepKind::Requires {
                    f(node(r, k2, false));
                }
            }
            return;
        }
        f(node(r, i, true));
        for &(k2, kind) in v.dependents(i as usize) {
            if kind == DepKind::IRequires {
                f(node(r, k2, false));
            }
        }
        let p = self.links.ops[self.flat(r, i)].partner;
        if p == NONE || p == DYN {
            return;
        }
        match v.shape.ops[i as usize].kind {
            OpKind::Send { .. } => f(node(v.peer(i as usize), p, true)),
            OpKind::Recv { .. } => {
                if let Some(src) = self.links.source(self.s, r, i) {
                    if self.links.ops[self.flat(src, p)].pending & SYNC != 0 {
                        f(node(src, p, true));
                    }
                }
            }
            _ => {}
        }
    }

    /// The first predecessor of node `k` for which `want` holds, with how `k` waits for it.
    fn first_pred(&self, k: Node, want: impl Fn(Node) -> bool) -> Option<Node> {
        let (r, i, end) = unnode(k);
        let v = self.s.rank(r);
        if !end {
            return v.deps(i as usize).iter().find_map(|d| {
                let u = node(r, d.on, d.kind == DepKind::Requires);
                want(u).then_some(u)
            });
        }
        let own = node(r, i, false);
        if want(own) {
            return Some(own);
        }
        let p = self.links.ops[self.flat(r, i)].partner;
        match v.shape.ops[i as usize].kind {
            OpKind::Recv { .. } => {
                if p != NONE && p != DYN {
                    let src = self.links.source(self.s, r, i)?;
                    let u = node(src, p, false);
                    return want(u).then_some(u);
                }
                if self.links.is_dynamic(r) {
                    let (peer, rtag) = self.recv_key(r, i);
                    let incoming = self.links.dyn_incoming.get(&r)?;
                    return incoming.iter().find_map(|&(src, si)| {
                        let u = node(src, si, false);
                        (compatible(src, self.send_tag(src, si), peer, rtag) && want(u))
                            .then_some(u)
                    });
                }
                None
            }
            OpKind::Send { .. } => {
                if p != NONE && p != DYN && self.links.ops[self.flat(r, i)].pending & SYNC != 0 {
                    let u = node(v.peer(i as usize), p, false);
                    return want(u).then_some(u);
                }
                None
            }
            _ => None,
        }
    }

    fn mark_from(&self, k: Node, explained: &mut [u64], stack: &mut Vec<Node>) {
        stack.push(k);
        while let Some(x) = stack.pop() {
            self.successors(x, |u| {
                let b = self.bit_index(u);
                if !get_bit(explained, b) && !self.fired(u) {
                    set_bit(explained, b);
                    stack.push(u);
                }
            });
        }
    }

    /// Explains the nodes the last execution left over. `pre`: nodes already explained by an
    /// earlier execution (their consequences are not reported again). At most `max_cycles`
    /// cycles are returned (0: all).
    pub(super) fn analyse(&self, pre: Option<&[u64]>, max_cycles: usize) -> Analysis {
        let s = self.s;
        let total = s.total_ops() as usize;
        let words = (2 * total).div_ceil(64);
        let mut unfired = vec![0u64; words];
        let mut stuck = false;
        for f in 0..total {
            let p = self.links.ops[f].pending;
            if p >> START_SHIFT != 0 {
                set_bit(&mut unfired, 2 * f);
                stuck = true;
            }
            if p & END_MASK != 0 {
                set_bit(&mut unfired, 2 * f + 1);
                stuck = true;
            }
        }
        let mut out = Analysis {
            cycles: Vec::new(),
            more: 0,
            dyn_unmatched: Vec::new(),
            unfired,
            stuck,
        };
        if !stuck {
            return out;
        }
        let mut explained = match pre {
            Some(p) => p.to_vec(),
            None => vec![0u64; words],
        };
        let mut stack = Vec::new();
        if pre.is_some() {
            for w in 0..words {
                let mut bits = explained[w];
                while bits != 0 {
                    let b = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let (r, i) = self.unflat(b / 2);
                    self.mark_from(node(r, i, b % 2 == 1), &mut explained, &mut stack);
                }
            }
        }
        // Root causes: posted receives and started synchronous sends with no partner.
        for r in 0..s.nranks() {
            let v = s.rank(r);
            let base = s.op_offset(r) as usize;
            for i in 0..v.len() as u32 {
                let f = base + i as usize;
                let p = self.links.ops[f].pending;
                if p >> START_SHIFT != 0 || p & END_MASK == 0 || self.links.ops[f].partner != NONE {
                    continue;
                }
                let root = match v.shape.ops[i as usize].kind {
                    OpKind::Recv { .. } => {
                        if self.links.is_dynamic(r) {
                            let waiting = self
                                .first_pred(node(r, i, true), |u| !self.fired(u))
                                .is_some();
                            if !waiting {
                                out.dyn_unmatched.push((r, i));
                            }
                            !waiting
                        } else {
                            true
                        }
                    }
                    OpKind::Send { .. } => true,
                    _ => false,
                };
                if root {
                    let k = node(r, i, true);
                    set_bit(&mut explained, self.bit_index(k));
                    self.mark_from(k, &mut explained, &mut stack);
                }
            }
        }
        // Cycles among the rest.
        let mut path: Vec<Node> = Vec::new();
        let mut at: FxHashMap<Node, usize> = FxHashMap::default();
        for f in 0..total {
            for end in [false, true] {
                let b = 2 * f + end as usize;
                if !get_bit(&out.unfired, b) || get_bit(&explained, b) {
                    continue;
                }
                let (r, i) = self.unflat(f);
                path.clear();
                at.clear();
                let v0 = node(r, i, end);
                path.push(v0);
                at.insert(v0, 0);
                let mut cycle: Option<usize> = None;
                loop {
                    let cur = *path.last().unwrap();
                    let next = self.first_pred(cur, |u| {
                        !self.fired(u) && !get_bit(&explained, self.bit_index(u))
                    });
                    let Some(u) = next else {
                        break;
                    };
                    if let Some(&ix) = at.get(&u) {
                        cycle = Some(ix);
                        break;
                    }
                    at.insert(u, path.len());
                    path.push(u);
                }
                let from: Vec<Node> = match cycle {
                    Some(ix) => path[ix..].to_vec(),
                    // Cannot happen (see the module documentation); never loop on it.
                    None => vec![*path.last().unwrap()],
                };
                if cycle.is_some() {
                    if max_cycles == 0 || out.cycles.len() < max_cycles {
                        out.cycles.push(self.steps(&from));
                    } else {
                        out.more += 1;
                    }
                }
                for &k in &from {
                    set_bit(&mut explained, self.bit_index(k));
                }
                for &k in &from {
                    self.mark_from(k, &mut explained, &mut stack);
                }
            }
        }
        out
    }

    fn unflat(&self, f: usize) -> (Rank, u32) {
        // Binary search of the rank whose ops contain flat index f.
        let n = self.s.nranks();
        let (mut lo, mut hi) = (0u32, n);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.s.op_offset(mid) as usize <= f {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo, (f - self.s.op_offset(lo) as usize) as u32)
    }

    /// The steps of a cycle of nodes given in waits-for order (each waits for the next).
    fn steps(&self, cycle: &[Node]) -> Vec<CycleStep> {
        let op_of = |k: Node| {
            let (r, i, _) = unnode(k);
            (r, i)
        };
        let n = cycle.len();
        // Rotate so that the cycle does not begin in the middle of an op's two nodes.
        let start = (0..n)
            .find(|&k| op_of(cycle[k]) != op_of(cycle[(k + n - 1) % n]))
            .unwrap_or(0);
        let nodes: Vec<Node> = (0..n).map(|k| cycle[(start + k) % n]).collect();
        let mut runs: Vec<(Node, Node)> = Vec::new();
        for &k in &nodes {
            match runs.last_mut() {
                Some(last) if op_of(last.0) == op_of(k) => last.1 = k,
                _ => runs.push((k, k)),
            }
        }
        let m = runs.len();
        let mut steps: Vec<CycleStep> = (0..m)
            .map(|x| {
                let (first, last) = runs[x];
                let next = runs[(x + 1) % m].0;
                let (r, i) = op_of(first);
                let (_, _, last_end) = unnode(last);
                let (_, _, next_end) = unnode(next);
                let what = self.s.rank(r).op(i as usize);
                let waits = if !last_end {
                    if next_end {
                        Wait::Requires
                    } else {
                        Wait::IRequires
                    }
                } else if matches!(what.kind, OpKind::Recv { .. }) {
                    Wait::Message
                } else {
                    Wait::Rendezvous
                };
                CycleStep {
                    rank: r,
                    op: i,
                    what,
                    waits,
                }
            })
            .collect();
        if let Some(min) = (0..m).min_by_key(|&x| (steps[x].rank, steps[x].op)) {
            steps.rotate_left(min);
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::super::{matching, order, Collector};
    use super::*;
    use crate::schedule::{Meta, Program, Slice, Slot};

    /// Counts events, and so takes the ordered (last in, first out) path of [`Engine::run`].
    struct Observe(u64);
    impl Exec for Observe {
        fn start(&mut self, _s: &Schedule, _l: &Links, _r: Rank, _i: u32) {
            self.0 += 1;
        }
    }

    /// Recursive doubling on `n` ranks, 2 ops a stage; with `stall`, every rank's send of that
    /// stage waits for its receive (a head-to-head deadlock with synchronous sends), and with
    /// `drop`, rank 1 posts no receive at stage 0.
    fn rd(n: u32, stall: Option<u32>, drop: bool) -> Schedule {
        let x = Slice::new(Slot::Output, 0, 1);
        let progs = (0..n).map(|r| {
            let mut p = Program::new();
            let mut prev: Option<u32> = None;
            for k in 0..n.trailing_zeros() {
                let peer = r ^ (1 << k);
                let s = p.send(peer, k as i32, x);
                let v = if drop && r == 1 && k == 0 {
                    p.compute(0)
                } else {
                    p.recv(peer, k as i32, x)
                };
                if let Some(q) = prev {
                    p.requires(s, q);
                    p.requires(v, q);
                }
                if stall == Some(k) {
                    p.requires(s, v);
                }
                prev = Some(v);
            }
            p
        });
        Schedule::from_programs(Meta::sizes_only("rd"), progs).unwrap()
    }

    #[test]
    fn blocked_order_leaves_the_same_nodes() {
        let cases = [
            (rd(64, None, false), false, 0),
            (rd(64, Some(3), false), true, 32),
            (rd(64, None, true), true, 0),
        ];
        for (s, stuck, cycles) in &cases {
            let orders: Vec<order::ShapeOrder> = s.shapes().iter().map(order::topo).collect();
            let mut col = Collector::new(0);
            let links = matching::match_static(s, &orders, false, &mut col, 1);
            let mut eng = Engine::new(s, links, 1);
            for proto in [Protocol::Eager, Protocol::Limit(4), Protocol::Sync] {
                let mut seen = Observe(0);
                eng.run(proto, &mut seen, false, false, &mut col);
                let ordered: Vec<u32> = eng.links.ops.iter().map(|o| o.pending).collect();
                let b = eng.analyse(None, 0);
                assert!(seen.0 > 0);
                for threads in 1..=5 {
                    eng.threads = threads;
                    eng.run(proto, &mut NoExec, false, false, &mut col);
                    let blocked: Vec<u32> = eng.links.ops.iter().map(|o| o.pending).collect();
                    let a = eng.analyse(None, 0);
                    assert_eq!(blocked, ordered, "{proto:?}, {threads} threads");
                    assert_eq!(
                        (&a.cycles, a.more, a.stuck),
                        (&b.cycles, b.more, b.stuck),
                        "{proto:?}, {threads} threads"
                    );
                    assert_eq!(a.unfired, b.unfired);
                }
            }
            // With synchronous sends (the last run) the stalled stage deadlocks head to head,
            // one cycle per pair of ranks; the dropped receive leaves ranks stuck, no cycle.
            let c = eng.analyse(None, 0);
            assert_eq!((c.stuck, c.cycles.len()), (*stuck, *cycles));
        }
        // Every rank is its own block here (4 ops a block, 12 ops a rank): events cross blocks,
        // and with several threads, threads.
        const _: () = assert!(super::super::peel::BLOCK_OPS < 12);
    }
}
