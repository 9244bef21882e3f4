//! The event queue: a radix heap on time with ties broken by insertion stamp.
//!
//! Events come out in `(time, ts)` order, `ts` being a stamp the engine gives each new event
//! (a re-queued event keeps its stamp, as in LogGOPSim). Simulated time almost always moves
//! forward, so a radix heap (buckets by the highest bit in which an event's time differs from
//! the last time popped) gives amortised O(1) work per event with 24-byte entries. Events at
//! the current time are kept sorted by stamp. The rare event dated before the current time
//! (LogGOPS queues ops at their CPU's free time, which may be past) goes to a small binary heap
//! that is always served first, so the queue is a correct priority queue for any input.

use super::pages::make_room;

const SPARES: usize = 8;
use crate::units::Time;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// A queued event. `what` carries the engine's payload (op index and kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub time: Time,
    pub ts: u64,
    pub rank: u32,
    pub what: u32,
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.time, self.ts).cmp(&(other.time, other.ts))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    /// Time of the last event popped from the radix part.
    last: Time,
    /// Largest stamp popped at time `last` (0 before any): with `last`, the largest
    /// `(time, ts)` popped outside the past heap ([`EventQueue::passed`]).
    top_ts: u64,
    /// Events at time `last`, sorted by `ts`, consumed from `head`.
    now: Vec<Event>,
    head: usize,
    /// `buckets[b]` (b in 1..=64): events whose time differs from `last` first in bit `b − 1`.
    buckets: Vec<Vec<Event>>,
    /// Bit `b − 1` set when `buckets[b]` is not empty.
    mask: u64,
    /// Events dated before `last`.
    past: BinaryHeap<Reverse<Event>>,
    len: usize,
    scratch: Vec<Event>,
    /// Emptied bucket vectors kept for reuse (at most two), so that a queue whose events move
    /// through many buckets over time holds only a few large allocations.
    spare: Vec<Vec<Event>>,
}

impl EventQueue {
    pub(super) fn new() -> EventQueue {
        EventQueue {
            buckets: (0..65).map(|_| Vec::new()).collect(),
            ..Default::default()
        }
    }

    /// Number of queued events.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Queues `e`: an event after the current time inline (the common case), the rest out of
    /// line.
    #[inline(always)]
    pub(super) fn push(&mut self, e: Event) {
        if e.time > self.last {
            self.len += 1;
            let b = 64 - (e.time ^ self.last).leading_zeros() as usize;
            self.push_bucket(b, e);
        } else if e.time == self.last
            && self.head < self.now.len()
            && self.now.len() < self.now.capacity()
            && self.now.last().is_some_and(|back| back.ts < e.ts)
        {
            // At the current time, after every event queued at it (a new event's stamp is the
            // largest yet), with room: appended (under the postal model every op freed is
            // ready at once, so this is one push per op).
            self.len += 1;
            self.now.push(e);
        } else {
            self.push_now_or_past(e);
        }
    }

    #[inline(never)]
    fn push_now_or_past(&mut self, e: Event) {
        self.len += 1;
        if e.time == self.last {
            if self.head == self.now.len() {
                self.now.clear();
                self.head = 0;
            } else if self.now.len() == self.now.capacity() && self.head >= self.now.len() / 2 {
                // Full, and at least half of it taken: what is left moves to the front rather
                // than the buffer growing (a model without costs puts a whole run at time 0,
                // and the taken events would otherwise stay until the time moves).
                self.now.drain(..self.head);
                self.head = 0;
            }
            make_room(&mut self.now);
            match self.now.last() {
                Some(back) if back.ts > e.ts => {
                    let i = self.head + self.now[self.head..].partition_point(|x| x.ts < e.ts);
                    self.now.insert(i, e);
                }
                _ => self.now.push(e),
            }
        } else {
            self.past.push(Reverse(e));
        }
    }

    #[inline]
    fn push_bucket(&mut self, b: usize, e: Event) {
        let v = &mut self.buckets[b];
        if v.capacity() == 0 {
            if let Some(spare) = self.spare.pop() {
                *v = spare;
            }
        }
        make_room(v);
        v.push(e);
        self.mask |= 1 << (b - 1);
    }

