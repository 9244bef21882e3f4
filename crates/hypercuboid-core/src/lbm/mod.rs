//! A D3Q19 lattice-Boltzmann solver (BGK, one relaxation time) on the halo layout of the halo
//! exchanges: the kernel of the proxy application `hypercuboid lbm run`.
//!
//! **Layout.** A rank's distributions are one `f64` array holding the logical
//! `(nx + 2, ny + 2, nz + 2, 19)` lattice: its `nx × ny × nz` subdomain with a halo of width 1
//! around it, subdomain site `(i, j, k)` at `(i + 1, j + 1, k + 1)`, velocity `q` in the order of
//! [`d3q19::VELOCITIES`]. The [`Layout`] of the [`Shape`] says how the logical `(x, y, z, q)`
//! maps to memory: [`Layout::Aos`] is C order of `(x, y, z, q)` (the 19 values of a site
//! contiguous), [`Layout::Soa`] is C order of `(q, x, y, z)` (each velocity a contiguous
//! lattice, the kernel's fast layout). The halo exchange fills the halo (it is layout-free: it
//! addresses logical `(x, y, z, q)`); the kernel never wraps.
//!
//! **Model.** `f_q(x + c_q, t + 1) = f_q − ω (f_q − f^eq_q)` with `ω = 1/τ`, the viscosity
//! `ν = (τ − ½)/3` (lattice units), the second-order equilibrium of [`kernel::equilibrium`].
//!
//! - [`kernel::collide_stream`]: one step over the whole subdomain, its interior (no halo data
//!   needed) or its boundary shell, between two caller-owned arrays;
//! - [`fields`]: initial conditions (Taylor–Green vortex, uniform flow), density and velocity,
//!   mass, momentum and kinetic energy, the periodic halo of a single subdomain;
//! - [`npy`]: a subdomain's block of a global lattice stored as a `.npy` file;
//! - [`stream`]: the STREAM triad, the bandwidth of the kernel's roofline.

// Numerical code indexes several arrays by the same velocity or axis.
#![allow(clippy::needless_range_loop)]

pub mod fields;
pub mod kernel;
pub mod npy;
pub mod stream;

/// The velocity set, defined once for the crate in [`crate::lattice`] (the reduced halo exchange
/// reads the same table).
pub use crate::lattice::d3q19;
use d3q19::Q;
pub use fields::{initialise, periodic_halo, totals, Init, Totals};
pub use kernel::{collide_stream, Region};
pub use npy::read_npy;

use crate::spec::{Choice, Choices};
use std::fmt;

/// How the logical `(x, y, z, q)` lattice of a subdomain with its halo lies in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Array of structures: C order of `(x, y, z, q)`, the 19 values of a site contiguous.
    Aos,
    /// Structure of arrays: C order of `(q, x, y, z)`, the z-rows of one velocity contiguous
    /// (plain vector loads and stores in the kernel).
    Soa,
}

/// The layouts the command line and the binding accept, the default first.
pub const LAYOUTS: Choices<Layout> = Choices::new(
    "layout",
    &[
        Choice::new(
            "soa",
            Layout::Soa,
            "structure of arrays: the z-rows of one velocity contiguous",
        ),
        Choice::new(
            "aos",
            Layout::Aos,
            "array of structures: the 19 values of a site contiguous",
        ),
    ],
);

impl Layout {
    /// The layout called `name` (a name of [`LAYOUTS`]).
    pub fn parse(name: &str) -> Result<Layout, LbmError> {
        LAYOUTS
            .parse(name)
            .map_err(|e| LbmError::BadLayout { name: e.value })
    }

    /// Its name (`soa`, `aos`).
    pub fn name(self) -> &'static str {
        LAYOUTS.name(self)
    }
}

/// The sizes of a rank's subdomain (without its halo) and the layout of its array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Sites along x.
    pub nx: usize,
    /// Sites along y.
    pub ny: usize,
    /// Sites along z.
    pub nz: usize,
    /// How the values lie in memory.
    pub layout: Layout,
}

impl Shape {
    /// A subdomain of `nx × ny × nz` sites, each at least 1, in the [`Layout::Aos`] layout.
    pub fn new(nx: usize, ny: usize, nz: usize) -> Result<Shape, LbmError> {
        if nx == 0 || ny == 0 || nz == 0 {
            return Err(LbmError::EmptyShape { nx, ny, nz });
        }
        Ok(Shape {
            nx,
            ny,
            nz,
            layout: Layout::Aos,
        })
    }

