//! Bindings of hypercuboid_core::network: convert, call (GIL released), convert.

use crate::args::{RoutingParam, SeedParam, Text, TrafficParam, Whole};
use crate::errors::{Class, PyResultExt};
use crate::guard::{self, call};
use crate::spec::{form_list, PyForm};
use crate::topology::PyTopology;
use hypercuboid_core::network::packet::{DEFAULT_DURATION, DEFAULT_TOP_LINKS, DEFAULT_WARMUP};
use hypercuboid_core::network::{
    self as net, cdg, ExchangeSpec, NetParams, Network, Report, Routes, RoutingSpec, Synthetic,
    TrafficSpec, Workload,
};
use hypercuboid_core::topology::Topology;
use hypercuboid_core::units::{self, Time};
use pyo3::prelude::*;

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

/// One directed router link: `(from, to, link, packets, utilisation)`.
type LinkRow = (u32, u32, u32, u64, f64);

/// The report of one netsim run, its fields those of `hypercuboid.netsim.Report` (times in
/// ns): `link_utilisation` as `(mean, max, endpoint_mean)`, `top_links` and `links` as
/// `(from, to, link, packets, utilisation)` rows.
#[pyclass(name = "NetReport", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyNetReport {
    topology: String,
    routing: String,
    vc_scheme: &'static str,
    vcs: usize,
    traffic: String,
    offered: f64,
    generated: f64,
    accepted: f64,
    latency_avg_ns: f64,
    latency_p50_ns: f64,
    latency_p99_ns: f64,
    latency_min_ns: f64,
    latency_max_ns: f64,
    hops_avg: f64,
    hop_histogram: Vec<u64>,
    indirect_fraction: f64,
    delivered: u64,
    generated_packets: u64,
    injected_total: u64,
    delivered_total: u64,
    in_flight: u64,
    source_queued: u64,
    window_ns: (f64, f64),
    end_ns: f64,
    events: u64,
    wall_seconds: f64,
    threads: usize,
    packets_per_second: f64,
    link_utilisation: (f64, f64, f64),
    top_links: Vec<LinkRow>,
    links: Option<Vec<LinkRow>>,
    completion_ns: Option<f64>,
    effective_throughput: Option<f64>,
    dims: Option<(u32, u32, u32)>,
}

impl PyNetReport {
    /// The report of one run on `topo` (its name), with its `top_links` busiest links and,
    /// with `links`, every link.
    fn of(topo: &str, routes: &Routes, r: Report, top_links: usize, links: bool) -> Self {
        let row = |u: &net::LinkUse| (u.from, u.to, u.link, u.packets, u.utilisation);
        let util = r.utilisation(routes);
        PyNetReport {
            topology: topo.to_string(),
            vc_scheme: r.vc_scheme,
            vcs: r.vcs,
            offered: r.offered,
            generated: r.generated,
            accepted: r.accepted,
            latency_avg_ns: r.latency.mean() / 1e3,
            latency_p50_ns: ns(r.latency.quantile(0.5)),
            latency_p99_ns: ns(r.latency.quantile(0.99)),
            latency_min_ns: ns(r.latency.min()),
            latency_max_ns: ns(r.latency.max()),
            hops_avg: r.hops_avg(),
            indirect_fraction: r.indirect_fraction(),
            delivered: r.delivered,
            generated_packets: r.generated_packets,
            injected_total: r.injected_total,
            delivered_total: r.delivered_total,
            in_flight: r.in_flight,
            source_queued: r.source_queued,
            window_ns: (ns(r.window.0), ns(r.window.1)),
            end_ns: ns(r.end_time),
            events: r.events,
            wall_seconds: r.wall_seconds,
            threads: r.threads,
            packets_per_second: r.packets_per_second(),
            link_utilisation: (util.mean, util.max, util.endpoint_mean),
            top_links: r.top_links(routes, top_links).iter().map(row).collect(),
            links: links.then(|| r.link_uses(routes).iter().map(row).collect()),
            completion_ns: r.effective_throughput.and(r.completion.map(ns)),
            effective_throughput: r.completion.and(r.effective_throughput),
            dims: r.dims.map(|[x, y, z]| (x, y, z)),
            hop_histogram: r.hops,
            routing: r.routing,
            traffic: r.traffic,
        }
    }
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

/// A netsim run's common arguments: the topology, the routing, the router's parameters and
/// what the report lists.
struct Netsim<'a, 'py> {
    py: Python<'py>,
    topo: &'a Topology,
    spec: RoutingSpec,
    seed: u64,
    params: NetParams,
    top_links: usize,
    links: bool,
}

impl Netsim<'_, '_> {
    /// The network of the topology under the routing (built with the GIL released).
    fn network(&self) -> PyResult<Network<'_>> {
        let (topo, spec, p) = (self.topo, &self.spec, self.params.clone());
        guard::detach(self.py, move || Network::new(topo, spec, p)).py()
    }

    /// The report of one run on `network`.
    fn report(&self, network: &Network, rep: Report) -> PyNetReport {
        PyNetReport::of(
            self.topo.name(),
            network.routes(),
            rep,
            self.top_links,
            self.links,
        )
    }
}

