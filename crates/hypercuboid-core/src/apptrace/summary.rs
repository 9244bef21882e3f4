//! [`summary`] (where each rank's time went, the point-to-point matrix) and [`write_chrome`]
//! (the recorded calls as a Chrome / Perfetto trace).

use super::read::AppTrace;
use super::{collective_of, Class, COLLECTIVE_NAMES, PEER_NULL};
use std::io::{self, Write};

/// Where the time of a run went, per rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The categories, in column order: `compute`, `point-to-point`, each collective the
    /// recorder knows (`allreduce`, ...), and `other` (communicator creation).
    pub categories: Vec<String>,
    /// `time[rank][category]` in ns: the time spent in the category's calls (compute: the time
    /// between calls).
    pub time: Vec<Vec<u64>>,
    /// `calls[rank][category]` (compute: the gaps).
    pub calls: Vec<Vec<u64>>,
    /// Each rank's time from `MPI_Init` to `MPI_Finalize` (or its last record), ns.
    pub total: Vec<u64>,
    /// Bytes rank `i` sent to rank `j` point-to-point: `matrix[i * nranks + j]`.
    pub matrix: Vec<u64>,
}

/// Index of the `other` category.
fn other() -> usize {
    2 + COLLECTIVE_NAMES.len()
}

/// The category of a call: 1 point-to-point, 2 + k collective k, `other()` the rest.
fn category(code: u16, class: Class) -> usize {
    match class {
        Class::Send
        | Class::Recv
        | Class::Sendrecv
        | Class::Probe
        | Class::Complete
        | Class::Persistent
        | Class::Start => 1,
        Class::Collective => {
            let name = collective_of(code).unwrap_or("");
            2 + COLLECTIVE_NAMES
                .iter()
                .position(|c| *c == name)
                .unwrap_or(0)
        }
        Class::Bounds | Class::Comm => other(),
    }
}

/// Where the time of `trace` went (see [`Summary`]).
pub fn summary(trace: &AppTrace) -> Summary {
    let n = trace.nranks() as usize;
    let ncat = other() + 1;
    let mut categories = vec!["compute".to_string(), "point-to-point".to_string()];
    categories.extend(COLLECTIVE_NAMES.iter().map(|c| c.to_string()));
    categories.push("other".into());
    let mut s = Summary {
        categories,
        time: vec![vec![0; ncat]; n],
        calls: vec![vec![0; ncat]; n],
        total: vec![0; n],
        matrix: vec![0; n * n],
    };
    for t in &trace.ranks {
        let r = t.rank as usize;
        // communicator id -> world ranks, for the matrix
        let mut comms: Vec<(u32, Vec<u32>)> = vec![
            (super::COMM_WORLD, (0..n as u32).collect()),
            (super::COMM_SELF, vec![t.rank]),
        ];
        // persistent send requests: id -> (communicator, peer, bytes)
        let mut inits: Vec<(u32, u32, i32, u64)> = Vec::new();
        let mut last = 0u64;
        for (i, rec) in t.records.iter().enumerate() {
            if i > 0 && rec.t0 > last {
                s.time[r][0] += rec.t0 - last;
                s.calls[r][0] += 1;
            }
            last = rec.t1;
            if rec.call.code == 1 {
                s.total[r] = rec.t0;
                continue;
            }
            s.total[r] = rec.t1;
            if rec.call.code == 0 {
                continue;
            }
            let c = category(rec.call.code, rec.call.class);
            s.time[r][c] += rec.t1 - rec.t0;
            s.calls[r][c] += 1;
            match rec.call.class {
                Class::Comm if rec.req != super::NO_COMM => {
                    comms.push((rec.req, t.extra_of(rec).iter().map(|&w| w as u32).collect()))
                }
                Class::Persistent if rec.call.code == 26 => {
                    inits.push((rec.req, rec.comm, rec.peer, rec.bytes))
                }
                Class::Start => {
                    for &w in t.extra_of(rec) {
                        if let Some(&(_, comm, peer, bytes)) =
                            inits.iter().rev().find(|x| x.0 == w as u32)
                        {
                            add(&mut s.matrix, n, &comms, r, comm, peer, bytes);
                        }
                    }
                }
                Class::Send | Class::Sendrecv => {
                    add(&mut s.matrix, n, &comms, r, rec.comm, rec.peer, rec.bytes)
                }
                _ => {}
            }
        }
    }
    s
}

/// Adds `bytes` from rank `r` to `peer` of communicator `comm` to the matrix (`n` x `n`).
fn add(
    matrix: &mut [u64],
    n: usize,
    comms: &[(u32, Vec<u32>)],
    r: usize,
    comm: u32,
    peer: i32,
    bytes: u64,
) {
    if peer < 0 || peer == PEER_NULL {
        return;
    }
    let to = comms
        .iter()
        .rev()
        .find(|(id, _)| *id == comm)
        .and_then(|(_, m)| m.get(peer as usize));
    if let Some(&to) = to {
        if (to as usize) < n {
            matrix[r * n + to as usize] += bytes;
        }
    }
}

/// Writes the recorded calls of `trace` as a Chrome / Perfetto JSON trace: one track per rank,
/// each call a complete event (`ph: "X"`, times in µs since `MPI_Init` returned) with its peer,
/// tag, bytes and communicator, and the time between calls as `compute` events.
pub fn write_chrome(trace: &AppTrace, out: &mut impl Write) -> io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    buf.extend_from_slice(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut first = true;
    let us = |ns: u64| format!("{}.{:03}", ns / 1000, ns % 1000);
    for t in &trace.ranks {
        if !first {
            buf.extend_from_slice(b",\n");
        }
        first = false;
        write!(
            buf,
            "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":{r},\"args\":{{\"name\":\"rank {r}\"}}}}",
            r = t.rank
        )?;
        let mut last = 0u64;
        for (i, rec) in t.records.iter().enumerate() {
            if i > 0 && rec.t0 > last {
                write!(
                    buf,
                    ",\n{{\"name\":\"compute\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":0,\"tid\":{},\"ts\":{},\"dur\":{}}}",
                    t.rank,
                    us(last),
                    us(rec.t0 - last)
                )?;
            }
            last = rec.t1;
            write!(
                buf,
                ",\n{{\"name\":\"{}\",\"cat\":\"{:?}\",\"ph\":\"X\",\"pid\":0,\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{\"record\":{i},\"comm\":{},\"peer\":{},\"tag\":{},\"bytes\":{},\"rbytes\":{}}}}}",
                rec.call.name,
                rec.call.class,
                t.rank,
                us(rec.t0),
                us(rec.t1 - rec.t0),
                rec.comm,
                rec.peer,
                rec.tag,
                rec.bytes,
                rec.rbytes
            )?;
            if buf.len() > 1 << 16 {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
    }
    buf.extend_from_slice(b"\n]}\n");
    out.write_all(&buf)?;
    out.flush()
}
