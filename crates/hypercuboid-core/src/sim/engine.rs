//! The discrete-event engine: dependencies, matching and the event loop (see [`super`]).

mod lanes;

pub(crate) use lanes::MIN_WINDOW_EVENTS;
pub use lanes::PARALLEL_OPS;
pub(crate) use lanes::{run as lanes_run, LaneStats};

use super::cxxsort;
use super::error::{SimError, StuckOp, Wait};
use super::matching::{agree, Ends, MatchQueues, Queue};
use super::queue::{Event, EventQueue};
use super::trace::{Trace, TraceKind};
use super::{SimOptions, SimResult};
use crate::model::{
    Activity, Attempt, CostModel, Message, NoiseSpec, Notice, OpSite, SendCompletion, TieOrder,
};
use crate::schedule::{Combine, DepKind, Op, OpKind, PeerRule, Rank, Schedule};
use crate::units::Time;
use rustc_hash::FxHashMap;

// Per-op state byte: bits 0..4 count satisfied dependencies, then three flags. An op with
// `COUNT` or more dependencies counts them in `Engine::many` instead (a rare, short-lived entry:
// from its first satisfied dependency to its last).
const COUNT: u8 = (1 << 5) - 1;
const RDV: u8 = 1 << 5;
const STARTED: u8 = 1 << 6;
const DONE: u8 = 1 << 7;

// Event payload: op index in the low 30 bits, kind in the top 2.
const OP_BITS: u32 = 30;
const OP_MASK: u32 = (1 << OP_BITS) - 1;
const EXEC: u32 = 0;
const MSG: u32 = 1;
const FINISH: u32 = 2;
const TAIL: u32 = 3;

/// Largest number of ops in one rank's program (the event payload has 30 bits).
pub(crate) const MAX_OPS_PER_RANK: u64 = OP_MASK as u64;
/// Largest `ranks × CPUs` (and `ranks × NICs`) the engine allocates clocks for.
pub(crate) const MAX_CLOCKS: u64 = 1 << 31;

/// Issue order of ops freed by the same event (LogGOPSim sorts them by type:
/// `OP_SEND < OP_RECV < OP_LOCOP`).
const CLASS_SEND: u8 = 0;
const CLASS_RECV: u8 = 1;
const CLASS_LOCAL: u8 = 2;

/// What an op does, as the event loop dispatches on it.
const K_SEND: u8 = 0;
const K_RECV: u8 = 1;
/// Reduce, copy or compute: CPU work of [`OpInfo::cost`].
const K_LOCAL: u8 = 2;
const K_SLEEP: u8 = 3;

/// What the engine reads of an op, precomputed once per shape (48 bytes): the event loop never
/// decodes an [`Op`], finds its peer from the rank by the shape's [`PeerRule`] (reading the
/// schedule's explicit peers only for ops that follow no rule), and the ops that require it
/// in its shape's [`ShapeInfo::after`].
#[derive(Clone, Copy, Debug)]
struct OpInfo {
    /// Bytes of a send's or a receive's message.
    bytes: u64,
    /// Time on the CPU: a reduce's, copy's or compute's cost under the model, a sleep's
    /// length, a fused receive's reduction (0 for a plain receive and a send).
    cost: Time,
    tag: i32,
    /// Number of dependencies.
    ndeps: u32,
    /// The ops that `require` it: `ShapeInfo::after[after..after + n_after]`.
    after: u32,
    n_after: u32,
    cpu: u16,
    nic: u16,
    /// `K_SEND`, `K_RECV`, `K_LOCAL` or `K_SLEEP`.
    kind: u8,
    /// Some op `irequires` it.
    irequired: bool,
    /// How a rank of the shape finds the op's peer.
    rule: PeerRule,
}

const _: () = assert!(std::mem::size_of::<OpInfo>() == 48);

impl OpInfo {
    fn new<M: CostModel>(
        op: &Op,
        rule: PeerRule,
        ndeps: u32,
        irequired: bool,
        elem: u32,
        m: &M,
    ) -> OpInfo {
        let (kind, tag, bytes, cost) = match op.kind {
            OpKind::Send { tag, data, .. } => (K_SEND, tag, data.bytes(elem), 0),
            OpKind::Recv {
                tag, data, combine, ..
            } => {
                let cost = if combine != Combine::Assign {
                    m.reduce_cost(op.reduced_bytes(elem))
                } else {
                    0
                };
                (K_RECV, tag, data.bytes(elem), cost)
            }
            OpKind::Reduce { .. } => (K_LOCAL, 0, 0, m.reduce_cost(op.reduced_bytes(elem))),
            OpKind::Copy { .. } | OpKind::Pack { .. } | OpKind::Unpack { .. } => {
                (K_LOCAL, 0, 0, m.copy_cost(op.bytes(elem)))
            }
            OpKind::Compute { time } => (K_LOCAL, 0, 0, time),
            OpKind::Sleep { time } => (K_SLEEP, 0, 0, time),
        };
        OpInfo {
            bytes,
            cost,
            tag,
            ndeps,
            cpu: op.cpu,
            nic: op.nic,
            kind,
            irequired,
            after: 0,
            n_after: 0,
            rule,
        }
    }

    /// A receive that no op `irequires`: its posting may be deferred ([`Engine::settle`]).
    #[inline]
    fn deferrable(&self) -> bool {
        self.kind == K_RECV && !self.irequired
    }

    /// Issue class among ops freed together.
    #[inline]
    fn class(&self) -> u8 {
        match self.kind {
            K_SEND => CLASS_SEND,
            K_RECV => CLASS_RECV,
            _ => CLASS_LOCAL,
        }
    }

    #[inline]
    fn activity(&self) -> Activity {
        match self.kind {
            K_SEND => Activity::Send,
            K_RECV => Activity::Recv,
            K_SLEEP => Activity::Sleep,
            _ => Activity::Local,
        }
    }
}

/// What the engine needs of a shape, precomputed once per shape.
struct ShapeInfo {
    /// Each op.
    ops: Vec<OpInfo>,
    /// Ops without dependencies, in program order.
    roots: Vec<u32>,
    /// Per op, the ops that `require` it, in the order of [`crate::schedule::Shape::dependents`]
    /// (see [`OpInfo::after`]; fewer than 2^32, as the shape's dependents are).
    after: Vec<u32>,
}

/// What an event on a rank reads and writes of the rank itself, in one record (48 bytes), so
/// that it costs one or two cache lines rather than one per column (the rank's shape, its first
/// op, its matching queues with their inline entry, its last completion). The model's clocks
/// are the model's own. In C layout, so that the matching queues' list ends come last.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct RankRec {
    /// The rank's first op in the flat numbering ([`Schedule::op_offset`]).
    off: u64,
    /// Its latest op completion.
    last_done: Time,
    /// Its shape ([`Schedule::shape_index`]).
    shape: u32,
    /// Its matching queues.
    ends: Ends,
}

