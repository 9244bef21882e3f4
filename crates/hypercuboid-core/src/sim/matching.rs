//! MPI matching: per rank a posted-receive queue and an unexpected-message queue.
//!
//! As in LogGOPSim (`match` in `src/LogGOPSim/LogGOPSim.cpp`, list variant), each queue is
//! searched in insertion order and the first entry whose source and tag agree (either side may
//! be a wildcard) is taken. A rank keeps one entry inline in its [`Ends`] (28 bytes, stored with
//! the rest of its per-rank state in the engine, so that an event on a rank reads them from the
//! cache lines it reads anyway): the oldest entry of one of its queues, taken when the other
//! queue is empty or has an inline-older entry of its own. The rest of each queue is a singly
//! linked list threaded through one shared slab. Most queues of a collective hold one entry at
//! a time (a message waits for its receive, or a receive for its message), so most matches
//! touch no slab node: a node is a cache miss, the slab's free list scattering them.

use crate::schedule::{Rank, ANY_SOURCE, ANY_TAG};

const NIL: u32 = u32::MAX;

/// `Ends::op` bits: the inline place holds an entry, of the unexpected queue (posted
/// otherwise). `UNEXPECTED` without `HELD`: a receive the engine has deferred
/// ([`Ends::defer`]).
const HELD: u32 = 1 << 31;
const UNEXPECTED: u32 = 1 << 30;
/// The op index below the flags (an op index is below 2^30: the engine's limit).
const OP: u32 = UNEXPECTED - 1;

#[derive(Clone, Copy, Debug)]
struct Node {
    next: u32,
    /// Posted: the receive's source (maybe `ANY_SOURCE`). Unexpected: the message's sender.
    peer: Rank,
    /// Posted: the receive's tag (maybe `ANY_TAG`). Unexpected: the message's tag.
    tag: i32,
    /// Posted: the receive's op index. Unexpected: the send's op index (in the sender).
    op: u32,
}

/// Which of a rank's two queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Queue {
    Posted = 0,
    Unexpected = 1,
}

impl Queue {
    #[inline]
    fn flag(self) -> u32 {
        match self {
            Queue::Posted => 0,
            Queue::Unexpected => UNEXPECTED,
        }
    }
}

/// A rank's queues: an inline entry (peer, tag, and the op with [`HELD`] and [`UNEXPECTED`]
/// flags), older than every entry of its queue's list, then the lists' ends.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ends {
    peer: Rank,
    tag: i32,
    op: u32,
    /// [posted head, posted tail, unexpected head, unexpected tail] in the slab.
    lists: [u32; 4],
}

const _: () = assert!(std::mem::size_of::<Ends>() == 28);

impl Ends {
    /// Both queues empty.
    pub(crate) const EMPTY: Ends = Ends {
        peer: 0,
        tag: 0,
        op: 0,
        lists: [NIL; 4],
    };

    /// The last word of the record (what to prefetch, with its first, to have all of it).
    #[inline]
    pub(crate) fn last_word(&self) -> &u32 {
        &self.lists[3]
    }

    /// The op of the inline entry when it is a posted or a deferred receive (the receive a
    /// message arriving now would most likely complete: what to prefetch the state of).
    #[inline]
    pub(crate) fn posted_inline(&self) -> Option<u32> {
        (self.inline_in(Queue::Posted) || self.op & (HELD | UNEXPECTED) == UNEXPECTED)
            .then_some(self.op & OP)
    }

    /// Both queues empty, and no deferred receive.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.op & (HELD | UNEXPECTED) == 0 && self.lists == [NIL; 4]
    }

    /// Keeps receive `op`, due to be posted at `time` by an event of stamp `ts`, in place of
    /// that event (see the engine's `settle`): the queues must be empty ([`Ends::is_empty`]),
    /// and stay so until [`Ends::take_deferred`]. The time and stamp take the places of the
    /// inline entry's peer and tag and of the posted list's ends, unused meanwhile.
    #[inline]
    pub(crate) fn defer(&mut self, op: u32, time: u64, ts: u64) {
        debug_assert!(self.is_empty() && op <= OP);
        self.op = op | UNEXPECTED;
        self.peer = time as u32;
        self.tag = (time >> 32) as i32;
        self.lists[0] = ts as u32;
        self.lists[1] = (ts >> 32) as u32;
    }

    /// The deferred receive `(op, time, ts)`, if any, which it removes (the queues are then
    /// empty).
    #[inline]
    pub(crate) fn take_deferred(&mut self) -> Option<(u32, u64, u64)> {
        if self.op & (HELD | UNEXPECTED) != UNEXPECTED {
            return None;
        }
        let time = self.peer as u64 | (self.tag as u32 as u64) << 32;
        let ts = self.lists[0] as u64 | (self.lists[1] as u64) << 32;
        let op = self.op & OP;
        *self = Ends::EMPTY;
        Some((op, time, ts))
    }

    /// Whether the inline entry belongs to queue `q`.
    #[inline]
    fn inline_in(&self, q: Queue) -> bool {
        self.op & (HELD | UNEXPECTED) == HELD | q.flag()
    }
}

