//! Bindings of hypercuboid_core::collectives::alltoall::phases: contention-free AAPC phases.
//! Convert, call (GIL released), convert.

use crate::args::{SeedParam, Whole};
use crate::errors::{Class, PyResultExt};
use crate::guard::{self, call};
use crate::topology::{wrap, PyTopology};
use hypercuboid_core::collectives::alltoall;
use hypercuboid_core::collectives::alltoall::phases::{
    self as core_phases, occupancy::occupancy, random, AlltoallPhases, CheckResult, LinkRoutes,
    Method, Routing,
};
use hypercuboid_core::collectives::alltoall::routine::{routine, RoutineOptions};
use hypercuboid_core::collectives::alltoall::scheduled;
use hypercuboid_core::collectives::alltoall::sync::{Sync, SYNCS};
use hypercuboid_core::collectives::registry::{self, Context};
use hypercuboid_core::schedule::{Dtype, ScheduleError};
use hypercuboid_core::spec;
use hypercuboid_core::topology::Topology;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;

/// The happens-before check of one `sync` variant's schedule: contending pairs examined, those
/// not ordered, and the first of those (None: every pair is enforced).
#[pyclass(name = "SyncCheck", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PySyncCheck {
    sync: &'static str,
    pairs: u64,
    violated: u64,
    violation: Option<String>,
}

/// Synchronisation messages of every variant of `scheduled`, and the checks when asked for.
#[pyclass(name = "SyncCounts", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PySyncCounts {
    ranks: usize,
    messages: u64,
    phases: u64,
    pairwise: u64,
    pairwise_reduced: u64,
    barrier: u64,
    checks: Vec<Py<PySyncCheck>>,
}

/// What a generated `MPI_Alltoall` routine runs.
#[pyclass(name = "RoutineCounts", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyRoutineCounts {
    ranks: usize,
    phases: usize,
    messages: usize,
    syncs: usize,
}

/// Contention-free phases of the all-to-all exchange on a topology, with the lower bound and
/// the three checks (complete, contention-free, optimal).
#[derive(Debug)]
#[pyclass(name = "AlltoallPhases", module = "hypercuboid._core", frozen)]
pub struct PyAlltoallPhases {
    inner: AlltoallPhases,
    topology: Topology,
}

fn violation(c: &CheckResult) -> Option<String> {
    c.violation.as_ref().map(|v| v.to_string())
}

#[pymethods]
impl PyAlltoallPhases {
    /// The topology's name.
    #[getter]
    fn topology(&self) -> &str {
        &self.inner.topology
    }

