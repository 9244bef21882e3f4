//! Bindings of hypercuboid_core::topology: convert, call, convert.

use crate::args::{KParam, SpecParam, Text, Whole};
use crate::errors::{Class, PyResultExt, ToPyErr};
use crate::guard::{self, call};
use crate::spec::PyForm;
use hypercuboid_core::topology::{
    self as topo,
    analysis::Analysis,
    bisection::Bisection,
    compare, export, oft, spec,
    tree::{TreeDescription, TreeEdge},
    Link, LinkParams, Topology, TopologyParts,
};
use pyo3::marker::Ungil;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A network topology: routers, endpoints attached to routers, links with bandwidth (Gb/s) and
/// latency (ps). Build one with `generate(spec)`.
#[derive(Debug)]
#[pyclass(name = "Topology", module = "hypercuboid._core", frozen)]
pub struct PyTopology {
    inner: Topology,
}

pub(crate) fn wrap(t: Topology) -> PyTopology {
    PyTopology { inner: t }
}

impl PyTopology {
    /// The core topology (for the other binding modules).
    pub(crate) fn topology(&self) -> &Topology {
        &self.inner
    }
}

/// Routers of one kind: `(name, count, network_degree, endpoints)`, the last two (min, max).
type KindRow = (String, usize, (usize, usize), (usize, usize));

/// A topology's graph analysis (everything but the bisection): the counts, radixes, ports and
/// links, distances, `kinds` as `(name, count, network_degree, endpoints)` (min, max pairs),
/// the path diversity (`path_histogram` `(paths, pairs)`, `path_mean`, `path_max`,
/// `paths_by_distance` `(distance, pairs, mean_paths, max_paths)`), `moore_bound` `(degree,
/// diameter, bound, fraction)` or None, and `tree` (a `TreeAnalysis`) or None.
#[pyclass(
    name = "TopologyAnalysis",
    module = "hypercuboid._core",
    frozen,
    get_all
)]
pub(crate) struct PyAnalysis {
    endpoints: usize,
    routers: usize,
    endpoint_routers: usize,
    network_links: usize,
    router_radix: usize,
    network_radix: usize,
    kinds: Vec<KindRow>,
    total_ports: u64,
    ports_per_endpoint: f64,
    total_links: u64,
    links_per_endpoint: f64,
    connected: bool,
    diameter: Option<u32>,
    router_diameter: Option<u32>,
    avg_hops: f64,
    avg_router_distance: f64,
    distance_histogram: Vec<u64>,
    path_histogram: Vec<(u64, u64)>,
    path_mean: f64,
    path_max: u64,
    paths_by_distance: Vec<(u32, u64, f64, u64)>,
    moore_bound: Option<(u64, u32, u64, f64)>,
    tree: Option<Py<PyTreeAnalysis>>,
}

/// The all-to-all analysis of a tree: its bottleneck (`bottleneck` its name, and
/// `bottleneck_link` or `bottleneck_endpoint` its index), `m_u`, `m_v`, `load`,
/// `endpoint_load`, the bandwidths, the root, `subtrees` as `(top, machines)` and `link_loads`.
#[pyclass(name = "TreeAnalysis", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyTreeAnalysis {
    bottleneck: String,
    bottleneck_link: Option<usize>,
    bottleneck_endpoint: Option<usize>,
    m_u: usize,
    m_v: usize,
    load: u64,
    endpoint_load: u64,
    bottleneck_bandwidth_gbps: f64,
    peak_throughput_gbps: f64,
    root: usize,
    root_name: String,
    subtrees: Vec<(String, usize)>,
    link_loads: Vec<u64>,
}