#[derive(Debug)]
pub(crate) struct MatchQueues {
    nodes: Vec<Node>,
    free: u32,
    live: u64,
}

/// Whether a posted receive's `(source, tag)` and a message's (in either order) match, either
/// side's wildcards included.
#[inline]
pub(crate) fn agree(a_peer: Rank, a_tag: i32, b_peer: Rank, b_tag: i32) -> bool {
    (a_peer == ANY_SOURCE || b_peer == ANY_SOURCE || a_peer == b_peer)
        && (a_tag == ANY_TAG || b_tag == ANY_TAG || a_tag == b_tag)
}

impl MatchQueues {
    pub(super) fn new() -> MatchQueues {
        MatchQueues {
            nodes: Vec::new(),
            free: NIL,
            live: 0,
        }
    }

    /// Appends an entry to queue `q` of the rank whose queues end at `ends` (`op` < 2^30).
    #[inline]
    pub(super) fn push(&mut self, ends: &mut Ends, q: Queue, peer: Rank, tag: i32, op: u32) {
        debug_assert!(
            op <= OP,
            "op index {op} beyond the matching queues' 30 bits"
        );
        debug_assert!(
            ends.op & (HELD | UNEXPECTED) != UNEXPECTED,
            "a push onto queues holding a deferred receive"
        );
        self.live += 1;
        let h = 2 * q as usize;
        if ends.op & HELD == 0 && ends.lists[h] == NIL {
            // The queue is empty (its inline entry, if it had one, was taken): the entry is
            // its oldest.
            ends.peer = peer;
            ends.tag = tag;
            ends.op = op | HELD | q.flag();
            return;
        }
        let node = Node {
            next: NIL,
            peer,
            tag,
            op,
        };
        let id = if self.free != NIL {
            let id = self.free;
            self.free = self.nodes[id as usize].next;
            self.nodes[id as usize] = node;
            id
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        if ends.lists[h] == NIL {
            ends.lists[h] = id;
        } else {
            self.nodes[ends.lists[h + 1] as usize].next = id;
        }
        ends.lists[h + 1] = id;
    }

    /// Removes and returns `(peer, tag, op)` of the first entry of queue `q` (of the rank whose
    /// queues end at `ends`) that agrees with `peer` and `tag`.
    #[inline]
    pub(super) fn take(
        &mut self,
        ends: &mut Ends,
        q: Queue,
        peer: Rank,
        tag: i32,
    ) -> Option<(Rank, i32, u32)> {
        debug_assert!(
            ends.op & (HELD | UNEXPECTED) != UNEXPECTED,
            "a search of queues holding a deferred receive"
        );
        if ends.inline_in(q) && agree(ends.peer, ends.tag, peer, tag) {
            let op = ends.op & OP;
            ends.op = 0;
            self.live -= 1;
            return Some((ends.peer, ends.tag, op));
        }
        let h = 2 * q as usize;
        let mut prev = NIL;
        let mut cur = ends.lists[h];
        while cur != NIL {
            let n = self.nodes[cur as usize];
            if agree(n.peer, n.tag, peer, tag) {
                if prev == NIL {
                    ends.lists[h] = n.next;
                } else {
                    self.nodes[prev as usize].next = n.next;
                }
                if ends.lists[h + 1] == cur {
                    ends.lists[h + 1] = prev;
                }
                self.nodes[cur as usize].next = self.free;
                self.free = cur;
                self.live -= 1;
                return Some((n.peer, n.tag, n.op));
            }
            prev = cur;
            cur = n.next;
        }
        None
    }

    /// Number of entries in all queues.
    pub(super) fn live(&self) -> u64 {
        self.live
    }

    /// The entries of queue `q` (of the rank whose queues end at `ends`), in order:
    /// `(peer, tag, op)`.
    pub(super) fn entries(&self, ends: &Ends, q: Queue) -> Vec<(Rank, i32, u32)> {
        let mut v = Vec::new();
        if ends.inline_in(q) {
            v.push((ends.peer, ends.tag, ends.op & OP));
        }
        let mut cur = ends.lists[2 * q as usize];
        while cur != NIL {
            let n = self.nodes[cur as usize];
            v.push((n.peer, n.tag, n.op));
            cur = n.next;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_agreeing_entry_in_order() {
        let mut m = MatchQueues::new();
        let mut ends = [Ends::EMPTY; 2];
        m.push(&mut ends[1], Queue::Posted, 0, 5, 10);
        m.push(&mut ends[1], Queue::Posted, ANY_SOURCE, 7, 11);
        m.push(&mut ends[1], Queue::Posted, 0, ANY_TAG, 12);
        assert_eq!(
            m.take(&mut ends[1], Queue::Posted, 0, 7),
            Some((ANY_SOURCE, 7, 11))
        );
        assert_eq!(
            m.take(&mut ends[1], Queue::Posted, 0, 9),
            Some((0, ANY_TAG, 12))
        );
        assert_eq!(m.take(&mut ends[1], Queue::Posted, 0, 9), None);
        assert_eq!(m.take(&mut ends[1], Queue::Unexpected, 0, 5), None);
        // The tail is kept right after removals: a new entry goes last.
        m.push(&mut ends[1], Queue::Posted, 0, 5, 13);
        assert_eq!(
            m.entries(&ends[1], Queue::Posted),
            vec![(0, 5, 10), (0, 5, 13)]
        );
        assert_eq!(m.take(&mut ends[1], Queue::Posted, 0, 5), Some((0, 5, 10)));
        assert_eq!(m.take(&mut ends[1], Queue::Posted, 0, 5), Some((0, 5, 13)));
        assert_eq!(m.live(), 0);
        assert!(m.entries(&ends[0], Queue::Posted).is_empty());
    }

    #[test]
    fn inline_entry_keeps_each_queue_in_order() {
        // Random pushes and takes on two ranks' queues (wildcards included), compared with a
        // plain vector per queue searched front to back.
        let mut m = MatchQueues::new();
        let mut ends = [Ends::EMPTY; 2];
        let mut model: [[Vec<(Rank, i32, u32)>; 2]; 2] = Default::default();
        let mut x: u64 = 0x9e37_79b9;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (mut pushes, mut takes, mut misses) = (0, 0, 0);
        for step in 0..100_000u32 {
            let r = rnd(2) as usize;
            let q = if rnd(2) == 0 {
                Queue::Posted
            } else {
                Queue::Unexpected
            };
            let peer = match rnd(8) {
                0 => ANY_SOURCE,
                p => p as Rank % 3,
            };
            let tag = match rnd(8) {
                0 => ANY_TAG,
                t => t as i32 % 2,
            };
            let v = &mut model[r][q as usize];
            if rnd(2) == 0 && v.len() < 6 {
                let op = step & ((1 << 30) - 1);
                m.push(&mut ends[r], q, peer, tag, op);
                v.push((peer, tag, op));
                pushes += 1;
            } else {
                let want = v
                    .iter()
                    .position(|&(p, t, _)| agree(p, t, peer, tag))
                    .map(|k| v.remove(k));
                match want {
                    Some(_) => takes += 1,
                    None => misses += 1,
                }
                assert_eq!(m.take(&mut ends[r], q, peer, tag), want, "step {step}");
            }
            for (rank, e) in ends.iter().enumerate() {
                for q in [Queue::Posted, Queue::Unexpected] {
                    assert_eq!(m.entries(e, q), model[rank][q as usize], "step {step}");
                }
            }
            let live: usize = model.iter().flatten().map(Vec::len).sum();
            assert_eq!(m.live(), live as u64);
        }
        // Every path ran many times.
        assert!(pushes > 20_000 && takes > 20_000 && misses > 5_000);
        // Entries beyond the inline one went to the slab, whose nodes were reused.
        assert!(!m.nodes.is_empty() && m.nodes.len() <= 24);
    }

    #[test]
    fn the_inline_entry_serves_either_queue() {
        let mut m = MatchQueues::new();
        let mut e = Ends::EMPTY;
        m.push(&mut e, Queue::Unexpected, 4, 1, 7);
        // The posted queue is empty but the inline entry is taken: its entry goes to the slab.
        m.push(&mut e, Queue::Posted, 4, 2, 8);
        assert_eq!(m.nodes.len(), 1);
        assert_eq!(m.take(&mut e, Queue::Unexpected, 4, 1), Some((4, 1, 7)));
        // The posted queue's list is not empty: a new posted entry goes after it, to the slab.
        m.push(&mut e, Queue::Posted, 4, 3, 9);
        assert_eq!(m.nodes.len(), 2);
        assert_eq!(m.entries(&e, Queue::Posted), vec![(4, 2, 8), (4, 3, 9)]);
        // The unexpected queue is empty, and so is the inline place: inline again.
        m.push(&mut e, Queue::Unexpected, 5, 1, (1 << 30) - 1);
        assert_eq!(m.nodes.len(), 2);
        assert_eq!(
            m.take(&mut e, Queue::Unexpected, ANY_SOURCE, ANY_TAG),
            Some((5, 1, (1 << 30) - 1))
        );
        assert_eq!(m.take(&mut e, Queue::Posted, 4, 3), Some((4, 3, 9)));
        assert_eq!(m.take(&mut e, Queue::Posted, 4, 2), Some((4, 2, 8)));
        assert_eq!(m.live(), 0);
    }
}
