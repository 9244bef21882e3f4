//! Bindings of hypercuboid_core::schedule::columns: a rank's program as columns (the `Program`
//! class) and the codes of the encoding, exported as module constants so that Python never
//! retypes them.

use hypercuboid_core::schedule::columns::{Columns, OP_COLUMNS};
use hypercuboid_core::schedule::{Combine, DepKind, Dtype, OpCode, Program, ReduceOp, Slot};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::errors::{Class, PyResultExt, ToPyErr};
use crate::guard::call;

/// One rank's program as columns, checked by the core: valid for `nranks` ranks, every slice
/// inside its buffer (`input_len`, `output_len`, the scratch sizes). Read it like the dict of
/// columns it replaces (`p["kind"]`, `p["deps"]`, iteration over the column names) or through
/// its attributes.
#[derive(Debug)]
#[pyclass(name = "Program", module = "hypercuboid._core", frozen)]
pub struct PyProgram {
    cols: Columns,
    rank: u32,
    nranks: u32,
    lens: (u64, u64),
}

impl PyProgram {
    /// Checks `cols` as rank `rank` of `nranks` with input and output buffers of `lens`.
    pub(crate) fn checked(
        cols: Columns,
        rank: u32,
        nranks: u32,
        lens: (u64, u64),
    ) -> PyResult<PyProgram> {
        cols.checked(rank, nranks, lens).py()?;
        Ok(PyProgram {
            cols,
            rank,
            nranks,
            lens,
        })
    }

    /// Rank `rank`'s program as `build` writes it into an empty `Program` (a rank's program
    /// built alone), in elements of `dtype`, checked as [`checked`](Self::checked) with the
    /// buffer lengths `lens` then gives.
    pub(crate) fn built<E: ToPyErr>(
        rank: u32,
        nranks: u32,
        dtype: Dtype,
        build: impl FnOnce(&mut Program) -> Result<(), E>,
        lens: impl FnOnce() -> PyResult<(u64, u64)>,
    ) -> PyResult<PyProgram> {
        let mut p = Program::new();
        build(&mut p).py()?;
        let cols = Columns::of_program(&p, dtype.size());
        PyProgram::checked(cols, rank, nranks, lens()?)
    }
}

/// The names of the mapping's keys: the per-op columns, `deps` and `scratch`.
fn keys() -> Vec<&'static str> {
    let mut k = OP_COLUMNS.to_vec();
    k.extend(["deps", "scratch", "regions"]);
    k
}

fn column<'py>(py: Python<'py>, c: &Columns, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    macro_rules! arrays {
        ($($column:ident)*) => {
            match name {
                $(stringify!($column) => Some(c.$column.clone().into_pyarray(py).into_any()),)*
                _ => None,
            }
        };
    }
    if let Some(a) = hypercuboid_core::op_columns!(arrays) {
        return Ok(Some(a));
    }
    let a = match name {
        "dep_op" => c.dep_op.clone().into_pyarray(py).into_any(),
        "dep_on" => c.dep_on.clone().into_pyarray(py).into_any(),
        "dep_kind" => c.dep_kind.clone().into_pyarray(py).into_any(),
        "regions" => c.regions.clone().into_pyarray(py).into_any(),
        "deps" => {
            let d: Vec<(u32, u32, u8)> = (0..c.dep_op.len())
                .map(|j| (c.dep_op[j], c.dep_on[j], c.dep_kind[j]))
                .collect();
            d.into_pyobject(py)?.into_any()
        }
        "scratch" => c.scratch.clone().into_pyobject(py)?.into_any(),
        _ => return Ok(None),
    };
    Ok(Some(a))
}

/// Reads column `name` of a dict as integers converted to `T`, naming the column in errors.
fn get<T: TryFrom<i128>>(
    d: &Bound<'_, PyAny>,
    name: &str,
    n: Option<usize>,
    optional: bool,
) -> PyResult<Vec<T>> {
    let col = match d.get_item(name) {
        Ok(c) => c,
        Err(_) if optional => return Ok(vec_of_zeros(n.unwrap_or(0))),
        Err(_) => {
            let mut expected = keys();
            expected.retain(|k| !matches!(*k, "cpu" | "nic" | "region" | "regions"));
            return Err(Class::Schedule.err(format!(
                "program has no '{name}' column; expected {}",
                expected.join(", ")
            )));
        }
    };
    let values: Vec<i128> = col
        .try_iter()
        .and_then(|it| it.map(|x| x?.extract::<i128>()).collect())
        .map_err(|_| {
            Class::Schedule.err(format!(
                "program column '{name}' is not a sequence of integers"
            ))
        })?;
    values
        .into_iter()
        .map(|v| {
            T::try_from(v).map_err(|_| {
                Class::Schedule.err(format!(
                    "program column '{name}' holds {v}, out of its range"
                ))
            })
        })
        .collect()
}

