//! The program of one rank: ops in program order and their dependencies.

use super::error::ScheduleError;
use super::op::{Dep, DepKind, Op, OpKind, Payload, Rank, Region, Slice, Slot};
use crate::units::Time;

/// Index of an op within its rank's program.
pub type OpId = u32;

/// The program of one rank, as a generator builds it and as the MPI back end runs it.
///
/// Dependencies are stored as a flat list of `(op, dep)` pairs; [`Program::deps_of`] groups them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// The ops in program order.
    pub ops: Vec<Op>,
    /// `(op, dependency)` pairs.
    pub deps: Vec<(OpId, Dep)>,
}

impl Program {
    /// An empty program.
    pub fn new() -> Program {
        Program::default()
    }

    /// Empties the program, keeping its allocations (generators reuse one program per rank).
    pub fn clear(&mut self) {
        self.ops.clear();
        self.deps.clear();
    }

    /// Number of ops.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the program has no ops.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Appends an op and returns its id.
    pub fn push(&mut self, op: Op) -> OpId {
        self.ops.push(op);
        (self.ops.len() - 1) as OpId
    }

    /// `send data to peer` with `tag`.
    pub fn send(&mut self, peer: Rank, tag: i32, data: Slice) -> OpId {
        self.push(Op::new(OpKind::Send {
            peer,
            tag,
            data: Payload::Data(data),
        }))
    }

    /// [`Program::send`] that requires `after` where there is one.
    pub fn send_after(&mut self, peer: Rank, tag: i32, data: Slice, after: Option<OpId>) -> OpId {
        let s = self.send(peer, tag, data);
        if let Some(a) = after {
            self.requires(s, a);
        }
        s
    }

    /// `recv data from peer` with `tag`, overwriting `data`.
    pub fn recv(&mut self, peer: Rank, tag: i32, data: Slice) -> OpId {
        self.push(Op::new(OpKind::Recv {
            peer,
            tag,
            data: Payload::Data(data),
            combine: super::op::Combine::Assign,
            operand: None,
        }))
    }

    /// Fused receive-and-reduce from `peer` into `data`, combining as `combine` says.
    pub fn recv_reduce(
        &mut self,
        peer: Rank,
        tag: i32,
        data: Slice,
        combine: super::op::Combine,
    ) -> OpId {
        self.push(Op::new(OpKind::Recv {
            peer,
            tag,
            data: Payload::Data(data),
            combine,
            operand: None,
        }))
    }

    /// Fused receive-reduce-copy from `peer`: `dst = incoming ⊕ operand` or
    /// `dst = operand ⊕ incoming`. With `dst` apart from `operand`, the buffer a concurrent send
    /// reads is never written, so an exchange needs no extra op and stays safe when sends are
    /// synchronous.
    pub fn recv_reduce_into(
        &mut self,
        peer: Rank,
        tag: i32,
        operand: Slice,
        dst: Slice,
        combine: super::op::Combine,
    ) -> OpId {
        self.push(Op::new(OpKind::Recv {
            peer,
            tag,
            data: Payload::Data(dst),
            combine,
            operand: Some(operand),
        }))
    }

    /// `dst = dst ⊕ src` ([`super::Combine::After`]) or `dst = src ⊕ dst` ([`super::Combine::Before`]).
    pub fn reduce(&mut self, src: Slice, dst: Slice, combine: super::op::Combine) -> OpId {
        self.push(Op::new(OpKind::Reduce { src, dst, combine }))
    }

    /// `dst = src`.
    pub fn copy(&mut self, src: Slice, dst: Slice) -> OpId {
        self.push(Op::new(OpKind::Copy { src, dst }))
    }

    /// Gathers the elements of `src`, in C order, into the contiguous slice `dst`.
    pub fn pack(&mut self, src: Region, dst: Slice) -> OpId {
        self.push(Op::new(OpKind::Pack { src, dst }))
    }

    /// Scatters the contiguous slice `src` into the elements of `dst`, in C order.
    pub fn unpack(&mut self, src: Slice, dst: Region) -> OpId {
        self.push(Op::new(OpKind::Unpack { src, dst }))
    }

    /// Local computation of `time`.
    pub fn compute(&mut self, time: Time) -> OpId {
        self.push(Op::new(OpKind::Compute { time }))
    }

    /// Idle for `time`.
    pub fn sleep(&mut self, time: Time) -> OpId {
        self.push(Op::new(OpKind::Sleep { time }))
    }

    /// `a requires b`: `a` starts after `b` completes.
    pub fn requires(&mut self, a: OpId, b: OpId) {
        self.deps.push((
            a,
            Dep {
                on: b,
                kind: DepKind::Requires,
            },
        ));
    }

    /// `a irequires b`: `a` starts after `b` starts.
    pub fn irequires(&mut self, a: OpId, b: OpId) {
        self.deps.push((
            a,
            Dep {
                on: b,
                kind: DepKind::IRequires,
            },
        ));
    }

