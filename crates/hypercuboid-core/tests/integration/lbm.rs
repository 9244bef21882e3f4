//! The D3Q19 kernel over whole steps: conservation, fixed points, regions, decomposition and the
//! Taylor–Green vortex's decay rate.

#![allow(clippy::needless_range_loop)]

use hypercuboid_core::lbm::d3q19::{Q, VELOCITIES};
use hypercuboid_core::lbm::kernel::equilibrium;
use hypercuboid_core::lbm::{
    collide_stream, initialise, periodic_halo, totals, Bgk, Init, Region, Shape,
};

/// A reproducible non-equilibrium state: equilibria of a varying flow, perturbed per value.
fn rough(shape: Shape) -> Vec<f64> {
    let mut f = vec![0.0; shape.len()];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..shape.nx {
        for j in 0..shape.ny {
            for k in 0..shape.nz {
                let u = [
                    0.02 * ((i + 2 * k) as f64).sin(),
                    0.03 * ((j * 3 + i) as f64).cos(),
                    -0.01 * ((k * 5) as f64).sin(),
                ];
                let feq = equilibrium(1.0 + 0.01 * ((i * j + k) % 7) as f64, u);
                let s = shape.site(i, j, k);
                for q in 0..Q {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let noise = (state % 1000) as f64 * 1e-6;
                    f[s + q] = feq[q] + noise;
                }
            }
        }
    }
    f
}

/// [`rough`] with its periodic halo filled.
fn rough_periodic(shape: Shape) -> Vec<f64> {
    let mut f = rough(shape);
    periodic_halo(&mut f, shape).unwrap();
    f
}

/// One step of `f` (its halo filled) over `regions` in turn, into a zeroed lattice.
fn step(f: &[f64], shape: Shape, bgk: Bgk, regions: &[Region]) -> Vec<f64> {
    let mut out = vec![0.0; shape.len()];
    for &r in regions {
        collide_stream(f, &mut out, shape, bgk, r).unwrap();
    }
    out
}

/// `steps` periodic steps of one subdomain holding the whole lattice.
fn run(mut f: Vec<f64>, shape: Shape, bgk: Bgk, steps: usize) -> Vec<f64> {
    let mut g = vec![0.0; shape.len()];
    for _ in 0..steps {
        periodic_halo(&mut f, shape).unwrap();
        collide_stream(&f, &mut g, shape, bgk, Region::All).unwrap();
        std::mem::swap(&mut f, &mut g);
    }
    f
}

#[test]
fn mass_and_momentum_are_conserved_each_step() {
    let s = Shape::new(6, 5, 7).unwrap();
    let bgk = Bgk::new(0.7).unwrap();
    let mut f = rough(s);
    let t0 = totals(&f, s).unwrap();
    for _ in 0..20 {
        f = run(f, s, bgk, 1);
        let t = totals(&f, s).unwrap();
        assert!((t.mass - t0.mass).abs() < 1e-12 * t0.mass, "{t:?} {t0:?}");
        for a in 0..3 {
            assert!(
                (t.momentum[a] - t0.momentum[a]).abs() < 1e-13,
                "{a}: {t:?} {t0:?}"
            );
        }
    }
    // the state did change: it relaxes and streams
    assert_ne!(f, rough(s));
}

#[test]
fn uniform_flow_stays_uniform_bitwise() {
    let s = Shape::new(5, 4, 9).unwrap();
    let mut f = vec![0.0; s.len()];
    let init = Init::Uniform {
        u: [0.05, -0.02, 0.01],
    };
    initialise(&mut f, s, [0; 3], [5, 4, 9], &init).unwrap();
    let f = run(f, s, Bgk::new(0.9).unwrap(), 10);
    let first: Vec<u64> = f[s.site(0, 0, 0)..][..Q]
        .iter()
        .map(|v| v.to_bits())
        .collect();
    for i in 0..5 {
        for j in 0..4 {
            for k in 0..9 {
                let here: Vec<u64> = f[s.site(i, j, k)..][..Q]
                    .iter()
                    .map(|v| v.to_bits())
                    .collect();
                assert_eq!(here, first, "site {i} {j} {k}");
            }
        }
    }
    let t = totals(&f, s).unwrap();
    assert!((t.momentum[0] / t.mass - 0.05).abs() < 1e-15);
}

