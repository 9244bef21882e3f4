//! Bindings of hypercuboid_core::schedule: the `Schedule` class and its constructors.

use std::sync::Arc;

use hypercuboid_core::collectives::allreduce::{self, cost, Algorithm, AllreduceSpec};
use hypercuboid_core::model::PostalModel;
use hypercuboid_core::schedule::goal::{self, GoalExportOptions};
use hypercuboid_core::schedule::verify::{self, VerifyOptions};
use hypercuboid_core::schedule::{
    self, Combine, Dep, DepKind, Dtype, Op, OpKind, Program, ReduceOp, Schedule, ScheduleError,
    Slice, Slot,
};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{error, IntoPy, Kind};

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

    /// Rank `rank`'s program as columns (NumPy arrays), for the MPI back end; see
    /// `allreduce_program` for the column layout.
    fn program<'py>(&self, py: Python<'py>, rank: i64) -> PyResult<Bound<'py, PyDict>> {
        let r = self.check_rank(rank)?;
        let v = self.inner.rank(r);
        columns(
            py,
            v.len(),
            |i| v.op(i),
            |i| v.deps(i).to_vec(),
            &v.shape.scratch,
            self.inner.elem_size(),
        )
    }

    /// Verifies the schedule: a dict with `sound`, `problems` (lines), `truncated`,
    /// `semantics` (None or a dict of flags and differences), `stats`, `notes` and `text`.
    #[pyo3(signature = (eager_limit = 0, semantics = true, max_problems = 20))]
    fn verify<'py>(
        &self,
        py: Python<'py>,
        eager_limit: u64,
        semantics: bool,
        max_problems: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let opts = VerifyOptions {
            semantics,
            eager_limit,
            max_problems,
        };
        let s = self.inner.clone();
        let rep = py.detach(move || verify::verify(&s, &opts));
        report_dict(py, &rep)
    }

    /// Simulates the schedule on `model` (a spec string). Returns a dict: `model` (canonical
    /// spec), `completion_ps`, `rank_finish_ps` (uint64 array), `ops`, `messages`, and `trace`
    /// (None, or a dict of NumPy columns); with `chrome_trace` a path, the trace is also written
    /// there as Chrome / Perfetto JSON. The GIL is released while simulating.
    #[pyo3(signature = (model, trace = false, noise = None, seed = 0, chrome_trace = None))]
    fn simulate<'py>(
        &self,
        py: Python<'py>,
        model: &str,
        trace: bool,
        noise: Option<&str>,
        seed: u64,
        chrome_trace: Option<String>,
    ) -> PyResult<Bound<'py, PyDict>> {
        crate::sim::simulate(self, py, model, trace, noise, seed, chrome_trace)
    }

    /// GOAL text (LogGOPSim txt2bin input).
    #[pyo3(signature = (reduce_ns_per_byte = 0.0))]
    fn to_goal(&self, py: Python<'_>, reduce_ns_per_byte: f64) -> PyResult<String> {
        let s = self.inner.clone();
        let out = py.detach(move || {
            let mut out = Vec::new();
            goal::write_goal(&s, &GoalExportOptions { reduce_ns_per_byte }, &mut out).map(|_| out)
        });
        bytes_to_string(out.map_err(|e| error(Kind::Schedule, e.to_string()))?)
    }

    /// The lossless text form.
    fn to_text(&self, py: Python<'_>) -> PyResult<String> {
        let s = self.inner.clone();
        let out = py.detach(move || {
            let mut out = Vec::new();
            goal::write_text(&s, &mut out).map(|_| out)
        });
        bytes_to_string(out.map_err(|e| error(Kind::Schedule, e.to_string()))?)
    }

    /// Writes GOAL text to `path`.
    #[pyo3(signature = (path, reduce_ns_per_byte = 0.0))]
    fn write_goal(&self, py: Python<'_>, path: String, reduce_ns_per_byte: f64) -> PyResult<()> {
        let s = self.inner.clone();
        py.detach(move || {
            write_file(&path, |w| {
                goal::write_goal(&s, &GoalExportOptions { reduce_ns_per_byte }, w)
            })
        })
    }

    /// Writes the lossless text form to `path`.
    fn write_text(&self, py: Python<'_>, path: String) -> PyResult<()> {
        let s = self.inner.clone();
        py.detach(move || write_file(&path, |w| goal::write_text(&s, w)))
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

/// Program columns (see `allreduce_program`).
fn columns<'py>(
    py: Python<'py>,
    n: usize,
    op_at: impl Fn(usize) -> Op,
    deps_at: impl Fn(usize) -> Vec<Dep>,
    scratch: &[u64],
    es: u32,
) -> PyResult<Bound<'py, PyDict>> {
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
        let op = op_at(i);
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
            OpKind::Copy { src, dst } => (3, u32::MAX, 0, Combine::Assign, 0, Some(dst), Some(src)),
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
        for d in &deps_at(i) {
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
    d.set_item("scratch", scratch.to_vec())?;
    Ok(d)
}

