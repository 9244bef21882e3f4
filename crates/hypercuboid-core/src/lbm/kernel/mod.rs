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
//!
//! **Files.** This module holds the regions, the path choice and the portable path; the
//! collision of one site, scalar and generic over the vector type, is `collision.rs` (one body
//! for every path); the AVX2 and AVX-512 rows are `x86.rs`. Those two ISAs' row functions stay
//! together rather than behind one generic body because their vector width, gather and mask
//! intrinsics and in-register transposes differ, and each needs its own `#[target_feature]`
//! (see that file's documentation).

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
            let mut lanes = Lanes::new();
            rows.each(src, dst, |src, dst, line| {
                for part in line.parts() {
                    row_lanes_soa(src, dst, part, &pull, sq, bgk.omega, &mut lanes);
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
            let mut lanes = Lanes::new();
            rows.each(src, dst, |src, dst, line| {
                for part in line.parts() {
                    row_lanes(src, dst, part, &shift, bgk.omega, &mut lanes);
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

impl Line {
    /// The line in parts of at most [`LANES`] sites, in order (the portable path's chunks).
    fn parts(self) -> impl Iterator<Item = Line> {
        (0..self.n).step_by(LANES).map(move |k| Line {
            base: self.base + k * self.step,
            n: LANES.min(self.n - k),
            ..self
        })
    }
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

impl Lanes {
    /// Zeroed lanes, set up once per call and reused by every chunk.
    fn new() -> Lanes {
        Lanes {
            fin: [[0.0; LANES]; Q],
            fout: [[0.0; LANES]; Q],
        }
    }
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

mod collision;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use collision::{collide, equilibrium, moments};
use collision::{collide_v, dot, Real};
