//! Bindings of hypercuboid_core::sim and ::model: simulate a schedule on a cost model.

use hypercuboid_core::model::{
    parse_model, parse_node, parse_noise, Level, Mapping, ModelSpec, NodeModel, MODELS, NOISES,
};
use hypercuboid_core::network::{NetParams, Network, NicOrder, RoutingSpec};
use hypercuboid_core::sim::{self, CounterTrack, NetworkSetup, SimOptions, SimResult};
use pyo3::prelude::*;

use crate::errors::{Class, PyResultExt};
use crate::guard::{self, call};
use crate::schedule::PySchedule;
use crate::sim_result::{network_result, simulation_result, PySimulationResult};
use crate::spec::{form_list, PyForm};
use crate::topology::PyTopology;

/// Simulates the schedule on `model` (a spec string): a `SimulationResult` whose `threads` is
/// the threads the run was simulated on (1 when it ran on one, whatever was asked) and whose
/// `trace` is kept when asked for; with `chrome_trace` a path, the trace is also written there
/// as Chrome / Perfetto JSON. The GIL is released while simulating.
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate(
    this: &PySchedule,
    py: Python<'_>,
    model: &str,
    trace: bool,
    noise: Option<&str>,
    seed: u64,
    chrome_trace: Option<String>,
    calls: u32,
    threads: usize,
) -> PyResult<PySimulationResult> {
    let spec = parse_model(model).py()?;
    let opts = options(trace || chrome_trace.is_some(), noise, seed, calls, threads)?;
    let s = this.inner.clone();
    let spec2 = spec.clone();
    let (res, used) =
        guard::detach(py, move || sim::simulate_on_threads(&s, &spec2, &opts)).py()?;
    write_chrome_trace(py, &res, chrome_trace, &[])?;
    simulation_result(py, spec.to_string(), res, trace, Some(used), None)
}

/// Simulates `schedule` on the node level: `model` (a `loggops:` spec) for the hosts, `node`
/// (a `node:ranks=R,bw=BW,...` spec) for the bandwidth the ranks of a node share. Returns the
/// `SimulationResult` of `Schedule.simulate`, whose `model` is `HOST + NODE` (both canonical)
/// and `threads` 1 (a node level runs on one). The GIL is released while simulating.
#[pyfunction]
#[pyo3(signature = (schedule, model, node, trace = false, noise = None, seed = 0, chrome_trace = None, calls = 1))]
#[allow(clippy::too_many_arguments)]
fn simulate_node(
    py: Python<'_>,
    schedule: &PySchedule,
    model: &str,
    node: &str,
    trace: bool,
    noise: Option<&str>,
    seed: u64,
    chrome_trace: Option<String>,
    calls: u32,
) -> PyResult<PySimulationResult> {
    call(Class::Simulation, "simulate_node", || {
        let host = parse_model(model).py()?;
        let node = parse_node(node).py()?;
        let opts = options(trace || chrome_trace.is_some(), noise, seed, calls, 1)?;
        let s = schedule.inner.clone();
        let m = NodeModel::from_specs(&host, &node, s.nranks()).py()?;
        let res = guard::detach(py, move || sim::simulate_with(&s, &m, &opts)).py()?;
        write_chrome_trace(py, &res, chrome_trace, &[])?;
        simulation_result(py, format!("{host} + {node}"), res, trace, Some(1), None)
    })
}

/// The options of a run: `noise` (a spec) read here.
fn options(
    trace: bool,
    noise: Option<&str>,
    seed: u64,
    calls: u32,
    threads: usize,
) -> PyResult<SimOptions> {
    Ok(SimOptions {
        trace,
        noise: noise.map(parse_noise).transpose().py()?,
        seed,
        calls,
        threads,
    })
}

/// Writes the run's trace to `chrome_trace` (a path) when one is asked for, with `counters`.
fn write_chrome_trace(
    py: Python<'_>,
    res: &SimResult,
    chrome_trace: Option<String>,
    counters: &[CounterTrack],
) -> PyResult<()> {
    if let (Some(path), Some(t)) = (&chrome_trace, &res.trace) {
        let t = t.clone();
        let p = path.clone();
        let c = counters.to_vec();
        guard::detach(py, move || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&p)?;
            sim::write_chrome_trace_with(&t, &c, &mut f)
        })
        .map_err(|e| Class::Simulation.err(format!("{}: {e}", path)))?;
    }
    Ok(())
}