const _: () = assert!(std::mem::size_of::<RankRec>() == 48);

#[derive(Clone, Copy, Debug)]
struct Freed {
    rank: Rank,
    op: u32,
    class: u8,
    tail: bool,
}

struct TraceBuf {
    start: Vec<Time>,
    end: Vec<Time>,
    /// Message row of each send op (flat op index).
    msg_row: Vec<u32>,
    msgs: Trace,
}

/// The engine. With `P` (a lane of a parallel run, [`lanes`]) it holds the ranks from `lo`
/// on (its records, op states and model clocks are indexed from there) and gives new events
/// provisional stamps until the round's barrier makes them final.
struct Engine<'a, M: CostModel, const P: bool> {
    s: &'a Schedule,
    /// The first rank held (0 unless a lane).
    lo: Rank,
    /// A lane's buffers ([`lanes::Lane`]; empty otherwise).
    lane: lanes::Lane,
    m: &'a M,
    st: M::State,
    info: &'a [ShapeInfo],
    /// Ranks in the schedule (what a shift rule wraps at).
    nranks: u32,
    state: Vec<u8>,
    /// Satisfied dependencies of ops with `COUNT` or more of them, by flat op index, while
    /// some but not all are.
    many: FxHashMap<usize, u32>,
    q: EventQueue,
    ts: u64,
    freed: Vec<Freed>,
    mq: MatchQueues,
    /// Per rank: what its events read of it.
    ranks: Vec<RankRec>,
    done_ops: u64,
    messages: u64,
    noise: Option<NoiseSpec>,
    seed: u64,
    tie_order: TieOrder,
    trace: Option<TraceBuf>,
    /// Notices of a model that announces arrivals ([`CostModel::ANNOUNCES`]).
    notices: Vec<Notice>,
    /// Sends whose state has `RDV` set (they complete when matched, or when the model says).
    rdv: u64,
    /// Rendezvous transfers under way: message id → (receiver, receive op).
    transfers: FxHashMap<u64, (Rank, u32)>,
    /// The model's error, which ends the run.
    failed: Option<SimError>,
    /// The model has told everything up to this time (inclusive).
    heard_to: Time,
    /// Runs of the schedule ([`SimOptions::calls`], at least 1).
    calls: u32,
    /// Per rank, when the schedule runs more than once (empty otherwise): runs started, and
    /// ops of the current run not yet completed.
    run_of: Vec<u32>,
    left: Vec<u32>,
    /// Receives may be deferred ([`Engine::settle`]).
    defer: bool,
    /// Events handled.
    events: u64,
}

pub(crate) fn run<M: CostModel>(
    s: &Schedule,
    model: &M,
    opts: &SimOptions,
) -> Result<(SimResult, M::State), SimError> {
    // A model that simulates a network announces arrivals between events: its receives are
    // posted by events, as LogGOPSim's are, which is simpler to follow.
    run_with(s, model, opts, !M::ANNOUNCES, &mut 0)
}

/// [`run`], deferring receives ([`Engine::settle`]) or not (the results are the same); adds
/// the events it handled to `events`. With `opts.threads` other than 1 it runs on several
/// threads when it can ([`lanes`]), with the same results.
pub(crate) fn run_with<M: CostModel>(
    s: &Schedule,
    model: &M,
    opts: &SimOptions,
    defer: bool,
    events: &mut u64,
) -> Result<(SimResult, M::State), SimError> {
    let (info, ncpus, nnics) = shape_infos(s, model)?;
    let calls = opts.calls.max(1);
    if calls > 1 && opts.trace {
        return Err(SimError::TooLarge {
            what: format!("a trace of {calls} calls (a trace records one: simulate 1 call)"),
            limit: 1,
        });
    }
    let mut e =
        Engine::<M, false>::new(s, model, opts, &info, (ncpus, nnics), 0..s.nranks(), defer);
    e.run();
    *events += e.events;
    if let Some(err) = e.failed.take() {
        return Err(err);
    }
    e.finish()
}

/// What the engine reads of each shape's ops, and the CPUs and NICs a rank needs.
fn shape_infos<M: CostModel>(
    s: &Schedule,
    model: &M,
) -> Result<(Vec<ShapeInfo>, u16, u16), SimError> {
    let nranks = s.nranks();
    let (mut ncpus, mut nnics) = (1u32, 1u32);
    let mut info = Vec::with_capacity(s.num_shapes());
    for shape in s.shapes() {
        if shape.len() as u64 > MAX_OPS_PER_RANK {
            return Err(SimError::TooLarge {
                what: format!("a rank with {} ops", shape.len()),
                limit: MAX_OPS_PER_RANK,
            });
        }
        let mut ops = Vec::with_capacity(shape.len());
        let mut roots = Vec::new();
        let mut after = Vec::new();
        for (i, op) in shape.ops.iter().enumerate() {
            let d = shape.dep_start[i + 1] - shape.dep_start[i];
            if d == 0 {
                roots.push(i as u32);
            }
            let irequired = shape
                .dependents(i)
                .iter()
                .any(|&(_, k)| k == DepKind::IRequires);
            let mut o = OpInfo::new(op, shape.peers[i], d, irequired, s.elem_size(), model);
            o.after = after.len() as u32;
            after.extend(
                shape
                    .dependents(i)
                    .iter()
                    .filter(|&&(_, k)| k == DepKind::Requires)
                    .map(|&(j, _)| j),
            );
            o.n_after = after.len() as u32 - o.after;
            ops.push(o);
            ncpus = ncpus.max(op.cpu as u32 + 1);
            nnics = nnics.max(op.nic as u32 + 1);
        }
        info.push(ShapeInfo { ops, roots, after });
    }
    for (what, n) in [("CPUs", ncpus), ("NICs", nnics)] {
        if nranks as u64 * n as u64 > MAX_CLOCKS {
            return Err(SimError::TooLarge {
                what: format!("{nranks} ranks × {n} {what} per rank"),
                limit: MAX_CLOCKS,
            });
        }
    }
    Ok((info, ncpus as u16, nnics as u16))
}

