//! What a halo exchange computes: a 3-D Cartesian decomposition of a lattice, each rank's local
//! array with its halo, and which element of which rank every halo element must end up holding
//! ([`Collective::Halo`](super::Collective::Halo)). The generators are in
//! `collectives::halo`; the verifier's check reads [`HaloSpec::expected`].
//!
//! # Decomposition
//! A global lattice `X × Y × Z` on `px × py × pz` ranks, periodic or not per dimension. Ranks
//! are in `MPI_Cart_create` order: rank `(cx · py + cy) · pz + cz` (z fastest). Along an axis
//! of `L` sites on `p` ranks, the first `L mod p` ranks get `⌊L/p⌋ + 1` sites and the others
//! `⌊L/p⌋`. [`dims_create`] is the `MPI_Dims_create`-style default: dimensions as close to
//! each other as possible, non-increasing.
//!
//! # The local array
//! Rank `r` with a subdomain of `nx × ny × nz` sites holds a C-order array of shape
//! `(nx + 2, ny + 2, nz + 2, values)`: halo width 1, subdomain site `(i, j, k)` at index
//! `(i + 1, j + 1, k + 1)`. It is the schedule's `output` buffer, updated in place (the
//! `input` buffer is empty); its length differs between ranks whose subdomains differ.
//!
//! # The result
//! A halo site at direction `d` (each component −1, 0 or 1: index 0, inside, or `n + 1` on that
//! axis) mirrors the subdomain site of the neighbour at `d` (wrapping round a periodic axis;
//! none across a non-periodic boundary) that is one step inside it across the shared face,
//! edge or corner. After the exchange, every halo value the stencil requires holds the value
//! the mirrored site held before the exchange; every other element (the subdomain, halo sites
//! with no neighbour, values the stencil does not require) is unchanged. [`HaloStencil::Full`]
//! requires every value of all 26 directions; [`HaloStencil::D3Q19`] only the distributions a
//! D3Q19 pull-streaming step reads ([`crate::lattice::d3q19::crossing`]: 5 per face, 1 per
//! edge, none at corners).

use super::error::ScheduleError;
use super::op::{Rank, Region, Slot};
use super::MAX_RANKS;
use crate::arith::divisors;
use crate::lattice::d3q19;
use std::fmt;

/// The 26 directions of a 3-D neighbourhood, `(dx, dy, dz)` in lexicographic order without
/// `(0, 0, 0)`. A message travelling in direction `DIRECTIONS[t]` (from its sender) has tag `t`,
/// so that the messages between two ranks that are neighbours in several directions (two ranks
/// on a periodic axis, a rank its own neighbour) are told apart.
pub const DIRECTIONS: [[i8; 3]; 26] = {
    let mut d = [[0i8; 3]; 26];
    let mut n = 0;
    let mut x = -1i8;
    while x <= 1 {
        let mut y = -1i8;
        while y <= 1 {
            let mut z = -1i8;
            while z <= 1 {
                if !(x == 0 && y == 0 && z == 0) {
                    d[n] = [x, y, z];
                    n += 1;
                }
                z += 1;
            }
            y += 1;
        }
        x += 1;
    }
    d
};

/// The index of direction `d` in [`DIRECTIONS`] (its message tag).
pub const fn direction_index(d: [i8; 3]) -> usize {
    let i = ((d[0] + 1) * 9 + (d[1] + 1) * 3 + (d[2] + 1)) as usize;
    if i > 13 {
        i - 1
    } else {
        i
    }
}

/// Number of non-zero components of a direction: 1 face, 2 edge, 3 corner.
pub const fn order(d: [i8; 3]) -> u32 {
    (d[0] != 0) as u32 + (d[1] != 0) as u32 + (d[2] != 0) as u32
}