    /// The same subdomain in `layout`.
    pub fn with_layout(self, layout: Layout) -> Shape {
        Shape { layout, ..self }
    }

    /// Values between logical neighbours along x, y, z and q: the memory strides of the
    /// `(x, y, z, q)` lattice with its halo.
    pub fn strides(self) -> [usize; 4] {
        let [px, py, pz] = self.padded();
        match self.layout {
            Layout::Aos => [py * pz * Q, pz * Q, Q, 1],
            Layout::Soa => [py * pz, pz, 1, px * py * pz],
        }
    }

    /// Index of padded cell `(a, b, c)` (halo included: `a` in `0..nx + 2`), velocity 0.
    pub fn cell(self, a: usize, b: usize, c: usize) -> usize {
        let [sx, sy, sz, _] = self.strides();
        a * sx + b * sy + c * sz
    }

    /// The sides of the array with its halo: `[nx + 2, ny + 2, nz + 2]`.
    pub fn padded(self) -> [usize; 3] {
        [self.nx + 2, self.ny + 2, self.nz + 2]
    }

    /// Number of `f64` values of the array with its halo.
    pub fn len(self) -> usize {
        let [a, b, c] = self.padded();
        a * b * c * d3q19::Q
    }

    /// Never: a shape has at least one site (kept for the `len` convention).
    pub fn is_empty(self) -> bool {
        false
    }

    /// Number of subdomain sites.
    pub fn sites(self) -> usize {
        self.nx * self.ny * self.nz
    }

    /// Index of velocity 0 of subdomain site `(i, j, k)` in the array with its halo (velocity
    /// `q` is `q · strides()[3]` further).
    pub fn site(self, i: usize, j: usize, k: usize) -> usize {
        self.cell(i + 1, j + 1, k + 1)
    }

    pub(crate) fn check_len(self, what: &'static str, got: usize) -> Result<(), LbmError> {
        if got == self.len() {
            Ok(())
        } else {
            Err(LbmError::BadLength {
                what,
                got,
                shape: self,
            })
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{}", self.nx, self.ny, self.nz)
    }
}

/// The BGK collision: relaxation time `τ > ½` and rate `ω = 1/τ`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bgk {
    /// Relaxation time τ.
    pub tau: f64,
    /// Relaxation rate ω = 1/τ.
    pub omega: f64,
}

impl Bgk {
    /// The collision of relaxation time `tau`, which must be finite and greater than ½.
    pub fn new(tau: f64) -> Result<Bgk, LbmError> {
        if !(tau.is_finite() && tau > 0.5) {
            return Err(LbmError::BadTau { tau });
        }
        Ok(Bgk {
            tau,
            omega: 1.0 / tau,
        })
    }

    /// The kinematic viscosity `ν = (τ − ½)/3` in lattice units.
    pub fn viscosity(self) -> f64 {
        (self.tau - 0.5) / 3.0
    }
}

/// Bytes one lattice update moves at least: the 19 distributions read and the 19 written, 8 bytes
/// each (304 B; a processor that allocates the written line on a write miss also reads it, 456 B).
pub const BYTES_PER_UPDATE: usize = 2 * d3q19::Q * 8;

