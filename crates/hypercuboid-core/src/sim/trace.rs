//! Per-op and per-message traces (columnar) and their Chrome / Perfetto JSON export.

use crate::schedule::Rank;
use crate::units::Time;
use std::fmt;
use std::io::{self, Write};

/// The kind of a traced op: the op-kind code of the schedule's encoding.
pub type TraceKind = crate::schedule::OpCode;

/// What happened to every op and message of a simulation, as columns.
///
/// Op rows are in rank order, each rank's ops in program order (row `Schedule::op_offset(r) + i`
/// is op `i` of rank `r`). An op's `start` is when it started (a receive: when it was posted);
/// its `end` is the later of its completion (when ops that `require` it may go) and the end of
/// the CPU / port time it charged itself. Message rows are in the order messages were sent;
/// `arrival` is when a message first reached its receiver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Rank of each op.
    pub op_rank: Vec<Rank>,
    /// Index of each op in its rank's program.
    pub op_index: Vec<u32>,
    /// Kind of each op.
    pub op_kind: Vec<TraceKind>,
    /// Start time of each op.
    pub op_start: Vec<Time>,
    /// End time of each op.
    pub op_end: Vec<Time>,
    /// CPU index of each op.
    pub op_cpu: Vec<u16>,
    /// Sender of each message.
    pub msg_src: Vec<Rank>,
    /// Receiver of each message.
    pub msg_dst: Vec<Rank>,
    /// Index of the send op in the sender's program.
    pub msg_src_op: Vec<u32>,
    /// Index of the matching receive in the receiver's program.
    pub msg_dst_op: Vec<u32>,
    /// When the send started.
    pub msg_start: Vec<Time>,
    /// When the message reached the receiver.
    pub msg_arrival: Vec<Time>,
    /// Payload bytes.
    pub msg_bytes: Vec<u64>,
}

impl Trace {
    /// Number of op rows.
    pub fn num_ops(&self) -> usize {
        self.op_rank.len()
    }

    /// Number of message rows.
    pub fn num_messages(&self) -> usize {
        self.msg_src.len()
    }
}

/// Picoseconds as microseconds with six decimals (Chrome trace timestamps are µs).
fn us(out: &mut impl Write, t: Time) -> io::Result<()> {
    write!(out, "{}.{:06}", t / 1_000_000, t % 1_000_000)
}

/// The two metadata events of process `pid`: its name and its place (`pid`) in the list.
fn process(out: &mut impl Write, pid: u64, name: impl fmt::Display) -> io::Result<()> {
    write!(
        out,
        "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":\"{name}\"}}}},\n\
         {{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"args\":{{\"sort_index\":{pid}}}}}"
    )
}

/// The phase of a message's flow event at its send, and at its arrival (bound to the
/// enclosing slice).
const FLOW_START: &str = "\"ph\":\"s\"";
const FLOW_END: &str = "\"ph\":\"f\",\"bp\":\"e\"";

/// A flow event of message `m` (`phase`: [`FLOW_START`] or [`FLOW_END`]) on thread `tid` of
/// rank `pid` at `t`, up to its `args`.
fn flow(
    out: &mut impl Write,
    phase: &str,
    m: usize,
    (pid, tid): (Rank, u16),
    t: Time,
) -> io::Result<()> {
    write!(
        out,
        "{{\"name\":\"message\",\"cat\":\"msg\",{phase},\"id\":{m},\"pid\":{pid},\"tid\":{tid},\"ts\":"
    )?;
    us(out, t)
}

/// Writes `trace` as Chrome / Perfetto trace-event JSON: one process per rank (named
/// `rank N`), one thread per CPU index, each op a complete (`X`) event, each message a flow
/// (`s` at the send's start on the sender, `f` at its arrival on the receiver).
pub fn write_chrome_trace(trace: &Trace, out: &mut impl Write) -> io::Result<()> {
    write_chrome_trace_with(trace, &[], out)
}