/// Declares a netsim entry point: `$name(topology, routing, <its arguments>, *, <its
/// keywords>, <the router's and the report's keywords>)`, which reads the topology and the
/// routing and hands them with the common keywords ([`Netsim`]) and its own arguments to
/// `$run`. Its keywords are written `name: Type = [default]`.
macro_rules! netsim {
    (
        $(#[doc = $doc:literal])*
        fn $name:ident(
            $($arg:ident: $ty:ty),*;
            $($kw:ident: $kty:ty = [$($kdef:tt)*]),* $(,)?
        ) -> $ret:ty = $run:ident;
    ) => {
        $(#[doc = $doc])*
        #[pyfunction]
        #[allow(clippy::too_many_arguments)]
        #[pyo3(signature = (
            topology,
            routing,
            $($arg,)*
            *,
            $($kw = $($kdef)*,)*
            seed = Whole::of(NetParams::default().seed),
            packet_bytes = NetParams::default().packet_bytes,
            buffer_bytes = NetParams::default().buffer_bytes,
            switch_latency_ps = NetParams::default().switch_latency,
            watchdog_ps = NetParams::default().watchdog,
            top_links = DEFAULT_TOP_LINKS,
            links = false,
            threads = NetParams::default().threads,
        ))]
        fn $name(
            py: Python<'_>,
            topology: &PyTopology,
            routing: Text<RoutingParam>,
            $($arg: $ty,)*
            $($kw: $kty,)*
            seed: Whole<SeedParam, u64>,
            packet_bytes: u32,
            buffer_bytes: u64,
            switch_latency_ps: Time,
            watchdog_ps: Time,
            top_links: usize,
            links: bool,
            threads: usize,
        ) -> PyResult<$ret> {
            call(Class::Network, stringify!($name), || {
                let net = Netsim {
                    py,
                    topo: topology.topology(),
                    spec: RoutingSpec::parse(routing.as_str()).py()?,
                    seed: seed.0,
                    params: params(
                        seed.0,
                        packet_bytes,
                        buffer_bytes,
                        switch_latency_ps,
                        watchdog_ps,
                        threads,
                    ),
                    top_links,
                    links,
                };
                $run(&net, $($arg,)* $($kw,)*)
            })
        }
    };
}

netsim! {
    /// Runs synthetic traffic at each load; returns one `NetReport` per load.
    fn netsim_run(
        traffic: Text<TrafficParam>, loads: Vec<f64>;
        warmup_ps: Time = [DEFAULT_WARMUP],
        duration_ps: Time = [DEFAULT_DURATION],
        drain: bool = [false],
    ) -> Vec<PyNetReport> = run;
}

/// `netsim_run`: the network, the pattern resolved once, one run per load.
fn run(
    net: &Netsim<'_, '_>,
    traffic: Text<TrafficParam>,
    loads: Vec<f64>,
    warmup_ps: Time,
    duration_ps: Time,
    drain: bool,
) -> PyResult<Vec<PyNetReport>> {
    let (py, topo, seed) = (net.py, net.topo, net.seed);
    let tspec = TrafficSpec::parse(traffic.as_str()).py()?;
    let mut out = Vec::with_capacity(loads.len());
    let network = net.network()?;
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
        out.push(net.report(&network, rep));
    }
    Ok(out)
}

netsim! {
    /// Runs an exchange (`a2a` or `nn`) to completion; returns its `NetReport`.
    fn netsim_exchange(
        pattern: &str;
        dims: Option<[u32; 3]> = [None],
        message_bytes: Option<u64> = [None],
        interleave: bool = [true],
    ) -> PyNetReport = exchange;
}

/// `netsim_exchange`: the network, the exchange's plan, one run to completion.
fn exchange(
    net: &Netsim<'_, '_>,
    pattern: &str,
    dims: Option<[u32; 3]>,
    message_bytes: Option<u64>,
    interleave: bool,
) -> PyResult<PyNetReport> {
    let (py, topo, seed) = (net.py, net.topo, net.seed);
    let packet_bytes = net.params.packet_bytes;
    let x = ExchangeSpec::parse(pattern)
        .and_then(|x| x.with_options(dims, message_bytes, interleave))
        .py()?;
    let network = net.network()?;
    let plan = guard::detach(py, || x.plan(topo, packet_bytes, seed)).py()?;
    let name = x.name();
    let rep = guard::detach(py, || network.run(&Workload::Exchange(plan), name)).py()?;
    Ok(net.report(&network, rep))
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
#[pyo3(signature = (topology, traffic, *, seed = Whole::of(NetParams::default().seed)))]
fn netsim_pattern(
    py: Python<'_>,
    topology: &PyTopology,
    traffic: &str,
    seed: Whole<SeedParam, u64>,
) -> PyResult<Option<Vec<u32>>> {
    call(Class::Network, "netsim_pattern", || {
        let topo = topology.topology();
        let t = TrafficSpec::parse(traffic).py()?;
        let pat = guard::detach(py, || -> Result<_, net::NetworkError> {
            let routes = Routes::new(topo, &RoutingSpec::new(net::Algorithm::Min))?;
            t.resolve(topo, &routes, seed.0)
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

/// The routings, traffic patterns and exchanges a spec may name, as `(routings, traffics,
/// exchanges)`: one `SpecForm` per entry of each table.
#[pyfunction]
fn netsim_forms() -> PyResult<(Vec<PyForm>, Vec<PyForm>, Vec<PyForm>)> {
    call(Class::Network, "netsim_forms", || {
        Ok((
            form_list(net::routing::ROUTINGS.entries, |r| &r.form),
            form_list(net::traffic::TRAFFICS, |t| &t.form),
            form_list(net::traffic::EXCHANGES, |x| &x.form),
        ))
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
    add!(
        m,
        [PyChannelGraph, PyNetReport],
        [
            netsim_run,
            netsim_exchange,
            netsim_cdg,
            netsim_pattern,
            netsim_routing,
            netsim_traffic,
            netsim_forms,
            netsim_fit_torus,
            netsim_zero_load_latency
        ]
    );
    Ok(())
}
