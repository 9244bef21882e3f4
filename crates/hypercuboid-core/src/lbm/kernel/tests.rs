use super::*;

fn shape(nx: usize, ny: usize, nz: usize) -> Shape {
    Shape::new(nx, ny, nz).unwrap()
}

#[test]
fn regions_partition_the_subdomain() {
    // every shape whose sides are among these: single sites, thin slabs, cubes, a long side
    let sides = [1, 2, 3, 4, 5, 6, 7, 70];
    let shapes = sides.into_iter().flat_map(|nx| {
        sides
            .into_iter()
            .flat_map(move |ny| sides.into_iter().map(move |nz| (nx, ny, nz)))
    });
    for (nx, ny, nz) in shapes {
        let s = shape(nx, ny, nz);
        let mut count = vec![0u8; nx * ny * nz];
        for r in [Region::Interior, Region::Shell] {
            for b in boxes(s, r) {
                for i in b[0].0..b[0].1 {
                    for j in b[1].0..b[1].1 {
                        for k in b[2].0..b[2].1 {
                            count[(i * ny + j) * nz + k] += 1;
                            let inner = (1..nx - 1).contains(&i)
                                && (1..ny.saturating_sub(1)).contains(&j)
                                && (1..nz.saturating_sub(1)).contains(&k);
                            assert_eq!(inner, r == Region::Interior, "{i} {j} {k} {r:?}");
                        }
                    }
                }
            }
        }
        assert!(count.iter().all(|&c| c == 1), "{nx}x{ny}x{nz}");
        let interior = nx.saturating_sub(2) * ny.saturating_sub(2) * nz.saturating_sub(2);
        assert_eq!(Region::Interior.sites(s), interior);
        assert_eq!(Region::Shell.sites(s), nx * ny * nz - interior);
        assert_eq!(Region::All.sites(s), nx * ny * nz);
    }
}

#[test]
fn region_names() {
    for (name, region) in [
        ("all", Region::All),
        ("interior", Region::Interior),
        ("shell", Region::Shell),
    ] {
        assert_eq!(Region::parse(name).unwrap(), region, "{name}");
    }
    assert_eq!(
        Region::parse("edge").unwrap_err().to_string(),
        "unknown region 'edge'; accepted: all, interior, shell"
    );
}

#[test]
fn equilibrium_has_its_moments() {
    let (rho, u) = (1.07, [0.03, -0.02, 0.011]);
    let (r, j) = moments(&equilibrium(rho, u));
    assert!((r - rho).abs() < 1e-15);
    for a in 0..3 {
        assert!((j[a] - rho * u[a]).abs() < 1e-16, "{a}");
    }
}

#[test]
fn collision_conserves_mass_and_momentum() {
    let f: [f64; Q] = std::array::from_fn(|q| 0.05 + 0.003 * (q as f64) * (q % 5) as f64);
    let (r0, j0) = moments(&f);
    let (r1, j1) = moments(&collide(&f, 1.0 / 0.8));
    assert!((r1 - r0).abs() < 1e-15 * r0);
    for a in 0..3 {
        assert!((j1[a] - j0[a]).abs() < 1e-15, "{a}");
    }
}

#[test]
fn lanes_compute_each_site_as_the_scalar_collision() {
    let mut fin = [[0.0f64; LANES]; Q];
    for (q, line) in fin.iter_mut().enumerate() {
        for (l, v) in line.iter_mut().enumerate() {
            *v = 0.02 + ((q * 31 + l * 17) % 97) as f64 * 1e-3;
        }
    }
    let mut fout = [[0.0f64; LANES]; Q];
    collide_lanes(&fin, &mut fout, LANES, 1.7);
    for l in 0..LANES {
        let g: [f64; Q] = std::array::from_fn(|q| fin[q][l]);
        let want = collide(&g, 1.7);
        for q in 0..Q {
            assert_eq!(fout[q][l].to_bits(), want[q].to_bits(), "lane {l} q {q}");
        }
    }
}

/// A reproducible lattice of values in [0.01, 0.11), halo included (xorshift).
fn random_lattice(s: Shape, seed: u64) -> Vec<f64> {
    let mut state = seed | 1;
    (0..s.len())
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            0.01 + (state >> 11) as f64 / (1u64 << 53) as f64 * 0.1
        })
        .collect()
}

