//! Bindings of hypercuboid_core::network: convert, call (GIL released), convert.

use crate::args::{RoutingParam, Text, TrafficParam};
use crate::errors::{Class, PyResultExt};
use crate::guard::{self, call};
use crate::spec::forms;
use crate::topology::PyTopology;
use hypercuboid_core::network::packet::{DEFAULT_DURATION, DEFAULT_TOP_LINKS, DEFAULT_WARMUP};
use hypercuboid_core::network::{
    self as net, cdg, ExchangeSpec, NetParams, Network, Report, Routes, RoutingSpec, Synthetic,
    TrafficSpec, Workload,
};
use hypercuboid_core::units::{self, Time};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

fn ns(t: Time) -> f64 {
    units::to_ns(t)
}

/// Router and packet parameters from the binding's arguments.
pub(crate) fn params(
    seed: u64,
    packet_bytes: u32,
    buffer_bytes: u64,
    switch_latency_ps: Time,
    watchdog_ps: Time,
    threads: usize,
) -> NetParams {
    NetParams {
        packet_bytes,
        buffer_bytes,
        switch_latency: switch_latency_ps,
        seed,
        watchdog: watchdog_ps,
        threads,
    }
}

/// The report of one run as a dict (see `hypercuboid.netsim` for the fields).
fn report_dict<'py>(
    py: Python<'py>,
    topo: &str,
    routes: &Routes,
    r: &Report,
    top_links: usize,
    links: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("topology", topo)?;
    d.set_item("routing", &r.routing)?;
    d.set_item("vc_scheme", r.vc_scheme)?;
    d.set_item("vcs", r.vcs)?;
    d.set_item("traffic", &r.traffic)?;
    d.set_item("offered", r.offered)?;
    d.set_item("generated", r.generated)?;
    d.set_item("accepted", r.accepted)?;
    d.set_item("latency_avg_ns", r.latency.mean() / 1e3)?;
    d.set_item("latency_p50_ns", ns(r.latency.quantile(0.5)))?;
    d.set_item("latency_p99_ns", ns(r.latency.quantile(0.99)))?;
    d.set_item("latency_min_ns", ns(r.latency.min()))?;
    d.set_item("latency_max_ns", ns(r.latency.max()))?;
    d.set_item("hops_avg", r.hops_avg())?;
    d.set_item("hop_histogram", r.hops.clone())?;
    d.set_item("indirect_fraction", r.indirect_fraction())?;
    d.set_item("delivered", r.delivered)?;
    d.set_item("generated_packets", r.generated_packets)?;
    d.set_item("injected_total", r.injected_total)?;
    d.set_item("delivered_total", r.delivered_total)?;
    d.set_item("in_flight", r.in_flight)?;
    d.set_item("source_queued", r.source_queued)?;
    d.set_item("window_ns", [ns(r.window.0), ns(r.window.1)])?;
    d.set_item("end_ns", ns(r.end_time))?;
    d.set_item("events", r.events)?;
    d.set_item("wall_seconds", r.wall_seconds)?;
    d.set_item("threads", r.threads)?;
    d.set_item("packets_per_second", r.packets_per_second())?;
    let uses = r.link_uses(routes);
    let util = r.utilisation(routes);
    let lu = PyDict::new(py);
    lu.set_item("mean", util.mean)?;
    lu.set_item("max", util.max)?;
    lu.set_item("endpoint_mean", util.endpoint_mean)?;
    d.set_item("link_utilisation", lu)?;
    let link_item = |u: &net::LinkUse| -> PyResult<Bound<'py, PyDict>> {
        let x = PyDict::new(py);
        x.set_item("from", u.from)?;
        x.set_item("to", u.to)?;
        x.set_item("link", u.link)?;
        x.set_item("packets", u.packets)?;
        x.set_item("utilisation", u.utilisation)?;
        Ok(x)
    };
    let top = PyList::empty(py);
    for u in r.top_links(routes, top_links) {
        top.append(link_item(&u)?)?;
    }
    d.set_item("top_links", top)?;
    if links {
        let all = PyList::empty(py);
        for u in &uses {
            all.append(link_item(u)?)?;
        }
        d.set_item("links", all)?;
    }
    if let (Some(c), Some(e)) = (r.completion, r.effective_throughput) {
        d.set_item("completion_ns", ns(c))?;
        d.set_item("effective_throughput", e)?;
    }
    if let Some(dims) = r.dims {
        d.set_item("dims", dims.to_vec())?;
    }
    Ok(d)
}

/// The channel dependency graph of a routing on a topology: its VC scheme and VCs, channels
/// and dependencies, whether it is acyclic and a cycle ((from, to, vc) channels) if not, the
/// routing's diameter and UGAL cost mode.
#[pyclass(name = "ChannelGraph", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyChannelGraph {
    topology: String,
    routing: String,
    vc_scheme: &'static str,
    vcs: usize,
    channels: usize,
    dependencies: usize,
    acyclic: bool,
    cycle: Option<Vec<(u32, u32, u8)>>,
    diameter: u16,
    ugal_cost: &'static str,
}

