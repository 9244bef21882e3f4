//! The BGK collision of one site: moments, equilibrium and the relaxation, in scalar form
//! ([`collide`], the reference every path matches bit for bit) and generic over the vector
//! type of the SIMD paths ([`Real`], `collide_v`), so that one body serves f64, AVX2 and
//! AVX-512 registers.

use super::super::d3q19::{Q, VELOCITIES, WEIGHTS};

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
pub(super) fn dot(c: [i8; 3], u: [f64; 3]) -> f64 {
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
pub(super) unsafe trait Real: Copy {
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
pub(super) unsafe fn collide_v<V: Real>(f: &[V; Q], omega: V) -> [V; Q] {
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
