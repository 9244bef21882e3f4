//! The D3Q19 BGK collide–stream kernel on the halo layout.
//!
//! **Scheme.** Two arrays, swapped by the caller (the "AB" pattern), each holding the
//! post-collision distributions of one time step. A step *pulls*: the new value at a site is the
//! BGK collision of the 19 values streaming into it, `f'_q(x) = g_q − ω (g_q − f^eq_q(ρ, u))` with
//! `g_q = f_q(x − c_q)` read from the source array. Why two arrays and not an in-place scheme
//! (AA pattern, esoteric twist): the halo contract fixes one (x, y, z, q) layout for every step,
//! which the in-place schemes break on alternate steps, and with two arrays the source is only
//! read during a step, so the interior can be updated while the halo exchange of the same source
//! array is in flight (its boundary cells are read by the sends, its halo cells written by the
//! receives, neither touched by the interior update).
//!
//! **Speed on the (x, y, z, q) layout.** The array of structures makes the 19 values of a site
//! contiguous, the z-rows of one velocity strided. A z-row is processed in chunks of
//! [`LANES`] sites: the pulled values are gathered into a structure of arrays (one contiguous
//! line of lanes per velocity, buffers set up once per call), the collision runs over the lanes
//! (loops the compiler vectorises, with AVX-512 or AVX2 where the processor has them: the same
//! IEEE operations in the same order, so the results are bitwise those of the scalar path, no
//! fused multiply–add), and the results are written back site by site into the contiguous
//! destination row. No allocation.
//!
//! Every site is computed by the same sequence of operations whatever region, chunk or lane it
//! falls in, so a lattice split over ranks evolves bitwise as the undivided one.

use super::d3q19::{Q, VELOCITIES, WEIGHTS};
use super::{Bgk, LbmError, Shape};

/// Sites processed together: the length of the structure-of-arrays buffers (19 × 64 × 8 bytes
/// in and out, 19.5 KiB of stack).
pub const LANES: usize = 64;

/// Which sites of the subdomain an update covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// Every subdomain site.
    All,
    /// The sites whose 18 neighbours are all subdomain sites: they need no halo data (the sites
    /// at distance at least 1 from every face; none when a side is shorter than 3).
    Interior,
    /// The subdomain sites that are not interior: they read halo data.
    Shell,
}

