//! The reference interpreter and race check: a small sequential interpreter written for these
//! tests (not the crate's simulator) that runs a schedule with concrete values in the postal
//! model, and a static check that no two ops of a rank race on a buffer.

use super::*;
use hypercuboid_core::units::{per_byte, Time};
use rustc_hash::FxHashMap as HashMap;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// When a send completes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Protocol {
    /// At its message's arrival, matched or not.
    Eager,
    /// At its message's arrival or its receive's posting, whichever is later.
    Rendezvous,
}

pub(super) struct Outcome<V> {
    pub outputs: Vec<Vec<V>>,
    pub finish: Time,
}

struct Msg<V> {
    send: (Rank, usize),
    arrival: Time,
    data: Vec<V>,
}

struct Posted {
    rank: Rank,
    op: usize,
    at: Time,
}

struct Buffers<V> {
    input: Vec<V>,
    output: Vec<Option<V>>,
    scratch: Vec<Vec<Option<V>>>,
}

impl<V: Clone> Buffers<V> {
    fn read(&self, s: &Slice) -> Result<Vec<V>, String> {
        let range = s.offset as usize..s.end() as usize;
        match s.slot {
            Slot::Input => Ok(self.input[range].to_vec()),
            Slot::Output => self.output[range]
                .iter()
                .map(|v| v.clone().ok_or_else(|| format!("read of unset {s}")))
                .collect(),
            Slot::Scratch(k) => self.scratch[k as usize][range]
                .iter()
                .map(|v| v.clone().ok_or_else(|| format!("read of unset {s}")))
                .collect(),
        }
    }

    fn write(&mut self, s: &Slice, vals: Vec<V>) {
        let range = s.offset as usize..s.end() as usize;
        let dst = match s.slot {
            Slot::Input => panic!("write to the input"),
            Slot::Output => &mut self.output[range],
            Slot::Scratch(k) => &mut self.scratch[k as usize][range],
        };
        for (d, v) in dst.iter_mut().zip(vals) {
            *d = Some(v);
        }
    }
}

/// Runs `s` in the postal model of `cost` (see its module documentation) with the given
/// inputs and operator. Messages match per (source, destination, tag) in order.
pub(super) fn run<V: Clone>(
    s: &Schedule,
    m: &PostalModel,
    protocol: Protocol,
    input: impl Fn(Rank, u64) -> V,
    combine: impl Fn(&V, &V) -> V,
) -> Result<Outcome<V>, String> {
    execute(s, m, protocol, true, input, combine)
}

/// `α + β·b`: a message of `bytes` from issue to arrival.
fn message(m: &PostalModel, bytes: u64) -> Time {
    m.alpha_r + per_byte(bytes, m.beta)
}

/// `γ·b`: reducing `bytes`.
fn reduction(m: &PostalModel, bytes: u64) -> Time {
    per_byte(bytes, m.gamma)
}

/// The completion time of `s` alone, moving no data.
pub(super) fn time(s: &Schedule, m: &PostalModel) -> Result<Time, String> {
    Ok(execute(s, m, Protocol::Eager, false, |_, _| (), |_, _| ())?.finish)
}

