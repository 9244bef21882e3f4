//! The engine on several threads: lanes of consecutive ranks, run in windows of simulated
//! time, with exactly the events, stamps and results of one thread.
//!
//! # Why the results are the same
//! One thread handles events in `(time, stamp)` order, a stamp being a global counter in
//! creation order (an event dated before the current time goes first: the queue's past heap).
//! Here each lane holds a run of consecutive ranks (their records, op states, matching queues
//! and model clocks) and handles the events of its ranks: an op's event on the op's rank, a
//! message's on its *receiver* (the only rank a message's arrival reads or writes, since every
//! send is eager: [`CostModel::lookahead`]; one thread queues it on the sender, which changes
//! nothing but where it waits). So each event reads and writes one lane's state alone, and
//! events of different lanes commute: a lane that handles its own events in one thread's order
//! does what one thread does to its ranks.
//!
//! Events cross lanes only as messages, and a message arrives at least the model's lookahead
//! `W` after the event that sends it. So the run goes in *windows* `[T, T + W)`, `T` the
//! earliest of every lane's next event: within a window every lane handles the events it
//! holds dated before `T + W`, exactly as one thread would (its queue, past heap included,
//! works as one thread's), since no other lane can send it anything dated so early; a message
//! for another lane waits for the window's end (a barrier), where it is sent.
//!
//! # Stamps
//! One thread stamps new events in creation order, so in handling order of the events that
//! create them (their *blocks*: the events one event creates, with those of the events dated
//! before it that it leads to, handled right after it). A lane knows the order of its own
//! events, not how they interleave with the other lanes' until the window ends. So it gives its
//! new events provisional stamps, `PROV | window << K_BITS | k`, `k` counting its new events of
//! the window: they compare as their final stamps do with any other stamp the lane holds
//! (final stamps are of earlier windows, hence smaller; among the window's, creation order).
//! At the window's end every lane publishes its blocks (the creating event's time and stamp,
//! and its first `k`), and each lane merges them in one thread's handling order (a
//! provisional stamp of a block's event is resolved through its own, earlier, block): the final
//! stamp of new event `k` of a block is the counter one thread would have reached,
//! `base + ` the new events of every block before it `+ k − ` the block's first `k`. As a
//! function of `k` that is `k` plus a step function, one step per run of the lane's blocks
//! between two of another lane's: the window's *table*.
//!
//! Most new events are the lane's own: those handled within the window need no final stamp
//! (only their blocks' do, in the merge); those dated after the window wait in the queue, and
//! their stamps are made final through their window's table when the queue reaches their time
//! (its `fix` hook, before it orders that time's events) or at the window's end for those
//! already in its current batch. So are receives deferred in their rank's record
//! ([`Engine::settle`]), when next looked at. A table is kept while events of its window are
//! still provisional (a count per window). Messages for other lanes get theirs at the end.
//! The initial events (each rank's roots, stamped in rank order) form a first window whose
//! blocks are the lanes themselves, in order.
//!
//! # The last window
//! Each lane counts the sends of its ranks to other lanes' ranks (every send op is made once,
//! and its peer is known from the start). At a window's start the lanes publish what they have
//! left; once no lane has any, nothing one lane does can reach another, and each runs all its
//! remaining events in one last window with no end: no barrier, no blocks, its new events
//! keeping their provisional stamps (which order them as one thread's stamps would among the
//! lane's own events: creation order). The binomial tree sends across lanes only at the root
//! of its reduction and of its broadcast, so the lanes run most of the broadcast this way, each
//! at its own pace (the upper half's subtree starts a step later than the lower half's: in
//! common windows one lane waited for the other at every barrier). A message for another lane
//! in the last window (a send not counted) stops the run, as a message before a window's end
//! does.
//!
//! # When one thread runs it instead
//! A message dated before the window's end for another lane (sent by an op that LogGOPS starts
//! at its CPU's free time, in the past) stops the run, and the caller runs it again on one
//! thread. So does a run that ends with unfinished ops or unreceived messages, so that its
//! error is the one thread's, word for word; and a run whose windows are too small to pay for
//! their barriers (fewer than `min_events` events a window over [`CHECK_EVERY`] windows), which one
//! thread runs faster.

