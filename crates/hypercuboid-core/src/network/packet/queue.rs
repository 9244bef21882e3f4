//! The packet engine's event queue: a timing wheel of exact integer times whose buckets record
//! their events in bitmaps over the codes.
//!
//! Events are codes below a bound given to the wheel (the engine numbers its outputs, its
//! inputs and its endpoints one after the other) at picosecond times. The wheel has `M`
//! buckets of `W = 2^shift` ps each; an event `t` goes to bucket `t >> shift` if that is less
//! than `M` buckets ahead of the current one, otherwise to an overflow heap that feeds the
//! wheel as time advances. Events scheduled into the bucket being processed (a delay shorter
//! than `W`) go to a small heap merged with the bucket's events in `(time, code)` order.
//! Events therefore come out in `(time, code)` order whenever they were queued (an event
//! queued for the time being processed with a smaller code than the current one comes next),
//! so the order does not depend on when an event was queued, only on what is queued: a
//! partition of the network simulated alone processes its events in the same order as the
//! whole network simulated at once. An event queued twice for one time is delivered twice.
//!
//! Under load the events of a bucket all fall at one time (the seed's network at 30 %: about
//! 600 events a bucket, 1.00 distinct times). A bucket therefore records, from its first
//! event on, the time of that event and, in a bitmap of one bit per code (taken from a pool of
//! bitmaps, each with a summary word of its non-empty words for every 64 words), the codes of
//! its events at that time: a push sets a bit, and when the bucket's turn comes its codes are
//! read back in order, summary word by summary word, clearing the bitmap for its next use. An
//! event at another time of the bucket, an event whose bit is already set (queued twice), and
//! every event of a bucket that found the pool empty go to the bucket's list instead; a bucket
//! with such events is sorted by comparison when its turn comes (its bitmap's events with
//! them). Both give the order of a comparison sort of the bucket.