    /// The method that built the phases: `faraj-yuan` or `greedy`.
    #[getter]
    fn method(&self) -> &'static str {
        self.inner.method.name()
    }

    /// The routing the phases are contention-free under (`dmodk`, `first`; a tree has one
    /// path whatever it is).
    #[getter]
    fn routing(&self) -> &'static str {
        self.inner.routing.name()
    }

    /// Number of machines.
    #[getter]
    fn machines(&self) -> u32 {
        self.inner.table.machines()
    }

    /// Number of phases.
    #[getter]
    fn phases(&self) -> usize {
        self.inner.num_phases()
    }

    /// Number of messages in all phases.
    #[getter]
    fn messages(&self) -> usize {
        self.inner.table.num_messages()
    }

    /// The AAPC load: most messages on one directed link (on a tree, |M_u|·|M_v|).
    #[getter]
    fn load(&self) -> u64 {
        self.inner.load
    }

    /// The lower bound on the number of phases (the load).
    #[getter]
    fn lower_bound(&self) -> u64 {
        self.inner.load
    }

    /// Phases above the lower bound.
    #[getter]
    fn gap(&self) -> u64 {
        self.inner.gap()
    }

    /// Phases over the lower bound (1.0 is optimal).
    #[getter]
    fn ratio(&self) -> f64 {
        self.inner.ratio()
    }

    /// The root of section 4.1 (a switch name) on a tree, else None.
    #[getter]
    fn root(&self) -> Option<String> {
        self.inner.root.as_ref().map(|r| r.1.clone())
    }

    /// The root's router index on a tree, else None.
    #[getter]
    fn root_router(&self) -> Option<usize> {
        self.inner.root.as_ref().map(|r| r.0)
    }

    /// Machines of the root's subtrees t_0, t_1, ... (Faraj-Yuan only; empty otherwise).
    #[getter]
    fn subtrees(&self) -> Vec<Vec<u32>> {
        self.inner.subtrees.clone()
    }

    /// Every message exactly once.
    #[getter]
    fn complete(&self) -> bool {
        self.inner.checks.complete.ok
    }

    /// No two messages of a phase share a directed link.
    #[getter]
    fn contention_free(&self) -> bool {
        self.inner.checks.contention_free.ok
    }

    /// As many phases as the lower bound.
    #[getter]
    fn optimal(&self) -> bool {
        self.inner.checks.optimal.as_ref().is_some_and(|c| c.ok)
    }

    /// The first violation of each check (None where it passed): complete, contention_free,
    /// optimal.
    #[getter]
    fn violations(&self) -> (Option<String>, Option<String>, Option<String>) {
        let c = &self.inner.checks;
        (
            violation(&c.complete),
            violation(&c.contention_free),
            c.optimal.as_ref().and_then(violation),
        )
    }

    /// The phases: a list of phases, each a list of (src, dst) machine indices.
    fn schedule(&self) -> Vec<Vec<(u32, u32)>> {
        self.inner.table.iter().map(|p| p.to_vec()).collect()
    }

    /// The phases as arrays: offsets (uint32, phases + 1) and messages (uint32, n × 2).
    fn arrays<'py>(
        &self,
        py: Python<'py>,
    ) -> (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray2<u32>>) {
        let (off, msgs) = self.inner.table.csr();
        let flat: Vec<u32> = msgs.iter().flat_map(|&(s, d)| [s, d]).collect();
        let m = Array2::from_shape_vec((msgs.len(), 2), flat).expect("two columns");
        (off.to_vec().into_pyarray(py), m.into_pyarray(py))
    }

    /// Phase × link occupancy as `(links, counts)`: the directed link names (`from->to`) of
    /// the links some message uses, and a uint16 array, links × phases, of the messages of
    /// each phase on each link.
    fn occupancy<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Vec<String>, Bound<'py, PyArray2<u16>>)> {
        call(Class::Schedule, "AlltoallPhases.occupancy", || {
            let (topo, table, routing) = (&self.topology, &self.inner.table, self.inner.routing);
            let occ = guard::detach(py, || {
                let routes = LinkRoutes::new(topo, routing)?;
                occupancy(topo, &routes, table)
            })
            .py()?;
            let rows = occ.links.len();
            let counts = Array2::from_shape_vec((rows, occ.phases), occ.counts).expect("shape");
            Ok((occ.names, counts.into_pyarray(py)))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "AlltoallPhases({}, method={}, phases={}, load={}, complete={}, contention_free={})",
            self.inner.topology,
            self.inner.method.name(),
            self.inner.num_phases(),
            self.inner.load,
            self.inner.checks.complete.ok,
            self.inner.checks.contention_free.ok
        )
    }
}

/// Phases of the all-to-all exchange on `topology` by `method` (`auto`, `faraj-yuan`,
/// `greedy`) under `routing` off trees (`dmodk`, `first`), with the three checks run. The GIL
/// is released.
#[pyfunction]
#[pyo3(signature = (topology, method = "auto", routing = "dmodk"))]
fn alltoall_phases(
    py: Python<'_>,
    topology: &PyTopology,
    method: &str,
    routing: &str,
) -> PyResult<PyAlltoallPhases> {
    call(Class::Schedule, "alltoall_phases", || {
        let method = Method::parse(method).py()?;
        let routing = Routing::parse(routing).py()?;
        let topo = topology.topology();
        let inner = guard::detach(py, || core_phases::phases(topo, method, routing)).py()?;
        Ok(PyAlltoallPhases {
            inner,
            topology: topo.clone(),
        })
    })
}

/// A random switched tree: `machines` machines on `switches` switches of `shape` (random,
/// chain, star, deep, sparse), the same for the same `seed`.
#[pyfunction]
#[pyo3(signature = (machines, switches, shape = "random", seed = Whole::of(0)))]
fn alltoall_random_tree(
    machines: usize,
    switches: usize,
    shape: &str,
    seed: Whole<SeedParam, u64>,
) -> PyResult<PyTopology> {
    call(Class::Topology, "alltoall_random_tree", || {
        let desc = random::try_random_tree(machines, switches, shape, seed.0).py()?;
        Ok(wrap(desc.build().py()?))
    })
}

/// The JSON description (`tree:FILE` reads it) of [`alltoall_random_tree`]'s tree.
#[pyfunction]
#[pyo3(signature = (machines, switches, shape = "random", seed = Whole::of(0)))]
fn alltoall_random_tree_json(
    machines: usize,
    switches: usize,
    shape: &str,
    seed: Whole<SeedParam, u64>,
) -> PyResult<String> {
    call(Class::Topology, "alltoall_random_tree_json", || {
        Ok(random::try_random_tree(machines, switches, shape, seed.0)
            .py()?
            .to_json())
    })
}

/// The machine of every rank: from a mapping file, or linear over every machine.
fn machines_of(topo: &Topology, mapping: Option<&str>) -> PyResult<Vec<u32>> {
    match mapping {
        Some(path) => scheduled::read_mapping(path, topo).py(),
        None => Ok((0..topo.num_endpoints() as u32).collect()),
    }
}