impl Region {
    /// The names the command line and the binding accept.
    pub const NAMES: [&'static str; 3] = ["all", "interior", "shell"];

    /// The region called `name` (`all`, `interior`, `shell`).
    pub fn parse(name: &str) -> Result<Region, LbmError> {
        match name {
            "all" => Ok(Region::All),
            "interior" => Ok(Region::Interior),
            "shell" => Ok(Region::Shell),
            _ => Err(LbmError::BadRegion {
                name: name.to_string(),
            }),
        }
    }

    /// Number of subdomain sites in the region.
    pub fn sites(self, shape: Shape) -> usize {
        boxes(shape, self)
            .map(|b| (b[0].1 - b[0].0) * (b[1].1 - b[1].0) * (b[2].1 - b[2].0))
            .sum()
    }
}

/// A box of subdomain sites: half-open ranges of x, y and z.
type SiteBox = [(usize, usize); 3];

/// The non-empty boxes making up a region (at most 6), without allocating.
fn boxes(shape: Shape, region: Region) -> impl Iterator<Item = SiteBox> {
    let n = [shape.nx, shape.ny, shape.nz];
    // interior range per dimension: [lo, hi), lo = min(1, n), hi = max(n - 1, lo)
    let lo = n.map(|m| m.min(1));
    let hi = [0, 1, 2].map(|d| n[d].saturating_sub(1).max(lo[d]));
    let interior: SiteBox = [(lo[0], hi[0]), (lo[1], hi[1]), (lo[2], hi[2])];
    let all: SiteBox = [(0, n[0]), (0, n[1]), (0, n[2])];
    let mut out = [None::<SiteBox>; 6];
    match region {
        Region::All => out[0] = Some(all),
        Region::Interior => out[0] = Some(interior),
        Region::Shell => {
            for d in 0..3 {
                // slabs normal to d: below and above the interior range, spanning the interior
                // in the dimensions before d and everything in the dimensions after it
                let mut b = all;
                for (e, r) in b.iter_mut().enumerate().take(d) {
                    *r = interior[e];
                }
                b[d] = (0, lo[d]);
                out[2 * d] = Some(b);
                b[d] = (hi[d], n[d]);
                out[2 * d + 1] = Some(b);
            }
        }
    }
    out.into_iter()
        .flatten()
        .filter(|b| b.iter().all(|r| r.0 < r.1))
}

/// One collide–stream step over `region`: reads `src` (sites of the region and their
/// neighbours, halo included where the region touches it), writes the region's sites of `dst`.
///
/// Both slices hold the halo layout of `shape` (see [`Shape::len`]). The halo cells of `dst`
/// are not written; the kernel never wraps around (periodicity comes from the halo exchange).
pub fn collide_stream(
    src: &[f64],
    dst: &mut [f64],
    shape: Shape,
    bgk: Bgk,
    region: Region,
) -> Result<(), LbmError> {
    shape.check_len("source", src.len())?;
    shape.check_len("destination", dst.len())?;
    let row = select_row();
    // the structure-of-arrays buffers of a chunk, set up once per call (not per chunk)
    let mut lanes = Lanes {
        fin: [[0.0; LANES]; Q],
        fout: [[0.0; LANES]; Q],
    };
    let [_, py, pz] = shape.padded();
    let sz = Q as isize;
    let sy = pz as isize * sz;
    let sx = py as isize * sy;
    let shift: [isize; Q] = std::array::from_fn(|q| {
        let c = VELOCITIES[q];
        isize::from(c[0]) * sx + isize::from(c[1]) * sy + isize::from(c[2]) * sz
    });
    for b in boxes(shape, region) {
        for i in b[0].0..b[0].1 {
            for j in b[1].0..b[1].1 {
                let mut k = b[2].0;
                while k < b[2].1 {
                    let n = LANES.min(b[2].1 - k);
                    let base = shape.site(i, j, k);
                    // the source values the next row reads first (its new corner row,
                    // x + 1 and y + 2, from one site before to one after), and where it writes
                    let ahead = base + 2 * sy as usize + sx as usize - Q;
                    prefetch(src, ahead, (n + 2) * Q);
                    prefetch(dst, base + sy as usize, n * Q);
                    row(src, dst, base, n, &shift, bgk.omega, &mut lanes);
                    k += n;
                }
            }
        }
    }
    Ok(())
}

/// Asks the processor to bring `len` values of `data` from `start` into the cache (where the
/// range lies in `data`; a hint with no effect on the results).
#[inline(always)]
fn prefetch(data: &[f64], start: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(range) = data.get(start..start + len) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        for line in range.chunks(8) {
            // SAFETY: SSE is part of x86_64; a prefetch reads nothing and cannot fault.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, start, len);
}

/// The gathered values of a chunk and their collision, one line of lanes per velocity.
struct Lanes {
    fin: [[f64; LANES]; Q],
    fout: [[f64; LANES]; Q],
}

type RowFn = fn(&[f64], &mut [f64], usize, usize, &[isize; Q], f64, &mut Lanes);

/// The row function for this processor: AVX2 where it has it (same results, wider vectors).
fn select_row() -> RowFn {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return row_avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return row_avx2;
        }
    }
    row_generic
}

#[cfg(target_arch = "x86_64")]
fn row_avx2(
    src: &[f64],
    dst: &mut [f64],
    base: usize,
    n: usize,
    shift: &[isize; Q],
    omega: f64,
    lanes: &mut Lanes,
) {
    #[target_feature(enable = "avx2")]
    fn inner(
        src: &[f64],
        dst: &mut [f64],
        base: usize,
        n: usize,
        shift: &[isize; Q],
        omega: f64,
        lanes: &mut Lanes,
    ) {
        row_impl(src, dst, base, n, shift, omega, lanes);
    }
    // SAFETY: select_row returns this function only when the processor has AVX2.
    unsafe { inner(src, dst, base, n, shift, omega, lanes) }
}

#[cfg(target_arch = "x86_64")]
fn row_avx512(
    src: &[f64],
    dst: &mut [f64],
    base: usize,
    n: usize,
    shift: &[isize; Q],
    omega: f64,
    lanes: &mut Lanes,
) {
    #[target_feature(enable = "avx512f")]
    fn inner(
        src: &[f64],
        dst: &mut [f64],
        base: usize,
        n: usize,
        shift: &[isize; Q],
        omega: f64,
        lanes: &mut Lanes,
    ) {
        row_impl(src, dst, base, n, shift, omega, lanes);
    }
    // SAFETY: select_row returns this function only when the processor has AVX-512F.
    unsafe { inner(src, dst, base, n, shift, omega, lanes) }
}

fn row_generic(
    src: &[f64],
    dst: &mut [f64],
    base: usize,
    n: usize,
    shift: &[isize; Q],
    omega: f64,
    lanes: &mut Lanes,
) {
    row_impl(src, dst, base, n, shift, omega, lanes);
}

