//! Bindings of hypercuboid_core::schedule: the `Schedule` class and its constructors.

use std::sync::Arc;

use hypercuboid_core::collectives::allreduce::{self, cost, Algorithm, AllreduceSpec};
use hypercuboid_core::collectives::alltoall::{self, AlltoallSpec};
use hypercuboid_core::collectives::registry::{self, Needs};
use hypercuboid_core::model::PostalModel;
use hypercuboid_core::network::NetParams;
use hypercuboid_core::schedule::goal::{self, GoalExportOptions};
use hypercuboid_core::schedule::verify::{self, VerifyOptions};
use hypercuboid_core::schedule::{
    self, CExport, CExportOptions, Columns, DepKind, Dtype, Program, ReduceOp, Schedule,
    ScheduleError,
};
use hypercuboid_core::units::Time;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{error, PyResultExt};
use crate::program::PyProgram;

/// A schedule held in Rust memory. Python's `hypercuboid.Schedule` wraps it.
#[derive(Debug)]
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
                "ScheduleError",
                format!("rank {rank} is not in the schedule (ranks 0..{})", n - 1),
            ));
        }
        Ok(rank as u32)
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

    /// Sends of each rank's program (a uint32 per rank).
    fn sends_per_rank<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<u32>> {
        use numpy::IntoPyArray;
        let s = &self.inner;
        let per_shape: Vec<u32> = s
            .shapes()
            .iter()
            .map(|sh| {
                sh.ops
                    .iter()
                    .filter(|o| matches!(o.kind, schedule::OpKind::Send { .. }))
                    .count() as u32
            })
            .collect();
        (0..s.nranks())
            .map(|r| per_shape[s.shape_index(r)])
            .collect::<Vec<u32>>()
            .into_pyarray(py)
    }

    /// Approximate heap bytes of the schedule.
    #[getter]
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }

    /// `{collective, count, dtype, op, name, elem_size}` (`op` None for a collective that
    /// does not reduce), for an alltoall `block`, the elements per pair of ranks, and for a
    /// halo exchange `halo`: `{lattice, dims, periodic, values, stencil}`.
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.inner.meta();
        let d = PyDict::new(py);
        d.set_item("collective", m.collective.name())?;
        d.set_item("count", m.count)?;
        d.set_item("dtype", m.dtype.name())?;
        d.set_item("op", m.op().map(|o| o.name()))?;
        if let Some(block) = m.collective.block() {
            d.set_item("block", block)?;
        }
        if let Some(h) = m.collective.halo() {
            let x = PyDict::new(py);
            let dc = h.decomp;
            x.set_item("lattice", (dc.lattice[0], dc.lattice[1], dc.lattice[2]))?;
            x.set_item("dims", (dc.dims[0], dc.dims[1], dc.dims[2]))?;
            x.set_item("periodic", (dc.periodic[0], dc.periodic[1], dc.periodic[2]))?;
            x.set_item("values", h.values)?;
            x.set_item("stencil", h.stencil.name())?;
            d.set_item("halo", x)?;
        }
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

    /// Rank `rank`'s program as columns, for the MPI back end, checked against the schedule's
    /// buffers.
    fn program(&self, rank: i64) -> PyResult<PyProgram> {
        let r = self.check_rank(rank)?;
        let cols = Columns::of_rank(&self.inner.rank(r), self.inner.elem_size());
        PyProgram::checked(
            cols,
            r,
            self.inner.nranks(),
            self.inner.meta().rank_buffer_lens(r),
        )
    }

    /// Verifies the schedule: a dict with `sound`, `problems` (lines), `truncated`,
    /// `semantics` (None or a dict of flags and differences), `stats`, `notes` and `text`.
    #[pyo3(signature = (
        eager_limit = VerifyOptions::default().eager_limit,
        semantics = VerifyOptions::default().semantics,
        max_problems = VerifyOptions::default().max_problems,
        threads = VerifyOptions::default().threads,
    ))]
    fn verify<'py>(
        &self,
        py: Python<'py>,
        eager_limit: u64,
        semantics: bool,
        max_problems: usize,
        threads: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let opts = VerifyOptions {
            semantics,
            eager_limit,
            max_problems,
            threads,
        };
        let s = self.inner.clone();
        let rep = py.detach(move || verify::verify(&s, &opts));
        report_dict(py, &rep)
    }

    /// Simulates the schedule on `model` (a spec string). Returns a dict: `model` (canonical
    /// spec), `completion_ps`, `rank_finish_ps` (uint64 array), `ops`, `messages`, and `trace`
    /// (None, or a dict of NumPy columns); with `chrome_trace` a path, the trace is also written
    /// there as Chrome / Perfetto JSON. `calls` runs the schedule that many times back to back
    /// (no barrier between runs). `threads`: threads to simulate on (0: every core for
    /// schedules of 2^19 ops or more, else one); the results are the same for any number. The
    /// GIL is released while simulating.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (model, trace = false, noise = None, seed = 0, chrome_trace = None, calls = 1, threads = 0))]
    fn simulate<'py>(
        &self,
        py: Python<'py>,
        model: &str,
        trace: bool,
        noise: Option<&str>,
        seed: u64,
        chrome_trace: Option<String>,
        calls: u32,
        threads: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        crate::sim::simulate(
            self,
            py,
            model,
            trace,
            noise,
            seed,
            chrome_trace,
            calls,
            threads,
        )
    }

    /// Simulates the schedule on a network (see `sim::simulate_network`).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (
        topology,
        model = None,
        routing = "min",
        level = "packet",
        mapping = "linear",
        mapping_endpoints = None,
        ranks_per_endpoint = 1,
        nic = "fifo",
        seed = NetParams::default().seed,
        packet_bytes = NetParams::default().packet_bytes,
        buffer_bytes = NetParams::default().buffer_bytes,
        switch_latency_ps = NetParams::default().switch_latency,
        watchdog_ps = NetParams::default().watchdog,
        threads = 1,
        trace = false,
        chrome_trace = None,
        records = false,
        sample_links = false,
        calls = 1,
        noise = None,
    ))]
    fn simulate_network<'py>(
        &self,
        py: Python<'py>,
        topology: &crate::topology::PyTopology,
        model: Option<&str>,
        routing: &str,
        level: &str,
        mapping: &str,
        mapping_endpoints: Option<Vec<u32>>,
        ranks_per_endpoint: u32,
        nic: &str,
        seed: u64,
        packet_bytes: u32,
        buffer_bytes: u64,
        switch_latency_ps: Time,
        watchdog_ps: Time,
        threads: usize,
        trace: bool,
        chrome_trace: Option<String>,
        records: bool,
        sample_links: bool,
        calls: u32,
        noise: Option<&str>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let params = crate::network::params(
            seed,
            packet_bytes,
            buffer_bytes,
            switch_latency_ps,
            watchdog_ps,
            threads,
        );
        crate::sim::simulate_network(
            self,
            py,
            topology,
            model,
            routing,
            level,
            mapping,
            mapping_endpoints,
            ranks_per_endpoint,
            nic,
            params,
            trace,
            chrome_trace,
            records,
            sample_links,
            calls,
            noise,
        )
    }

    /// GOAL text (LogGOPSim txt2bin input).
    #[pyo3(signature = (reduce_ns_per_byte = 0.0))]
    fn to_goal(&self, py: Python<'_>, reduce_ns_per_byte: f64) -> PyResult<String> {
        let s = self.inner.clone();
        let out = py.detach(move || {
            let mut out = Vec::new();
            goal::write_goal(&s, &GoalExportOptions { reduce_ns_per_byte }, &mut out).map(|_| out)
        });
        bytes_to_string(out.map_err(|e| error("ScheduleError", e.to_string()))?)
    }

    /// The lossless text form.
    fn to_text(&self, py: Python<'_>) -> PyResult<String> {
        let s = self.inner.clone();
        let out = py.detach(move || {
            let mut out = Vec::new();
            goal::write_text(&s, &mut out).map(|_| out)
        });
        bytes_to_string(out.map_err(|e| error("ScheduleError", e.to_string()))?)
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

    /// The schedule as one self-contained C file: an MPI routine named `name` (default
    /// `hc_<collective>`) that runs it (docs/native.md, section 2).
    #[pyo3(signature = (name = None))]
    fn to_c(&self, py: Python<'_>, name: Option<&str>) -> PyResult<String> {
        let s = self.inner.clone();
        let opts = c_options(&s, name);
        let out = py.detach(move || {
            let e = CExport::new(&s, &opts)?;
            let mut out = Vec::new();
            e.write(&mut out).map_err(|e| ScheduleError::Io {
                path: "<memory>".into(),
                message: e.to_string(),
            })?;
            Ok::<_, ScheduleError>(out)
        });
        bytes_to_string(out.py()?)
    }

    /// Writes the C file of `to_c(name)` to `path`; what cannot be exported is refused
    /// before the file is created.
    #[pyo3(signature = (path, name = None))]
    fn write_c(&self, py: Python<'_>, path: String, name: Option<&str>) -> PyResult<()> {
        let s = self.inner.clone();
        let opts = c_options(&s, name);
        py.detach(move || {
            let e = CExport::new(&s, &opts).py()?;
            write_file(&path, |w| e.write(w))
        })
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

/// The C export's options: `name`, or the core's default for the schedule.
fn c_options(s: &Schedule, name: Option<&str>) -> CExportOptions {
    match name {
        Some(n) => CExportOptions::new(n),
        None => CExportOptions::for_schedule(s),
    }
}

fn bytes_to_string(b: Vec<u8>) -> PyResult<String> {
    String::from_utf8(b).map_err(|e| error("ScheduleError", e.to_string()))
}

fn write_file(
    path: &str,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> PyResult<()> {
    let io = |e: std::io::Error| error("ScheduleError", format!("{path}: {e}"));
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
            m.set_item("reduces", sem.reduces)?;
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
            "ScheduleError",
            format!("invalid number of ranks {nranks}: must be >= 1"),
        ));
    }
    if count < 0 {
        return Err(error(
            "ScheduleError",
            format!("invalid count {count}: must be >= 0"),
        ));
    }
    if nranks > u32::MAX as i64 {
        return Err(error(
            "ScheduleError",
            format!(
                "invalid number of ranks {nranks}: at most {}",
                schedule::MAX_RANKS
            ),
        ));
    }
    Ok(AllreduceSpec {
        nranks: nranks as u32,
        count: count as u64,
        dtype: Dtype::parse(dtype).py()?,
        op: ReduceOp::parse(op).py()?,
    })
}

