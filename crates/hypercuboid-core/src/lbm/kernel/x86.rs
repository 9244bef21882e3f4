//! The AVX2 and AVX-512 rows: hardware gathers of the pulled values straight into one vector
//! per velocity (a vector holds consecutive sites of the row), the collision on those vectors,
//! and the results transposed in registers back to the sites' contiguous 19 values.
//!
//! Both instruction sets share one generic body per row kind: the collision (`collide_v` over
//! [`Real`](super::Real)), the array-of-structures row ([`row_aos`]) and the
//! structure-of-arrays row ([`row_soa`]), over [`Lanes`], the operations that differ per
//! instruction set: the vector width (8 or 4 sites), the plain, masked, gathered and
//! scattered loads and stores and their masks (`__mmask8` against a vector of sign bits), and
//! the in-register transposes of the array-of-structures stores (8 × 8 and 3 × 8 against
//! 4 × 4, with their own masked stores). The bodies are inlined into one `#[target_feature]`
//! function per instruction set, as `collide_v` is, so that each is compiled for its own.
// The AVX-512 intrinsics and the `avx512f` target feature are stable since Rust 1.89, the
// workspace's declared rust-version.

use super::{collide_v, Line, Real, Q};
use std::arch::x86_64::*;

/// [`Real`] for a vector type: `splat` and the four binary operations are one intrinsic each,
/// `neg` an expression of `$v`.
macro_rules! real {
    ($t:ty, $set1:ident, [$($op:ident = $intrinsic:ident),*], |$v:ident| $neg:expr) => {
        // SAFETY: the methods are only called from the rows of the vector's instruction set,
        // whose callers checked it.
        unsafe impl Real for $t {
            #[inline(always)]
            unsafe fn splat(x: f64) -> Self {
                unsafe { $set1(x) }
            }
            $(
                #[inline(always)]
                unsafe fn $op(self, o: Self) -> Self {
                    unsafe { $intrinsic(self, o) }
                }
            )*
            #[inline(always)]
            unsafe fn neg(self) -> Self {
                let $v = self;
                unsafe { $neg }
            }
        }
    };
}

real!(
    __m512d,
    _mm512_set1_pd,
    [
        add = _mm512_add_pd,
        sub = _mm512_sub_pd,
        mul = _mm512_mul_pd,
        div = _mm512_div_pd
    ],
    // the sign bit flipped (AVX-512F has the integer xor; the double one is DQ)
    |v| _mm512_castsi512_pd(_mm512_xor_si512(
        _mm512_castpd_si512(v),
        _mm512_set1_epi64(i64::MIN)
    ))
);
real!(
    __m256d,
    _mm256_set1_pd,
    [
        add = _mm256_add_pd,
        sub = _mm256_sub_pd,
        mul = _mm256_mul_pd,
        div = _mm256_div_pd
    ],
    |v| _mm256_xor_pd(v, _mm256_set1_pd(-0.0))
);

/// Invokes the macro `$m` on the 19 velocity indices (`$m!(0 1 … 18)`): the unrolled
/// per-velocity loads, gathers and stores of the rows.
macro_rules! each_q {
    ($m:ident) => {
        $m!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18)
    };
}

