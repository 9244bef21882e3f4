//! Bindings of hypercuboid_core::schedule: the `Schedule` class and its constructors.

use std::sync::Arc;

use hypercuboid_core::schedule::{Combine, DepKind, OpKind, Schedule, Slice, Slot};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{error, Kind};

/// A schedule held in Rust memory. Python's `hypercuboid.Schedule` wraps it.
#[pyclass(name = "Schedule", module = "hypercuboid._core", frozen)]
pub struct PySchedule {
    pub(crate) inner: Arc<Schedule>,
}

impl PySchedule {
    pub(crate) fn new(s: Schedule) -> PySchedule {
        PySchedule { inner: Arc::new(s) }
    }

    fn check_rank(&self, rank: i64) -> PyResult<u32> {
        let n = self.inner.nranks();
        if rank < 0 || rank >= n as i64 {
            return Err(error(
                Kind::Schedule,
                format!("rank {rank} is not in the schedule (ranks 0..{})", n - 1),
            ));
        }
        Ok(rank as u32)
    }
}

/// Slot code used in program columns: 0 input, 1 output, 2 + k scratch k, -1 none.
fn slot_code(s: Slot) -> i32 {
    match s {
        Slot::Input => 0,
        Slot::Output => 1,
        Slot::Scratch(k) => 2 + k as i32,
    }
}

fn combine_code(c: Combine) -> i8 {
    match c {
        Combine::Assign => 0,
        Combine::Before => 1,
        Combine::After => 2,
    }
}

#[pymethods]
impl PySchedule {
    /// Number of ranks.
    #[getter]
    fn nranks(&self) -> u32 {
        self.inner.nranks()
    }

    /// Number of ops over all ranks.
    #[getter]
    fn total_ops(&self) -> u64 {
        self.inner.total_ops()
    }

    /// Number of distinct per-rank program shapes stored.
    #[getter]
    fn num_shapes(&self) -> usize {
        self.inner.num_shapes()
    }

