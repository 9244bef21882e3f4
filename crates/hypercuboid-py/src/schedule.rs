//! Bindings of hypercuboid_core::schedule: the `Schedule` class and its constructors.

use std::sync::Arc;

use hypercuboid_core::collectives::allreduce::{self, cost, Algorithm, Allreduce, AllreduceSpec};
use hypercuboid_core::collectives::alltoall::{self, Alltoall, AlltoallSpec};
use hypercuboid_core::collectives::registry::{self, Needs};
use hypercuboid_core::model::PostalModel;
use hypercuboid_core::network::NetParams;
use hypercuboid_core::schedule::goal::{self, GoalExportOptions};
use hypercuboid_core::schedule::verify::{self, VerifyOptions};
use hypercuboid_core::schedule::{
    self, CExport, CExportOptions, Columns, DepKind, Dtype, ReduceOp, Schedule, ScheduleError,
};
use hypercuboid_core::units::Time;
use pyo3::prelude::*;

use crate::args::{
    AlgorithmParam, Count, DtypeArg, EagerLimitParam, LevelParam, MappingParam, MaxProblemsParam,
    ModelParam, NRanks, NicParam, NoiseParam, OpArg, RankArg, RoutingParam, SeedParam, Text, Whole,
};
use crate::collective::Binding;
use crate::errors::{Class, PyResultExt};
use crate::guard::{self, call};
use crate::program::PyProgram;
use crate::spec::PyForm;

/// What a schedule computes: `collective`, `count`, `dtype`, `op` (None for a collective that
/// does not reduce), for an alltoall `block` (the elements per pair of ranks), for a halo
/// exchange `halo`, its `name` and `elem_size`.
#[pyclass(name = "ScheduleMeta", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyScheduleMeta {
    collective: &'static str,
    count: u64,
    dtype: &'static str,
    op: Option<&'static str>,
    block: Option<u64>,
    halo: Option<Py<PyHaloMeta>>,
    name: String,
    elem_size: u32,
}

