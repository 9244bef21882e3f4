//! Multi-Layer Full-Mesh (diameter-two seed, section 2.2.3; Fujitsu 2014).
//!
//! The (h, l, p)-MLFM has l layers of h + 1 local routers (LRs) each, p endpoints per LR, and
//! R_g = h(h + 1)/2 global routers (GRs), one for each pair {a, b} of LR positions: GR {a, b}
//! links to LR a and LR b of every layer. So an LR has h network ports (radix h + p) and a GR
//! 2l (radix 2l). With h = l = p (the default) every router has radix 2h, R = 3h(h + 1)/2 and
//! N = h³ + h².
//!
//! Order: LRs first, layer-major (LR (layer L, position a) is router L·(h + 1) + a), then the
//! GRs in lexicographic order of (a, b), a < b. Endpoints: intra-router, then intra-layer, then
//! inter-layer (the seed's node order, section 4.4). Coordinates: LR (layer, position), GR
//! (a, b).

use super::error::{at_least, TopologyError};
use super::graph::{check_size, kv, Builder, LinkParams, Topology};
use super::Size;

/// An (h, l, p) Multi-Layer Full-Mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct Mlfm {
    /// Network ports of a local router (h + 1 LRs a layer).
    pub h: u32,
    /// Layers.
    pub l: u32,
    /// Endpoints per local router.
    pub p: u32,
    /// Every link's bandwidth and latency.
    pub link: LinkParams,
}

const FAMILY: &str = "mlfm";

/// Router kind of the local routers.
pub const LOCAL: u8 = 0;
/// Router kind of the global routers.
pub const GLOBAL: u8 = 1;

impl Mlfm {
    /// The h-MLFM (h = l = p).
    pub fn new(h: u32) -> Mlfm {
        Mlfm {
            h,
            l: h,
            p: h,
            link: LinkParams::default(),
        }
    }

    fn check(&self) -> Result<(), TopologyError> {
        at_least(FAMILY, "h", self.h, 2, " (h + 1 local routers a layer)")?;
        at_least(FAMILY, "l", self.l, 1, " layer")?;
        at_least(FAMILY, "p", self.p, 1, " endpoint a local router")?;
        Ok(())
    }

    /// Closed-form size: R = l(h + 1) + h(h + 1)/2, N = l(h + 1)p.
    pub fn size(&self) -> Result<Size, TopologyError> {
        self.check()?;
        let (h, l, p) = (self.h as u128, self.l as u128, self.p as u128);
        let lr = l * (h + 1);
        let gr = h * (h + 1) / 2;
        check_size(FAMILY, lr + gr, lr * p, lr * h)?;
        Ok(Size {
            routers: (lr + gr) as u64,
            endpoints: (lr * p) as u64,
            links: (lr * h) as u64,
            router_radix: self.h.saturating_add(self.p).max(2 * self.l),
            network_radix: self.h.max(2 * self.l),
        })
    }

    /// Router index of the GR joining LR positions a ≠ b (both ≤ h).
    pub fn global_router(&self, a: u32, b: u32) -> u32 {
        let (a, b) = (a.min(b) as u64, a.max(b) as u64);
        let n = self.h as u64 + 1;
        // GRs for pairs (a', *) with a' < a come first: sum_{a'<a} (n - 1 - a').
        let before = a * (n - 1) - a * a.saturating_sub(1) / 2;
        (self.l as u64 * n + before + (b - a - 1)) as u32
    }

    /// Builds the topology.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let size = self.size()?;
        // size() has refused sizes above the limit
        let (h, l) = (self.h, self.l);
        let n = h + 1;
        let mut b = Builder::new(
            FAMILY,
            &["local", "global"],
            &["layer|a", "position|b"],
            self.link,
        );
        b.reserve(&size);
        for layer in 0..l {
            for a in 0..n {
                let r = b.router(LOCAL, &[layer, a]);
                b.endpoints(r, self.p);
            }
        }
        let mut gr = vec![vec![0u32; n as usize]; n as usize];
        for a in 0..n {
            for c in a + 1..n {
                let r = b.router(GLOBAL, &[a, c]);
                gr[a as usize][c as usize] = r;
                gr[c as usize][a as usize] = r;
            }
        }
        for layer in 0..l {
            for a in 0..n {
                for c in 0..n {
                    if c != a {
                        b.link(layer * n + a, gr[a as usize][c as usize]);
                    }
                }
            }
        }
        b.finish(kv(&[
            ("h", h.to_string()),
            ("l", l.to_string()),
            ("p", self.p.to_string()),
        ]))
    }
}
