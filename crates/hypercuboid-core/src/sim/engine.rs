//! The discrete-event engine: dependencies, matching and the event loop (see [`super`]).

mod lanes;
mod ops;
mod release;
mod report;
mod wait;

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
    Activity, Attempt, CostModel, LocalRun, Message, NoiseSpec, Notice, OpSite, SendCompletion,
    TieOrder,
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
    /// Local ops waiting for a busy CPU, by rank and CPU ([`wait`]).
    waits: FxHashMap<u64, wait::Waiters>,
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
    check_memory(s, opts)?;
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

/// Bytes the engine allocates per rank: its record, its clocks in the model, its root events.
pub const SIM_BYTES_PER_RANK: u64 = 96;
/// Bytes the engine allocates per op: its state.
pub const SIM_BYTES_PER_OP: u64 = 1;
/// Bytes the engine allocates per op of each distinct program shape ([`OpInfo`], its
/// dependents).
pub const SIM_BYTES_PER_SHAPE_OP: u64 = 56;
/// Bytes a trace holds per op (start, end, message row, and the op's columns).
pub const SIM_TRACE_BYTES_PER_OP: u64 = 32;

/// Refuses a run of `s` whose memory estimate exceeds the limit ([`crate::resources::check`]).
fn check_memory(s: &Schedule, opts: &SimOptions) -> Result<(), SimError> {
    let ops = s.total_ops();
    let shape_ops: u64 = s.shapes().iter().map(|sh| sh.len() as u64).sum();
    let per_op = SIM_BYTES_PER_OP
        + if opts.trace {
            SIM_TRACE_BYTES_PER_OP
        } else {
            0
        };
    let estimate = (s.nranks() as u64)
        .saturating_mul(SIM_BYTES_PER_RANK)
        .saturating_add(ops.saturating_mul(per_op))
        .saturating_add(shape_ops.saturating_mul(SIM_BYTES_PER_SHAPE_OP));
    crate::resources::check(
        || format!("simulating {ops} ops on {} ranks", s.nranks()),
        estimate,
        "simulate fewer ranks",
    )?;
    Ok(())
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
            state: crate::hint::roomy_zeros(held),
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
            waits: FxHashMap::default(),
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
    /// A schedule of one shape (recursive doubling) reads no memory for it: a message's
    /// arrival then touches nothing of its sender.
    #[inline]
    fn shape_of(&self, rank: Rank) -> usize {
        if self.info.len() == 1 {
            0
        } else if P {
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
            if self.events.is_multiple_of(crate::cancel::EVERY) && crate::cancel::requested() {
                self.stop(SimError::Interrupted);
                break;
            }
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
            } else if self.info.len() == 1 {
                // (One shape: the receiver is known without the sender's record.)
                self.prefetch_rank(self.peer(f.rank, f.what & OP_MASK));
            } else if !P {
                // (A lane may not hold a message's sender.)
                let r = self.rec(f.rank);
                super::prefetch(r);
                super::prefetch(r.ends.last_word());
            }
        }
        if let Some(f) = self.q.ahead(MID) {
            if f.what >> OP_BITS == MSG && self.info.len() > 1 {
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

    /// Ends the run with `err`: every event is dropped.
    #[cold]
    fn stop(&mut self, err: SimError) {
        self.failed = Some(err);
        while self.q.pop().is_some() {}
    }

    /// Asks the model what happened up to `until` and queues it; true when it queued
    /// something. A model error ends the run.
    fn take_notices(&mut self, until: Option<Time>) -> bool {
        if self.failed.is_some() {
            return false;
        }
        if let Err(err) = self.m.advance(&mut self.st, until, &mut self.notices) {
            self.stop(match err {
                crate::network::NetworkError::Interrupted => SimError::Interrupted,
                err => SimError::Network(Box::new(err)),
            });
            self.notices.clear();
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
}

#[cfg(test)]
mod tests;