fn sync_of(name: &str) -> PyResult<Sync> {
    SYNCS.parse(name).map_err(|e| {
        let accepted = e.accepted();
        Class::Schedule.with_accepted(e.to_string(), accepted)
    })
}

/// Synchronisation messages of every variant of `scheduled` on `topology` (ranks on the
/// machines of the `mapping` file, or one per machine), and with `check` the happens-before
/// check of every variant's schedule: a dict of `ranks`, `messages`, `phases`, `pairwise`,
/// `pairwise_reduced`, `barrier` and `checks` (`{sync: (pairs, violated, first violation or
/// None)}`). The GIL
/// is released.
#[pyfunction]
#[pyo3(signature = (topology, mapping = None, check = false))]
fn alltoall_sync_counts(
    py: Python<'_>,
    topology: &PyTopology,
    mapping: Option<&str>,
    check: bool,
) -> PyResult<PySyncCounts> {
    call(Class::Schedule, "alltoall_sync_counts", || {
        let topo = topology.topology();
        let machine_of = machines_of(topo, mapping)?;
        let (counts, checks) = guard::detach(py, || -> Result<_, ScheduleError> {
            let c = scheduled::sync_counts(topo, &machine_of)?;
            let mut checks = Vec::new();
            if check {
                let n = machine_of.len() as u32;
                for &spec::Choice {
                    name, value: sync, ..
                } in SYNCS.entries
                {
                    let alg = alltoall::Algorithm::Scheduled {
                        topo: None,
                        sync,
                        mapping: None,
                    };
                    let spec = alltoall::AlltoallSpec::new(n, 1, Dtype::Float64);
                    let ctx = Context {
                        topology: Some(topo),
                        mapping: Some(&machine_of),
                    };
                    let s = registry::generate::<alltoall::Alltoall>(&alg, &spec, &ctx)?;
                    let plan = scheduled::plan(topo, &machine_of, sync, n)?;
                    let e = scheduled::enforces_phases(&s, &plan, topo)?;
                    let v = e.violation.map(|(a, b)| {
                        format!(
                            "{}->{} (phase {}) and {}->{} (phase {}) share a link and are not \
                             ordered",
                            a.src, a.dst, a.phase, b.src, b.dst, b.phase
                        )
                    });
                    checks.push(PySyncCheck {
                        sync: name,
                        pairs: e.pairs,
                        violated: e.violated,
                        violation: v,
                    });
                }
            }
            Ok((c, checks))
        })
        .py()?;
        Ok(PySyncCounts {
            ranks: machine_of.len(),
            messages: counts.messages,
            phases: counts.phases,
            pairwise: counts.pairwise,
            pairwise_reduced: counts.reduced,
            barrier: counts.barrier,
            checks: checks
                .into_iter()
                .map(|c| Py::new(py, c))
                .collect::<PyResult<Vec<_>>>()?,
        })
    })
}

/// The C file of the `MPI_Alltoall` routine of `topology` (ranks on the machines of the
/// `mapping` file, or one per machine), kept apart by `sync`, falling back to the library
/// below `min_size` bytes a block; with `pmpi` it also defines `MPI_Alltoall`. Returns the
/// text and a dict of `ranks`, `phases`, `messages`, `syncs`.
#[pyfunction]
#[pyo3(signature = (topology, mapping = None, sync = "pairwise-reduced", min_size = 0, pmpi = false, name = "hc_alltoall", provenance = ""))]
#[allow(clippy::too_many_arguments)]
fn alltoall_routine(
    py: Python<'_>,
    topology: &PyTopology,
    mapping: Option<&str>,
    sync: &str,
    min_size: u64,
    pmpi: bool,
    name: &str,
    provenance: &str,
) -> PyResult<(String, PyRoutineCounts)> {
    call(Class::Schedule, "alltoall_routine", || {
        let topo = topology.topology();
        let machine_of = machines_of(topo, mapping)?;
        let sync = sync_of(sync)?;
        let opts = RoutineOptions {
            name: name.to_string(),
            min_size,
            pmpi,
            provenance: provenance.to_string(),
        };
        let (text, plan) = guard::detach(py, || -> Result<_, ScheduleError> {
            let plan = scheduled::plan(topo, &machine_of, sync, machine_of.len() as u32)?;
            Ok((routine(&plan, &opts)?, plan))
        })
        .py()?;
        Ok((
            text,
            PyRoutineCounts {
                ranks: machine_of.len(),
                phases: plan.active_phases.len(),
                messages: plan.messages.len(),
                syncs: plan.syncs.len(),
            },
        ))
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [PyAlltoallPhases, PySyncCheck, PySyncCounts, PyRoutineCounts],
        [
            alltoall_phases,
            alltoall_random_tree,
            alltoall_random_tree_json,
            alltoall_sync_counts,
            alltoall_routine
        ]
    );
    Ok(())
}