use super::{shape_infos, Engine, RankRec, SimOptions, SimResult, EXEC, MSG, OP_BITS, OP_MASK};
use crate::barrier::{Barrier, PoisonOnPanic};
use crate::model::CostModel;
use crate::schedule::{Rank, Schedule};
use crate::sim::pages::make_room;
use crate::sim::queue::Event;
use crate::units::Time;
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Mutex, RwLock};

/// A provisional stamp has this bit, its window (modulo [`SLOTS`]) in the bits above
/// [`K_BITS`], and the index of the event among its lane's new events of the window below.
pub(super) const PROV: u64 = 1 << 63;
const K_BITS: u32 = 43;
const K_MASK: u64 = (1 << K_BITS) - 1;
/// Windows whose provisional stamps can be told apart: a run in which events of a window are
/// still provisional this many windows later stops (one thread runs it).
const SLOTS: u64 = 1 << (63 - K_BITS);
/// "No event" in a lane's published next time.
const NONE: Time = Time::MAX;

/// Schedules of fewer ops run on one thread when the caller leaves the choice
/// ([`SimOptions::threads`] 0): below it two lanes gain little (the binomial tree on 2^16
/// ranks, 295 k ops, takes as long on two as on one; on 2^17, 590 k ops, 20 % less) and
/// starting them costs tens of microseconds.
pub const PARALLEL_OPS: u64 = 1 << 19;
/// The fewest events a window should hold on average, over [`CHECK_EVERY`] windows, for lanes to
/// run faster than one thread (below it a run stops and one thread runs it; see the module's
/// documentation). A window costs two or three barriers, a few microseconds; an event, tens of
/// nanoseconds.
pub(crate) const MIN_WINDOW_EVENTS: u64 = 2048;
const CHECK_EVERY: u64 = 64;

/// A block: the stamp of the event that created it, its time after the window's start (a
/// window is shorter than 2^32 ps), and its first new event (a lane makes fewer than 2^32 a
/// window). 16 bytes: a window of recursive doubling on 2^24 ranks holds 40 M of them.
#[derive(Clone, Copy, Debug)]
struct Block {
    stamp: u64,
    dt: u32,
    k: u32,
}

/// A finished window's table: the final stamp of its `k`-th new event is `add + k` for the
/// last step `(k_start, add)` with `k_start <= k`.
struct Table {
    steps: Vec<(u64, u64)>,
    /// Its events still provisional (in the queue or deferred).
    live: u64,
    /// The step of the last stamp made final one at a time (receives are settled in
    /// roughly the order they were deferred: the next is most often in it or the next).
    at: usize,
}

/// A lane's window buffers.
#[derive(Default)]
pub(super) struct Lane {
    /// The window's start and end: the lane handles the events dated before its end; other
    /// lanes' new events must not be.
    start: Time,
    end: Time,
    /// The window's number, and the new events the lane made in it so far.
    w: u64,
    made: u64,
    /// New events of the window dated at or after its end, in the queue or deferred:
    /// provisional until their table.
    live: u64,
    /// Tables of earlier windows with provisional events left: `tabs[i]` is window `first + i`.
    tabs: VecDeque<Table>,
    first: u64,
    /// The time and stamp of the event being handled (of the one that led to it, for an event
    /// dated before the current time), and whether its block is recorded yet (at its first new
    /// event: only blocks with events count).
    head: (Time, u64),
    open: bool,
    blocks: Vec<Block>,
    /// A message for another lane was dated before the window's end, or stamps ran out.
    abort: bool,
    /// New events leaving for each lane at the window's end (provisional stamps).
    out: Vec<Vec<Event>>,
    /// The lanes' first ranks, and the number of ranks (to find a rank's lane).
    bounds: Vec<Rank>,
    /// This lane.
    me: usize,
    /// Events handled in the last `CHECK_EVERY` windows, by all lanes (the same in every lane).
    seen: u64,
    /// Sends of this lane's ranks to another lane's not made yet.
    remote: u64,
    /// The last window: no lane has a send to another left, so every lane runs to its end on
    /// its own (its new events need no final stamps, and no blocks are recorded).
    free: bool,
}

