//! The D3Q19 lattice-Boltzmann kernel (`hypercuboid_core::lbm`): convert, call, convert. The
//! distribution arrays are the caller's NumPy arrays, borrowed in place (no copy), with the GIL
//! released while the core works on them.

use crate::errors::{Class, PyResultExt};
use crate::guard::{self, call};
use hypercuboid_core::lbm::{self, d3q19, Bgk, Init, Layout, Region, Shape};
use numpy::ndarray::{ArrayViewD, ArrayViewMutD, Dim};
use numpy::{
    IntoPyArray, PyArray1, PyArray4, PyReadonlyArrayDyn, PyReadwriteArrayDyn, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

/// The subdomain and layout of a distribution array: the logical `(nx + 2, ny + 2, nz + 2, 19)`
/// lattice, either C-contiguous (`aos`) or the view `transpose(1, 2, 3, 0)` of a C-contiguous
/// `(19, nx + 2, ny + 2, nz + 2)` array (`soa`), told apart by the strides.
fn shape_of(what: &str, dims: &[usize], strides: &[isize]) -> PyResult<Shape> {
    if dims.len() != 4 || dims[3] != d3q19::Q || dims[..3].iter().any(|&d| d < 3) {
        return Err(Class::Lbm.err(format!(
            "{what} array of shape {dims:?}: accepted (nx + 2, ny + 2, nz + 2, 19), \
                 float64, each subdomain side at least 1"
        )));
    }
    let shape = Shape::new(dims[0] - 2, dims[1] - 2, dims[2] - 2).py()?;
    for layout in [Layout::Aos, Layout::Soa] {
        let s = shape.with_layout(layout);
        let want: Vec<isize> = s.strides().iter().map(|&v| (v * 8) as isize).collect();
        if strides == want.as_slice() {
            return Ok(s);
        }
    }
    Err(Class::Lbm.err(format!(
        "{what} array of shape {dims:?} has strides {strides:?} (bytes); accepted: layout \
             aos (C-contiguous) or soa (the view transpose(1, 2, 3, 0) of a C-contiguous \
             ({}, {}, {}, {}) array)",
        d3q19::Q,
        dims[0],
        dims[1],
        dims[2]
    )))
}

fn lattice_of(what: &str, f: &PyReadonlyArrayDyn<'_, f64>) -> PyResult<Shape> {
    shape_of(what, f.shape(), f.strides())
}

fn lattice_of_mut(what: &str, f: &PyReadwriteArrayDyn<'_, f64>) -> PyResult<Shape> {
    shape_of(what, f.shape(), f.strides())
}

/// The elements of `a` in memory order (the core reads the layout from the shape), or the error
/// naming `what` as not contiguous.
fn elements<'a>(what: &str, a: &'a ArrayViewD<'_, f64>) -> PyResult<&'a [f64]> {
    a.as_slice_memory_order()
        .ok_or_else(|| not_contiguous(what))
}

/// [`elements`], writable.
fn elements_mut<'a>(what: &str, a: &'a mut ArrayViewMutD<'_, f64>) -> PyResult<&'a mut [f64]> {
    a.as_slice_memory_order_mut()
        .ok_or_else(|| not_contiguous(what))
}

fn not_contiguous(what: &str) -> PyErr {
    Class::Lbm.err(format!(
        "{what} array is not C-contiguous; accepted: a C-contiguous float64 array"
    ))
}

/// The layout name (`soa`, `aos`) of a distribution array.
#[pyfunction]
fn lbm_layout(f: PyReadonlyArrayDyn<'_, f64>) -> PyResult<&'static str> {
    call(Class::Lbm, "lbm_layout", || {
        Ok(lattice_of("distribution", &f)?.layout.name())
    })
}

/// Checks a layout name; returns it.
#[pyfunction]
fn lbm_parse_layout(name: &str) -> PyResult<&'static str> {
    call(Class::Lbm, "lbm_parse_layout", || {
        Ok(Layout::parse(name).py()?.name())
    })
}

/// One collide–stream step: reads `src`, writes the `region` (`all`, `interior`, `shell`) of
/// `dst`, both of logical shape `(nx + 2, ny + 2, nz + 2, 19)` and of one layout.
#[pyfunction]
#[pyo3(signature = (src, dst, tau, region = "all"))]
fn lbm_step(
    py: Python<'_>,
    src: PyReadonlyArrayDyn<'_, f64>,
    mut dst: PyReadwriteArrayDyn<'_, f64>,
    tau: f64,
    region: &str,
) -> PyResult<()> {
    call(Class::Lbm, "lbm_step", || {
        let shape = lattice_of("source", &src)?;
        if dst.shape() != src.shape() {
            return Err(Class::Lbm.err(format!(
                "destination array of shape {:?} differs from the source's {:?}",
                dst.shape(),
                src.shape()
            )));
        }
        let layout = lattice_of_mut("destination", &dst)?.layout;
        if layout != shape.layout {
            return Err(Class::Lbm.err(format!(
                "destination array of layout {} differs from the source's {}; accepted: two \
                     arrays of one layout",
                layout.name(),
                shape.layout.name()
            )));
        }
        let bgk = Bgk::new(tau).py()?;
        let region = Region::parse(region).py()?;
        let src = src.as_array();
        let s = elements("source", &src)?;
        let mut dst = dst.as_array_mut();
        let d = elements_mut("destination", &mut dst)?;
        guard::detach(py, || lbm::collide_stream(s, d, shape, bgk, region)).py()
    })
}

/// Sets the subdomain at `offset` of the global `lattice` to the initial condition `init`
/// (`taylor-green[:U0]`, `uniform:UX,UY,UZ`, `file:PATH`), zeroing the halo.
#[pyfunction]
fn lbm_initialise(
    py: Python<'_>,
    mut f: PyReadwriteArrayDyn<'_, f64>,
    offset: [usize; 3],
    lattice: [usize; 3],
    init: &str,
) -> PyResult<()> {
    call(Class::Lbm, "lbm_initialise", || {
        let shape = lattice_of_mut("distribution", &f)?;
        let init = Init::parse(init).py()?;
        let mut f = f.as_array_mut();
        let s = elements_mut("distribution", &mut f)?;
        guard::detach(py, || lbm::initialise(s, shape, offset, lattice, &init)).py()
    })
}

/// Checks an initial condition's text without reading any file; returns its kind
/// (`taylor-green`, `uniform`, `file`).
#[pyfunction]
fn lbm_parse_init(init: &str) -> PyResult<&'static str> {
    call(Class::Lbm, "lbm_parse_init", || {
        Ok(match Init::parse(init).py()? {
            Init::TaylorGreen { .. } => "taylor-green",
            Init::Uniform { .. } => "uniform",
            Init::File { .. } => "file",
        })
    })
}

