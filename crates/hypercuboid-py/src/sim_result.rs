//! A simulation's result (`hypercuboid_core::sim::SimResult`, and on a network
//! `hypercuboid_core::sim::NetworkRun`) as frozen classes, columns as NumPy arrays.

use hypercuboid_core::model::MessageRecord;
use hypercuboid_core::sim::{LinkLoad, NetworkRun, SimResult, Trace};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

/// Per-op and per-message timings of one simulation (times in picoseconds).
#[pyclass(name = "TraceColumns", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyTraceColumns {
    op_rank: Py<PyArray1<u32>>,
    op_index: Py<PyArray1<u32>>,
    op_kind: Py<PyArray1<u8>>,
    op_start: Py<PyArray1<u64>>,
    op_end: Py<PyArray1<u64>>,
    msg_src: Py<PyArray1<u32>>,
    msg_dst: Py<PyArray1<u32>>,
    msg_src_op: Py<PyArray1<u32>>,
    msg_dst_op: Py<PyArray1<u32>>,
    msg_depart: Py<PyArray1<u64>>,
    msg_arrival: Py<PyArray1<u64>>,
    msg_bytes: Py<PyArray1<u64>>,
}

/// One directed link's load over a run on a network.
#[pyclass(name = "LinkLoad", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyLinkLoad {
    a: String,
    b: String,
    kind: &'static str,
    bytes: u64,
    utilisation: f64,
    link: usize,
}

/// Totals over a run's messages: network, control and local messages, network bytes, and
/// the network messages' summed zero-load (`transfer_ps`) and queued (`queued_ps`) times.
#[pyclass(name = "MessageTotals", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyMessageTotals {
    network: u64,
    control: u64,
    local: u64,
    bytes: u64,
    transfer_ps: u128,
    queued_ps: u128,
}

/// One network message: its ranks, bytes and times (ps).
#[pyclass(name = "MessageRecord", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyMessageRecord {
    src: u32,
    dst: u32,
    bytes: u64,
    injected_ps: u64,
    delivered_ps: u64,
    transfer_ps: u64,
    queued_ps: u64,
}

/// One row per network message, as columns (uint64 arrays).
#[pyclass(name = "MessageRecords", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyMessageRecords {
    src: Py<PyArray1<u64>>,
    dst: Py<PyArray1<u64>>,
    bytes: Py<PyArray1<u64>>,
    injected_ps: Py<PyArray1<u64>>,
    delivered_ps: Py<PyArray1<u64>>,
    transfer_ps: Py<PyArray1<u64>>,
    queued_ps: Py<PyArray1<u64>>,
}

/// One sampled link of a timeline: its index in the run's `links` and its utilisation in
/// each interval.
#[pyclass(name = "TimelineLink", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyTimelineLink {
    index: usize,
    utilisation: Py<PyArray1<f64>>,
}

/// The busiest links' utilisation over time: the end of each interval (`times_ps`) and the
/// sampled links.
#[pyclass(name = "LinkTimeline", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyLinkTimeline {
    times_ps: Py<PyArray1<u64>>,
    links: Vec<Py<PyTimelineLink>>,
}

/// What a run on a network measured beyond the simulation's result.
#[pyclass(
    name = "NetworkRunResult",
    module = "hypercuboid._core",
    frozen,
    get_all
)]
pub(crate) struct PyNetworkRunResult {
    level: &'static str,
    routing: String,
    topology: String,
    links: Vec<Py<PyLinkLoad>>,
    mean_network_utilisation: f64,
    messages: Py<PyMessageTotals>,
    worst: Option<Py<PyMessageRecord>>,
    records: Option<Py<PyMessageRecords>>,
    placement: Py<PyArray1<u32>>,
    wire_units: u64,
    wire_events: u64,
    timeline: Option<Py<PyLinkTimeline>>,
}

/// A simulation's result: the model (canonical spec), the completion time and every rank's
/// finish time (ps), ops and messages, the threads it ran on (None on a network), the trace
/// when asked for, and on a network what the network measured.
#[pyclass(
    name = "SimulationResult",
    module = "hypercuboid._core",
    frozen,
    get_all
)]
pub(crate) struct PySimulationResult {
    model: String,
    completion_ps: u64,
    rank_finish_ps: Py<PyArray1<u64>>,
    ops: u64,
    messages: u64,
    threads: Option<usize>,
    trace: Option<Py<PyTraceColumns>>,
    network: Option<Py<PyNetworkRunResult>>,
}

fn trace_columns(py: Python<'_>, t: Trace) -> PyTraceColumns {
    let kinds: Vec<u8> = t.op_kind.iter().map(|k| *k as u8).collect();
    PyTraceColumns {
        op_rank: t.op_rank.into_pyarray(py).unbind(),
        op_index: t.op_index.into_pyarray(py).unbind(),
        op_kind: kinds.into_pyarray(py).unbind(),
        op_start: t.op_start.into_pyarray(py).unbind(),
        op_end: t.op_end.into_pyarray(py).unbind(),
        msg_src: t.msg_src.into_pyarray(py).unbind(),
        msg_dst: t.msg_dst.into_pyarray(py).unbind(),
        msg_src_op: t.msg_src_op.into_pyarray(py).unbind(),
        msg_dst_op: t.msg_dst_op.into_pyarray(py).unbind(),
        msg_depart: t.msg_start.into_pyarray(py).unbind(),
        msg_arrival: t.msg_arrival.into_pyarray(py).unbind(),
        msg_bytes: t.msg_bytes.into_pyarray(py).unbind(),
    }
}

