//! [`convert`]: an application trace to a schedule (docs/trace.md, "Conversion").
//!
//! Three passes. The first resolves each rank's records into events with world ranks and tags
//! of their own (communicator ranks through the recorded groups; a wildcard receive takes the
//! source and tag its status gave; each (communicator, tag) and each collective call's
//! messages get distinct schedule tags, so that matching is MPI's). The second matches: the
//! k-th receive of (source, destination, tag) takes the k-th send's size, every member of a
//! communicator makes the same collectives; what does not match is an error naming its record,
//! or, converting a partial trace, where the ranks are cut. The third writes each rank's
//! program: compute gaps as `compute` ops, every op after the last completion point (program
//! order), a non-blocking call's ops completed where the application waited for them, each
//! collective expanded by a registered algorithm or a default ([`super::expand`]).

use super::build::Build;
use super::read::{AppTrace, RankTrace, Record};
use super::{collective_of, Class, TraceError, COMM_SELF, COMM_WORLD, NO_COMM, PEER_ANY};
use super::{PEER_NONE, PEER_NULL};
use crate::collectives::allreduce::Allreduce;
use crate::collectives::alltoall::Alltoall;
use crate::collectives::library::Library;
use crate::collectives::registry;
use crate::schedule::{Meta, Schedule, ScheduleBuilder};
use crate::units::{Time, PS_PER_NS};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// How a trace becomes a schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvertOptions {
    /// Compute gaps are multiplied by this (0.5: a CPU twice as fast). Finite, >= 0.
    pub compute_scale: f64,
    /// The allreduce algorithm (a registry spec); `None`: [`DEFAULT_ALLREDUCE`].
    pub allreduce: Option<String>,
    /// The alltoall algorithm; `None`: [`DEFAULT_ALLTOALL`].
    pub alltoall: Option<String>,
    /// Cost of a local reduction in ns per byte (a `compute` op in the collectives). Finite,
    /// >= 0.
    pub reduce_ns_per_byte: f64,
    /// Convert a trace whose ranks stop before `MPI_Finalize` up to where they stop.
    pub partial: bool,
    /// The schedule's name.
    pub name: String,
    /// Expand each allreduce and alltoall whose algorithm is not given as the recorded MPI
    /// library would run it ([`crate::collectives::library`]: Open MPI or MPICH, from the
    /// trace's library string).
    pub library: bool,
}

/// The allreduce algorithm a conversion uses unless told otherwise.
pub const DEFAULT_ALLREDUCE: &str = "recursive_doubling";
/// The alltoall algorithm a conversion uses unless told otherwise.
pub const DEFAULT_ALLTOALL: &str = "linear_shifted";

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            compute_scale: 1.0,
            allreduce: None,
            alltoall: None,
            reduce_ns_per_byte: 0.0,
            partial: false,
            name: "trace".into(),
            library: false,
        }
    }
}

/// A converted trace.
#[derive(Clone, Debug)]
pub struct Converted {
    /// The schedule (sizes only: sends, receives and compute ops).
    pub schedule: Schedule,
    /// Records converted (every rank's, up to where it was cut).
    pub records: u64,
    /// For a partial trace: where the ranks stop and where the conversion cut them.
    pub note: Option<String>,
    /// The run's measured time: the latest `MPI_Finalize` entry (or last return) of any rank.
    pub measured: Time,
}

/// A key of the schedule tags: (communicator, collective call or `P2P`, tag).
pub(super) type TagKey = (u32, u64, i32);
const P2P: u64 = u64::MAX;

/// A rank's resolved call.
#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    /// Compute for this many ns (before scaling).
    Gap(u64),
    /// A send; `req` 0 blocking, `u32::MAX` the send half of a Sendrecv.
    Send {
        to: u32,
        tag: i32,
        bytes: u64,
        req: u32,
    },
    /// A receive; `req` 0 blocking.
    Recv { from: u32, tag: i32, req: u32 },
    /// Requests completed: `len` ids from `at` in the rank's pool.
    Done { at: u32, len: u32 },
    /// A collective: the record holds the rest.
    Coll { gid: u32, seq: u32 },
}

