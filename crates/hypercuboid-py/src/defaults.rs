//! The defaults of the core, exported once as `_core.DEFAULTS` so that the binding's signatures,
//! the Python API and the CLI read them instead of typing them again.

use hypercuboid_core::collectives::allreduce::recursive_multiplying::search::{
    RankOptions, DEFAULT_MAX_SCHEDULES,
};
use hypercuboid_core::collectives::{allreduce, alltoall};
use hypercuboid_core::network::packet::{DEFAULT_DURATION, DEFAULT_TOP_LINKS, DEFAULT_WARMUP};
use hypercuboid_core::network::NetParams;
use hypercuboid_core::schedule::verify::VerifyOptions;
use hypercuboid_core::sim::{SimOptions, PARALLEL_OPS};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `DEFAULTS[section][name]`: `allreduce` (`count`, `dtype`, `op`), `alltoall` (`count`,
/// `dtype`), `verify` (`eager_limit`,
/// `semantics`, `max_problems`, `threads`), `simulate` (`threads`, `parallel_ops`), `tune` (`top`,
/// `pool`, `max_schedules`), `netsim` (`seed`,
/// `warmup_ps`, `duration_ps`, `drain`, `packet_bytes`, `buffer_bytes`, `switch_latency_ps`,
/// `watchdog_ps`, `top_links`, `links`, `threads`).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let d = PyDict::new(py);
    let a = PyDict::new(py);
    a.set_item("count", allreduce::DEFAULT_COUNT)?;
    a.set_item("dtype", allreduce::DEFAULT_DTYPE.name())?;
    a.set_item("op", allreduce::DEFAULT_OP.name())?;
    d.set_item("allreduce", a)?;
    let a = PyDict::new(py);
    a.set_item("count", alltoall::DEFAULT_COUNT)?;
    a.set_item("dtype", alltoall::DEFAULT_DTYPE.name())?;
    d.set_item("alltoall", a)?;
    let v = VerifyOptions::default();
    let vd = PyDict::new(py);
    vd.set_item("eager_limit", v.eager_limit)?;
    vd.set_item("semantics", v.semantics)?;
    vd.set_item("max_problems", v.max_problems)?;
    vd.set_item("threads", v.threads)?;
    d.set_item("verify", vd)?;
    let sd = PyDict::new(py);
    sd.set_item("threads", SimOptions::default().threads)?;
    sd.set_item("parallel_ops", PARALLEL_OPS)?;
    d.set_item("simulate", sd)?;
    let r = RankOptions::default();
    let t = PyDict::new(py);
    t.set_item("top", r.top)?;
    t.set_item("pool", r.pool)?;
    t.set_item("max_schedules", DEFAULT_MAX_SCHEDULES)?;
    d.set_item("tune", t)?;
    let p = NetParams::default();
    let n = PyDict::new(py);
    n.set_item("seed", p.seed)?;
    n.set_item("warmup_ps", DEFAULT_WARMUP)?;
    n.set_item("duration_ps", DEFAULT_DURATION)?;
    n.set_item("drain", false)?;
    n.set_item("packet_bytes", p.packet_bytes)?;
    n.set_item("buffer_bytes", p.buffer_bytes)?;
    n.set_item("switch_latency_ps", p.switch_latency)?;
    n.set_item("watchdog_ps", p.watchdog)?;
    n.set_item("top_links", DEFAULT_TOP_LINKS)?;
    n.set_item("links", false)?;
    n.set_item("threads", p.threads)?;
    d.set_item("netsim", n)?;
    m.add("DEFAULTS", d)?;
    Ok(())
}