    /// `a requires` every op in `bs`.
    pub fn requires_all(&mut self, a: OpId, bs: &[OpId]) {
        for &b in bs {
            self.requires(a, b);
        }
    }

    /// Sorts dependencies by op, removes duplicates and self-loops' absence is checked by
    /// [`Program::validate`]. Called by the schedule builder.
    pub fn normalize(&mut self) {
        // Generators list dependencies nearly in order (a few pairs swapped): an insertion sort
        // does that in about one pass, whatever their number (recursive doubling on 2^24 ranks
        // has 94). Past a budget of moves (many out of order) the general sort takes over.
        // Compared as one integer, (op, on, kind) in that order: the tuple's own order.
        fn key(&(a, d): &(OpId, Dep)) -> u128 {
            (a as u128) << 64 | (d.on as u128) << 32 | d.kind as u128
        }
        let d = &mut self.deps;
        let budget = 4 * d.len() + 64;
        let mut moves = 0;
        for i in 1..d.len() {
            let x = d[i];
            let kx = key(&x);
            let mut j = i;
            while j > 0 && key(&d[j - 1]) > kx {
                d[j] = d[j - 1];
                j -= 1;
            }
            d[j] = x;
            moves += i - j;
            if moves > budget {
                d.sort_unstable();
                break;
            }
        }
        self.deps.dedup();
    }

    /// The dependencies of op `id` (after [`Program::normalize`]).
    pub fn deps_of(&self, id: OpId) -> &[(OpId, Dep)] {
        let lo = self.deps.partition_point(|(a, _)| *a < id);
        let hi = self.deps.partition_point(|(a, _)| *a <= id);
        &self.deps[lo..hi]
    }

    /// Checks what can be checked on one rank alone: dependency indices in range and not on the
    /// op itself, peers below `nranks` (or [`super::ANY_SOURCE`] for receives), a send's peer not
    /// a wildcard, reduce and copy operands of equal length, scratch slots in use.
    pub fn validate(&self, rank: Rank, nranks: u32) -> Result<(), ScheduleError> {
        let n = self.ops.len() as u32;
        for &(a, d) in &self.deps {
            if a >= n || d.on >= n {
                return Err(ScheduleError::BadDependency {
                    rank,
                    op: a,
                    on: d.on,
                    reason: format!("op index out of range (the rank has {n} ops)"),
                });
            }
            if a == d.on {
                return Err(ScheduleError::BadDependency {
                    rank,
                    op: a,
                    on: d.on,
                    reason: "an op cannot depend on itself".into(),
                });
            }
        }
        for (i, op) in self.ops.iter().enumerate() {
            let bad = |reason: String| ScheduleError::BadOp {
                rank,
                op: i as u32,
                reason,
            };
            match op.kind {
                OpKind::Send { peer, .. } => {
                    if peer >= nranks {
                        return Err(bad(format!(
                            "send to rank {} but the schedule has ranks 0..{}",
                            peer_str(peer),
                            nranks
                        )));
                    }
                }
                OpKind::Recv {
                    peer,
                    tag,
                    data,
                    combine,
                    operand,
                } => {
                    if let Some(o) = operand {
                        if combine == super::op::Combine::Assign {
                            return Err(bad(format!(
                                "recv with operand {o} must reduce (before or after); a plain receive has no operand"
                            )));
                        }
                        match data {
                            Payload::Data(d) if d.len == o.len => {}
                            Payload::Data(d) => {
                                return Err(bad(format!(
                                    "recv into {d} with operand {o}: lengths differ"
                                )))
                            }
                            Payload::Bytes(_) => {
                                return Err(bad(format!(
                                    "recv with operand {o} needs a data slice, not a byte count"
                                )))
                            }
                        }
                    }
                    if peer != super::op::ANY_SOURCE && peer >= nranks {
                        return Err(bad(format!(
                            "recv from rank {peer} but the schedule has ranks 0..{nranks} (or -1 for any)"
                        )));
                    }
                    if tag < super::op::ANY_TAG {
                        return Err(bad(format!("recv tag {tag}; tags are >= 0, or -1 for any")));
                    }
                }
                OpKind::Reduce { src, dst, combine } => {
                    if src.len != dst.len {
                        return Err(bad(format!("reduce of {src} into {dst}: lengths differ")));
                    }
                    if combine == super::op::Combine::Assign {
                        return Err(bad(
                            "reduce must combine before or after, not assign (use copy)".into(),
                        ));
                    }
                    if dst.slot == Slot::Input {
                        return Err(bad(format!(
                            "reduce into {dst}: the input buffer is read-only"
                        )));
                    }
                }
                OpKind::Copy { src, dst } => {
                    if src.len != dst.len {
                        return Err(bad(format!("copy of {src} to {dst}: lengths differ")));
                    }
                    if dst.slot == Slot::Input {
                        return Err(bad(format!("copy to {dst}: the input buffer is read-only")));
                    }
                }
                OpKind::Pack {
                    src: region,
                    dst: slice,
                }
                | OpKind::Unpack {
                    src: slice,
                    dst: region,
                } => {
                    if let Some(p) = region.problem() {
                        return Err(bad(p));
                    }
                    if slice.len != region.len() {
                        return Err(bad(format!(
                            "{} of {} elements between {region} and {slice}: lengths differ",
                            op.name(),
                            region.len()
                        )));
                    }
                    let written = if matches!(op.kind, OpKind::Pack { .. }) {
                        slice.slot
                    } else {
                        region.slot
                    };
                    if written == Slot::Input {
                        return Err(bad(format!(
                            "{} into the input buffer: it is read-only",
                            op.name()
                        )));
                    }
                }
                OpKind::Compute { .. } | OpKind::Sleep { .. } => {}
            }
            if let OpKind::Recv {
                data: Payload::Data(s),
                ..
            } = op.kind
            {
                if s.slot == Slot::Input {
                    return Err(bad(format!("recv into {s}: the input buffer is read-only")));
                }
            }
        }
        Ok(())
    }

