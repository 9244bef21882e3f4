//! PolarFly: the Erdős–Rényi polarity graph ER_q (Lakhotia et al., SC22), a diameter-two
//! topology within a factor ≈ 1 of the Moore bound for large q.
//!
//! Routers are the q² + q + 1 points of the projective plane PG(2, q) (the one-dimensional
//! subspaces of GF(q)³); points x and y ≠ x are joined iff x·y = x₀y₀ + x₁y₁ + x₂y₂ = 0. A point
//! with x·x = 0 (an absolute point; there are q + 1) has network degree q, every other point
//! q + 1. The diameter is 2 for every prime power q.
//!
//! Order: points in normalised form, (0, 0, 1), then (0, 1, b) for b = 0 … q − 1, then
//! (1, a, b) with a major; p endpoints per router, consecutive. Router kinds: `quadric`
//! (absolute points) and `router`. Coordinates: the normalised vector.

use super::error::{param_err, TopologyError};
use super::galois::{nearest, nearest_text, prime_power, GaloisField};
use super::graph::{check_size, kv, Builder, LinkParams, Topology};
use super::slimfly::Concentration;
use super::Size;

/// PolarFly ER_q.
#[derive(Clone, Debug, PartialEq)]
pub struct PolarFly {
    /// The prime power q.
    pub q: u32,
    /// Endpoints per router, from the network radix q + 1 (default ⌈(q + 1)/2⌉).
    pub p: Concentration,
    /// Every link's bandwidth and latency.
    pub link: LinkParams,
}

const FAMILY: &str = "polarfly";

impl PolarFly {
    /// ER_q with p = ⌈(q + 1)/2⌉.
    pub fn new(q: u32) -> PolarFly {
        PolarFly {
            q,
            p: Concentration::Ceil,
            link: LinkParams::default(),
        }
    }

    fn check(&self) -> Result<u32, TopologyError> {
        let valid = |v: u64| prime_power(v).is_some();
        if !valid(self.q as u64) {
            let (b, a) = nearest(self.q as u64, 2, 64, valid);
            return Err(param_err(
                FAMILY,
                "q",
                self.q,
                format!(
                    "not a prime power; q must be a prime power (2, 3, 4, 5, 7, 8, 9, 11, ...); \
                     the nearest valid q is {}",
                    nearest_text(b, a)
                ),
            ));
        }
        self.p.endpoints(FAMILY, self.q + 1)
    }

    /// Closed-form size: R = q² + q + 1, links = q(q + 1)²/2, network radix q + 1.
    pub fn size(&self) -> Result<Size, TopologyError> {
        let p = self.check()?;
        let q = self.q as u128;
        let r = q * q + q + 1;
        // Sum of degrees: (q² + q + 1 − (q + 1))(q + 1) + (q + 1)q = q(q + 1)².
        let links = q * (q + 1) * (q + 1) / 2;
        check_size(FAMILY, r, r * p as u128, links)?;
        Ok(Size {
            routers: r as u64,
            endpoints: (r * p as u128) as u64,
            links: links as u64,
            router_radix: self.q.saturating_add(1).saturating_add(p),
            network_radix: self.q.saturating_add(1),
        })
    }

    /// Builds the topology.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let size = self.size()?;
        // size() has refused sizes above the limit
        let p = self.check()?;
        let q = self.q;
        let f = GaloisField::new(q as u64)?;
        let mut points: Vec<[u32; 3]> = Vec::with_capacity(size.routers as usize);
        points.push([0, 0, 1]);
        for b in 0..q {
            points.push([0, 1, b]);
        }
        for a in 0..q {
            for b in 0..q {
                points.push([1, a, b]);
            }
        }
        // Index of a normalised point.
        let index = |v: [u32; 3]| -> u32 {
            if v[0] == 1 {
                1 + q + v[1] * q + v[2]
            } else if v[1] == 1 {
                1 + v[2]
            } else {
                0
            }
        };
        let dot = |x: &[u32; 3], y: &[u32; 3]| {
            f.add(
                f.add(f.mul(x[0], y[0]), f.mul(x[1], y[1])),
                f.mul(x[2], y[2]),
            )
        };
        let mut b = Builder::new(
            FAMILY,
            &["router", "quadric"],
            &["x0", "x1", "x2"],
            self.link,
        );
        b.reserve(&size);
        for x in &points {
            let kind = u8::from(dot(x, x) == 0);
            let r = b.router(kind, x);
            b.endpoints(r, p);
        }
        // Neighbours of x: the points of the line x^⊥, enumerated in normalised form.
        for (i, x) in points.iter().enumerate() {
            let mut nbrs: Vec<u32> = Vec::with_capacity(q as usize + 1);
            // (1, a, b): x0 + x1 a + x2 b = 0.
            if x[2] != 0 {
                let inv = f.inv(x[2]).expect("nonzero");
                for a in 0..q {
                    let bb = f.mul(f.neg(f.add(x[0], f.mul(x[1], a))), inv);
                    nbrs.push(index([1, a, bb]));
                }
            } else if x[1] != 0 {
                let a = f.mul(f.neg(x[0]), f.inv(x[1]).expect("nonzero"));
                for bb in 0..q {
                    nbrs.push(index([1, a, bb]));
                }
            }
            // (0, 1, b): x1 + x2 b = 0.
            if x[2] != 0 {
                let bb = f.mul(f.neg(x[1]), f.inv(x[2]).expect("nonzero"));
                nbrs.push(index([0, 1, bb]));
            } else if x[1] == 0 {
                for bb in 0..q {
                    nbrs.push(index([0, 1, bb]));
                }
            }
            // (0, 0, 1): x2 = 0.
            if x[2] == 0 {
                nbrs.push(0);
            }
            for y in nbrs {
                if y > i as u32 {
                    b.link(i as u32, y);
                }
            }
        }
        b.finish(kv(&[("q", q.to_string()), ("p", p.to_string())]))
    }
}
