//! Message matching: which receive each send meets.
//!
//! MPI's rule: per channel (source, destination, tag) messages are non-overtaking, so the k-th
//! send posted on a channel meets the k-th receive posted on it. "Posted" is the local start
//! order of [`super::order`]: a deterministic topological order of the dependencies, which is
//! program order wherever dependencies leave two ops unordered (such pairs are reported as
//! ambiguous when they differ). Ranks that post wildcard receives (`ANY_SOURCE`, `ANY_TAG`) are
//! matched at run time, in the canonical execution of [`super::graph`].
//!
//! Cost: one pass over the sends to bucket them by destination (8 bytes a send, freed before
//! returning), then per destination a sort of its few incoming sends and receives. Each pass
//! can run on several threads, each over a range of ranks (sources, then destinations); the
//! result, and the order of the problems reported, are those of one thread.

use super::order::ShapeOrder;
use super::{Cat, Collector, Problem, Unmatched};
use crate::schedule::{Op, OpKind, PeerRule, Rank, Schedule, ANY_SOURCE, ANY_TAG};
use rustc_hash::FxHashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// `partner` of an op no message matches.
pub(super) const NONE: u32 = u32::MAX;
/// `partner` of a send to a rank with wildcard receives, before the run-time matching.
pub(super) const DYN: u32 = u32::MAX - 1;

/// The state of one op: its partner and, during an execution of [`super::graph`], the
/// conditions it still waits for.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(super) struct OpState {
    /// The partner's op index in the peer's program, [`NONE`] or [`DYN`].
    pub partner: u32,
    /// The execution's pending word (see [`super::graph`]).
    pub pending: u32,
}

/// Sends to ranks with wildcard receives, by destination: `(source, op)` in source order.
pub(super) type Incoming = FxHashMap<Rank, Vec<(Rank, u32)>>;

/// The result of matching: for every send and receive, the index of its partner op in the
/// peer's program.
pub(super) struct Links {
    /// Per op (flat numbering [`Schedule::op_offset`]): the partner's op index ([`NONE`] or
    /// [`DYN`]) next to the execution's pending word, so that one cache line serves both.
    pub ops: Vec<OpState>,
    /// Ranks with wildcard receives (bitset).
    dynamic: Vec<u64>,
    /// Whether any rank has wildcard receives.
    pub any_dynamic: bool,
    /// Sends to each rank with wildcard receives: `(source, op)`.
    pub dyn_incoming: Incoming,
    /// Source rank of each matched `ANY_SOURCE` receive, by flat op index.
    pub dyn_source: FxHashMap<u64, Rank>,
    /// Matched messages.
    pub messages: u64,
    /// Bytes of matched messages.
    pub bytes: u64,
    /// Smallest and largest send size in bytes (`u64::MAX, 0` without sends).
    pub send_bytes: (u64, u64),
}

impl Links {
    /// Whether rank `r` matches its receives at run time.
    pub(super) fn is_dynamic(&self, r: Rank) -> bool {
        (self.dynamic[r as usize / 64] >> (r % 64)) & 1 == 1
    }

    /// Source rank of receive `i` of rank `r`, once matched.
    #[inline]
    pub(super) fn source(&self, s: &Schedule, r: Rank, i: u32) -> Option<Rank> {
        let p = s.peer(r, i as usize);
        if p != ANY_SOURCE {
            Some(p)
        } else {
            self.dyn_source.get(&(s.op_offset(r) + i as u64)).copied()
        }
    }

    /// The send receive `i` of rank `r` matched, by flat op index ([`Schedule::op_offset`]
    /// numbering), or `None` when it matched none.
    #[inline]
    pub(super) fn matched_send(&self, s: &Schedule, r: Rank, i: u32) -> Option<u64> {
        let p = self.ops[s.op_offset(r) as usize + i as usize].partner;
        if p == NONE {
            return None;
        }
        self.source(s, r, i).map(|src| s.op_offset(src) + p as u64)
    }
}