/// The result's class: `trace` kept when asked for, `threads` and `network` as given.
pub(crate) fn simulation_result(
    py: Python<'_>,
    model: String,
    res: SimResult,
    trace: bool,
    threads: Option<usize>,
    network: Option<PyNetworkRunResult>,
) -> PyResult<PySimulationResult> {
    let trace = match (trace, res.trace) {
        (true, Some(t)) => Some(Py::new(py, trace_columns(py, t))?),
        _ => None,
    };
    Ok(PySimulationResult {
        model,
        completion_ps: res.completion,
        rank_finish_ps: res.rank_finish.into_pyarray(py).unbind(),
        ops: res.ops,
        messages: res.messages,
        threads,
        trace,
        network: network.map(|n| Py::new(py, n)).transpose()?,
    })
}

fn link_load(l: &LinkLoad) -> PyLinkLoad {
    PyLinkLoad {
        a: l.a.clone(),
        b: l.b.clone(),
        kind: l.kind,
        bytes: l.bytes,
        utilisation: l.utilisation,
        link: l.link,
    }
}

fn record(w: &MessageRecord) -> PyMessageRecord {
    PyMessageRecord {
        src: w.src,
        dst: w.dst,
        bytes: w.bytes,
        injected_ps: w.injected,
        delivered_ps: w.delivered,
        transfer_ps: w.transfer,
        queued_ps: w.queued(),
    }
}

fn records(py: Python<'_>, r: &[MessageRecord]) -> PyMessageRecords {
    let col = |f: fn(&MessageRecord) -> u64| r.iter().map(f).collect::<Vec<u64>>();
    PyMessageRecords {
        src: col(|x| x.src as u64).into_pyarray(py).unbind(),
        dst: col(|x| x.dst as u64).into_pyarray(py).unbind(),
        bytes: col(|x| x.bytes).into_pyarray(py).unbind(),
        injected_ps: col(|x| x.injected).into_pyarray(py).unbind(),
        delivered_ps: col(|x| x.delivered).into_pyarray(py).unbind(),
        transfer_ps: col(|x| x.transfer).into_pyarray(py).unbind(),
        queued_ps: col(|x| x.queued()).into_pyarray(py).unbind(),
    }
}

/// What the network measured (everything of `run` but its `result`): `records` with
/// `with_records`, the timeline with `sample_links`.
pub(crate) fn network_result(
    py: Python<'_>,
    run: &NetworkRun,
    level: &'static str,
    routing: String,
    topology: String,
    with_records: bool,
    sample_links: bool,
) -> PyResult<PyNetworkRunResult> {
    let m = &run.messages;
    let timeline = match &run.timeline {
        Some(tl) if sample_links => {
            let links = tl
                .links
                .iter()
                .map(|(i, u)| {
                    Py::new(
                        py,
                        PyTimelineLink {
                            index: *i,
                            utilisation: u.clone().into_pyarray(py).unbind(),
                        },
                    )
                })
                .collect::<PyResult<Vec<_>>>()?;
            Some(Py::new(
                py,
                PyLinkTimeline {
                    times_ps: tl.times.clone().into_pyarray(py).unbind(),
                    links,
                },
            )?)
        }
        _ => None,
    };
    Ok(PyNetworkRunResult {
        level,
        routing,
        topology,
        links: run
            .links
            .iter()
            .map(|l| Py::new(py, link_load(l)))
            .collect::<PyResult<Vec<_>>>()?,
        mean_network_utilisation: run.mean_network_utilisation,
        messages: Py::new(
            py,
            PyMessageTotals {
                network: m.network,
                control: m.control,
                local: m.local,
                bytes: m.bytes,
                transfer_ps: m.transfer_sum,
                queued_ps: m.queued_sum,
            },
        )?,
        worst: match m.worst {
            Some(w) if w.queued() > 0 => Some(Py::new(py, record(&w))?),
            _ => None,
        },
        records: with_records
            .then(|| Py::new(py, records(py, &run.records)))
            .transpose()?,
        placement: run.placement.clone().into_pyarray(py).unbind(),
        wire_units: run.wire_units,
        wire_events: run.wire_events,
        timeline,
    })
}

/// Adds the result's classes.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [
            PySimulationResult,
            PyTraceColumns,
            PyNetworkRunResult,
            PyLinkLoad,
            PyMessageTotals,
            PyMessageRecord,
            PyMessageRecords,
            PyLinkTimeline,
            PyTimelineLink
        ],
        []
    );
    Ok(())
}
