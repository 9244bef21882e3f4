//! Bindings of hypercuboid_core::collectives::halo: the decomposition class, the halo
//! schedules and programs, the reduced exchange's saving and the directions' order.

use hypercuboid_core::collectives::halo::{
    reduced, Algorithm, Decomposition, Halo, HaloProblem, DIRECTIONS,
};
use hypercuboid_core::schedule::{Dtype, Rank, ScheduleError, MAX_RANKS};
use hypercuboid_core::units::Time;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::args::RankArg;
use crate::collective::Binding;
use crate::errors::{Class, PyResultExt};
use crate::guard::call;

/// A 3-D Cartesian decomposition of a lattice (ranks in `MPI_Cart_create` order, z fastest;
/// `MPI_Dims_create`-style dimensions by default; subdomains differing by at most one site).
#[derive(Debug)]
#[pyclass(name = "HaloDecomposition", module = "hypercuboid._core", frozen)]
pub struct PyDecomposition {
    pub(crate) inner: Decomposition,
}

impl PyDecomposition {
    fn rank(&self, rank: RankArg) -> PyResult<Rank> {
        rank_in(&self.inner, rank)
    }
}

/// `rank` when it is one of `decomp`'s ranks, else the error naming the range.
fn rank_in(decomp: &Decomposition, rank: RankArg) -> PyResult<Rank> {
    rank.within(decomp.nranks(), |r, last| {
        format!("invalid rank {r}: the decomposition has ranks 0..{last}")
    })
}

fn triple(name: &str, v: (i64, i64, i64)) -> PyResult<[u32; 3]> {
    let t = [v.0, v.1, v.2];
    if t.iter().any(|&x| x <= 0 || x > u32::MAX as i64) {
        return Err(Class::Schedule.err(format!(
            "invalid {name} '{}x{}x{}': every dimension is a positive integer below 2^32",
            v.0, v.1, v.2
        )));
    }
    Ok(t.map(|x| x as u32))
}

#[pymethods]
impl PyDecomposition {
    /// `lattice` (X, Y, Z) on `ranks` ranks, as `dims` (px, py, pz) when given, periodic per
    /// axis as `periodic` says.
    #[new]
    #[pyo3(signature = (lattice, ranks, dims = None, periodic = (true, true, true)))]
    fn new(
        lattice: (i64, i64, i64),
        ranks: i64,
        dims: Option<(i64, i64, i64)>,
        periodic: (bool, bool, bool),
    ) -> PyResult<PyDecomposition> {
        call(Class::Schedule, "HaloDecomposition", || {
            let lattice = triple("lattice", lattice)?;
            if ranks <= 0 || ranks > MAX_RANKS as i64 {
                return Err(Class::Schedule.err(format!(
                    "invalid number of ranks {ranks}: a halo exchange has 1 to {MAX_RANKS}"
                )));
            }
            let dims = dims.map(|d| triple("decomposition", d)).transpose()?;
            let inner = Decomposition::with_ranks(
                lattice,
                ranks as u32,
                dims,
                [periodic.0, periodic.1, periodic.2],
            )
            .py()?;
            Ok(PyDecomposition { inner })
        })
    }

    /// The decomposition whose every rank has a `subdomain` of sites, on `dims` ranks.
    #[staticmethod]
    #[pyo3(signature = (subdomain, dims, periodic = (true, true, true)))]
    fn of_subdomain(
        subdomain: (i64, i64, i64),
        dims: (i64, i64, i64),
        periodic: (bool, bool, bool),
    ) -> PyResult<PyDecomposition> {
        call(Class::Schedule, "HaloDecomposition.of_subdomain", || {
            let sub = triple("subdomain", subdomain)?;
            let dims = triple("decomposition", dims)?;
            let inner =
                Decomposition::with_subdomain(sub, dims, [periodic.0, periodic.1, periodic.2])
                    .py()?;
            Ok(PyDecomposition { inner })
        })
    }

    /// Sites of the global lattice along x, y, z.
    #[getter]
    fn lattice(&self) -> (u32, u32, u32) {
        let l = self.inner.lattice;
        (l[0], l[1], l[2])
    }

    /// Ranks along x, y, z.
    #[getter]
    fn dims(&self) -> (u32, u32, u32) {
        let d = self.inner.dims;
        (d[0], d[1], d[2])
    }

    /// Whether each axis wraps round.
    #[getter]
    fn periodic(&self) -> (bool, bool, bool) {
        let p = self.inner.periodic;
        (p[0], p[1], p[2])
    }

    /// Number of ranks.
    #[getter]
    fn nranks(&self) -> u32 {
        self.inner.nranks()
    }

    /// The coordinates of `rank` in the rank grid.
    fn coords(&self, rank: RankArg) -> PyResult<(u32, u32, u32)> {
        let c = self.inner.coords(self.rank(rank)?);
        Ok((c[0], c[1], c[2]))
    }

    /// The sites of `rank`'s subdomain along x, y, z.
    fn subdomain(&self, rank: RankArg) -> PyResult<(u32, u32, u32)> {
        let n = self.inner.subdomain(self.rank(rank)?);
        Ok((n[0], n[1], n[2]))
    }