    /// The event `k` places after the next one to pop, when it is already known (among the
    /// events of the current time, with none dated before it): what the engine prefetches for.
    #[inline]
    pub(super) fn ahead(&self, k: usize) -> Option<&Event> {
        if !self.past.is_empty() {
            return None;
        }
        self.now.get(self.head + k)
    }

    /// The next event: the common case (nothing dated in the past, an event left at the
    /// current time) inline, the rest out of line.
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<Event> {
        if self.past.is_empty() && self.head < self.now.len() {
            return Some(self.take_now());
        }
        self.pop_slow()
    }

    /// Takes the next event of the current time (`head < now.len()`).
    #[inline(always)]
    fn take_now(&mut self) -> Event {
        let e = self.now[self.head];
        self.head += 1;
        self.len -= 1;
        self.top_ts = self.top_ts.max(e.ts);
        e
    }

    /// The time of the next event when the buckets need not be looked at: `Some(None)` when
    /// the queue is empty, `None` when the next event is in the buckets.
    #[inline(always)]
    fn at_hand(&self) -> Option<Option<Time>> {
        if let Some(Reverse(e)) = self.past.peek() {
            return Some(Some(e.time));
        }
        if self.head < self.now.len() {
            return Some(Some(self.last));
        }
        (self.mask == 0).then_some(None)
    }

    /// The time of the next event to pop, if any (an event dated before the current time
    /// first). When the current time's events are all taken, it moves to the next time first,
    /// as `pop` would, and calls `fix` on the events of that time before it orders them by
    /// stamp (a lane of a parallel run makes their provisional stamps final there).
    pub(super) fn next_time_with(&mut self, fix: impl FnMut(&mut [Event])) -> Option<Time> {
        if let Some(t) = self.at_hand() {
            return t;
        }
        self.refill_with(fix);
        self.top_ts = 0;
        Some(self.last)
    }

    /// The time of the next event if it is before `end`, moving to it as
    /// [`EventQueue::next_time_with`] does; `None`, without moving, if there is none before
    /// `end` (a lane of a parallel run stops at its window's end, and its queue's current time
    /// stays before it).
    pub(super) fn next_time_before(
        &mut self,
        end: Time,
        fix: impl FnMut(&mut [Event]),
    ) -> Option<Time> {
        let t = self.peek_time()?;
        if t >= end {
            return None;
        }
        self.next_time_with(fix)
    }

    /// The time of the next event, without moving to it (a scan of the earliest bucket when
    /// the current time's events are all taken).
    pub(super) fn peek_time(&self) -> Option<Time> {
        if let Some(t) = self.at_hand() {
            return t;
        }
        let b = self.mask.trailing_zeros() as usize + 1;
        self.buckets[b].iter().map(|e| e.time).min()
    }

    /// Calls `fix` on the events left at the current time, then orders them by stamp again (a
    /// lane of a parallel run makes their provisional stamps final there).
    pub(super) fn fix_now(&mut self, fix: impl FnOnce(&mut [Event])) {
        let rest = &mut self.now[self.head..];
        fix(rest);
        if !rest.is_sorted_by_key(|e| e.ts) {
            rest.sort_by_key(|e| e.ts);
        }
    }

    /// Makes room for `n` events at the current time in one buffer (advised for huge pages)
    /// before they are queued: the engine's first batch (every rank's first ops, at time 0)
    /// then fills it without growing through every power of two, each a fresh buffer the
    /// kernel clears and the previous one copied into it.
    pub(super) fn reserve_now(&mut self, n: usize) {
        if self.now.capacity() - self.now.len() < n {
            let capacity = self.now.len() + n;
            crate::hint::move_to_capacity(&mut self.now, crate::hint::roomy::<Event>(capacity));
        }
    }

    /// Queues `evs` (any order; they are sorted here): the events at the current time are
    /// merged with those left at it in one pass, not inserted one by one.
    pub(super) fn push_all(&mut self, evs: &mut [Event]) {
        if evs.is_empty() {
            return;
        }
        evs.sort_unstable();
        let lo = evs.partition_point(|e| e.time < self.last);
        let hi = evs.partition_point(|e| e.time <= self.last);
        for &e in evs[..lo].iter().chain(&evs[hi..]) {
            self.push(e);
        }
        if lo == hi {
            return;
        }
        let (mut a, b) = (self.head, &evs[lo..hi]);
        let mut merged = std::mem::take(&mut self.scratch);
        merged.clear();
        merged.reserve(self.now.len() - a + b.len());
        for &e in b {
            while a < self.now.len() && self.now[a].ts < e.ts {
                merged.push(self.now[a]);
                a += 1;
            }
            merged.push(e);
        }
        merged.extend_from_slice(&self.now[a..]);
        self.scratch = std::mem::replace(&mut self.now, merged);
        self.head = 0;
        self.len += b.len();
    }

