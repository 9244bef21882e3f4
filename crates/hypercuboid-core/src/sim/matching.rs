//! MPI matching: per rank a posted-receive queue and an unexpected-message queue.
//!
//! As in LogGOPSim (`match` in `src/LogGOPSim/LogGOPSim.cpp`, list variant), each queue is
//! searched in insertion order and the first entry whose source and tag agree (either side may
//! be a wildcard) is taken. The queues are singly linked lists threaded through one shared
//! slab; a rank's four list ends ([`Ends`], 16 bytes) live with the rest of its per-rank state
//! in the engine, so that an event on a rank reads them from the cache line it reads anyway.

use crate::schedule::{Rank, ANY_SOURCE, ANY_TAG};

const NIL: u32 = u32::MAX;

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

/// A rank's queues: [posted head, posted tail, unexpected head, unexpected tail].
pub(crate) type Ends = [u32; 4];

/// Both queues empty.
pub(crate) const EMPTY: Ends = [NIL; 4];

#[derive(Debug)]
pub(crate) struct MatchQueues {
    nodes: Vec<Node>,
    free: u32,
    live: u64,
}

#[inline]
fn agree(a_peer: Rank, a_tag: i32, b_peer: Rank, b_tag: i32) -> bool {
    (a_peer == ANY_SOURCE || b_peer == ANY_SOURCE || a_peer == b_peer)
        && (a_tag == ANY_TAG || b_tag == ANY_TAG || a_tag == b_tag)
}

impl MatchQueues {
    pub fn new() -> MatchQueues {
        MatchQueues {
            nodes: Vec::new(),
            free: NIL,
            live: 0,
        }
    }

    /// Appends an entry to queue `q` of the rank whose queues end at `ends`.
    #[inline]
    pub fn push(&mut self, ends: &mut Ends, q: Queue, peer: Rank, tag: i32, op: u32) {
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
        let h = 2 * q as usize;
        if ends[h] == NIL {
            ends[h] = id;
        } else {
            self.nodes[ends[h + 1] as usize].next = id;
        }
        ends[h + 1] = id;
        self.live += 1;
    }

    /// Removes and returns `(peer, tag, op)` of the first entry of queue `q` (of the rank whose
    /// queues end at `ends`) that agrees with `peer` and `tag`.
    #[inline]
    pub fn take(
        &mut self,
        ends: &mut Ends,
        q: Queue,
        peer: Rank,
        tag: i32,
    ) -> Option<(Rank, i32, u32)> {
        let h = 2 * q as usize;
        let mut prev = NIL;
        let mut cur = ends[h];
        while cur != NIL {
            let n = self.nodes[cur as usize];
            if agree(n.peer, n.tag, peer, tag) {
                if prev == NIL {
                    ends[h] = n.next;
                } else {
                    self.nodes[prev as usize].next = n.next;
                }
                if ends[h + 1] == cur {
                    ends[h + 1] = prev;
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
    pub fn live(&self) -> u64 {
        self.live
    }

    /// The entries of queue `q` (of the rank whose queues end at `ends`), in order:
    /// `(peer, tag, op)`.
    pub fn entries(&self, ends: &Ends, q: Queue) -> Vec<(Rank, i32, u32)> {
        let mut v = Vec::new();
        let mut cur = ends[2 * q as usize];
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
        let mut ends = [EMPTY; 2];
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
}