/// Runs synthetic traffic at each load; returns one report dict per load.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (
    topology,
    routing,
    traffic,
    loads,
    *,
    seed = NetParams::default().seed,
    warmup_ps = DEFAULT_WARMUP,
    duration_ps = DEFAULT_DURATION,
    drain = false,
    packet_bytes = NetParams::default().packet_bytes,
    buffer_bytes = NetParams::default().buffer_bytes,
    switch_latency_ps = NetParams::default().switch_latency,
    watchdog_ps = NetParams::default().watchdog,
    top_links = DEFAULT_TOP_LINKS,
    links = false,
    threads = NetParams::default().threads,
))]
fn netsim_run<'py>(
    py: Python<'py>,
    topology: &PyTopology,
    routing: Text<RoutingParam>,
    traffic: Text<TrafficParam>,
    loads: Vec<f64>,
    seed: u64,
    warmup_ps: Time,
    duration_ps: Time,
    drain: bool,
    packet_bytes: u32,
    buffer_bytes: u64,
    switch_latency_ps: Time,
    watchdog_ps: Time,
    top_links: usize,
    links: bool,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    call(Class::Network, "netsim_run", || {
        let topo = topology.topology();
        let spec = RoutingSpec::parse(routing.as_str()).py()?;
        let tspec = TrafficSpec::parse(traffic.as_str()).py()?;
        let p = params(
            seed,
            packet_bytes,
            buffer_bytes,
            switch_latency_ps,
            watchdog_ps,
            threads,
        );
        let out = PyList::empty(py);
        let network = guard::detach(py, || Network::new(topo, &spec, p)).py()?;
        let pattern = guard::detach(py, || tspec.resolve(topo, network.routes(), seed)).py()?;
        let name = tspec.to_string();
        for load in loads {
            let s = Synthetic {
                pattern: pattern.clone(),
                load,
                warmup: warmup_ps,
                duration: duration_ps,
                drain,
            };
            let rep = guard::detach(py, || network.run(&Workload::Synthetic(s), &name)).py()?;
            out.append(report_dict(
                py,
                topo.name(),
                network.routes(),
                &rep,
                top_links,
                links,
            )?)?;
        }
        Ok(out)
    })
}

/// Runs an exchange (`a2a` or `nn`) to completion; returns its report dict.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (
    topology,
    routing,
    pattern,
    *,
    dims = None,
    message_bytes = None,
    interleave = true,
    seed = NetParams::default().seed,
    packet_bytes = NetParams::default().packet_bytes,
    buffer_bytes = NetParams::default().buffer_bytes,
    switch_latency_ps = NetParams::default().switch_latency,
    watchdog_ps = NetParams::default().watchdog,
    top_links = DEFAULT_TOP_LINKS,
    links = false,
    threads = NetParams::default().threads,
))]
fn netsim_exchange<'py>(
    py: Python<'py>,
    topology: &PyTopology,
    routing: Text<RoutingParam>,
    pattern: &str,
    dims: Option<[u32; 3]>,
    message_bytes: Option<u64>,
    interleave: bool,
    seed: u64,
    packet_bytes: u32,
    buffer_bytes: u64,
    switch_latency_ps: Time,
    watchdog_ps: Time,
    top_links: usize,
    links: bool,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    call(Class::Network, "netsim_exchange", || {
        let topo = topology.topology();
        let spec = RoutingSpec::parse(routing.as_str()).py()?;
        let x = ExchangeSpec::parse(pattern)
            .and_then(|x| x.with_options(dims, message_bytes, interleave))
            .py()?;
        let p = params(
            seed,
            packet_bytes,
            buffer_bytes,
            switch_latency_ps,
            watchdog_ps,
            threads,
        );
        let network = guard::detach(py, || Network::new(topo, &spec, p)).py()?;
        let plan = guard::detach(py, || x.plan(topo, packet_bytes, seed)).py()?;
        let name = x.name();
        let rep = guard::detach(py, || network.run(&Workload::Exchange(plan), name)).py()?;
        report_dict(py, topo.name(), network.routes(), &rep, top_links, links)
    })
}