    /// Checks that every slice of the program lies within its buffer: `input` and `output` of
    /// `buffer_lens` elements, scratch buffer `k` of `scratch[k]` (none beyond `scratch`).
    pub fn check_extents(
        &self,
        rank: Rank,
        buffer_lens: (u64, u64),
        scratch: &[u64],
    ) -> Result<(), ScheduleError> {
        for (i, op) in self.ops.iter().enumerate() {
            let mut bad = None;
            op.for_each_slice(|s, _| {
                if bad.is_some() {
                    return;
                }
                let (what, len) = match s.slot {
                    Slot::Input => ("the input buffer".to_string(), buffer_lens.0),
                    Slot::Output => ("the output buffer".to_string(), buffer_lens.1),
                    Slot::Scratch(k) => (
                        format!("scratch buffer {k}"),
                        scratch.get(k as usize).copied().unwrap_or(0),
                    ),
                };
                if s.offset.checked_add(s.len).is_none_or(|end| end > len) {
                    bad = Some(format!(
                        "{} slice {s} is outside {what} ({len} elements)",
                        op.name()
                    ));
                }
            });
            if let Some(reason) = bad {
                return Err(ScheduleError::BadOp {
                    rank,
                    op: i as u32,
                    reason,
                });
            }
        }
        Ok(())
    }

    /// Elements each scratch slot needs (index = slot number).
    pub fn scratch_extents(&self) -> Vec<u64> {
        let mut ext: Vec<u64> = Vec::new();
        let mut see = |s: &Slice| {
            if let Slot::Scratch(k) = s.slot {
                let k = k as usize;
                if ext.len() <= k {
                    ext.resize(k + 1, 0);
                }
                ext[k] = ext[k].max(s.end());
            }
        };
        for op in &self.ops {
            op.for_each_slice(|s, _| see(&s));
        }
        ext
    }
}

fn peer_str(p: Rank) -> String {
    if p == super::op::ANY_SOURCE {
        "-1 (any)".into()
    } else {
        p.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_sorts_and_dedups_short_and_long_lists() {
        for n in [0u32, 1, 2, 5, 40, 64, 65, 300] {
            let mut p = Program::new();
            for _ in 0..n.max(2) {
                p.compute(1);
            }
            // Descending, with every dependency given twice and both kinds.
            for a in (1..n).rev() {
                let kind = if a % 3 == 0 {
                    DepKind::IRequires
                } else {
                    DepKind::Requires
                };
                for _ in 0..2 {
                    p.deps.push((a, Dep { on: a - 1, kind }));
                    p.deps.push((a, Dep { on: 0, kind }));
                }
            }
            let mut expect = p.deps.clone();
            expect.sort_unstable();
            expect.dedup();
            p.normalize();
            assert_eq!(p.deps, expect, "{n} ops");
            assert!(p.deps.windows(2).all(|w| w[0] < w[1]), "{n} ops");
        }
        // Nearly in order, as generators list them (each adjacent pair swapped), beyond 64.
        for n in [65u32, 300] {
            let mut p = Program::new();
            for _ in 0..n {
                p.compute(1);
            }
            for a in 1..n {
                let kind = DepKind::Requires;
                p.deps.push((a, Dep { on: a - 1, kind }));
            }
            for w in p.deps.chunks_mut(2) {
                w.reverse();
            }
            let mut expect = p.deps.clone();
            expect.sort_unstable();
            p.normalize();
            assert_eq!(p.deps, expect, "{n} ops, nearly in order");
        }
    }
}
