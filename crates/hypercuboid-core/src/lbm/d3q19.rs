//! The D3Q19 velocity set: 19 discrete velocities (the rest velocity, 6 to the faces and 12 to
//! the edges of the unit cube) and their lattice weights 1/3, 1/18 and 1/36.
//!
//! The order is Ludwig's (`model.c`, D3Q19): velocities sorted by decreasing `cx`, then `cy`,
//! then `cz`, with the rest velocity first. This table is the one source of the ordering: the
//! kernel, the initial conditions and the file format of [`crate::lbm::read_npy`] read it.

/// Number of discrete velocities.
pub const Q: usize = 19;

/// The velocities `c_q = (cx, cy, cz)`.
pub const VELOCITIES: [[i8; 3]; Q] = [
    [0, 0, 0],
    [1, 1, 0],
    [1, 0, 1],
    [1, 0, 0],
    [1, 0, -1],
    [1, -1, 0],
    [0, 1, 1],
    [0, 1, 0],
    [0, 1, -1],
    [0, 0, 1],
    [0, 0, -1],
    [0, -1, 1],
    [0, -1, 0],
    [0, -1, -1],
    [-1, 1, 0],
    [-1, 0, 1],
    [-1, 0, 0],
    [-1, 0, -1],
    [-1, -1, 0],
];

/// The weight of a velocity: 1/3 at rest, 1/18 along an axis, 1/36 along a face diagonal.
pub const fn weight(c: [i8; 3]) -> f64 {
    let n = c[0].unsigned_abs() + c[1].unsigned_abs() + c[2].unsigned_abs();
    match n {
        0 => 1.0 / 3.0,
        1 => 1.0 / 18.0,
        _ => 1.0 / 36.0,
    }
}

/// The weights `w_q`, in the order of [`VELOCITIES`].
pub const WEIGHTS: [f64; Q] = {
    let mut w = [0.0; Q];
    let mut q = 0;
    while q < Q {
        w[q] = weight(VELOCITIES[q]);
        q += 1;
    }
    w
};

/// The index of the velocity opposite to each (`c_opposite(q) = -c_q`).
pub const OPPOSITE: [usize; Q] = {
    let mut o = [0; Q];
    let mut q = 0;
    while q < Q {
        let c = VELOCITIES[q];
        let mut p = 0;
        while p < Q {
            let d = VELOCITIES[p];
            if d[0] == -c[0] && d[1] == -c[1] && d[2] == -c[2] {
                o[q] = p;
            }
            p += 1;
        }
        q += 1;
    }
    o
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_velocity_set_is_d3q19() {
        let mut seen = std::collections::BTreeSet::new();
        for c in VELOCITIES {
            let n: i32 = c.iter().map(|&x| i32::from(x).abs()).sum();
            assert!(n <= 2 && c.iter().all(|&x| (-1..=1).contains(&x)));
            assert!(seen.insert(c), "{c:?} twice");
        }
        assert_eq!(seen.len(), 19);
        assert_eq!(VELOCITIES[0], [0, 0, 0]);
    }

    #[test]
    fn weights_give_the_lattice_isotropy() {
        // sum w = 1, sum w c_a c_b = delta_ab / 3, sum w c_a = 0
        let s: f64 = WEIGHTS.iter().sum();
        assert!((s - 1.0).abs() < 1e-15);
        for a in 0..3 {
            let first: f64 = (0..Q)
                .map(|q| WEIGHTS[q] * f64::from(VELOCITIES[q][a]))
                .sum();
            assert!(first.abs() < 1e-16, "{a}: {first}");
            for b in 0..3 {
                let second: f64 = (0..Q)
                    .map(|q| WEIGHTS[q] * f64::from(VELOCITIES[q][a]) * f64::from(VELOCITIES[q][b]))
                    .sum();
                let want = if a == b { 1.0 / 3.0 } else { 0.0 };
                assert!((second - want).abs() < 1e-15, "{a} {b}: {second}");
            }
        }
    }

    #[test]
    fn opposites_pair_up() {
        for q in 0..Q {
            assert_eq!(OPPOSITE[OPPOSITE[q]], q);
            let (c, d) = (VELOCITIES[q], VELOCITIES[OPPOSITE[q]]);
            assert_eq!([c[0] + d[0], c[1] + d[1], c[2] + d[2]], [0, 0, 0]);
        }
        assert_eq!(OPPOSITE[0], 0);
        assert_eq!(OPPOSITE[3], 16);
    }
}
