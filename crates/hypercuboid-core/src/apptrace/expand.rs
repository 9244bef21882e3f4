//! The default expansions of the collectives the registry has no algorithms for (docs/trace.md
//! lists them): each writes rank `i`'s program of a communicator of `m` ranks, with peers as
//! ranks of the communicator, message sizes in bytes and tags from 0 (the converter moves them
//! to world ranks and to tags of their own).

use crate::schedule::{Op, OpId, OpKind, Payload, Program, Rank};
use crate::units::Time;

/// One collective call as the expansions see it.
pub(super) struct Coll<'a> {
    /// `bcast`, `reduce`, ... ([`super::COLLECTIVE_NAMES`]).
    pub name: &'static str,
    /// Ranks of the communicator.
    pub m: u32,
    /// This rank in it.
    pub i: u32,
    /// The root, for rooted collectives.
    pub root: u32,
    /// The record's bytes (docs/trace.md: per call).
    pub bytes: u64,
    /// Per-rank byte counts of the v-forms (alltoallv: `m` sent then `m` received).
    pub counts: &'a [u64],
    /// Time of a local reduction of `b` bytes.
    pub reduce: &'a dyn Fn(u64) -> Time,
}

fn send(p: &mut Program, peer: u32, tag: i32, bytes: u64) -> OpId {
    p.push(Op::new(OpKind::Send {
        peer,
        tag,
        data: Payload::Bytes(bytes),
    }))
}

fn recv(p: &mut Program, peer: u32, tag: i32, bytes: u64) -> OpId {
    p.push(Op::new(OpKind::Recv {
        peer,
        tag,
        data: Payload::Bytes(bytes),
        combine: crate::schedule::Combine::Assign,
        operand: None,
    }))
}

fn after(p: &mut Program, op: OpId, before: Option<OpId>) {
    if let Some(b) = before {
        p.requires(op, b);
    }
}

/// `(r + d) mod m` for `d` in `-m ..= m`.
fn shift(r: u32, d: i64, m: u32) -> Rank {
    (r as i64 + d).rem_euclid(m as i64) as Rank
}

/// Writes the default expansion of `c` into `p` (cleared first). Returns `false` for a
/// collective this module does not expand.
pub(super) fn expand(c: &Coll<'_>, p: &mut Program) -> bool {
    p.clear();
    let (m, i) = (c.m, c.i);
    if m <= 1 {
        return matches!(
            c.name,
            "barrier"
                | "bcast"
                | "reduce"
                | "allgather"
                | "allgatherv"
                | "alltoallv"
                | "reduce_scatter"
                | "reduce_scatter_block"
                | "scan"
                | "exscan"
        );
    }
    match c.name {
        "barrier" => {
            // dissemination: round k sends to i + 2^k and receives from i - 2^k
            let mut last = None;
            let (mut d, mut k) = (1u64, 0i32);
            while d < m as u64 {
                let s = send(p, shift(i, d as i64, m), k, 0);
                let r = recv(p, shift(i, -(d as i64), m), k, 0);
                after(p, s, last);
                after(p, r, last);
                last = Some(r);
                d *= 2;
                k += 1;
            }
        }
        "bcast" => {
            // binomial tree from the root
            let v = shift(i, -(c.root as i64), m);
            let mut mask = 1u32;
            let mut got = None;
            while mask < m {
                if v & mask != 0 {
                    got = Some(recv(p, shift(v - mask, c.root as i64, m), 0, c.bytes));
                    break;
                }
                mask <<= 1;
            }
            mask >>= 1;
            while mask > 0 {
                if v + mask < m {
                    let s = send(p, shift(v + mask, c.root as i64, m), 0, c.bytes);
                    after(p, s, got);
                }
                mask >>= 1;
            }
        }
        "reduce" => {
            // binomial tree to the root: receive from each child and reduce, then send up
            let v = shift(i, -(c.root as i64), m);
            let mut mask = 1u32;
            let mut last = None;
            while mask < m {
                if v & mask == 0 {
                    if v | mask < m {
                        let r = recv(p, shift(v | mask, c.root as i64, m), 0, c.bytes);
                        after(p, r, last);
                        let x = p.compute((c.reduce)(c.bytes));
                        p.requires(x, r);
                        last = Some(x);
                    }
                } else {
                    let s = send(p, shift(v - mask, c.root as i64, m), 0, c.bytes);
                    after(p, s, last);
                    break;
                }
                mask <<= 1;
            }
        }
        "allgather" | "allgatherv" | "reduce_scatter" | "reduce_scatter_block" => {
            // ring: m - 1 steps to i + 1, from i - 1 (the reducing ones reduce each block)
            let reduces = c.name.starts_with("reduce");
            let size = |b: u32| -> u64 {
                if c.name.ends_with('v') || c.name == "reduce_scatter" {
                    c.counts.get(b as usize).copied().unwrap_or(0)
                } else {
                    c.bytes
                }
            };
            let off = if reduces { 1 } else { 0 };
            let mut last = None;
            for s in 0..m - 1 {
                let sb = size(shift(i, -(s as i64) - off, m));
                let rb = size(shift(i, -(s as i64) - off - 1, m));
                let so = send(p, shift(i, 1, m), s as i32, sb);
                let ro = recv(p, shift(i, -1, m), s as i32, rb);
                after(p, so, last);
                after(p, ro, last);
                last = Some(ro);
                if reduces {
                    let x = p.compute((c.reduce)(rb));
                    p.requires(x, ro);
                    last = Some(x);
                }
            }
        }
        "scan" | "exscan" => {
            // round k: send the partial result to i + 2^k, receive from i - 2^k and reduce
            let mut last = None;
            let (mut d, mut k) = (1u32, 0i32);
            while d < m {
                let mut next = last;
                if i + d < m {
                    let s = send(p, i + d, k, c.bytes);
                    after(p, s, last);
                }
                if i >= d {
                    let r = recv(p, i - d, k, c.bytes);
                    after(p, r, last);
                    let x = p.compute((c.reduce)(c.bytes));
                    p.requires(x, r);
                    next = Some(x);
                }
                last = next;
                d = d.saturating_mul(2);
                k += 1;
            }
        }
        "alltoallv" => {
            // every pair at once, step s to i + s and from i - s; empty blocks are not sent
            for s in 1..m {
                let to = shift(i, s as i64, m);
                let from = shift(i, -(s as i64), m);
                let sb = c.counts.get(to as usize).copied().unwrap_or(0);
                let rb = c.counts.get((m + from) as usize).copied().unwrap_or(0);
                if sb > 0 {
                    send(p, to, 0, sb);
                }
                if rb > 0 {
                    recv(p, from, 0, rb);
                }
            }
        }
        _ => return false,
    }
    true
}