/// A halo exchange's decomposition (`lattice`, `dims`, `periodic`), values per site and
/// stencil.
#[pyclass(name = "HaloMeta", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyHaloMeta {
    lattice: (u32, u32, u32),
    dims: (u32, u32, u32),
    periodic: (bool, bool, bool),
    values: u32,
    stencil: &'static str,
}

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

    fn check_rank(&self, rank: RankArg) -> PyResult<u32> {
        rank.within(self.inner.nranks(), |r, last| {
            format!("rank {r} is not in the schedule (ranks 0..{last})")
        })
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
    fn sends_per_rank<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, numpy::PyArray1<u32>>> {
        use numpy::IntoPyArray;
        call(Class::Schedule, "Schedule.sends_per_rank", || {
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
            Ok((0..s.nranks())
                .map(|r| per_shape[s.shape_index(r)])
                .collect::<Vec<u32>>()
                .into_pyarray(py))
        })
    }

    /// Approximate heap bytes of the schedule.
    #[getter]
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }

    /// What the schedule computes (a `ScheduleMeta`).
    #[getter]
    fn meta(&self, py: Python<'_>) -> PyResult<PyScheduleMeta> {
        call(Class::Schedule, "Schedule.meta", || {
            let m = self.inner.meta();
            let halo = match m.collective.halo() {
                None => None,
                Some(h) => {
                    let dc = h.decomp;
                    Some(Py::new(
                        py,
                        PyHaloMeta {
                            lattice: (dc.lattice[0], dc.lattice[1], dc.lattice[2]),
                            dims: (dc.dims[0], dc.dims[1], dc.dims[2]),
                            periodic: (dc.periodic[0], dc.periodic[1], dc.periodic[2]),
                            values: h.values,
                            stencil: h.stencil.name(),
                        },
                    )?)
                }
            };
            Ok(PyScheduleMeta {
                collective: m.collective.name(),
                count: m.count,
                dtype: m.dtype.name(),
                op: m.op().map(|o| o.name()),
                block: m.collective.block(),
                halo,
                name: m.name.clone(),
                elem_size: m.elem_size(),
            })
        })
    }

    /// Rank `rank`'s ops in readable form, one line each, with their dependencies.
    fn program_text(&self, rank: RankArg) -> PyResult<Vec<String>> {
        call(Class::Schedule, "Schedule.program_text", || {
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
        })
    }

    /// Rank `rank`'s program as columns, for the MPI back end, checked against the schedule's
    /// buffers.
    fn program(&self, rank: RankArg) -> PyResult<PyProgram> {
        call(Class::Schedule, "Schedule.program", || {
            let r = self.check_rank(rank)?;
            let cols = Columns::of_rank(&self.inner.rank(r), self.inner.elem_size());
            PyProgram::checked(
                cols,
                r,
                self.inner.nranks(),
                self.inner.meta().rank_buffer_lens(r),
            )
        })
    }

    /// Verifies the schedule: a `VerifyReport` (`sound`, `problems` (lines), `truncated`,
    /// `semantics` (None or the flags and differences), `stats`, `notes` and `text`).
    #[pyo3(signature = (
        eager_limit = Whole::of(VerifyOptions::default().eager_limit),
        semantics = VerifyOptions::default().semantics,
        max_problems = Whole::of(VerifyOptions::default().max_problems),
        threads = VerifyOptions::default().threads,
    ))]
    fn verify(
        &self,
        py: Python<'_>,
        eager_limit: Whole<EagerLimitParam, u64>,
        semantics: bool,
        max_problems: Whole<MaxProblemsParam, usize>,
        threads: usize,
    ) -> PyResult<crate::verify::PyVerifyReport> {
        let opts = VerifyOptions {
            semantics,
            eager_limit: eager_limit.0,
            max_problems: max_problems.0,
            threads,
        };
        call(Class::Schedule, "Schedule.verify", || {
            let s = self.inner.clone();
            let rep = guard::detach(py, move || verify::try_verify(&s, &opts)).py()?;
            crate::verify::report(py, &rep)
        })
    }

    /// Simulates the schedule on `model` (a spec string). Returns a `SimulationResult`:
    /// `model` (canonical spec), `completion_ps`, `rank_finish_ps` (uint64 array), `ops`,
    /// `messages`, `threads` and `trace` (None, or NumPy columns); with `chrome_trace` a path,
    /// the trace is also written there as Chrome / Perfetto JSON. `calls` runs the schedule that
    /// many times back to back (no barrier between runs). `threads`: threads to simulate on (0: every core for
    /// schedules of 2^19 ops or more, else one); the results are the same for any number. The
    /// GIL is released while simulating.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (model, trace = false, noise = None, seed = Whole::of(0), chrome_trace = None, calls = 1, threads = 0))]
    fn simulate(
        &self,
        py: Python<'_>,
        model: Text<ModelParam>,
        trace: bool,
        noise: Option<Text<NoiseParam>>,
        seed: Whole<SeedParam, u64>,
        chrome_trace: Option<String>,
        calls: u32,
        threads: usize,
    ) -> PyResult<crate::sim_result::PySimulationResult> {
        call(Class::Simulation, "Schedule.simulate", || {
            crate::sim::simulate(
                self,
                py,
                model.as_str(),
                trace,
                noise.as_ref().map(Text::as_str),
                seed.0,
                chrome_trace,
                calls,
                threads,
            )
        })
    }

    /// Simulates the schedule on a network (see `sim::simulate_network`).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (
        topology,
        model = None,
        routing = Text::of("min"),
        level = Text::of("packet"),
        mapping = Text::of("linear"),
        mapping_endpoints = None,
        ranks_per_endpoint = 1,
        nic = Text::of("fifo"),
        seed = Whole::of(NetParams::default().seed),
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
    fn simulate_network(
        &self,
        py: Python<'_>,
        topology: &crate::topology::PyTopology,
        model: Option<Text<ModelParam>>,
        routing: Text<RoutingParam>,
        level: Text<LevelParam>,
        mapping: Text<MappingParam>,
        mapping_endpoints: Option<Vec<u32>>,
        ranks_per_endpoint: u32,
        nic: Text<NicParam>,
        seed: Whole<SeedParam, u64>,
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
        noise: Option<Text<NoiseParam>>,
    ) -> PyResult<crate::sim_result::PySimulationResult> {
        call(Class::Simulation, "Schedule.simulate_network", || {
            let params = crate::network::params(
                seed.0,
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
                model.as_ref().map(Text::as_str),
                routing.as_str(),
                level.as_str(),
                mapping.as_str(),
                mapping_endpoints,
                ranks_per_endpoint,
                nic.as_str(),
                params,
                trace,
                chrome_trace,
                records,
                sample_links,
                calls,
                noise.as_ref().map(Text::as_str),
            )
        })
    }

    /// GOAL text (LogGOPSim txt2bin input).
    #[pyo3(signature = (reduce_ns_per_byte = 0.0))]
    fn to_goal(&self, py: Python<'_>, reduce_ns_per_byte: f64) -> PyResult<String> {
        call(Class::Schedule, "Schedule.to_goal", || {
            let s = self.inner.clone();
            let out = guard::detach(py, move || {
                let mut out = Vec::new();
                goal::write_goal(&s, &GoalExportOptions { reduce_ns_per_byte }, &mut out)
                    .map(|_| out)
            });
            bytes_to_string(out.map_err(|e| Class::Schedule.err(e.to_string()))?)
        })
    }

    /// The lossless text form.
    fn to_text(&self, py: Python<'_>) -> PyResult<String> {
        call(Class::Schedule, "Schedule.to_text", || {
            let s = self.inner.clone();
            let out = guard::detach(py, move || {
                let mut out = Vec::new();
                goal::write_text(&s, &mut out).map(|_| out)
            });
            bytes_to_string(out.map_err(|e| Class::Schedule.err(e.to_string()))?)
        })
    }

    /// Writes GOAL text to `path`.
    #[pyo3(signature = (path, reduce_ns_per_byte = 0.0))]
    fn write_goal(&self, py: Python<'_>, path: String, reduce_ns_per_byte: f64) -> PyResult<()> {
        call(Class::Schedule, "Schedule.write_goal", || {
            let s = self.inner.clone();
            guard::detach(py, move || {
                write_file(&path, |w| {
                    goal::write_goal(&s, &GoalExportOptions { reduce_ns_per_byte }, w)
                })
            })
        })
    }

    /// Writes the lossless text form to `path`.
    fn write_text(&self, py: Python<'_>, path: String) -> PyResult<()> {
        call(Class::Schedule, "Schedule.write_text", || {
            let s = self.inner.clone();
            guard::detach(py, move || write_file(&path, |w| goal::write_text(&s, w)))
        })
    }

    /// The schedule as one self-contained C file: an MPI routine named `name` (default
    /// `hc_<collective>`) that runs it (docs/native.md, section 2).
    #[pyo3(signature = (name = None))]
    fn to_c(&self, py: Python<'_>, name: Option<&str>) -> PyResult<String> {
        call(Class::Schedule, "Schedule.to_c", || {
            let s = self.inner.clone();
            let opts = c_options(&s, name);
            let out = guard::detach(py, move || {
                let e = CExport::new(&s, &opts)?;
                let mut out = Vec::new();
                e.write(&mut out).map_err(|e| ScheduleError::Io {
                    path: "<memory>".into(),
                    message: e.to_string(),
                })?;
                Ok::<_, ScheduleError>(out)
            });
            bytes_to_string(out.py()?)
        })
    }

    /// Writes the C file of `to_c(name)` to `path`; what cannot be exported is refused
    /// before the file is created.
    #[pyo3(signature = (path, name = None))]
    fn write_c(&self, py: Python<'_>, path: String, name: Option<&str>) -> PyResult<()> {
        call(Class::Schedule, "Schedule.write_c", || {
            let s = self.inner.clone();
            let opts = c_options(&s, name);
            guard::detach(py, move || {
                let e = CExport::new(&s, &opts).py()?;
                write_file(&path, |w| e.write(w))
            })
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
    String::from_utf8(b).map_err(|e| Class::Schedule.err(e.to_string()))
}

fn write_file(
    path: &str,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> PyResult<()> {
    let io = |e: std::io::Error| Class::Schedule.err(format!("{path}: {e}"));
    let file = std::fs::File::create(path).map_err(io)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    f(&mut w).map_err(io)?;
    std::io::Write::flush(&mut w).map_err(io)
}

/// The allreduce of the converted arguments.
fn allreduce_spec(nranks: NRanks, count: Count, dtype: DtypeArg, op: OpArg) -> AllreduceSpec {
    AllreduceSpec {
        nranks: nranks.0,
        count: count.0,
        dtype: dtype.0,
        op: op.0,
    }
}

/// Rank `rank` of `nranks`, or the error naming the range.
fn rank_of(rank: RankArg, nranks: u32) -> PyResult<u32> {
    rank.within(nranks, |r, last| format!("rank {r} is not in 0..{last}"))
}

impl Binding for Allreduce {
    type Args<'a> = (NRanks, Count, DtypeArg, OpArg);

    fn parse(text: &str) -> Result<Algorithm, ScheduleError> {
        Algorithm::parse(text)
    }

    fn problem((nranks, count, dtype, op): Self::Args<'_>) -> PyResult<AllreduceSpec> {
        Ok(allreduce_spec(nranks, count, dtype, op))
    }

    fn rank(sp: &AllreduceSpec, rank: RankArg) -> PyResult<u32> {
        rank_of(rank, sp.nranks)
    }

    fn dtype(sp: &AllreduceSpec) -> Dtype {
        sp.dtype
    }

    fn lens(_: &Algorithm, sp: &AllreduceSpec, _: u32) -> PyResult<(u64, u64)> {
        Ok((sp.count, sp.count))
    }
}

impl Binding for Alltoall {
    type Args<'a> = (NRanks, Count, DtypeArg);

    fn parse(text: &str) -> Result<alltoall::Algorithm, ScheduleError> {
        alltoall::Algorithm::parse(text)
    }

    fn problem((nranks, count, dtype): Self::Args<'_>) -> PyResult<AlltoallSpec> {
        Ok(AlltoallSpec::new(nranks.0, count.0, dtype.0))
    }

    fn rank(sp: &AlltoallSpec, rank: RankArg) -> PyResult<u32> {
        rank_of(rank, sp.nranks)
    }

    fn dtype(sp: &AlltoallSpec) -> Dtype {
        sp.dtype
    }

    fn lens(_: &alltoall::Algorithm, sp: &AlltoallSpec, _: u32) -> PyResult<(u64, u64)> {
        let len = sp.buffer_len().expect("validated by program");
        Ok((len, len))
    }
}

collective! {
    /// The allreduce schedule of `algorithm` on `nranks` ranks (GIL released while generating).
    fn allreduce_schedule as "allreduce";
    /// The program of one rank of an allreduce, built alone (O(its own ops)), as a `Program`
    /// (the columns of `hypercuboid_core::schedule::columns`).
    fn allreduce_program;
    Allreduce: (
        nranks: NRanks,
        count: Count = [Count(allreduce::DEFAULT_COUNT)],
        dtype: DtypeArg = [DtypeArg(allreduce::DEFAULT_DTYPE)],
        op: OpArg = [OpArg(allreduce::DEFAULT_OP)],
    )
}

collective! {
    /// The alltoall schedule of `algorithm` on `nranks` ranks, `count` elements per rank pair
    /// (GIL released while generating).
    fn alltoall_schedule as "alltoall";
    /// The program of one rank of an alltoall, built alone (O(its own ops)), as a `Program`.
    fn alltoall_program;
    Alltoall: (
        nranks: NRanks,
        count: Count = [Count(alltoall::DEFAULT_COUNT)],
        dtype: DtypeArg = [DtypeArg(alltoall::DEFAULT_DTYPE)],
    )
}

/// Names of the allreduce algorithms.
#[pyfunction]
fn allreduce_algorithms() -> Vec<&'static str> {
    allreduce::ALGORITHMS.iter().map(|e| e.form.name).collect()
}

/// One algorithm of the registry: its spec form, whether it needs a topology, its closed-form
/// cost (None where none is exact) and its guarantees ((property, when) pairs).
#[pyclass(name = "AlgorithmInfo", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyAlgorithmInfo {
    form: Py<PyForm>,
    needs_topology: bool,
    cost: Option<&'static str>,
    guarantees: Vec<(&'static str, &'static str)>,
}

/// A collective and its algorithms.
#[pyclass(name = "CollectiveInfo", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyCollectiveInfo {
    name: &'static str,
    summary: &'static str,
    algorithms: Vec<Py<PyAlgorithmInfo>>,
}

