//! [`write_goal`] (strict GOAL that LogGOPSim's `txt2bin` reads) and [`write_text`] (the
//! lossless form). Each rank's text is formatted into a byte buffer that is handed to the
//! writer in large pieces; per-shape work (labels, the GOAL expansion of fused ops) is done once
//! per distinct program shape.

use crate::schedule::{
    Combine, DepKind, Op, OpKind, Payload, Schedule, Shape, Slice, Slot, ANY_SOURCE, ANY_TAG,
};
use crate::units::{per_byte, Time, PS_PER_NS};
use std::io::{self, Write};

/// Options of the lossy export to GOAL.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GoalExportOptions {
    /// Cost of a local reduction (and of a copy) in nanoseconds per byte, written as a `calc`.
    /// Must be finite and >= 0. Default 0.
    pub reduce_ns_per_byte: f64,
}

impl Default for GoalExportOptions {
    fn default() -> Self {
        GoalExportOptions {
            reduce_ns_per_byte: 0.0,
        }
    }
}

const FLUSH_AT: usize = 1 << 16;

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Appends the decimal digits of `v`.
#[inline]
fn num(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// A peer, or `-1` for [`ANY_SOURCE`].
fn peer(buf: &mut Vec<u8>, p: u32) {
    if p == ANY_SOURCE {
        buf.extend_from_slice(b"-1");
    } else {
        num(buf, p as u64);
    }
}

fn tag(buf: &mut Vec<u8>, t: i32, rank: u32, i: usize) -> io::Result<()> {
    if t == ANY_TAG {
        buf.extend_from_slice(b"-1");
    } else if t >= 0 {
        num(buf, t as u64);
    } else {
        return Err(invalid(format!(
            "rank {rank} op {i}: tag {t} cannot be written (tags are 0..{}, or -1 for any)",
            i32::MAX
        )));
    }
    Ok(())
}

/// `send Nb to P tag T` or `recv Nb from P tag T` (`kind`: a send or a receive of elements of
/// `elem` bytes) of op `i` of rank `r`, the words both writers start a message line with.
fn message_head(
    buf: &mut Vec<u8>,
    kind: &OpKind,
    elem: u32,
    (r, i): (u32, usize),
) -> io::Result<()> {
    let (verb, to, p, t, data): (&[u8], &[u8], _, _, _) = match *kind {
        OpKind::Send { peer, tag, data } => (b"send ", b"b to ", peer, tag, data),
        OpKind::Recv {
            peer, tag, data, ..
        } => (b"recv ", b"b from ", peer, tag, data),
        _ => unreachable!("a message head is written for sends and receives only"),
    };
    buf.extend_from_slice(verb);
    num(buf, data.bytes(elem));
    buf.extend_from_slice(to);
    peer(buf, p);
    buf.extend_from_slice(b" tag ");
    tag(buf, t, r, i)
}

fn label(buf: &mut Vec<u8>, l: u32) {
    buf.push(b'l');
    num(buf, l as u64);
}

fn slice(buf: &mut Vec<u8>, s: &Slice) {
    match s.slot {
        Slot::Input => buf.extend_from_slice(b"in"),
        Slot::Output => buf.extend_from_slice(b"out"),
        Slot::Scratch(k) => {
            buf.extend_from_slice(b"scratch");
            num(buf, k as u64);
        }
    }
    buf.push(b'[');
    num(buf, s.offset);
    buf.push(b':');
    num(buf, s.end());
    buf.push(b']');
}

fn deps_lines(buf: &mut Vec<u8>, deps: impl Iterator<Item = (u32, u32, DepKind)>) {
    for (a, on, kind) in deps {
        label(buf, a);
        buf.extend_from_slice(match kind {
            DepKind::Requires => b" requires ",
            DepKind::IRequires => b" irequires ",
        });
        label(buf, on);
        buf.push(b'\n');
    }
}

fn flush_if_full(buf: &mut Vec<u8>, out: &mut impl Write) -> io::Result<()> {
    if buf.len() >= FLUSH_AT {
        out.write_all(buf)?;
        buf.clear();
    }
    Ok(())
}

/// Whole nanoseconds covering `t` picoseconds (rounded up).
fn ceil_ns(t: Time) -> u64 {
    t / PS_PER_NS + u64::from(!t.is_multiple_of(PS_PER_NS))
}

fn fused(op: &Op) -> bool {
    matches!(op.kind, OpKind::Recv { combine, .. } if combine != Combine::Assign)
}

/// One shape as GOAL: where each op lands, which written ops carry labels, the dependency lines.
struct GoalShape {
    /// Index in the written block of op `i` (its `recv` when fused; the `calc` follows).
    out: Vec<u32>,
    /// Per written op: whether a dependency names it.
    labelled: Vec<bool>,
    /// `(a, on, kind)` in written indices, sorted as the parser's normalisation sorts them.
    deps: Vec<(u32, u32, DepKind)>,
    /// Per op: the `calc` time in ns (the op itself, or the reduction after a fused receive).
    calc_ns: Vec<u64>,
}

impl GoalShape {
    fn new(
        shape: &Shape,
        elem_size: u32,
        opts: &GoalExportOptions,
        rank: u32,
    ) -> io::Result<GoalShape> {
        let ps_per_byte = opts.reduce_ns_per_byte * PS_PER_NS as f64;
        let n = shape.len();
        let mut out = Vec::with_capacity(n);
        let mut calc_ns = Vec::with_capacity(n);
        let mut k = 0u32;
        for (i, op) in shape.ops.iter().enumerate() {
            let is_comm = matches!(op.kind, OpKind::Send { .. } | OpKind::Recv { .. });
            if op.cpu > 255 || (is_comm && op.nic > 255) {
                let (what, v) = if op.cpu > 255 {
                    ("cpu", op.cpu)
                } else {
                    ("nic", op.nic)
                };
                return Err(invalid(format!(
                    "rank {rank} op {i}: {what} {v} does not fit GOAL's 8-bit {what} field (0..255)"
                )));
            }
            out.push(k);
            k += 1 + u32::from(fused(op));
            calc_ns.push(match op.kind {
                OpKind::Compute { time } | OpKind::Sleep { time } => ceil_ns(time),
                OpKind::Reduce { .. } | OpKind::Recv { .. } => {
                    ceil_ns(per_byte(op.reduced_bytes(elem_size), ps_per_byte))
                }
                OpKind::Copy { .. } | OpKind::Pack { .. } | OpKind::Unpack { .. } => {
                    ceil_ns(per_byte(op.bytes(elem_size), ps_per_byte))
                }
                OpKind::Send { .. } => 0,
            });
        }
        let mut deps = Vec::with_capacity(shape.deps.len());
        for (i, op) in shape.ops.iter().enumerate() {
            for d in shape.deps(i) {
                let on = &shape.ops[d.on as usize];
                let to_calc = fused(on) && d.kind == DepKind::Requires;
                deps.push((out[i], out[d.on as usize] + u32::from(to_calc), d.kind));
            }
            if fused(op) {
                deps.push((out[i] + 1, out[i], DepKind::Requires));
            }
        }
        deps.sort_unstable();
        deps.dedup();
        let mut labelled = vec![false; k as usize];
        for &(a, on, _) in &deps {
            labelled[a as usize] = true;
            labelled[on as usize] = true;
        }
        Ok(GoalShape {
            out,
            labelled,
            deps,
            calc_ns,
        })
    }
}

fn cpu_clause(buf: &mut Vec<u8>, cpu: u16) {
    if cpu != 0 {
        buf.extend_from_slice(b" cpu ");
        num(buf, cpu as u64);
    }
}

fn nic_clause(buf: &mut Vec<u8>, nic: u16) {
    if nic != 0 {
        buf.extend_from_slice(b" nic ");
        num(buf, nic as u64);
    }
}

/// Writes `s` as GOAL text that LogGOPSim's `txt2bin` accepts. Lossy: see the
/// [module documentation](super) for how reductions, copies, sleeps and fused receive-reduce ops
/// are mapped, and for what is refused ([`io::ErrorKind::InvalidInput`]).
pub fn write_goal(s: &Schedule, opts: &GoalExportOptions, out: &mut impl Write) -> io::Result<()> {
    if !opts.reduce_ns_per_byte.is_finite() || opts.reduce_ns_per_byte < 0.0 {
        return Err(invalid(format!(
            "reduce_ns_per_byte {} is invalid: expected a finite number >= 0",
            opts.reduce_ns_per_byte
        )));
    }
    let elem = s.elem_size();
    let mut cache: Vec<Option<GoalShape>> = (0..s.num_shapes()).map(|_| None).collect();
    let mut buf = Vec::with_capacity(FLUSH_AT + 4096);
    buf.extend_from_slice(b"num_ranks ");
    num(&mut buf, s.nranks() as u64);
    buf.push(b'\n');
    for r in 0..s.nranks() {
        let si = s.shape_index(r);
        if cache[si].is_none() {
            cache[si] = Some(GoalShape::new(&s.shapes()[si], elem, opts, r)?);
        }
        let g = cache[si].as_ref().expect("filled above");
        let v = s.rank(r);
        buf.extend_from_slice(b"\nrank ");
        num(&mut buf, r as u64);
        buf.extend_from_slice(b" {\n");
        for i in 0..v.len() {
            let op = v.op(i);
            let o = g.out[i];
            if g.labelled[o as usize] {
                label(&mut buf, o);
                buf.extend_from_slice(b": ");
            }
            match op.kind {
                OpKind::Send { .. } | OpKind::Recv { .. } => {
                    message_head(&mut buf, &op.kind, elem, (r, i))?;
                    cpu_clause(&mut buf, op.cpu);
                    nic_clause(&mut buf, op.nic);
                    if matches!(op.kind, OpKind::Recv { combine, .. } if combine != Combine::Assign)
                    {
                        buf.push(b'\n');
                        label(&mut buf, o + 1);
                        buf.extend_from_slice(b": calc ");
                        num(&mut buf, g.calc_ns[i]);
                        cpu_clause(&mut buf, op.cpu);
                    }
                }
                _ => {
                    buf.extend_from_slice(b"calc ");
                    num(&mut buf, g.calc_ns[i]);
                    cpu_clause(&mut buf, op.cpu);
                }
            }
            buf.push(b'\n');
            flush_if_full(&mut buf, out)?;
        }
        deps_lines(&mut buf, g.deps.iter().copied());
        buf.extend_from_slice(b"}\n");
        flush_if_full(&mut buf, out)?;
    }
    out.write_all(&buf)?;
    out.flush()
}

/// `name` quoted with the escapes the parser reads.
fn quoted(buf: &mut Vec<u8>, name: &str) {
    buf.push(b'"');
    for ch in name.chars() {
        match ch {
            '\\' => buf.extend_from_slice(b"\\\\"),
            '"' => buf.extend_from_slice(b"\\\""),
            '\n' => buf.extend_from_slice(b"\\n"),
            '\r' => buf.extend_from_slice(b"\\r"),
            '\t' => buf.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                buf.extend_from_slice(format!("\\x{:02x}", c as u32).as_bytes());
            }
            c => {
                let mut tmp = [0u8; 4];
                buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
            }
        }
    }
    buf.push(b'"');
}