    /// The time events are being taken at: that of the last event popped outside the past
    /// heap (an event queued before it goes to that heap).
    #[inline]
    pub(super) fn now(&self) -> Time {
        self.last
    }

    /// Whether an event `(time, ts)` with `time` at or after [`EventQueue::now`], had it been
    /// queued, would have been popped already: an event with a larger key has been popped
    /// outside the past heap. (Events at or after the current time come out in key order,
    /// except one queued again with an old stamp at the current time, which comes out at
    /// once; hence the largest key popped, not the last.)
    #[inline]
    pub(super) fn passed(&self, time: Time, ts: u64) -> bool {
        (time, ts) < (self.last, self.top_ts)
    }

    /// `pop` when an event dated in the past waits or the current time's events are all
    /// taken.
    #[inline(never)]
    fn pop_slow(&mut self) -> Option<Event> {
        if let Some(Reverse(e)) = self.past.pop() {
            self.len -= 1;
            return Some(e);
        }
        if self.mask == 0 {
            return None;
        }
        self.refill();
        // A new current time: no stamp of it has been popped yet.
        self.top_ts = 0;
        Some(self.take_now())
    }

    #[cold]
    fn refill(&mut self) {
        self.refill_with(|_| {});
    }

    /// Moves to the earliest time in the buckets: its events become the current batch, after
    /// `fix` has seen them, in stamp order.
    #[inline(always)]
    fn refill_with(&mut self, mut fix: impl FnMut(&mut [Event])) {
        self.now.clear();
        self.head = 0;
        let b = self.mask.trailing_zeros() as usize + 1;
        let mut v = std::mem::take(&mut self.buckets[b]);
        self.mask &= !(1 << (b - 1));
        let (m, hi) = v.iter().fold((Time::MAX, 0), |(lo, hi), e| {
            (lo.min(e.time), hi.max(e.time))
        });
        self.last = m;
        if m == hi {
            // Every event of the bucket is at its earliest time (a collective's step on every
            // rank at once): the bucket becomes the current batch as it is, without a copy.
            fix(&mut v);
            if !v.is_sorted_by_key(|e| e.ts) {
                v.sort_by_key(|e| e.ts);
            }
            let old = std::mem::replace(&mut self.now, v);
            self.keep_spare(old);
            return;
        }
        let mut same = std::mem::take(&mut self.scratch);
        for e in v.drain(..) {
            if e.time == m {
                make_room(&mut same);
                same.push(e);
            } else {
                let nb = 64 - (e.time ^ m).leading_zeros() as usize;
                debug_assert!(nb < b);
                self.push_bucket(nb, e);
            }
        }
        self.keep_spare(v);
        fix(&mut same);
        // Runs pushed in stamp order stay sorted; the adaptive stable sort merges them cheaply.
        if !same.is_sorted_by_key(|e| e.ts) {
            same.sort_by_key(|e| e.ts);
        }
        std::mem::swap(&mut self.now, &mut same);
        self.scratch = same;
    }