fn vec_of_zeros<T: TryFrom<i128>>(n: usize) -> Vec<T> {
    (0..n)
        .map(|_| T::try_from(0).unwrap_or_else(|_| unreachable!("0 fits every column type")))
        .collect()
}

#[pymethods]
impl PyProgram {
    /// Checks a program given as a dict of columns (the keys of `Program`: `kind`, `peer`, `tag`,
    /// `bytes`, `combine`, `time_ps`, `buf_slot`, `buf_offset`, `buf_len`, `src_slot`,
    /// `src_offset`, `src_len`, `deps` (a list of `(op, on, kind)`), `scratch`, and optionally
    /// `cpu` and `nic`) as rank `rank` of `nranks` with input and output buffers of `input_len`
    /// and `output_len` elements. A malformed program raises `ScheduleError` naming the rank,
    /// the op and the problem.
    #[staticmethod]
    #[pyo3(signature = (columns, *, rank, nranks, input_len, output_len))]
    fn from_columns(
        columns: &Bound<'_, PyAny>,
        rank: u32,
        nranks: u32,
        input_len: u64,
        output_len: u64,
    ) -> PyResult<PyProgram> {
        call(Class::Schedule, "Program.from_columns", || {
            let kind: Vec<u8> = get(columns, "kind", None, false)?;
            let n = Some(kind.len());
            let deps: Vec<(u32, u32, u8)> = match columns.get_item("deps") {
                Err(_) => return Err(get::<u8>(columns, "deps", n, false).unwrap_err()),
                Ok(d) => d
                    .try_iter()
                    .and_then(|it| it.map(|x| x?.extract::<(u32, u32, u8)>()).collect())
                    .map_err(|_| {
                        Class::Schedule.err(
                            "program column 'deps' is not a list of (op, on, kind) with op and on \
                         >= 0 and kind 0 (requires) or 1 (irequires)",
                        )
                    })?,
            };
            let mut deps = deps;
            deps.sort_unstable();
            let cols = Columns {
                peer: get(columns, "peer", n, false)?,
                tag: get(columns, "tag", n, false)?,
                bytes: get(columns, "bytes", n, false)?,
                combine: get(columns, "combine", n, false)?,
                cpu: get(columns, "cpu", n, true)?,
                nic: get(columns, "nic", n, true)?,
                time_ps: get(columns, "time_ps", n, false)?,
                buf_slot: get(columns, "buf_slot", n, false)?,
                buf_offset: get(columns, "buf_offset", n, false)?,
                buf_len: get(columns, "buf_len", n, false)?,
                src_slot: get(columns, "src_slot", n, false)?,
                src_offset: get(columns, "src_offset", n, false)?,
                src_len: get(columns, "src_len", n, false)?,
                dep_op: deps.iter().map(|d| d.0).collect(),
                dep_on: deps.iter().map(|d| d.1).collect(),
                dep_kind: deps.iter().map(|d| d.2).collect(),
                scratch: get(columns, "scratch", None, false)?,
                region: match columns.get_item("region") {
                    Ok(_) => get(columns, "region", n, false)?,
                    Err(_) => vec![-1; kind.len()],
                },
                regions: match columns.get_item("regions") {
                    Ok(_) => get(columns, "regions", None, false)?,
                    Err(_) => Vec::new(),
                },
                kind,
            };
            PyProgram::checked(cols, rank, nranks, (input_len, output_len))
        })
    }

    /// The rank the program was checked as.
    #[getter]
    fn rank(&self) -> u32 {
        self.rank
    }

    /// The number of ranks it was checked against.
    #[getter]
    fn nranks(&self) -> u32 {
        self.nranks
    }