impl PyAnalysis {
    fn of(py: Python<'_>, a: Analysis) -> PyResult<PyAnalysis> {
        let tree = match a.tree {
            None => None,
            Some(t) => {
                let (link, endpoint) = match t.bottleneck {
                    TreeEdge::Link(i) => (Some(i), None),
                    TreeEdge::Endpoint(e) => (None, Some(e)),
                };
                let tree = PyTreeAnalysis {
                    bottleneck: t.bottleneck_name,
                    bottleneck_link: link,
                    bottleneck_endpoint: endpoint,
                    m_u: t.m_u,
                    m_v: t.m_v,
                    load: t.load,
                    endpoint_load: t.endpoint_load,
                    bottleneck_bandwidth_gbps: t.bottleneck_bandwidth_gbps,
                    peak_throughput_gbps: t.peak_throughput_gbps,
                    root: t.root,
                    root_name: t.root_name,
                    subtrees: t
                        .subtrees
                        .into_iter()
                        .map(|s| (s.top, s.machines))
                        .collect(),
                    link_loads: t.link_loads,
                };
                Some(Py::new(py, tree)?)
            }
        };
        Ok(PyAnalysis {
            endpoints: a.endpoints,
            routers: a.routers,
            endpoint_routers: a.endpoint_routers,
            network_links: a.network_links,
            router_radix: a.router_radix,
            network_radix: a.network_radix,
            kinds: a
                .kinds
                .into_iter()
                .map(|k| (k.name, k.count, k.network_degree, k.endpoints))
                .collect(),
            total_ports: a.total_ports,
            ports_per_endpoint: a.ports_per_endpoint,
            total_links: a.total_links,
            links_per_endpoint: a.links_per_endpoint,
            connected: a.connected,
            diameter: a.diameter,
            router_diameter: a.router_diameter,
            avg_hops: a.avg_hops,
            avg_router_distance: a.avg_router_distance,
            distance_histogram: a.distance_histogram,
            path_histogram: a.paths.histogram,
            path_mean: a.paths.mean,
            path_max: a.paths.max,
            paths_by_distance: a
                .paths
                .by_distance
                .into_iter()
                .map(|b| (b.distance, b.pairs, b.mean_paths, b.max_paths))
                .collect(),
            moore_bound: a.moore.map(|m| (m.degree, m.diameter, m.bound, m.fraction)),
            tree,
        })
    }
}

/// An exact endpoint bisection: each router's and endpoint's side, the endpoints and routers
/// per side, the cut (links, endpoint links, bandwidth) and the cut bandwidth per endpoint.
#[pyclass(name = "Bisection", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyBisection {
    router_side: Vec<bool>,
    endpoint_side: Vec<bool>,
    endpoints: [usize; 2],
    routers: [usize; 2],
    cut_links: usize,
    cut_endpoint_links: usize,
    cut_bandwidth_gbps: f64,
    per_endpoint: f64,
}

impl PyBisection {
    fn of(b: Bisection) -> PyBisection {
        PyBisection {
            router_side: b.router_side,
            endpoint_side: b.endpoint_side,
            endpoints: b.endpoints,
            routers: b.routers,
            cut_links: b.cut_links,
            cut_endpoint_links: b.cut_endpoint_links,
            cut_bandwidth_gbps: b.cut_bandwidth_gbps,
            per_endpoint: b.per_endpoint,
        }
    }
}

/// The largest instance of a family within a router radix, with its sizes and the closed forms
/// of its cost per endpoint.
#[pyclass(name = "CompareRow", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyCompareRow {
    label: &'static str,
    spec: String,
    endpoints: u64,
    routers: u64,
    network_links: u64,
    router_radix: u32,
    network_radix: u32,
    diameter: u32,
    ports_per_endpoint: f64,
    links_per_endpoint: f64,
}

#[pymethods]
impl PyTopology {
    /// Canonical spec string, or the file the topology was read from.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// Family name.
    #[getter]
    fn family(&self) -> &str {
        self.inner.family()
    }

    /// Resolved generator parameters as (key, value) strings.
    #[getter]
    fn params(&self) -> Vec<(String, String)> {
        self.inner.params().to_vec()
    }

    /// Number of routers R.
    #[getter]
    fn num_routers(&self) -> usize {
        self.inner.num_routers()
    }

    /// Number of endpoints N.
    #[getter]
    fn num_endpoints(&self) -> usize {
        self.inner.num_endpoints()
    }

    /// Number of router-to-router links.
    #[getter]
    fn num_links(&self) -> usize {
        self.inner.num_links()
    }

    /// Names of the router kinds.
    #[getter]
    fn kinds(&self) -> Vec<String> {
        self.inner.kinds().to_vec()
    }

    /// Names of the router coordinates.
    #[getter]
    fn coord_names(&self) -> Vec<String> {
        self.inner.coord_names().to_vec()
    }

    /// Kind index of every router.
    fn router_kinds(&self) -> Vec<u8> {
        self.inner.parts().router_kind.clone()
    }

    /// Coordinates of every router.
    fn coords(&self) -> Vec<Vec<u32>> {
        (0..self.inner.num_routers())
            .map(|r| self.inner.coords(r).to_vec())
            .collect()
    }

    /// Router of every endpoint.
    fn endpoint_routers(&self) -> Vec<u32> {
        self.inner.endpoint_routers().to_vec()
    }

    /// (bandwidth_gbps, latency_ps) of every endpoint link.
    fn endpoint_links(&self) -> Vec<(f64, u64)> {
        self.inner
            .parts()
            .endpoint_links
            .iter()
            .map(|l| (l.bandwidth_gbps, l.latency))
            .collect()
    }

    /// (a, b, bandwidth_gbps, latency_ps) of every router-to-router link.
    fn links(&self) -> Vec<(u32, u32, f64, u64)> {
        self.inner
            .links()
            .iter()
            .map(|l| (l.a, l.b, l.bandwidth_gbps, l.latency))
            .collect()
    }

