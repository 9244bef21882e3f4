//! Lattice velocity sets of lattice-Boltzmann models, defined once for the whole crate: the
//! reduced halo exchange (`halo_reduced` sends only the distributions that cross each face and
//! edge), the verifier's halo check and the D3Q19 kernel all read this table.

/// D3Q19: the rest velocity, 6 velocities to the faces and 12 to the edges of the unit cube,
/// with lattice weights 1/3, 1/18 and 1/36.
///
/// The order is Ludwig's (`model.c`, D3Q19): velocities sorted by decreasing `cx`, then `cy`,
/// then `cz`, with the rest velocity first. Distribution `q` of a site is value `q` of that
/// site in a rank's local array (shape `(nx+2, ny+2, nz+2, 19)`).
pub mod d3q19 {
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

    /// The distributions a rank's halo site at direction `d` (each component −1, 0 or 1: the
    /// side of the subdomain the halo site lies on) must hold for one pull-streaming step: those
    /// whose velocity points from the halo into the subdomain, `c_q[a] = −d[a]` on every axis
    /// `a` where `d[a] ≠ 0`. As a bit mask (bit `q`): 5 distributions for a face, 1 for an edge,
    /// none for a corner.
    pub const fn crossing(d: [i8; 3]) -> u64 {
        let mut mask = 0u64;
        let mut q = 0;
        while q < Q {
            let c = VELOCITIES[q];
            let mut ok = true;
            let mut a = 0;
            while a < 3 {
                if d[a] != 0 && c[a] != -d[a] {
                    ok = false;
                }
                a += 1;
            }
            if ok && !(d[0] == 0 && d[1] == 0 && d[2] == 0) {
                mask |= 1 << q;
            }
            q += 1;
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::d3q19::*;

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
        // Ludwig's order: decreasing cx, then cy, then cz.
        let mut sorted = VELOCITIES[1..].to_vec();
        sorted.sort_by(|a, b| b.cmp(a));
        assert_eq!(sorted, VELOCITIES[1..].to_vec());
    }

    #[test]
    #[allow(clippy::needless_range_loop)] // a and b are the tensor's indices
    fn weights_give_the_lattice_isotropy() {
        let s: f64 = WEIGHTS.iter().sum();
        assert!((s - 1.0).abs() < 1e-15);
        for a in 0..3 {
            let first: f64 = (0..Q)
                .map(|q| WEIGHTS[q] * f64::from(VELOCITIES[q][a]))
                .sum();
            assert!(first.abs() < 1e-15, "{a}: {first}");
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
        }
        assert_eq!(OPPOSITE[0], 0);
        assert_eq!(OPPOSITE[3], 16);
    }

    #[test]
    fn crossing_distributions_of_faces_edges_and_corners() {
        // +x face halo: the 5 velocities with cx = -1 (indices 14..=18).
        assert_eq!(crossing([1, 0, 0]), 0b11111 << 14);
        // -z face halo: cz = +1: (1,0,1), (0,1,1), (0,0,1), (0,-1,1), (-1,0,1).
        assert_eq!(
            crossing([0, 0, -1]),
            (1 << 2) | (1 << 6) | (1 << 9) | (1 << 11) | (1 << 15)
        );
        // the (+x, -y) edge halo: c = (-1, 1, 0) only (index 14).
        assert_eq!(crossing([1, -1, 0]), 1 << 14);
        assert_eq!(crossing([1, 1, 1]), 0);
        assert_eq!(crossing([0, 0, 0]), 0);
        let mut faces = 0;
        let mut edges = 0;
        for dx in -1i8..=1 {
            for dy in -1i8..=1 {
                for dz in -1i8..=1 {
                    let n = crossing([dx, dy, dz]).count_ones();
                    match dx.abs() + dy.abs() + dz.abs() {
                        1 => {
                            assert_eq!(n, 5);
                            faces += 1
                        }
                        2 => {
                            assert_eq!(n, 1);
                            edges += 1
                        }
                        _ => assert_eq!(n, 0),
                    }
                }
            }
        }
        assert_eq!((faces, edges), (6, 12));
    }
}