/// Whether a send of rank `src` with `send_tag` can meet receive `(peer, tag)`.
pub(super) fn compatible(src: Rank, send_tag: i32, peer: Rank, tag: i32) -> bool {
    (peer == ANY_SOURCE || peer == src) && (tag == ANY_TAG || tag == send_tag)
}

/// How many destinations ahead matching from the rules asks for the senders' partner words.
const AHEAD: usize = 4;

/// Checks a matched pair's sizes.
pub(super) fn check_sizes(
    s: &Schedule,
    (sr, si): (Rank, u32),
    (rr, ri): (Rank, u32),
    equal_len: bool,
    col: &mut Collector,
) -> u64 {
    let elem = s.elem_size();
    let sb = op_of(s, sr, si).bytes(elem);
    let rb = op_of(s, rr, ri).bytes(elem);
    if sb > rb || (equal_len && sb != rb) {
        let send = s.rank(sr).op(si as usize);
        let recv = s.rank(rr).op(ri as usize);
        col.push(
            Cat::Matching,
            Problem::SizeMismatch {
                send_rank: sr,
                send_op: si,
                send,
                send_bytes: sb,
                recv_rank: rr,
                recv_op: ri,
                recv,
                recv_bytes: rb,
            },
        );
    }
    sb
}

/// Op `i` of rank `r` in its shape's canonical form (peer 0), where only its kind, tag or size
/// is needed: one lookup of the rank's shape, none when every rank shares one (the peer is far
/// away in memory, and this saves a cache miss per message).
#[inline]
fn op_of(s: &Schedule, r: Rank, i: u32) -> &Op {
    let shapes = s.shapes();
    let k = if shapes.len() == 1 {
        0
    } else {
        s.shape_index(r)
    };
    &shapes[k].ops[i as usize]
}

fn tag(s: &Schedule, r: Rank, i: u32) -> i32 {
    match op_of(s, r, i).kind {
        OpKind::Send { tag, .. } | OpKind::Recv { tag, .. } => tag,
        _ => 0,
    }
}

/// Splits ranks `0..n` into at most `threads` ranges of nearly equal length.
fn parts(n: usize, threads: usize) -> Vec<Range<usize>> {
    let t = threads.clamp(1, n.max(1));
    (0..t).map(|k| k * n / t..(k + 1) * n / t).collect()
}