use crate::units::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Bytes of bitmaps a wheel may hold at most (the pool grows to this, or to one bitmap per
/// bucket, whichever is less; a bucket that finds it empty keeps its events in its list).
const MAP_BUDGET: usize = 8 << 20;

/// What a push reads of a bucket: the time of the events in its bitmap (`Time::MAX` when it
/// has none) and where the bitmap's summary and bits start in the pool.
#[derive(Clone, Copy)]
struct Head {
    t0: Time,
    sum: u32,
    bits: u32,
}

const NO_HEAD: Head = Head {
    t0: Time::MAX,
    sum: 0,
    bits: 0,
};

pub(crate) struct Wheel {
    shift: u32,
    mask: u64,
    /// Every bucket's bitmap, if any.
    heads: Vec<Head>,
    /// Every bucket's events not in its bitmap: `(offset within bucket) << 32 | code`.
    rest: Vec<Vec<u64>>,
    /// Bit `b` of word `b / 64`: bucket `b` holds events (in its bitmap or its list).
    occ: Vec<u64>,
    /// Absolute index of the bucket being processed.
    cur: u64,
    overflow: BinaryHeap<Reverse<(Time, u32)>>,
    /// Events scheduled into the current bucket while it is processed.
    late: BinaryHeap<Reverse<(Time, u32)>>,
    /// The current bucket's events in order, `(offset within bucket) << 32 | code`.
    batch: Vec<u64>,
    pos: usize,
    /// Codes are below `codes`.
    codes: u32,
    /// Words of a bitmap's summary (one bit per word of its bits).
    sum_words: usize,
    /// Words of one pooled bitmap: its summary, then its bits.
    stride: usize,
    /// The pool of bitmaps, `stride` words each, all clear when free.
    maps: Vec<u64>,
    /// Free bitmaps of the pool (their first word).
    free: Vec<u32>,
    /// Bitmaps the pool may grow to.
    max_maps: usize,
}

impl Wheel {
    /// A wheel of `2^log_buckets` buckets of `2^shift` ps for codes below `codes`.
    pub(super) fn new(shift: u32, log_buckets: u32, codes: usize) -> Wheel {
        let m = 1usize << log_buckets;
        let codes = u32::try_from(codes).expect("fewer than 2^32 event codes");
        let words = (codes as usize).div_ceil(64).max(1);
        let sum_words = words.div_ceil(64);
        let stride = sum_words + words;
        let max_maps = (MAP_BUDGET / (8 * stride)).clamp(1, m);
        assert!(
            max_maps * stride < u32::MAX as usize,
            "the bitmaps of {codes} codes are addressed by 32 bits"
        );
        Wheel {
            shift,
            mask: m as u64 - 1,
            heads: vec![NO_HEAD; m],
            rest: (0..m).map(|_| Vec::new()).collect(),
            occ: vec![0; m.div_ceil(64)],
            cur: 0,
            overflow: BinaryHeap::new(),
            late: BinaryHeap::new(),
            batch: Vec::new(),
            pos: 0,
            codes,
            sum_words,
            stride,
            maps: Vec::new(),
            free: Vec::new(),
            max_maps,
        }
    }

    /// Schedules `code` (below the wheel's bound) at `t` (`t` must not be before the event
    /// being processed).
    #[inline(always)]
    pub(super) fn push(&mut self, t: Time, code: u32) {
        debug_assert!(code < self.codes, "event code {code} beyond {}", self.codes);
        let b = t >> self.shift;
        // After the current bucket and within the span: 1 <= b - cur <= mask.
        if b.wrapping_sub(self.cur + 1) < self.mask {
            let h = self.heads[(b & self.mask) as usize];
            if h.t0 == t && self.mark(h, code) {
                return;
            }
        }
        self.push_slow(t, code);
    }

    /// Sets `code`'s bit in the bitmap of head `h` (and its word's bit in the summary); false,
    /// changing nothing, when the bit is set already (the event goes to the bucket's list).
    #[inline(always)]
    fn mark(&mut self, h: Head, code: u32) -> bool {
        let w = h.bits as usize + (code >> 6) as usize;
        let m = 1u64 << (code & 63);
        let word = self.maps[w];
        if word & m != 0 {
            return false;
        }
        self.maps[w] = word | m;
        self.maps[h.sum as usize + (code >> 12) as usize] |= 1u64 << ((code >> 6) & 63);
        true
    }

    /// [`Wheel::push`] of an event its bucket's bitmap does not take: one in the current
    /// bucket (to `late`), beyond the span (to `overflow`), or [`Wheel::push_rest`].
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, t: Time, code: u32) {
        let b = t >> self.shift;
        if b <= self.cur {
            self.late.push(Reverse((t, code)));
        } else if b - self.cur > self.mask {
            self.overflow.push(Reverse((t, code)));
        } else {
            self.push_rest(b, t, code);
        }
    }

    /// Queues an event of bucket `b` (after the current one, within the span): into the
    /// bucket's bitmap if its time is the bitmap's and its bit is clear, or if the bucket is
    /// empty and the pool has a bitmap for it; into the bucket's list otherwise.
    fn push_rest(&mut self, b: u64, t: Time, code: u32) {
        let slot = (b & self.mask) as usize;
        self.occ[slot >> 6] |= 1u64 << (slot & 63);
        let mut h = self.heads[slot];
        if h.t0 == Time::MAX && self.rest[slot].is_empty() {
            let base = match self.free.pop() {
                Some(base) => Some(base as usize),
                None if self.maps.len() < self.max_maps * self.stride => {
                    let base = self.maps.len();
                    self.maps.resize(base + self.stride, 0);
                    Some(base)
                }
                None => None,
            };
            if let Some(base) = base {
                h = Head {
                    t0: t,
                    sum: base as u32,
                    bits: (base + self.sum_words) as u32,
                };
                self.heads[slot] = h;
            }
        }
        if h.t0 == t && self.mark(h, code) {
            return;
        }
        let off = t & ((1u64 << self.shift) - 1);
        self.rest[slot].push((off << 32) | code as u64);
    }

    /// True when no event is queued.
    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.pos >= self.batch.len()
            && self.late.is_empty()
            && self.occ.iter().all(|&x| x == 0)
            && self.overflow.is_empty()
    }

    /// The next event `(time, code)` in order, or `None` when the queue is empty.
    #[cfg(test)]
    pub(super) fn pop(&mut self) -> Option<(Time, u32)> {
        self.pop_before(Time::MAX)
    }

    /// The next event `(time, code)` in order if it is before `end` (it stays queued
    /// otherwise).
    #[inline]
    pub(super) fn pop_before(&mut self, end: Time) -> Option<(Time, u32)> {
        if self.late.is_empty() {
            if let Some(&w) = self.batch.get(self.pos) {
                let (t, code) = self.event(w);
                if t >= end {
                    return None;
                }
                self.pos += 1;
                return Some((t, code));
            }
        }
        self.pop_slow(end)
    }

    /// The event `(time, code)` of batch word `w` (`(offset within bucket) << 32 | code`, of
    /// the current bucket).
    #[inline(always)]
    fn event(&self, w: u64) -> (Time, u32) {
        ((self.cur << self.shift) | (w >> 32), w as u32)
    }

    /// [`Wheel::pop_before`] when events wait in `late` or the batch is used up.
    fn pop_slow(&mut self, end: Time) -> Option<(Time, u32)> {
        loop {
            let from_batch = self.batch.get(self.pos).map(|&w| self.event(w));
            let ev = match (from_batch, self.late.peek()) {
                (Some(b), Some(&Reverse(l))) if l < b => {
                    if l.0 >= end {
                        return None;
                    }
                    self.late.pop();
                    l
                }
                (Some(b), _) => {
                    if b.0 >= end {
                        return None;
                    }
                    self.pos += 1;
                    b
                }
                (None, Some(&Reverse(l))) => {
                    if l.0 >= end {
                        return None;
                    }
                    self.late.pop();
                    l
                }
                (None, None) => {
                    if !self.advance() {
                        return None;
                    }
                    continue;
                }
            };
            return Some(ev);
        }
    }

    /// The time of the next event, or `None` when the queue is empty.
    #[inline]
    pub(super) fn peek_time(&mut self) -> Option<Time> {
        loop {
            let b = self.batch.get(self.pos).map(|&w| self.event(w).0);
            let l = self.late.peek().map(|r| r.0 .0);
            match (b, l) {
                (Some(b), Some(l)) => return Some(b.min(l)),
                (Some(x), None) | (None, Some(x)) => return Some(x),
                (None, None) => {
                    if !self.advance() {
                        return None;
                    }
                }
            }
        }
    }

    /// The events of the current batch from the next one on, `(offset within bucket) << 32 |
    /// code` (for prefetching: their low 32 bits are the codes of the events that come next
    /// unless `late` holds earlier ones).
    #[inline(always)]
    pub(super) fn ahead(&self) -> &[u64] {
        self.batch.get(self.pos..).unwrap_or(&[])
    }

    /// Moves to the next non-empty bucket; false when nothing is left.
    fn advance(&mut self) -> bool {
        self.batch.clear();
        self.pos = 0;
        loop {
            let next = match (self.next_occupied(), self.overflow.peek()) {
                (None, None) => return false,
                (Some(b), None) => b,
                (None, Some(&Reverse((t, _)))) => t >> self.shift,
                (Some(b), Some(&Reverse((t, _)))) => b.min(t >> self.shift),
            };
            self.cur = next;
            // Feed overflow events that now fall inside the wheel's span.
            while let Some(&Reverse((t, code))) = self.overflow.peek() {
                let b = t >> self.shift;
                if b - self.cur > self.mask {
                    break;
                }
                self.overflow.pop();
                if b == self.cur {
                    self.late.push(Reverse((t, code)));
                } else {
                    self.push_rest(b, t, code);
                }
            }
            let slot = (self.cur & self.mask) as usize;
            if self.occ[slot >> 6] & (1u64 << (slot & 63)) != 0 {
                self.take(slot);
                return true;
            }
            if !self.late.is_empty() {
                return true;
            }
        }
    }

    /// The absolute index of the first bucket after the current one that holds events.
    fn next_occupied(&self) -> Option<u64> {
        let start = ((self.cur + 1) & self.mask) as usize;
        let n = self.occ.len();
        let mut wi = start >> 6;
        let mut x = self.occ[wi] & (!0u64 << (start & 63));
        for _ in 0..=n {
            if x != 0 {
                let slot = (wi * 64) as u64 + x.trailing_zeros() as u64;
                return Some(self.cur + 1 + (slot.wrapping_sub(start as u64) & self.mask));
            }
            wi = if wi + 1 == n { 0 } else { wi + 1 };
            x = self.occ[wi];
        }
        None
    }

    /// Moves the events of bucket `slot` (the current one) into the batch, in order.
    fn take(&mut self, slot: usize) {
        self.occ[slot >> 6] &= !(1u64 << (slot & 63));
        let h = std::mem::replace(&mut self.heads[slot], NO_HEAD);
        if h.t0 != Time::MAX {
            let off = (h.t0 & ((1u64 << self.shift) - 1)) << 32;
            let base = h.sum as usize;
            self.free.push(h.sum);
            let (sum, bits) = self.maps[base..base + self.stride].split_at_mut(self.sum_words);
            for (si, s) in sum.iter_mut().enumerate() {
                let mut x = std::mem::take(s);
                while x != 0 {
                    let wi = si * 64 + x.trailing_zeros() as usize;
                    x &= x - 1;
                    let mut y = std::mem::take(&mut bits[wi]);
                    let hi = off | (wi as u64) << 6;
                    while y != 0 {
                        self.batch.push(hi | y.trailing_zeros() as u64);
                        y &= y - 1;
                    }
                }
            }
        }
        let rest = &mut self.rest[slot];
        if !rest.is_empty() {
            self.batch.append(rest);
            self.batch.sort_unstable();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drains a wheel.
    fn drain(w: &mut Wheel) -> Vec<(Time, u32)> {
        std::iter::from_fn(|| w.pop()).collect()
    }

    /// Drains a wheel, calling `react` the first time event `at` comes out: what it pushes is
    /// queued into the bucket being processed.
    fn drain_reacting(
        w: &mut Wheel,
        at: (Time, u32),
        react: impl FnOnce(&mut Wheel),
    ) -> Vec<(Time, u32)> {
        let mut react = Some(react);
        let mut out = Vec::new();
        while let Some(e) = w.pop() {
            if e == at {
                if let Some(react) = react.take() {
                    react(w);
                }
            }
            out.push(e);
        }
        out
    }

    #[test]
    fn pops_in_time_then_code_order() {
        let mut w = Wheel::new(4, 3, 10); // 16 ps buckets, 8 buckets
        let evs = [
            (5u64, 3u32),
            (5, 1),
            (1000, 7),
            (17, 2),
            (21, 8),
            (21, 6),
            (130, 9),
            (129, 9),
            (130, 4),
        ];
        for &(t, c) in &evs {
            w.push(t, c);
        }
        let out = drain_reacting(&mut w, (17, 2), |w| {
            // scheduled into the current bucket while processing it
            w.push(20, 0);
            w.push(17, 5);
            w.push(17, 2);
            // Same bucket, queued late, before an event of the batch: (time, code) order
            // still holds.
            w.push(21, 1);
            assert_eq!(w.peek_time(), Some(17));
        });
        assert_eq!(
            out,
            vec![
                (5, 1),
                (5, 3),
                (17, 2),
                (17, 2), // queued again after its delivery: delivered again
                (17, 5),
                (20, 0),
                (21, 1),
                (21, 6),
                (21, 8),
                (129, 9),
                (130, 4),
                (130, 9),
                (1000, 7)
            ]
        );
        assert!(w.is_empty());
        assert_eq!(w.peek_time(), None);
        w.push(5000, 3);
        assert_eq!(w.peek_time(), Some(5000));
        assert_eq!(w.pop(), Some((5000, 3)));
    }

    /// Every path of the wheel gives the order of a comparison sort: buckets of one time (the
    /// bitmap alone), of two and three times (bitmap and list), with events queued twice
    /// (delivered twice), codes across several bitmap and summary words, events beyond the
    /// wheel's span (the overflow heap), and a pool of one bitmap (the other buckets in their
    /// lists).
    #[test]
    fn bitmap_buckets_keep_time_then_code_order() {
        let codes = 5000usize; // 79 bitmap words, 2 summary words
        for one_map in [false, true] {
            let mut w = Wheel::new(4, 3, codes);
            if one_map {
                w.max_maps = 1;
            }
            let mut rng = crate::network::rng::SplitMix64::stream(7, 1);
            let mut evs = Vec::new();
            let mut add = |t: u64, n: usize, evs: &mut Vec<(u64, u32)>| {
                for _ in 0..n {
                    evs.push((t, rng.below(codes as u64) as u32));
                }
            };
            // Time 32: 600 codes (some twice, by chance); times 48 and 50 in one bucket;
            // 64, 65, 79 in one; 200 and 201 beyond the span; 1000 far beyond it.
            add(32, 600, &mut evs);
            add(48, 40, &mut evs);
            add(50, 40, &mut evs);
            add(48, 10, &mut evs);
            add(79, 5, &mut evs);
            add(64, 30, &mut evs);
            add(65, 7, &mut evs);
            add(200, 3, &mut evs);
            add(201, 30, &mut evs);
            add(1000, 30, &mut evs);
            evs.push((32, 4999));
            evs.push((32, 4999));
            evs.push((32, 0));
            let n32 = evs.iter().filter(|e| e.0 == 32).count();
            let distinct32 = evs
                .iter()
                .filter(|e| e.0 == 32)
                .map(|e| e.1)
                .collect::<std::collections::HashSet<_>>()
                .len();
            assert!(distinct32 < n32, "some event at 32 is queued twice");
            for &(t, c) in &evs {
                w.push(t, c);
            }
            let mut want = evs.clone();
            want.sort_unstable();
            assert_eq!(drain(&mut w), want, "one bitmap: {one_map}");
            assert!(w.maps.iter().all(|&x| x == 0), "the bitmaps are left clear");
            assert_eq!(w.free.len(), w.maps.len() / w.stride);
            assert!(w.heads.iter().all(|h| h.t0 == Time::MAX));
            assert!(w.rest.iter().all(|r| r.is_empty()));
            assert_eq!((w.sum_words, w.stride), (2, 81));
        }
    }

    /// Events queued into the bucket being processed (the late heap), before, between and
    /// after the bucket's remaining events (a bucket of one time, in its bitmap), at its time
    /// and at later times within it, and twice: they come out in `(time, code)` order with the
    /// rest.
    #[test]
    fn late_events_merge_in_order() {
        let mut w = Wheel::new(8, 4, 1000); // 256 ps buckets: 768..1024 is bucket 3
        for c in [10u32, 20, 30, 40, 500, 999] {
            w.push(800, c);
        }
        w.push(1300, 1); // bucket 5
        let out = drain_reacting(&mut w, (800, 20), |w| {
            w.push(800, 15); // before the current code: comes next
            w.push(800, 35); // between remaining codes
            w.push(800, 40); // twice: once from the bitmap, once from the heap
            w.push(800, 20); // the current event again
            w.push(850, 0); // a later time of the same bucket
            w.push(900, 5); // twice, at a later time of the same bucket
            w.push(900, 5);
            assert_eq!(w.peek_time(), Some(800));
        });
        assert_eq!(
            out,
            vec![
                (800, 10),
                (800, 20),
                (800, 15),
                (800, 20),
                (800, 30),
                (800, 35),
                (800, 40),
                (800, 40),
                (800, 500),
                (800, 999),
                (850, 0),
                (900, 5),
                (900, 5),
                (1300, 1),
            ]
        );
        assert!(w.is_empty());
    }

    /// Random pushes during the run (a simulation's pattern: each popped event schedules a few
    /// at or after its time, some in its own bucket, some beyond the span) against a reference
    /// that sorts all pending events; `pop_before` stops at its bound and leaves the event.
    #[test]
    fn random_schedules_match_a_sorted_reference() {
        let codes = 3000u32;
        let mut w = Wheel::new(6, 4, codes as usize); // 64 ps buckets, 1024 ps span
        let mut reference: std::collections::BTreeMap<(Time, u32), usize> = Default::default();
        let mut rng = crate::network::rng::SplitMix64::stream(11, 3);
        let add = |w: &mut Wheel, reference: &mut std::collections::BTreeMap<_, _>, t, c| {
            w.push(t, c);
            *reference.entry((t, c)).or_insert(0) += 1;
        };
        for _ in 0..200 {
            let t = 128 * rng.below(4);
            let c = rng.below(codes as u64) as u32;
            add(&mut w, &mut reference, t, c);
        }
        let mut popped = 0;
        let mut end = 500;
        while !reference.is_empty() {
            let Some((t, c)) = w.pop_before(end) else {
                let &(t, _) = reference.keys().next().unwrap();
                assert!(
                    t >= end,
                    "the wheel stopped before {end} with ({t}, _) queued"
                );
                assert_eq!(w.peek_time(), Some(t));
                end += 700;
                continue;
            };
            let (&want, n) = reference.iter_mut().next().unwrap();
            assert_eq!((t, c), want, "after {popped} events");
            *n -= 1;
            if *n == 0 {
                reference.remove(&want);
            }
            popped += 1;
            if popped < 20_000 {
                for _ in 0..rng.below(3) + usize::from(reference.len() < 50) as u64 {
                    let dt = match rng.below(4) {
                        0 => rng.below(64),                           // often in the same bucket
                        1 => 64 * rng.below(4),                       // bucket boundaries
                        2 => 64 * (1 + rng.below(16)) + rng.below(2), // up to the span
                        _ => 1024 + rng.below(4000),                  // beyond it
                    };
                    let c = if rng.below(8) == 0 {
                        c
                    } else {
                        rng.below(codes as u64) as u32
                    };
                    add(&mut w, &mut reference, t + dt, c);
                }
            }
        }
        assert!(popped > 20_000);
        assert!(w.is_empty());
        assert!(w.maps.iter().all(|&x| x == 0));
    }
}