    /// The global coordinates of `rank`'s first site.
    fn offset(&self, rank: RankArg) -> PyResult<(u32, u32, u32)> {
        let o = self.inner.offset(self.rank(rank)?);
        Ok((o[0], o[1], o[2]))
    }

    /// The neighbour of `rank` in direction `d` (components -1, 0, 1), None across a
    /// non-periodic boundary.
    fn neighbour(&self, rank: RankArg, d: (i64, i64, i64)) -> PyResult<Option<u32>> {
        let r = self.rank(rank)?;
        let t = [d.0, d.1, d.2];
        if t.iter().any(|x| !(-1..=1).contains(x)) {
            return Err(Class::Schedule.err(format!(
                "invalid direction ({}, {}, {}): components are -1, 0 or 1",
                d.0, d.1, d.2
            )));
        }
        Ok(self.inner.neighbour(r, t.map(|x| x as i8)))
    }

    /// The rank at grid coordinates `c`.
    fn rank_at(&self, c: (i64, i64, i64)) -> PyResult<u32> {
        let t = [c.0, c.1, c.2];
        for (x, p) in t.iter().zip(self.inner.dims) {
            if *x < 0 || *x >= p as i64 {
                return Err(Class::Schedule.err(format!(
                    "invalid coordinates ({}, {}, {}): the grid is {}x{}x{}",
                    c.0, c.1, c.2, self.inner.dims[0], self.inner.dims[1], self.inner.dims[2]
                )));
            }
        }
        Ok(self.inner.rank_at(t.map(|x| x as u32)))
    }

    fn __repr__(&self) -> String {
        format!("HaloDecomposition({})", self.inner.describe())
    }
}

impl Binding for Halo {
    type Args<'a> = (&'a PyDecomposition, i64, i64, i64);

    fn parse(text: &str) -> Result<Algorithm, ScheduleError> {
        Algorithm::parse(text)
    }

    fn problem((decomp, values, bytes, kernel_ps): Self::Args<'_>) -> PyResult<HaloProblem> {
        if values <= 0 || values > u32::MAX as i64 {
            return Err(Class::Schedule.err(format!(
                "invalid values '{values}': values per site are 1 to 4294967295 (19 for D3Q19)"
            )));
        }
        if kernel_ps < 0 {
            return Err(Class::Schedule.err(format!(
                "invalid kernel '{kernel_ps}' ps: a time per site is >= 0"
            )));
        }
        let dtype = HaloProblem::dtype_of_bytes(bytes.max(0) as u64).py()?;
        Ok(HaloProblem {
            decomp: decomp.inner,
            values: values as u32,
            dtype,
            kernel: kernel_ps as Time,
        })
    }

    fn rank(p: &HaloProblem, rank: RankArg) -> PyResult<u32> {
        rank_in(&p.decomp, rank)
    }

    fn dtype(p: &HaloProblem) -> Dtype {
        p.dtype
    }

    /// The rank's local array: no input, its subdomain with halos as output.
    fn lens(alg: &Algorithm, p: &HaloProblem, rank: u32) -> PyResult<(u64, u64)> {
        Ok((0, p.spec(alg).py()?.local_len(rank)))
    }
}

collective! {
    /// The halo-exchange schedule of `algorithm` (`halo_blocking`, `halo_nonblocking`,
    /// `halo_nonblocking:unpack=on_arrival`, `halo_reduced`, or without the `halo_` prefix) on
    /// `decomp`, `values` values of `bytes` bytes per site, computing `kernel_ps` per site where
    /// the algorithm computes (GIL released while generating).
    fn halo_schedule as "halo";
    /// The program of one rank of a halo exchange, built alone, as a `Program` checked against
    /// that rank's local array.
    fn halo_program;
    Halo: (
        decomp: &PyDecomposition,
        values: i64 = [19],
        bytes: i64 = [8],
        kernel_ps: i64 = [0],
    )
}

/// Values rank `rank` sends per exchange, `(full, reduced)`: the 26-direction exchange of all
/// 19 values against the D3Q19-reduced one.
#[pyfunction]
fn halo_saving(decomp: &PyDecomposition, rank: RankArg) -> PyResult<(u64, u64)> {
    call(Class::Schedule, "halo_saving", || {
        let r = decomp.rank(rank)?;
        let p = HaloProblem::new(decomp.inner);
        let spec = p.spec(&Algorithm::Reduced { overlap: false }).py()?;
        Ok(reduced::saving(&spec, r))
    })
}

/// Adds the decomposition class, the halo functions and `HALO_DIRECTIONS` (the 26
/// directions in tag order).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [PyDecomposition],
        [halo_schedule, halo_program, halo_saving]
    );
    let py = m.py();
    let dirs: Vec<(i8, i8, i8)> = DIRECTIONS.iter().map(|d| (d[0], d[1], d[2])).collect();
    m.add("HALO_DIRECTIONS", PyTuple::new(py, dirs)?)?;
    let d3q19: Vec<(i8, i8, i8)> = hypercuboid_core::lattice::d3q19::VELOCITIES
        .iter()
        .map(|c| (c[0], c[1], c[2]))
        .collect();
    m.add("D3Q19_VELOCITIES", PyTuple::new(py, d3q19)?)?;
    Ok(())
}