impl Lane {
    /// The provisional stamp of the window's next new event (recording its block, if this is
    /// the block's first).
    #[inline(always)]
    fn next_stamp(&mut self) -> u64 {
        let k = self.made;
        if !self.open {
            self.open = true;
            make_room(&mut self.blocks);
            self.blocks.push(Block {
                stamp: self.head.1,
                dt: (self.head.0 - self.start) as u32,
                k: k as u32,
            });
        }
        self.made += 1;
        PROV | (self.w & (SLOTS - 1)) << K_BITS | k
    }

    /// The window a provisional stamp was given in.
    #[inline(always)]
    fn window_of(&self, ts: u64) -> u64 {
        let slot = (ts & !PROV) >> K_BITS;
        self.first + (slot.wrapping_sub(self.first) & (SLOTS - 1))
    }

    /// The final stamp of an earlier window's provisional one, which was live.
    #[inline]
    fn finalize(&mut self, ts: u64) -> u64 {
        let i = (self.window_of(ts) - self.first) as usize;
        let t = &mut self.tabs[i];
        t.live -= 1;
        let k = ts & K_MASK;
        let mut s = t.at;
        if t.steps[s].0 > k {
            s = step_index(&t.steps, k);
        } else {
            while t.steps.get(s + 1).is_some_and(|n| n.0 <= k) {
                s += 1;
                if s > t.at + 4 {
                    s = step_index(&t.steps, k);
                    break;
                }
            }
        }
        t.at = s;
        let f = t.steps[s].1 + k;
        if i == 0 && t.live == 0 {
            self.drop_done();
        }
        f
    }

    /// An earlier window's provisional stamp, which was live, that will not be needed.
    #[inline]
    fn forget(&mut self, ts: u64) {
        let i = (self.window_of(ts) - self.first) as usize;
        let t = &mut self.tabs[i];
        t.live -= 1;
        if i == 0 && t.live == 0 {
            self.drop_done();
        }
    }

    /// Makes the provisional stamps of earlier windows in a batch of events final (the
    /// queue's `fix` hook): runs of one window in increasing order, the common case, walk its
    /// table.
    fn fix(&mut self, batch: &mut [Event]) {
        let mut k = 0;
        while k < batch.len() {
            let ts = batch[k].ts;
            if ts & PROV == 0 {
                k += 1;
                continue;
            }
            let w = self.window_of(ts);
            if w == self.w {
                // The current window's: final at its end.
                k += 1;
                continue;
            }
            let i = (w - self.first) as usize;
            let slot = ts >> K_BITS;
            let t = &mut self.tabs[i];
            let mut s = step_index(&t.steps, ts & K_MASK);
            let start = k;
            while k < batch.len() && batch[k].ts >> K_BITS == slot {
                let kk = batch[k].ts & K_MASK;
                if kk < t.steps[s].0 || t.steps.get(s + 1).is_some_and(|n| n.0 <= kk) {
                    s = step_index(&t.steps, kk);
                }
                batch[k].ts = t.steps[s].1 + kk;
                k += 1;
            }
            t.live -= (k - start) as u64;
        }
        self.drop_done();
    }

    /// Drops the tables, oldest first, whose events are all final.
    #[inline]
    fn drop_done(&mut self) {
        while self.tabs.front().is_some_and(|t| t.live == 0) {
            self.tabs.pop_front();
            self.first += 1;
        }
    }
}

/// The index of the last step starting at or before `k` (there is one: the first starts at
/// or before every `k` asked).
#[inline]
fn step_index(steps: &[(u64, u64)], k: u64) -> usize {
    steps.partition_point(|s| s.0 <= k) - 1
}

#[inline]
fn stamp_of(steps: &[(u64, u64)], k: u64) -> u64 {
    steps[step_index(steps, k)].1 + k
}