/// A time: whole ns as a bare number (`calc`'s GOAL unit) or with `ns`, else in `ps`.
fn time(buf: &mut Vec<u8>, t: Time, bare_ns: bool) {
    if t.is_multiple_of(PS_PER_NS) {
        num(buf, t / PS_PER_NS);
        if !bare_ns {
            buf.extend_from_slice(b"ns");
        }
    } else {
        num(buf, t);
        buf.extend_from_slice(b"ps");
    }
}

fn data_clause(buf: &mut Vec<u8>, data: &Payload) {
    if let Payload::Data(s) = data {
        buf.extend_from_slice(b" data ");
        slice(buf, s);
    }
}

/// Writes `s` in the lossless text form (see the [module documentation](super)), which
/// [`super::parse`] reads back to an equal schedule. Refuses ([`io::ErrorKind::InvalidInput`])
/// send tags below −1, which the text cannot express.
pub fn write_text(s: &Schedule, out: &mut impl Write) -> io::Result<()> {
    let meta = s.meta();
    let elem = s.elem_size();
    let mut buf = Vec::with_capacity(FLUSH_AT + 4096);
    buf.extend_from_slice(b"num_ranks ");
    num(&mut buf, s.nranks() as u64);
    buf.extend_from_slice(b"\ncollective ");
    buf.extend_from_slice(meta.collective.name().as_bytes());
    buf.extend_from_slice(b" count ");
    num(&mut buf, meta.count);
    buf.extend_from_slice(b" dtype ");
    buf.extend_from_slice(meta.dtype.name().as_bytes());
    if let Some(op) = meta.op() {
        buf.extend_from_slice(b" op ");
        buf.extend_from_slice(op.name().as_bytes());
    }
    if let Some(block) = meta.collective.block() {
        buf.extend_from_slice(b" block ");
        num(&mut buf, block);
    }
    buf.extend_from_slice(b"\nname ");
    quoted(&mut buf, &meta.name);
    buf.push(b'\n');
    let mut labels: Vec<Option<Vec<bool>>> = (0..s.num_shapes()).map(|_| None).collect();
    for r in 0..s.nranks() {
        let si = s.shape_index(r);
        let shape = &s.shapes()[si];
        let labelled = labels[si].get_or_insert_with(|| {
            let mut l = vec![false; shape.len()];
            for i in 0..shape.len() {
                for d in shape.deps(i) {
                    l[i] = true;
                    l[d.on as usize] = true;
                }
            }
            l
        });
        let v = s.rank(r);
        buf.extend_from_slice(b"\nrank ");
        num(&mut buf, r as u64);
        buf.extend_from_slice(b" {\n");
        for (i, &is_labelled) in labelled.iter().enumerate() {
            let op = v.op(i);
            if is_labelled {
                label(&mut buf, i as u32);
                buf.extend_from_slice(b": ");
            }
            match &op.kind {
                OpKind::Send { data, .. } | OpKind::Recv { data, .. } => {
                    message_head(&mut buf, &op.kind, elem, (r, i))?;
                    data_clause(&mut buf, data);
                    if let OpKind::Recv {
                        combine, operand, ..
                    } = &op.kind
                    {
                        match combine {
                            Combine::Assign => {}
                            Combine::Before => buf.extend_from_slice(b" reduce before"),
                            Combine::After => buf.extend_from_slice(b" reduce after"),
                        }
                        if let Some(o) = operand {
                            buf.extend_from_slice(b" with ");
                            slice(&mut buf, o);
                        }
                    }
                }
                OpKind::Reduce { src, dst, combine } => {
                    buf.extend_from_slice(b"reduce ");
                    slice(&mut buf, src);
                    buf.extend_from_slice(b" into ");
                    slice(&mut buf, dst);
                    buf.extend_from_slice(match combine {
                        Combine::Before => b" before",
                        Combine::After => b" after",
                        Combine::Assign => {
                            return Err(invalid(format!(
                                "rank {r} op {i}: a reduce that assigns cannot be written"
                            )))
                        }
                    });
                }
                OpKind::Copy { src, dst } => {
                    buf.extend_from_slice(b"copy ");
                    slice(&mut buf, src);
                    buf.extend_from_slice(b" to ");
                    slice(&mut buf, dst);
                }
                OpKind::Pack { .. } | OpKind::Unpack { .. } => {
                    return Err(invalid(format!(
                        "rank {r} op {i}: the lossless text has no syntax for {} (a 3-D region \
                         of a halo exchange's lattice); export the schedule as GOAL (sizes only)",
                        op.name()
                    )))
                }
                OpKind::Compute { time: t } => {
                    buf.extend_from_slice(b"calc ");
                    time(&mut buf, *t, true);
                }
                OpKind::Sleep { time: t } => {
                    buf.extend_from_slice(b"sleep ");
                    time(&mut buf, *t, false);
                }
            }
            cpu_clause(&mut buf, op.cpu);
            nic_clause(&mut buf, op.nic);
            buf.push(b'\n');
            flush_if_full(&mut buf, out)?;
        }
        deps_lines(
            &mut buf,
            (0..shape.len())
                .flat_map(|i| shape.deps(i).iter().map(move |d| (i as u32, d.on, d.kind))),
        );
        buf.extend_from_slice(b"}\n");
        flush_if_full(&mut buf, out)?;
    }
    out.write_all(&buf)?;
    out.flush()
}