pub(super) struct Resolved {
    pub(super) evs: Vec<(Ev, u32)>, // the event and its record number
    pub(super) pool: Vec<u32>,
}

/// The communicators of the run, shared by every rank that belongs to each.
#[derive(Default)]
pub(super) struct Comms {
    pub(super) members: Vec<Arc<[u32]>>,
    pub(super) by_key: FxHashMap<(Arc<[u32]>, u32), u32>,
}

pub(super) fn rec_err(t: &RankTrace, i: usize, reason: String) -> TraceError {
    TraceError::Record {
        rank: t.rank,
        record: i as u64,
        call: t.records[i].call.name.into(),
        reason,
    }
}

/// Converts `trace` to a schedule (see the module documentation).
pub fn convert(trace: &AppTrace, opts: &ConvertOptions) -> Result<Converted, TraceError> {
    for (name, v) in [
        ("compute_scale", opts.compute_scale),
        ("reduce_ns_per_byte", opts.reduce_ns_per_byte),
    ] {
        if !v.is_finite() || v < 0.0 {
            return Err(TraceError::Schedule(
                crate::schedule::ScheduleError::BadParameter {
                    name: name.into(),
                    value: v.to_string(),
                    reason: "expected a finite number >= 0".into(),
                },
            ));
        }
    }
    let ar = registry::parse::<Allreduce>(opts.allreduce.as_deref().unwrap_or(DEFAULT_ALLREDUCE))?;
    let aa = registry::parse::<Alltoall>(opts.alltoall.as_deref().unwrap_or(DEFAULT_ALLTOALL))?;
    let library = if opts.library {
        let l = trace.library().to_ascii_lowercase();
        let lib = if l.contains("open mpi") {
            Library::OpenMpi
        } else if l.contains("mpich") {
            Library::Mpich
        } else {
            return Err(TraceError::File {
                what: format!(
                    "the trace's MPI library '{}' is neither Open MPI nor MPICH: no selector \
                     knows what it runs; name the algorithms (--allreduce, --alltoall)",
                    trace.library()
                ),
            });
        };
        Some((lib, opts.allreduce.is_none(), opts.alltoall.is_none()))
    } else {
        None
    };
    if !trace.complete() && !opts.partial {
        let stops: Vec<&str> = trace
            .ranks
            .iter()
            .filter_map(|r| r.stop.as_deref())
            .collect();
        return Err(TraceError::Partial {
            detail: stops.join("; "),
        });
    }
    let n = trace.nranks();
    let mut comms = Comms::default();
    let mut tags: FxHashMap<TagKey, i32> = FxHashMap::default();
    let mut res = Vec::with_capacity(n as usize);
    for t in &trace.ranks {
        res.push(resolve(t, &mut comms, &mut tags)?);
        crate::cancel::check()?;
    }
    let mut cut: Vec<usize> = res.iter().map(|r| r.evs.len()).collect();
    let sizes = matching(trace, &res, &comms, &mut cut, opts.partial)?;
    let mut note = None;
    if !trace.complete() {
        let stops: Vec<&str> = trace
            .ranks
            .iter()
            .filter_map(|r| r.stop.as_deref())
            .collect();
        let cuts: Vec<String> = res
            .iter()
            .zip(&cut)
            .enumerate()
            .filter(|(_, (x, &c))| c < x.evs.len())
            .map(|(r, (x, &c))| {
                let rec = x.evs[c].1 as usize;
                let call = trace.ranks[r].records[rec].call.name;
                format!("up to record {rec} ({call}) on rank {r}")
            })
            .collect();
        note = Some(format!(
            "partial trace: {}; converted {}",
            stops.join("; "),
            if cuts.is_empty() {
                "every record".to_string()
            } else {
                format!("{}, whole on the other ranks", cuts.join(", "))
            }
        ));
    }
    let reduce_ns = opts.reduce_ns_per_byte;
    let reduce = move |b: u64| -> Time { ((b as f64 * reduce_ns).ceil() as u64) * PS_PER_NS };
    let mut b = ScheduleBuilder::new(n as u64, Meta::sizes_only(opts.name.clone()))?;
    let mut build = Build {
        reduce: &reduce,
        ar,
        aa,
        library,
        cache: FxHashMap::default(),
        tags,
        sizes,
        scale: opts.compute_scale,
    };
    let mut records = 0u64;
    for (r, t) in trace.ranks.iter().enumerate() {
        let mut p = build.program(t, &res[r], cut[r], &comms)?;
        records += match res[r].evs.get(cut[r]) {
            Some(&(_, rec)) => rec as u64,
            None => t.records.len() as u64,
        };
        b.push(&mut p)?;
        crate::cancel::check()?;
    }
    let measured = trace
        .ranks
        .iter()
        .filter_map(|t| {
            t.records
                .last()
                .map(|l| if l.call.code == 1 { l.t0 } else { l.t1 })
        })
        .max()
        .unwrap_or(0)
        * PS_PER_NS;
    Ok(Converted {
        schedule: b.finish()?,
        records,
        note,
        measured,
    })
}