/// Merges every lane's blocks of a window (`blocks[l]`, in lane `l`'s handling order; `kids[l]`
/// its new events) in one thread's handling order, and returns each lane's table steps (see
/// the module's documentation); `base` is the stamp counter before the window. A provisional
/// stamp in a block is of this window and resolved through its lane's steps (its creator's
/// block comes before it).
fn merge(blocks: &[&[Block]], kids: &[u64], base: u64) -> Vec<Vec<(u64, u64)>> {
    let n = blocks.len();
    let mut steps: Vec<Vec<(u64, u64)>> = vec![Vec::new(); n];
    let mut at = vec![0usize; n];
    let mut g = base;
    let key = |steps: &[(u64, u64)], b: &Block| -> (u32, u64) {
        let s = if b.stamp & PROV != 0 {
            stamp_of(steps, b.stamp & K_MASK)
        } else {
            b.stamp
        };
        (b.dt, s)
    };
    loop {
        // The lane whose next block comes first, and the next block of any other lane.
        let mut first: Option<(usize, (u32, u64))> = None;
        let mut limit: Option<(u32, u64)> = None;
        for l in 0..n {
            let Some(b) = blocks[l].get(at[l]) else {
                continue;
            };
            let k = key(&steps[l], b);
            match first {
                Some((_, f)) if f < k => limit = Some(limit.map_or(k, |x| x.min(k))),
                _ => {
                    if let Some((_, f)) = first {
                        limit = Some(limit.map_or(f, |x| x.min(f)));
                    }
                    first = Some((l, k));
                }
            }
        }
        let Some((l, _)) = first else { break };
        let bl = blocks[l];
        let start = bl[at[l]].k as u64;
        steps[l].push((start, g - start));
        // The run of its blocks before `limit`: all of them without one.
        let mut i = at[l] + 1;
        match limit {
            None => i = bl.len(),
            Some((lt, ls)) => {
                // Blocks dated before `lt`, then those at `lt` with a final stamp before `ls`
                // (in handling order these come before the provisional ones at `lt`), found
                // by galloping; then provisional ones at `lt`, one by one (each resolved
                // through blocks before it, of this run or earlier).
                i = gallop(bl, i, |b| b.dt < lt);
                i = gallop(bl, i, |b| b.dt == lt && b.stamp & PROV == 0 && b.stamp < ls);
                let st = &steps[l];
                let mut s = usize::MAX;
                while i < bl.len() && bl[i].dt == lt && bl[i].stamp & PROV != 0 {
                    // (The stamps grow along the run: so does their step.)
                    let k = bl[i].stamp & K_MASK;
                    if s == usize::MAX {
                        s = step_index(st, k);
                    }
                    while s + 1 < st.len() && st[s + 1].0 <= k {
                        s += 1;
                    }
                    if st[s].1 + k >= ls {
                        break;
                    }
                    i += 1;
                }
            }
        }
        at[l] = i;
        let end = bl.get(i).map_or(kids[l], |b| b.k as u64);
        g += end - start;
    }
    steps
}

/// The first index from `i` on where `pred` fails (it holds on a prefix of `v[i..]`).
#[inline]
fn gallop(v: &[Block], i: usize, pred: impl Fn(&Block) -> bool) -> usize {
    if i >= v.len() || !pred(&v[i]) {
        return i;
    }
    // pred(v[lo]) holds.
    let (mut lo, mut step) = (i, 1);
    while lo + step < v.len() && pred(&v[lo + step]) {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(v.len());
    lo + 1 + v[lo + 1..hi].partition_point(&pred)
}

/// What the lanes share.
struct Shared {
    lanes: usize,
    barrier: Barrier,
    /// Each lane's next event time (`NONE`: no event).
    next: Vec<AtomicU64>,
    /// Each lane's events handled in the window.
    handled: Vec<AtomicU64>,
    /// Each lane's sends to other lanes left, as of the window's start.
    remote: Vec<AtomicU64>,
    abort: AtomicBool,
    /// Each lane's blocks and number of new events in the window, published at its end.
    blocks: Vec<RwLock<(Vec<Block>, u64)>>,
    /// `mail[from · lanes + to]`: events one lane made for another.
    mail: Vec<Mutex<Vec<Event>>>,
}

/// What a run on lanes did (the same whatever their number, but for the windows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LaneStats {
    /// The events handled (one thread's).
    pub events: u64,
    /// The windows run, the initial one not counted.
    pub windows: u64,
    /// The events handled in the last window if it ran free (no lane had a send to another
    /// left, so each ran its events to the end without barriers), else 0.
    pub free_events: u64,
}

/// A lane's totals at the end of the run.
struct LaneEnd {
    windows: u64,
    free_events: u64,
    done_ops: u64,
    messages: u64,
    events: u64,
    unreceived: u64,
    /// The latest finish time of its ranks (written into the result's column).
    completion: Time,
}