impl<'a, M: CostModel, const P: bool> Engine<'a, M, P> {
    /// An engine holding `ranks` (all of them unless a lane), before any event.
    fn new(
        s: &'a Schedule,
        model: &'a M,
        opts: &SimOptions,
        info: &'a [ShapeInfo],
        (ncpus, nnics): (u16, u16),
        ranks: std::ops::Range<Rank>,
        defer: bool,
    ) -> Self {
        let nranks = s.nranks();
        let calls = opts.calls.max(1);
        let op_lo = s.op_offset(ranks.start);
        let op_hi = if ranks.end == nranks {
            s.total_ops()
        } else {
            s.op_offset(ranks.end)
        };
        let held = (op_hi - op_lo) as usize;
        let trace = opts.trace.then(|| TraceBuf {
            start: vec![0; held],
            // Read (the latest of several ends) before written.
            end: super::written_zeros(held),
            msg_row: vec![u32::MAX; held],
            msgs: Trace::default(),
        });
        Engine {
            s,
            lo: ranks.start,
            lane: lanes::Lane::default(),
            m: model,
            st: model.new_state(ranks.end - ranks.start, ncpus, nnics),
            info,
            nranks,
            state: crate::hint::huge_zeros(held),
            many: FxHashMap::default(),
            q: EventQueue::new(),
            ts: 0,
            freed: Vec::new(),
            mq: MatchQueues::new(),
            ranks: crate::hint::huge_collect(
                ranks.len(),
                ranks.clone().map(|r| RankRec {
                    off: s.op_offset(r) - op_lo,
                    last_done: 0,
                    shape: s.shape_index(r) as u32,
                    ends: Ends::EMPTY,
                }),
            ),
            done_ops: 0,
            messages: 0,
            noise: opts.noise.clone().filter(|n| !n.is_none()),
            seed: opts.seed,
            tie_order: model.tie_order(),
            trace,
            notices: Vec::new(),
            rdv: 0,
            transfers: FxHashMap::default(),
            failed: None,
            heard_to: 0,
            calls,
            run_of: if calls > 1 {
                vec![1; ranks.len()]
            } else {
                Vec::new()
            },
            left: if calls > 1 {
                ranks.map(|r| s.rank(r).len() as u32).collect()
            } else {
                Vec::new()
            },
            defer,
            events: 0,
        }
    }
}

