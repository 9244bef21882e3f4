//! Initial conditions, macroscopic fields and their totals, and the periodic halo of a single
//! subdomain.
//!
//! Initial conditions set every subdomain site to the equilibrium of a density and velocity that
//! are functions of the site's *global* coordinates, so each rank of a decomposition writes
//! exactly the values the undivided lattice has there; the halo is zeroed (the first exchange
//! fills it).

use super::d3q19::Q;
use super::kernel::{equilibrium, moments};
#[cfg(test)]
use super::Layout;
use super::{LbmError, Shape};
use std::f64::consts::PI;

/// An initial condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// The 2-D Taylor–Green vortex in the x–y plane, uniform along z, of amplitude `u0`:
    /// `u_x = −u0 cos(k_x x) sin(k_y y)`, `u_y = u0 (k_x/k_y) sin(k_x x) cos(k_y y)`, `u_z = 0`,
    /// `k = 2π / (X, Y)`, with the pressure of the Navier–Stokes solution
    /// `p = −(u0²/4) (cos 2k_x x + (k_x/k_y)² cos 2k_y y)` as density `ρ = 1 + 3p`. Its kinetic
    /// energy decays as `E(t) = E(0) exp(−2ν (k_x² + k_y²) t)`.
    TaylorGreen {
        /// Velocity amplitude (lattice units).
        u0: f64,
    },
    /// Density 1 and velocity `u` everywhere.
    Uniform {
        /// The velocity.
        u: [f64; 3],
    },
    /// The global lattice read from a `.npy` file (see [`super::read_npy`]).
    File {
        /// The file.
        path: String,
    },
}

/// The Taylor–Green amplitude when `taylor-green` names none: Mach number 0.05·√3 ≈ 0.087.
pub const TAYLOR_GREEN_U0: f64 = 0.05;

/// Largest speed an initial velocity may have: the lattice speed of sound `1/√3`.
pub const MAX_SPEED: f64 = 0.577_350_269_189_625_8;

impl Init {
    /// The forms [`Init::parse`] accepts.
    pub const FORMS: [&'static str; 4] = [
        "taylor-green",
        "taylor-green:U0",
        "uniform:UX,UY,UZ",
        "file:PATH.npy",
    ];

    /// `taylor-green` (amplitude [`TAYLOR_GREEN_U0`]), `taylor-green:U0`, `uniform:UX,UY,UZ` or
    /// `file:PATH`. Speeds must be below the lattice speed of sound.
    pub fn parse(text: &str) -> Result<Init, LbmError> {
        let bad = |reason: String| LbmError::BadInit {
            text: text.to_string(),
            reason,
        };
        let (name, arg) = match text.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (text, None),
        };
        let number = |s: &str| -> Result<f64, LbmError> {
            let v: f64 = s
                .trim()
                .parse()
                .map_err(|_| bad(format!("'{s}' is not a number")))?;
            if v.is_finite() {
                Ok(v)
            } else {
                Err(bad(format!("'{s}' is not a finite number")))
            }
        };
        let init = match (name, arg) {
            ("taylor-green", None) => Init::TaylorGreen {
                u0: TAYLOR_GREEN_U0,
            },
            ("taylor-green", Some(a)) => Init::TaylorGreen { u0: number(a)? },
            ("uniform", Some(a)) => {
                let parts: Vec<&str> = a.split(',').collect();
                if parts.len() != 3 {
                    return Err(bad(format!(
                        "uniform takes 3 velocity components, got {}",
                        parts.len()
                    )));
                }
                Init::Uniform {
                    u: [number(parts[0])?, number(parts[1])?, number(parts[2])?],
                }
            }
            ("file", Some(a)) if !a.is_empty() => Init::File {
                path: a.to_string(),
            },
            _ => return Err(bad("unknown form".to_string())),
        };
        let speed = match &init {
            // the amplitude (the vortex reaches u0 · max(1, k_x/k_y))
            Init::TaylorGreen { u0 } => u0.abs(),
            Init::Uniform { u } => (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt(),
            Init::File { .. } => 0.0,
        };
        if speed >= MAX_SPEED {
            return Err(bad(format!(
                "speed {speed} must be below the lattice speed of sound 1/sqrt(3) = 0.5774"
            )));
        }
        Ok(init)
    }
}

