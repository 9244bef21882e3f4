//! Bindings of hypercuboid_core::sim and ::model: simulate a schedule on a cost model.

use hypercuboid_core::model::{
    parse_model, parse_noise, Level, LogGopsModel, Mapping, ModelSpec, MODELS, NOISES,
};
use hypercuboid_core::network::{NetParams, Network, NicOrder, RoutingSpec};
use hypercuboid_core::sim::{self, CounterTrack, NetworkSetup, SimOptions, SimResult};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{error, PyResultExt};
use crate::schedule::PySchedule;
use crate::topology::PyTopology;

/// Simulates the schedule on `model` (a spec string). Returns a dict: `model` (canonical
/// spec), `completion_ps`, `rank_finish_ps` (uint64 array), `ops`, `messages`, `threads`
/// (the threads the run was simulated on: 1 when it ran on one, whatever was asked), and
/// `trace` (None, or a dict of NumPy columns) — with `chrome_trace` a path, the trace is also
/// written there as Chrome / Perfetto JSON. The GIL is released while simulating.
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate<'py>(
    this: &PySchedule,
    py: Python<'py>,
    model: &str,
    trace: bool,
    noise: Option<&str>,
    seed: u64,
    chrome_trace: Option<String>,
    calls: u32,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = parse_model(model).py()?;
    let noise = noise.map(parse_noise).transpose().py()?;
    let opts = SimOptions {
        trace: trace || chrome_trace.is_some(),
        noise,
        seed,
        calls,
        threads,
    };
    let s = this.inner.clone();
    let spec2 = spec.clone();
    let (res, used) = py
        .detach(move || sim::simulate_on_threads(&s, &spec2, &opts))
        .py()?;
    let d = result_dict(py, spec.to_string(), res, trace, chrome_trace, &[])?;
    d.set_item("threads", used)?;
    Ok(d)
}

/// The dict of a simulation's result (see [`simulate`]); writes the Chrome trace if asked.
fn result_dict<'py>(
    py: Python<'py>,
    model: String,
    res: SimResult,
    trace: bool,
    chrome_trace: Option<String>,
    counters: &[CounterTrack],
) -> PyResult<Bound<'py, PyDict>> {
    if let (Some(path), Some(t)) = (&chrome_trace, &res.trace) {
        let t = t.clone();
        let p = path.clone();
        let c = counters.to_vec();
        py.detach(move || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&p)?;
            sim::write_chrome_trace_with(&t, &c, &mut f)
        })
        .map_err(|e| error("SimulationError", format!("{}: {e}", path)))?;
    }
    let d = PyDict::new(py);
    d.set_item("model", model)?;
    d.set_item("completion_ps", res.completion)?;
    d.set_item("rank_finish_ps", res.rank_finish.into_pyarray(py))?;
    d.set_item("ops", res.ops)?;
    d.set_item("messages", res.messages)?;
    match (trace, res.trace) {
        (true, Some(t)) => {
            let c = PyDict::new(py);
            c.set_item("op_rank", t.op_rank.into_pyarray(py))?;
            c.set_item("op_index", t.op_index.into_pyarray(py))?;
            let kinds: Vec<u8> = t.op_kind.iter().map(|k| *k as u8).collect();
            c.set_item("op_kind", kinds.into_pyarray(py))?;
            c.set_item("op_start", t.op_start.into_pyarray(py))?;
            c.set_item("op_end", t.op_end.into_pyarray(py))?;
            c.set_item("msg_src", t.msg_src.into_pyarray(py))?;
            c.set_item("msg_dst", t.msg_dst.into_pyarray(py))?;
            c.set_item("msg_src_op", t.msg_src_op.into_pyarray(py))?;
            c.set_item("msg_dst_op", t.msg_dst_op.into_pyarray(py))?;
            c.set_item("msg_depart", t.msg_start.into_pyarray(py))?;
            c.set_item("msg_arrival", t.msg_arrival.into_pyarray(py))?;
            c.set_item("msg_bytes", t.msg_bytes.into_pyarray(py))?;
            d.set_item("trace", c)?;
        }
        _ => d.set_item("trace", py.None())?,
    }
    Ok(d)
}