/// The viscosity `(tau − ½)/3` of a relaxation time, which must be greater than ½.
#[pyfunction]
fn lbm_viscosity(tau: f64) -> PyResult<f64> {
    call(Class::Lbm, "lbm_viscosity", || {
        Ok(Bgk::new(tau).py()?.viscosity())
    })
}

/// `(mass, (momentum x, y, z), kinetic energy)` of the subdomain sites.
#[pyfunction]
fn lbm_totals(py: Python<'_>, f: PyReadonlyArrayDyn<'_, f64>) -> PyResult<(f64, [f64; 3], f64)> {
    call(Class::Lbm, "lbm_totals", || {
        let shape = lattice_of("distribution", &f)?;
        let f = f.as_array();
        let s = elements("distribution", &f)?;
        let t = guard::detach(py, || lbm::totals(s, shape)).py()?;
        Ok((t.mass, t.momentum, t.kinetic_energy))
    })
}

/// Density `(nx, ny, nz)` and velocity `(nx, ny, nz, 3)` of the subdomain sites.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn lbm_macroscopic<'py>(
    py: Python<'py>,
    f: PyReadonlyArrayDyn<'py, f64>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray4<f64>>)> {
    call(Class::Lbm, "lbm_macroscopic", || {
        let shape = lattice_of("distribution", &f)?;
        let f = f.as_array();
        let s = elements("distribution", &f)?;
        let n = shape.sites();
        let (rho, u) = py
            .detach(|| {
                let mut rho = vec![0.0; n];
                let mut u = vec![0.0; 3 * n];
                lbm::fields::macroscopic(s, shape, &mut rho, &mut u).map(|()| (rho, u))
            })
            .py()?;
        let u = numpy::ndarray::Array::from_shape_vec(Dim([shape.nx, shape.ny, shape.nz, 3]), u)
            .expect("nx·ny·nz·3 values");
        Ok((rho.into_pyarray(py), u.into_pyarray(py)))
    })
}