/// The density and velocity of the Taylor–Green vortex at global site `(x, y)` of an `X × Y`
/// plane.
pub fn taylor_green(u0: f64, x: usize, y: usize, lattice: [usize; 3]) -> (f64, [f64; 3]) {
    let kx = 2.0 * PI / lattice[0] as f64;
    let ky = 2.0 * PI / lattice[1] as f64;
    let r = kx / ky;
    let (sx, cx) = (kx * x as f64).sin_cos();
    let (sy, cy) = (ky * y as f64).sin_cos();
    let ux = -u0 * cx * sy;
    let uy = u0 * r * sx * cy;
    let p = -0.25 * u0 * u0 * ((2.0 * kx * x as f64).cos() + r * r * (2.0 * ky * y as f64).cos());
    (1.0 + 3.0 * p, [ux, uy, 0.0])
}

fn check_inside(shape: Shape, offset: [usize; 3], lattice: [usize; 3]) -> Result<(), LbmError> {
    let n = [shape.nx, shape.ny, shape.nz];
    if (0..3).any(|d| offset[d] + n[d] > lattice[d]) {
        return Err(LbmError::Outside {
            shape,
            offset,
            lattice,
        });
    }
    Ok(())
}

/// Sets `f` (the halo layout of `shape`) to the initial condition: the subdomain whose first site
/// is `offset` in the global `lattice`. The halo is zeroed. `Init::File` reads the file.
pub fn initialise(
    f: &mut [f64],
    shape: Shape,
    offset: [usize; 3],
    lattice: [usize; 3],
    init: &Init,
) -> Result<(), LbmError> {
    shape.check_len("distribution", f.len())?;
    check_inside(shape, offset, lattice)?;
    f.fill(0.0);
    let site = |x: usize, y: usize| -> (f64, [f64; 3]) {
        match init {
            Init::TaylorGreen { u0 } => taylor_green(*u0, x, y, lattice),
            Init::Uniform { u } => (1.0, *u),
            Init::File { .. } => unreachable!("files are read by read_npy"),
        }
    };
    if let Init::File { path } = init {
        return super::read_npy(path, f, shape, offset, lattice);
    }
    let sq = shape.strides()[3];
    for i in 0..shape.nx {
        for j in 0..shape.ny {
            let (rho, u) = site(offset[0] + i, offset[1] + j);
            let feq = equilibrium(rho, u);
            for k in 0..shape.nz {
                let s = shape.site(i, j, k);
                for (q, v) in feq.iter().enumerate() {
                    f[s + q * sq] = *v;
                }
            }
        }
    }
    Ok(())
}

/// Density and velocity of every subdomain site, into `rho` (`nx·ny·nz` values, C order) and
/// `u` (`nx·ny·nz·3`).
pub fn macroscopic(
    f: &[f64],
    shape: Shape,
    rho: &mut [f64],
    u: &mut [f64],
) -> Result<(), LbmError> {
    shape.check_len("distribution", f.len())?;
    let n = shape.sites();
    if rho.len() != n || u.len() != 3 * n {
        return Err(LbmError::BadLength {
            what: if rho.len() != n {
                "density"
            } else {
                "velocity"
            },
            got: if rho.len() != n { rho.len() } else { u.len() },
            shape,
        });
    }
    let mut s = 0;
    each_site(f, shape, |g| {
        let (r, j) = moments(g);
        rho[s] = r;
        for a in 0..3 {
            u[3 * s + a] = j[a] / r;
        }
        s += 1;
    });
    Ok(())
}

/// The totals of a subdomain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Totals {
    /// `Σ ρ`.
    pub mass: f64,
    /// `Σ ρu`.
    pub momentum: [f64; 3],
    /// `Σ ½ ρ|u|²`.
    pub kinetic_energy: f64,
}

/// Mass, momentum and kinetic energy of the subdomain sites, summed in site order.
pub fn totals(f: &[f64], shape: Shape) -> Result<Totals, LbmError> {
    shape.check_len("distribution", f.len())?;
    let mut t = Totals {
        mass: 0.0,
        momentum: [0.0; 3],
        kinetic_energy: 0.0,
    };
    each_site(f, shape, |g| {
        let (r, j) = moments(g);
        t.mass += r;
        for a in 0..3 {
            t.momentum[a] += j[a];
        }
        t.kinetic_energy += 0.5 * (j[0] * j[0] + j[1] * j[1] + j[2] * j[2]) / r;
    });
    Ok(t)
}

