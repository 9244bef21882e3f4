//! Application traces (`hypercuboid_core::apptrace`): read, summarise, convert, export.

use crate::args::{RankParam, Whole};
use crate::errors::{Class, PyResultExt};
use crate::guard::detach;
use crate::schedule::PySchedule;
use hypercuboid_core::apptrace;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// The bytes of a trace file: a regular file only, so that `/dev/zero` or a pipe is refused
/// before it is read without bound.
fn read_file(path: &PathBuf) -> PyResult<Vec<u8>> {
    let bad = |e: std::io::Error| {
        Class::Trace.err(format!("cannot read the trace {}: {e}", path.display()))
    };
    if !std::fs::metadata(path).map_err(bad)?.is_file() {
        return Err(Class::Trace.err(format!(
            "cannot read the trace {}: not a regular file (a trace is the file that 'trace run' \
             writes)",
            path.display()
        )));
    }
    std::fs::read(path).map_err(bad)
}

/// A recorded run (`AppTrace.load(path)`): per rank, the calls of `libhc_trace.so`.
#[pyclass(name = "AppTrace", module = "hypercuboid._core", frozen)]
pub(crate) struct PyAppTrace {
    inner: Arc<apptrace::AppTrace>,
}

/// Where the time of a run went (`AppTrace.summary()`): `categories`, per rank `time` (ns)
/// and `calls` per category, `total` (ns, per rank) and the point-to-point byte `matrix`
/// (row-major, nranks x nranks).
#[pyclass(name = "TraceSummary", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyTraceSummary {
    categories: Vec<String>,
    time: Vec<Vec<u64>>,
    calls: Vec<Vec<u64>>,
    total: Vec<u64>,
    matrix: Vec<u64>,
}

/// A converted trace: the `schedule`, the `records` converted, a `note` for a partial trace,
/// and the run's `measured` time in ps.
#[pyclass(name = "ConvertedTrace", module = "hypercuboid._core", frozen, get_all)]
pub(crate) struct PyConvertedTrace {
    schedule: Py<PySchedule>,
    records: u64,
    note: Option<String>,
    measured: u64,
}

#[pymethods]
impl PyAppTrace {
    /// Reads a packed trace (`.hct`) or one rank's file.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<PyAppTrace> {
        let bytes = read_file(&path)?;
        let name = path.display().to_string();
        let t = detach(py, move || apptrace::read(&bytes, &name)).py()?;
        Ok(PyAppTrace { inner: Arc::new(t) })
    }

    /// World ranks.
    #[getter]
    fn nranks(&self) -> u32 {
        self.inner.nranks()
    }

    /// The MPI library's version string.
    #[getter]
    fn library(&self) -> String {
        self.inner.library().to_string()
    }

    /// Whether every rank reached MPI_Finalize.
    #[getter]
    fn complete(&self) -> bool {
        self.inner.complete()
    }

    /// Per rank: None, or where it stops.
    #[getter]
    fn stops(&self) -> Vec<Option<String>> {
        self.inner.ranks.iter().map(|r| r.stop.clone()).collect()
    }

    /// The MPI call of each record of `rank`, in order.
    fn calls(&self, rank: Whole<RankParam, u32>) -> PyResult<Vec<&'static str>> {
        let rank = rank.0;
        let r = self.inner.ranks.get(rank as usize).ok_or_else(|| {
            Class::Schedule.err(format!(
                "rank {rank} is not in the trace (ranks 0..{})",
                self.inner.nranks()
            ))
        })?;
        Ok(r.records.iter().map(|x| x.call.name).collect())
    }

    /// Where the time went.
    fn summary(&self) -> PyTraceSummary {
        let s = apptrace::summary(&self.inner);
        PyTraceSummary {
            categories: s.categories,
            time: s.time,
            calls: s.calls,
            total: s.total,
            matrix: s.matrix,
        }
    }

    /// The schedule of the run (docs/trace.md).
    #[pyo3(signature = (*, compute_scale=1.0, allreduce=None, alltoall=None,
                        reduce_ns_per_byte=0.0, partial=false, name=None, library=false))]
    #[allow(clippy::too_many_arguments)]
    fn convert(
        &self,
        py: Python<'_>,
        compute_scale: f64,
        allreduce: Option<String>,
        alltoall: Option<String>,
        reduce_ns_per_byte: f64,
        partial: bool,
        name: Option<String>,
        library: bool,
    ) -> PyResult<PyConvertedTrace> {
        let opts = apptrace::ConvertOptions {
            compute_scale,
            allreduce,
            alltoall,
            reduce_ns_per_byte,
            partial,
            name: name.unwrap_or_else(|| "trace".into()),
            library,
        };
        let t = self.inner.clone();
        let c = detach(py, move || apptrace::convert(&t, &opts)).py()?;
        Ok(PyConvertedTrace {
            schedule: Py::new(py, PySchedule::new(c.schedule))?,
            records: c.records,
            note: c.note,
            measured: c.measured,
        })
    }

    /// Writes the recorded calls as a Chrome / Perfetto JSON trace.
    fn write_chrome(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let t = self.inner.clone();
        detach(py, move || -> std::io::Result<()> {
            let f = std::fs::File::create(&path)?;
            apptrace::write_chrome(&t, &mut std::io::BufWriter::new(f))
        })
        .map_err(|e| Class::Schedule.err(format!("cannot write the Chrome trace: {e}")))
    }
}

/// Packs rank files into one trace file (`out`).
#[pyfunction]
fn trace_pack(files: Vec<PathBuf>, out: PathBuf) -> PyResult<()> {
    let mut parts = Vec::with_capacity(files.len());
    for f in &files {
        parts.push(read_file(f)?);
    }
    std::fs::write(&out, apptrace::pack(&parts))
        .map_err(|e| Class::Schedule.err(format!("cannot write {}: {e}", out.display())))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [PyAppTrace, PyTraceSummary, PyConvertedTrace],
        [trace_pack]
    );
    let d = pyo3::types::PyDict::new(m.py());
    d.set_item("allreduce", apptrace::DEFAULT_ALLREDUCE)?;
    d.set_item("alltoall", apptrace::DEFAULT_ALLTOALL)?;
    m.add("TRACE_DEFAULTS", d)?;
    Ok(())
}