/// Why a run is left to one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OneThread {
    /// Fewer than two threads or ranks per thread, a trace, repeated calls, a send that may
    /// wait for its receive or a model without lookahead, a model that announces arrivals,
    /// or a schedule the engine refuses.
    Unsplittable,
    /// A message for another lane was dated before the window's end, windows were too small
    /// (`min_events`), or provisional stamps ran out.
    Stopped,
    /// Ops unfinished or messages unreceived: one thread says which.
    Unfinished,
}

/// Runs `s` on `threads` lanes when the run allows (see the module's documentation), stopping
/// when its windows hold fewer than `min_events` events on average. `stats` gets the events
/// handled, the windows run, and whether the last ran free (see [`LaneStats`]).
pub(crate) fn run<M>(
    s: &Schedule,
    model: &M,
    opts: &SimOptions,
    threads: usize,
    min_events: u64,
    stats: &mut LaneStats,
) -> Result<SimResult, OneThread>
where
    M: CostModel + Sync,
    M::State: Send,
{
    use OneThread::*;
    let nranks = s.nranks();
    if threads < 2 || M::ANNOUNCES || opts.trace || opts.calls > 1 || (nranks as usize) < threads {
        return Err(Unsplittable);
    }
    // (A run refused for its memory is refused by one thread, with the error.)
    super::check_memory(s, opts).map_err(|_| Unsplittable)?;
    let (info, ncpus, nnics) = shape_infos(s, model).map_err(|_| Unsplittable)?;
    // The lookahead: the least of every send's.
    let mut lookahead = Time::MAX;
    for sh in &info {
        for o in sh.ops.iter().filter(|o| o.kind == super::K_SEND) {
            lookahead = lookahead.min(model.lookahead(o.bytes).ok_or(Unsplittable)?);
        }
    }
    if lookahead == 0 {
        return Err(Unsplittable);
    }
    // (A block's time within its window has 32 bits.)
    let lookahead = lookahead.min(u32::MAX as Time);
    // Lanes of consecutive ranks with about as many ops each.
    let total = s.total_ops();
    let mut bounds = vec![0 as Rank];
    for k in 1..threads as u64 {
        let want = total * k / threads as u64;
        let (mut lo, mut hi) = (*bounds.last().unwrap(), nranks);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if s.op_offset(mid) < want {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let prev = *bounds.last().unwrap();
        let last = nranks - (threads as Rank - k as Rank);
        let b = lo.max(prev + 1).min(last);
        bounds.push(aligned(s, b, prev, last, want, total / threads as u64 / 64));
    }
    bounds.push(nranks);
    let sh = Shared {
        lanes: threads,
        barrier: Barrier::new(threads),
        next: (0..threads).map(|_| AtomicU64::new(NONE)).collect(),
        handled: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        remote: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        abort: AtomicBool::new(false),
        blocks: (0..threads).map(|_| RwLock::new((Vec::new(), 0))).collect(),
        mail: (0..threads * threads)
            .map(|_| Mutex::new(Vec::new()))
            .collect(),
    };
    // The result's finish times, written by each lane into its ranks' part (memory first
    // touched by the lanes, side by side, and not copied after).
    let mut rank_finish: Vec<Time> = crate::hint::roomy_zeros(nranks as usize);
    let mut parts = Vec::with_capacity(threads);
    let mut rest = &mut rank_finish[..];
    for me in 0..threads {
        let (part, tail) = rest.split_at_mut((bounds[me + 1] - bounds[me]) as usize);
        parts.push(part);
        rest = tail;
    }
    let ends: Vec<Option<LaneEnd>> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .zip(parts)
            .map(|(me, part)| {
                let (sh, info, bounds) = (&sh, &info, &bounds);
                std::thread::Builder::new()
                    .name(format!("sim lane {me}"))
                    .spawn_scoped(sc, move || {
                        let _guard = PoisonOnPanic(&sh.barrier);
                        let mut e = Engine::<M, true>::new(
                            s,
                            model,
                            opts,
                            info,
                            (ncpus, nnics),
                            bounds[me]..bounds[me + 1],
                            true,
                        );
                        e.lane.bounds.clone_from(bounds);
                        e.lane.me = me;
                        e.lane.out = (0..threads).map(|_| Vec::new()).collect();
                        e.run_lane(sh, me, lookahead, min_events, part)
                    })
                    .expect("a simulation lane's thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let ends: Vec<LaneEnd> = ends.into_iter().collect::<Option<_>>().ok_or(Stopped)?;
    let done: u64 = ends.iter().map(|e| e.done_ops).sum();
    let unreceived: u64 = ends.iter().map(|e| e.unreceived).sum();
    if done < total || unreceived > 0 {
        return Err(Unfinished);
    }
    stats.events += ends.iter().map(|e| e.events).sum::<u64>();
    stats.windows = ends[0].windows;
    stats.free_events = ends.iter().map(|e| e.free_events).sum();
    let messages = ends.iter().map(|e| e.messages).sum();
    let completion = ends.iter().map(|e| e.completion).max().unwrap_or(0);
    if completion == Time::MAX {
        return Err(Unfinished);
    }
    Ok(SimResult {
        completion,
        rank_finish,
        ops: done,
        messages,
        trace: None,
    })
}

/// The bound `b` of a lane (its first rank, in `prev + 1..=last`, `want` ops before it) moved
/// to a rank next to it divisible by the largest power of two whose ops before it are within
/// `slack` of `want` (the one below first). Collectives align their subtrees and hypercube halves so: a lane holding
/// whole subtrees of the binomial tree sends to another only at their roots, and once those
/// sends are made it runs the rest free ([`LaneStats::free_events`]), where a bound a few ranks
/// off the subtrees' makes lanes send to each other at every level, to the end (on 2^17 ranks
/// and 8 lanes the ops-balanced bounds left 19 events of 720,874 to the last window, against
/// 55 % on 2 and 4 lanes).
fn aligned(s: &Schedule, b: Rank, prev: Rank, last: Rank, want: u64, slack: u64) -> Rank {
    for shift in (1..Rank::BITS).rev() {
        let step: Rank = 1 << shift;
        let below = b / step * step;
        for c in [below, below.saturating_add(step)] {
            if c > prev && c <= last && s.op_offset(c).abs_diff(want) <= slack {
                return c;
            }
        }
    }
    b
}

/// What a lane's events do to new events (the engine calls them only as a lane).
impl<M: CostModel, const P: bool> Engine<'_, M, P> {
    /// Whether this lane holds `rank`.
    #[inline]
    fn holds(&self, rank: Rank) -> bool {
        rank >= self.lo && ((rank - self.lo) as usize) < self.ranks.len()
    }

    /// The lane holding `rank`.
    #[inline]
    fn lane_of(&self, rank: Rank) -> usize {
        self.lane.bounds.partition_point(|&b| b <= rank) - 1
    }

    /// A new event of the window, with its provisional stamp.
    #[inline(always)]
    pub(super) fn lane_new(&mut self, time: Time, rank: Rank, what: u32) {
        let ts = self.lane.next_stamp();
        let e = Event {
            time,
            ts,
            rank,
            what,
        };
        // A message is its receiver's.
        if what >> OP_BITS == MSG {
            let dst = self.peer(rank, what & OP_MASK);
            if !self.holds(dst) {
                if time < self.lane.end || self.lane.remote == 0 {
                    // Another lane may have handled later events already (or a send was
                    // not counted: then lanes may have run on their own).
                    self.lane.abort = true;
                } else {
                    self.lane.remote -= 1;
                    let to = self.lane_of(dst);
                    let out = &mut self.lane.out[to];
                    make_room(out);
                    out.push(e);
                }
                return;
            }
        }
        self.lane_push(e);
    }

    /// A receive of `rank` deferred now: its provisional stamp.
    #[inline]
    pub(super) fn lane_defer(&mut self) -> u64 {
        self.lane.live += 1;
        self.lane.next_stamp()
    }

    /// The stamp of a deferred receive taken from its record, due at `time`: final if its
    /// window has ended (it is no longer counted as provisional, whatever becomes of it). Due
    /// before the current time, it has passed whatever its stamp (0 then stands for it: the
    /// common case, a receive posted before its message arrives, looks nothing up).
    #[inline(always)]
    pub(super) fn lane_settled(&mut self, ts: u64, time: Time) -> u64 {
        if ts & PROV == 0 {
            ts
        } else if self.lane.window_of(ts) == self.lane.w {
            self.lane.live -= 1;
            ts
        } else if time < self.q.now() {
            self.lane.forget(ts);
            0
        } else {
            self.lane.finalize(ts)
        }
    }

    /// Queues an event of this lane (new, retried, or a deferred receive's), keeping its
    /// stamp; one with a provisional stamp (of the current window) dated at or after the
    /// window's end stays provisional until the queue reaches it.
    #[inline]
    pub(super) fn lane_push(&mut self, e: Event) {
        if e.ts & PROV != 0 && e.time >= self.lane.end {
            self.lane.live += 1;
        }
        self.q.push(e);
    }
}

impl<M: CostModel> Engine<'_, M, true> {
    /// The sends of this lane's ranks (up to `hi`) to ranks of other lanes: once no lane has
    /// any left, the lanes can no longer affect each other.
    fn remote_sends(&self, hi: Rank) -> u64 {
        let mut n = 0;
        for r in self.lo..hi {
            let ops = &self.info[self.shape_of(r)].ops;
            for (i, o) in ops.iter().enumerate() {
                if o.kind == super::K_SEND && !self.holds(self.peer(r, i as u32)) {
                    n += 1;
                }
            }
        }
        n
    }

    /// Runs this lane to the end (`None` if the run stopped: see the module's documentation).
    fn run_lane(
        &mut self,
        sh: &Shared,
        me: usize,
        lookahead: Time,
        min_events: u64,
        rank_finish: &mut [Time],
    ) -> Option<LaneEnd> {
        let hi = self.lo + self.ranks.len() as Rank;
        // The initial window: its blocks are the lanes (every event it creates is dated at
        // or after its end, 0).
        self.lane.head = (0, me as u64);
        self.lane.remote = self.remote_sends(hi);
        self.q.reserve_now(self.roots_of(self.lo, hi));
        for r in self.lo..hi {
            let si = self.shape_of(r);
            for k in 0..self.info[si].roots.len() {
                let op = self.info[si].roots[k];
                let class = self.info[si].ops[op as usize].class();
                self.freed.push(super::Freed {
                    rank: r,
                    op,
                    class,
                    tail: false,
                });
            }
            self.flush(0);
        }
        let mut base = 0u64;
        if self.exchange(sh, me, &mut base, 0) {
            return None;
        }
        let mut windows = 0u64;
        let mut free_events = 0;
        loop {
            // (Without moving to it: the queue's current time stays before the window's end,
            // so that what other lanes send goes to its buckets, and what it has at or after
            // the end is still there, to be made final when the queue reaches it.)
            let next = self.q.peek_time();
            sh.next[me].store(next.unwrap_or(NONE), Relaxed);
            sh.remote[me].store(self.lane.remote, Relaxed);
            sh.barrier.wait();
            let t = sh
                .next
                .iter()
                .map(|t| t.load(Relaxed))
                .min()
                .unwrap_or(NONE);
            if t == NONE {
                break;
            }
            // (Every lane reads the same: a lane stores again only after the exchange's
            // barriers, or, once all are 0, stores 0.)
            self.lane.free = sh.remote.iter().all(|r| r.load(Relaxed) == 0);
            let end = if self.lane.free {
                self.lane.open = true;
                NONE
            } else {
                t.saturating_add(lookahead)
            };
            (self.lane.start, self.lane.end) = (t, end);
            windows += 1;
            let before = self.events;
            loop {
                let lane = &mut self.lane;
                if self.q.next_time_before(end, |b| lane.fix(b)).is_none() {
                    break;
                }
                let Some(e) = self.q.pop() else { break };
                if e.time == self.q.now() {
                    // Not dated before the current time: a block's head (none recorded in
                    // the last window).
                    self.lane.head = (e.time, e.ts);
                    self.lane.open = self.lane.free;
                }
                self.events += 1;
                if self.events.is_multiple_of(crate::cancel::EVERY) && crate::cancel::requested() {
                    // Every lane sees the flag: they stop together, and the run with them.
                    self.lane.abort = true;
                    self.q.push(e);
                    break;
                }
                self.prefetch_ahead();
                match e.what >> OP_BITS {
                    EXEC => self.exec(e),
                    MSG => self.arrive(e),
                    super::FINISH => self.finish_op(e),
                    _ => self.tail(e),
                }
                self.flush(e.time);
            }
            if self.lane.free {
                free_events = self.events - before;
                // Every lane has handled all its events: whether one stopped is all they
                // have to agree on.
                if self.lane.abort || self.lane.made > K_MASK {
                    sh.abort.store(true, Relaxed);
                }
                sh.barrier.wait();
                if sh.abort.load(Relaxed) {
                    return None;
                }
                break;
            }
            if self.exchange(sh, me, &mut base, self.events - before) {
                return None;
            }
            if windows.is_multiple_of(CHECK_EVERY) {
                // (`seen` is the same in every lane: they stop together.)
                if self.lane.seen < CHECK_EVERY * min_events {
                    return None;
                }
                self.lane.seen = 0;
            }
        }
        let mut completion = 0;
        for (r, f) in (self.lo..hi).zip(rank_finish.iter_mut()) {
            let rec: &RankRec = self.rec(r);
            *f = self.m.rank_finish(&self.st, r - self.lo, rec.last_done);
            completion = completion.max(*f);
        }
        Some(LaneEnd {
            done_ops: self.done_ops,
            messages: self.messages,
            events: self.events,
            windows,
            free_events,
            unreceived: self.mq.live(),
            completion,
        })
    }

    /// The window's end: its table is made from every lane's blocks, the lane's new events for
    /// other lanes get their final stamps and go there, and so do its own in the queue's
    /// current batch; `base` is the stamp counter, the same in every lane; `handled` the
    /// events this lane handled in the window. Returns whether a lane stopped the run (every
    /// lane returns the same: the flag is set before the exchange's first barrier and read
    /// before its second).
    fn exchange(&mut self, sh: &Shared, me: usize, base: &mut u64, handled: u64) -> bool {
        let made = self.lane.made;
        if made > u32::MAX as u64 || self.lane.w - self.lane.first >= SLOTS - 1 {
            self.lane.abort = true;
        }
        {
            // (Lent to the others until the second barrier.)
            let mut w = sh.blocks[me].write().expect("blocks");
            w.0 = std::mem::take(&mut self.lane.blocks);
            w.1 = made;
        }
        if self.lane.abort {
            sh.abort.store(true, Relaxed);
        }
        sh.handled[me].store(handled, Relaxed);
        sh.barrier.wait();
        if sh.abort.load(Relaxed) {
            // (Read by every lane before the second barrier; nothing writes it after.)
            sh.barrier.wait();
            return true;
        }
        let (steps, all) = {
            let guards: Vec<_> = sh
                .blocks
                .iter()
                .map(|b| b.read().expect("blocks"))
                .collect();
            let blocks: Vec<&[Block]> = guards.iter().map(|g| &g.0[..]).collect();
            let kids: Vec<u64> = guards.iter().map(|g| g.1).collect();
            let mut steps = merge(&blocks, &kids, *base);
            (steps.swap_remove(me), kids.iter().sum::<u64>())
        };
        self.lane.seen += sh.handled.iter().map(|t| t.load(Relaxed)).sum::<u64>();
        for to in 0..sh.lanes {
            for e in &mut self.lane.out[to] {
                e.ts = stamp_of(&steps, e.ts & K_MASK);
            }
            if to != me && !self.lane.out[to].is_empty() {
                let mut m = sh.mail[me * sh.lanes + to].lock().expect("mail");
                std::mem::swap(&mut *m, &mut self.lane.out[to]);
            }
        }
        if self.lane.tabs.is_empty() {
            self.lane.first = self.lane.w;
        }
        self.lane.tabs.push_back(Table {
            steps,
            live: self.lane.live,
            at: 0,
        });
        self.lane.w += 1;
        self.lane.made = 0;
        self.lane.live = 0;
        // The window's events in the queue's current batch (only the initial window leaves
        // any: its events at time 0): final now.
        let lane = &mut self.lane;
        self.q.fix_now(|b| lane.fix(b));
        self.lane.drop_done();
        sh.barrier.wait();
        self.lane.blocks = std::mem::take(&mut sh.blocks[me].write().expect("blocks").0);
        self.lane.blocks.clear();
        for from in 0..sh.lanes {
            if from != me {
                // (Freed once queued: a schedule that sends much across lanes in one window,
                // recursive doubling's last step, would otherwise keep that much twice.)
                let mut m =
                    std::mem::take(&mut *sh.mail[from * sh.lanes + me].lock().expect("mail"));
                self.q.push_all(&mut m);
            }
        }
        *base += all;
        false
    }
}

#[cfg(test)]
mod tests;
