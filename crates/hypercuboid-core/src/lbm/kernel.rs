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
//! **Speed on the structure of arrays ([`Layout::Soa`], `(q, x, y, z)` in memory).** A z-row
//! of one velocity is contiguous, and so is the row it pulls from (the same row of the source,
//! shifted by `c_q`): per chunk of 8 sites (AVX-512F; 4 with AVX2), 19 plain unaligned vector
//! loads, the collision on the 19 registers (`collide_v`, as below), 19 plain vector stores. A
//! row's last chunk ends at the row's end, overlapping the chunk before it (recomputing sites
//! with the same bits) rather than masking; rows shorter than a vector and the lines along y of
//! thin boxes use masked loads and stores or gathers and scatters. Each source value is read
//! once per step, so the rows go in plain (x, y) order without blocking; on arrays larger than
//! the last-level cache every chunk hints the cache `SOA_AHEAD` values ahead in each of its
//! 19 source and 19 destination streams, which are more than the hardware prefetchers follow.
//! The portable path copies the rows into the same lane buffers as below.
//!
//! **Speed on the array of structures ([`Layout::Aos`], `(x, y, z, q)`).** The 19 values of a site
//! contiguous and the z-rows of one velocity strided (152 B between sites). The sites of a
//! region go by lines — its z-rows, or lines along y where a box is thinner along z than a
//! vector (the z-faces of the shell) — and a line by chunks of sites, on one of three paths
//! chosen at run time (`Path`):
//!
//! - AVX-512F, 8 sites per chunk: each velocity's 8 pulled values are one hardware gather (an
//!   index vector of stride 19, the last chunk of a line masked) straight into a register, the
//!   collision runs on the 19 registers (`collide_v`), and three in-register transposes
//!   (8 × 8, 8 × 8, 3 × 8) turn them back into per-site stores (q 0–7, 8–15, and a masked
//!   store of q 16–18);
//! - AVX2, the same with 4 sites per chunk and 4 × 4 transposes;
//! - elsewhere, chunks of [`LANES`] sites gathered into lane buffers and collided by loops the
//!   compiler vectorises.
//!
//! The z-rows go in blocks of 16 y-rows, x outer within a block, so that the source rows of
//! x − 1 and x are still in L2 when the rows of x + 1 read them again; on arrays larger than the
//! last-level cache, each row first asks the cache for what the next row adds (software
//! prefetch: without it a 64³ step runs at a third of the speed). Every path performs the same
//! IEEE operations in the same order as [`collide`] (no fused multiply–add), so the results are
//! bitwise those of the scalar collision. No allocation.
//!
//! Every site is computed by the same sequence of operations whatever region, chunk or lane it
//! falls in, so a lattice split over ranks evolves bitwise as the undivided one.

use super::d3q19::{Q, VELOCITIES, WEIGHTS};
use super::{Bgk, Layout, LbmError, Shape};

/// Sites the portable path processes together: the length of its structure-of-arrays buffers
/// (19 × 64 × 8 bytes in and out, 19.5 KiB of stack).
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
    collide_stream_on(Path::best(), src, dst, shape, bgk, region)
}

/// The instructions a step runs on. Every path computes every site with the same IEEE
/// operations in the same order, so they give the same bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// Portable Rust: chunks of [`LANES`] sites gathered into lane buffers, the collision as
    /// loops over the lanes that the compiler vectorises for the baseline instruction set.
    Scalar,
    /// AVX2: four sites per vector, hardware gathers, in-register 4 × 4 transposes.
    Avx2,
    /// AVX-512F: eight sites per vector, hardware gathers, in-register 8 × 8 transposes.
    Avx512,
}

impl Path {
    /// Every path, whether or not this processor runs it.
    #[cfg(test)]
    pub(crate) const ALL: [Path; 3] = [Path::Scalar, Path::Avx2, Path::Avx512];

    /// Whether this processor has the instructions of the path.
    pub(crate) fn supported(self) -> bool {
        match self {
            Path::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            Path::Avx2 | Path::Avx512 => false,
        }
    }

    /// The fastest path this processor runs.
    pub(crate) fn best() -> Path {
        [Path::Avx512, Path::Avx2]
            .into_iter()
            .find(|p| p.supported())
            .unwrap_or(Path::Scalar)
    }
}

