//! The structural peel of the wait-for graph ([`super::graph`]) block by block of ranks, on one
//! thread or several.
//!
//! Used by every execution without an observer and without wildcard matching. Ranks are cut
//! into blocks of about [`BLOCK_OPS`] ops, whose state stays in a core's cache. Block `b`
//! belongs to thread `b mod T`. A thread runs the ready events of one of its blocks as far as
//! they go: those within a rank last in, first out, and the ends an op delivers to another
//! rank of the block (a message meeting its receive, a receive posted for a synchronous send)
//! first in, first out, so that the pending word of a delivery a few places on can be fetched
//! ahead. An event for another block is appended to that block's inbox, or, when another
//! thread owns the block, to an outbox that goes to that thread's mailbox in batches. Each
//! thread takes its blocks first in, first out.
//!
//! Only the owner of a block reads or writes its ops' pending words, so the threads share no
//! word that one of them writes (the partners are only read); the mailboxes carry the events
//! between them. Each node still fires exactly when its last predecessor has, so the pending
//! words left at the end, and with them everything the verifier reports, are the same for any
//! number of threads and any interleaving: only the order of firing changes.
//!
//! Termination: a count of *tokens*, one held by each thread that may still produce events and
//! one by each batch in a mailbox. A thread that runs out of work gives its token back; one
//! that takes batches while working gives theirs back, and one that was idle keeps one of them
//! as its own. Events exist only while some token does, so the peel is over when the count
//! reaches zero.

use super::graph::{
    initial_pending, node, release_dependents, unnode, Node, Protocol, END_MASK, START_ONE,
    START_SHIFT, SYNC,
};
use super::matching::{op_words, OpState, DYN, NONE};
use crate::schedule::{DepKind, OpKind, Rank, Schedule, ANY_SOURCE};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Ops a block aims at: their state (pending word and partner, 8 bytes an op) stays within a
/// cache. Tiny in unit tests, so that small schedules span many blocks.
pub(super) const BLOCK_OPS: u64 = if cfg!(test) { 4 } else { 1 << 20 };

/// Events a thread gathers for another before handing them over.
const BATCH: usize = if cfg!(test) { 2 } else { 4096 };
/// How many deliveries ahead the peel asks for the op's pending word.
const AHEAD: usize = 8;

/// Peels the graph of `s` under `proto`: sets every op's pending word in `ops` (partners
/// already set) to its initial value and runs every node that fires, on `threads` threads
/// (at least 1, at most one per block). `dyn_source`: the source rank of each matched
/// `ANY_SOURCE` receive, by flat op index.
pub(super) fn run(
    s: &Schedule,
    ops: &mut [OpState],
    proto: Protocol,
    dyn_source: &FxHashMap<u64, Rank>,
    threads: usize,
) {
    if s.nranks() == 0 {
        return;
    }
    let avg = (s.total_ops() / s.nranks() as u64).max(1);
    let shift = (BLOCK_OPS / avg).max(1).ilog2();
    let nblocks = ((s.nranks() - 1) >> shift) as usize + 1;
    let threads = threads.clamp(1, nblocks);
    let words = op_words(ops);
    let p = Peel {
        s,
        proto,
        dyn_source,
        words,
        shift,
        nblocks,
        threads,
        place: (0..nblocks as u32)
            .map(|b| (b % threads as u32, b / threads as u32))
            .collect(),
        mail: (0..threads).map(|_| Mutex::new(Vec::new())).collect(),
        tokens: AtomicUsize::new(threads),
        failed: AtomicBool::new(false),
    };
    if threads == 1 {
        p.work(0);
    } else {
        std::thread::scope(|sc| {
            for t in 1..threads {
                let p = &p;
                sc.spawn(move || p.work(t));
            }
            p.work(0);
        });
    }
}

struct Peel<'a> {
    s: &'a Schedule,
    proto: Protocol,
    dyn_source: &'a FxHashMap<u64, Rank>,
    /// Op `f`'s partner is word `2f`, its pending word `2f + 1`.
    words: &'a [AtomicU32],
    shift: u32,
    nblocks: usize,
    threads: usize,
    /// Per block: the thread that owns it (`b mod threads`) and its index among that
    /// thread's blocks (`b / threads`), looked up rather than divided.
    place: Vec<(u32, u32)>,
    /// Per thread: batches of events for its blocks.
    mail: Vec<Mutex<Vec<Vec<Node>>>>,
    /// See the module documentation.
    tokens: AtomicUsize,
    /// A thread panicked, or saw a request to stop: the others stop instead of waiting for
    /// its events.
    failed: AtomicBool,
}