/// `MPI_Dims_create`-style dimensions of `nranks` ranks in 3-D: the factorisation
/// `px · py · pz = nranks` with `px ≥ py ≥ pz` whose largest and smallest dimensions are
/// closest (`24 → 4 × 3 × 2`, `4096 → 16 × 16 × 16`, `7 → 7 × 1 × 1`).
pub fn dims_create(nranks: u32) -> [u32; 3] {
    let n = nranks.max(1);
    let mut best = [n, 1, 1];
    for &c in &divisors(n) {
        let rest = n / c;
        for &b in &divisors(rest) {
            let a = rest / b;
            if a >= b && b >= c && (a - c, a) < (best[0] - best[2], best[0]) {
                best = [a, b, c];
            }
        }
    }
    best
}

/// Which halo values an exchange fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HaloStencil {
    /// Every value of every halo site with a neighbour (26 directions).
    Full,
    /// The D3Q19 distributions that cross each face and edge into the subdomain (18
    /// directions; 19 values per site).
    D3Q19,
}

impl HaloStencil {
    /// `full`, `d3q19`.
    pub const fn name(self) -> &'static str {
        match self {
            HaloStencil::Full => "full",
            HaloStencil::D3Q19 => "d3q19",
        }
    }

    /// The values of a halo site at direction `d` the stencil requires, as a [`Region`] value
    /// mask ([`Region::ALL_VALUES`]: all; 0: none).
    pub const fn required(self, d: [i8; 3]) -> u64 {
        match self {
            HaloStencil::Full => Region::ALL_VALUES,
            HaloStencil::D3Q19 => d3q19::crossing(d),
        }
    }
}

/// A 3-D Cartesian decomposition of a lattice (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decomposition {
    /// Sites of the global lattice along x, y, z.
    pub lattice: [u32; 3],
    /// Ranks along x, y, z.
    pub dims: [u32; 3],
    /// Whether each axis wraps round.
    pub periodic: [bool; 3],
}

const AXES: [&str; 3] = ["x", "y", "z"];

/// `AxBxC`.
pub fn format_triple(t: [u32; 3]) -> String {
    format!("{}x{}x{}", t[0], t[1], t[2])
}

/// The error for the triple `value` of the parameter `name`.
fn bad_triple(name: &str, value: [u32; 3], reason: String) -> ScheduleError {
    ScheduleError::BadParameter {
        name: name.into(),
        value: format_triple(value),
        reason,
    }
}

/// Checks that the triple `name` has some `unit` (ranks, sites) along axis `a`.
fn nonzero_along(name: &str, value: [u32; 3], a: usize, unit: &str) -> Result<(), ScheduleError> {
    if value[a] == 0 {
        return Err(bad_triple(
            name,
            value,
            format!(
                "it has 0 {unit} along {}; every dimension is a positive integer",
                AXES[a]
            ),
        ));
    }
    Ok(())
}

impl Decomposition {
    /// A decomposition of `lattice` on `dims` ranks. Each axis needs at least one site per rank
    /// and sites that fit a local array (`n + 2` below 2^32); the ranks are at most
    /// [`MAX_RANKS`].
    pub fn new(
        lattice: [u32; 3],
        dims: [u32; 3],
        periodic: [bool; 3],
    ) -> Result<Decomposition, ScheduleError> {
        for a in 0..3 {
            nonzero_along("decomposition", dims, a, "ranks")?;
            if lattice[a] == 0 || lattice[a] > u32::MAX - 2 {
                return Err(bad_triple(
                    "lattice",
                    lattice,
                    format!(
                        "it has {} sites along {}; every dimension is 1 to {}",
                        lattice[a],
                        AXES[a],
                        u32::MAX - 2
                    ),
                ));
            }
            if lattice[a] < dims[a] {
                return Err(bad_triple(
                    "lattice",
                    lattice,
                    format!(
                        "a {} decomposition needs at least {} sites along {} (one per rank), \
                         the lattice has {}",
                        format_triple(dims),
                        dims[a],
                        AXES[a],
                        lattice[a]
                    ),
                ));
            }
        }
        let n = dims.iter().map(|&d| d as u64).product::<u64>();
        if n > MAX_RANKS {
            return Err(ScheduleError::BadRankCount {
                nranks: n,
                reason: format!(
                    "a {} decomposition has {n} ranks; a schedule has 1 to {MAX_RANKS}",
                    format_triple(dims)
                ),
            });
        }
        Ok(Decomposition {
            lattice,
            dims,
            periodic,
        })
    }

