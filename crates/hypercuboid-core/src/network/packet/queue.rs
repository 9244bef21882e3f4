//! The packet engine's event queue: a timing wheel of exact integer times.
//!
//! Events are 32-bit codes (kind and port, see the engine) at picosecond times. The wheel has
//! `M` buckets of `W = 2^shift` ps each; an event `t` goes to bucket `t >> shift` if that is
//! less than `M` buckets ahead of the current one, otherwise to an overflow heap that feeds the
//! wheel as time advances. A bucket holds `(offset within bucket) << 32 | code` words; when its
//! turn comes it is sorted, so events come out in `(time, code)` order. Events scheduled into
//! the bucket being processed (a delay shorter than `W`) go to a small heap merged with the
//! sorted batch in `(time, code)` order. Events therefore come out in `(time, code)` order
//! whenever they were queued (an event queued for the time being processed with a smaller
//! code than the current one comes next), so the order does not depend on when an event was
//! queued, only on what is queued: a partition of the network simulated alone processes its
//! events in the same order as the whole network simulated at once.
//! Every event is an idempotent "try" (the engine re-examines the port's state), so an event
//! queued twice is harmless.
//!
//! Under load the events of a bucket all fall at one time (the seed's network at 30 %: about
//! 600 events a bucket, 1.00 distinct times), and sorting them is sorting codes. A wheel told
//! the range of each kind's ids ([`Wheel::with_codes`]) then sorts such a bucket by setting one
//! bit per event in a bitmap over every code and reading the bits back in order, when the
//! bucket holds enough events for the bitmap to be dense (at least one event per 4 words); a
//! bucket of several times, or with an event queued twice, is sorted by comparison as before.
//! Both give the same order.

use crate::units::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub(crate) struct Wheel {
    shift: u32,
    mask: u64,
    buckets: Vec<Vec<u64>>,
    /// Absolute index of the bucket being processed.
    cur: u64,
    /// Events in the wheel (not counting overflow and late).
    in_wheel: usize,
    overflow: BinaryHeap<Reverse<(Time, u32)>>,
    /// Events scheduled into the current bucket while it is processed.
    late: BinaryHeap<Reverse<(Time, u32)>>,
    batch: Vec<u64>,
    pos: usize,
    /// Dense index of the first code of each kind (`KINDS` kinds, codes `kind << 30 | id`),
    /// and the total: the bitmap sort's bit of a code is `first[kind] + id`.
    first: [u32; KINDS + 1],
    /// The bitmap sort's bits, all clear between sorts (empty: no bitmap sort).
    bits: Vec<u64>,
}

/// Event kinds a code can carry (its top two bits).
const KINDS: usize = 4;
const KIND_SHIFT: u32 = 30;
const ID_MASK: u32 = (1 << KIND_SHIFT) - 1;

impl Wheel {
    /// A wheel of `2^log_buckets` buckets of `2^shift` ps.
    pub fn new(shift: u32, log_buckets: u32) -> Wheel {
        let m = 1usize << log_buckets;
        Wheel {
            shift,
            mask: m as u64 - 1,
            buckets: (0..m).map(|_| Vec::new()).collect(),
            cur: 0,
            in_wheel: 0,
            overflow: BinaryHeap::new(),
            late: BinaryHeap::new(),
            batch: Vec::new(),
            pos: 0,
            first: [0; KINDS + 1],
            bits: Vec::new(),
        }
    }

    /// [`Wheel::new`] for codes `kind << 30 | id` with `ids[kind]` ids of each kind (ids
    /// below it), whose buckets of one time it sorts with a bitmap.
    pub fn with_codes(shift: u32, log_buckets: u32, ids: &[usize]) -> Wheel {
        assert!(ids.len() <= KINDS, "at most {KINDS} kinds of events");
        let mut w = Wheel::new(shift, log_buckets);
        let mut n = 0usize;
        for k in 0..KINDS {
            w.first[k] = n as u32;
            n += ids.get(k).copied().unwrap_or(0);
        }
        w.first[KINDS] = u32::try_from(n).expect("fewer than 2^32 event codes");
        w.bits = vec![0; n.div_ceil(64)];
        w
    }