#[test]
fn equilibrium_is_a_fixed_point() {
    let s = Shape::new(4, 4, 4).unwrap();
    let mut f = vec![0.0; s.len()];
    let init = Init::Uniform {
        u: [0.1, 0.0, -0.03],
    };
    initialise(&mut f, s, [0; 3], [4, 4, 4], &init).unwrap();
    let g = run(f.clone(), s, Bgk::new(0.6).unwrap(), 5);
    let feq = equilibrium(1.0, [0.1, 0.0, -0.03]);
    for i in 0..4 {
        for k in 0..4 {
            let at = s.site(i, 2, k);
            for q in 0..Q {
                let err = (g[at + q] - feq[q]).abs() / feq[q];
                assert!(err < 4e-15, "{q}: {} {}", g[at + q], feq[q]);
            }
        }
    }
}

#[test]
fn a_lone_packet_streams_along_its_velocity() {
    // ω = 1 (τ = 1) relaxes fully to equilibrium. Over fluid at rest (ρ = 1), an extra 1/2 in
    // f_q at one site streams one site along c_q: that site relaxes to the equilibrium of
    // ρ = 3/2, j = c_q/2; every other site stays at rest.
    let s = Shape::new(5, 5, 5).unwrap();
    let bgk = Bgk::new(1.0).unwrap();
    let rest = equilibrium(1.0, [0.0; 3]);
    for (q, c) in VELOCITIES.iter().enumerate().skip(1) {
        let mut f = vec![0.0; s.len()];
        initialise(&mut f, s, [0; 3], [5; 3], &Init::Uniform { u: [0.0; 3] }).unwrap();
        f[s.site(2, 2, 2) + q] += 0.5;
        let g = run(f, s, bgk, 1);
        let to = c.map(|v| (2 + isize::from(v)) as usize);
        let u = c.map(|v| f64::from(v) / 3.0);
        let moved = equilibrium(1.5, u);
        for i in 0..5 {
            for j in 0..5 {
                for k in 0..5 {
                    let want = if [i, j, k] == to { &moved } else { &rest };
                    let at = s.site(i, j, k);
                    for p in 0..Q {
                        let err = (g[at + p] - want[p]).abs();
                        assert!(err < 1e-15, "q {q}: site {i} {j} {k} p {p}");
                    }
                }
            }
        }
        let t = totals(&g, s).unwrap();
        assert!((t.mass - 125.5).abs() < 1e-12);
        let j = c.map(|v| f64::from(v) / 2.0);
        assert!(
            (0..3).all(|a| (t.momentum[a] - j[a]).abs() < 1e-14),
            "{t:?}"
        );
    }
}