/// Pass 1: one rank's events.
fn resolve(
    t: &RankTrace,
    comms: &mut Comms,
    tags: &mut FxHashMap<TagKey, i32>,
) -> Result<Resolved, TraceError> {
    let n = t.nranks;
    // this rank's communicators: local id -> global id
    let mut local: FxHashMap<u32, u32> = FxHashMap::default();
    let mut seen: FxHashMap<Arc<[u32]>, u32> = FxHashMap::default();
    let mut add = |members: Arc<[u32]>, comms: &mut Comms| -> u32 {
        let k = seen.entry(members.clone()).or_insert(0);
        let key = (members.clone(), *k);
        *k += 1;
        let next = comms.members.len() as u32;
        let gid = *comms.by_key.entry(key).or_insert(next);
        if gid == next {
            comms.members.push(members);
        }
        gid
    };
    local.insert(COMM_WORLD, add((0..n).collect(), comms));
    local.insert(COMM_SELF, add(Arc::from([t.rank]), comms));
    // completions of requests: id -> (source, tag) from the status
    let mut done: FxHashMap<u32, (i32, i32)> = FxHashMap::default();
    for r in &t.records {
        if r.call.class == Class::Complete {
            for w in t.extra_of(r).chunks_exact(3) {
                done.insert(
                    w[0] as u32,
                    ((w[0] >> 32) as u32 as i32, w[1] as u32 as i32),
                );
            }
        }
    }
    let mut seq: FxHashMap<u32, u32> = FxHashMap::default();
    // persistent requests: id -> the record that created it
    let mut inits: FxHashMap<u32, usize> = FxHashMap::default();
    let mut out = Resolved {
        evs: Vec::with_capacity(t.records.len() * 2),
        pool: Vec::new(),
    };
    let mut last_t1 = 0u64;
    let ntags = |tags: &FxHashMap<TagKey, i32>| tags.len();
    for (i, r) in t.records.iter().enumerate() {
        let i32i = i as u32;
        if i > 0 && r.t0 > last_t1 {
            out.evs.push((Ev::Gap(r.t0 - last_t1), i32i));
        }
        last_t1 = r.t1;
        let class = r.call.class;
        if matches!(class, Class::Bounds | Class::Probe) {
            continue;
        }
        let gid = match local.get(&r.comm) {
            Some(&g) => g,
            None => {
                return Err(rec_err(
                    t,
                    i,
                    format!(
                        "communicator {} was never created in this trace (only \
                         MPI_COMM_WORLD, MPI_COMM_SELF and those of MPI_Comm_dup, _split, \
                         _create and _split_type are known)",
                        r.comm
                    ),
                ))
            }
        };
        let members = comms.members[gid as usize].clone();
        let world = |p: i32, what: &str| -> Result<u32, TraceError> {
            members.get(p as usize).copied().ok_or_else(|| {
                rec_err(
                    t,
                    i,
                    format!(
                        "{what} {p} is not a rank of its communicator ({} ranks)",
                        members.len()
                    ),
                )
            })
        };
        let mut tag_of = |app: i32| -> Result<i32, TraceError> {
            let next = ntags(tags) as i32;
            if next == i32::MAX {
                return Err(rec_err(t, i, "more than 2^31 - 1 distinct tags".into()));
            }
            Ok(*tags.entry((gid, P2P, app)).or_insert(next))
        };
        match class {
            Class::Persistent => {
                inits.insert(r.req, i);
            }
            Class::Start => {
                for &w in t.extra_of(r) {
                    let (p, a) = (w as u32, (w >> 32) as u32);
                    let Some(&j) = inits.get(&p) else { continue };
                    let ir = &t.records[j];
                    let g = *local.get(&ir.comm).expect("checked at its init");
                    let ms = &comms.members[g as usize];
                    let send = ir.call.code == 26;
                    let (peer, tag) = if send {
                        (ir.peer, ir.tag)
                    } else {
                        let (src, mtag) = done.get(&a).copied().unwrap_or((PEER_NONE, -1));
                        (
                            if ir.peer == PEER_ANY { src } else { ir.peer },
                            if ir.tag < 0 { mtag } else { ir.tag },
                        )
                    };
                    if peer == PEER_NULL {
                        continue;
                    }
                    let Some(&w) = ms.get(peer as usize).filter(|_| peer >= 0 && tag >= 0) else {
                        return Err(rec_err(
                            t,
                            i,
                            format!(
                                "the request of record {j} ({}) has peer {peer}, tag {tag}: not \
                                 a rank of its communicator ({} ranks) and a tag, or a wildcard \
                                 receive that never completed",
                                ir.call.name,
                                ms.len()
                            ),
                        ));
                    };
                    let next = ntags(tags) as i32;
                    let tag = *tags.entry((g, P2P, tag)).or_insert(next);
                    let ev = if send {
                        Ev::Send {
                            to: w,
                            tag,
                            bytes: ir.bytes,
                            req: a.max(1),
                        }
                    } else {
                        Ev::Recv {
                            from: w,
                            tag,
                            req: a.max(1),
                        }
                    };
                    out.evs.push((ev, i32i));
                }
            }
            Class::Send | Class::Sendrecv => {
                if r.peer != PEER_NULL {
                    let to = world(r.peer, "destination")?;
                    let req = if class == Class::Sendrecv {
                        u32::MAX
                    } else if r.call.nonblocking {
                        r.req.max(1)
                    } else {
                        0
                    };
                    let tag = tag_of(r.tag)?;
                    out.evs.push((
                        Ev::Send {
                            to,
                            tag,
                            bytes: r.bytes,
                            req,
                        },
                        i32i,
                    ));
                }
                if class == Class::Sendrecv {
                    let w = t.extra_of(r).first().copied().unwrap_or(0);
                    let (src, rtag) = (w as u32 as i32, (w >> 32) as u32 as i32);
                    let from = if src == PEER_ANY { r.src } else { src };
                    let tag = if rtag < 0 { r.mtag } else { rtag };
                    if from != PEER_NULL {
                        let from = world(from, "source")?;
                        let tag = tag_of(tag)?;
                        out.evs.push((Ev::Recv { from, tag, req: 0 }, i32i));
                    }
                }
            }
            Class::Recv => {
                let (src, mtag) = if r.call.nonblocking {
                    done.get(&r.req).copied().unwrap_or((PEER_NONE, -1))
                } else {
                    (r.src, r.mtag)
                };
                let from = if r.peer == PEER_ANY { src } else { r.peer };
                let tag = if r.tag < 0 { mtag } else { r.tag };
                if from == PEER_NULL {
                    continue;
                }
                if from < 0 || tag < 0 {
                    return Err(rec_err(
                        t,
                        i,
                        "a wildcard receive that never completed: its source and tag are not \
                         known"
                            .into(),
                    ));
                }
                let from = world(from, "source")?;
                let tag = tag_of(tag)?;
                let req = if r.call.nonblocking { r.req.max(1) } else { 0 };
                out.evs.push((Ev::Recv { from, tag, req }, i32i));
            }
            Class::Complete => {
                let at = out.pool.len() as u32;
                for w in t.extra_of(r).chunks_exact(3) {
                    out.pool.push(w[0] as u32);
                }
                let len = out.pool.len() as u32 - at;
                if len > 0 {
                    out.evs.push((Ev::Done { at, len }, i32i));
                }
            }
            Class::Collective => {
                let s = seq.entry(gid).or_insert(0);
                out.evs.push((Ev::Coll { gid, seq: *s }, i32i));
                *s += 1;
                if collective_of(r.call.code).is_none() {
                    return Err(rec_err(t, i, "not a collective".into()));
                }
            }
            Class::Comm => {
                // a collective of the parent: replayed as its barrier (build.rs)
                let s = seq.entry(gid).or_insert(0);
                out.evs.push((Ev::Coll { gid, seq: *s }, i32i));
                *s += 1;
                if r.req != NO_COMM {
                    let ws: Arc<[u32]> = t.extra_of(r).iter().map(|&w| w as u32).collect();
                    if !ws.contains(&t.rank) || ws.iter().any(|&w| w >= n) {
                        return Err(rec_err(
                            t,
                            i,
                            format!("its group {ws:?} does not hold this rank {}", t.rank),
                        ));
                    }
                    let g = add(ws, comms);
                    local.insert(r.req, g);
                }
            }
            Class::Bounds | Class::Probe => {}
        }
    }
    Ok(out)
}