/// The allreduce schedule of `algorithm` on `nranks` ranks (GIL released while generating).
#[pyfunction(name = "allreduce")]
#[pyo3(signature = (
    algorithm,
    nranks,
    count = allreduce::DEFAULT_COUNT as i64,
    dtype = allreduce::DEFAULT_DTYPE.name(),
    op = allreduce::DEFAULT_OP.name(),
))]
fn allreduce_schedule(
    py: Python<'_>,
    algorithm: &str,
    nranks: i64,
    count: i64,
    dtype: &str,
    op: &str,
) -> PyResult<PySchedule> {
    let alg = Algorithm::parse(algorithm).py()?;
    let sp = spec(nranks, count, dtype, op)?;
    let s = py.detach(move || allreduce::generate(&alg, &sp)).py()?;
    Ok(PySchedule::new(s))
}

/// The program of one rank of an allreduce, built alone (O(its own ops)), as a `Program`
/// (the columns of `hypercuboid_core::schedule::columns`).
#[pyfunction]
#[pyo3(signature = (
    algorithm,
    nranks,
    rank,
    count = allreduce::DEFAULT_COUNT as i64,
    dtype = allreduce::DEFAULT_DTYPE.name(),
    op = allreduce::DEFAULT_OP.name(),
))]
fn allreduce_program(
    algorithm: &str,
    nranks: i64,
    rank: i64,
    count: i64,
    dtype: &str,
    op: &str,
) -> PyResult<PyProgram> {
    let alg = Algorithm::parse(algorithm).py()?;
    let sp = spec(nranks, count, dtype, op)?;
    if rank < 0 || rank >= nranks {
        return Err(error(
            "ScheduleError",
            format!("rank {rank} is not in 0..{}", nranks - 1),
        ));
    }
    let mut p = Program::new();
    allreduce::program(&alg, &sp, rank as u32, &mut p).py()?;
    let cols = Columns::of_program(&p, sp.dtype.size());
    PyProgram::checked(cols, rank as u32, sp.nranks, (sp.count, sp.count))
}