fn bytes_to_string(b: Vec<u8>) -> PyResult<String> {
    String::from_utf8(b).map_err(|e| error(Kind::Schedule, e.to_string()))
}

fn write_file(
    path: &str,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> PyResult<()> {
    let io = |e: std::io::Error| error(Kind::Schedule, format!("{path}: {e}"));
    let file = std::fs::File::create(path).map_err(io)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    f(&mut w).map_err(io)?;
    std::io::Write::flush(&mut w).map_err(io)
}

fn report_dict<'py>(py: Python<'py>, rep: &verify::Report) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("sound", rep.is_sound())?;
    let problems: Vec<String> = rep.problems.iter().map(|p| p.to_string()).collect();
    d.set_item("problems", problems)?;
    let kinds: Vec<&str> = rep.problems.iter().map(|p| p.kind()).collect();
    d.set_item("problem_kinds", kinds)?;
    d.set_item("truncated", rep.truncated)?;
    d.set_item("notes", rep.notes.clone())?;
    let st = PyDict::new(py);
    st.set_item("ranks", rep.stats.ranks)?;
    st.set_item("ops", rep.stats.ops)?;
    st.set_item("messages", rep.stats.messages)?;
    st.set_item("bytes", rep.stats.bytes)?;
    d.set_item("stats", st)?;
    match &rep.semantics {
        None => d.set_item("semantics", py.None())?,
        Some(sem) => {
            let m = PyDict::new(py);
            m.set_item("correct", sem.correct)?;
            m.set_item("same_order_commutative", sem.same_order_commutative)?;
            m.set_item("same_order_noncommutative", sem.same_order_noncommutative)?;
            m.set_item("canonical_order", sem.canonical_order)?;
            m.set_item("exact", sem.exact)?;
            let diff = |x: &Option<verify::Difference>| {
                x.as_ref().map(|x| {
                    format!(
                        "rank {} element {}: {}  vs  rank {} element {}: {}",
                        x.a.rank, x.a.element, x.a.expr, x.b.rank, x.b.element, x.b.expr
                    )
                })
            };
            m.set_item(
                "noncommutative_difference",
                diff(&sem.noncommutative_difference),
            )?;
            m.set_item("commutative_difference", diff(&sem.commutative_difference))?;
            m.set_item(
                "noncanonical",
                sem.noncanonical
                    .as_ref()
                    .map(|x| format!("rank {} element {}: {}", x.rank, x.element, x.expr)),
            )?;
            d.set_item("semantics", m)?;
        }
    }
    d.set_item("text", rep.to_string())?;
    Ok(d)
}

fn spec(nranks: i64, count: i64, dtype: &str, op: &str) -> PyResult<AllreduceSpec> {
    if nranks < 1 {
        return Err(error(
            Kind::Schedule,
            format!("invalid number of ranks {nranks}: must be >= 1"),
        ));
    }
    if count < 0 {
        return Err(error(
            Kind::Schedule,
            format!("invalid count {count}: must be >= 0"),
        ));
    }
    if nranks > u32::MAX as i64 {
        return Err(error(
            Kind::Schedule,
            format!(
                "invalid number of ranks {nranks}: at most {}",
                schedule::MAX_RANKS
            ),
        ));
    }
    Ok(AllreduceSpec {
        nranks: nranks as u32,
        count: count as u64,
        dtype: Dtype::parse(dtype).py_err(Kind::Schedule)?,
        op: ReduceOp::parse(op).py_err(Kind::Schedule)?,
    })
}

/// The allreduce schedule of `algorithm` on `nranks` ranks (GIL released while generating).
#[pyfunction(name = "allreduce")]
#[pyo3(signature = (algorithm, nranks, count = 1, dtype = "float64", op = "sum"))]
fn allreduce_schedule(
    py: Python<'_>,
    algorithm: &str,
    nranks: i64,
    count: i64,
    dtype: &str,
    op: &str,
) -> PyResult<PySchedule> {
    let alg = Algorithm::parse(algorithm).py_err(Kind::Schedule)?;
    let sp = spec(nranks, count, dtype, op)?;
    let s = py
        .detach(move || allreduce::generate(&alg, &sp))
        .py_err(Kind::Schedule)?;
    Ok(PySchedule::new(s))
}