    /// Schedules `code` at `t` (`t` must not be before the event being processed).
    #[inline]
    pub fn push(&mut self, t: Time, code: u32) {
        let b = t >> self.shift;
        if b <= self.cur {
            self.late.push(Reverse((t, code)));
        } else if b - self.cur <= self.mask {
            let off = t & ((1u64 << self.shift) - 1);
            self.buckets[(b & self.mask) as usize].push((off << 32) | code as u64);
            self.in_wheel += 1;
        } else {
            self.overflow.push(Reverse((t, code)));
        }
    }

    /// True when no event is queued.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.batch.len()
            && self.late.is_empty()
            && self.in_wheel == 0
            && self.overflow.is_empty()
    }

    /// The next event `(time, code)` in order, or `None` when the queue is empty.
    #[cfg(test)]
    pub fn pop(&mut self) -> Option<(Time, u32)> {
        self.pop_before(Time::MAX)
    }

    /// The next event `(time, code)` in order if it is before `end` (it stays queued
    /// otherwise).
    #[inline]
    pub fn pop_before(&mut self, end: Time) -> Option<(Time, u32)> {
        loop {
            let from_batch = self.batch.get(self.pos).map(|&w| {
                (
                    (self.cur << self.shift) | (w >> 32),
                    (w & 0xffff_ffff) as u32,
                )
            });
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
    pub fn peek_time(&mut self) -> Option<Time> {
        loop {
            let b = self
                .batch
                .get(self.pos)
                .map(|&w| (self.cur << self.shift) | (w >> 32));
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

    /// The code of the event `d` places ahead in the current batch, if any (for prefetching).
    #[inline]
    pub fn peek_code(&self, d: usize) -> Option<u32> {
        self.batch
            .get(self.pos + d)
            .map(|&w| (w & 0xffff_ffff) as u32)
    }

    /// Moves to the next non-empty bucket; false when nothing is left.
    fn advance(&mut self) -> bool {
        let mut batch = std::mem::take(&mut self.batch);
        batch.clear();
        let slot = (self.cur & self.mask) as usize;
        if self.buckets[slot].is_empty() {
            self.buckets[slot] = batch;
        } else {
            // Cannot happen (the current bucket's events go to `late`), kept for safety.
            self.buckets[slot].append(&mut batch);
        }
        loop {
            if self.in_wheel == 0 {
                match self.overflow.peek() {
                    None => return false,
                    Some(&Reverse((t, _))) => self.cur = (t >> self.shift) - 1,
                }
            }
            self.cur += 1;
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
                    let off = t & ((1u64 << self.shift) - 1);
                    self.buckets[(b & self.mask) as usize].push((off << 32) | code as u64);
                    self.in_wheel += 1;
                }
            }
            let slot = (self.cur & self.mask) as usize;
            if !self.buckets[slot].is_empty() || !self.late.is_empty() {
                let b = std::mem::take(&mut self.buckets[slot]);
                self.in_wheel -= b.len();
                self.batch = self.sort(b);
                self.pos = 0;
                return true;
            }
        }
    }

    /// Sorts bucket words by (offset, code): time order, ties by code, so that events at one
    /// time visit ports in index order (kind to kind, port to port), which is kind to the
    /// caches.
    fn sort(&mut self, mut b: Vec<u64>) -> Vec<u64> {
        if !self.bits.is_empty() && 4 * b.len() >= self.bits.len() && self.sort_one_time(&mut b) {
            return b;
        }
        b.sort_unstable();
        b
    }

    /// Sorts `b` through the bitmap if all its events are at one time and no event is in it
    /// twice (true); leaves it as it was otherwise (false).
    fn sort_one_time(&mut self, b: &mut [u64]) -> bool {
        let off = b[0] >> 32;
        if b.iter().any(|&w| w >> 32 != off) {
            return false;
        }
        let first = self.first;
        let bit = |w: u64| {
            let c = w as u32;
            let kind = (c >> KIND_SHIFT) as usize;
            let id = c & ID_MASK;
            debug_assert!(
                id < first[kind + 1] - first[kind],
                "event id beyond its kind's range"
            );
            (first[kind] + id) as usize
        };
        let mut twice = false;
        for &w in b.iter() {
            let i = bit(w);
            let m = 1u64 << (i & 63);
            twice |= self.bits[i >> 6] & m != 0;
            self.bits[i >> 6] |= m;
        }
        if twice {
            for &w in b.iter() {
                let i = bit(w);
                self.bits[i >> 6] &= !(1u64 << (i & 63));
            }
            return false;
        }
        // Read the bits back in order: codes kind by kind, ids ascending.
        let mut k = 0;
        let mut kind = 0usize;
        for (wi, word) in self.bits.iter_mut().enumerate() {
            let mut x = *word;
            if x == 0 {
                continue;
            }
            *word = 0;
            while x != 0 {
                let i = (wi as u32) * 64 + x.trailing_zeros();
                x &= x - 1;
                while i >= first[kind + 1] {
                    kind += 1;
                }
                let code = ((kind as u32) << KIND_SHIFT) | (i - first[kind]);
                b[k] = (off << 32) | code as u64;
                k += 1;
            }
        }
        debug_assert_eq!(k, b.len());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_code_order() {
        let mut w = Wheel::new(4, 3); // 16 ps buckets, 8 buckets
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
        let mut out = Vec::new();
        while let Some(e) = w.pop() {
            if e == (17, 2) && !out.contains(&e) {
                // scheduled into the current bucket while processing it
                w.push(20, 0);
                w.push(17, 5);
                w.push(17, 2);
                // Same bucket, queued late, before an event of the sorted batch: (time,
                // code) order still holds.
                w.push(21, 1);
                assert_eq!(w.peek_time(), Some(17));
            }
            out.push(e);
        }
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

    /// The bitmap sort gives the order of the comparison sort: buckets of one time (sorted
    /// through the bitmap), of two times, and with an event queued twice (sorted by
    /// comparison), codes of every kind.
    #[test]
    fn bitmap_sort_keeps_time_then_code_order() {
        let ids = [70usize, 70, 30];
        let mut plain = Wheel::new(4, 3);
        let mut dense = Wheel::with_codes(4, 3, &ids);
        let mut rng = crate::network::rng::SplitMix64::stream(7, 1);
        let mut evs = Vec::new();
        // Time 32: 60 distinct codes (one time, dense enough); time 48: 40 codes and one of
        // them twice; times 64 and 70 in one bucket; time 200: 3 codes, beyond the wheel's
        // span (through the overflow heap).
        let mut add = |t: u64, n: usize, evs: &mut Vec<(u64, u32)>| {
            let mut seen = std::collections::HashSet::new();
            while seen.len() < n {
                let kind = rng.below(3) as u32;
                let id = rng.below(ids[kind as usize] as u64) as u32;
                if seen.insert((kind, id)) {
                    evs.push((t, (kind << KIND_SHIFT) | id));
                }
            }
        };
        add(32, 60, &mut evs);
        add(48, 40, &mut evs);
        evs.push(*evs.last().unwrap());
        add(64, 30, &mut evs);
        add(70, 30, &mut evs);
        add(200, 3, &mut evs);
        for &(t, c) in &evs {
            plain.push(t, c);
            dense.push(t, c);
        }
        let mut want = evs.clone();
        want.sort_unstable();
        let drain = |w: &mut Wheel| std::iter::from_fn(|| w.pop()).collect::<Vec<_>>();
        assert_eq!(drain(&mut plain), want);
        assert_eq!(drain(&mut dense), want);
        assert!(
            dense.bits.iter().all(|&x| x == 0),
            "the bitmap is left clear"
        );
        assert_eq!(dense.bits.len(), 3);
        assert_eq!(dense.first, [0, 70, 140, 170, 170]);
    }
}
