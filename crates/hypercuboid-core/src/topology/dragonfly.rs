//! Dragonfly (Kim, Dally, Scott and Abts, ISCA 2008): g groups of a routers; each group is a
//! full mesh, each router has p endpoints and h global links, and every pair of groups is
//! joined by one global link. Balanced by default: a = 2p = 2h, g = ah + 1 (the largest
//! size, diameter 3).
//!
//! Global links use the consecutive arrangement: in group i the other groups j are numbered
//! t = j (j < i) or j − 1 (j > i), and the link to group j leaves router ⌊t/h⌋ of group i.
//! With g < ah + 1 the last global ports stay unused.
//!
//! Order: router (group, index) is group·a + index; endpoints router by router.

use super::error::{at_least, param_err, TopologyError};
use super::graph::{check_size, kv, Builder, LinkParams, Topology};
use super::Size;

/// A Dragonfly (a, p, h) with g groups.
#[derive(Clone, Debug, PartialEq)]
pub struct Dragonfly {
    /// Routers per group.
    pub a: u32,
    /// Endpoints per router.
    pub p: u32,
    /// Global links per router.
    pub h: u32,
    /// Groups, 2 ≤ g ≤ ah + 1.
    pub g: u32,
    /// Every link's bandwidth and latency.
    pub link: LinkParams,
}

const FAMILY: &str = "dragonfly";

impl Dragonfly {
    /// The balanced Dragonfly with p endpoints a router: a = 2p, h = p, g = ah + 1.
    pub fn balanced(p: u32) -> Dragonfly {
        Dragonfly {
            a: 2 * p,
            p,
            h: p,
            g: 2 * p * p + 1,
            link: LinkParams::default(),
        }
    }

    /// Closed-form size.
    pub fn size(&self) -> Result<Size, TopologyError> {
        at_least(FAMILY, "a", self.a, 1, " router a group")?;
        at_least(FAMILY, "p", self.p, 1, "")?;
        at_least(FAMILY, "h", self.h, 1, " global link a router")?;
        let max_g = self.a as u64 * self.h as u64 + 1;
        if self.g < 2 || self.g as u64 > max_g {
            return Err(param_err(
                FAMILY,
                "g",
                self.g,
                format!("accepted: 2 <= g <= a*h+1 = {max_g}"),
            ));
        }
        let (a, g) = (self.a as u128, self.g as u128);
        let r = a * g;
        let links = g * a * (a - 1) / 2 + g * (g - 1) / 2;
        check_size(FAMILY, r, r * self.p as u128, links)?;
        let rn = self.a - 1 + self.h.min(self.g - 1);
        Ok(Size {
            routers: r as u64,
            endpoints: (r * self.p as u128) as u64,
            links: links as u64,
            router_radix: rn + self.p,
            network_radix: rn,
        })
    }

    /// Builds the topology.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let size = self.size()?;
        let (a, h, g) = (self.a, self.h, self.g);
        let mut b = Builder::new(FAMILY, &["router"], &["group", "index"], self.link);
        b.reserve(&size);
        for grp in 0..g {
            for i in 0..a {
                let r = b.router(0, &[grp, i]);
                b.endpoints(r, self.p);
            }
        }
        for grp in 0..g {
            for i in 0..a {
                for j in i + 1..a {
                    b.link(grp * a + i, grp * a + j);
                }
            }
        }
        for gi in 0..g {
            for gj in gi + 1..g {
                let ti = gj - 1; // gj > gi
                let tj = gi;
                b.link(gi * a + ti / h, gj * a + tj / h);
            }
        }
        b.finish(kv(&[
            ("a", a.to_string()),
            ("p", self.p.to_string()),
            ("h", h.to_string()),
            ("g", g.to_string()),
        ]))
    }
}