    /// A decomposition of `lattice` on `nranks` ranks: `dims` when given (its product must be
    /// `nranks`), else [`dims_create`].
    pub fn with_ranks(
        lattice: [u32; 3],
        nranks: u32,
        dims: Option<[u32; 3]>,
        periodic: [bool; 3],
    ) -> Result<Decomposition, ScheduleError> {
        if nranks == 0 {
            return Err(ScheduleError::BadRankCount {
                nranks: 0,
                reason: format!("a halo exchange has 1 to {MAX_RANKS} ranks"),
            });
        }
        let dims = match dims {
            Some(d) => {
                let p = d.iter().map(|&x| x as u64).product::<u64>();
                if p != nranks as u64 {
                    return Err(bad_triple(
                        "decomposition",
                        d,
                        format!(
                            "it has {p} ranks, not {nranks}; give px x py x pz = {nranks} \
                             (default {})",
                            format_triple(dims_create(nranks))
                        ),
                    ));
                }
                d
            }
            None => dims_create(nranks),
        };
        Decomposition::new(lattice, dims, periodic)
    }

    /// A decomposition whose every rank has a `sub` subdomain (lattice = `dims × sub`).
    pub fn with_subdomain(
        sub: [u32; 3],
        dims: [u32; 3],
        periodic: [bool; 3],
    ) -> Result<Decomposition, ScheduleError> {
        let mut lattice = [0u32; 3];
        for a in 0..3 {
            nonzero_along("subdomain", sub, a, "sites")?;
            lattice[a] = (sub[a] as u64 * dims[a] as u64)
                .try_into()
                .ok()
                .filter(|&l: &u32| l <= u32::MAX - 2)
                .ok_or_else(|| {
                    bad_triple(
                        "subdomain",
                        sub,
                        format!(
                            "{} ranks of {} sites along {} exceed {} sites",
                            dims[a],
                            sub[a],
                            AXES[a],
                            u32::MAX - 2
                        ),
                    )
                })?;
        }
        Decomposition::new(lattice, dims, periodic)
    }

    /// Number of ranks.
    pub fn nranks(&self) -> u32 {
        self.dims[0] * self.dims[1] * self.dims[2]
    }

    /// The coordinates of `rank` in the rank grid.
    pub fn coords(&self, rank: Rank) -> [u32; 3] {
        let [_, py, pz] = self.dims;
        [rank / (py * pz), (rank / pz) % py, rank % pz]
    }

    /// The rank at coordinates `c`.
    pub fn rank_at(&self, c: [u32; 3]) -> Rank {
        (c[0] * self.dims[1] + c[1]) * self.dims[2] + c[2]
    }

    /// Sites along `axis` of the ranks at coordinate `c` on it.
    pub fn extent_on(&self, axis: usize, c: u32) -> u32 {
        let (l, p) = (self.lattice[axis], self.dims[axis]);
        l / p + u32::from(c < l % p)
    }

    /// First global site along `axis` of the ranks at coordinate `c` on it.
    pub fn start_on(&self, axis: usize, c: u32) -> u32 {
        let (l, p) = (self.lattice[axis], self.dims[axis]);
        c * (l / p) + c.min(l % p)
    }

    /// The subdomain of `rank`: its sites along x, y, z.
    pub fn subdomain(&self, rank: Rank) -> [u32; 3] {
        let c = self.coords(rank);
        [0, 1, 2].map(|a| self.extent_on(a, c[a]))
    }

