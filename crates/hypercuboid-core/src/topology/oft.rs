//! Two-level Orthogonal Fat-Tree (diameter-two seed, section 2.2.4; Valerio, Moser and
//! Melliar-Smith 1993/94).
//!
//! The k-OFT stacks two single-path trees over a shared middle level: levels L0, L1 and L2 of
//! R_L = k² − k + 1 routers each. L0 router i and L2 router i both link to the k L1 routers of
//! row i of the k-ML3B (Maximal Leaves Basic Building Block); L0 and L2 routers carry p = k
//! endpoints each (radix 2k), L1 routers have 2k network ports. N = 2kR_L = 2k³ − 2k² + 2k,
//! R = 3R_L.
//!
//! The ML3B is built with the seed's MOLS procedure (section 2.2.4), using arithmetic in GF(k − 1)
//! so that it works for every prime power k − 1 (for a prime k − 1 the field is the integers
//! mod k − 1 and the table is exactly the seed's; Table 2 for k = 4). Writing n = k − 1:
//!
//! 1. row 0 is R_L − k, …, R_L − 1;
//! 2. the rest of column 0 holds n copies of R_L − k, then n of R_L − k + 1, …, n of R_L − 1;
//! 3. the remaining k·n × n cells form k squares of n × n: the first holds 0 … n² − 1 row by
//!    row, the second its transpose, and square 2 + t (t = 0 … n − 2) the Latin square
//!    L_a(r, c) = a·c + r with a the (t + 1)-th nonzero field element, with c·n added to
//!    column c.
//!
//! The result is the incidence structure of a projective plane of order n: two rows share
//! exactly one value and two values share exactly one row, hence a single minimal path between
//! two L0 routers and k between L0 router i and L2 router i (seed section 2.3.3).
//!
//! Order: L0 routers 0..R_L, L1 routers R_L..2R_L, L2 routers 2R_L..3R_L; endpoints of L0 then
//! of L2, router by router (intra-router, intra-layer, inter-layer). Coordinates (level, i).

use super::error::{at_least, param_err, TopologyError};
use super::galois::{nearest, nearest_text, prime_power, GaloisField};
use super::graph::{check_size, kv, Builder, LinkParams, Topology};
use super::Size;

/// A two-level k-OFT.
#[derive(Clone, Debug, PartialEq)]
pub struct Oft {
    /// Ports of an L0 router towards L1 (k − 1 must be a prime power).
    pub k: u32,
    /// Endpoints per L0/L2 router (default k).
    pub p: u32,
    /// Every link's bandwidth and latency.
    pub link: LinkParams,
}

const FAMILY: &str = "oft";

/// Router kinds: L0, L1, L2.
pub const KINDS: [&str; 3] = ["L0", "L1", "L2"];

/// Checks that k − 1 is a prime power, naming the nearest valid k otherwise.
pub fn check_k(k: u32) -> Result<(), TopologyError> {
    let valid = |v: u64| v >= 3 && prime_power(v - 1).is_some();
    if !valid(k as u64) {
        let (b, a) = nearest(k as u64, 3, 64, valid);
        return Err(param_err(
            FAMILY,
            "k",
            k,
            format!(
                "k-1={} is not a prime power; k-1 must be a prime power (k = 3, 4, 5, 6, 8, 9, \
                 10, 12, 14, ...); the nearest valid k is {}",
                k as i64 - 1,
                nearest_text(b, a)
            ),
        ));
    }
    Ok(())
}

/// The tabular representation of the k-ML3B: R_L rows of k entries, row i listing the L1
/// routers that L0 (and L2) router i links to.
pub fn ml3b(k: u32) -> Result<Vec<Vec<u32>>, TopologyError> {
    check_k(k)?;
    let n = k - 1;
    let rl = k * k - k + 1;
    let field = GaloisField::new(n as u64)?;
    let mut table = vec![vec![0u32; k as usize]; rl as usize];
    for (j, cell) in table[0].iter_mut().enumerate() {
        *cell = rl - k + j as u32;
    }
    for row in 1..rl {
        table[row as usize][0] = rl - k + (row - 1) / n;
    }
    for sq in 0..k {
        for r in 0..n {
            let row = &mut table[(1 + sq * n + r) as usize];
            for c in 0..n {
                row[(c + 1) as usize] = match sq {
                    0 => r * n + c,
                    1 => c * n + r,
                    _ => {
                        let a = sq - 1; // field elements 1 ..= n - 1
                        field.add(field.mul(a, c), r) + c * n
                    }
                };
            }
        }
    }
    Ok(table)
}

impl Oft {
    /// The k-OFT with p = k.
    pub fn new(k: u32) -> Oft {
        Oft {
            k,
            p: k,
            link: LinkParams::default(),
        }
    }

    /// Closed-form size: R = 3R_L, N = 2pR_L, links = 2kR_L.
    pub fn size(&self) -> Result<Size, TopologyError> {
        check_k(self.k)?;
        at_least(FAMILY, "p", self.p, 1, "")?;
        let k = self.k as u128;
        let rl = k * k - k + 1;
        let n = 2 * self.p as u128 * rl;
        check_size(FAMILY, 3 * rl, n, 2 * k * rl)?;
        Ok(Size {
            routers: (3 * rl) as u64,
            endpoints: n as u64,
            links: (2 * k * rl) as u64,
            router_radix: (2 * self.k).max(self.k.saturating_add(self.p)),
            network_radix: 2 * self.k,
        })
    }

    /// Builds the topology.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let size = self.size()?;
        // size() has refused sizes above the limit
        let table = ml3b(self.k)?;
        let rl = table.len() as u32;
        let mut b = Builder::new(FAMILY, &KINDS, &["level", "index"], self.link);
        b.reserve(&size);
        for level in 0..3u32 {
            for i in 0..rl {
                let r = b.router(level as u8, &[level, i]);
                if level != 1 {
                    b.endpoints(r, self.p);
                }
            }
        }
        for level in [0u32, 2] {
            for (i, row) in table.iter().enumerate() {
                for &j in row {
                    b.link(level * rl + i as u32, rl + j);
                }
            }
        }
        b.finish(kv(&[("k", self.k.to_string()), ("p", self.p.to_string())]))
    }
}