    /// Router adjacency as CSR arrays (offsets, neighbours, link ids).
    fn csr(&self) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let (o, n, l) = self.inner.csr();
        (o.to_vec(), n.to_vec(), l.to_vec())
    }

    /// Endpoints attached to router `r`.
    fn router_endpoints(&self, r: usize) -> PyResult<Vec<u32>> {
        if r >= self.inner.num_routers() {
            return Err(Class::Topology.err(format!(
                "router {r} out of range (0..{})",
                self.inner.num_routers()
            )));
        }
        Ok(self.inner.router_endpoints(r).to_vec())
    }

    /// Router names, if any.
    fn router_names(&self) -> Option<Vec<String>> {
        self.inner.parts().router_names.clone()
    }

    /// Endpoint names, if any.
    fn endpoint_names(&self) -> Option<Vec<String>> {
        self.inner.parts().endpoint_names.clone()
    }

    /// Graph analysis (everything but the bisection): a `TopologyAnalysis`.
    fn analyze(&self, py: Python<'_>) -> PyResult<PyAnalysis> {
        call(Class::Topology, "Topology.analyze", || {
            let a = guard::detach(py, || topo::try_analyze(&self.inner)).py()?;
            PyAnalysis::of(py, a)
        })
    }

    /// All-pairs router distances as little-endian u16 bytes (R×R, row-major; 65535 =
    /// unreachable).
    fn distances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        call(Class::Topology, "Topology.distances", || {
            let m = guard::detach(py, || topo::router_distances(&self.inner)).py()?;
            let bytes: Vec<u8> = m.as_slice().iter().flat_map(|d| d.to_le_bytes()).collect();
            Ok(PyBytes::new(py, &bytes))
        })
    }

    /// Repairs and refines a router partition (list of bools, one per router) into an exact
    /// endpoint bisection.
    fn refine_bisection(&self, py: Python<'_>, sides: Vec<bool>) -> PyResult<PyBisection> {
        call(Class::Topology, "Topology.refine_bisection", || {
            let b = guard::detach(py, || topo::refine_bisection(&self.inner, &sides)).py()?;
            Ok(PyBisection::of(b))
        })
    }

    /// Bisection from `starts` breadth-first-grown partitions (no METIS), seeded by `seed`.
    #[pyo3(signature = (starts=8, seed=0))]
    fn bisect(&self, py: Python<'_>, starts: u32, seed: u64) -> PyResult<PyBisection> {
        call(Class::Topology, "Topology.bisect", || {
            let b = guard::detach(py, || topo::bisect(&self.inner, starts, seed)).py()?;
            Ok(PyBisection::of(b))
        })
    }

    /// Our JSON schema.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        call(Class::Topology, "Topology.to_json", || {
            Ok(guard::detach(py, || export::to_json(&self.inner)))
        })
    }

    /// GraphML.
    fn to_graphml(&self, py: Python<'_>) -> PyResult<String> {
        call(Class::Topology, "Topology.to_graphml", || {
            Ok(guard::detach(py, || export::to_graphml(&self.inner)))
        })
    }

    /// BookSim2 anynet; with `cycle_ps`, link latencies in cycles.
    #[pyo3(signature = (cycle_ps=None))]
    fn to_anynet(&self, py: Python<'_>, cycle_ps: Option<u64>) -> PyResult<String> {
        call(Class::Topology, "Topology.to_anynet", || {
            guard::detach(py, || export::to_anynet(&self.inner, cycle_ps)).py()
        })
    }

    /// Graphviz dot, with endpoints if `endpoints`.
    #[pyo3(signature = (endpoints=true))]
    fn to_dot(&self, py: Python<'_>, endpoints: bool) -> PyResult<String> {
        call(Class::Topology, "Topology.to_dot", || {
            Ok(guard::detach(py, || export::to_dot(&self.inner, endpoints)))
        })
    }

    fn __eq__(&self, other: &Self) -> bool {
        self.inner == other.inner
    }

    fn __repr__(&self) -> String {
        format!(
            "Topology('{}', routers={}, endpoints={}, links={})",
            self.inner.name(),
            self.inner.num_routers(),
            self.inner.num_endpoints(),
            self.inner.num_links()
        )
    }
}

/// The topology `make` builds or reads with the GIL released: the result of the binding
/// function `name`.
pub(crate) fn made<E: ToPyErr + Send>(
    py: Python<'_>,
    name: &str,
    make: impl Ungil + FnOnce() -> Result<Topology, E>,
) -> PyResult<PyTopology> {
    call(Class::Topology, name, || {
        guard::detach(py, make).py().map(wrap)
    })
}