    /// The global coordinates of `rank`'s first site.
    pub fn offset(&self, rank: Rank) -> [u32; 3] {
        let c = self.coords(rank);
        [0, 1, 2].map(|a| self.start_on(a, c[a]))
    }

    /// The neighbour of `rank` in direction `d` (components −1, 0, 1), wrapping round periodic
    /// axes; `None` across a non-periodic boundary. It may be `rank` itself.
    pub fn neighbour(&self, rank: Rank, d: [i8; 3]) -> Option<Rank> {
        let c = self.coords(rank);
        let mut n = [0u32; 3];
        for a in 0..3 {
            let p = self.dims[a] as i64;
            let x = c[a] as i64 + d[a] as i64;
            n[a] = if (0..p).contains(&x) {
                x as u32
            } else if self.periodic[a] {
                x.rem_euclid(p) as u32
            } else {
                return None;
            };
        }
        Some(self.rank_at(n))
    }

    /// `lattice AxBxC on PxQxR ranks, periodic`, for messages.
    pub fn describe(&self) -> String {
        let per: Vec<&str> = (0..3)
            .filter(|&a| self.periodic[a])
            .map(|a| AXES[a])
            .collect();
        format!(
            "lattice {} on {} ranks{}",
            format_triple(self.lattice),
            format_triple(self.dims),
            if per.len() == 3 {
                ", periodic".to_string()
            } else if per.is_empty() {
                ", not periodic".to_string()
            } else {
                format!(", periodic along {}", per.join(", "))
            }
        )
    }
}

impl fmt::Display for Decomposition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// A halo exchange: the decomposition, values per site and the stencil of required values.
/// [`Collective::Halo`](super::Collective::Halo) carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HaloSpec {
    /// The decomposition.
    pub decomp: Decomposition,
    /// Values per site (19 for D3Q19).
    pub values: u32,
    /// Which halo values the exchange fills.
    pub stencil: HaloStencil,
}

/// The box of the sites of a subdomain of `n` sites (halo coordinates) on the side `d`:
/// `(origin, extent)`. `halo`: the halo sites at direction `d` (index 0 or `n + 1` on each axis
/// where `d` is non-zero, `1..=n` elsewhere); otherwise the subdomain sites one step inside
/// (index `1` or `n`).
pub fn side_box(n: [u32; 3], d: [i8; 3], halo: bool) -> ([u32; 3], [u32; 3]) {
    let mut o = [0u32; 3];
    let mut e = [0u32; 3];
    for a in 0..3 {
        (o[a], e[a]) = match (d[a], halo) {
            (0, _) => (1, n[a]),
            (-1, true) => (0, 1),
            (-1, false) => (1, 1),
            (_, true) => (n[a] + 1, 1),
            (_, false) => (n[a], 1),
        };
    }
    (o, e)
}

impl HaloSpec {
    /// A halo exchange of `values` values per site; [`HaloStencil::D3Q19`] needs 19.
    pub fn new(
        decomp: Decomposition,
        values: u32,
        stencil: HaloStencil,
    ) -> Result<HaloSpec, ScheduleError> {
        if values == 0 {
            return Err(ScheduleError::BadParameter {
                name: "values".into(),
                value: "0".into(),
                reason: "a site holds at least 1 value (19 for D3Q19)".into(),
            });
        }
        if stencil == HaloStencil::D3Q19 && values != d3q19::Q as u32 {
            return Err(ScheduleError::BadParameter {
                name: "values".into(),
                value: values.to_string(),
                reason: format!(
                    "the D3Q19 stencil moves the {} distributions of a site; accepted: {}",
                    d3q19::Q,
                    d3q19::Q
                ),
            });
        }
        let spec = HaloSpec {
            decomp,
            values,
            stencil,
        };
        // Rank 0's subdomain is the largest (the first ranks along an axis get the extra site).
        let n = [0, 1, 2].map(|a| decomp.extent_on(a, 0) as u64 + 2);
        let biggest = n[0]
            .checked_mul(n[1])
            .and_then(|x| x.checked_mul(n[2]))
            .and_then(|x| x.checked_mul(values as u64));
        match biggest {
            Some(len) if len <= 1 << 48 => Ok(spec),
            _ => Err(ScheduleError::BadParameter {
                name: "subdomain".into(),
                value: format_triple([0, 1, 2].map(|a| decomp.extent_on(a, 0))),
                reason: format!(
                    "a local array of these sites plus the halo with {values} values per site \
                     exceeds 2^48 elements"
                ),
            }),
        }
    }