/// The lattice `f` of shape `from` copied into the layout of `to` (same sides).
fn to_layout(f: &[f64], from: Shape, to: Shape) -> Vec<f64> {
    let [px, py, pz] = from.padded();
    let (qa, qb) = (from.strides()[3], to.strides()[3]);
    let mut out = vec![0.0; to.len()];
    for a in 0..px {
        for b in 0..py {
            for c in 0..pz {
                for q in 0..Q {
                    out[to.cell(a, b, c) + q * qb] = f[from.cell(a, b, c) + q * qa];
                }
            }
        }
    }
    out
}

#[test]
fn every_path_gives_the_scalar_bits_in_every_region() {
    let paths: Vec<Path> = Path::ALL.into_iter().filter(|p| p.supported()).collect();
    assert_eq!(paths[0], Path::Scalar);
    // odd sides (masked chunks of every length, rows of one site), a 64-long row (whole
    // chunks only), a lattice thin along z (its sites go by lines along y, as do the
    // z-faces of the shells), more y-rows than a block holds, and rows longer than the
    // portable path's 64 lanes
    for (nx, ny, nz) in [
        (5, 7, 13),
        (3, 3, 17),
        (1, 1, 1),
        (2, 3, 64),
        (4, 9, 3),
        (2, 37, 9),
        (3, 2, 2 * LANES + 5),
    ] {
        let s = shape(nx, ny, nz);
        let src = random_lattice(s, (nx * 1000 + ny * 100 + nz) as u64);
        let bgk = Bgk::new(0.83).unwrap();
        let soa = s.with_layout(Layout::Soa);
        let src_soa = to_layout(&src, s, soa);
        for region in [Region::All, Region::Interior, Region::Shell] {
            // NaN where the step must not write, so an extra write shows as a difference
            let mut want = vec![f64::NAN; s.len()];
            collide_stream_on(Path::Scalar, &src, &mut want, s, bgk, region).unwrap();
            let written = want.iter().filter(|v| !v.is_nan()).count();
            assert_eq!(written, region.sites(s) * Q, "{s} {region:?}");
            for &path in &paths {
                let mut got = vec![f64::NAN; s.len()];
                collide_stream_on(path, &src, &mut got, s, bgk, region).unwrap();
                let diff = want
                    .iter()
                    .zip(&got)
                    .position(|(a, b)| a.to_bits() != b.to_bits());
                assert_eq!(diff, None, "{s} {region:?} {path:?}");
                // the structure-of-arrays lattice, read back in the logical order
                let mut got = vec![f64::NAN; soa.len()];
                collide_stream_on(path, &src_soa, &mut got, soa, bgk, region).unwrap();
                let got = to_layout(&got, soa, s);
                let diff = want
                    .iter()
                    .zip(&got)
                    .position(|(a, b)| a.to_bits() != b.to_bits());
                assert_eq!(diff, None, "{s} {region:?} {path:?} soa");
            }
        }
    }
}

#[test]
fn the_hinted_rows_of_large_arrays_give_the_same_bits() {
    // arrays above PREFETCH_ABOVE: the rows hint the cache (both layouts), which changes
    // no result
    let s = shape(48, 48, 50);
    assert!(2 * s.len() * 8 > PREFETCH_ABOVE);
    let soa = s.with_layout(Layout::Soa);
    let src = random_lattice(s, 48);
    let src_soa = to_layout(&src, s, soa);
    let bgk = Bgk::new(0.71).unwrap();
    let mut want = vec![f64::NAN; s.len()];
    collide_stream_on(Path::Scalar, &src, &mut want, s, bgk, Region::All).unwrap();
    for path in Path::ALL.into_iter().filter(|p| p.supported()) {
        let mut got = vec![f64::NAN; s.len()];
        collide_stream_on(path, &src_soa, &mut got, soa, bgk, Region::All).unwrap();
        let got = to_layout(&got, soa, s);
        let same = want
            .iter()
            .zip(&got)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{path:?}");
    }
}

#[test]
fn the_generic_collision_is_the_scalar_collision() {
    let f: [f64; Q] = std::array::from_fn(|q| 0.04 + 0.0031 * (q as f64) * ((q * 7) % 5) as f64);
    // SAFETY: f64 arithmetic needs no particular instruction.
    let got = unsafe { collide_v(&f, 1.3) };
    let want = collide(&f, 1.3);
    for q in 0..Q {
        assert_eq!(got[q].to_bits(), want[q].to_bits(), "q {q}");
    }
}

#[test]
fn the_best_path_is_the_widest_supported() {
    let best = Path::best();
    assert!(best.supported());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        assert_eq!(best, Path::Avx512);
    } else if std::arch::is_x86_feature_detected!("avx2") {
        assert_eq!(best, Path::Avx2);
    }
}
