//! Slim Fly: routers arranged as a McKay–Miller–Širáň (MMS) graph (diameter-two seed, section
//! 2.1.2; Besta and Hoefler, SC14).
//!
//! For a prime power q = 4w + δ, δ ∈ {−1, 0, 1}, with ξ a primitive element of GF(q), the seed
//! defines the generator sets
//!
//! * δ = 1: X = {1, ξ², …, ξ^(q−3)}, X′ = {ξ, ξ³, …, ξ^(q−2)};
//! * δ = −1: X = {1, ξ², …, ξ^(2w−2), ξ^(2w−1), ξ^(2w+1), …, ξ^(4w−3)},
//!   X′ = {ξ, ξ³, …, ξ^(2w−1), ξ^(2w), ξ^(2w+2), …, ξ^(4w−2)};
//! * δ = 0: X = {1, ξ², …, ξ^(q−2)}, X′ = {ξ, ξ³, …, ξ^(q−1)};
//!
//! and R = 2q² routers (s, x, y), s ∈ {0, 1}, x, y ∈ GF(q), joined by (all arithmetic in the
//! field):
//!
//! * (0, x, y) — (0, x, y′) if y − y′ ∈ X;
//! * (1, m, c) — (1, m, c′) if c − c′ ∈ X′ (the seed prints "(1, c, c′)", a typo: the MMS
//!   construction keeps m);
//! * (0, x, y) — (1, m, c) if y = m·x + c.
//!
//! Each router has 2w links within its column (fixed s and x) and q to the other subgraph, so
//! the network radix is r′ = (3q − δ)/2; p endpoints per router, p = ⌊r′/2⌋ or ⌈r′/2⌉
//! (default ⌈r′/2⌉, Besta and Hoefler's choice; the seed also studies ⌊r′/2⌋).
//!
//! Order: router (s, x, y) has index s·q² + x·q + y; its p endpoints are consecutive. So
//! endpoints go intra-router, then along a column (the routers joined by X or X′), then across
//! columns and subgraphs: the seed's node order (section 4.4).

use super::error::{param_err, TopologyError};
use super::galois::{nearest, nearest_text, prime_power, GaloisField};
use super::graph::{check_size, kv, Builder, LinkParams, Topology};
use super::Size;

/// Endpoints per router of a Slim Fly or PolarFly: half the network radix rounded down or up,
/// or an explicit count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Concentration {
    /// ⌊r′/2⌋.
    Floor,
    /// ⌈r′/2⌉.
    Ceil,
    /// An explicit number (≥ 1).
    Count(u32),
}

impl Concentration {
    /// The endpoints per router for network radix `radix`.
    pub fn resolve(self, radix: u32) -> u32 {
        match self {
            Concentration::Floor => radix / 2,
            Concentration::Ceil => radix.div_ceil(2),
            Concentration::Count(p) => p,
        }
    }

    /// [`Concentration::resolve`], refusing a count of 0 with an error naming `family`.
    pub(crate) fn endpoints(self, family: &'static str, radix: u32) -> Result<u32, TopologyError> {
        let p = self.resolve(radix);
        if p == 0 {
            return Err(param_err(
                family,
                "p",
                p,
                "must be floor, ceil or a count >= 1",
            ));
        }
        Ok(p)
    }
}

/// A Slim Fly of parameter q.
#[derive(Clone, Debug, PartialEq)]
pub struct SlimFly {
    /// The prime power q = 4w + δ.
    pub q: u32,
    /// Endpoints per router.
    pub p: Concentration,
    /// Every link's bandwidth and latency.
    pub link: LinkParams,
}

const FAMILY: &str = "slimfly";

/// δ ∈ {−1, 0, 1} and w with q = 4w + δ, or the error naming the nearest valid q.
pub fn delta_w(q: u32) -> Result<(i32, u32), TopologyError> {
    let valid = |v: u64| v >= 3 && prime_power(v).is_some();
    if !valid(q as u64) {
        let (b, a) = nearest(q as u64, 3, 64, valid);
        let what = if q >= 3 {
            "not a prime power"
        } else {
            "too small"
        };
        return Err(param_err(
            FAMILY,
            "q",
            q,
            format!(
                "{what}; q must be a prime power 4w+δ with w ≥ 1 and δ ∈ {{-1, 0, 1}} \
                 (3, 4, 5, 7, 8, 9, 11, 13, 16, ...); the nearest valid q is {}",
                nearest_text(b, a)
            ),
        ));
    }
    Ok(match q % 4 {
        1 => (1, (q - 1) / 4),
        0 => (0, q / 4),
        3 => (-1, (q + 1) / 4),
        _ => unreachable!("a prime power >= 3 is not 2 mod 4"),
    })
}