/// The record of event `e` of rank `r`.
fn record_of<'a>(trace: &'a AppTrace, res: &[Resolved], r: usize, e: usize) -> &'a Record {
    &trace.ranks[r].records[res[r].evs[e].1 as usize]
}

/// Pass 2: the size of every receive (by rank, in event order) from the send it matches;
/// unmatched sends, receives and collectives are errors, or, for a partial trace, cuts.
fn matching(
    trace: &AppTrace,
    res: &[Resolved],
    comms: &Comms,
    cut: &mut [usize],
    partial: bool,
) -> Result<Vec<Vec<u64>>, TraceError> {
    loop {
        // sends in order per (from, to, tag)
        let mut sends: FxHashMap<(u32, u32, i32), Vec<(u64, u32)>> = FxHashMap::default();
        for (r, x) in res.iter().enumerate() {
            for (e, (ev, _)) in x.evs[..cut[r]].iter().enumerate() {
                if let Ev::Send { to, tag, bytes, .. } = *ev {
                    sends
                        .entry((r as u32, to, tag))
                        .or_default()
                        .push((bytes, e as u32));
                }
            }
        }
        let mut taken: FxHashMap<(u32, u32, i32), usize> = FxHashMap::default();
        let mut sizes = vec![Vec::new(); res.len()];
        let mut again = false;
        for (r, x) in res.iter().enumerate() {
            for e in 0..cut[r] {
                if let Ev::Recv { from, tag, .. } = x.evs[e].0 {
                    let key = (from, r as u32, tag);
                    let k = taken.entry(key).or_insert(0);
                    match sends.get(&key).and_then(|v| v.get(*k)) {
                        Some(&(bytes, _)) => sizes[r].push(bytes),
                        None if partial => {
                            cut[r] = e;
                            again = true;
                            break;
                        }
                        None => {
                            let rec = record_of(trace, res, r, e);
                            return Err(rec_err(
                                &trace.ranks[r],
                                x.evs[e].1 as usize,
                                format!(
                                    "unmatched receive: rank {from} sends nothing more to rank \
                                     {r} with tag {} on this communicator",
                                    if rec.tag < 0 { rec.mtag } else { rec.tag }
                                ),
                            ));
                        }
                    }
                    *k += 1;
                }
            }
        }
        for (key, v) in &sends {
            let k = taken.get(key).copied().unwrap_or(0);
            if k < v.len() {
                let (r, e) = (key.0 as usize, v[k].1 as usize);
                if partial {
                    cut[r] = cut[r].min(e);
                    again = true;
                } else {
                    return Err(rec_err(
                        &trace.ranks[r],
                        res[r].evs[e].1 as usize,
                        format!("unmatched send: rank {} receives nothing more of it", key.1),
                    ));
                }
            }
        }
        if !again {
            again = collectives(trace, res, comms, cut, partial)?;
        }
        if !again {
            return Ok(sizes);
        }
    }
}