/// Simulates the schedule on a network: `topology` with `routing`, messages carried at
/// `level` (`packet` or `flow`), ranks placed by `mapping` (`linear`, `round_robin`,
/// `random[:seed=K]`, or a list of endpoints), `ranks_per_endpoint` to an endpoint, each NIC
/// sending its messages' packets in `nic` order (`interleave` or `fifo`), hosts
/// costing what `model` (a `loggops:` spec, default LogGOPSim's defaults) says, with `noise`
/// (a noise spec) a random delay before every op drawn from the network's seed. Returns the
/// dict of [`simulate`] plus `network`: `level`, `routing`, `topology`, `links` (every
/// directed link that carried something, busiest first: `a`, `b`, `kind`, `bytes`,
/// `utilisation`), `mean_network_utilisation`, `messages` (totals), `worst` (the message that
/// waited longest, or None), `records` (with `records=True`: NumPy columns per network
/// message), `placement`, `wire_units`, `wire_events`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate_network<'py>(
    this: &PySchedule,
    py: Python<'py>,
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
) -> PyResult<Bound<'py, PyDict>> {
    let noise = noise.map(parse_noise).transpose().py()?;
    let host = match model {
        None => LogGopsModel::default(),
        Some(text) => match parse_model(text).py()? {
            ModelSpec::LogGops(m) => m,
            other => {
                return Err(error(
                    "ModelError",
                    format!(
                        "invalid host model '{other}': a network needs a host model with CPU \
                         and NIC costs, loggops:o=...,O=...,g=...,S=... (its L and G apply \
                         only between ranks of one endpoint); postal and pipelined have none"
                    ),
                ))
            }
        },
    };
    let level = Level::parse(level).py()?;
    let nic = NicOrder::parse(nic).py()?;
    let mapping = match (mapping_endpoints, mapping.strip_prefix("file:")) {
        (Some(v), _) => Mapping::Explicit(v),
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                error(
                    "NetworkError",
                    format!("invalid mapping file {path}: {e}; it lists one endpoint per rank"),
                )
            })?;
            Mapping::from_lines(&text, path).py()?
        }
        (None, None) => Mapping::parse(mapping).py()?,
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
    let run = py
        .detach(|| -> Result<_, hypercuboid_core::sim::SimError> {
            let net = Network::new(topo, &routing, params)
                .map_err(|e| hypercuboid_core::sim::SimError::Network(Box::new(e)))?;
            let routing = net.routes().spec().to_string();
            sim::simulate_on_network(&s, &net, &setup, &opts).map(|r| (r, routing))
        })
        .py()?;
    let (run, routing) = run;
    let host_spec = ModelSpec::LogGops(host).to_string();
    let counters: Vec<CounterTrack> = run
        .timeline
        .as_ref()
        .map(|tl| {
            tl.links
                .iter()
                .map(|(i, u)| {
                    let l = &run.links[*i];
                    let mut starts = vec![0];
                    starts.extend_from_slice(&tl.times[..tl.times.len().saturating_sub(1)]);
                    CounterTrack {
                        name: format!("{} -> {}", l.a, l.b),
                        points: starts.into_iter().zip(u.iter().copied()).collect(),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let d = result_dict(py, host_spec, run.result, trace, chrome_trace, &counters)?;
    let n = PyDict::new(py);
    n.set_item("level", level.name())?;
    n.set_item("routing", routing)?;
    n.set_item("topology", topo.name())?;
    let links = PyList::empty(py);
    for l in &run.links {
        let x = PyDict::new(py);
        x.set_item("a", &l.a)?;
        x.set_item("b", &l.b)?;
        x.set_item("kind", l.kind)?;
        x.set_item("bytes", l.bytes)?;
        x.set_item("utilisation", l.utilisation)?;
        x.set_item("link", l.link)?;
        links.append(x)?;
    }
    n.set_item("links", links)?;
    n.set_item("mean_network_utilisation", run.mean_network_utilisation)?;
    let m = &run.messages;
    let t = PyDict::new(py);
    t.set_item("network", m.network)?;
    t.set_item("control", m.control)?;
    t.set_item("local", m.local)?;
    t.set_item("bytes", m.bytes)?;
    t.set_item("transfer_ps", m.transfer_sum)?;
    t.set_item("queued_ps", m.queued_sum)?;
    n.set_item("messages", t)?;
    match m.worst {
        Some(w) if w.queued() > 0 => {
            let x = PyDict::new(py);
            x.set_item("src", w.src)?;
            x.set_item("dst", w.dst)?;
            x.set_item("bytes", w.bytes)?;
            x.set_item("injected_ps", w.injected)?;
            x.set_item("delivered_ps", w.delivered)?;
            x.set_item("transfer_ps", w.transfer)?;
            x.set_item("queued_ps", w.queued())?;
            n.set_item("worst", x)?;
        }
        _ => n.set_item("worst", py.None())?,
    }
    if records {
        let r = &run.records;
        let c = PyDict::new(py);
        let col = |f: fn(&hypercuboid_core::model::MessageRecord) -> u64| -> Vec<u64> {
            r.iter().map(f).collect()
        };
        c.set_item("src", col(|x| x.src as u64).into_pyarray(py))?;
        c.set_item("dst", col(|x| x.dst as u64).into_pyarray(py))?;
        c.set_item("bytes", col(|x| x.bytes).into_pyarray(py))?;
        c.set_item("injected_ps", col(|x| x.injected).into_pyarray(py))?;
        c.set_item("delivered_ps", col(|x| x.delivered).into_pyarray(py))?;
        c.set_item("transfer_ps", col(|x| x.transfer).into_pyarray(py))?;
        c.set_item("queued_ps", col(|x| x.queued()).into_pyarray(py))?;
        n.set_item("records", c)?;
    } else {
        n.set_item("records", py.None())?;
    }
    n.set_item("placement", run.placement.into_pyarray(py))?;
    n.set_item("wire_units", run.wire_units)?;
    n.set_item("wire_events", run.wire_events)?;
    match &run.timeline {
        Some(tl) if sample_links => {
            let x = PyDict::new(py);
            x.set_item("times_ps", tl.times.clone().into_pyarray(py))?;
            let ls = PyList::empty(py);
            for (i, u) in &tl.links {
                let e = PyDict::new(py);
                e.set_item("index", i)?;
                e.set_item("utilisation", u.clone().into_pyarray(py))?;
                ls.append(e)?;
            }
            x.set_item("links", ls)?;
            n.set_item("timeline", x)?;
        }
        _ => n.set_item("timeline", py.None())?,
    }
    d.set_item("network", n)?;
    Ok(d)
}

/// The accepted rank mappings, for messages.
#[pyfunction]
fn network_mappings() -> String {
    Mapping::accepted()
}

/// Validates a cost-model spec; returns it in canonical form.
#[pyfunction(name = "parse_model")]
fn parse_model_py(spec: &str) -> PyResult<String> {
    Ok(parse_model(spec).py()?.to_string())
}

/// Validates a noise spec; returns it in canonical form.
#[pyfunction(name = "parse_noise")]
fn parse_noise_py(spec: &str) -> PyResult<String> {
    Ok(parse_noise(spec).py()?.to_string())
}

/// The cost models a spec may name (see `spec::forms` for the dicts).
#[pyfunction]
fn model_forms(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    crate::spec::forms(py, MODELS, |e| &e.form)
}

/// The noise distributions a spec may name (see `spec::forms` for the dicts).
#[pyfunction]
fn noise_forms(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    crate::spec::forms(py, NOISES, |e| &e.form)
}

/// Adds this module's functions and classes to `hypercuboid._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_model_py, m)?)?;
    m.add_function(wrap_pyfunction!(parse_noise_py, m)?)?;
    m.add_function(wrap_pyfunction!(model_forms, m)?)?;
    m.add_function(wrap_pyfunction!(noise_forms, m)?)?;
    m.add_function(wrap_pyfunction!(network_mappings, m)?)?;
    Ok(())
}
