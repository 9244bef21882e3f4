//! Torus and mesh (k-ary n-cube with or without wrap-around links).
//!
//! Router (c₀, …, c_{n−1}) has index c₀ + s₀(c₁ + …) (dimension 0 fastest) and links to its
//! ±1 neighbours in every dimension (with wrap-around for a torus). A dimension of size 2 gives
//! one link (not two parallel ones), a dimension of size 1 none. p endpoints per router
//! (default 1).

use super::error::TopologyError;
use super::graph::{check_size, kv, LinkParams, Topology};
use super::hyperx::{build_grid, dims_text, grid_routers};
use super::Size;

/// A torus (`wrap`) or mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct Torus {
    /// Size of every dimension (≥ 1), at least one dimension.
    pub sizes: Vec<u32>,
    /// Wrap-around links (torus) or not (mesh).
    pub wrap: bool,
    /// Endpoints per router.
    pub p: u32,
    /// Every link's bandwidth and latency.
    pub link: LinkParams,
}

impl Torus {
    /// A torus with one endpoint per router.
    pub fn wrapped(sizes: &[u32]) -> Torus {
        Torus {
            sizes: sizes.to_vec(),
            wrap: true,
            p: 1,
            link: LinkParams::default(),
        }
    }

    /// A mesh with one endpoint per router.
    pub fn mesh(sizes: &[u32]) -> Torus {
        Torus {
            wrap: false,
            ..Torus::wrapped(sizes)
        }
    }

    fn family(&self) -> &'static str {
        if self.wrap {
            "torus"
        } else {
            "mesh"
        }
    }

    /// Links along a dimension of size s, per line of routers.
    fn links_per_line(&self, s: u32) -> u64 {
        match s {
            0 | 1 => 0,
            2 => 1,
            s if self.wrap => s as u64,
            s => s as u64 - 1,
        }
    }

    /// Closed-form size.
    pub fn size(&self) -> Result<Size, TopologyError> {
        let fam = self.family();
        let r = grid_routers(fam, ("dims", "4x4x4", 1), &self.sizes, self.p)?;
        let mut links: u128 = 0;
        let mut rn = 0u32;
        for &s in &self.sizes {
            links = links
                .saturating_add((r / s as u128).saturating_mul(self.links_per_line(s) as u128));
            rn += match s {
                1 => 0,
                2 => 1,
                _ => 2,
            };
        }
        check_size(fam, r, r.saturating_mul(self.p as u128), links)?;
        Ok(Size {
            routers: r as u64,
            endpoints: r as u64 * self.p as u64,
            links: links as u64,
            router_radix: rn + self.p,
            network_radix: rn,
        })
    }

    /// Builds the topology.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let size = self.size()?;
        let wrap = self.wrap;
        // the next router along each dimension, and around for a torus (a ring of 2 has one link)
        let b = build_grid(
            self.family(),
            &self.sizes,
            self.p,
            self.link,
            &size,
            |ci, s, to| {
                if ci + 1 < s {
                    to.push(ci + 1);
                } else if wrap && s > 2 {
                    to.push(0);
                }
            },
        );
        b.finish(kv(&[
            ("dims", dims_text(&self.sizes)),
            ("p", self.p.to_string()),
        ]))
    }
}