/// Every member of a communicator makes its collectives in the same order, with the same
/// call and root; returns whether a partial trace was cut further.
fn collectives(
    trace: &AppTrace,
    res: &[Resolved],
    comms: &Comms,
    cut: &mut [usize],
    partial: bool,
) -> Result<bool, TraceError> {
    // per communicator: per member, its collective events
    let mut by: FxHashMap<u32, FxHashMap<u32, Vec<usize>>> = FxHashMap::default();
    for (r, x) in res.iter().enumerate() {
        for (e, (ev, _)) in x.evs[..cut[r]].iter().enumerate() {
            if let Ev::Coll { gid, .. } = *ev {
                by.entry(gid)
                    .or_default()
                    .entry(r as u32)
                    .or_default()
                    .push(e);
            }
        }
    }
    let mut cutmore = false;
    for (gid, per) in &by {
        let members = &comms.members[*gid as usize];
        let least = members
            .iter()
            .map(|w| per.get(w).map_or(0, |v| v.len()))
            .min()
            .unwrap_or(0);
        for &w in members.iter() {
            let v = per.get(&w).map_or(&[][..], |v| v.as_slice());
            if v.len() > least {
                let (r, e) = (w as usize, v[least]);
                if partial {
                    cut[r] = cut[r].min(e);
                    cutmore = true;
                    continue;
                }
                let missing = members
                    .iter()
                    .find(|m| per.get(m).map_or(0, |v| v.len()) == least)
                    .copied()
                    .unwrap_or(0);
                return Err(rec_err(
                    &trace.ranks[r],
                    res[r].evs[e].1 as usize,
                    format!(
                        "collective {} of its communicator (ranks {}) is not made by rank \
                         {missing}, which makes {least}",
                        least + 1,
                        list(members)
                    ),
                ));
            }
        }
        // the same call and root at each position
        let first = members[0];
        if least == 0 {
            continue;
        }
        for &w in members.iter().skip(1) {
            for (k, (&ea, &e)) in per[&first].iter().zip(&per[&w]).enumerate() {
                let a = record_of(trace, res, first as usize, ea);
                let b = record_of(trace, res, w as usize, e);
                let (ca, cb) = (collective_of(a.call.code), collective_of(b.call.code));
                if ca != cb || a.peer != b.peer {
                    return Err(rec_err(
                        &trace.ranks[w as usize],
                        res[w as usize].evs[e].1 as usize,
                        format!(
                            "rank {first} makes {} (root {}) as collective {} of this \
                             communicator, this rank {} (root {})",
                            a.call.name,
                            a.peer,
                            k + 1,
                            b.call.name,
                            b.peer
                        ),
                    ));
                }
            }
        }
    }
    Ok(cutmore)
}

fn list(ws: &[u32]) -> String {
    if ws.len() > 8 {
        format!("{} .. {}, {} in all", ws[0], ws[ws.len() - 1], ws.len())
    } else {
        ws.iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }
}
