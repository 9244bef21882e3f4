//! Pass 3 of [`super::convert`]: each rank's program from its resolved and matched events
//! (compute gaps, point-to-point ops in program order, non-blocking calls completed where the
//! application waited, collectives expanded and cached by shape).

use super::convert::{rec_err, Comms, Ev, Resolved, TagKey};
use super::expand::{expand, Coll};
use super::read::{RankTrace, Record};
use super::{collective_of, TraceError};
use crate::collectives::allreduce::{self, Allreduce, AllreduceSpec};
use crate::collectives::alltoall::{self, Alltoall, AlltoallSpec};
use crate::collectives::library::{library_choice_for, Library};
use crate::collectives::registry;
use crate::schedule::{Combine, DepKind, Dtype, Op, OpId, OpKind, Payload, Program, ReduceOp};
use crate::units::{Time, PS_PER_NS};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// A collective's local program by (call, ranks, rank, root, bytes, element size).
type CacheKey = (u16, u32, u32, i32, u64, i32);

/// What pass 3 keeps across ranks.
pub(super) struct Build<'a> {
    pub(super) reduce: &'a dyn Fn(u64) -> Time,
    pub(super) ar: allreduce::Algorithm,
    pub(super) aa: alltoall::Algorithm,
    /// The library whose choice expands allreduce (`.1`) and alltoall (`.2`) calls.
    pub(super) library: Option<(Library, bool, bool)>,
    /// local programs by (collective code, ranks, rank, root, bytes, element size)
    pub(super) cache: FxHashMap<CacheKey, Arc<Program>>,
    pub(super) tags: FxHashMap<TagKey, i32>,
    pub(super) sizes: Vec<Vec<u64>>,
    pub(super) scale: f64,
}