/// A counter track of a Chrome trace: `name` and its value from each time on.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterTrack {
    /// The track's name (a link: `s0 -> s1`).
    pub name: String,
    /// `(time, value)`: the value holds from that time to the next.
    pub points: Vec<(Time, f64)>,
}

/// [`write_chrome_trace`] with counter tracks (a network run's busiest links, their
/// utilisation over time) in a process of their own after the ranks, named `links`.
pub fn write_chrome_trace_with(
    trace: &Trace,
    counters: &[CounterTrack],
    out: &mut impl Write,
) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    let mut first = true;
    let mut sep = |out: &mut io::BufWriter<_>| -> io::Result<()> {
        if !first {
            out.write_all(b",\n")?;
        }
        first = false;
        Ok(())
    };
    let mut last_rank = None;
    for i in 0..trace.num_ops() {
        let r = trace.op_rank[i];
        if last_rank != Some(r) {
            last_rank = Some(r);
            sep(&mut out)?;
            process(&mut out, r as u64, format_args!("rank {r}"))?;
        }
        sep(&mut out)?;
        let (s, e) = (trace.op_start[i], trace.op_end[i].max(trace.op_start[i]));
        write!(
            out,
            "{{\"name\":\"{}\",\"cat\":\"op\",\"ph\":\"X\",\"pid\":{r},\"tid\":{},\"ts\":",
            trace.op_kind[i].name(),
            trace.op_cpu[i]
        )?;
        us(&mut out, s)?;
        out.write_all(b",\"dur\":")?;
        us(&mut out, e - s)?;
        write!(out, ",\"args\":{{\"op\":{}}}}}", trace.op_index[i])?;
    }
    // First op row of each rank, to find the CPU (thread) of a message's send and receive.
    let mut first_row: Vec<usize> = Vec::new();
    for (i, &r) in trace.op_rank.iter().enumerate() {
        while first_row.len() <= r as usize {
            first_row.push(i);
        }
    }
    // The process and thread of op `op` of rank `rank`: the rank and the op's CPU.
    let thread_of = |rank: Rank, op: u32| -> (Rank, u16) {
        let cpu = first_row
            .get(rank as usize)
            .map(|&f| f + op as usize)
            .filter(|&row| row < trace.num_ops() && trace.op_rank[row] == rank)
            .map_or(0, |row| trace.op_cpu[row]);
        (rank, cpu)
    };
    for m in 0..trace.num_messages() {
        sep(&mut out)?;
        let send = thread_of(trace.msg_src[m], trace.msg_src_op[m]);
        flow(&mut out, FLOW_START, m, send, trace.msg_start[m])?;
        write!(
            out,
            ",\"args\":{{\"bytes\":{},\"src_op\":{}}}}}",
            trace.msg_bytes[m], trace.msg_src_op[m]
        )?;
        sep(&mut out)?;
        let receive = thread_of(trace.msg_dst[m], trace.msg_dst_op[m]);
        flow(&mut out, FLOW_END, m, receive, trace.msg_arrival[m])?;
        write!(out, ",\"args\":{{\"dst_op\":{}}}}}", trace.msg_dst_op[m])?;
    }
    if !counters.is_empty() {
        let pid = trace
            .op_rank
            .iter()
            .copied()
            .max()
            .map_or(0, |r| r as u64 + 1);
        sep(&mut out)?;
        process(&mut out, pid, "links")?;
        for c in counters {
            let name = c.name.replace('\\', "\\\\").replace('"', "\\\"");
            for &(t, v) in &c.points {
                sep(&mut out)?;
                write!(
                    out,
                    "{{\"name\":\"{name}\",\"ph\":\"C\",\"pid\":{pid},\"ts\":"
                )?;
                us(&mut out, t)?;
                write!(out, ",\"args\":{{\"utilisation\":{v:.4}}}}}")?;
            }
        }
    }
    out.write_all(b"\n]}\n")?;
    out.flush()
}