#[test]
fn interior_then_shell_is_the_whole_step_bitwise() {
    let (s, bgk) = (Shape::new(7, 3, 70).unwrap(), Bgk::new(0.8).unwrap());
    let f = rough_periodic(s);
    let whole = step(&f, s, bgk, &[Region::All]);
    let split = step(&f, s, bgk, &[Region::Interior, Region::Shell]);
    assert!(whole
        .iter()
        .zip(&split)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    // the interior update reads no halo cell: poisoning the halo changes only the shell
    let mut poisoned = f.clone();
    let [px, py, pz] = s.padded();
    for a in 0..px {
        for b in 0..py {
            for c in 0..pz {
                let halo = a == 0 || b == 0 || c == 0 || a == px - 1 || b == py - 1 || c == pz - 1;
                if halo {
                    let at = ((a * py + b) * pz + c) * Q;
                    poisoned[at..at + Q].fill(f64::NAN);
                }
            }
        }
    }
    let inner = step(&poisoned, s, bgk, &[Region::Interior]);
    for i in 1..6 {
        for k in 1..69 {
            let at = s.site(i, 1, k);
            assert_eq!(inner[at..at + Q], whole[at..at + Q]);
        }
    }
}

#[test]
fn a_decomposed_lattice_evolves_bitwise_as_the_whole() {
    // the kernel computes a site the same way wherever it lies in a subdomain: stepping 2x3x2
    // blocks of a periodic lattice (their halos cut from the whole) gives the whole's bits
    let g = Shape::new(6, 9, 70).unwrap();
    let bgk = Bgk::new(0.65).unwrap();
    let whole = rough_periodic(g);
    let next = step(&whole, g, bgk, &[Region::All]);
    let [gx, gy, gz] = g.padded();
    for (ox, nx) in [(0, 3), (3, 3)] {
        for (oy, ny) in [(0, 4), (4, 2), (6, 3)] {
            for (oz, nz) in [(0, 35), (35, 35)] {
                let s = Shape::new(nx, ny, nz).unwrap();
                let [px, py, pz] = s.padded();
                let mut f = vec![0.0; s.len()];
                for a in 0..px {
                    for b in 0..py {
                        for c in 0..pz {
                            // padded block cell (a, b, c) is padded whole cell (ox + a, ...)
                            let w = (((ox + a) * gy + oy + b) * gz + oz + c) * Q;
                            let at = ((a * py + b) * pz + c) * Q;
                            f[at..at + Q].copy_from_slice(&whole[w..w + Q]);
                        }
                    }
                }
                assert!(ox + px <= gx);
                let out = step(&f, s, bgk, &[Region::Interior, Region::Shell]);
                for i in 0..nx {
                    for j in 0..ny {
                        for k in 0..nz {
                            let a = s.site(i, j, k);
                            let b = g.site(ox + i, oy + j, oz + k);
                            let same = out[a..a + Q]
                                .iter()
                                .zip(&next[b..b + Q])
                                .all(|(x, y)| x.to_bits() == y.to_bits());
                            assert!(same, "block at {ox},{oy},{oz} site {i},{j},{k}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn arrays_of_the_wrong_length_are_refused() {
    let s = Shape::new(2, 2, 2).unwrap();
    let f = vec![0.0; s.len()];
    let mut g = vec![0.0; s.len() - 1];
    let e = collide_stream(&f, &mut g, s, Bgk::new(0.8).unwrap(), Region::All).unwrap_err();
    assert_eq!(
        e.to_string(),
        "destination array has 1215 values; a 2x2x2 subdomain with its halo has 4x4x4x19 = 1216"
    );
}

/// The Taylor–Green vortex on `n`³ at τ = 0.8 (ν = 0.1) for 10 blocks of `steps` steps: its
/// kinetic energy follows `E(0) exp(−2ν (k_x² + k_y²) t)` within 1 % after every block.
fn taylor_green_decays(n: usize, steps: usize) {
    let s = Shape::new(n, n, n).unwrap();
    let bgk = Bgk::new(0.8).unwrap();
    let mut f = vec![0.0; s.len()];
    initialise(&mut f, s, [0; 3], [n; 3], &Init::TaylorGreen { u0: 0.02 }).unwrap();
    let e0 = totals(&f, s).unwrap().kinetic_energy;
    let k = 2.0 * std::f64::consts::PI / n as f64;
    let rate = 2.0 * bgk.viscosity() * 2.0 * k * k;
    let mut worst = 0.0f64;
    for block in 1..=10 {
        f = run(f, s, bgk, steps);
        let t = (steps * block) as f64;
        let e = totals(&f, s).unwrap().kinetic_energy;
        let want = e0 * (-rate * t).exp();
        worst = worst.max((e / want - 1.0).abs());
    }
    assert!(worst < 0.01, "largest relative deviation {worst}");
}

/// The same decay on 48³ for 56 steps a block (the rate goes as 1/n²: the energy falls about as
/// far), a quarter of the work of the run, which make test-long runs. (On 32³ for 25
/// steps a block the lattice's error, which goes as 1/n², is 1.24 %.)
#[test]
fn taylor_green_decays_at_the_analytic_rate_on_48_cubed() {
    taylor_green_decays(48, 56);
}

/// The physics test: the Taylor–Green vortex on 64³ for 1,000 steps.
#[test]
#[ignore = "long: make test-long"]
fn taylor_green_decays_at_the_analytic_rate() {
    taylor_green_decays(64, 100);
}