    /// Approximate heap bytes of the schedule.
    #[getter]
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }

    /// `{collective, count, dtype, op, name, elem_size}`.
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.inner.meta();
        let d = PyDict::new(py);
        d.set_item("collective", m.collective.name())?;
        d.set_item("count", m.count)?;
        d.set_item("dtype", m.dtype.name())?;
        d.set_item("op", m.op.name())?;
        d.set_item("name", &m.name)?;
        d.set_item("elem_size", m.elem_size())?;
        Ok(d)
    }

    /// Rank `rank`'s ops in readable form, one line each, with their dependencies.
    fn program_text(&self, rank: i64) -> PyResult<Vec<String>> {
        let r = self.check_rank(rank)?;
        let v = self.inner.rank(r);
        let mut lines = Vec::with_capacity(v.len());
        for i in 0..v.len() {
            let mut line = format!("{i:>4}: {}", v.op(i));
            let deps = v.deps(i);
            if !deps.is_empty() {
                let list: Vec<String> = deps
                    .iter()
                    .map(|d| match d.kind {
                        DepKind::Requires => d.on.to_string(),
                        DepKind::IRequires => format!("{}(start)", d.on),
                    })
                    .collect();
                line.push_str(&format!("   after {}", list.join(", ")));
            }
            lines.push(line);
        }
        Ok(lines)
    }

    /// Rank `rank`'s program as columns (NumPy arrays), for the MPI back end.
    ///
    /// Per op: `kind` (0 send, 1 recv, 2 reduce, 3 copy, 4 compute, 5 sleep), `peer` (-1 none or
    /// any), `tag`, `bytes`, `combine` (0 assign, 1 incoming ⊕ dst, 2 dst ⊕ incoming), `cpu`,
    /// `nic`, `time_ps`; the data slice (`buf_slot`, `buf_offset`, `buf_len`: the sent or
    /// received slice, or the destination of a reduce/copy; slot 0 input, 1 output, 2+k
    /// scratch k, -1 none) and the source of a reduce/copy or the local operand of a fused
    /// receive (`src_*`; a fused receive without one reduces into `buf_*` in place). `deps` is a flat list of
    /// `(op, on, kind)` with kind 0 = requires, 1 = irequires. `scratch` lists the elements each
    /// scratch buffer needs.
    fn program<'py>(&self, py: Python<'py>, rank: i64) -> PyResult<Bound<'py, PyDict>> {
        let r = self.check_rank(rank)?;
        let v = self.inner.rank(r);
        let es = self.inner.elem_size();
        let n = v.len();
        let mut kind = Vec::with_capacity(n);
        let mut peer = Vec::with_capacity(n);
        let mut tag = Vec::with_capacity(n);
        let mut bytes = Vec::with_capacity(n);
        let mut combine = Vec::with_capacity(n);
        let mut cpu = Vec::with_capacity(n);
        let mut nic = Vec::with_capacity(n);
        let mut time = Vec::with_capacity(n);
        let mut buf = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut src = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut deps: Vec<(u32, u32, u8)> = Vec::new();
        for i in 0..n {
            let op = v.op(i);
            let (k, p, t, c, tm, b, s) = match op.kind {
                OpKind::Send { peer, tag, data } => {
                    (0u8, peer, tag, Combine::Assign, 0, data.slice(), None)
                }
                OpKind::Recv {
                    peer,
                    tag,
                    data,
                    combine,
                    operand,
                } => (1, peer, tag, combine, 0, data.slice(), operand),
                OpKind::Reduce { src, dst, combine } => {
                    (2, u32::MAX, 0, combine, 0, Some(dst), Some(src))
                }
                OpKind::Copy { src, dst } => {
                    (3, u32::MAX, 0, Combine::Assign, 0, Some(dst), Some(src))
                }
                OpKind::Compute { time } => (4, u32::MAX, 0, Combine::Assign, time, None, None),
                OpKind::Sleep { time } => (5, u32::MAX, 0, Combine::Assign, time, None, None),
            };
            kind.push(k);
            peer.push(if p == u32::MAX { -1i64 } else { p as i64 });
            tag.push(t);
            bytes.push(op.bytes(es));
            combine.push(combine_code(c));
            cpu.push(op.cpu);
            nic.push(op.nic);
            time.push(tm);
            let push = |col: &mut (Vec<i32>, Vec<u64>, Vec<u64>), s: Option<Slice>| match s {
                Some(s) => {
                    col.0.push(slot_code(s.slot));
                    col.1.push(s.offset);
                    col.2.push(s.len);
                }
                None => {
                    col.0.push(-1);
                    col.1.push(0);
                    col.2.push(0);
                }
            };
            push(&mut buf, b);
            push(&mut src, s);
            for d in v.deps(i) {
                let dk = match d.kind {
                    DepKind::Requires => 0,
                    DepKind::IRequires => 1,
                };
                deps.push((i as u32, d.on, dk));
            }
        }
        let d = PyDict::new(py);
        d.set_item("kind", kind.into_pyarray(py))?;
        d.set_item("peer", peer.into_pyarray(py))?;
        d.set_item("tag", tag.into_pyarray(py))?;
        d.set_item("bytes", bytes.into_pyarray(py))?;
        d.set_item("combine", combine.into_pyarray(py))?;
        d.set_item("cpu", cpu.into_pyarray(py))?;
        d.set_item("nic", nic.into_pyarray(py))?;
        d.set_item("time_ps", time.into_pyarray(py))?;
        d.set_item("buf_slot", buf.0.into_pyarray(py))?;
        d.set_item("buf_offset", buf.1.into_pyarray(py))?;
        d.set_item("buf_len", buf.2.into_pyarray(py))?;
        d.set_item("src_slot", src.0.into_pyarray(py))?;
        d.set_item("src_offset", src.1.into_pyarray(py))?;
        d.set_item("src_len", src.2.into_pyarray(py))?;
        d.set_item("deps", deps)?;
        d.set_item("scratch", v.shape.scratch.clone())?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "<_core.Schedule {}: {} ranks, {} ops>",
            self.inner.meta().name,
            self.inner.nranks(),
            self.inner.total_ops()
        )
    }
}

/// Adds this module's functions and classes to `hypercuboid._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySchedule>()?;
    Ok(())
}