/// [`collide_stream`] on a chosen path, which the processor must support (checked: the
/// vector paths are only entered where [`Path::supported`] holds).
pub(crate) fn collide_stream_on(
    path: Path,
    src: &[f64],
    dst: &mut [f64],
    shape: Shape,
    bgk: Bgk,
    region: Region,
) -> Result<(), LbmError> {
    shape.check_len("source", src.len())?;
    shape.check_len("destination", dst.len())?;
    assert!(
        path.supported(),
        "{path:?} is not supported by this processor"
    );
    let [sx, sy, sz, sq] = shape.strides();
    let shift: [isize; Q] = std::array::from_fn(|q| {
        let c = VELOCITIES[q];
        isize::from(c[0]) * sx as isize
            + isize::from(c[1]) * sy as isize
            + isize::from(c[2]) * sz as isize
    });
    // value q of the site at index b pulls index b + pull[q]
    let pull: [isize; Q] = std::array::from_fn(|q| (q * sq) as isize - shift[q]);
    let large = 2 * std::mem::size_of_val(src) > PREFETCH_ABOVE;
    let rows = Rows {
        shape,
        region,
        sy,
        sx,
        sz,
        y_block: match shape.layout {
            Layout::Aos => Y_BLOCK,
            Layout::Soa => usize::MAX,
        },
        // these hints cover the array-of-structures rows; the structure-of-arrays rows hint
        // their own streams (SOA_AHEAD)
        prefetch: shape.layout == Layout::Aos && large,
    };
    // the hints are x86 instructions: the portable path has none
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
    let ahead = if large { SOA_AHEAD } else { 0 };
    match (shape.layout, path) {
        (Layout::Soa, Path::Scalar) => {
            let mut lanes = Lanes {
                fin: [[0.0; LANES]; Q],
                fout: [[0.0; LANES]; Q],
            };
            rows.each(src, dst, |src, dst, line| {
                let mut k = 0;
                while k < line.n {
                    let m = LANES.min(line.n - k);
                    let base = line.base + k * line.step;
                    let part = Line { base, n: m, ..line };
                    row_lanes_soa(src, dst, part, &pull, sq, bgk.omega, &mut lanes);
                    k += m;
                }
            });
        }
        #[cfg(target_arch = "x86_64")]
        (Layout::Soa, Path::Avx2) => rows.each(src, dst, |src, dst, line| {
            // SAFETY: the assertion above checked that the processor has AVX2.
            unsafe { x86::row_soa_avx2(src, dst, line, &pull, sq, ahead, bgk.omega) }
        }),
        #[cfg(target_arch = "x86_64")]
        (Layout::Soa, Path::Avx512) => rows.each(src, dst, |src, dst, line| {
            // SAFETY: the assertion above checked that the processor has AVX-512F.
            unsafe { x86::row_soa_avx512(src, dst, line, &pull, sq, ahead, bgk.omega) }
        }),
        (Layout::Aos, Path::Scalar) => {
            // the structure-of-arrays buffers of a chunk, set up once per call (not per chunk)
            let mut lanes = Lanes {
                fin: [[0.0; LANES]; Q],
                fout: [[0.0; LANES]; Q],
            };
            rows.each(src, dst, |src, dst, line| {
                let mut k = 0;
                while k < line.n {
                    let m = LANES.min(line.n - k);
                    let base = line.base + k * line.step;
                    let part = Line { base, n: m, ..line };
                    row_lanes(src, dst, part, &shift, bgk.omega, &mut lanes);
                    k += m;
                }
            });
        }
        #[cfg(target_arch = "x86_64")]
        (Layout::Aos, Path::Avx2) => rows.each(src, dst, |src, dst, line| {
            // SAFETY: the assertion above checked that the processor has AVX2.
            unsafe { x86::row_avx2(src, dst, line, &shift, bgk.omega) }
        }),
        #[cfg(target_arch = "x86_64")]
        (Layout::Aos, Path::Avx512) => rows.each(src, dst, |src, dst, line| {
            // SAFETY: the assertion above checked that the processor has AVX-512F.
            unsafe { x86::row_avx512(src, dst, line, &shift, bgk.omega) }
        }),
        #[cfg(not(target_arch = "x86_64"))]
        (_, Path::Avx2 | Path::Avx512) => unreachable!("checked by the assertion above"),
    }
    Ok(())
}

/// Sites updated together: `n` sites, the first at value index `base`, the next ones `step`
/// values apart (`Q` along a z-row, the y-row stride along y).
#[derive(Clone, Copy, Debug)]
struct Line {
    base: usize,
    n: usize,
    step: usize,
}

/// The lines of a region: its z-rows, in blocks of [`Y_BLOCK`] y-rows visited x by x, except in
/// boxes thinner along z than a vector and longer along y (the z-faces of the shell), whose
/// sites go by lines along y, so that they fill vectors too.
struct Rows {
    shape: Shape,
    region: Region,
    /// Values between consecutive y-rows.
    sy: usize,
    /// Values between consecutive x-planes.
    sx: usize,
    /// Values between consecutive sites of a z-row.
    sz: usize,
    /// The y-rows of a block ([`Y_BLOCK`] on the array of structures; all of them on the
    /// structure of arrays, which reads each source value once and so has no reuse to keep).
    y_block: usize,
    /// Whether to hint the cache before each z-row.
    prefetch: bool,
}

/// The two arrays' size in bytes above which the rows hint the cache (software prefetch): at
/// 48³ (38 MB) and above the hints pay (without them a 64³ step ran at 17 MLUPS instead of
/// 45), while lattices whose arrays fit in this machine's 32 MiB L3 run faster without them
/// (24³–40³: 83 MLUPS against 75). A hint changes no result.
const PREFETCH_ABOVE: usize = 32 << 20;

impl Rows {
    /// Calls `row(src, dst, line)` for each line of the region, after hinting the cache with
    /// what the next z-row reads and writes when the arrays are large.
    #[inline(always)]
    fn each(&self, src: &[f64], dst: &mut [f64], mut row: impl FnMut(&[f64], &mut [f64], Line)) {
        for b in boxes(self.shape, self.region) {
            let (ny, nz) = (b[1].1 - b[1].0, b[2].1 - b[2].0);
            if nz < 8 && ny > nz {
                for i in b[0].0..b[0].1 {
                    for k in b[2].0..b[2].1 {
                        let base = self.shape.site(i, b[1].0, k);
                        let step = self.sy;
                        row(src, dst, Line { base, n: ny, step });
                    }
                }
                continue;
            }
            // blocks of Y_BLOCK y-rows, x outer within a block: the source rows of x − 1 and
            // x are still in L2 when the rows of x + 1 read them again
            let mut j0 = b[1].0;
            while j0 < b[1].1 {
                let j1 = j0 + (b[1].1 - j0).min(self.y_block);
                for i in b[0].0..b[0].1 {
                    for j in j0..j1 {
                        let base = self.shape.site(i, j, b[2].0);
                        if self.prefetch {
                            // what the next row adds to the block's working set, from one
                            // site before to one after, and the row it writes
                            let (next, fresh, apart) = if j + 1 < j1 {
                                // (x, y + 1): the row of x + 1 at y + 2
                                let next = base + self.sy;
                                (next, next + self.sx + self.sy, 0)
                            } else {
                                // (x + 1, y0): the rows of x + 2 at y0 − 1, y0 and y0 + 1
                                let next = self.shape.site(i + 1, j0, b[2].0);
                                (next, next + self.sx - self.sy, self.sy)
                            };
                            let len = (nz + 2) * Q;
                            prefetch(src, fresh - Q, len);
                            if apart > 0 {
                                prefetch(src, fresh + apart - Q, len);
                                prefetch(src, fresh + 2 * apart - Q, len);
                            }
                            prefetch(dst, next, nz * Q);
                        }
                        row(
                            src,
                            dst,
                            Line {
                                base,
                                n: nz,
                                step: self.sz,
                            },
                        );
                    }
                }
                j0 = j1;
            }
        }
    }
}