    /// The shape of `rank`'s local array: `(nx + 2, ny + 2, nz + 2, values)`.
    pub fn local_dims(&self, rank: Rank) -> [u32; 4] {
        let n = self.decomp.subdomain(rank);
        [n[0] + 2, n[1] + 2, n[2] + 2, self.values]
    }

    /// Elements of `rank`'s local array.
    pub fn local_len(&self, rank: Rank) -> u64 {
        self.local_dims(rank).iter().map(|&d| d as u64).product()
    }

    /// Elements of the largest local array (rank 0's: subdomains shrink with the coordinate).
    pub fn max_local_len(&self) -> u64 {
        self.local_len(0)
    }

    /// The region of `rank`'s local array (in `slot`) at side `d`: its halo sites (`halo`) or
    /// the subdomain sites one step inside, with the values of `values`.
    pub fn region(&self, rank: Rank, slot: Slot, d: [i8; 3], halo: bool, values: u64) -> Region {
        let dims = self.local_dims(rank);
        let (origin, extent) = side_box(self.decomp.subdomain(rank), d, halo);
        Region {
            slot,
            dims,
            origin,
            extent,
            values,
        }
    }

    /// What element `(i, j, k, v)` of `rank`'s local array (halo coordinates) must hold after
    /// the exchange: `(q, e)`, element `e` of rank `q`'s array before it (`(rank, itself)`
    /// when it is unchanged).
    pub fn expected(&self, rank: Rank, site: [u32; 3], v: u32) -> (Rank, u64) {
        let dims = self.local_dims(rank);
        let at = |dm: [u32; 4], s: [u32; 3]| {
            ((s[0] as u64 * dm[1] as u64 + s[1] as u64) * dm[2] as u64 + s[2] as u64) * dm[3] as u64
                + v as u64
        };
        let own = (rank, at(dims, site));
        let mut d = [0i8; 3];
        for a in 0..3 {
            d[a] = if site[a] == 0 {
                -1
            } else if site[a] == dims[a] - 1 {
                1
            } else {
                0
            };
        }
        if d == [0, 0, 0] {
            return own;
        }
        let req = self.stencil.required(d);
        if req != Region::ALL_VALUES && req >> v & 1 == 0 {
            return own;
        }
        let Some(q) = self.decomp.neighbour(rank, d) else {
            return own;
        };
        let qd = self.local_dims(q);
        let mut s = site;
        for a in 0..3 {
            s[a] = match d[a] {
                -1 => qd[a] - 2,
                1 => 1,
                _ => site[a],
            };
        }
        (q, at(qd, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_create_matches_mpi() {
        assert_eq!(dims_create(24), [4, 3, 2]);
        assert_eq!(dims_create(8), [2, 2, 2]);
        assert_eq!(dims_create(4096), [16, 16, 16]);
        assert_eq!(dims_create(12), [3, 2, 2]);
        assert_eq!(dims_create(7), [7, 1, 1]);
        assert_eq!(dims_create(1), [1, 1, 1]);
        assert_eq!(dims_create(2), [2, 1, 1]);
        assert_eq!(dims_create(96), [6, 4, 4]);
        assert_eq!(dims_create(192), [8, 6, 4]);
    }

    #[test]
    fn directions_are_indexed() {
        for (t, d) in DIRECTIONS.iter().enumerate() {
            assert_eq!(direction_index(*d), t);
        }
        assert_eq!(DIRECTIONS[0], [-1, -1, -1]);
        assert_eq!(DIRECTIONS[12], [0, 0, -1]);
        assert_eq!(DIRECTIONS[13], [0, 0, 1]);
        assert_eq!(DIRECTIONS[25], [1, 1, 1]);
    }

    #[test]
    fn decomposition_in_cart_order_with_uneven_sizes() {
        let d = Decomposition::new([10, 7, 5], [4, 3, 2], [true, true, false]).unwrap();
        assert_eq!(d.nranks(), 24);
        assert_eq!(d.coords(0), [0, 0, 0]);
        assert_eq!(d.coords(1), [0, 0, 1]);
        assert_eq!(d.coords(2), [0, 1, 0]);
        assert_eq!(d.coords(23), [3, 2, 1]);
        assert_eq!(d.rank_at([3, 2, 1]), 23);
        // 10 = 3 + 3 + 2 + 2; 7 = 3 + 2 + 2; 5 = 3 + 2
        assert_eq!(d.subdomain(0), [3, 3, 3]);
        assert_eq!(d.subdomain(23), [2, 2, 2]);
        assert_eq!(d.offset(23), [8, 5, 3]);
        assert_eq!(d.offset(d.rank_at([2, 1, 0])), [6, 3, 0]);
        assert_eq!(d.neighbour(0, [-1, 0, 0]), Some(d.rank_at([3, 0, 0])));
        assert_eq!(d.neighbour(0, [0, 0, -1]), None);
        assert_eq!(d.neighbour(0, [0, 0, 1]), Some(1));
        assert_eq!(d.neighbour(1, [0, 0, 1]), None);
        assert_eq!(d.neighbour(0, [-1, -1, 1]), Some(d.rank_at([3, 2, 1])));
    }

    #[test]
    fn decomposition_errors_name_the_bad_value() {
        let e = Decomposition::new([3, 3, 3], [4, 1, 1], [true; 3]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid lattice '3x3x3': a 4x1x1 decomposition needs at least 4 sites along x \
             (one per rank), the lattice has 3"
        );
        let e = Decomposition::with_ranks([8, 8, 8], 6, Some([2, 2, 2]), [true; 3]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid decomposition '2x2x2': it has 8 ranks, not 6; give px x py x pz = 6 \
             (default 3x2x1)"
        );
        let e = Decomposition::new([8, 0, 8], [1, 1, 1], [true; 3]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid lattice '8x0x8': it has 0 sites along y; every dimension is 1 to 4294967293"
        );
        let d = Decomposition::new([8, 8, 8], [1, 1, 1], [true; 3]).unwrap();
        let e = HaloSpec::new(d, 5, HaloStencil::D3Q19).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid values '5': the D3Q19 stencil moves the 19 distributions of a site; \
             accepted: 19"
        );
    }

    #[test]
    fn expected_values_mirror_the_neighbours_boundary() {
        let d = Decomposition::new([4, 2, 2], [2, 1, 1], [true; 3]).unwrap();
        let h = HaloSpec::new(d, 1, HaloStencil::Full).unwrap();
        // rank 0: sites 2x2x2, array 4x4x4x1. Its +x halo (i = 3) mirrors rank 1's i = 1.
        assert_eq!(h.expected(0, [3, 1, 2], 0), (1, (16 + 4 + 2) as u64));
        // its -x halo (i = 0) mirrors rank 1's i = 2 (rank 1 is both neighbours).
        assert_eq!(h.expected(0, [0, 1, 2], 0), (1, (2 * 16 + 4 + 2) as u64));
        // -y halo: rank 0 is its own neighbour; the site mirrors its own j = 2.
        assert_eq!(h.expected(0, [1, 0, 1], 0), (0, (16 + 2 * 4 + 1) as u64));
        // the subdomain is unchanged.
        assert_eq!(h.expected(0, [1, 1, 1], 0), (0, 21));
    }
}