/// `n ≤ LANES` consecutive sites of a z-row starting at value index `base`: gather, collide,
/// write back.
#[inline(always)]
fn row_impl(
    src: &[f64],
    dst: &mut [f64],
    base: usize,
    n: usize,
    shift: &[isize; Q],
    omega: f64,
    lanes: &mut Lanes,
) {
    let Lanes { fin, fout } = lanes;
    for (q, line) in fin.iter_mut().enumerate() {
        let start = (base as isize - shift[q]) as usize + q;
        for (v, x) in line[..n].iter_mut().zip(src[start..].iter().step_by(Q)) {
            *v = *x;
        }
    }
    // whole vectors of lanes (the lanes past n hold what an earlier chunk left, or zeros, and
    // are not written back); the bound lets the compiler drop the index checks
    let m = n.next_multiple_of(8).min(LANES);
    assert!(m <= LANES);
    collide_lanes(fin, fout, m, omega);
    for (l, site) in dst[base..base + n * Q].chunks_exact_mut(Q).enumerate() {
        let l = l % LANES;
        for (q, x) in site.iter_mut().enumerate() {
            *x = fout[q][l];
        }
    }
}

/// The collision of `m` lanes of gathered values, one loop over the lanes per quantity (loops
/// the compiler vectorises). Per lane, exactly the operations of [`collide`], in its order.
#[inline(always)]
fn collide_lanes(fin: &[[f64; LANES]; Q], fout: &mut [[f64; LANES]; Q], m: usize, omega: f64) {
    assert!(m <= LANES);
    let mut rho = fin[0];
    for line in &fin[1..] {
        for (r, v) in rho[..m].iter_mut().zip(&line[..m]) {
            *r += v;
        }
    }
    let mut u = [[0.0f64; LANES]; 3];
    for (a, ua) in u.iter_mut().enumerate() {
        let mut first = true;
        for q in 0..Q {
            let c = VELOCITIES[q][a];
            if c == 0 {
                continue;
            }
            let line = &fin[q];
            let (ua, line) = (&mut ua[..m], &line[..m]);
            match (first, c > 0) {
                (true, true) => ua.copy_from_slice(line),
                (true, false) => ua.iter_mut().zip(line).for_each(|(x, v)| *x = -v),
                (false, true) => ua.iter_mut().zip(line).for_each(|(x, v)| *x += v),
                (false, false) => ua.iter_mut().zip(line).for_each(|(x, v)| *x -= v),
            }
            first = false;
        }
    }
    let mut a = [0.0f64; LANES];
    let [ux, uy, uz] = &mut u;
    let (ux, uy, uz, rl, al) = (
        &mut ux[..m],
        &mut uy[..m],
        &mut uz[..m],
        &rho[..m],
        &mut a[..m],
    );
    for l in 0..m {
        let inv = 1.0 / rl[l];
        let (x, y, z) = (ux[l] * inv, uy[l] * inv, uz[l] * inv);
        ux[l] = x;
        uy[l] = y;
        uz[l] = z;
        al[l] = 1.0 - 1.5 * (x * x + y * y + z * z);
    }
    macro_rules! relax_each {
        ($($q:literal)*) => {
            $(relax::<$q>(&fin[$q], &mut fout[$q], &rho, &u, &a, m, omega);)*
        };
    }
    const { assert!(Q == 19) };
    relax_each!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18);
}

/// `f_q − ω (f_q − f^eq_q)` over the lanes for velocity `QI` (a constant, so that `c_q · u`
/// keeps only its non-zero terms).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn relax<const QI: usize>(
    fq: &[f64; LANES],
    oq: &mut [f64; LANES],
    rho: &[f64; LANES],
    u: &[[f64; LANES]; 3],
    a: &[f64; LANES],
    m: usize,
    omega: f64,
) {
    let c = VELOCITIES[QI];
    let w = WEIGHTS[QI];
    let (fq, oq, rho, a) = (&fq[..m], &mut oq[..m], &rho[..m], &a[..m]);
    let (ux, uy, uz) = (&u[0][..m], &u[1][..m], &u[2][..m]);
    for l in 0..m {
        let cu = dot(c, [ux[l], uy[l], uz[l]]);
        let feq = w * rho[l] * (a[l] + cu * (3.0 + 4.5 * cu));
        oq[l] = fq[l] - omega * (fq[l] - feq);
    }
}