/// Sets [`Peel::failed`] when its thread unwinds.
struct PanicFlag<'a>(&'a AtomicBool);

impl Drop for PanicFlag<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

/// One thread's blocks: their inboxes and the queue of those with events.
struct Local<'a> {
    me: u32,
    shift: u32,
    place: &'a [(u32, u32)],
    /// Per own block (`b / threads`): its events (ready start nodes, end nodes to decrement).
    inbox: Vec<Vec<Node>>,
    queued: Vec<bool>,
    /// Own blocks with events, first in, first out.
    work: VecDeque<u32>,
    /// Per thread: events for its blocks, not yet handed over.
    out: Vec<Vec<Node>>,
}

impl Local<'_> {
    #[inline]
    fn post(&mut self, k: Node) {
        let b = ((k >> 32) as u32 >> self.shift) as usize;
        let (owner, lb) = self.place[b];
        if owner != self.me {
            self.out[owner as usize].push(k);
            return;
        }
        let lb = lb as usize;
        self.inbox[lb].push(k);
        if !self.queued[lb] {
            self.queued[lb] = true;
            self.work.push_back(b as u32);
        }
    }
}

impl Peel<'_> {
    #[inline]
    fn partner(&self, f: usize) -> u32 {
        self.words[2 * f].load(Ordering::Relaxed)
    }

    #[inline]
    fn pending(&self, f: usize) -> &AtomicU32 {
        &self.words[2 * f + 1]
    }

    #[inline]
    fn dec_start(&self, stack: &mut Vec<Node>, f: usize, k: Node) {
        let p = self.pending(f);
        let v = p.load(Ordering::Relaxed) - START_ONE;
        p.store(v, Ordering::Relaxed);
        if v >> START_SHIFT == 0 {
            stack.push(k);
        }
    }

    #[inline]
    fn dec_end(&self, stack: &mut Vec<Node>, f: usize, k: Node) {
        let p = self.pending(f);
        let v = p.load(Ordering::Relaxed) - 1;
        p.store(v, Ordering::Relaxed);
        if v & END_MASK == 0 {
            stack.push(k | 1);
        }
    }

    /// The work of thread `me`: initialise its blocks, then peel them until every thread is
    /// out of events.
    fn work(&self, me: usize) {
        let _flag = PanicFlag(&self.failed);
        let s = self.s;
        let t = self.threads;
        let mine = (self.nblocks - me).div_ceil(t);
        let mut l = Local {
            me: me as u32,
            shift: self.shift,
            place: &self.place,
            inbox: vec![Vec::new(); mine],
            queued: vec![false; mine],
            work: VecDeque::new(),
            out: vec![Vec::new(); t],
        };
        let elem = s.elem_size();
        for b in (me..self.nblocks).step_by(t) {
            let lo = (b as Rank) << self.shift;
            let hi = (((b as u64 + 1) << self.shift).min(s.nranks() as u64)) as Rank;
            for r in lo..hi {
                let v = s.rank(r);
                let base = s.op_offset(r) as usize;
                for i in 0..v.len() {
                    let deps = v.deps(i).len() as u32;
                    let word = initial_pending(&v.shape.ops[i], deps, self.proto, elem);
                    self.pending(base + i).store(word, Ordering::Relaxed);
                    if deps == 0 {
                        l.post(node(r, i as u32, false));
                    }
                }
            }
        }
        let mut stack: Vec<Node> = Vec::new();
        let mut near: VecDeque<Node> = VecDeque::new();
        let mut events: Vec<Node> = Vec::new();
        loop {
            if crate::cancel::requested() {
                // Every thread stops (see [`Peel::failed`]); [`super::try_verify`] reports it.
                self.failed.store(true, Ordering::SeqCst);
                return;
            }
            let got = self.take_mail(me);
            if !got.is_empty() {
                self.tokens.fetch_sub(got.len(), Ordering::AcqRel);
                for k in got.into_iter().flatten() {
                    l.post(k);
                }
            }
            if let Some(cur) = l.work.pop_front() {
                let lb = self.place[cur as usize].1 as usize;
                l.queued[lb] = false;
                std::mem::swap(&mut events, &mut l.inbox[lb]);
                for &k in &events {
                    if k & 1 == 0 {
                        stack.push(k);
                    } else {
                        near.push_back(k);
                    }
                }
                events.clear();
                // Depth first within a rank; the deliveries to other ranks of the block (a
                // random op each) wait in `near`, oldest first, so that the op of the one
                // AHEAD places on is asked for while these run. Any order gives the same words.
                loop {
                    while let Some(k) = stack.pop() {
                        self.step(k, cur, &mut l, &mut stack, &mut near);
                    }
                    let Some(e) = near.pop_front() else {
                        break;
                    };
                    if let Some(&a) = near.get(AHEAD) {
                        let (r, i, _) = unnode(a);
                        let f = s.op_offset(r) as usize + i as usize;
                        if let Some(w) = self.words.get(2 * f + 1) {
                            crate::hint::prefetch(w);
                        }
                    }
                    self.deliver(e, &mut stack);
                }
                for o in 0..t {
                    if l.out[o].len() >= BATCH {
                        self.send(o, std::mem::take(&mut l.out[o]));
                    }
                }
                continue;
            }
            for o in 0..t {
                if !l.out[o].is_empty() {
                    self.send(o, std::mem::take(&mut l.out[o]));
                }
            }
            // Out of work: give the token back and wait for events or the end.
            self.tokens.fetch_sub(1, Ordering::AcqRel);
            let mut spins = 0u32;
            loop {
                let got = self.take_mail(me);
                if !got.is_empty() {
                    // One batch's token becomes this thread's.
                    self.tokens.fetch_sub(got.len() - 1, Ordering::AcqRel);
                    for k in got.into_iter().flatten() {
                        l.post(k);
                    }
                    break;
                }
                if self.tokens.load(Ordering::Acquire) == 0 || self.failed.load(Ordering::SeqCst) {
                    return;
                }
                spins += 1;
                if spins < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
    }

    fn take_mail(&self, me: usize) -> Vec<Vec<Node>> {
        if self.threads == 1 {
            return Vec::new();
        }
        let mut m = self.mail[me].lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *m)
    }

    /// Hands `batch` to thread `to` (with a token, taken before the batch is visible).
    fn send(&self, to: usize, batch: Vec<Node>) {
        self.tokens.fetch_add(1, Ordering::AcqRel);
        self.mail[to]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(batch);
    }

    /// An event for the end of op `k` from another op: a message meets its receive, or a
    /// posted receive releases a synchronous send.
    #[inline]
    fn deliver(&self, k: Node, stack: &mut Vec<Node>) {
        let (r, i, _) = unnode(k);
        let f = self.s.op_offset(r) as usize + i as usize;
        match self.s.rank(r).shape.ops[i as usize].kind {
            OpKind::Recv { .. } => self.dec_end(stack, f, k & !1),
            OpKind::Send { .. } => {
                if self.pending(f).load(Ordering::Relaxed) & SYNC != 0 {
                    self.dec_end(stack, f, k & !1);
                }
            }
            _ => unreachable!("deliver to a local op"),
        }
    }

    /// Fires node `k` of block `cur`: its dependents in the rank, and the end of its partner
    /// (queued in `near` in the same block, posted otherwise).
    #[inline]
    fn step(
        &self,
        k: Node,
        cur: u32,
        l: &mut Local,
        stack: &mut Vec<Node>,
        near: &mut VecDeque<Node>,
    ) {
        let s = self.s;
        let (r, i, end) = unnode(k);
        let v = s.rank(r);
        let base = s.op_offset(r) as usize;
        if end {
            release_dependents(&v, i, base, DepKind::Requires, |f, k2| {
                self.dec_start(stack, f, k2)
            });
            return;
        }
        let f = base + i as usize;
        self.dec_end(stack, f, k);
        release_dependents(&v, i, base, DepKind::IRequires, |f, k2| {
            self.dec_start(stack, f, k2)
        });
        let p = self.partner(f);
        if p == NONE || p == DYN {
            return;
        }
        let to = match v.shape.ops[i as usize].kind {
            OpKind::Send { .. } => v.peer(i as usize),
            OpKind::Recv { .. } if self.proto != Protocol::Eager => match v.peer(i as usize) {
                ANY_SOURCE => match self.dyn_source.get(&(f as u64)) {
                    Some(&src) => src,
                    None => return,
                },
                src => src,
            },
            _ => return,
        };
        let e = node(to, p, true);
        if to >> self.shift == cur {
            near.push_back(e);
        } else {
            l.post(e);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Reports for any thread count equal one thread's, on blocks of 4 ops (every rank its own
    //! block or more), so that events cross blocks and threads.
    use super::super::graph::{Engine, Exec, NoExec, Protocol};
    use super::super::order::{self, ShapeOrder};
    use super::super::{matching, verify, Collector, Problem, Report, VerifyOptions};
    use crate::collectives::allreduce::{self, Algorithm, AllreduceSpec};
    use crate::schedule::{
        Dtype, Meta, Program, ReduceOp, Schedule, ScheduleBuilder, Slice, Slot, ANY_SOURCE, ANY_TAG,
    };
    use proptest::prelude::*;

    fn report(
        s: &Schedule,
        eager_limit: u64,
        semantics: bool,
        max: usize,
        threads: usize,
    ) -> Report {
        verify(
            s,
            &VerifyOptions {
                semantics,
                eager_limit,
                max_problems: max,
                threads,
            },
        )
    }

    /// Every thread count gives the report of one thread; returns it.
    fn same_for_any_threads(s: &Schedule, eager_limit: u64, semantics: bool, max: usize) -> Report {
        let one = report(s, eager_limit, semantics, max, 1);
        for threads in [2, 3, 4, 7] {
            let many = report(s, eager_limit, semantics, max, threads);
            assert_eq!(
                many, one,
                "{threads} threads, eager_limit {eager_limit}, semantics {semantics}, max {max}"
            );
        }
        one
    }

    /// One op of a random program.
    #[derive(Clone, Debug)]
    enum Step {
        Send {
            peer: u32,
            tag: i32,
            len: u64,
        },
        Recv {
            peer: Option<u32>,
            tag: Option<i32>,
            len: u64,
        },
        Compute,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (0u32..64, 0i32..3, 1u64..4).prop_map(|(peer, tag, len)| Step::Send { peer, tag, len }),
            4 => (prop::option::weighted(0.9, 0u32..64), prop::option::weighted(0.9, 0i32..3), 1u64..4)
                .prop_map(|(peer, tag, len)| Step::Recv { peer, tag, len }),
            1 => Just(Step::Compute),
        ]
    }

    /// A random program: its steps, each with the earlier steps it requires (`false`) or
    /// irequires (`true`).
    type Prog = Vec<(Step, Vec<(usize, bool)>)>;

    /// A program of up to 8 steps, each requiring up to two earlier ones.
    fn program() -> impl Strategy<Value = Prog> {
        prop::collection::vec(
            (
                step(),
                prop::collection::vec(
                    (any::<prop::sample::Index>(), prop::bool::weighted(0.2)),
                    0..3,
                ),
            ),
            0..8,
        )
        .prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (st, deps))| {
                    let deps = if i == 0 {
                        Vec::new()
                    } else {
                        deps.into_iter().map(|(x, ir)| (x.index(i), ir)).collect()
                    };
                    (st, deps)
                })
                .collect()
        })
    }

    fn build(progs: &[Prog]) -> Schedule {
        let n = progs.len() as u32;
        let mut b = ScheduleBuilder::new(n as u64, Meta::sizes_only("random")).unwrap();
        let mut p = Program::new();
        for prog in progs {
            p.clear();
            let mut ids = Vec::new();
            for (st, deps) in prog {
                let id = match *st {
                    Step::Send { peer, tag, len } => {
                        p.send(peer % n, tag, Slice::new(Slot::Output, 0, len))
                    }
                    Step::Recv { peer, tag, len } => p.recv(
                        peer.map_or(ANY_SOURCE, |q| q % n),
                        tag.unwrap_or(ANY_TAG),
                        Slice::new(Slot::Scratch(0), 0, len),
                    ),
                    Step::Compute => p.compute(10),
                };
                for &(d, ir) in deps {
                    if ir {
                        p.irequires(id, ids[d]);
                    } else {
                        p.requires(id, ids[d]);
                    }
                }
                ids.push(id);
            }
            b.push(&mut p).unwrap();
        }
        b.finish().unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Random programs: unmatched sends and receives, size mismatches, wildcard receives,
        /// deadlocks with and without synchronous sends, all in one schedule.
        #[test]
        fn random_schedules_report_the_same(
            progs in prop::collection::vec(program(), 1..48),
            eager_limit in prop_oneof![Just(0u64), Just(16u64), Just(1u64 << 20)],
            max in prop_oneof![Just(0usize), Just(1usize), Just(3usize)],
        ) {
            let s = build(&progs);
            same_for_any_threads(&s, eager_limit, false, max);
            // Below the report: every op's partner after matching, and its pending word after
            // each peel (what the report is computed from), are those of one thread.
            let orders: Vec<ShapeOrder> = s.shapes().iter().map(order::topo).collect();
            // `serial`: an executor that observes the order, which takes the serial peel in
            // program order instead of the blocked one.
            let state = |threads: usize, serial: bool| {
                let mut col = Collector::new(0);
                let links = matching::match_static(&s, &orders, false, &mut col, threads);
                let mut eng = Engine::new(&s, links, threads);
                let mut words = Vec::new();
                for proto in [Protocol::Eager, Protocol::Limit(16), Protocol::Sync] {
                    if serial {
                        eng.run(proto, &mut Observes, false, false, &mut col);
                    } else {
                        eng.run(proto, &mut NoExec, false, false, &mut col);
                    }
                    words.extend(eng.links.ops.iter().map(|o| (o.partner, o.pending)));
                }
                words
            };
            let one = state(1, false);
            for threads in [2, 3, 5] {
                prop_assert_eq!(&state(threads, false), &one, "{} threads", threads);
            }
            // The blocked peel is only another order: the serial peel leaves the same words.
            prop_assert_eq!(&state(1, true), &one, "serial peel");
        }
    }

    /// An executor that observes the order of events (and does nothing): the serial peel.
    struct Observes;
    impl Exec for Observes {}

    /// A schedule with many problems of each kind, capped: the listed ones and the count of the
    /// rest are those of one thread.
    #[test]
    fn capped_problems_are_those_of_one_thread() {
        // 256 ranks; rank r sends to r + 1 (tag 0) and receives from r − 1; every 7th rank posts
        // no receive (an unmatched send on r − 1 ... r), every 11th receives 2 elements for 1
        // (size mismatch in a data-free schedule is accepted: make the send larger instead), and
        // pairs (4k, 4k + 1) also exchange head to head after their ring step, send after
        // receive (a deadlock with synchronous sends).
        let n = 256u32;
        let mut b = ScheduleBuilder::new(n as u64, Meta::sizes_only("many problems")).unwrap();
        let mut p = Program::new();
        for r in 0..n {
            p.clear();
            let len = if (r + 1) % 11 == 0 { 2 } else { 1 };
            let s = p.send((r + 1) % n, 0, Slice::new(Slot::Output, 0, len));
            let mut last = s;
            if r % 7 != 0 {
                let v = p.recv((r + n - 1) % n, 0, Slice::new(Slot::Scratch(0), 0, 1));
                p.requires(v, s);
                last = v;
            }
            if r % 4 < 2 {
                let partner = r ^ 1;
                let v = p.recv(partner, 5, Slice::new(Slot::Scratch(0), 0, 1));
                let s2 = p.send(partner, 5, Slice::new(Slot::Output, 0, 1));
                p.requires(v, last);
                p.requires(s2, v);
            }
            b.push(&mut p).unwrap();
        }
        let s = b.finish().unwrap();
        for max in [0, 1, 5, 40] {
            for eager_limit in [0, 1 << 20] {
                let r = same_for_any_threads(&s, eager_limit, false, max);
                assert!(!r.is_sound());
                let unmatched = r
                    .problems
                    .iter()
                    .filter(|p| matches!(p, Problem::UnmatchedSend(_)))
                    .count();
                let mismatched = r
                    .problems
                    .iter()
                    .filter(|p| matches!(p, Problem::SizeMismatch { .. }))
                    .count();
                if max == 0 {
                    // Ranks 0, 7, ..., 252 post no receive: 37 sends meet nothing; of the other
                    // ranks, those r with r ≡ 0 (mod 11) receive 2 elements from r − 1 into 1.
                    assert_eq!(unmatched, 37);
                    let expect = (1..n).filter(|r| r % 11 == 0 && r % 7 != 0).count();
                    assert_eq!(mismatched, expect);
                    assert_eq!(r.truncated, 0);
                } else {
                    assert!(r.problems.len() <= max);
                    assert!(r.truncated > 0);
                }
            }
        }
    }

    /// The allreduce generators: sound, and the same report, on any thread count (with their
    /// semantics too: the symbolic run is one thread's, the synchronous peel is split).
    #[test]
    fn allreduces_report_the_same_sound_result() {
        for (name, n) in [
            ("recursive_doubling", 64),
            ("ring", 24),
            ("tree", 37),
            ("rabenseifner", 48),
            ("recursive_multiplying:a3,a3,a3,a3", 81),
        ] {
            let alg = Algorithm::parse(name).unwrap();
            let spec = AllreduceSpec::new(n, 6, Dtype::Float64, ReduceOp::Sum);
            let s = allreduce::generate(&alg, &spec).unwrap();
            for eager_limit in [0, 1 << 20] {
                for semantics in [false, true] {
                    let r = same_for_any_threads(&s, eager_limit, semantics, 20);
                    assert!(r.is_sound(), "{name} on {n} ranks: {r}");
                    assert_eq!(r.stats.ranks, n);
                }
            }
        }
    }
}