/// Calls `visit` with the 19 values of each subdomain site, in C order of the sites.
fn each_site(f: &[f64], shape: Shape, mut visit: impl FnMut(&[f64; Q])) {
    let sq = shape.strides()[3];
    for i in 0..shape.nx {
        for j in 0..shape.ny {
            for k in 0..shape.nz {
                let s = shape.site(i, j, k);
                let g: [f64; Q] = std::array::from_fn(|q| f[s + q * sq]);
                visit(&g);
            }
        }
    }
}

/// Fills the halo of a subdomain that is the whole periodic lattice: every halo cell gets the
/// site it wraps to. What the halo exchange does on one rank; for Rust users and tests.
pub fn periodic_halo(f: &mut [f64], shape: Shape) -> Result<(), LbmError> {
    shape.check_len("distribution", f.len())?;
    let n = [shape.nx, shape.ny, shape.nz];
    let [px, py, pz] = shape.padded();
    let sq = shape.strides()[3];
    let wrap = |p: usize, d: usize| -> usize {
        if p == 0 {
            n[d] - 1
        } else if p == n[d] + 1 {
            0
        } else {
            p - 1
        }
    };
    for a in 0..px {
        for b in 0..py {
            for c in 0..pz {
                let inside = (1..=n[0]).contains(&a) && (1..=n[1]).contains(&b);
                if inside && (1..=n[2]).contains(&c) {
                    continue;
                }
                let from = shape.site(wrap(a, 0), wrap(b, 1), wrap(c, 2));
                let to = shape.cell(a, b, c);
                for q in 0..Q {
                    f[to + q * sq] = f[from + q * sq];
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_forms_parse() {
        assert_eq!(
            Init::parse("taylor-green").unwrap(),
            Init::TaylorGreen {
                u0: TAYLOR_GREEN_U0
            }
        );
        assert_eq!(
            Init::parse("taylor-green:0.01").unwrap(),
            Init::TaylorGreen { u0: 0.01 }
        );
        assert_eq!(
            Init::parse("uniform:0.1,0,-0.02").unwrap(),
            Init::Uniform {
                u: [0.1, 0.0, -0.02]
            }
        );
        assert_eq!(
            Init::parse("file:a/b.npy").unwrap(),
            Init::File {
                path: "a/b.npy".into()
            }
        );
        let accepted = "accepted: taylor-green, taylor-green:U0, uniform:UX,UY,UZ, file:PATH.npy";
        for (text, reason) in [
            ("vortex", "unknown form"),
            ("uniform", "unknown form"),
            ("file:", "unknown form"),
            ("uniform:1,2", "uniform takes 3 velocity components, got 2"),
            ("uniform:0.1,x,0", "'x' is not a number"),
            ("taylor-green:inf", "'inf' is not a finite number"),
            (
                "uniform:0.6,0,0",
                "speed 0.6 must be below the lattice speed of sound 1/sqrt(3) = 0.5774",
            ),
        ] {
            assert_eq!(
                Init::parse(text).unwrap_err().to_string(),
                format!("initial condition '{text}': {reason}; {accepted}")
            );
        }
    }

    #[test]
    fn uniform_initial_condition_has_its_totals() {
        let s = Shape::new(3, 4, 5).unwrap();
        let mut f = vec![1.0; s.len()];
        let u = [0.05, -0.01, 0.02];
        initialise(&mut f, s, [0, 0, 0], [3, 4, 5], &Init::Uniform { u }).unwrap();
        let t = totals(&f, s).unwrap();
        assert!((t.mass - 60.0).abs() < 1e-12);
        for a in 0..3 {
            assert!((t.momentum[a] - 60.0 * u[a]).abs() < 1e-13);
        }
        let e = 0.5 * 60.0 * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        assert!((t.kinetic_energy - e).abs() < 1e-14);
        // the halo is zero until an exchange fills it
        assert_eq!(f[..19], [0.0; 19]);
        let mut rho = vec![0.0; 60];
        let mut vel = vec![0.0; 180];
        macroscopic(&f, s, &mut rho, &mut vel).unwrap();
        assert!(rho.iter().all(|&r| (r - 1.0).abs() < 1e-15));
        assert!((vel[3 * 17 + 2] - 0.02).abs() < 1e-16);
    }

    #[test]
    fn a_subdomain_must_fit_its_lattice() {
        let s = Shape::new(4, 4, 4).unwrap();
        let mut f = vec![0.0; s.len()];
        let e = initialise(
            &mut f,
            s,
            [2, 0, 0],
            [5, 4, 4],
            &Init::Uniform { u: [0.0; 3] },
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "subdomain 4x4x4 at offset 2x0x0 does not fit in the 5x4x4 lattice"
        );
    }

    #[test]
    fn taylor_green_is_divergence_free_with_zero_momentum() {
        let lattice = [16, 8, 4];
        let s = Shape::new(16, 8, 4).unwrap();
        let mut f = vec![0.0; s.len()];
        initialise(&mut f, s, [0; 3], lattice, &Init::TaylorGreen { u0: 0.04 }).unwrap();
        let t = totals(&f, s).unwrap();
        assert!(t.momentum.iter().all(|m| m.abs() < 1e-13), "{t:?}");
        assert!((t.mass - 512.0).abs() < 1e-11);
        // E = ½ Σ ρ u² ≈ ½ N u0² (1 + r²)/4 with r = k_x/k_y = 1/2
        let e = 0.5 * 512.0 * 0.04f64.powi(2) * (1.0 + 0.25) / 4.0;
        assert!(
            (t.kinetic_energy - e).abs() < 1e-3 * e,
            "{} {e}",
            t.kinetic_energy
        );
        let (_, u) = taylor_green(0.04, 4, 0, lattice);
        assert_eq!(u[0], 0.0);
        assert!((u[1] - 0.02).abs() < 1e-17);
    }

    #[test]
    fn periodic_halo_wraps_every_cell() {
        for layout in [Layout::Aos, Layout::Soa] {
            let s = Shape::new(3, 2, 4).unwrap().with_layout(layout);
            let sq = s.strides()[3];
            let mut f = vec![0.0; s.len()];
            for i in 0..3 {
                for j in 0..2 {
                    for k in 0..4 {
                        let p = s.site(i, j, k);
                        for q in 0..Q {
                            f[p + q * sq] = (1000 * i + 100 * j + 10 * k + q) as f64 + 1.0;
                        }
                    }
                }
            }
            periodic_halo(&mut f, s).unwrap();
            let [px, py, pz] = s.padded();
            for a in 0..px {
                for b in 0..py {
                    for c in 0..pz {
                        let (i, j, k) = ((a + 2) % 3, (b + 1) % 2, (c + 3) % 4);
                        let at = s.cell(a, b, c);
                        for q in [0, 5, 18] {
                            let want = (1000 * i + 100 * j + 10 * k + q) as f64 + 1.0;
                            assert_eq!(f[at + q * sq], want, "{layout:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_layouts_hold_the_same_logical_lattice() {
        let lattice = [7, 5, 6];
        let aos = Shape::new(4, 3, 6).unwrap();
        let soa = aos.with_layout(Layout::Soa);
        let init = Init::TaylorGreen { u0: 0.03 };
        let mut f = vec![f64::NAN; aos.len()];
        let mut g = vec![f64::NAN; soa.len()];
        initialise(&mut f, aos, [2, 1, 0], lattice, &init).unwrap();
        initialise(&mut g, soa, [2, 1, 0], lattice, &init).unwrap();
        let [px, py, pz] = aos.padded();
        for a in 0..px {
            for b in 0..py {
                for c in 0..pz {
                    for q in 0..Q {
                        let x = f[aos.cell(a, b, c) + q];
                        let y = g[soa.cell(a, b, c) + q * soa.strides()[3]];
                        assert_eq!(x.to_bits(), y.to_bits(), "{a} {b} {c} {q}");
                    }
                }
            }
        }
        // the totals visit the sites in one order whatever the layout: the same bits
        assert_eq!(totals(&f, aos).unwrap(), totals(&g, soa).unwrap());
        let n = aos.sites();
        let (mut r1, mut u1, mut r2, mut u2) = (
            vec![0.0; n],
            vec![0.0; 3 * n],
            vec![0.0; n],
            vec![0.0; 3 * n],
        );
        macroscopic(&f, aos, &mut r1, &mut u1).unwrap();
        macroscopic(&g, soa, &mut r2, &mut u2).unwrap();
        assert_eq!((r1, u1), (r2, u2));
    }
}