/// The density and momentum of one site's distributions: `ρ = Σ f_q`, `j = Σ f_q c_q`, each sum
/// taken in the order of the velocities.
#[inline(always)]
pub fn moments(f: &[f64; Q]) -> (f64, [f64; 3]) {
    let mut rho = f[0];
    for v in &f[1..] {
        rho += v;
    }
    let mut j = [0.0f64; 3];
    for (a, ja) in j.iter_mut().enumerate() {
        let mut first = true;
        for q in 0..Q {
            let c = VELOCITIES[q][a];
            if c == 0 {
                continue;
            }
            if first {
                *ja = if c > 0 { f[q] } else { -f[q] };
                first = false;
            } else if c > 0 {
                *ja += f[q];
            } else {
                *ja -= f[q];
            }
        }
    }
    (rho, j)
}

/// `c_q · u` with only the non-zero components added (the table is constant: the compiler
/// folds the tests away).
#[inline(always)]
fn dot(c: [i8; 3], u: [f64; 3]) -> f64 {
    let t = |a: usize| if c[a] > 0 { u[a] } else { -u[a] };
    match (c[0] != 0, c[1] != 0, c[2] != 0) {
        (false, false, false) => 0.0,
        (true, false, false) => t(0),
        (false, true, false) => t(1),
        (false, false, true) => t(2),
        (true, true, false) => t(0) + t(1),
        (true, false, true) => t(0) + t(2),
        (false, true, true) => t(1) + t(2),
        (true, true, true) => t(0) + t(1) + t(2),
    }
}

/// The BGK equilibrium `f^eq_q = w_q ρ (1 + 3 c·u + 9/2 (c·u)² − 3/2 u²)`.
#[inline(always)]
pub fn equilibrium(rho: f64, u: [f64; 3]) -> [f64; Q] {
    let usq = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    let a = 1.0 - 1.5 * usq;
    std::array::from_fn(|q| {
        let cu = dot(VELOCITIES[q], u);
        WEIGHTS[q] * rho * (a + cu * (3.0 + 4.5 * cu))
    })
}

/// One site's BGK collision: `f − ω (f − f^eq(ρ, j/ρ))`.
#[inline(always)]
pub fn collide(f: &[f64; Q], omega: f64) -> [f64; Q] {
    let (rho, j) = moments(f);
    let inv = 1.0 / rho;
    let feq = equilibrium(rho, [j[0] * inv, j[1] * inv, j[2] * inv]);
    std::array::from_fn(|q| f[q] - omega * (f[q] - feq[q]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(nx: usize, ny: usize, nz: usize) -> Shape {
        Shape::new(nx, ny, nz).unwrap()
    }

    #[test]
    fn regions_partition_the_subdomain() {
        for (nx, ny, nz) in [
            (1, 1, 1),
            (2, 3, 1),
            (3, 3, 3),
            (5, 4, 7),
            (1, 6, 2),
            (70, 3, 2),
        ] {
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
        assert_eq!(Region::parse("shell").unwrap(), Region::Shell);
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

    #[test]
    fn scalar_and_vector_rows_agree_bitwise() {
        let s = shape(3, 4, 2 * LANES + 5);
        let src: Vec<f64> = (0..s.len())
            .map(|v| 0.05 + ((v * 7919) % 1000) as f64 * 1e-5)
            .collect();
        let [_, py, pz] = s.padded();
        let (sz, sy) = (Q as isize, (pz * Q) as isize);
        let sx = py as isize * sy;
        let shift: [isize; Q] = std::array::from_fn(|q| {
            let c = VELOCITIES[q];
            isize::from(c[0]) * sx + isize::from(c[1]) * sy + isize::from(c[2]) * sz
        });
        let mut a = vec![0.0; s.len()];
        let mut b = vec![0.0; s.len()];
        let base = s.site(1, 2, 0);
        let mut lanes = Lanes {
            fin: [[0.0; LANES]; Q],
            fout: [[0.0; LANES]; Q],
        };
        for (k, n) in [(0, LANES), (LANES, LANES), (2 * LANES, 5)] {
            row_generic(&src, &mut a, base + k * Q, n, &shift, 1.3, &mut lanes);
            select_row()(&src, &mut b, base + k * Q, n, &shift, 1.3, &mut lanes);
        }
        // one site at a time gives the same bits as chunks of 64
        let mut c = vec![0.0; s.len()];
        for k in 0..s.nz {
            row_generic(&src, &mut c, base + k * Q, 1, &shift, 1.3, &mut lanes);
        }
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        assert!(a.iter().zip(&c).all(|(x, y)| x.to_bits() == y.to_bits()));
        assert!(a[base..base + s.nz * Q].iter().all(|&v| v != 0.0));
    }
}