/// Every collective and its algorithms, from the registry.
#[pyfunction]
fn collectives(py: Python<'_>) -> PyResult<Vec<PyCollectiveInfo>> {
    call(Class::Schedule, "collectives", || {
        registry::COLLECTIVES
            .iter()
            .map(|c| {
                let algorithms = (c.algorithms)()
                    .iter()
                    .map(|a| {
                        Py::new(
                            py,
                            PyAlgorithmInfo {
                                form: Py::new(py, PyForm::of(a.form))?,
                                needs_topology: a.needs == Needs::Topology,
                                cost: a.cost,
                                guarantees: a
                                    .guarantees
                                    .iter()
                                    .map(|(p, w)| (p.name(), *w))
                                    .collect(),
                            },
                        )
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(PyCollectiveInfo {
                    name: c.name,
                    summary: c.summary,
                    algorithms,
                })
            })
            .collect()
    })
}

/// Reads GOAL text or the lossless text form.
#[pyfunction]
#[pyo3(signature = (text, name = "<text>"))]
fn parse_schedule(py: Python<'_>, text: String, name: &str) -> PyResult<PySchedule> {
    call(Class::Schedule, "parse_schedule", || {
        let name = name.to_string();
        let s = guard::detach(py, move || goal::parse(&text, &name)).py()?;
        Ok(PySchedule::new(s))
    })
}

/// Reads a GOAL file or a file in the lossless text form (streaming).
#[pyfunction]
fn read_schedule(py: Python<'_>, path: String) -> PyResult<PySchedule> {
    call(Class::Schedule, "read_schedule", || {
        let s = guard::detach(py, move || {
            let f = std::fs::File::open(&path).map_err(|e| ScheduleError::Io {
                path: path.clone(),
                message: e.to_string(),
            })?;
            goal::parse_reader(std::io::BufReader::with_capacity(1 << 20, f), &path)
        })
        .py()?;
        Ok(PySchedule::new(s))
    })
}

/// Closed-form time (picoseconds) of an allreduce in the postal model (`alpha` ps, `beta` and
/// `gamma` ps per byte), where the formula is exact; an error says why where it is not.
#[pyfunction]
#[pyo3(signature = (algorithm, nranks, count, dtype, alpha_ps, beta_ps_per_byte, gamma_ps_per_byte = 0.0))]
fn allreduce_cost(
    algorithm: Text<AlgorithmParam>,
    nranks: NRanks,
    count: Count,
    dtype: DtypeArg,
    alpha_ps: u64,
    beta_ps_per_byte: f64,
    gamma_ps_per_byte: f64,
) -> PyResult<u64> {
    call(Class::Schedule, "allreduce_cost", || {
        let alg = Algorithm::parse(algorithm.as_str()).py()?;
        let sp = allreduce_spec(nranks, count, dtype, OpArg(ReduceOp::Sum));
        let m = PostalModel::postal(alpha_ps, beta_ps_per_byte, gamma_ps_per_byte, 0);
        m.validate().py()?;
        cost::allreduce(&alg, &sp, &m).py()
    })
}

/// Adds this module's functions and classes to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [
            PySchedule,
            PyAlgorithmInfo,
            PyScheduleMeta,
            PyHaloMeta,
            PyCollectiveInfo
        ],
        [
            allreduce_schedule,
            allreduce_program,
            allreduce_algorithms,
            alltoall_schedule,
            alltoall_program,
            collectives,
            allreduce_cost,
            parse_schedule,
            read_schedule
        ]
    );
    Ok(())
}