/// Simulates the schedule on a network: `topology` with `routing`, messages carried at
/// `level` (`packet` or `flow`), ranks placed by `mapping` (`linear`, `round_robin`,
/// `random[:seed=K]`, or a list of endpoints), `ranks_per_endpoint` to an endpoint, each NIC
/// sending its messages' packets in `nic` order (`interleave` or `fifo`), hosts
/// costing what `model` (a `loggops:` spec, default LogGOPSim's defaults) says, with `noise`
/// (a noise spec) a random delay before every op drawn from the network's seed. Returns the
/// `SimulationResult` of [`simulate`] with its `network`: `level`, `routing`, `topology`,
/// `links` (every directed link that carried something, busiest first),
/// `mean_network_utilisation`, `messages` (totals), `worst` (the message that waited longest,
/// or None), `records` (with `records=True`: columns per network message), `placement`,
/// `wire_units`, `wire_events`, `timeline` (with `sample_links`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate_network(
    this: &PySchedule,
    py: Python<'_>,
    topology: &PyTopology,
    model: Option<&str>,
    routing: &str,
    level: &str,
    mapping: &str,
    mapping_endpoints: Option<Vec<u32>>,
    ranks_per_endpoint: u32,
    nic: &str,
    params: NetParams,
    trace: bool,
    chrome_trace: Option<String>,
    records: bool,
    sample_links: bool,
    calls: u32,
    noise: Option<&str>,
) -> PyResult<PySimulationResult> {
    let noise = noise.map(parse_noise).transpose().py()?;
    let host = sim::network_host(model.map(parse_model).transpose().py()?.as_ref()).py()?;
    let level = Level::parse(level).py()?;
    let nic = NicOrder::parse(nic).py()?;
    let mapping = match mapping_endpoints {
        Some(v) => Mapping::Explicit(v),
        None => Mapping::from_spec(mapping).py()?,
    };
    let routing = RoutingSpec::parse(routing).py()?;
    let topo = topology.topology();
    let setup = NetworkSetup {
        level,
        host,
        mapping,
        ranks_per_endpoint,
        record_messages: records,
        sample_links: sample_links || chrome_trace.is_some(),
        nic,
    };
    // One seed: the network's random choices and the noise draws.
    // (The packet engine's threads are `params.threads`; the schedule engine runs on one.)
    let opts = SimOptions {
        trace: trace || chrome_trace.is_some(),
        noise,
        seed: params.seed,
        calls,
        threads: 1,
    };
    let s = this.inner.clone();
    let run = guard::detach(py, || -> Result<_, hypercuboid_core::sim::SimError> {
        let net = Network::new(topo, &routing, params)
            .map_err(|e| hypercuboid_core::sim::SimError::Network(Box::new(e)))?;
        let routing = net.routes().spec().to_string();
        sim::simulate_on_network(&s, &net, &setup, &opts).map(|r| (r, routing))
    })
    .py()?;
    let (run, routing) = run;
    let host_spec = ModelSpec::LogGops(host).to_string();
    write_chrome_trace(py, &run.result, chrome_trace, &run.counter_tracks())?;
    let net = network_result(
        py,
        &run,
        level.name(),
        routing,
        topo.name().to_string(),
        records,
        sample_links,
    )?;
    simulation_result(py, host_spec, run.result, trace, None, Some(net))
}

/// The accepted rank mappings, for messages.
#[pyfunction]
fn network_mappings() -> String {
    Mapping::accepted()
}

/// Validates a cost-model spec; returns it in canonical form.
#[pyfunction(name = "parse_model")]
fn parse_model_py(spec: &str) -> PyResult<String> {
    canonical("parse_model", parse_model, spec)
}

/// `parse`'s canonical form of `spec` (what the binding's `parse_*` functions return), its
/// error raised as such where it is none.
pub(crate) fn canonical<T: std::fmt::Display, E: crate::errors::ToPyErr>(
    what: &str,
    parse: fn(&str) -> Result<T, E>,
    spec: &str,
) -> PyResult<String> {
    call(Class::Model, what, || Ok(parse(spec).py()?.to_string()))
}

/// Validates a noise spec; returns it in canonical form.
#[pyfunction(name = "parse_noise")]
fn parse_noise_py(spec: &str) -> PyResult<String> {
    canonical("parse_noise", parse_noise, spec)
}

/// The cost models a spec may name.
#[pyfunction]
fn model_forms() -> PyResult<Vec<PyForm>> {
    call(Class::Model, "model_forms", || {
        Ok(form_list(MODELS, |e| &e.form))
    })
}

/// The noise distributions a spec may name.
#[pyfunction]
fn noise_forms() -> PyResult<Vec<PyForm>> {
    call(Class::Model, "noise_forms", || {
        Ok(form_list(NOISES, |e| &e.form))
    })
}

/// Adds this module's functions and classes to `hypercuboid._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [],
        [
            parse_model_py,
            parse_noise_py,
            model_forms,
            noise_forms,
            network_mappings,
            simulate_node
        ]
    );
    Ok(())
}