/// Checks the rank count and element count of a binding call.
fn sizes(nranks: i64, count: i64) -> PyResult<(u32, u64)> {
    if nranks < 1 {
        return Err(error(
            "ScheduleError",
            format!("invalid number of ranks {nranks}: must be >= 1"),
        ));
    }
    if count < 0 {
        return Err(error(
            "ScheduleError",
            format!("invalid count {count}: must be >= 0"),
        ));
    }
    if nranks > schedule::MAX_RANKS as i64 {
        return Err(error(
            "ScheduleError",
            format!(
                "invalid number of ranks {nranks}: at most {}",
                schedule::MAX_RANKS
            ),
        ));
    }
    Ok((nranks as u32, count as u64))
}

fn alltoall_spec(nranks: i64, count: i64, dtype: &str) -> PyResult<AlltoallSpec> {
    let (n, c) = sizes(nranks, count)?;
    Ok(AlltoallSpec::new(n, c, Dtype::parse(dtype).py()?))
}

/// The alltoall schedule of `algorithm` on `nranks` ranks, `count` elements per rank pair
/// (GIL released while generating).
#[pyfunction(name = "alltoall")]
#[pyo3(signature = (
    algorithm,
    nranks,
    count = alltoall::DEFAULT_COUNT as i64,
    dtype = alltoall::DEFAULT_DTYPE.name(),
))]
fn alltoall_schedule(
    py: Python<'_>,
    algorithm: &str,
    nranks: i64,
    count: i64,
    dtype: &str,
) -> PyResult<PySchedule> {
    let alg = alltoall::Algorithm::parse(algorithm).py()?;
    let sp = alltoall_spec(nranks, count, dtype)?;
    let s = py.detach(move || alltoall::generate(&alg, &sp)).py()?;
    Ok(PySchedule::new(s))
}