/// Runs `f(k, part, &mut state[k])` for every part, part 0 on this thread and each other on its
/// own; the results in part order.
fn each<T: Send, R: Send>(
    parts: &[Range<usize>],
    state: &mut [T],
    f: impl Fn(usize, Range<usize>, &mut T) -> R + Sync,
) -> Vec<R> {
    debug_assert_eq!(parts.len(), state.len());
    if parts.len() <= 1 {
        return parts
            .iter()
            .zip(state.iter_mut())
            .enumerate()
            .map(|(k, (p, st))| f(k, p.clone(), st))
            .collect();
    }
    let f = &f;
    std::thread::scope(|sc| {
        let (first, rest) = state.split_first_mut().expect("at least two parts");
        let handles: Vec<_> = parts[1..]
            .iter()
            .zip(rest.iter_mut())
            .enumerate()
            .map(|(k, (p, st))| {
                let p = p.clone();
                sc.spawn(move || f(k + 1, p, st))
            })
            .collect();
        let mut out = vec![f(0, parts[0].clone(), first)];
        for h in handles {
            out.push(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        out
    })
}

/// Matches every send of a rank without wildcard receives to its receive, reporting unmatched
/// ops and size mismatches, on up to `threads` threads. `equal_len`: the schedule has data
/// semantics, so matched lengths must agree exactly.
pub(super) fn match_static(
    s: &Schedule,
    orders: &[ShapeOrder],
    equal_len: bool,
    col: &mut Collector,
    threads: usize,
) -> Links {
    match_with(s, orders, equal_len, col, threads, true)
}

/// The sends of a schedule whose ranks share one shape and whose every send follows an
/// invertible peer rule (`rank XOR m`, `(rank + k) mod N`): `(op, inverse rule, tag)` in start
/// order, the inverse rule giving the source of the send that reaches a rank (`rank XOR m`,
/// `(rank + N − k) mod N`). The sends reaching a rank are then found from the rank itself,
/// without bucketing.
fn invertible_sends(s: &Schedule, orders: &[ShapeOrder]) -> Option<Vec<(u32, PeerRule, i32)>> {
    if s.num_shapes() != 1 {
        return None;
    }
    let n = s.nranks();
    let shape = &s.shapes()[0];
    orders[0]
        .sends(shape)
        .map(|i| {
            let from = match shape.peers[i as usize] {
                PeerRule::Xor(m) => PeerRule::Xor(m),
                PeerRule::Shift(k) => PeerRule::Shift((n - k) % n),
                _ => return None,
            };
            Some((i, from, tag(s, 0, i)))
        })
        .collect()
}

/// Buckets the sends to ranks without wildcard receives by destination, in (source, start
/// order) order: `start[d]..start[d + 1]` of `entries` (`source << 32 | op`) are those to `d`.
/// Each part counts the sends it has for each destination; part k's sends to `d` go after those
/// of the parts before it. Sends to ranks with wildcard receives get partner [`DYN`] in `ops`
/// and are returned by destination, in source order.
fn bucket_sends(
    s: &Schedule,
    orders: &[ShapeOrder],
    parts: &[Range<usize>],
    is_dyn: &(impl Fn(Rank) -> bool + Sync),
    ops: &mut [OpState],
) -> (Vec<u64>, Vec<u64>, Incoming) {
    let n = s.nranks() as usize;
    let mut none = vec![(); parts.len()];
    let mut counts: Vec<Vec<u64>> = each(parts, &mut none, |_, part, _| {
        let mut c = vec![0u64; n];
        for r in part.start as Rank..part.end as Rank {
            let v = s.rank(r);
            for i in orders[s.shape_index(r)].sends(v.shape) {
                let d = v.peer(i as usize);
                if !is_dyn(d) {
                    c[d as usize] += 1;
                }
            }
        }
        c
    });
    let mut start = vec![0u64; n + 1];
    for d in 0..n {
        let mut at = start[d];
        for c in counts.iter_mut() {
            let k = c[d];
            c[d] = at;
            at += k;
        }
        start[d + 1] = at;
    }
    let mut entries = vec![0u64; start[n] as usize];
    // SAFETY: `u64` and `AtomicU64` have the same size and alignment (on every target with
    // 64-bit atomics, which `std::sync::atomic::AtomicU64` requires); `entries` and `ops` are
    // borrowed mutably while the views live, so all accesses go through them.
    let slots: &[AtomicU64] = unsafe {
        std::slice::from_raw_parts(entries.as_mut_ptr().cast::<AtomicU64>(), entries.len())
    };
    let words = op_words(ops);
    let dyn_parts = each(parts, &mut counts, |_, part, cursor| {
        let mut dyn_in: Vec<(Rank, Rank, u32)> = Vec::new();
        for r in part.start as Rank..part.end as Rank {
            let v = s.rank(r);
            let base = s.op_offset(r) as usize;
            for i in orders[s.shape_index(r)].sends(v.shape) {
                let d = v.peer(i as usize);
                if is_dyn(d) {
                    words[2 * (base + i as usize)].store(DYN, Ordering::Relaxed);
                    dyn_in.push((d, r, i));
                } else {
                    let c = &mut cursor[d as usize];
                    slots[*c as usize].store((r as u64) << 32 | i as u64, Ordering::Relaxed);
                    *c += 1;
                }
            }
        }
        dyn_in
    });
    let mut dyn_incoming = Incoming::default();
    for (d, r, i) in dyn_parts.into_iter().flatten() {
        dyn_incoming.entry(d).or_default().push((r, i));
    }
    (start, entries, dyn_incoming)
}

/// [`match_static`]; `direct`: find the sends reaching each rank from their peer rules when
/// [`invertible_sends`] allows (the same buckets, in the same order, as the bucketing pass).
fn match_with(
    s: &Schedule,
    orders: &[ShapeOrder],
    equal_len: bool,
    col: &mut Collector,
    threads: usize,
    direct: bool,
) -> Links {
    let n = s.nranks() as usize;
    let elem = s.elem_size();
    let parts = parts(n, threads);
    let mut none = vec![(); parts.len()];
    let mut ops = vec![
        OpState {
            partner: NONE,
            pending: 0
        };
        s.total_ops() as usize
    ];

    // Which ranks post wildcard receives, and the range of send sizes.
    let scans = each(&parts, &mut none, |_, part, _| {
        let mut wild = Vec::new();
        let mut sizes = (u64::MAX, 0u64);
        for r in part.start as Rank..part.end as Rank {
            let v = s.rank(r);
            let ord = &orders[s.shape_index(r)];
            if ord.any_tag || ord.recvs(v.shape).any(|i| v.peer(i as usize) == ANY_SOURCE) {
                wild.push(r);
            }
            for i in ord.sends(v.shape) {
                let b = v.shape.ops[i as usize].bytes(elem);
                sizes = (sizes.0.min(b), sizes.1.max(b));
            }
        }
        (wild, sizes)
    });
    let mut dynamic = vec![0u64; n.div_ceil(64)];
    let mut any_dynamic = false;
    let mut send_bytes = (u64::MAX, 0u64);
    for (wild, sizes) in scans {
        for r in wild {
            dynamic[r as usize / 64] |= 1 << (r % 64);
            any_dynamic = true;
        }
        send_bytes = (send_bytes.0.min(sizes.0), send_bytes.1.max(sizes.1));
    }
    let is_dyn = |r: Rank| (dynamic[r as usize / 64] >> (r % 64)) & 1 == 1;
    let inverse = if direct && !any_dynamic {
        invertible_sends(s, orders)
    } else {
        None
    };
    let (start, entries, dyn_incoming) = if inverse.is_some() {
        (Vec::new(), Vec::new(), FxHashMap::default())
    } else {
        bucket_sends(s, orders, &parts, &is_dyn, &mut ops)
    };

    // Per destination, the k-th send of each channel meets its k-th receive.
    let words = op_words(&mut ops);
    let max = col.max;
    let mut cols: Vec<Collector> = parts.iter().map(|_| Collector::new(max)).collect();
    let totals = each(&parts, &mut cols, |_, part, col| {
        let mut messages = 0u64;
        let mut bytes = 0u64;
        let mut sends: Vec<(Rank, i32, u32)> = Vec::new();
        let mut recvs: Vec<(Rank, i32, u32)> = Vec::new();
        for d in part.start as Rank..part.end as Rank {
            if is_dyn(d) {
                continue;
            }
            let v = s.rank(d);
            let dbase = s.op_offset(d) as usize;
            if let Some(list) = &inverse {
                // The senders' partner words, written below, are one cache line each, far
                // apart (recursive doubling: rank d XOR 2^k): asked for AHEAD destinations
                // early, their misses overlap instead of stalling the stores one by one.
                let ahead = d as usize + AHEAD;
                if ahead < part.end {
                    for &(i, from, _) in list {
                        if let Some(src) = from.apply(ahead as Rank, n as u32) {
                            if let Some(w) = words.get(2 * (s.op_offset(src) as usize + i as usize))
                            {
                                crate::hint::prefetch(w);
                            }
                        }
                    }
                }
            }
            sends.clear();
            match &inverse {
                // The rank each send op's rule maps to `d`, op by op in start order: after the
                // stable sort by (source, tag), the bucketing pass's order.
                Some(list) => sends.extend(list.iter().filter_map(|&(i, from, t)| {
                    let src = from.apply(d, n as u32)?;
                    ((src as usize) < n).then_some((src, t, i))
                })),
                None => sends.extend(
                    entries[start[d as usize] as usize..start[d as usize + 1] as usize]
                        .iter()
                        .map(|&e| {
                            let (src, i) = ((e >> 32) as Rank, e as u32);
                            (src, tag(s, src, i), i)
                        }),
                ),
            }
            // Already by source (the bucketing pass goes through the sources in order): sorted
            // unless one source sends to `d` on several tags.
            if !sends.is_sorted_by_key(|&(src, t, _)| (src, t)) {
                sends.sort_by_key(|&(src, t, _)| (src, t));
            }
            recvs.clear();
            recvs.extend(
                orders[s.shape_index(d)]
                    .recvs(v.shape)
                    .map(|j| (v.peer(j as usize), tag(s, d, j), j)),
            );
            recvs.sort_by_key(|&(src, t, _)| (src, t));
            let (mut a, mut b) = (0, 0);
            while a < sends.len() || b < recvs.len() {
                let key = match (sends.get(a), recvs.get(b)) {
                    (Some(x), Some(y)) => (x.0, x.1).min((y.0, y.1)),
                    (Some(x), None) => (x.0, x.1),
                    (None, Some(y)) => (y.0, y.1),
                    (None, None) => unreachable!(),
                };
                let ea = a + sends[a..].partition_point(|x| (x.0, x.1) == key);
                let eb = b + recvs[b..].partition_point(|y| (y.0, y.1) == key);
                let (ns, nr) = (ea - a, eb - b);
                for k in 0..ns.min(nr) {
                    let (src, _, i) = sends[a + k];
                    let j = recvs[b + k].2;
                    words[2 * (s.op_offset(src) as usize + i as usize)].store(j, Ordering::Relaxed);
                    words[2 * (dbase + j as usize)].store(i, Ordering::Relaxed);
                    messages += 1;
                    bytes += check_sizes(s, (src, i), (d, j), equal_len, col);
                }
                let unmatched = |rank, op, what: Op, k: usize| Unmatched {
                    rank,
                    op,
                    what,
                    bytes: what.bytes(elem),
                    nth: k as u32 + 1,
                    sends: ns as u32,
                    recvs: nr as u32,
                    wildcard: false,
                };
                for k in nr..ns {
                    let (src, _, i) = sends[a + k];
                    let what = s.rank(src).op(i as usize);
                    col.push(
                        Cat::Matching,
                        Problem::UnmatchedSend(unmatched(src, i, what, k)),
                    );
                }
                for k in ns..nr {
                    let j = recvs[b + k].2;
                    col.push(
                        Cat::Matching,
                        Problem::UnmatchedRecv(unmatched(d, j, v.op(j as usize), k)),
                    );
                }
                a = ea;
                b = eb;
            }
        }
        (messages, bytes)
    });
    for c in cols {
        col.absorb(c);
    }
    Links {
        ops,
        dynamic,
        any_dynamic,
        dyn_incoming,
        dyn_source: FxHashMap::default(),
        messages: totals.iter().map(|t| t.0).sum(),
        bytes: totals.iter().map(|t| t.1).sum(),
        send_bytes,
    }
}

/// The op states as atomic words: op `f`'s partner is word `2f`, its pending word `2f + 1`.
/// Threads that write disjoint words share them through this view (relaxed loads and stores
/// are plain moves).
pub(super) fn op_words(ops: &mut [OpState]) -> &[AtomicU32] {
    // SAFETY: `OpState` is `repr(C)`, two `u32`s; `AtomicU32` has the size and alignment of
    // `u32`. The view borrows `ops` mutably for its whole life, so every access to the op
    // states meanwhile goes through it.
    unsafe { std::slice::from_raw_parts(ops.as_mut_ptr().cast::<AtomicU32>(), ops.len() * 2) }
}

#[cfg(test)]
mod tests {
    use super::super::order::{self, ShapeOrder};
    use super::super::Collector;
    use super::*;
    use crate::schedule::{Meta, Program, ScheduleBuilder, Slice, Slot};
    use proptest::prelude::*;

    /// One op of a program every rank runs with its own peers: `peer = rank XOR m` when
    /// `xor`, else `(rank + m) mod n`; for a receive, the peer it receives from.
    #[derive(Clone, Debug)]
    struct Step {
        send: bool,
        xor: bool,
        m: u32,
        tag: i32,
        len: u64,
    }

    fn build(n: u32, steps: &[(Step, Option<usize>)]) -> Schedule {
        let mut b = ScheduleBuilder::new(n as u64, Meta::sizes_only("rules")).unwrap();
        let mut p = Program::new();
        for r in 0..n {
            p.clear();
            let mut ids = Vec::new();
            for (st, dep) in steps {
                let peer = if st.xor { r ^ st.m } else { (r + st.m) % n };
                let id = if st.send {
                    p.send(peer, st.tag, Slice::new(Slot::Output, 0, st.len))
                } else {
                    p.recv(peer, st.tag, Slice::new(Slot::Scratch(0), 0, st.len))
                };
                if let Some(d) = dep {
                    p.requires(id, ids[*d]);
                }
                ids.push(id);
            }
            b.push(&mut p).unwrap();
        }
        b.finish().unwrap()
    }

    /// What a matching gave: every op's partner, messages, bytes, send sizes, problems.
    type Outcome = (Vec<u32>, u64, u64, (u64, u64), String);

    /// The outcome with and without finding the sends from the rules.
    fn both(s: &Schedule, threads: usize) -> [Outcome; 2] {
        let orders: Vec<ShapeOrder> = s.shapes().iter().map(order::topo).collect();
        [true, false].map(|direct| {
            let mut col = Collector::new(5);
            let l = match_with(s, &orders, false, &mut col, threads, direct);
            let (problems, more) = col.finish();
            (
                l.ops.iter().map(|o| o.partner).collect(),
                l.messages,
                l.bytes,
                l.send_bytes,
                format!("{problems:?} and {more} more"),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]

        /// One shape with XOR and shift peers, tags and sizes that often disagree: the sends
        /// found from the rules meet the receives the bucketing pass gives them.
        #[test]
        fn sends_found_from_rules_match_as_bucketed(
            log2n in 1u32..7,
            raw in prop::collection::vec(
                (any::<bool>(), any::<bool>(), any::<u32>(), 0i32..2, 1u64..3,
                 prop::option::of(any::<prop::sample::Index>())),
                1..10,
            ),
            threads in 1usize..4,
        ) {
            let n = 1u32 << log2n;
            let steps: Vec<(Step, Option<usize>)> = raw
                .into_iter()
                .enumerate()
                .map(|(k, (send, xor, m, tag, len, dep))| {
                    let st = Step { send, xor, m: m % n, tag, len };
                    (st, dep.filter(|_| k > 0).map(|d| d.index(k)))
                })
                .collect();
            let s = build(n, &steps);
            prop_assume!(s.num_shapes() == 1);
            prop_assume!(invertible_sends(&s, &[order::topo(&s.shapes()[0])]).is_some());
            let [direct, bucketed] = both(&s, threads);
            prop_assert_eq!(direct, bucketed);
        }
    }

    #[test]
    fn recursive_doubling_finds_its_sends_from_the_rules() {
        // 16 ranks, 4 stages of send to / receive from rank XOR 2^k, a ring step on top
        // (send to r + 1, receive from r − 1), and a stage whose receive waits for tag 9 that
        // no send carries: 16 unmatched sends and 16 unmatched receives.
        let op = |send, xor, m, tag, len| {
            (
                Step {
                    send,
                    xor,
                    m,
                    tag,
                    len,
                },
                None,
            )
        };
        let mut steps = Vec::new();
        for k in 0..4 {
            steps.push(op(true, true, 1 << k, k, 1));
            steps.push(op(false, true, 1 << k, k, 1));
        }
        steps.push(op(true, false, 1, 7, 2));
        steps.push(op(false, false, 15, 7, 2));
        steps.push(op(true, true, 3, 8, 1));
        steps.push(op(false, true, 3, 9, 1));
        let s = build(16, &steps);
        assert_eq!(s.num_shapes(), 1);
        let orders = [order::topo(&s.shapes()[0])];
        let list = invertible_sends(&s, &orders).expect("XOR and shift sends");
        assert_eq!(list.len(), 6);
        let [direct, bucketed] = both(&s, 2);
        assert_eq!(direct, bucketed);
        // 16 × 5 messages matched, 16 + 16 unmatched ops (capped at 5 listed).
        assert_eq!(direct.1, 80);
        assert!(direct.4.ends_with("and 27 more"), "{}", direct.4);
    }
}