fn execute<V: Clone>(
    s: &Schedule,
    m: &PostalModel,
    protocol: Protocol,
    with_data: bool,
    input: impl Fn(Rank, u64) -> V,
    combine: impl Fn(&V, &V) -> V,
) -> Result<Outcome<V>, String> {
    let n = s.nranks();
    let count = if with_data { s.meta().count } else { 0 };
    let esize = s.elem_size();
    let mut bufs: Vec<Buffers<V>> = (0..n)
        .map(|r| Buffers {
            input: (0..count).map(|e| input(r, e)).collect(),
            output: vec![None; count as usize],
            scratch: s
                .rank(r)
                .shape
                .scratch
                .iter()
                .map(|&len| vec![None; len as usize])
                .collect(),
        })
        .collect();
    let mut waiting: Vec<Vec<usize>> = (0..n)
        .map(|r| {
            let v = s.rank(r);
            (0..v.len()).map(|i| v.deps(i).len()).collect()
        })
        .collect();
    let mut done = 0u64;
    let mut nic_free = vec![0 as Time; n as usize];
    // (time, sequence, rank, op, received data)
    let mut heap: BinaryHeap<Reverse<(Time, u64, Rank, usize)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut delivered: HashMap<(Rank, usize), Vec<V>> = HashMap::default();
    let mut in_flight: HashMap<(Rank, Rank, i32), VecDeque<Msg<V>>> = HashMap::default();
    let mut posted: HashMap<(Rank, Rank, i32), VecDeque<Posted>> = HashMap::default();
    let mut ready: Vec<(Rank, usize, Time)> = Vec::new();
    for r in 0..n {
        for (i, w) in waiting[r as usize].iter().enumerate() {
            if *w == 0 {
                ready.push((r, i, 0));
            }
        }
    }
    let mut finish: Time = 0;
    loop {
        // Start every ready op; ops ready at the same time start in program order.
        ready.sort_unstable_by_key(|&(r, i, t)| Reverse((t, r, i)));
        while let Some((r, i, t)) = ready.pop() {
            let v = s.rank(r);
            let op = v.op(i);
            let mut push = |t: Time, r: Rank, i: usize| {
                seq += 1;
                heap.push(Reverse((t, seq, r, i)));
            };
            match op.kind {
                OpKind::Send { peer, tag, data } => {
                    let slice = data.slice().ok_or("a send without data")?;
                    let bytes = data.bytes(esize);
                    let issue = t.max(nic_free[r as usize]);
                    let arrival = issue + message(m, bytes);
                    nic_free[r as usize] = arrival;
                    let msg = Msg {
                        send: (r, i),
                        arrival,
                        data: if with_data {
                            bufs[r as usize].read(&slice)?
                        } else {
                            Vec::new()
                        },
                    };
                    let key = (r, peer, tag);
                    if let Some(p) = posted.get_mut(&key).and_then(|q| q.pop_front()) {
                        let fused = recv_is_fused(s, p.rank, p.op);
                        let extra = if fused { reduction(m, bytes) } else { 0 };
                        push(p.at.max(arrival) + extra, p.rank, p.op);
                        push(arrival.max(p.at), r, i);
                        delivered.insert((p.rank, p.op), msg.data);
                    } else {
                        if protocol == Protocol::Eager {
                            push(arrival, r, i);
                        }
                        in_flight.entry(key).or_default().push_back(msg);
                    }
                }
                OpKind::Recv {
                    peer, tag, data, ..
                } => {
                    let key = (peer, r, tag);
                    if let Some(msg) = in_flight.get_mut(&key).and_then(|q| q.pop_front()) {
                        let extra = if recv_is_fused(s, r, i) {
                            reduction(m, data.bytes(esize))
                        } else {
                            0
                        };
                        push(t.max(msg.arrival) + extra, r, i);
                        if protocol == Protocol::Rendezvous {
                            push(t.max(msg.arrival), msg.send.0, msg.send.1);
                        }
                        delivered.insert((r, i), msg.data);
                    } else {
                        posted.entry(key).or_default().push_back(Posted {
                            rank: r,
                            op: i,
                            at: t,
                        });
                    }
                }
                OpKind::Reduce { src, .. } => {
                    push(t + reduction(m, src.len * esize as u64), r, i);
                }
                OpKind::Copy { .. } | OpKind::Pack { .. } | OpKind::Unpack { .. } => push(t, r, i),
                OpKind::Compute { time } | OpKind::Sleep { time } => push(t + time, r, i),
            }
        }
        // Complete the next op.
        let Some(Reverse((t, _, r, i))) = heap.pop() else {
            break;
        };
        finish = finish.max(t);
        done += 1;
        let v = s.rank(r);
        let b = &mut bufs[r as usize];
        let kind = if with_data {
            v.op(i).kind
        } else {
            OpKind::Sleep { time: 0 }
        };
        let mut taken = match v.op(i).kind {
            OpKind::Recv { .. } => delivered.remove(&(r, i)),
            _ => None,
        };
        match kind {
            OpKind::Recv {
                data,
                combine: c,
                operand,
                ..
            } => {
                let slice = data.slice().unwrap();
                // the local operand of a fused receive: `operand`, or the destination
                let local = operand.unwrap_or(slice);
                let incoming = taken.take().unwrap();
                let vals = match c {
                    Combine::Assign => incoming,
                    Combine::Before => {
                        let cur = b.read(&local)?;
                        incoming
                            .iter()
                            .zip(&cur)
                            .map(|(x, y)| combine(x, y))
                            .collect()
                    }
                    Combine::After => {
                        let cur = b.read(&local)?;
                        cur.iter()
                            .zip(&incoming)
                            .map(|(x, y)| combine(x, y))
                            .collect()
                    }
                };
                b.write(&slice, vals);
            }
            OpKind::Reduce {
                src,
                dst,
                combine: c,
            } => {
                let a = b.read(&src)?;
                let d = b.read(&dst)?;
                let vals = match c {
                    Combine::Before => a.iter().zip(&d).map(|(x, y)| combine(x, y)).collect(),
                    _ => d.iter().zip(&a).map(|(x, y)| combine(x, y)).collect(),
                };
                b.write(&dst, vals);
            }
            OpKind::Copy { src, dst } => {
                let vals = b.read(&src)?;
                b.write(&dst, vals);
            }
            _ => {}
        }
        for &(j, _) in v.dependents(i) {
            let w = &mut waiting[r as usize][j as usize];
            *w -= 1;
            if *w == 0 {
                ready.push((r, j as usize, t));
            }
        }
    }
    if done != s.total_ops() {
        for r in 0..n {
            for (i, w) in waiting[r as usize].iter().enumerate() {
                if *w > 0 {
                    return Err(format!(
                        "deadlock: {} of {} ops completed; rank {r} op {i} ({}) waits",
                        done,
                        s.total_ops(),
                        s.rank(r).op(i)
                    ));
                }
            }
        }
        return Err(format!(
            "deadlock: {} of {} ops completed (a message never matched)",
            done,
            s.total_ops()
        ));
    }
    if let Some(q) = in_flight.values().find(|q| !q.is_empty()) {
        return Err(format!("unreceived message from {:?}", q[0].send));
    }
    let outputs = bufs
        .into_iter()
        .enumerate()
        .map(|(r, b)| {
            b.output
                .into_iter()
                .enumerate()
                .map(|(e, v)| v.ok_or_else(|| format!("rank {r} output {e} never written")))
                .collect::<Result<Vec<V>, String>>()
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Outcome { outputs, finish })
}

fn recv_is_fused(s: &Schedule, r: Rank, i: usize) -> bool {
    matches!(
        s.rank(r).op(i).kind,
        OpKind::Recv { combine, .. } if combine != Combine::Assign
    )
}

/// Buffer accesses of an op: (slice, writes).
fn accesses(kind: &OpKind) -> Vec<(Slice, bool)> {
    match *kind {
        OpKind::Send { data, .. } => data.slice().map(|s| (s, false)).into_iter().collect(),
        OpKind::Recv { data, operand, .. } => data
            .slice()
            .map(|s| (s, true))
            .into_iter()
            .chain(operand.map(|o| (o, false)))
            .collect(),
        OpKind::Reduce { src, dst, .. } | OpKind::Copy { src, dst } => {
            vec![(src, false), (dst, true)]
        }
        _ => vec![],
    }
}

/// Every two ops of a rank that touch a common element, at least one writing it, must be
/// ordered by a chain of `requires` (one completes before the other starts). Dependencies
/// must point to earlier ops.
pub(super) fn races(s: &Schedule) -> Result<(), String> {
    for r in 0..s.nranks() {
        let p = s.program(r);
        let n = p.len();
        let words = n.div_ceil(64);
        let mut before = vec![0u64; n * words];
        for (a, d) in &p.deps {
            let (a, on) = (*a as usize, d.on as usize);
            if on >= a {
                return Err(format!("rank {r}: op {a} depends on later op {on}"));
            }
            if d.kind != DepKind::Requires {
                continue;
            }
            for w in 0..words {
                before[a * words + w] |= before[on * words + w];
            }
            before[a * words + on / 64] |= 1 << (on % 64);
        }
        let ordered = |a: usize, b: usize| before[b * words + a / 64] >> (a % 64) & 1 == 1;
        // Sweep the accesses of each buffer in offset order, comparing each with the
        // earlier ones that still overlap it.
        let mut acc: Vec<(Slice, bool, usize)> = Vec::new();
        for (i, o) in p.ops.iter().enumerate() {
            for (sl, w) in accesses(&o.kind) {
                if sl.len > 0 {
                    acc.push((sl, w, i));
                }
            }
        }
        acc.sort_by_key(|(sl, _, _)| (sl.slot, sl.offset));
        let mut open: Vec<(Slice, bool, usize)> = Vec::new();
        for &(sl, w, j) in &acc {
            open.retain(|(o, _, _)| o.slot == sl.slot && o.end() > sl.offset);
            for &(o, wo, i) in &open {
                if (w || wo) && i != j && !ordered(i.min(j), i.max(j)) {
                    let (a, b) = (i.min(j), i.max(j));
                    return Err(format!(
                        "rank {r}: ops {a} ({}) and {b} ({}) touch {} unordered",
                        p.ops[a], p.ops[b], o
                    ));
                }
            }
            open.push((sl, w, j));
        }
    }
    Ok(())
}