/// What the rows do differently per instruction set, on a vector of [`Lanes::W`] consecutive
/// sites.
///
/// # Safety
/// As [`Real`]: the methods are only called from functions whose callers checked the
/// instruction set of the type.
unsafe trait Lanes: Real {
    /// Sites per vector.
    const W: usize;
    /// Which lanes of a chunk are live (its first `m`).
    type Mask: Copy;
    /// The value offsets of the lanes of a gather or scatter.
    type Index: Copy;
    /// The offsets `l·step` of the lanes `l`.
    unsafe fn index(step: usize) -> Self::Index;
    /// The mask of the first `m` lanes.
    unsafe fn live(m: usize) -> Self::Mask;
    /// `p[0..W]`.
    unsafe fn load(p: *const f64) -> Self;
    /// Writes `p[0..W]`.
    unsafe fn store(p: *mut f64, v: Self);
    /// The live lanes `l` of `p[l]`, `fill` in the others (which read nothing).
    unsafe fn load_masked(fill: Self, mask: Self::Mask, p: *const f64) -> Self;
    /// Writes the live lanes `l` to `p[l]`.
    unsafe fn store_masked(p: *mut f64, mask: Self::Mask, v: Self);
    /// The live lanes `l` of `p[index[l]]`, `fill` in the others (which read nothing).
    unsafe fn gather(fill: Self, mask: Self::Mask, index: Self::Index, p: *const f64) -> Self;
    /// Writes the live lanes `l < m` to `p[index[l]] = p[l·step]`.
    unsafe fn scatter(
        p: *mut f64,
        mask: Self::Mask,
        index: Self::Index,
        v: Self,
        step: usize,
        m: usize,
    );
    /// Whether the chunk that starts at site `at` of a z-row asks the cache for the values
    /// ahead ([`hint_streams`]): once per cache line of 8 values.
    fn hints_at(at: usize) -> bool;
    /// Writes the 19 values of each live site `l < m` of a chunk of an array-of-structures
    /// row, `out[q]` holding value `q` of the chunk's sites, to `[d + b + l·step, … + Q)`.
    unsafe fn store_sites(out: &[Self; Q], d: *mut f64, b: usize, step: usize, m: usize);
}

// SAFETY: the methods are only called from `row_avx512` and `row_soa_avx512`, whose callers
// checked AVX-512F.
unsafe impl Lanes for __m512d {
    const W: usize = 8;
    type Mask = __mmask8;
    type Index = __m512i;