/// The program of one rank of an allreduce, built alone (O(its own ops)), as columns:
/// per op `kind` (0 send, 1 recv, 2 reduce, 3 copy, 4 compute, 5 sleep), `peer` (-1 none or
/// any), `tag`, `bytes`, `combine` (0 assign, 1 dst = incoming ⊕ local, 2 dst = local ⊕
/// incoming), `cpu`, `nic`, `time_ps`; `buf_slot/buf_offset/buf_len` (the sent or received
/// slice, or the destination of a reduce/copy; slot 0 input, 1 output, 2+k scratch k, -1 none)
/// and `src_slot/src_offset/src_len` (the source of a reduce/copy, or the local operand of a
/// fused receive — none means the receive reduces into `buf_*` in place); `deps`: a list of
/// `(op, on, kind)`, kind 0 requires (start after completion), 1 irequires (after start);
/// `scratch`: elements each scratch buffer needs.
#[pyfunction]
#[pyo3(signature = (algorithm, nranks, rank, count = 1, dtype = "float64", op = "sum"))]
fn allreduce_program<'py>(
    py: Python<'py>,
    algorithm: &str,
    nranks: i64,
    rank: i64,
    count: i64,
    dtype: &str,
    op: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let alg = Algorithm::parse(algorithm).py_err(Kind::Schedule)?;
    let sp = spec(nranks, count, dtype, op)?;
    if rank < 0 || rank >= nranks {
        return Err(error(
            Kind::Schedule,
            format!("rank {rank} is not in 0..{}", nranks - 1),
        ));
    }
    let mut p = Program::new();
    allreduce::program(&alg, &sp, rank as u32, &mut p).py_err(Kind::Schedule)?;
    p.normalize();
    let scratch = p.scratch_extents();
    columns(
        py,
        p.len(),
        |i| p.ops[i],
        |i| p.deps_of(i as u32).iter().map(|(_, d)| *d).collect(),
        &scratch,
        sp.dtype.size(),
    )
}

/// Names of the allreduce algorithms.
#[pyfunction]
fn allreduce_algorithms() -> Vec<&'static str> {
    Algorithm::NAMES.to_vec()
}

/// Reads GOAL text or the lossless text form.
#[pyfunction]
#[pyo3(signature = (text, name = "<text>"))]
fn parse_schedule(py: Python<'_>, text: String, name: &str) -> PyResult<PySchedule> {
    let name = name.to_string();
    let s = py
        .detach(move || goal::parse(&text, &name))
        .py_err(Kind::Schedule)?;
    Ok(PySchedule::new(s))
}

/// Reads a GOAL file or a file in the lossless text form (streaming).
#[pyfunction]
fn read_schedule(py: Python<'_>, path: String) -> PyResult<PySchedule> {
    let s = py
        .detach(move || {
            let f = std::fs::File::open(&path).map_err(|e| ScheduleError::Io {
                path: path.clone(),
                message: e.to_string(),
            })?;
            goal::parse_reader(std::io::BufReader::with_capacity(1 << 20, f), &path)
        })
        .py_err(Kind::Schedule)?;
    Ok(PySchedule::new(s))
}

/// Closed-form time (picoseconds) of an allreduce in the postal model (`alpha` ps, `beta` and
/// `gamma` ps per byte), where the formula is exact; an error says why where it is not.
#[pyfunction]
#[pyo3(signature = (algorithm, nranks, count, dtype, alpha_ps, beta_ps_per_byte, gamma_ps_per_byte = 0.0))]
fn allreduce_cost(
    algorithm: &str,
    nranks: i64,
    count: i64,
    dtype: &str,
    alpha_ps: u64,
    beta_ps_per_byte: f64,
    gamma_ps_per_byte: f64,
) -> PyResult<u64> {
    let alg = Algorithm::parse(algorithm).py_err(Kind::Schedule)?;
    let sp = spec(nranks, count, dtype, "sum")?;
    let m = PostalModel::postal(alpha_ps, beta_ps_per_byte, gamma_ps_per_byte, 0);
    m.validate().py_err(Kind::Model)?;
    cost::allreduce(&alg, &sp, &m).py_err(Kind::Schedule)
}

/// Adds this module's functions and classes to `hypercuboid._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySchedule>()?;
    m.add_function(wrap_pyfunction!(allreduce_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(allreduce_program, m)?)?;
    m.add_function(wrap_pyfunction!(allreduce_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(allreduce_cost, m)?)?;
    m.add_function(wrap_pyfunction!(parse_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(read_schedule, m)?)?;
    Ok(())
}