/// An error of the lattice-Boltzmann solver: bad input, named with what is accepted.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LbmError {
    /// A subdomain side of 0.
    #[error("subdomain {nx}x{ny}x{nz}: every side must be at least 1")]
    EmptyShape {
        /// Sites along x.
        nx: usize,
        /// Sites along y.
        ny: usize,
        /// Sites along z.
        nz: usize,
    },
    /// An array whose length is not that of the subdomain with its halo.
    #[error(
        "{what} array has {got} values; a {shape} subdomain with its halo has {} = {}",
        padded_values(shape),
        shape.len()
    )]
    BadLength {
        /// Which array.
        what: &'static str,
        /// Its number of values.
        got: usize,
        /// The subdomain.
        shape: Shape,
    },
    /// A relaxation time that is not finite and greater than ½.
    #[error(
        "tau {tau}: must be a number greater than 0.5 (the viscosity (tau - 0.5)/3 must be \
         positive)"
    )]
    BadTau {
        /// The value given.
        tau: f64,
    },
    /// An unknown region name.
    #[error("unknown region '{name}'; accepted: {}", Region::NAMES.join(", "))]
    BadRegion {
        /// The name given.
        name: String,
    },
    /// An unknown layout name.
    #[error("unknown layout '{name}'; accepted: {}", LAYOUTS.names().join(", "))]
    BadLayout {
        /// The name given.
        name: String,
    },
    /// An initial condition that does not parse or is out of range.
    #[error(
        "initial condition '{text}': {reason}; accepted: {}",
        Init::FORMS.join(", ")
    )]
    BadInit {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A subdomain that does not lie inside the global lattice.
    #[error(
        "subdomain {shape} at offset {}x{}x{} does not fit in the {}x{}x{} lattice",
        offset[0], offset[1], offset[2], lattice[0], lattice[1], lattice[2]
    )]
    Outside {
        /// The subdomain.
        shape: Shape,
        /// Its first site in the global lattice.
        offset: [usize; 3],
        /// The global lattice.
        lattice: [usize; 3],
    },
    /// Arrays of a triad whose lengths differ.
    #[error(
        "triad arrays of {}, {} and {} elements; accepted: three arrays of one length",
        lengths[0], lengths[1], lengths[2]
    )]
    TriadLengths {
        /// The lengths of `a`, `b` and `c`.
        lengths: [usize; 3],
    },
    /// An initial-condition file that cannot be read or does not hold the lattice.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// `AxBxCxQ = N`'s left side: the values of a subdomain with its halo, side by side.
fn padded_values(shape: &Shape) -> String {
    let [a, b, c] = shape.padded();
    format!("{a}x{b}x{c}x{}", d3q19::Q)
}

impl LbmError {
    /// The values a bad name or form would have been (empty where the error names none).
    pub fn accepted(&self) -> Vec<String> {
        match self {
            LbmError::BadRegion { .. } => Region::NAMES.iter().map(|s| s.to_string()).collect(),
            LbmError::BadInit { .. } => Init::FORMS.iter().map(|s| s.to_string()).collect(),
            LbmError::BadLayout { .. } => LAYOUTS.names().iter().map(|s| s.to_string()).collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_their_errors() {
        let s = Shape::new(4, 3, 2).unwrap();
        assert_eq!(s.padded(), [6, 5, 4]);
        assert_eq!(s.len(), 6 * 5 * 4 * 19);
        assert_eq!(s.site(0, 0, 0), (5 * 4 + 4 + 1) * 19);
        assert_eq!(s.strides(), [5 * 4 * 19, 4 * 19, 19, 1]);
        let t = s.with_layout(Layout::Soa);
        assert_eq!((t.nx, t.ny, t.nz, t.layout), (4, 3, 2, Layout::Soa));
        assert_eq!(t.len(), s.len());
        assert_eq!(t.strides(), [5 * 4, 4, 1, 6 * 5 * 4]);
        assert_eq!(t.site(0, 0, 0), 5 * 4 + 4 + 1);
        assert_eq!(
            t.site(3, 2, 1) + 18 * t.strides()[3],
            4 * 20 + 3 * 4 + 2 + 18 * 120
        );
        assert_eq!(Layout::parse("soa").unwrap(), Layout::Soa);
        assert_eq!(Layout::parse("aos").unwrap().name(), "aos");
        // Names match without regard to case (spec::answers_to).
        assert_eq!(Layout::parse(" AoS").unwrap(), Layout::Aos);
        let e = Layout::parse("aosoa").unwrap_err();
        assert_eq!(e.to_string(), "unknown layout 'aosoa'; accepted: soa, aos");
        assert_eq!(e.accepted(), ["soa", "aos"]);
        assert_eq!(s.to_string(), "4x3x2");
        assert_eq!(
            Shape::new(4, 0, 2).unwrap_err().to_string(),
            "subdomain 4x0x2: every side must be at least 1"
        );
        assert_eq!(
            s.check_len("source", 7).unwrap_err().to_string(),
            "source array has 7 values; a 4x3x2 subdomain with its halo has 6x5x4x19 = 2280"
        );
    }

    #[test]
    fn tau_and_viscosity() {
        let b = Bgk::new(0.8).unwrap();
        assert_eq!(b.omega, 1.25);
        assert!((b.viscosity() - 0.1).abs() < 1e-16);
        for bad in [0.5, 0.2, f64::NAN, f64::INFINITY] {
            assert!(Bgk::new(bad).is_err());
        }
        assert_eq!(
            Bgk::new(0.5).unwrap_err().to_string(),
            "tau 0.5: must be a number greater than 0.5 (the viscosity (tau - 0.5)/3 must be \
             positive)"
        );
    }
}