impl SlimFly {
    /// Slim Fly q with p = ⌈r′/2⌉ and default links.
    pub fn new(q: u32) -> SlimFly {
        SlimFly {
            q,
            p: Concentration::Ceil,
            link: LinkParams::default(),
        }
    }

    /// Network radix r′ = (3q − δ)/2.
    pub fn network_radix(&self) -> Result<u32, TopologyError> {
        let (delta, _) = delta_w(self.q)?;
        Ok(((3 * self.q as i64 - delta as i64) / 2) as u32)
    }

    /// Endpoints per router p.
    pub fn endpoints_per_router(&self) -> Result<u32, TopologyError> {
        self.p.endpoints(FAMILY, self.network_radix()?)
    }

    /// Closed-form size: R = 2q², N = pR, r = r′ + p, links = r′R/2.
    pub fn size(&self) -> Result<Size, TopologyError> {
        let rn = self.network_radix()?;
        let p = self.endpoints_per_router()?;
        let q = self.q as u128;
        let r = 2 * q * q;
        let (n, links) = (r * p as u128, r * rn as u128 / 2);
        check_size(FAMILY, r, n, links)?;
        Ok(Size {
            routers: r as u64,
            endpoints: n as u64,
            links: links as u64,
            router_radix: rn.saturating_add(p),
            network_radix: rn,
        })
    }

    /// The generator sets (X, X′) as field elements, in the seed's order.
    pub fn generator_sets(
        &self,
        field: &GaloisField,
    ) -> Result<(Vec<u32>, Vec<u32>), TopologyError> {
        let (delta, w) = delta_w(self.q)?;
        let q = self.q as u64;
        let w = w as u64;
        let (xe, xpe): (Vec<u64>, Vec<u64>) = match delta {
            1 => (
                (0..=q - 3).step_by(2).collect(),
                (1..=q - 2).step_by(2).collect(),
            ),
            0 => (
                (0..=q - 2).step_by(2).collect(),
                (1..=q - 1).step_by(2).collect(),
            ),
            _ => (
                (0..=2 * w - 2)
                    .step_by(2)
                    .chain((2 * w - 1..=4 * w - 3).step_by(2))
                    .collect(),
                (1..=2 * w - 1)
                    .step_by(2)
                    .chain((2 * w..=4 * w - 2).step_by(2))
                    .collect(),
            ),
        };
        Ok((
            xe.into_iter().map(|e| field.xi_pow(e)).collect(),
            xpe.into_iter().map(|e| field.xi_pow(e)).collect(),
        ))
    }

    /// Builds the topology.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let size = self.size()?;
        // size() has refused sizes above the limit
        let p = self.endpoints_per_router()?;
        let field = GaloisField::new(self.q as u64)?;
        let (x, xp) = self.generator_sets(&field)?;
        let q = self.q;
        let mut in_x = vec![false; q as usize];
        let mut in_xp = vec![false; q as usize];
        for &e in &x {
            in_x[e as usize] = true;
        }
        for &e in &xp {
            in_xp[e as usize] = true;
        }
        // Undirected graph requires X = −X and X′ = −X′.
        for (set, name) in [(&in_x, "X"), (&in_xp, "X'")] {
            if let Some(a) = (0..q).find(|&a| set[a as usize] != set[field.neg(a) as usize]) {
                return Err(TopologyError::Invalid {
                    reason: format!("slimfly q={q}: generator set {name} not symmetric at {a}"),
                });
            }
        }
        let mut b = Builder::new(FAMILY, &["router"], &["subgraph", "x", "y"], self.link);
        b.reserve(&size);
        let idx = |s: u32, x: u32, y: u32| s * q * q + x * q + y;
        for s in 0..2 {
            for xx in 0..q {
                for y in 0..q {
                    let r = b.router(0, &[s, xx, y]);
                    b.endpoints(r, p);
                }
            }
        }
        for (s, set) in [(0u32, &in_x), (1u32, &in_xp)] {
            for xx in 0..q {
                for y in 0..q {
                    for y2 in y + 1..q {
                        if set[field.sub(y, y2) as usize] {
                            b.link(idx(s, xx, y), idx(s, xx, y2));
                        }
                    }
                }
            }
        }
        for xx in 0..q {
            for m in 0..q {
                let mx = field.mul(m, xx);
                for c in 0..q {
                    let y = field.add(mx, c);
                    b.link(idx(0, xx, y), idx(1, m, c));
                }
            }
        }
        b.finish(kv(&[("q", q.to_string()), ("p", p.to_string())]))
    }
}