/// The y-rows of a block of z-rows (see [`Rows::each`]). Measured on 48³–128³ with the
/// software prefetch: 16 rows run a 64³ step at 57–59 MLUPS against 44–47 unblocked, 32 rows at
/// 47–48, 8 rows at 56; at 64³ the block's three x-planes of source rows (3 × 18 rows × 10 KB)
/// fit in the 1 MiB L2 with room for the destination rows.
const Y_BLOCK: usize = 16;

/// How far ahead (in values: 2 KiB) the structure-of-arrays rows ask the cache for each of
/// their 19 source streams, and for the destination lines they will write (for writing), on
/// arrays larger than [`PREFETCH_ABOVE`]. Measured at 64³ (MLUPS per CPU second on a loaded
/// machine): no hints 48, source only 63, source and destination 89 (128³: 53 and 103); 128 to
/// 512 values ahead within 2 %, 1,024 slower; lattices in the cache (16³, 32³) lose a quarter
/// with the hints. The 19 read and 19 write streams are more than the hardware prefetchers
/// track: without the hints the kernel waits on misses.
const SOA_AHEAD: usize = 256;

/// Asks the processor to bring `len` values of `data` from `start` into the cache (where the
/// range lies in `data`; a hint with no effect on the results).
#[inline(always)]
fn prefetch(data: &[f64], start: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(range) = data.get(start..start + len) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // one hint per 64-byte line. Measured: issuing them faster (a bare pointer loop, or
        // the four rows interleaved) makes a 64³ step slower, 38 and 24 MLUPS against 45 —
        // hints issued faster than the misses complete are dropped.
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

/// The `line.n ≤ LANES` sites of a line: gather, collide, write back (the portable path).
fn row_lanes(
    src: &[f64],
    dst: &mut [f64],
    line: Line,
    shift: &[isize; Q],
    omega: f64,
    lanes: &mut Lanes,
) {
    let Line { base, n, step } = line;
    let Lanes { fin, fout } = lanes;
    for (q, values) in fin.iter_mut().enumerate() {
        let start = (base as isize - shift[q]) as usize + q;
        for (v, x) in values[..n]
            .iter_mut()
            .zip(src[start..].iter().step_by(step))
        {
            *v = *x;
        }
    }
    // whole vectors of lanes (the lanes past n hold what an earlier chunk left, or zeros, and
    // are not written back); the bound lets the compiler drop the index checks
    let m = n.next_multiple_of(8).min(LANES);
    assert!(m <= LANES);
    collide_lanes(fin, fout, m, omega);
    for l in 0..n.min(LANES) {
        let site = &mut dst[base + l * step..][..Q];
        for (q, x) in site.iter_mut().enumerate() {
            *x = fout[q][l];
        }
    }
}

/// The `line.n ≤ LANES` sites of a line on the structure-of-arrays layout: value `q` of the
/// site at index `b` pulls index `b + pull[q]` and is written at `b + q · sq` (a z-row: plain
/// contiguous copies in and out of the lanes). The portable path.
fn row_lanes_soa(
    src: &[f64],
    dst: &mut [f64],
    line: Line,
    pull: &[isize; Q],
    sq: usize,
    omega: f64,
    lanes: &mut Lanes,
) {
    let Line { base, n, step } = line;
    let Lanes { fin, fout } = lanes;
    let n = n.min(LANES);
    for (q, values) in fin.iter_mut().enumerate() {
        let start = (base as isize + pull[q]) as usize;
        if step == 1 {
            values[..n].copy_from_slice(&src[start..start + n]);
        } else {
            for (v, x) in values[..n]
                .iter_mut()
                .zip(src[start..].iter().step_by(step))
            {
                *v = *x;
            }
        }
    }
    let m = n.next_multiple_of(8).min(LANES);
    collide_lanes(fin, fout, m, omega);
    for (q, values) in fout.iter().enumerate() {
        let start = base + q * sq;
        if step == 1 {
            dst[start..start + n].copy_from_slice(&values[..n]);
        } else {
            for (x, v) in dst[start..].iter_mut().step_by(step).zip(&values[..n]) {
                *x = *v;
            }
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

/// The arithmetic the vector paths compute a site's collision with: `f64` (one site) or a
/// vector of sites, each operation one IEEE operation per lane.
///
/// # Safety
/// An implementation may use instructions the processor lacks; its methods must only be called
/// where the processor has them (inside a function enabling them, after run-time detection).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // used by the vector paths and tests
unsafe trait Real: Copy {
    /// Every lane `x`.
    unsafe fn splat(x: f64) -> Self;
    /// `self + o` per lane.
    unsafe fn add(self, o: Self) -> Self;
    /// `self − o` per lane.
    unsafe fn sub(self, o: Self) -> Self;
    /// `self × o` per lane.
    unsafe fn mul(self, o: Self) -> Self;
    /// `self / o` per lane.
    unsafe fn div(self, o: Self) -> Self;
    /// `−self` per lane (the sign flipped, as `-x` does).
    unsafe fn neg(self) -> Self;
}

// SAFETY: plain f64 arithmetic needs no particular instruction.
unsafe impl Real for f64 {
    #[inline(always)]
    unsafe fn splat(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    unsafe fn add(self, o: f64) -> f64 {
        self + o
    }
    #[inline(always)]
    unsafe fn sub(self, o: f64) -> f64 {
        self - o
    }
    #[inline(always)]
    unsafe fn mul(self, o: f64) -> f64 {
        self * o
    }
    #[inline(always)]
    unsafe fn div(self, o: f64) -> f64 {
        self / o
    }
    #[inline(always)]
    unsafe fn neg(self) -> f64 {
        -self
    }
}

/// One sum of [`moments`]: `acc` so far and the next distribution `v` with velocity component
/// `c` (a constant once inlined: the branches fold away).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // used by the vector paths and tests
#[inline(always)]
unsafe fn accumulate<V: Real>(acc: Option<V>, c: i8, v: V) -> Option<V> {
    // SAFETY: the caller's contract (V's instructions are available).
    unsafe {
        match (acc, c) {
            (_, 0) => acc,
            (None, c) if c > 0 => Some(v),
            (None, _) => Some(v.neg()),
            (Some(s), c) if c > 0 => Some(s.add(v)),
            (Some(s), _) => Some(s.sub(v)),
        }
    }
}

/// [`dot`] on lanes: `c · u` with only the non-zero components, in the same order.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // used by the vector paths and tests
#[inline(always)]
unsafe fn dot_v<V: Real>(c: [i8; 3], u: [V; 3]) -> V {
    // SAFETY: the caller's contract.
    unsafe {
        let acc = accumulate(None, c[0], u[0]);
        let acc = accumulate(acc, c[1], u[1]);
        accumulate(acc, c[2], u[2]).unwrap_or(V::splat(0.0))
    }
}

/// [`collide`] on lanes: per lane exactly the operations of [`collide`] (through [`moments`]
/// and [`equilibrium`]), in the same order, so each lane's bits are the scalar collision's.
///
/// # Safety
/// The processor has the instructions of `V`.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // used by the vector paths and tests
#[inline(always)]
unsafe fn collide_v<V: Real>(f: &[V; Q], omega: V) -> [V; Q] {
    // SAFETY: the caller's contract.
    unsafe {
        // the velocity index is a literal in every expansion, so that the arrays stay in
        // registers and the velocity table folds into the code
        macro_rules! each_q {
            ($m:ident) => {
                $m!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18)
            };
        }
        const { assert!(Q == 19) };
        let mut rho = f[0];
        macro_rules! density {
            ($first:literal $($q:literal)*) => { $(rho = rho.add(f[$q]);)* };
        }
        each_q!(density);
        let (mut jx, mut jy, mut jz) = (None::<V>, None::<V>, None::<V>);
        macro_rules! momentum {
            ($($q:literal)*) => {$(
                jx = accumulate(jx, const { VELOCITIES[$q][0] }, f[$q]);
                jy = accumulate(jy, const { VELOCITIES[$q][1] }, f[$q]);
                jz = accumulate(jz, const { VELOCITIES[$q][2] }, f[$q]);
            )*};
        }
        each_q!(momentum);
        let inv = V::splat(1.0).div(rho);
        let zero = V::splat(0.0);
        let j = [jx.unwrap_or(zero), jy.unwrap_or(zero), jz.unwrap_or(zero)];
        let u = [j[0].mul(inv), j[1].mul(inv), j[2].mul(inv)];
        let usq = u[0].mul(u[0]).add(u[1].mul(u[1])).add(u[2].mul(u[2]));
        let a = V::splat(1.0).sub(V::splat(1.5).mul(usq));
        let mut out = *f;
        macro_rules! relax {
            ($($q:literal)*) => {$(
                let cu = dot_v(const { VELOCITIES[$q] }, u);
                let poly = a.add(cu.mul(V::splat(3.0).add(V::splat(4.5).mul(cu))));
                let feq = V::splat(const { WEIGHTS[$q] }).mul(rho).mul(poly);
                out[$q] = f[$q].sub(omega.mul(f[$q].sub(feq)));
            )*};
        }
        each_q!(relax);
        out
    }
}

/// The AVX2 and AVX-512 rows: hardware gathers of the pulled values straight into one vector
/// per velocity (a vector holds consecutive sites of the row), the collision on those vectors,
/// and the results transposed in registers back to the sites' contiguous 19 values.
// The AVX-512 intrinsics and the `avx512f` target feature are stable since Rust 1.89, the
// workspace's declared rust-version.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{collide_v, Line, Real, Q};
    use std::arch::x86_64::*;

    // SAFETY: the methods are only called from `row_avx512`, whose callers checked AVX-512F.
    unsafe impl Real for __m512d {
        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            unsafe { _mm512_set1_pd(x) }
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            unsafe { _mm512_add_pd(self, o) }
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            unsafe { _mm512_sub_pd(self, o) }
        }
        #[inline(always)]
        unsafe fn mul(self, o: Self) -> Self {
            unsafe { _mm512_mul_pd(self, o) }
        }
        #[inline(always)]
        unsafe fn div(self, o: Self) -> Self {
            unsafe { _mm512_div_pd(self, o) }
        }
        #[inline(always)]
        unsafe fn neg(self) -> Self {
            // the sign bit flipped (AVX-512F has the integer xor; the double one is DQ)
            unsafe {
                let sign = _mm512_set1_epi64(i64::MIN);
                _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(self), sign))
            }
        }
    }

    // SAFETY: the methods are only called from `row_avx2`, whose callers checked AVX2.
    unsafe impl Real for __m256d {
        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            unsafe { _mm256_set1_pd(x) }
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            unsafe { _mm256_add_pd(self, o) }
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            unsafe { _mm256_sub_pd(self, o) }
        }
        #[inline(always)]
        unsafe fn mul(self, o: Self) -> Self {
            unsafe { _mm256_mul_pd(self, o) }
        }
        #[inline(always)]
        unsafe fn div(self, o: Self) -> Self {
            unsafe { _mm256_div_pd(self, o) }
        }
        #[inline(always)]
        unsafe fn neg(self) -> Self {
            unsafe { _mm256_xor_pd(self, _mm256_set1_pd(-0.0)) }
        }
    }

    /// Panics unless every value a line pulls from `src` and writes to `dst` lies in the
    /// slices: the bounds argument of the rows' unchecked accesses.
    ///
    /// Site `l < n` of the line starts at `base + l·step`; it reads value `q` of its neighbour
    /// `− c_q`, index `base + l·step + q − shift[q]`. With `reach = max |shift[q]| + Q` and
    /// `last = base + (n − 1)·step`, every such index lies in `[base − reach, last + reach)`.
    /// It writes `[base + l·step, base + l·step + Q)`, inside `[base, last + Q)`.
    #[inline(always)]
    fn check_row(src: &[f64], dst: &[f64], line: Line, shift: &[isize; Q]) {
        let Line { base, n, step } = line;
        let reach = shift.iter().map(|s| s.unsigned_abs()).max().unwrap_or(0) + Q;
        let last = base + n.saturating_sub(1) * step;
        assert!(
            step >= Q && base >= reach && last + reach <= src.len() && last + Q <= dst.len(),
            "line of {n} sites at {base}, {step} apart, outside the arrays"
        );
    }

    /// `n` consecutive sites of a z-row starting at value index `base`, eight at a time (the
    /// last chunk masked): gather, collide, transpose, store.
    ///
    /// # Safety
    /// The processor has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn row_avx512(
        src: &[f64],
        dst: &mut [f64],
        line: Line,
        shift: &[isize; Q],
        omega: f64,
    ) {
        check_row(src, dst, line, shift);
        let Line { base, n, step } = line;
        let stride = step as i64;
        let index = _mm512_setr_epi64(
            0,
            stride,
            2 * stride,
            3 * stride,
            4 * stride,
            5 * stride,
            6 * stride,
            7 * stride,
        );
        // lanes past the row end collide this placeholder (a density of 19: no division by
        // zero) and are not stored
        let fill = _mm512_set1_pd(1.0);
        let omega = _mm512_set1_pd(omega);
        let mut s = 0;
        while s < n {
            let m = (n - s).min(8);
            let mask: __mmask8 = (0xffu16 >> (8 - m)) as u8;
            let b = base + s * step;
            let mut f = [fill; Q];
            macro_rules! gather {
                ($($q:literal)*) => {$(
                    // SAFETY: check_row: the lanes l < m read index
                    // b + l·step + q − shift[q] = base + (s + l)·step + q − shift[q], inside
                    // src; masked-off lanes read nothing.
                    f[$q] = unsafe {
                        let p = src.as_ptr().add(b + $q).offset(-shift[$q]);
                        _mm512_mask_i64gather_pd::<8>(fill, mask, index, p)
                    };
                )*};
            }
            gather!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18);
            // SAFETY: this function has AVX-512F.
            let out = unsafe { collide_v(&f, omega) };
            let lo = transpose8([
                out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7],
            ]);
            let hi = transpose8([
                out[8], out[9], out[10], out[11], out[12], out[13], out[14], out[15],
            ]);
            let last = transpose3(out[16], out[17], out[18]);
            let d = dst.as_mut_ptr();
            macro_rules! store_site {
                ($l:expr) => {{
                    let l: usize = $l;
                    // SAFETY: check_row: site l < m of the chunk owns values
                    // [b + l·step, b + l·step + Q) of dst; the masked store of q 16–18 writes
                    // lanes 16–18 of the site (lanes 12–15 of the pointer when the values sit
                    // in the upper half of the vector are masked off).
                    unsafe {
                        let p = d.add(b + l * step);
                        _mm512_storeu_pd(p, lo[l]);
                        _mm512_storeu_pd(p.add(8), hi[l]);
                        if l < 4 {
                            _mm512_mask_storeu_pd(p.add(16), 0b0000_0111, last[l]);
                        } else {
                            _mm512_mask_storeu_pd(p.add(12), 0b0111_0000, last[l - 4]);
                        }
                    }
                }};
            }
            if m == 8 {
                store_site!(0);
                store_site!(1);
                store_site!(2);
                store_site!(3);
                store_site!(4);
                store_site!(5);
                store_site!(6);
                store_site!(7);
            } else {
                for l in 0..m {
                    store_site!(l);
                }
            }
            s += m;
        }
    }

    /// `r[q][l]` → `t[l][q]` for an 8 × 8 block of doubles.
    #[inline(always)]
    unsafe fn transpose8(r: [__m512d; 8]) -> [__m512d; 8] {
        // SAFETY: called from `row_avx512` (AVX-512F).
        unsafe {
            // pairs: [r0_0 r1_0 r0_2 r1_2 r0_4 r1_4 r0_6 r1_6] and the odd lanes
            let a0 = _mm512_unpacklo_pd(r[0], r[1]);
            let a1 = _mm512_unpackhi_pd(r[0], r[1]);
            let a2 = _mm512_unpacklo_pd(r[2], r[3]);
            let a3 = _mm512_unpackhi_pd(r[2], r[3]);
            let a4 = _mm512_unpacklo_pd(r[4], r[5]);
            let a5 = _mm512_unpackhi_pd(r[4], r[5]);
            let a6 = _mm512_unpacklo_pd(r[6], r[7]);
            let a7 = _mm512_unpackhi_pd(r[6], r[7]);
            // quads: [r0_l r1_l r2_l r3_l r0_{l+4} r1_{l+4} r2_{l+4} r3_{l+4}]
            let even = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
            let odd = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
            let b0 = _mm512_permutex2var_pd(a0, even, a2); // l = 0
            let b1 = _mm512_permutex2var_pd(a1, even, a3); // l = 1
            let b2 = _mm512_permutex2var_pd(a0, odd, a2); // l = 2
            let b3 = _mm512_permutex2var_pd(a1, odd, a3); // l = 3
            let c0 = _mm512_permutex2var_pd(a4, even, a6);
            let c1 = _mm512_permutex2var_pd(a5, even, a7);
            let c2 = _mm512_permutex2var_pd(a4, odd, a6);
            let c3 = _mm512_permutex2var_pd(a5, odd, a7);
            // lower halves of b and c give site l, upper halves site l + 4
            [
                _mm512_shuffle_f64x2::<0x44>(b0, c0),
                _mm512_shuffle_f64x2::<0x44>(b1, c1),
                _mm512_shuffle_f64x2::<0x44>(b2, c2),
                _mm512_shuffle_f64x2::<0x44>(b3, c3),
                _mm512_shuffle_f64x2::<0xee>(b0, c0),
                _mm512_shuffle_f64x2::<0xee>(b1, c1),
                _mm512_shuffle_f64x2::<0xee>(b2, c2),
                _mm512_shuffle_f64x2::<0xee>(b3, c3),
            ]
        }
    }

    /// Three vectors of 8 lanes → four vectors `t[l]` holding (r0, r1, r2) of site `l` in
    /// lanes 0–2 and of site `l + 4` in lanes 4–6.
    #[inline(always)]
    unsafe fn transpose3(r0: __m512d, r1: __m512d, r2: __m512d) -> [__m512d; 4] {
        // SAFETY: called from `row_avx512` (AVX-512F).
        unsafe {
            let a0 = _mm512_unpacklo_pd(r0, r1);
            let a1 = _mm512_unpackhi_pd(r0, r1);
            let a2 = _mm512_unpacklo_pd(r2, r2);
            let a3 = _mm512_unpackhi_pd(r2, r2);
            let even = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
            let odd = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
            [
                _mm512_permutex2var_pd(a0, even, a2),
                _mm512_permutex2var_pd(a1, even, a3),
                _mm512_permutex2var_pd(a0, odd, a2),
                _mm512_permutex2var_pd(a1, odd, a3),
            ]
        }
    }

    /// `n` consecutive sites of a z-row starting at value index `base`, four at a time (the
    /// last chunk masked): gather, collide, transpose, store.
    ///
    /// # Safety
    /// The processor has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn row_avx2(
        src: &[f64],
        dst: &mut [f64],
        line: Line,
        shift: &[isize; Q],
        omega: f64,
    ) {
        check_row(src, dst, line, shift);
        let Line { base, n, step } = line;
        let stride = step as i64;
        let index = _mm256_setr_epi64x(0, stride, 2 * stride, 3 * stride);
        let fill = _mm256_set1_pd(1.0);
        let omega = _mm256_set1_pd(omega);
        // lanes 0–2 of a site's last vector (q 16–18)
        let three = _mm256_setr_epi64x(-1, -1, -1, 0);
        let mut s = 0;
        while s < n {
            let m = (n - s).min(4);
            // lane l is gathered when its sign bit is set: l < m
            let lane = _mm256_setr_epi64x(0, 1, 2, 3);
            let mask = _mm256_castsi256_pd(_mm256_cmpgt_epi64(_mm256_set1_epi64x(m as i64), lane));
            let b = base + s * step;
            let mut f = [fill; Q];
            macro_rules! gather {
                ($($q:literal)*) => {$(
                    // SAFETY: check_row: the lanes l < m read index
                    // b + l·step + q − shift[q] = base + (s + l)·step + q − shift[q], inside
                    // src; masked-off lanes read nothing.
                    f[$q] = unsafe {
                        let p = src.as_ptr().add(b + $q).offset(-shift[$q]);
                        _mm256_mask_i64gather_pd::<8>(fill, p, index, mask)
                    };
                )*};
            }
            gather!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18);
            // SAFETY: this function has AVX2 (and so AVX).
            let out = unsafe { collide_v(&f, omega) };
            let t = [
                transpose4([out[0], out[1], out[2], out[3]]),
                transpose4([out[4], out[5], out[6], out[7]]),
                transpose4([out[8], out[9], out[10], out[11]]),
                transpose4([out[12], out[13], out[14], out[15]]),
                transpose4([out[16], out[17], out[18], out[18]]),
            ];
            let d = dst.as_mut_ptr();
            macro_rules! store_site {
                ($l:expr) => {{
                    let l: usize = $l;
                    // SAFETY: check_row: site l < m of the chunk owns values
                    // [b + l·step, b + l·step + Q) of dst; the last store writes lanes 0–2 only.
                    unsafe {
                        let p = d.add(b + l * step);
                        _mm256_storeu_pd(p, t[0][l]);
                        _mm256_storeu_pd(p.add(4), t[1][l]);
                        _mm256_storeu_pd(p.add(8), t[2][l]);
                        _mm256_storeu_pd(p.add(12), t[3][l]);
                        _mm256_maskstore_pd(p.add(16), three, t[4][l]);
                    }
                }};
            }
            if m == 4 {
                store_site!(0);
                store_site!(1);
                store_site!(2);
                store_site!(3);
            } else {
                for l in 0..m {
                    store_site!(l);
                }
            }
            s += m;
        }
    }

    /// Panics unless every value a structure-of-arrays line pulls from `src` and writes to
    /// `dst` lies in the slices: the bounds argument of the SoA rows' unchecked accesses.
    ///
    /// Site `l < n` of the line is at `base + l·step`; it reads `base + l·step + pull[q]` and
    /// writes `base + l·step + q·sq`. With `last = base + (n − 1)·step`, every read lies in
    /// `[base + min pull, last + max pull]` and every write in `[base, last + (Q − 1)·sq]`.
    #[inline(always)]
    fn check_soa(src: &[f64], dst: &[f64], line: Line, pull: &[isize; Q], sq: usize) {
        let Line { base, n, step } = line;
        let lo = pull.iter().copied().min().unwrap_or(0);
        let hi = pull.iter().copied().max().unwrap_or(0);
        let last = base + n.saturating_sub(1) * step;
        assert!(
            n > 0
                && step > 0
                && base as isize + lo >= 0
                && ((last as isize + hi) as usize) < src.len()
                && last + (Q - 1) * sq < dst.len(),
            "line of {n} sites at {base}, {step} apart, outside the arrays"
        );
    }

    /// Asks the cache for the source value `ahead` values past each of the 19 values the site
    /// at `b` pulls, and (for writing) for the destination values `ahead` past the 19 it
    /// writes: one line of each of the 38 streams of a z-row, `ahead` values early.
    ///
    /// # Safety
    /// None beyond SSE (part of x86_64): the addresses are computed with wrapping arithmetic
    /// and never dereferenced; a prefetch cannot fault.
    #[inline(always)]
    unsafe fn hint_streams(
        sp: *const f64,
        dp: *mut f64,
        b: usize,
        pull: &[isize; Q],
        sq: usize,
        ahead: usize,
    ) {
        for &p in pull {
            let from = sp.wrapping_add(b).wrapping_offset(p).wrapping_add(ahead);
            // SAFETY: see the function's contract.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(from.cast()) };
        }
        for q in 0..Q {
            let to = dp.wrapping_add(b + q * sq + ahead);
            // SAFETY: see the function's contract.
            unsafe { _mm_prefetch::<_MM_HINT_ET0>(to.cast()) };
        }
    }

    /// `n` sites of a line on the structure-of-arrays layout (a z-row, `step` 1, or a line
    /// along y), eight at a time: per velocity one plain vector load of the 8 pulled values
    /// (masked for the last chunk of a row; a gather along y), the collision in registers, one
    /// plain vector store per velocity (masked; a scatter along y).
    ///
    /// # Safety
    /// The processor has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn row_soa_avx512(
        src: &[f64],
        dst: &mut [f64],
        line: Line,
        pull: &[isize; Q],
        sq: usize,
        ahead: usize,
        omega: f64,
    ) {
        check_soa(src, dst, line, pull, sq);
        let Line { base, n, step } = line;
        let fill = _mm512_set1_pd(1.0);
        let omega = _mm512_set1_pd(omega);
        let sp = src.as_ptr();
        let dp = dst.as_mut_ptr();
        macro_rules! each_q {
            ($m:ident) => {
                $m!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18)
            };
        }
        let mut s = 0;
        if step == 1 && n >= 8 {
            // chunks of 8 sites of a z-row: plain loads and stores; the last chunk ends at the
            // row's end, overlapping the one before (its overlapped sites are computed again
            // by the same operations and stored again with the same bits), so that no chunk is
            // masked: masked stores cost more than the overlap (a 64³ interior, rows of 62
            // sites, ran slower than the whole step with them)
            while s < n {
                let at = s.min(n - 8);
                let b = base + at;
                if ahead > 0 {
                    // SAFETY: a prefetch reads nothing and cannot fault, whatever the address
                    // (computed with wrapping arithmetic: no pointer is dereferenced).
                    unsafe { hint_streams(sp, dp, b, pull, sq, ahead) };
                }
                let mut f = [fill; Q];
                macro_rules! load {
                    ($($q:literal)*) => {$(
                        // SAFETY: check_soa: sites at..at + 8 ≤ n read b + l + pull[q],
                        // l < 8, inside src.
                        f[$q] = unsafe { _mm512_loadu_pd(sp.add(b).offset(pull[$q])) };
                    )*};
                }
                each_q!(load);
                // SAFETY: this function has AVX-512F.
                let out = unsafe { collide_v(&f, omega) };
                macro_rules! store {
                    ($($q:literal)*) => {$(
                        // SAFETY: check_soa: sites at..at + 8 ≤ n write b + l + q·sq,
                        // l < 8, inside dst.
                        unsafe { _mm512_storeu_pd(dp.add(b + $q * sq), out[$q]) };
                    )*};
                }
                each_q!(store);
                s = at + 8;
            }
        }
        let stride = step as i64;
        let index = _mm512_setr_epi64(
            0,
            stride,
            2 * stride,
            3 * stride,
            4 * stride,
            5 * stride,
            6 * stride,
            7 * stride,
        );
        while s < n {
            // the end of a z-row (masked loads and stores) or a line along y (masked gathers
            // and scatters); lanes past the end collide the placeholder 1.0 and are not stored
            let m = (n - s).min(8);
            let mask: __mmask8 = (0xffu16 >> (8 - m)) as u8;
            let b = base + s * step;
            let mut f = [fill; Q];
            macro_rules! load {
                ($($q:literal)*) => {$(
                    // SAFETY: check_soa: the lanes l < m read b + l·step + pull[q] (sites
                    // s + l < n), inside src; masked-off lanes read nothing.
                    f[$q] = unsafe {
                        let p = sp.add(b).offset(pull[$q]);
                        if step == 1 {
                            _mm512_mask_loadu_pd(fill, mask, p)
                        } else {
                            _mm512_mask_i64gather_pd::<8>(fill, mask, index, p)
                        }
                    };
                )*};
            }
            each_q!(load);
            // SAFETY: this function has AVX-512F.
            let out = unsafe { collide_v(&f, omega) };
            macro_rules! store {
                ($($q:literal)*) => {$(
                    // SAFETY: check_soa: the lanes l < m write b + l·step + q·sq, inside dst;
                    // masked-off lanes write nothing.
                    unsafe {
                        let p = dp.add(b + $q * sq);
                        if step == 1 {
                            _mm512_mask_storeu_pd(p, mask, out[$q]);
                        } else {
                            _mm512_mask_i64scatter_pd::<8>(p, mask, index, out[$q]);
                        }
                    }
                )*};
            }
            each_q!(store);
            s += m;
        }
    }

    /// [`row_soa_avx512`] with four sites per vector (AVX2: masked loads and stores at the end
    /// of a z-row; along y, gathers and per-lane stores, AVX2 having no scatter).
    ///
    /// # Safety
    /// The processor has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn row_soa_avx2(
        src: &[f64],
        dst: &mut [f64],
        line: Line,
        pull: &[isize; Q],
        sq: usize,
        ahead: usize,
        omega: f64,
    ) {
        check_soa(src, dst, line, pull, sq);
        let Line { base, n, step } = line;
        let fill = _mm256_set1_pd(1.0);
        let omega = _mm256_set1_pd(omega);
        let sp = src.as_ptr();
        let dp = dst.as_mut_ptr();
        macro_rules! each_q {
            ($m:ident) => {
                $m!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18)
            };
        }
        let mut s = 0;
        if step == 1 && n >= 4 {
            // as in row_soa_avx512: the last chunk overlaps the one before instead of masking
            while s < n {
                let at = s.min(n - 4);
                let b = base + at;
                if ahead > 0 && at % 8 == 0 {
                    // SAFETY: as in row_soa_avx512 (one hint per 8 sites: a cache line).
                    unsafe { hint_streams(sp, dp, b, pull, sq, ahead) };
                }
                let mut f = [fill; Q];
                macro_rules! load {
                    ($($q:literal)*) => {$(
                        // SAFETY: check_soa: sites at..at + 4 ≤ n read b + l + pull[q],
                        // l < 4, inside src.
                        f[$q] = unsafe { _mm256_loadu_pd(sp.add(b).offset(pull[$q])) };
                    )*};
                }
                each_q!(load);
                // SAFETY: this function has AVX2 (and so AVX).
                let out = unsafe { collide_v(&f, omega) };
                macro_rules! store {
                    ($($q:literal)*) => {$(
                        // SAFETY: check_soa: sites at..at + 4 ≤ n write b + l + q·sq,
                        // l < 4, inside dst.
                        unsafe { _mm256_storeu_pd(dp.add(b + $q * sq), out[$q]) };
                    )*};
                }
                each_q!(store);
                s = at + 4;
            }
        }
        let stride = step as i64;
        let index = _mm256_setr_epi64x(0, stride, 2 * stride, 3 * stride);
        while s < n {
            let m = (n - s).min(4);
            // lane l is live when its sign bit is set: l < m
            let lane = _mm256_setr_epi64x(0, 1, 2, 3);
            let live = _mm256_cmpgt_epi64(_mm256_set1_epi64x(m as i64), lane);
            let b = base + s * step;
            let mut f = [fill; Q];
            macro_rules! load {
                ($($q:literal)*) => {$(
                    // SAFETY: check_soa: the lanes l < m read b + l·step + pull[q] (sites
                    // s + l < n), inside src; masked-off lanes read nothing.
                    f[$q] = unsafe {
                        let p = sp.add(b).offset(pull[$q]);
                        if step == 1 {
                            let v = _mm256_maskload_pd(p, live);
                            // masked-off lanes load 0: give them the placeholder
                            _mm256_blendv_pd(fill, v, _mm256_castsi256_pd(live))
                        } else {
                            let mask = _mm256_castsi256_pd(live);
                            _mm256_mask_i64gather_pd::<8>(fill, p, index, mask)
                        }
                    };
                )*};
            }
            each_q!(load);
            // SAFETY: this function has AVX2 (and so AVX).
            let out = unsafe { collide_v(&f, omega) };
            macro_rules! store {
                ($($q:literal)*) => {$(
                    // SAFETY: check_soa: the lanes l < m write b + l·step + q·sq, inside dst;
                    // masked-off lanes write nothing.
                    unsafe {
                        let p = dp.add(b + $q * sq);
                        if step == 1 {
                            _mm256_maskstore_pd(p, live, out[$q]);
                        } else {
                            let mut lanes = [0.0f64; 4];
                            _mm256_storeu_pd(lanes.as_mut_ptr(), out[$q]);
                            for (l, v) in lanes.iter().enumerate().take(m) {
                                *p.add(l * step) = *v;
                            }
                        }
                    }
                )*};
            }
            each_q!(store);
            s += m;
        }
    }

    /// `r[q][l]` → `t[l][q]` for a 4 × 4 block of doubles.
    #[inline(always)]
    unsafe fn transpose4(r: [__m256d; 4]) -> [__m256d; 4] {
        // SAFETY: called from `row_avx2` (AVX).
        unsafe {
            let a0 = _mm256_unpacklo_pd(r[0], r[1]); // r0_0 r1_0 r0_2 r1_2
            let a1 = _mm256_unpackhi_pd(r[0], r[1]); // r0_1 r1_1 r0_3 r1_3
            let a2 = _mm256_unpacklo_pd(r[2], r[3]);
            let a3 = _mm256_unpackhi_pd(r[2], r[3]);
            [
                _mm256_permute2f128_pd::<0x20>(a0, a2),
                _mm256_permute2f128_pd::<0x20>(a1, a3),
                _mm256_permute2f128_pd::<0x31>(a0, a2),
                _mm256_permute2f128_pd::<0x31>(a1, a3),
            ]
        }
    }
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
        let f: [f64; Q] =
            std::array::from_fn(|q| 0.04 + 0.0031 * (q as f64) * ((q * 7) % 5) as f64);
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
}