/// The program of one rank of an alltoall, built alone (O(its own ops)), as a `Program`.
#[pyfunction]
#[pyo3(signature = (
    algorithm,
    nranks,
    rank,
    count = alltoall::DEFAULT_COUNT as i64,
    dtype = alltoall::DEFAULT_DTYPE.name(),
))]
fn alltoall_program(
    algorithm: &str,
    nranks: i64,
    rank: i64,
    count: i64,
    dtype: &str,
) -> PyResult<PyProgram> {
    let alg = alltoall::Algorithm::parse(algorithm).py()?;
    let sp = alltoall_spec(nranks, count, dtype)?;
    if rank < 0 || rank >= nranks {
        return Err(error(
            "ScheduleError",
            format!("rank {rank} is not in 0..{}", nranks - 1),
        ));
    }
    let mut p = Program::new();
    alltoall::program(&alg, &sp, rank as u32, &mut p).py()?;
    let cols = Columns::of_program(&p, sp.dtype.size());
    let len = sp.buffer_len().expect("validated by program");
    PyProgram::checked(cols, rank as u32, sp.nranks, (len, len))
}

/// Names of the allreduce algorithms.
#[pyfunction]
fn allreduce_algorithms() -> Vec<&'static str> {
    allreduce::ALGORITHMS.iter().map(|e| e.form.name).collect()
}

/// Every collective and its algorithms, from the registry: a list of
/// `{name, summary, algorithms}`, each algorithm `{name, aliases, summary, keys: [(key,
/// help)], positional (None or what it is), example, needs_topology, cost (None or the
/// formula), guarantees: {property: when}}`.
#[pyfunction]
fn collectives<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for c in registry::COLLECTIVES {
        let d = PyDict::new(py);
        d.set_item("name", c.name)?;
        d.set_item("summary", c.summary)?;
        let algs = PyList::empty(py);
        for a in (c.algorithms)() {
            let x = PyDict::new(py);
            x.set_item("name", a.form.name)?;
            x.set_item("aliases", a.form.aliases.to_vec())?;
            x.set_item("summary", a.form.summary)?;
            x.set_item(
                "keys",
                a.form
                    .keys
                    .iter()
                    .map(|k| (k.name, k.help))
                    .collect::<Vec<_>>(),
            )?;
            x.set_item("positional", a.form.positional_name())?;
            x.set_item("usage", a.form.usage())?;
            x.set_item("example", a.form.example)?;
            x.set_item("needs_topology", a.needs == Needs::Topology)?;
            x.set_item("cost", a.cost)?;
            let g = PyDict::new(py);
            for (p, when) in &a.guarantees {
                g.set_item(p.name(), *when)?;
            }
            x.set_item("guarantees", g)?;
            algs.append(x)?;
        }
        d.set_item("algorithms", algs)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Reads GOAL text or the lossless text form.
#[pyfunction]
#[pyo3(signature = (text, name = "<text>"))]
fn parse_schedule(py: Python<'_>, text: String, name: &str) -> PyResult<PySchedule> {
    let name = name.to_string();
    let s = py.detach(move || goal::parse(&text, &name)).py()?;
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
        .py()?;
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
    let alg = Algorithm::parse(algorithm).py()?;
    let sp = spec(nranks, count, dtype, "sum")?;
    let m = PostalModel::postal(alpha_ps, beta_ps_per_byte, gamma_ps_per_byte, 0);
    m.validate().py()?;
    cost::allreduce(&alg, &sp, &m).py()
}

/// Adds this module's functions and classes to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySchedule>()?;
    m.add_function(wrap_pyfunction!(allreduce_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(allreduce_program, m)?)?;
    m.add_function(wrap_pyfunction!(allreduce_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(alltoall_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(alltoall_program, m)?)?;
    m.add_function(wrap_pyfunction!(collectives, m)?)?;
    m.add_function(wrap_pyfunction!(allreduce_cost, m)?)?;
    m.add_function(wrap_pyfunction!(parse_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(read_schedule, m)?)?;
    Ok(())
}