    /// Keeps an emptied vector for reuse: the two largest spare vectors are kept, the rest
    /// freed.
    fn keep_spare(&mut self, v: Vec<Event>) {
        debug_assert!(v.is_empty());
        self.spare.push(v);
        if self.spare.len() > SPARES {
            self.spare.sort_by_key(|x| std::cmp::Reverse(x.capacity()));
            self.spare.truncate(SPARES);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passed_is_the_largest_key_popped_outside_the_past() {
        let ev = |time, ts| Event {
            time,
            ts,
            rank: 0,
            what: 0,
        };
        let mut q = EventQueue::new();
        // Nothing popped: no key has been passed, not even the smallest.
        assert!(!q.passed(0, 0));
        q.push(ev(10, 1));
        q.push(ev(10, 5));
        q.push(ev(20, 6));
        assert_eq!(q.pop().map(|e| (e.time, e.ts)), Some((10, 1)));
        assert_eq!(q.pop().map(|e| (e.time, e.ts)), Some((10, 5)));
        assert_eq!(q.now(), 10);
        assert!(q.passed(10, 3) && q.passed(9, 100) && q.passed(10, 4));
        assert!(!q.passed(10, 5) && !q.passed(10, 6) && !q.passed(11, 0));
        // An event queued again at the current time with an old stamp comes out at once; the
        // keys between its stamp and the largest popped stay passed.
        q.push(ev(10, 2));
        assert_eq!(q.pop().map(|e| (e.time, e.ts)), Some((10, 2)));
        assert!(q.passed(10, 3) && q.passed(10, 4) && !q.passed(10, 6));
        // An event dated before the current time comes out first and moves nothing.
        q.push(ev(7, 9));
        assert_eq!(q.pop().map(|e| (e.time, e.ts)), Some((7, 9)));
        assert!(q.passed(10, 4) && !q.passed(10, 6) && q.passed(7, 10));
        assert_eq!(q.pop().map(|e| (e.time, e.ts)), Some((20, 6)));
        assert_eq!(q.now(), 20);
        assert!(q.passed(19, u64::MAX) && q.passed(20, 5) && !q.passed(20, 6));
    }

    #[test]
    fn reserve_now_keeps_the_current_batch_and_its_order() {
        let ev = |time, ts| Event {
            time,
            ts,
            rank: ts as u32,
            what: 0,
        };
        let mut q = EventQueue::new();
        q.reserve_now(3);
        assert!(q.now.capacity() >= 3);
        for ts in [4, 1, 3] {
            q.push(ev(0, ts));
        }
        assert_eq!(q.pop().map(|e| e.ts), Some(1));
        // Half consumed: room is made for more, and what is left stays, in stamp order.
        q.reserve_now(1000);
        assert!(q.now.capacity() - q.now.len() >= 1000);
        q.push(ev(0, 2));
        q.push(ev(5, 0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|e| (e.time, e.ts))).collect();
        assert_eq!(order, [(0, 2), (0, 3), (0, 4), (5, 0)]);
    }

    #[test]
    fn the_current_batch_keeps_only_what_is_left() {
        // One event at a time, each popped and replaced by a later-stamped one at the same
        // time (a run without costs): the batch's buffer stays small.
        let mut q = EventQueue::new();
        let ev = |ts| Event {
            time: 0,
            ts,
            rank: 0,
            what: 0,
        };
        q.push(ev(0));
        q.push(ev(1));
        for ts in 2..100_000 {
            assert_eq!(q.pop().map(|e| e.ts), Some(ts - 2));
            q.push(ev(ts));
        }
        assert!(q.now.capacity() <= 64, "{}", q.now.capacity());
        assert_eq!(q.pop().map(|e| e.ts), Some(99_998));
        assert_eq!(q.pop().map(|e| e.ts), Some(99_999));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn matches_a_binary_heap() {
        // A deterministic pseudo-random mix of pushes and pops, including times in the past
        // and re-queued stamps, compared with a plain binary heap.
        let mut q = EventQueue::new();
        let mut h = BinaryHeap::new();
        let mut x: u64 = 12345;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut ts = 0;
        let mut now = 0u64;
        for step in 0..200_000 {
            let r = rnd();
            if r % 3 != 0 || h.is_empty() {
                let time = match r % 7 {
                    0 => now,
                    1 => now.saturating_sub(rnd() % 50),
                    2 => now + (rnd() % 3),
                    _ => now + rnd() % 10_000,
                };
                let stamp = if r % 11 == 0 && ts > 10 {
                    rnd() % ts
                } else {
                    ts
                };
                ts += 1;
                let e = Event {
                    time,
                    ts: stamp * 1000 + step % 1000,
                    rank: 0,
                    what: step as u32,
                };
                q.push(e);
                h.push(Reverse(e));
            } else {
                let a = q.pop().unwrap();
                let Reverse(b) = h.pop().unwrap();
                assert_eq!((a.time, a.ts), (b.time, b.ts));
                now = a.time;
            }
            assert_eq!(q.len(), h.len());
        }
        while let Some(Reverse(b)) = h.pop() {
            let a = q.pop().unwrap();
            assert_eq!((a.time, a.ts), (b.time, b.ts));
        }
        assert!(q.pop().is_none());
    }
}