impl<M: CostModel, const P: bool> Engine<'_, M, P> {
    /// The time events are being handled at.
    #[inline(always)]
    fn now(&self) -> Time {
        self.q.now()
    }

    /// Whether the event `(time, ts)` (at or after [`Engine::now`]), had it been queued, would
    /// have been handled already (see [`EventQueue::passed`]; a lane's provisional stamps
    /// compare as one thread's would among the events it holds: see [`lanes`]).
    #[inline(always)]
    fn passed(&self, time: Time, ts: u64) -> bool {
        self.q.passed(time, ts)
    }

    /// `rank`'s record (a rank this engine holds).
    #[inline(always)]
    fn rec(&self, rank: Rank) -> &RankRec {
        &self.ranks[(rank - self.lo) as usize]
    }

    #[inline(always)]
    fn rec_mut(&mut self, rank: Rank) -> &mut RankRec {
        &mut self.ranks[(rank - self.lo) as usize]
    }

    /// `rank` as the model's state of this engine numbers it.
    #[inline(always)]
    fn local(&self, rank: Rank) -> Rank {
        rank - self.lo
    }

    /// Where `rank`'s ops start in `state` (a rank this engine holds).
    #[inline]
    fn off(&self, rank: Rank) -> usize {
        self.rec(rank).off as usize
    }

    /// `rank`'s shape (any rank: a lane reads a sender it does not hold from the schedule).
    #[inline]
    fn shape_of(&self, rank: Rank) -> usize {
        if P {
            self.s.shape_index(rank)
        } else {
            self.rec(rank).shape as usize
        }
    }

    #[inline(always)]
    fn info(&self, rank: Rank, i: u32) -> &OpInfo {
        &self.info[self.shape_of(rank)].ops[i as usize]
    }

    #[inline(always)]
    fn peer(&self, rank: Rank, i: u32) -> Rank {
        match self.info(rank, i).rule.apply(rank, self.nranks) {
            Some(p) => p,
            None => self.s.peer(rank, i as usize),
        }
    }

    #[inline]
    fn push_new(&mut self, time: Time, rank: Rank, op: u32, kind: u32) {
        if P {
            self.lane_new(time, rank, op | kind << OP_BITS);
            return;
        }
        let ts = self.ts;
        self.ts += 1;
        self.q.push(Event {
            time,
            ts,
            rank,
            what: op | kind << OP_BITS,
        });
    }

    /// Queues `e` again at `t`, keeping its stamp (its place among events at equal times).
    #[inline]
    fn requeue(&mut self, mut e: Event, t: Time) {
        debug_assert!(t > e.time, "a model asked to retry at {t} <= {}", e.time);
        e.time = t.max(e.time.saturating_add(1));
        if P {
            self.lane_push(e);
        } else {
            self.q.push(e);
        }
    }

    /// The events of the first batch: the root ops of ranks `lo..hi` (all queued at time 0).
    fn roots_of(&self, lo: Rank, hi: Rank) -> usize {
        (lo..hi)
            .map(|r| self.info[self.shape_of(r)].roots.len())
            .sum()
    }

    fn run(&mut self) {
        self.q.reserve_now(self.roots_of(0, self.s.nranks()));
        for r in 0..self.s.nranks() {
            let si = self.shape_of(r);
            for k in 0..self.info[si].roots.len() {
                let op = self.info[si].roots[k];
                let class = self.info[si].ops[op as usize].class();
                self.freed.push(Freed {
                    rank: r,
                    op,
                    class,
                    tail: false,
                });
            }
            self.flush(0);
        }
        loop {
            let Some(e) = self.q.pop() else {
                // Nothing left but what the model simulates itself (messages in flight).
                if M::ANNOUNCES && self.take_notices(None) {
                    continue;
                }
                break;
            };
            if M::ANNOUNCES && e.time > self.heard_to && self.take_notices(Some(e.time)) {
                // Something happened at or before this event: handle it first (the event
                // keeps its stamp, so its place among events at its time).
                self.q.push(e);
                continue;
            }
            self.events += 1;
            self.prefetch_ahead();
            match e.what >> OP_BITS {
                EXEC => self.exec(e),
                MSG => self.arrive(e),
                FINISH => self.finish_op(e),
                _ => self.tail(e),
            }
            self.flush(e.time);
        }
    }

    /// Brings what the events a few places ahead will read into the cache, in three stages:
    /// `FAR` ahead, the event's rank record, and for an op its rank's clocks in the model;
    /// `MID` ahead, for a message, its receiver's record and clocks (the receiver found from
    /// the sender's record, now cached); `NEAR` ahead, the op state of the event's rank, or
    /// for a message that of the receive its receiver's inline entry holds (the one the
    /// message most likely completes). Partners 2^k ranks apart (a binomial tree) make each of
    /// these a cache miss otherwise.
    #[inline]
    fn prefetch_ahead(&self) {
        const NEAR: usize = 3;
        const MID: usize = 6;
        const FAR: usize = 10;
        if let Some(f) = self.q.ahead(FAR) {
            if f.what >> OP_BITS != MSG {
                self.prefetch_rank(f.rank);
            } else if !P {
                // (A lane may not hold a message's sender.)
                let r = self.rec(f.rank);
                super::prefetch(r);
                super::prefetch(r.ends.last_word());
            }
        }
        if let Some(f) = self.q.ahead(MID) {
            if f.what >> OP_BITS == MSG {
                let dst = self.peer(f.rank, f.what & OP_MASK);
                self.prefetch_rank(dst);
            }
        }
        let Some(&f) = self.q.ahead(NEAR) else {
            return;
        };
        let i = f.what & OP_MASK;
        let w = if f.what >> OP_BITS == MSG {
            let r = self.rec(self.peer(f.rank, i));
            r.off as usize + r.ends.posted_inline().unwrap_or(0) as usize
        } else {
            self.off(f.rank) + i as usize
        };
        if let Some(w) = self.state.get(w) {
            super::prefetch(w);
        }
    }

    /// Brings `rank`'s record into the cache, both its ends (a 48-byte record may straddle two
    /// cache lines), and its clocks in the model.
    #[inline]
    fn prefetch_rank(&self, rank: Rank) {
        let r = self.rec(rank);
        super::prefetch(r);
        super::prefetch(r.ends.last_word());
        self.m.prefetch(&self.st, self.local(rank));
    }

    /// Asks the model what happened up to `until` and queues it; true when it queued
    /// something. A model error ends the run.
    fn take_notices(&mut self, until: Option<Time>) -> bool {
        if self.failed.is_some() {
            return false;
        }
        if let Err(err) = self.m.advance(&mut self.st, until, &mut self.notices) {
            self.failed = Some(SimError::Network(Box::new(err)));
            self.notices.clear();
            // Drop every event so that the run stops here.
            while self.q.pop().is_some() {}
            return false;
        }
        if self.notices.is_empty() {
            // Nothing happens up to `until`; what is started at `until` arrives later.
            if let Some(t) = until {
                self.heard_to = t;
            }
            return false;
        }
        // The model stopped at its first notices.
        self.heard_to = self.notices.iter().map(Notice::time).min().unwrap_or(0);
        for k in 0..self.notices.len() {
            match self.notices[k] {
                Notice::Arrival { time, id } => {
                    let (rank, op) = Message::send_of(id);
                    if let Some(tr) = &mut self.trace {
                        let row = tr.msg_row[self.s.op_offset(rank) as usize + op as usize];
                        if row != u32::MAX {
                            tr.msgs.msg_arrival[row as usize] = time;
                        }
                    }
                    self.push_new(time, rank, op, MSG);
                }
                Notice::RendezvousDone { time, id } => {
                    let (rank, op) = Message::send_of(id);
                    self.push_new(time, rank, op, FINISH);
                }
            }
        }
        self.notices.clear();
        true
    }

    /// A FINISH event: the op completes; for a rendezvous send whose transfer the model
    /// announced done, its receive completes too.
    fn finish_op(&mut self, e: Event) {
        let (rank, i, t) = (e.rank, e.what & OP_MASK, e.time);
        let f = self.off(rank) + i as usize;
        if self.state[f] & RDV != 0 {
            self.state[f] &= !RDV;
            self.rdv -= 1;
            self.complete(rank, i, t);
            if let Some((dst, recv_op)) = self.transfers.remove(&Message::id_of(rank, i)) {
                self.recv_done(dst, recv_op, t);
            }
            return;
        }
        self.complete(rank, i, t);
    }

    /// Queues the ops freed by the last event: by rank, then sends, receives, local ops, each
    /// in the order they were freed (LogGOPSim: `check_hosts` sorted, then `gnp_op_comp_func`).
    #[inline(always)]
    fn flush(&mut self, now: Time) {
        if !self.freed.is_empty() {
            self.flush_freed(now);
        }
    }

    /// [`Engine::flush`] when some op was freed (out of line: an event that frees nothing,
    /// a third of them in recursive doubling, pays no call).
    #[inline(never)]
    fn flush_freed(&mut self, now: Time) {
        let in_order = || {
            self.freed
                .windows(2)
                .all(|w| (w[0].rank, w[0].class) <= (w[1].rank, w[1].class))
        };
        // Already in issue order: a stable sort would not move anything, nor would libstdc++'s
        // `std::sort` up to 16 ops (its insertion sort; beyond, it may permute equal ops).
        let kept = match self.tie_order {
            TieOrder::Stable => true,
            TieOrder::Libstdcxx => self.freed.len() <= 16,
        };
        if self.freed.len() > 1 && !(kept && in_order()) {
            // By rank (stable: each rank's ops stay in the order they were freed), then each
            // rank's run by class.
            self.freed.sort_by_key(|f| f.rank);
            let mut lo = 0;
            while lo < self.freed.len() {
                let r = self.freed[lo].rank;
                let hi = lo + self.freed[lo..].partition_point(|f| f.rank == r);
                let run = &mut self.freed[lo..hi];
                match self.tie_order {
                    TieOrder::Stable => run.sort_by_key(|f| f.class),
                    TieOrder::Libstdcxx => {
                        cxxsort::sort(run, &|a: &Freed, b: &Freed| a.class < b.class)
                    }
                }
                lo = hi;
            }
        }
        for k in 0..self.freed.len() {
            let f = self.freed[k];
            let o = *self.info(f.rank, f.op);
            let activity = if f.tail {
                Activity::Local
            } else {
                o.activity()
            };
            let site = OpSite {
                rank: self.local(f.rank),
                activity,
                cpu: o.cpu,
                nic: o.nic,
            };
            let mut t = self.m.ready_time(&self.st, now, site);
            if !f.tail {
                if let Some(n) = &self.noise {
                    // each run of a repeated schedule draws its own delays (run 1: the seed's)
                    let run = match self.calls {
                        1 => 0,
                        _ => self.run_of[f.rank as usize] as u64 - 1,
                    };
                    let seed = self
                        .seed
                        .wrapping_add(run.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                    t = t.max(now).saturating_add(n.delay(seed, f.rank, f.op));
                }
            }
            if self.defer
                && o.deferrable()
                && !f.tail
                && t >= self.now()
                && self.rec(f.rank).ends.is_empty()
            {
                // Its event would post it into empty queues: kept in its rank's record
                // instead, with the event's time and stamp, until something looks.
                let ts = if P {
                    self.lane_defer()
                } else {
                    self.ts += 1;
                    self.ts - 1
                };
                self.rec_mut(f.rank).ends.defer(f.op, t, ts);
                continue;
            }
            self.push_new(t, f.rank, f.op, if f.tail { TAIL } else { EXEC });
        }
        self.freed.clear();
    }

    /// Settles the receive deferred on `rank`, if any, before the current event reads or
    /// changes `rank`'s matching queues (a message reaching `rank`, another receive of `rank`
    /// posted) or the run ends (`at_end`).
    ///
    /// A receive whose dependencies are satisfied is posted by an event at its ready time.
    /// When its rank's queues are empty as it becomes ready, and nothing `irequires` it, that
    /// event does nothing anyone sees but post it into empty queues, unless a message reaches
    /// the rank first; so `flush` keeps the receive in the rank's record instead, with the
    /// event's time and stamp (`Ends::defer`), and queues nothing. Here, at the next event
    /// that concerns the rank's queues, either that event would already have run (the event
    /// queue has passed its time and stamp: [`EventQueue::passed`]), and the receive is
    /// posted as it would have been, into the queues it would have found (empty: nothing
    /// touched them meanwhile), or it would not, and the event is queued now with its time
    /// and stamp, to run in its place. Either way every event runs in the same order, on the
    /// same state, as without deferral; recursive doubling's receives, posted before their
    /// messages arrive, take no event of their own.
    ///
    /// With `msg`, the `(source, tag)` of a message reaching `rank` now: when the deferred
    /// receive was posted and takes that message, it is not queued, and its op is returned
    /// (what the message's search of the posted queue would return).
    #[inline]
    fn settle(&mut self, rank: Rank, at_end: bool, msg: Option<(Rank, i32)>) -> Option<u32> {
        let (op, time, ts) = self.rec_mut(rank).ends.take_deferred()?;
        let ts = if P { self.lane_settled(ts, time) } else { ts };
        if at_end || self.passed(time, ts) {
            self.start(rank, op, time, time);
            let (peer, tag) = (self.peer(rank, op), self.info(rank, op).tag);
            if let Some((src, msg_tag)) = msg {
                if agree(peer, tag, src, msg_tag) {
                    return Some(op);
                }
            }
            let lo = self.lo;
            self.mq.push(
                &mut self.ranks[(rank - lo) as usize].ends,
                Queue::Posted,
                peer,
                tag,
                op,
            );
        } else {
            let e = Event {
                time,
                ts,
                rank,
                what: op | EXEC << OP_BITS,
            };
            if P {
                self.lane_push(e);
            } else {
                self.q.push(e);
            }
        }
        None
    }

    #[inline(always)]
    fn dec(&mut self, rank: Rank, off: usize, si: usize, j: u32) {
        let o = &self.info[si].ops[j as usize];
        let (ndeps, class) = (o.ndeps, o.class());
        let f = off + j as usize;
        let free = if ndeps < COUNT as u32 {
            let w = &mut self.state[f];
            *w += 1;
            (*w & COUNT) as u32 == ndeps
        } else {
            self.dec_many(f, ndeps)
        };
        if free {
            self.freed.push(Freed {
                rank,
                op: j,
                class,
                tail: false,
            });
        }
    }

    /// [`Engine::dec`] of an op with `COUNT` or more dependencies (counted in `many`): true
    /// when this was its last.
    #[cold]
    #[inline(never)]
    fn dec_many(&mut self, f: usize, ndeps: u32) -> bool {
        let c = self.many.entry(f).or_insert(0);
        *c += 1;
        let all = *c == ndeps;
        if all {
            self.many.remove(&f);
        }
        all
    }

    /// Marks op `i` of `rank` started at `t` (its `irequires` dependents may go).
    #[inline(always)]
    fn start(&mut self, rank: Rank, i: u32, t: Time, busy_until: Time) {
        let off = self.off(rank);
        self.state[off + i as usize] |= STARTED;
        if self.trace.is_some() {
            self.trace_start(off + i as usize, t, busy_until);
        }
        let si = self.shape_of(rank);
        if self.info[si].ops[i as usize].irequired {
            self.start_irequired(rank, off, si, i);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_start(&mut self, f: usize, t: Time, busy_until: Time) {
        if let Some(tr) = &mut self.trace {
            tr.start[f] = t;
            tr.end[f] = busy_until.max(t);
        }
    }

    /// The `irequires` dependents of op `i` of `rank`, which has started.
    #[inline(never)]
    fn start_irequired(&mut self, rank: Rank, off: usize, si: usize, i: u32) {
        let deps = self.s.shapes()[si].dependents(i as usize);
        for &(j, kind) in deps {
            if kind == DepKind::IRequires {
                self.dec(rank, off, si, j);
            }
        }
    }

    /// Marks op `i` of `rank` completed at `t` (its `requires` dependents may go).
    #[inline(always)]
    fn complete(&mut self, rank: Rank, i: u32, t: Time) {
        let off = self.off(rank);
        self.state[off + i as usize] |= DONE;
        self.done_ops += 1;
        let ld = &mut self.rec_mut(rank).last_done;
        *ld = (*ld).max(t);
        if self.trace.is_some() {
            self.trace_end(off + i as usize, t);
        }
        let si = self.shape_of(rank);
        let o = &self.info[si].ops[i as usize];
        for k in o.after..o.after + o.n_after {
            let j = self.info[si].after[k as usize];
            self.dec(rank, off, si, j);
        }
        if self.calls > 1 {
            self.next_call(rank, off, si);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_end(&mut self, f: usize, t: Time) {
        if let Some(tr) = &mut self.trace {
            let e = &mut tr.end[f];
            *e = (*e).max(t);
        }
    }

    /// A repeated schedule ([`SimOptions::calls`]): counts the op `complete` just finished
    /// on `rank`, and starts the rank's next run from its roots when this one is over.
    #[cold]
    #[inline(never)]
    fn next_call(&mut self, rank: Rank, off: usize, si: usize) {
        let r = rank as usize;
        self.left[r] -= 1;
        if self.left[r] == 0 && self.run_of[r] < self.calls {
            // The rank's run is over: its next run starts now, from its roots.
            self.run_of[r] += 1;
            let n = self.info[si].ops.len();
            self.left[r] = n as u32;
            self.state[off..off + n].fill(0);
            for k in 0..self.info[si].roots.len() {
                let op = self.info[si].roots[k];
                self.freed.push(Freed {
                    rank,
                    op,
                    class: self.info[si].ops[op as usize].class(),
                    tail: false,
                });
            }
        }
    }

    #[inline]
    fn message(&self, src: Rank, i: u32) -> Message {
        let o = self.info(src, i);
        debug_assert_eq!(o.kind, K_SEND, "message of a non-send op");
        Message {
            id: Message::id_of(src, i),
            src,
            dst: self.peer(src, i),
            bytes: o.bytes,
            tag: o.tag,
            cpu: o.cpu,
            nic: o.nic,
        }
    }

    fn exec(&mut self, e: Event) {
        let (rank, i, t) = (e.rank, e.what & OP_MASK, e.time);
        let o = *self.info(rank, i);
        match o.kind {
            K_SEND => {
                let m = self.message(rank, i);
                let lm = Message {
                    src: self.local(rank),
                    ..m
                };
                match self.m.send(&mut self.st, t, &lm) {
                    Attempt::Retry(t2) => self.requeue(e, t2),
                    Attempt::Go(issue) => {
                        self.start(rank, i, t, issue.busy_until);
                        self.messages += 1;
                        if let Some(tr) = &mut self.trace {
                            let row = tr.msgs.msg_src.len() as u32;
                            tr.msg_row[self.s.op_offset(rank) as usize + i as usize] = row;
                            let mt = &mut tr.msgs;
                            mt.msg_src.push(rank);
                            mt.msg_dst.push(m.dst);
                            mt.msg_src_op.push(i);
                            mt.msg_dst_op.push(u32::MAX);
                            mt.msg_start.push(t);
                            mt.msg_arrival.push(issue.arrival.unwrap_or(Time::MAX));
                            mt.msg_bytes.push(m.bytes);
                        }
                        if let Some(arrival) = issue.arrival {
                            self.push_new(arrival, rank, i, MSG);
                        }
                        match issue.completion {
                            SendCompletion::At(d) if d <= t => self.complete(rank, i, t),
                            SendCompletion::At(d) => self.push_new(d, rank, i, FINISH),
                            SendCompletion::OnMatch => {
                                let f = self.off(rank) + i as usize;
                                self.state[f] |= RDV;
                                self.rdv += 1;
                            }
                        }
                    }
                }
            }
            K_RECV => {
                self.settle(rank, false, None);
                let peer = self.peer(rank, i);
                self.start(rank, i, t, t);
                let lo = self.lo;
                match self.mq.take(
                    &mut self.ranks[(rank - lo) as usize].ends,
                    Queue::Unexpected,
                    peer,
                    o.tag,
                ) {
                    Some((src, _, send_op)) => {
                        let site = OpSite {
                            rank,
                            activity: Activity::Recv,
                            cpu: o.cpu,
                            nic: o.nic,
                        };
                        self.matched(src, send_op, rank, i, t, Some(site));
                    }
                    None => self.mq.push(
                        &mut self.ranks[(rank - lo) as usize].ends,
                        Queue::Posted,
                        peer,
                        o.tag,
                        i,
                    ),
                }
            }
            K_LOCAL => {
                let site = OpSite {
                    rank: self.local(rank),
                    activity: Activity::Local,
                    cpu: o.cpu,
                    nic: o.nic,
                };
                match self.m.local(&mut self.st, t, site, o.cost) {
                    Attempt::Retry(t2) => self.requeue(e, t2),
                    Attempt::Go(run) => {
                        self.start(rank, i, t, run.busy_until);
                        if run.done <= t {
                            self.complete(rank, i, t);
                        } else {
                            self.push_new(run.done, rank, i, FINISH);
                        }
                    }
                }
            }
            _ => {
                debug_assert_eq!(o.kind, K_SLEEP);
                let d = t.saturating_add(o.cost);
                self.start(rank, i, t, d);
                if d == t {
                    self.complete(rank, i, t);
                } else {
                    self.push_new(d, rank, i, FINISH);
                }
            }
        }
    }

    /// The message of send `i` of `e.rank` reaches its receiver.
    fn arrive(&mut self, e: Event) {
        let (src, i, t) = (e.rank, e.what & OP_MASK, e.time);
        let m = self.message(src, i);
        let lm = Message {
            dst: self.local(m.dst),
            ..m
        };
        let lo = self.lo;
        match self.m.deliver(&mut self.st, t, &lm) {
            Attempt::Retry(t2) => self.requeue(e, t2),
            Attempt::Go(busy_until) => {
                match self.settle(m.dst, false, Some((src, m.tag))).or_else(|| {
                    self.mq
                        .take(
                            &mut self.ranks[(m.dst - lo) as usize].ends,
                            Queue::Posted,
                            src,
                            m.tag,
                        )
                        .map(|(_, _, op)| op)
                }) {
                    Some(recv_op) => {
                        if let Some(tr) = &mut self.trace {
                            let f = self.s.op_offset(m.dst) as usize + recv_op as usize;
                            tr.end[f] = tr.end[f].max(busy_until);
                        }
                        self.matched(src, i, m.dst, recv_op, t, None);
                    }
                    None => self.mq.push(
                        &mut self.ranks[(m.dst - lo) as usize].ends,
                        Queue::Unexpected,
                        src,
                        m.tag,
                        i,
                    ),
                }
            }
        }
    }

    /// Send `send_op` of `src` matched receive `recv_op` of `dst` at `t`: a rendezvous send
    /// completes (first, as in LogGOPSim), then the receive, after its reduction if it is a
    /// fused receive-reduce whose reduction costs something.
    fn matched(
        &mut self,
        src: Rank,
        send_op: u32,
        dst: Rank,
        recv_op: u32,
        t: Time,
        recv_site: Option<OpSite>,
    ) {
        // (A lane does not hold every sender: it runs no trace and no rendezvous.)
        if !P {
            if let Some(tr) = &mut self.trace {
                let row = tr.msg_row[self.s.op_offset(src) as usize + send_op as usize];
                if row != u32::MAX {
                    tr.msgs.msg_dst_op[row as usize] = recv_op;
                }
            }
        }
        // (Without rendezvous sends under way, the sender's op state, a cache miss, is not read.)
        if !P && self.rdv > 0 && self.state[self.off(src) + send_op as usize] & RDV != 0 {
            let sf = self.off(src) + send_op as usize;
            let m = self.message(src, send_op);
            if self.m.rendezvous_matched(&mut self.st, t, &m, recv_site) {
                self.state[sf] &= !RDV;
                self.rdv -= 1;
                self.complete(src, send_op, t);
            } else {
                // The model transfers the data and announces when it is done.
                self.transfers.insert(m.id, (dst, recv_op));
                return;
            }
        }
        self.recv_done(dst, recv_op, t);
    }

    /// Receive `recv_op` of `dst` has its data at `t`: it completes, after its reduction if
    /// it is a fused receive-reduce whose reduction costs something.
    #[inline]
    fn recv_done(&mut self, dst: Rank, recv_op: u32, t: Time) {
        if self.info(dst, recv_op).cost > 0 {
            self.freed.push(Freed {
                rank: dst,
                op: recv_op,
                class: CLASS_LOCAL,
                tail: true,
            });
        } else {
            self.complete(dst, recv_op, t);
        }
    }

    /// The reduction of a fused receive-reduce runs on the receive's CPU.
    fn tail(&mut self, e: Event) {
        let (rank, i, t) = (e.rank, e.what & OP_MASK, e.time);
        let o = *self.info(rank, i);
        let site = OpSite {
            rank: self.local(rank),
            activity: Activity::Local,
            cpu: o.cpu,
            nic: o.nic,
        };
        match self.m.local(&mut self.st, t, site, o.cost) {
            Attempt::Retry(t2) => self.requeue(e, t2),
            Attempt::Go(run) => {
                if let Some(tr) = &mut self.trace {
                    let f = self.s.op_offset(rank) as usize + i as usize;
                    tr.end[f] = tr.end[f].max(run.busy_until);
                }
                if run.done <= t {
                    self.complete(rank, i, t);
                } else {
                    self.push_new(run.done, rank, i, FINISH);
                }
            }
        }
    }

    fn finish(mut self) -> Result<(SimResult, M::State), SimError> {
        let total = self.s.total_ops();
        if self.done_ops < total * self.calls as u64 {
            // The events of receives still deferred would have run by now.
            for r in 0..self.s.nranks() {
                self.settle(r, true, None);
            }
            return Err(self.deadlock());
        }
        if self.mq.live() > 0 {
            let mut examples = Vec::new();
            let mut messages = 0;
            for r in 0..self.s.nranks() {
                for (src, tag, op) in self
                    .mq
                    .entries(&self.ranks[r as usize].ends, Queue::Unexpected)
                {
                    messages += 1;
                    if examples.len() < 4 {
                        examples.push((src, op, r, tag));
                    }
                }
            }
            return Err(SimError::Unreceived { messages, examples });
        }
        let nranks = self.s.nranks();
        let rank_finish: Vec<Time> = (0..nranks)
            .map(|r| {
                self.m
                    .rank_finish(&self.st, r, self.ranks[r as usize].last_done)
            })
            .collect();
        let completion = rank_finish.iter().copied().max().unwrap_or(0);
        if completion == Time::MAX {
            return Err(SimError::TimeOverflow);
        }
        let trace = self.trace.map(|tb| {
            let mut t = tb.msgs;
            let n = total as usize;
            t.op_rank.reserve(n);
            t.op_index.reserve(n);
            t.op_kind.reserve(n);
            t.op_cpu.reserve(n);
            for r in 0..nranks {
                let v = self.s.rank(r);
                for i in 0..v.len() {
                    let op = &v.shape.ops[i];
                    t.op_rank.push(r);
                    t.op_index.push(i as u32);
                    t.op_kind.push(TraceKind::of(&op.kind));
                    t.op_cpu.push(op.cpu);
                }
            }
            t.op_start = tb.start;
            t.op_end = tb.end;
            t
        });
        Ok((
            SimResult {
                completion,
                rank_finish,
                ops: self.done_ops,
                messages: self.messages,
                trace,
            },
            self.st,
        ))
    }

    fn deadlock(&self) -> SimError {
        let total = self.s.total_ops();
        let mut stuck = Vec::new();
        let mut stuck_ranks = 0;
        for r in 0..self.s.nranks() {
            let off = self.off(r);
            let v = self.s.rank(r);
            let first = (0..v.len()).find(|&i| self.state[off + i] & DONE == 0);
            let Some(i) = first else { continue };
            stuck_ranks += 1;
            if stuck.len() >= 4 {
                continue;
            }
            let w = self.state[off + i];
            let op = v.op(i);
            let wait = if w & STARTED != 0 {
                match op.kind {
                    OpKind::Recv { peer, tag, .. } => Wait::Message { from: peer, tag },
                    OpKind::Send { peer, tag, .. } => Wait::Receiver { to: peer, tag },
                    // Local ops and sleeps always complete once started.
                    _ => continue,
                }
            } else {
                let blocking = v.deps(i).iter().find(|d| {
                    let dw = self.state[off + d.on as usize];
                    match d.kind {
                        DepKind::Requires => dw & DONE == 0,
                        DepKind::IRequires => dw & STARTED == 0,
                    }
                });
                match blocking {
                    Some(d) => Wait::Dependency {
                        on: d.on,
                        kind: d.kind,
                    },
                    None => continue,
                }
            };
            stuck.push(StuckOp {
                rank: r,
                op: i as u32,
                text: op.to_string(),
                wait,
            });
        }
        SimError::Deadlock {
            unfinished_ops: total * u64::from(self.calls) - self.done_ops,
            stuck_ranks,
            stuck,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::{allreduce, alltoall};
    use crate::model::{parse_model, parse_noise, ModelSpec};
    use crate::schedule::{
        Combine, Dtype, Meta, Op, OpKind, Payload, Program, ReduceOp, ScheduleBuilder, ANY_SOURCE,
        ANY_TAG,
    };

    /// Runs `s` with and without deferred receives; asserts equal results (traces included
    /// when `opts` asks for one) and returns the events handled each way.
    fn both(s: &Schedule, model: &ModelSpec, opts: &SimOptions, what: &str) -> (u64, u64) {
        fn go<M: CostModel>(
            s: &Schedule,
            m: &M,
            opts: &SimOptions,
            defer: bool,
        ) -> (Result<SimResult, SimError>, u64) {
            let mut events = 0;
            let r = run_with(s, m, opts, defer, &mut events).map(|(r, _)| r);
            (r, events)
        }
        let ((a, ea), (b, eb)) = match model {
            ModelSpec::Postal(m) | ModelSpec::Pipelined(m) => {
                (go(s, m, opts, false), go(s, m, opts, true))
            }
            ModelSpec::LogGops(m) => (go(s, m, opts, false), go(s, m, opts, true)),
        };
        assert_eq!(a, b, "{what}");
        (ea, eb)
    }

    pub(super) const MODELS: [&str; 6] = [
        "loggops:L=3000,o=1500,g=1000,G=6,order=gcc",
        "loggops:L=3us,o=1.5us,g=1us,G=6ns,S=16,gamma=0.5ns,delta=200ns",
        "loggops:L=0,o=0,g=0,G=0",
        "loggops:L=100ns,o=2us,g=3us,G=0.1ns,O=1ns",
        "postal:alpha=1us,beta=1ns,gamma=1ns",
        "pipelined:alpha_r=300ns,alpha_p=700ns,beta=1ns",
    ];

    /// Every allreduce (7 B of int64 sums) and alltoall (3 B of float64 a pair) the engine
    /// tests run on `n` ranks, by name: ten schedules.
    pub(super) fn collective_schedules(n: u32) -> Vec<(&'static str, Schedule)> {
        let mut schedules = Vec::new();
        for alg in [
            "ring_rotate",
            "ring",
            "tree",
            "recursive_doubling",
            "rabenseifner",
            "elimination",
            "mpich_recursive_multiplying:k=3",
        ] {
            let a = allreduce::Algorithm::parse(alg).unwrap();
            let spec = allreduce::AllreduceSpec::new(n, 7, Dtype::Int64, ReduceOp::Sum);
            schedules.push((alg, allreduce::generate(&a, &spec).unwrap()));
        }
        for alg in ["linear", "pairwise", "bruck"] {
            let a = alltoall::Algorithm::parse(alg).unwrap();
            let spec = alltoall::AlltoallSpec::new(n, 3, Dtype::Float64);
            schedules.push((alg, alltoall::generate(&a, &spec).unwrap()));
        }
        schedules
    }

    #[test]
    fn deferred_receives_change_nothing_in_the_collectives() {
        let mut saved = 0;
        for model in MODELS.map(|m| parse_model(m).unwrap()) {
            for n in [1, 2, 5, 8, 13, 64] {
                for (alg, s) in &collective_schedules(n) {
                    for opts in [
                        SimOptions {
                            trace: true,
                            ..SimOptions::default()
                        },
                        SimOptions {
                            noise: Some(parse_noise("exp:mean=1us").unwrap()),
                            seed: 7,
                            calls: 3,
                            ..SimOptions::default()
                        },
                    ] {
                        let (ea, eb) = both(s, &model, &opts, &format!("{alg} on {n} ranks"));
                        assert!(eb <= ea, "{alg} on {n} ranks: {eb} events > {ea}");
                        saved += ea - eb;
                    }
                }
            }
        }
        // Receives were deferred, and most then took no event of their own.
        assert!(saved > 20_000, "{saved} events saved");
    }

    #[test]
    fn recursive_doubling_takes_two_events_a_step_and_rank() {
        let a = allreduce::Algorithm::parse("recursive_doubling").unwrap();
        let spec = allreduce::AllreduceSpec::new(1024, 1, Dtype::Int64, ReduceOp::Sum);
        let s = allreduce::generate(&a, &spec).unwrap();
        let model = parse_model("loggops:L=3000,o=1500,g=1000,G=6,order=gcc").unwrap();
        // 10 steps of a send, a receive and a message on 1024 ranks; the receives' events go.
        assert_eq!(
            both(&s, &model, &SimOptions::default(), "recursive doubling"),
            (3 * 10 * 1024, 2 * 10 * 1024)
        );
    }

    /// Random programs on `n` ranks: messages (a send and its receive, with a wildcard now
    /// and then, tags repeated, sizes on both sides of an eager limit), local work and sleeps,
    /// on two CPUs, each op with `requires` and `irequires` dependencies on earlier ops of its
    /// rank. Ops are made in one global order and depend only on earlier ones, so most
    /// schedules complete; wildcards make some deadlock or leave messages unreceived.
    pub(super) fn random_schedule(seed: u64, n: u32) -> Schedule {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut rnd = move |k: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % k
        };
        let mut programs: Vec<Program> = (0..n).map(|_| Program::new()).collect();
        let add = |p: &mut Program, mut op: Op, cpu: u16, rnd: &mut dyn FnMut(u64) -> u64| {
            op.cpu = cpu;
            let id = p.push(op);
            for _ in 0..rnd(3) {
                if id > 0 {
                    let on = rnd(id as u64) as u32;
                    if rnd(3) == 0 {
                        p.irequires(id, on);
                    } else {
                        p.requires(id, on);
                    }
                }
            }
        };
        for _ in 0..4 * n {
            let src = rnd(n as u64) as u32;
            let cpu = rnd(2) as u16;
            match rnd(8) {
                0 => {
                    let op = Op::new(OpKind::Compute {
                        time: rnd(3) * 500_000,
                    });
                    add(&mut programs[src as usize], op, cpu, &mut rnd);
                }
                1 => {
                    let op = Op::new(OpKind::Sleep {
                        time: rnd(3) * 700_000,
                    });
                    add(&mut programs[src as usize], op, cpu, &mut rnd);
                }
                _ => {
                    let dst = (src + 1 + rnd(n as u64 - 1) as u32) % n;
                    let tag = rnd(3) as i32;
                    let bytes = [8, 64, 4096][rnd(3) as usize];
                    let send = Op::new(OpKind::Send {
                        peer: dst,
                        tag,
                        data: Payload::Bytes(bytes),
                    });
                    add(&mut programs[src as usize], send, cpu, &mut rnd);
                    let recv = Op::new(OpKind::Recv {
                        peer: if rnd(10) == 0 { ANY_SOURCE } else { src },
                        tag: if rnd(10) == 0 { ANY_TAG } else { tag },
                        data: Payload::Bytes(bytes),
                        combine: if rnd(2) == 0 {
                            Combine::Assign
                        } else {
                            Combine::After
                        },
                        operand: None,
                    });
                    let cpu = rnd(2) as u16;
                    add(&mut programs[dst as usize], recv, cpu, &mut rnd);
                }
            }
        }
        let mut b = ScheduleBuilder::new(n as u64, Meta::sizes_only("random")).unwrap();
        for p in &mut programs {
            b.push(p).unwrap();
        }
        b.finish().unwrap()
    }

    #[test]
    fn deferred_receives_change_nothing_in_random_schedules() {
        let (mut ok, mut failed, mut saved) = (0, 0, 0);
        for seed in 0..300 {
            let s = random_schedule(seed, 2 + seed as u32 % 7);
            for model in MODELS.map(|m| parse_model(m).unwrap()) {
                for opts in [
                    SimOptions {
                        trace: true,
                        ..SimOptions::default()
                    },
                    SimOptions {
                        noise: Some(parse_noise("uniform:min=0,max=2us").unwrap()),
                        seed,
                        calls: 2,
                        ..SimOptions::default()
                    },
                ] {
                    let (ea, eb) = both(&s, &model, &opts, &format!("seed {seed}"));
                    saved += ea - eb;
                    match simulate_with_model(&s, &model, &opts) {
                        Ok(_) => ok += 1,
                        Err(_) => failed += 1,
                    }
                }
            }
        }
        // Both outcomes, and deferrals, were exercised.
        assert!(
            ok > 300 && failed > 300 && saved > 1000,
            "{ok} {failed} {saved}"
        );
    }

    fn simulate_with_model(
        s: &Schedule,
        model: &ModelSpec,
        opts: &SimOptions,
    ) -> Result<SimResult, SimError> {
        crate::sim::simulate(s, model, opts)
    }
}