/// Builds the topology a spec string names (`slimfly:q=13,p=9`, `oft:k=12`, `tree:fig1`, ...).
#[pyfunction]
fn topology_generate(py: Python<'_>, spec: Text<SpecParam>) -> PyResult<PyTopology> {
    let spec = spec.0;
    made(py, "topology_generate", || topo::generate(&spec))
}

/// Reads our JSON schema; `what` names the source in errors.
#[pyfunction]
#[pyo3(signature = (text, what="<json>"))]
fn topology_from_json(py: Python<'_>, text: &str, what: &str) -> PyResult<PyTopology> {
    made(py, "topology_from_json", || export::from_json(text, what))
}

/// Builds a topology from its pieces (the GraphML and networkx readers use this).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (name, family, params, kinds, router_kinds, coord_names, coords, endpoint_routers, endpoint_links, links, router_names=None, endpoint_names=None))]
fn topology_from_parts(
    name: String,
    family: String,
    params: Vec<(String, String)>,
    kinds: Vec<String>,
    router_kinds: Vec<u8>,
    coord_names: Vec<String>,
    coords: Vec<u32>,
    endpoint_routers: Vec<u32>,
    endpoint_links: Vec<(f64, u64)>,
    links: Vec<(u32, u32, f64, u64)>,
    router_names: Option<Vec<String>>,
    endpoint_names: Option<Vec<String>>,
) -> PyResult<PyTopology> {
    call(Class::Topology, "topology_from_parts", || {
        let parts = TopologyParts {
            name,
            family,
            params,
            kinds,
            router_kind: router_kinds,
            coord_names,
            coords,
            router_names,
            endpoint_names,
            endpoint_router: endpoint_routers,
            endpoint_links: endpoint_links
                .into_iter()
                .map(|(b, l)| LinkParams {
                    bandwidth_gbps: b,
                    latency: l,
                })
                .collect(),
            links: links
                .into_iter()
                .map(|(a, b, bw, lat)| Link {
                    a,
                    b,
                    bandwidth_gbps: bw,
                    latency: lat,
                })
                .collect(),
            switch: Default::default(),
        };
        Topology::from_parts(parts).py().map(wrap)
    })
}

/// Families the spec parser accepts (their forms; `positional` is what the positional argument
/// is, or None).
#[pyfunction]
fn topology_families() -> Vec<PyForm> {
    spec::FAMILIES
        .iter()
        .map(|f| PyForm::with_positional(&f.form, f.arg))
        .collect()
}

/// `(file, endpoints per router)` of a `graphml:FILE[,p=P]` spec (read by the Python package),
/// None for a spec of another family; a spec that does not parse raises `TopologyError`.
#[pyfunction]
fn topology_graphml_source(spec: &str) -> PyResult<Option<(String, u32)>> {
    call(Class::Topology, "topology_graphml_source", || {
        topo::graphml_source(spec).py()
    })
}

/// The largest instance of each family within router radix `radix` (the seed's Figure 3).
#[pyfunction]
fn topology_compare(py: Python<'_>, radix: u32) -> PyResult<Vec<PyCompareRow>> {
    call(Class::Topology, "topology_compare", || {
        Ok(guard::detach(py, || compare::largest_within_radix(radix))
            .into_iter()
            .map(|row| PyCompareRow {
                label: row.label,
                endpoints: row.size.endpoints,
                routers: row.size.routers,
                network_links: row.size.links,
                router_radix: row.size.router_radix,
                network_radix: row.size.network_radix,
                diameter: row.diameter,
                ports_per_endpoint: row.size.ports_per_endpoint(),
                links_per_endpoint: row.size.links_per_endpoint(),
                spec: row.spec,
            })
            .collect())
    })
}

/// The JSON description of an Ethernet tree preset (fig1, fig5a, fig5b, fig5c).
#[pyfunction]
fn topology_tree_preset(name: &str) -> PyResult<String> {
    call(Class::Topology, "topology_tree_preset", || {
        TreeDescription::preset(name).py().map(|d| d.to_json())
    })
}

/// The tabular k-ML3B of the OFT (R_L rows of k L1 routers).
#[pyfunction]
fn topology_ml3b(k: Whole<KParam, u32>) -> PyResult<Vec<Vec<u32>>> {
    call(Class::Topology, "topology_ml3b", || oft::ml3b(k.0).py())
}

/// Adds this module's functions and classes to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [
            PyTopology,
            PyBisection,
            PyAnalysis,
            PyTreeAnalysis,
            PyCompareRow
        ],
        [
            topology_generate,
            topology_from_json,
            topology_from_parts,
            topology_families,
            topology_graphml_source,
            topology_compare,
            topology_tree_preset,
            topology_ml3b
        ]
    );
    Ok(())
}