/// Fills the halo of `f` as if its subdomain were the whole periodic lattice.
#[pyfunction]
fn lbm_periodic_halo(py: Python<'_>, mut f: PyReadwriteArrayDyn<'_, f64>) -> PyResult<()> {
    call(Class::Lbm, "lbm_periodic_halo", || {
        let shape = lattice_of_mut("distribution", &f)?;
        let mut f = f.as_array_mut();
        let s = elements_mut("distribution", &mut f)?;
        guard::detach(py, || lbm::periodic_halo(s, shape)).py()
    })
}

/// The STREAM triad `a = b + s·c` in place on three float64 arrays of one length.
#[pyfunction]
fn lbm_triad(
    py: Python<'_>,
    mut a: PyReadwriteArrayDyn<'_, f64>,
    b: PyReadonlyArrayDyn<'_, f64>,
    c: PyReadonlyArrayDyn<'_, f64>,
    s: f64,
) -> PyResult<()> {
    call(Class::Lbm, "lbm_triad", || {
        let a = a.as_slice_mut().map_err(|_| not_contiguous("triad"))?;
        let b = b.as_slice().map_err(|_| not_contiguous("triad"))?;
        let c = c.as_slice().map_err(|_| not_contiguous("triad"))?;
        guard::detach(py, || lbm::stream::triad(a, b, c, s)).py()
    })
}

/// The subdomain sites of a region (`all`, `interior`, `shell`) of an `nx × ny × nz` subdomain.
#[pyfunction]
fn lbm_region_sites(subdomain: [usize; 3], region: &str) -> PyResult<usize> {
    call(Class::Lbm, "lbm_region_sites", || {
        let shape = Shape::new(subdomain[0], subdomain[1], subdomain[2]).py()?;
        Ok(Region::parse(region).py()?.sites(shape))
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(
        m,
        [],
        [
            lbm_step,
            lbm_initialise,
            lbm_parse_init,
            lbm_viscosity,
            lbm_totals,
            lbm_macroscopic,
            lbm_region_sites,
            lbm_periodic_halo,
            lbm_triad,
            lbm_layout,
            lbm_parse_layout
        ]
    );
    m.add("LBM_LAYOUTS", lbm::LAYOUTS.names())?;
    m.add(
        "LBM_TRIAD_BYTES_PER_ELEMENT",
        lbm::stream::TRIAD_BYTES_PER_ELEMENT,
    )?;
    let velocities: Vec<[i8; 3]> = d3q19::VELOCITIES.to_vec();
    m.add("LBM_VELOCITIES", velocities)?;
    m.add("LBM_WEIGHTS", d3q19::WEIGHTS.to_vec())?;
    m.add("LBM_BYTES_PER_UPDATE", lbm::BYTES_PER_UPDATE)?;
    m.add("LBM_INIT_FORMS", Init::FORMS.to_vec())?;
    Ok(())
}