    /// Elements of the input buffer.
    #[getter]
    fn input_len(&self) -> u64 {
        self.lens.0
    }

    /// Elements of the output buffer.
    #[getter]
    fn output_len(&self) -> u64 {
        self.lens.1
    }

    /// Number of ops.
    #[getter]
    fn num_ops(&self) -> usize {
        self.cols.len()
    }

    /// The dependencies as three columns `(dep_op, dep_on, dep_kind)`, sorted by op.
    #[getter]
    fn dep_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let c = &self.cols;
        PyTuple::new(
            py,
            [
                c.dep_op.clone().into_pyarray(py).into_any(),
                c.dep_on.clone().into_pyarray(py).into_any(),
                c.dep_kind.clone().into_pyarray(py).into_any(),
            ],
        )
    }

    /// Column `key` (a NumPy array; `deps` a list of `(op, on, kind)`, `scratch` a list).
    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        call(Class::Schedule, "Program[]", || {
            column(py, &self.cols, key)?.ok_or_else(|| {
                pyo3::exceptions::PyKeyError::new_err(format!(
                    "'{key}': a program has columns {}",
                    keys().join(", ")
                ))
            })
        })
    }

    fn __contains__(&self, key: &str) -> bool {
        keys().contains(&key)
    }

    /// The column names.
    fn keys(&self) -> Vec<&'static str> {
        keys()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, keys())?.try_iter().map(|i| i.into_any())
    }

    fn __repr__(&self) -> String {
        format!(
            "<_core.Program rank {} of {}: {} ops>",
            self.rank,
            self.nranks,
            self.cols.len()
        )
    }
}

/// The codes of the encoding as a C header (`hc_codes.h`), for the native runner and C exports.
#[pyfunction]
fn c_codes_header() -> String {
    hypercuboid_core::schedule::columns::c_codes_header()
}

/// The native runner's C sources as `(name, text)` pairs (`hc_codes.h`, `hc_runner.h`,
/// `hc_runner.c`).
#[pyfunction]
fn native_sources() -> PyResult<Vec<(&'static str, String)>> {
    call(Class::Schedule, "native_sources", || {
        Ok(hypercuboid_core::native::sources())
    })
}

/// Adds the `Program` class and the codes of the encoding: `OP_KINDS` (names by code),
/// `COMBINES`, `DEP_KINDS`, `SLOT_INPUT`, `SLOT_OUTPUT`, `SLOT_SCRATCH` (scratch k is
/// `SLOT_SCRATCH + k`), `SLOT_NONE`, `PROGRAM_COLUMNS`, `DTYPES` (name to bytes per element)
/// `DTYPE_CODES` (every dtype's code, `byte` included) and `REDUCE_OPS` (names by code).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(m, [PyProgram], [c_codes_header, native_sources]);
    let py = m.py();
    m.add("OP_KINDS", PyTuple::new(py, OpCode::ALL.map(|k| k.name()))?)?;
    m.add(
        "COMBINES",
        PyTuple::new(py, Combine::ALL.map(|c| c.name()))?,
    )?;
    m.add(
        "DEP_KINDS",
        PyTuple::new(py, DepKind::ALL.map(|k| k.name()))?,
    )?;
    m.add("SLOT_INPUT", Slot::Input.code())?;
    m.add("SLOT_OUTPUT", Slot::Output.code())?;
    m.add("SLOT_SCRATCH", Slot::SCRATCH_CODE)?;
    m.add("SLOT_NONE", Slot::NONE_CODE)?;
    m.add("PROGRAM_COLUMNS", PyTuple::new(py, keys())?)?;
    m.add(
        "REGION_FIELDS",
        hypercuboid_core::schedule::columns::REGION_FIELDS,
    )?;
    let dtypes = PyDict::new(py);
    for d in Dtype::ALL {
        if d != Dtype::Byte {
            dtypes.set_item(d.name(), d.size())?;
        }
    }
    m.add("DTYPES", dtypes)?;
    let codes = PyDict::new(py);
    for d in Dtype::ALL {
        codes.set_item(d.name(), d.code())?;
    }
    m.add("DTYPE_CODES", codes)?;
    m.add(
        "REDUCE_OPS",
        PyTuple::new(py, ReduceOp::ALL.map(|o| o.name()))?,
    )?;
    Ok(())
}
