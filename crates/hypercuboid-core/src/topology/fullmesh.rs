//! Full mesh: n routers, every pair joined by one link; p endpoints per router (default 1).
//! Diameter 1.

use super::error::{at_least, TopologyError};
use super::graph::{check_size, kv, Builder, LinkParams, Topology};
use super::Size;

/// A full mesh of n routers.
#[derive(Clone, Debug, PartialEq)]
pub struct FullMesh {
    /// Routers (≥ 2).
    pub n: u32,
    /// Endpoints per router.
    pub p: u32,
    /// Every link's bandwidth and latency.
    pub link: LinkParams,
}

const FAMILY: &str = "fullmesh";

impl FullMesh {
    /// n routers with one endpoint each.
    pub fn new(n: u32) -> FullMesh {
        FullMesh {
            n,
            p: 1,
            link: LinkParams::default(),
        }
    }

    /// Closed-form size.
    pub fn size(&self) -> Result<Size, TopologyError> {
        at_least(FAMILY, "n", self.n, 2, " routers")?;
        at_least(FAMILY, "p", self.p, 1, "")?;
        let n = self.n as u128;
        check_size(FAMILY, n, n * self.p as u128, n * (n - 1) / 2)?;
        Ok(Size {
            routers: n as u64,
            endpoints: (n * self.p as u128) as u64,
            links: (n * (n - 1) / 2) as u64,
            router_radix: (self.n - 1).saturating_add(self.p),
            network_radix: self.n - 1,
        })
    }

    /// Builds the topology.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let size = self.size()?;
        let mut b = Builder::new(FAMILY, &["router"], &["index"], self.link);
        b.reserve(&size);
        for r in 0..self.n {
            b.router(0, &[r]);
            b.endpoints(r, self.p);
        }
        for a in 0..self.n {
            for c in a + 1..self.n {
                b.link(a, c);
            }
        }
        b.finish(kv(&[("n", self.n.to_string()), ("p", self.p.to_string())]))
    }
}