impl Build<'_> {
    /// Pass 3: rank `t`'s program from its first `cut` events.
    pub(super) fn program(
        &mut self,
        t: &RankTrace,
        x: &Resolved,
        cut: usize,
        comms: &Comms,
    ) -> Result<Program, TraceError> {
        let mut p = Program::new();
        let mut cursor: Vec<OpId> = Vec::new();
        let mut reqs: FxHashMap<u32, Vec<OpId>> = FxHashMap::default();
        let own = std::mem::take(&mut self.sizes[t.rank as usize]);
        let mut sizes = own.iter();
        let mut pending: Option<OpId> = None;
        for &(ev, ri) in &x.evs[..cut] {
            if let Some(s) = pending {
                // a Sendrecv whose receive half is MPI_PROC_NULL: its send completes it
                if !matches!(ev, Ev::Recv { .. }) {
                    cursor = vec![s];
                    pending = None;
                }
            }
            match ev {
                Ev::Gap(ns) => {
                    let ns = (ns as f64 * self.scale).round() as u64;
                    if ns > 0 {
                        let c = p.compute(ns * PS_PER_NS);
                        p.requires_all(c, &cursor);
                        cursor.clear();
                        cursor.push(c);
                    }
                }
                Ev::Send {
                    to,
                    tag,
                    bytes,
                    req,
                } => {
                    let s = p.push(Op::new(OpKind::Send {
                        peer: to,
                        tag,
                        data: Payload::Bytes(bytes),
                    }));
                    p.requires_all(s, &cursor);
                    match req {
                        0 => cursor = vec![s],
                        u32::MAX => pending = Some(s),
                        id => {
                            reqs.insert(id, vec![s]);
                        }
                    }
                }
                Ev::Recv { from, tag, req } => {
                    let bytes = sizes.next().copied().unwrap_or(0);
                    let r = p.push(Op::new(OpKind::Recv {
                        peer: from,
                        tag,
                        data: Payload::Bytes(bytes),
                        combine: Combine::Assign,
                        operand: None,
                    }));
                    p.requires_all(r, &cursor);
                    if req != 0 {
                        reqs.insert(req, vec![r]);
                    } else {
                        cursor = vec![r];
                        cursor.extend(pending.take());
                    }
                }
                Ev::Done { at, len } => {
                    for id in &x.pool[at as usize..(at + len) as usize] {
                        if let Some(ops) = reqs.remove(id) {
                            cursor.extend(ops);
                        }
                    }
                }
                Ev::Coll { gid, seq } => {
                    let rec = &t.records[ri as usize];
                    let members = &comms.members[gid as usize];
                    let sinks =
                        self.collective(t, ri as usize, rec, members, gid, seq, &mut p, &cursor)?;
                    if rec.call.nonblocking {
                        reqs.insert(rec.req.max(1), sinks);
                    } else if !sinks.is_empty() {
                        cursor = sinks;
                    }
                }
            }
        }
        Ok(p)
    }

    /// Appends the collective of record `rec` (rank `t`'s record `ri`) to `p` after `cursor`;
    /// returns its last ops.
    #[allow(clippy::too_many_arguments)]
    fn collective(
        &mut self,
        t: &RankTrace,
        ri: usize,
        rec: &Record,
        members: &[u32],
        gid: u32,
        seq: u32,
        p: &mut Program,
        cursor: &[OpId],
    ) -> Result<Vec<OpId>, TraceError> {
        let m = members.len() as u32;
        let i = members.iter().position(|&w| w == t.rank).unwrap_or(0) as u32;
        // A communicator creation holds its parent's members until all have called it (the
        // library agrees on a context id with an allreduce; a split also gathers colours and
        // keys): replayed as a barrier of the parent.
        let name = collective_of(rec.call.code).unwrap_or("barrier");
        let elem = rec.tag.max(1);
        let v = name.ends_with('v') || name == "reduce_scatter";
        let key = (rec.call.code, m, i, rec.peer, rec.bytes, elem);
        let local: Arc<Program> = match self.cache.get(&key) {
            Some(l) if !v => l.clone(),
            _ => {
                let mut l = Program::new();
                let (dtype, count) = dtype_of(elem as u32, rec.bytes);
                let done = match name {
                    "allreduce" => {
                        let spec = AllreduceSpec::new(m, count, dtype, ReduceOp::Sum);
                        registry::program::<Allreduce>(
                            &self
                                .chosen::<Allreduce>(name, m, rec, elem)
                                .map_err(|e| rec_err(t, ri, e))?
                                .unwrap_or(self.ar.clone()),
                            &spec,
                            &Default::default(),
                            i,
                            &mut l,
                        )
                        .map_err(|e| rec_err(t, ri, e.to_string()))?;
                        true
                    }
                    "alltoall" => {
                        let spec = AlltoallSpec::new(m, count, dtype);
                        registry::program::<Alltoall>(
                            &self
                                .chosen::<Alltoall>(name, m, rec, elem)
                                .map_err(|e| rec_err(t, ri, e))?
                                .unwrap_or(self.aa.clone()),
                            &spec,
                            &Default::default(),
                            i,
                            &mut l,
                        )
                        .map_err(|e| rec_err(t, ri, e.to_string()))?;
                        true
                    }
                    _ => {
                        let c = Coll {
                            name,
                            m,
                            i,
                            root: rec.peer.max(0) as u32,
                            bytes: rec.bytes,
                            counts: t.extra_of(rec),
                            reduce: self.reduce,
                        };
                        if rec.peer >= m as i32 {
                            return Err(rec_err(
                                t,
                                ri,
                                format!(
                                    "root {} is not a rank of its communicator ({m} ranks)",
                                    rec.peer
                                ),
                            ));
                        }
                        expand(&c, &mut l)
                    }
                };
                if !done {
                    return Err(rec_err(t, ri, format!("no expansion for {name}")));
                }
                l.normalize();
                let l = Arc::new(l);
                if !v {
                    self.cache.insert(key, l.clone());
                }
                l
            }
        };
        let elem_size = dtype_of(elem as u32, rec.bytes).0.size() as u64;
        self.append(p, &local, members, gid, seq, elem_size, cursor)
            .map_err(|e| rec_err(t, ri, e))
    }

    /// What the library would run for this call, where the library chooses it.
    fn chosen<F: registry::Family>(
        &self,
        name: &str,
        m: u32,
        rec: &Record,
        elem: i32,
    ) -> Result<Option<F::Algorithm>, String> {
        let Some((lib, ar, aa)) = self.library else {
            return Ok(None);
        };
        if !(name == "allreduce" && ar || name == "alltoall" && aa) {
            return Ok(None);
        }
        let (dtype, _) = dtype_of(elem as u32, rec.bytes);
        let c =
            library_choice_for(lib, name, m, rec.bytes, dtype.size()).map_err(|e| e.to_string())?;
        registry::parse::<F>(&c.algorithm)
            .map(Some)
            .map_err(|e| e.to_string())
    }

    /// Appends a local program (communicator ranks, local tags) to `p`: world ranks, schedule
    /// tags, every local op as sends, receives and compute ops; its first ops after `cursor`.
    #[allow(clippy::too_many_arguments)]
    fn append(
        &mut self,
        p: &mut Program,
        l: &Program,
        members: &[u32],
        gid: u32,
        seq: u32,
        elem: u64,
        cursor: &[OpId],
    ) -> Result<Vec<OpId>, String> {
        let mut start = Vec::with_capacity(l.ops.len());
        let mut end = Vec::with_capacity(l.ops.len());
        let tag = |local: i32, tags: &mut FxHashMap<TagKey, i32>| -> Result<i32, String> {
            let next = tags.len() as i32;
            if next == i32::MAX {
                return Err("more than 2^31 - 1 distinct tags".into());
            }
            Ok(*tags.entry((gid, seq as u64, local)).or_insert(next))
        };
        for op in &l.ops {
            let peer = |q: u32| members[q as usize];
            let (s, e) = match op.kind {
                OpKind::Send {
                    peer: q,
                    tag: tg,
                    data,
                } => {
                    let id = p.push(Op::new(OpKind::Send {
                        peer: peer(q),
                        tag: tag(tg, &mut self.tags)?,
                        data: Payload::Bytes(data.bytes(elem as u32)),
                    }));
                    (id, id)
                }
                OpKind::Recv {
                    peer: q,
                    tag: tg,
                    data,
                    combine,
                    ..
                } => {
                    let b = data.bytes(elem as u32);
                    let id = p.push(Op::new(OpKind::Recv {
                        peer: peer(q),
                        tag: tag(tg, &mut self.tags)?,
                        data: Payload::Bytes(b),
                        combine: Combine::Assign,
                        operand: None,
                    }));
                    if combine == Combine::Assign {
                        (id, id)
                    } else {
                        let c = p.compute((self.reduce)(b));
                        p.requires(c, id);
                        (id, c)
                    }
                }
                OpKind::Reduce { src, .. } | OpKind::Copy { src, .. } => {
                    let c = p.compute((self.reduce)(src.len * elem));
                    (c, c)
                }
                OpKind::Pack { dst, .. } => {
                    let c = p.compute((self.reduce)(dst.len * elem));
                    (c, c)
                }
                OpKind::Unpack { src, .. } => {
                    let c = p.compute((self.reduce)(src.len * elem));
                    (c, c)
                }
                OpKind::Compute { time } | OpKind::Sleep { time } => {
                    let c = p.compute(time);
                    (c, c)
                }
            };
            start.push(s);
            end.push(e);
        }
        let mut has_dep = vec![false; l.ops.len()];
        let mut has_dependent = vec![false; l.ops.len()];
        for &(a, d) in &l.deps {
            has_dep[a as usize] = true;
            has_dependent[d.on as usize] = true;
            match d.kind {
                DepKind::Requires => p.requires(start[a as usize], end[d.on as usize]),
                DepKind::IRequires => p.irequires(start[a as usize], start[d.on as usize]),
            }
        }
        let mut sinks = Vec::new();
        for j in 0..l.ops.len() {
            if !has_dep[j] {
                p.requires_all(start[j], cursor);
            }
            if !has_dependent[j] {
                sinks.push(end[j]);
            }
        }
        Ok(sinks)
    }
}

/// The dtype and count a collective of `bytes` bytes of `elem`-byte elements is generated
/// with: the dtype of that size, or bytes (`uint8`) for other sizes.
fn dtype_of(elem: u32, bytes: u64) -> (Dtype, u64) {
    let d = match elem {
        2 => Dtype::Uint16,
        4 => Dtype::Float32,
        8 => Dtype::Float64,
        _ => Dtype::Uint8,
    };
    let s = d.size() as u64;
    if bytes.is_multiple_of(s) {
        (d, bytes / s)
    } else {
        (Dtype::Uint8, bytes)
    }
}