    #[inline(always)]
    unsafe fn index(step: usize) -> __m512i {
        let stride = step as i64;
        // SAFETY: the trait's contract.
        unsafe {
            _mm512_setr_epi64(
                0,
                stride,
                2 * stride,
                3 * stride,
                4 * stride,
                5 * stride,
                6 * stride,
                7 * stride,
            )
        }
    }
    #[inline(always)]
    unsafe fn live(m: usize) -> __mmask8 {
        (0xffu16 >> (8 - m)) as u8
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe { _mm512_loadu_pd(p) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, v: Self) {
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe { _mm512_storeu_pd(p, v) }
    }
    #[inline(always)]
    unsafe fn load_masked(fill: Self, mask: __mmask8, p: *const f64) -> Self {
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe { _mm512_mask_loadu_pd(fill, mask, p) }
    }
    #[inline(always)]
    unsafe fn store_masked(p: *mut f64, mask: __mmask8, v: Self) {
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe { _mm512_mask_storeu_pd(p, mask, v) }
    }
    #[inline(always)]
    unsafe fn gather(fill: Self, mask: __mmask8, index: __m512i, p: *const f64) -> Self {
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe { _mm512_mask_i64gather_pd::<8>(fill, mask, index, p) }
    }
    #[inline(always)]
    unsafe fn scatter(p: *mut f64, mask: __mmask8, index: __m512i, v: Self, _: usize, _: usize) {
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe { _mm512_mask_i64scatter_pd::<8>(p, mask, index, v) }
    }
    #[inline(always)]
    fn hints_at(_at: usize) -> bool {
        // a chunk is a cache line
        true
    }
    #[inline(always)]
    unsafe fn store_sites(out: &[Self; Q], d: *mut f64, b: usize, step: usize, m: usize) {
        // SAFETY: the trait's contract.
        let (lo, hi, last) = unsafe {
            (
                transpose8([
                    out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7],
                ]),
                transpose8([
                    out[8], out[9], out[10], out[11], out[12], out[13], out[14], out[15],
                ]),
                transpose3(out[16], out[17], out[18]),
            )
        };
        macro_rules! store_site {
            ($l:expr) => {{
                let l: usize = $l;
                // SAFETY: the caller's bounds: site l < m of the chunk owns values
                // [b + l·step, b + l·step + Q) of d; the masked store of q 16–18 writes
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
    }
}

// SAFETY: the methods are only called from `row_avx2` and `row_soa_avx2`, whose callers
// checked AVX2.
unsafe impl Lanes for __m256d {
    const W: usize = 4;
    /// Lane `l` is live when its sign bit is set.
    type Mask = __m256i;
    type Index = __m256i;

    #[inline(always)]
    unsafe fn index(step: usize) -> __m256i {
        let stride = step as i64;
        // SAFETY: the trait's contract.
        unsafe { _mm256_setr_epi64x(0, stride, 2 * stride, 3 * stride) }
    }
    #[inline(always)]
    unsafe fn live(m: usize) -> __m256i {
        // SAFETY: the trait's contract.
        unsafe {
            let lane = _mm256_setr_epi64x(0, 1, 2, 3);
            _mm256_cmpgt_epi64(_mm256_set1_epi64x(m as i64), lane)
        }
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe { _mm256_loadu_pd(p) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, v: Self) {
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe { _mm256_storeu_pd(p, v) }
    }
    #[inline(always)]
    unsafe fn load_masked(fill: Self, live: __m256i, p: *const f64) -> Self {
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe {
            let v = _mm256_maskload_pd(p, live);
            // masked-off lanes load 0: give them the placeholder
            _mm256_blendv_pd(fill, v, _mm256_castsi256_pd(live))
        }
    }
    #[inline(always)]
    unsafe fn store_masked(p: *mut f64, live: __m256i, v: Self) {
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe { _mm256_maskstore_pd(p, live, v) }
    }
    #[inline(always)]
    unsafe fn gather(fill: Self, live: __m256i, index: __m256i, p: *const f64) -> Self {
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe { _mm256_mask_i64gather_pd::<8>(fill, p, index, _mm256_castsi256_pd(live)) }
    }
    #[inline(always)]
    unsafe fn scatter(p: *mut f64, _: __m256i, _: __m256i, v: Self, step: usize, m: usize) {
        // AVX2 has no scatter: one store per live lane.
        // SAFETY: the trait's contract; the caller's bounds.
        unsafe {
            let mut lanes = [0.0f64; 4];
            _mm256_storeu_pd(lanes.as_mut_ptr(), v);
            for (l, v) in lanes.iter().enumerate().take(m) {
                *p.add(l * step) = *v;
            }
        }
    }
    #[inline(always)]
    fn hints_at(at: usize) -> bool {
        // one hint per 8 sites: a cache line
        at.is_multiple_of(8)
    }
    #[inline(always)]
    unsafe fn store_sites(out: &[Self; Q], d: *mut f64, b: usize, step: usize, m: usize) {
        // SAFETY: the trait's contract.
        let (t, three) = unsafe {
            (
                [
                    transpose4([out[0], out[1], out[2], out[3]]),
                    transpose4([out[4], out[5], out[6], out[7]]),
                    transpose4([out[8], out[9], out[10], out[11]]),
                    transpose4([out[12], out[13], out[14], out[15]]),
                    transpose4([out[16], out[17], out[18], out[18]]),
                ],
                // lanes 0–2 of a site's last vector (q 16–18)
                _mm256_setr_epi64x(-1, -1, -1, 0),
            )
        };
        macro_rules! store_site {
            ($l:expr) => {{
                let l: usize = $l;
                // SAFETY: the caller's bounds: site l < m of the chunk owns values
                // [b + l·step, b + l·step + Q) of d; the last store writes lanes 0–2 only.
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

/// `n` consecutive sites of a z-row starting at value index `base`, [`Lanes::W`] at a time
/// (the last chunk masked): gather, collide, transpose, store.
///
/// # Safety
/// The processor has the instruction set of `V`.
#[inline(always)]
unsafe fn row_aos<V: Lanes>(
    src: &[f64],
    dst: &mut [f64],
    line: Line,
    shift: &[isize; Q],
    omega: f64,
) {
    check_row(src, dst, line, shift);
    let Line { base, n, step } = line;
    // lanes past the row end collide the placeholder `fill` (a density of 19: no division
    // by zero) and are not stored
    // SAFETY: the caller has V's instruction set.
    let (index, fill, omega) = unsafe { (V::index(step), V::splat(1.0), V::splat(omega)) };
    let mut s = 0;
    while s < n {
        let m = (n - s).min(V::W);
        // SAFETY: the caller has V's instruction set.
        let mask = unsafe { V::live(m) };
        let b = base + s * step;
        let mut f = [fill; Q];
        macro_rules! gather {
            ($($q:literal)*) => {$(
                // SAFETY: check_row: the lanes l < m read index
                // b + l·step + q − shift[q] = base + (s + l)·step + q − shift[q], inside
                // src; masked-off lanes read nothing.
                f[$q] = unsafe {
                    let p = src.as_ptr().add(b + $q).offset(-shift[$q]);
                    V::gather(fill, mask, index, p)
                };
            )*};
        }
        each_q!(gather);
        // SAFETY: the caller has V's instruction set.
        let out = unsafe { collide_v(&f, omega) };
        // SAFETY: check_row: site l < m of the chunk owns values [b + l·step, b + l·step + Q)
        // of dst.
        unsafe { V::store_sites(&out, dst.as_mut_ptr(), b, step, m) };
        s += m;
    }
}

/// `r[q][l]` → `t[l][q]` for an 8 × 8 block of doubles.
#[inline(always)]
unsafe fn transpose8(r: [__m512d; 8]) -> [__m512d; 8] {
    // SAFETY: called from the AVX-512F rows.
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
    // SAFETY: called from the AVX-512F rows.
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

/// `r[q][l]` → `t[l][q]` for a 4 × 4 block of doubles.
#[inline(always)]
unsafe fn transpose4(r: [__m256d; 4]) -> [__m256d; 4] {
    // SAFETY: called from the AVX2 rows (AVX).
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
/// along y), [`Lanes::W`] at a time: per velocity one plain vector load of the pulled values
/// (masked for the last chunk of a row; a gather along y), the collision in registers, one
/// plain vector store per velocity (masked; a scatter along y).
///
/// # Safety
/// The processor has the instruction set of `V`.
#[inline(always)]
unsafe fn row_soa<V: Lanes>(
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
    let w = V::W;
    // SAFETY: the caller has V's instruction set.
    let (fill, omega) = unsafe { (V::splat(1.0), V::splat(omega)) };
    let sp = src.as_ptr();
    let dp = dst.as_mut_ptr();
    let mut s = 0;
    if step == 1 && n >= w {
        // chunks of W sites of a z-row: plain loads and stores; the last chunk ends at the
        // row's end, overlapping the one before (its overlapped sites are computed again
        // by the same operations and stored again with the same bits), so that no chunk is
        // masked: masked stores cost more than the overlap (a 64³ interior, rows of 62
        // sites, ran slower than the whole step with them)
        while s < n {
            let at = s.min(n - w);
            let b = base + at;
            if ahead > 0 && V::hints_at(at) {
                // SAFETY: a prefetch reads nothing and cannot fault, whatever the address
                // (computed with wrapping arithmetic: no pointer is dereferenced).
                unsafe { hint_streams(sp, dp, b, pull, sq, ahead) };
            }
            let mut f = [fill; Q];
            macro_rules! load {
                ($($q:literal)*) => {$(
                    // SAFETY: check_soa: sites at..at + W ≤ n read b + l + pull[q],
                    // l < W, inside src.
                    f[$q] = unsafe { V::load(sp.add(b).offset(pull[$q])) };
                )*};
            }
            each_q!(load);
            // SAFETY: the caller has V's instruction set.
            let out = unsafe { collide_v(&f, omega) };
            macro_rules! store {
                ($($q:literal)*) => {$(
                    // SAFETY: check_soa: sites at..at + W ≤ n write b + l + q·sq,
                    // l < W, inside dst.
                    unsafe { V::store(dp.add(b + $q * sq), out[$q]) };
                )*};
            }
            each_q!(store);
            s = at + w;
        }
    }
    // SAFETY: the caller has V's instruction set.
    let index = unsafe { V::index(step) };
    while s < n {
        // the end of a z-row (masked loads and stores) or a line along y (masked gathers
        // and scatters); lanes past the end collide the placeholder 1.0 and are not stored
        let m = (n - s).min(w);
        // SAFETY: the caller has V's instruction set.
        let mask = unsafe { V::live(m) };
        let b = base + s * step;
        let mut f = [fill; Q];
        macro_rules! load {
            ($($q:literal)*) => {$(
                // SAFETY: check_soa: the lanes l < m read b + l·step + pull[q] (sites
                // s + l < n), inside src; masked-off lanes read nothing.
                f[$q] = unsafe {
                    let p = sp.add(b).offset(pull[$q]);
                    if step == 1 {
                        V::load_masked(fill, mask, p)
                    } else {
                        V::gather(fill, mask, index, p)
                    }
                };
            )*};
        }
        each_q!(load);
        // SAFETY: the caller has V's instruction set.
        let out = unsafe { collide_v(&f, omega) };
        macro_rules! store {
            ($($q:literal)*) => {$(
                // SAFETY: check_soa: the lanes l < m write b + l·step + q·sq, inside dst;
                // masked-off lanes write nothing.
                unsafe {
                    let p = dp.add(b + $q * sq);
                    if step == 1 {
                        V::store_masked(p, mask, out[$q]);
                    } else {
                        V::scatter(p, mask, index, out[$q], step, m);
                    }
                }
            )*};
        }
        each_q!(store);
        s += m;
    }
}

/// The rows of one instruction set, which the kernel calls after checking it: [`row_aos`] and
/// [`row_soa`] on its vector type, compiled with its `#[target_feature]`.
macro_rules! rows {
    ($aos:ident, $soa:ident, $v:ty, $feature:literal, $isa:literal) => {
        #[doc = concat!("[`row_aos`] on ", $isa, " vectors.")]
        ///
        /// # Safety
        #[doc = concat!("The processor has ", $isa, ".")]
        #[target_feature(enable = $feature)]
        pub(super) unsafe fn $aos(
            src: &[f64],
            dst: &mut [f64],
            line: Line,
            shift: &[isize; Q],
            omega: f64,
        ) {
            // SAFETY: this function has the instruction set of the vector type.
            unsafe { row_aos::<$v>(src, dst, line, shift, omega) }
        }

        #[doc = concat!("[`row_soa`] on ", $isa, " vectors.")]
        ///
        /// # Safety
        #[doc = concat!("The processor has ", $isa, ".")]
        #[target_feature(enable = $feature)]
        pub(super) unsafe fn $soa(
            src: &[f64],
            dst: &mut [f64],
            line: Line,
            pull: &[isize; Q],
            sq: usize,
            ahead: usize,
            omega: f64,
        ) {
            // SAFETY: this function has the instruction set of the vector type.
            unsafe { row_soa::<$v>(src, dst, line, pull, sq, ahead, omega) }
        }
    };
}

rows!(row_avx512, row_soa_avx512, __m512d, "avx512f", "AVX-512F");
// (AVX2 implies AVX, whose loads and stores the AVX2 rows also use.)
rows!(row_avx2, row_soa_avx2, __m256d, "avx2", "AVX2");