/// The channel dependency graph of a routing on a topology: VC scheme, VCs, size, and a cycle
/// if there is one.
#[pyfunction]
fn netsim_cdg(
    py: Python<'_>,
    topology: &PyTopology,
    routing: Text<RoutingParam>,
) -> PyResult<PyChannelGraph> {
    call(Class::Network, "netsim_cdg", || {
        let topo = topology.topology();
        let spec = RoutingSpec::parse(routing.as_str()).py()?;
        let (routes, g, cycle) = guard::detach(py, || -> Result<_, net::NetworkError> {
            let routes = Routes::new(topo, &spec)?;
            let g = cdg::build(&routes, spec.algorithm);
            let cycle = g.find_cycle();
            Ok((routes, g, cycle))
        })
        .py()?;
        Ok(PyChannelGraph {
            topology: topo.name().to_string(),
            routing: spec.to_string(),
            vc_scheme: routes.scheme().name(),
            vcs: routes.num_vcs(),
            channels: g.used_channels(),
            dependencies: g.edges().len(),
            acyclic: cycle.is_none(),
            cycle: cycle.map(|c| c.iter().map(|ch| (ch.from, ch.to, ch.vc)).collect()),
            diameter: routes.diameter(),
            ugal_cost: routes.ugal_cost_mode(),
        })
    })
}

/// The destination of every endpoint under a synthetic pattern (-1 for uniform traffic,
/// which has none fixed).
#[pyfunction]
#[pyo3(signature = (topology, traffic, *, seed = NetParams::default().seed))]
fn netsim_pattern(
    py: Python<'_>,
    topology: &PyTopology,
    traffic: &str,
    seed: u64,
) -> PyResult<Option<Vec<u32>>> {
    call(Class::Network, "netsim_pattern", || {
        let topo = topology.topology();
        let t = TrafficSpec::parse(traffic).py()?;
        let pat = guard::detach(py, || -> Result<_, net::NetworkError> {
            let routes = Routes::new(topo, &RoutingSpec::new(net::Algorithm::Min))?;
            t.resolve(topo, &routes, seed)
        })
        .py()?;
        Ok(match pat {
            net::Pattern::Uniform => None,
            net::Pattern::Map(m) => Some(m),
        })
    })
}

/// Checks a routing spec and returns its canonical form.
#[pyfunction]
fn netsim_routing(spec: &str) -> PyResult<String> {
    call(Class::Network, "netsim_routing", || {
        RoutingSpec::parse(spec).py().map(|s| s.to_string())
    })
}

/// Checks a traffic spec and returns its canonical form.
#[pyfunction]
fn netsim_traffic(spec: &str) -> PyResult<String> {
    call(Class::Network, "netsim_traffic", || {
        TrafficSpec::parse(spec).py().map(|s| s.to_string())
    })
}

/// The routings, traffic patterns and exchanges a spec may name: `{"routings": [...],
/// "traffics": [...], "exchanges": [...]}`, one dict per entry (see `spec::forms`).
#[pyfunction]
fn netsim_forms<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    call(Class::Network, "netsim_forms", || {
        let d = PyDict::new(py);
        d.set_item(
            "routings",
            forms(py, net::routing::ROUTINGS.entries, |r| &r.form)?,
        )?;
        d.set_item("traffics", forms(py, net::traffic::TRAFFICS, |t| &t.form)?)?;
        d.set_item(
            "exchanges",
            forms(py, net::traffic::EXCHANGES, |x| &x.form)?,
        )?;
        Ok(d)
    })
}

/// The largest 3-D torus of at most `n` processes (the seed's rule; see the core docs).
#[pyfunction]
fn netsim_fit_torus(n: u64) -> PyResult<Option<[u32; 3]>> {
    call(Class::Network, "netsim_fit_torus", || Ok(net::fit_torus(n)))
}

/// Zero-load latency (ps) of a path of `hops` router hops with the links of endpoint 0.
#[pyfunction]
#[pyo3(signature = (
    topology,
    hops,
    *,
    packet_bytes = NetParams::default().packet_bytes,
    switch_latency_ps = NetParams::default().switch_latency,
))]
fn netsim_zero_load_latency(
    topology: &PyTopology,
    hops: u32,
    packet_bytes: u32,
    switch_latency_ps: Time,
) -> PyResult<u64> {
    call(Class::Network, "netsim_zero_load_latency", || {
        let p = NetParams {
            packet_bytes,
            switch_latency: switch_latency_ps,
            ..NetParams::default()
        };
        p.zero_load_latency(topology.topology(), hops).py()
    })
}

/// Adds this module's functions and classes to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyChannelGraph>()?;
    m.add_function(wrap_pyfunction!(netsim_run, m)?)?;
    m.add_function(wrap_pyfunction!(netsim_exchange, m)?)?;
    m.add_function(wrap_pyfunction!(netsim_cdg, m)?)?;
    m.add_function(wrap_pyfunction!(netsim_pattern, m)?)?;
    m.add_function(wrap_pyfunction!(netsim_routing, m)?)?;
    m.add_function(wrap_pyfunction!(netsim_traffic, m)?)?;
    m.add_function(wrap_pyfunction!(netsim_forms, m)?)?;
    m.add_function(wrap_pyfunction!(netsim_fit_torus, m)?)?;
    m.add_function(wrap_pyfunction!(netsim_zero_load_latency, m)?)?;
    Ok(())
}
