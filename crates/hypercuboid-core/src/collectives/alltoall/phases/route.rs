//! The route of a message as the directed links it uses: the unique path on a tree, the
//! deterministic minimal path elsewhere.
//!
//! # Directed links
//! Every link is two directed links (the seed's edges `(u, v)` and `(v, u)`), numbered
//! * `2l` from `links[l].a` to `links[l].b`, `2l + 1` back, for router-to-router link `l`;
//! * `2L + 2e` from endpoint `e` to its router (its send side), `2L + 2e + 1` from the router to
//!   `e` (its receive side), `L` the number of router-to-router links.
//!
//! # Routing
//! On a tree (connected, routers − 1 links) a message takes the unique path. Elsewhere it takes
//! a deterministic minimal path ([`Routing`]): at every router, one of the neighbours one hop
//! closer to the destination's router, in adjacency order — the candidates of the network
//! simulator's `min` routing ([`crate::network::routing::Routes::min_ports`] lists the same
//! ports in the same order), chosen by a rule instead of at random:
//! * `dmodk` (default): with c candidates, take candidate v mod c and continue with
//!   v ← ⌊v / c⌋, v starting as the destination machine's index (its mixed-radix digits). On a
//!   fat tree this is D-mod-k routing (successive digits of the destination pick the up-port
//!   at each level), which spreads the AAPC evenly over the up-links; on a torus it spreads
//!   the ties of equal-length directions.
//! * `first`: always the first candidate (on a torus, dimension order with ties broken the
//!   same way every time).

use super::PhaseError;
use crate::spec::{Choice, Choices};
use crate::topology::{router_distances, Topology};

/// How a minimal path is chosen where there are several (see the module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Routing {
    /// The destination's mixed-radix digits pick among the minimal next hops (D-mod-k).
    #[default]
    DestinationDigits,
    /// The first minimal next hop in adjacency order.
    First,
}

/// Every routing [`Routing::parse`] accepts, the default first: how the phases choose among
/// minimal paths. Not the network simulator's routings ([`crate::network::routing::ROUTINGS`]:
/// specs with keys, `min`, `ugal:n=4`, ...), which route packets, not phases.
pub const PHASE_ROUTINGS: Choices<Routing> = Choices::new(
    "alltoall phase routing",
    &[
        Choice::new(
            "dmodk",
            Routing::DestinationDigits,
            "minimal, the destination's digits pick among the minimal next hops (D-mod-k)",
        ),
        Choice::new(
            "first",
            Routing::First,
            "minimal, always the first minimal next hop in adjacency order",
        ),
    ],
);

impl Routing {
    /// The routing named `text` (a name of [`PHASE_ROUTINGS`]).
    pub fn parse(text: &str) -> Result<Routing, PhaseError> {
        PHASE_ROUTINGS.parse(text).map_err(|e| PhaseError::Routing {
            accepted: e.accepted(),
            value: e.value,
        })
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        PHASE_ROUTINGS.name(self)
    }
}

/// What a directed link joins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirectedLink {
    /// Router-to-router link `link` from router `from` to router `to`.
    Network {
        /// Index into [`Topology::links`].
        link: u32,
        /// Router it leaves.
        from: u32,
        /// Router it enters.
        to: u32,
    },
    /// Endpoint `endpoint` sending into its router.
    Send {
        /// The endpoint (machine).
        endpoint: u32,
    },
    /// The router delivering to endpoint `endpoint`.
    Receive {
        /// The endpoint (machine).
        endpoint: u32,
    },
}

#[derive(Clone, Debug)]
enum Kind {
    /// Rooted at router 0: parent (router 0 is its own), link to the parent, depth.
    Tree {
        parent: Vec<u32>,
        parent_link: Vec<u32>,
        depth: Vec<u32>,
    },
    /// Row-major router distances and the adjacency (CSR: offsets, neighbours, link ids).
    Minimal {
        dist: Vec<u16>,
        offsets: Vec<u32>,
        nbr: Vec<u32>,
        link: Vec<u32>,
    },
}

/// The routes of every message between endpoints of one topology (see the module).
#[derive(Clone, Debug)]
pub struct LinkRoutes {
    routing: Routing,
    routers: usize,
    endpoint_router: Vec<u32>,
    ends: Vec<(u32, u32)>,
    kind: Kind,
}

impl LinkRoutes {
    /// The routes of `topo` under `routing` (the unique path on a tree, whatever `routing`);
    /// fails when two routers with endpoints are not connected.
    pub fn new(topo: &Topology, routing: Routing) -> Result<LinkRoutes, PhaseError> {
        let r = topo.num_routers();
        let ends: Vec<(u32, u32)> = topo.links().iter().map(|l| (l.a, l.b)).collect();
        let endpoint_router = topo.endpoint_routers().to_vec();
        let kind = match tree_kind(topo) {
            Some(k) => k,
            None => {
                let dm = router_distances(topo).map_err(PhaseError::Topology)?;
                let dist = dm.as_slice().to_vec();
                let with: Vec<usize> = (0..r)
                    .filter(|&x| !topo.router_endpoints(x).is_empty())
                    .collect();
                for &a in &with {
                    for &b in &with {
                        if dist[a * r + b] == u16::MAX {
                            return Err(PhaseError::Disconnected {
                                topology: topo.name().to_string(),
                                a: router_label(topo, a),
                                b: router_label(topo, b),
                            });
                        }
                    }
                }
                let (o, n, l) = topo.csr();
                Kind::Minimal {
                    dist,
                    offsets: o.to_vec(),
                    nbr: n.to_vec(),
                    link: l.to_vec(),
                }
            }
        };
        Ok(LinkRoutes {
            routing,
            routers: r,
            endpoint_router,
            ends,
            kind,
        })
    }

    /// The routing off trees.
    pub fn routing(&self) -> Routing {
        self.routing
    }

    /// True when the topology is a tree (unique paths).
    pub fn is_tree(&self) -> bool {
        matches!(self.kind, Kind::Tree { .. })
    }

    /// Number of endpoints (machines).
    pub fn num_endpoints(&self) -> usize {
        self.endpoint_router.len()
    }

    /// Number of directed links: 2 per router-to-router link and 2 per endpoint.
    pub fn num_directed_links(&self) -> usize {
        2 * (self.ends.len() + self.endpoint_router.len())
    }

    /// What directed link `id` joins.
    pub fn describe(&self, id: u32) -> DirectedLink {
        let l = self.ends.len() as u32;
        if id < 2 * l {
            let (a, b) = self.ends[(id / 2) as usize];
            let (from, to) = if id.is_multiple_of(2) { (a, b) } else { (b, a) };
            DirectedLink::Network {
                link: id / 2,
                from,
                to,
            }
        } else {
            let endpoint = (id - 2 * l) / 2;
            if id.is_multiple_of(2) {
                DirectedLink::Send { endpoint }
            } else {
                DirectedLink::Receive { endpoint }
            }
        }
    }

    /// `from->to` with the topology's router and endpoint names (`r3`, `e7` where it has none).
    pub fn name(&self, topo: &Topology, id: u32) -> String {
        let e = |x: u32| endpoint_label(topo, x as usize);
        let r = |x: u32| router_label(topo, x as usize);
        match self.describe(id) {
            DirectedLink::Network { from, to, .. } => format!("{}->{}", r(from), r(to)),
            DirectedLink::Send { endpoint } => {
                format!(
                    "{}->{}",
                    e(endpoint),
                    r(self.endpoint_router[endpoint as usize])
                )
            }
            DirectedLink::Receive { endpoint } => {
                format!(
                    "{}->{}",
                    r(self.endpoint_router[endpoint as usize]),
                    e(endpoint)
                )
            }
        }
    }

    /// The directed links of message `src → dst` (endpoints, `src != dst`), in path order.
    pub fn route(&self, src: u32, dst: u32) -> Vec<u32> {
        let mut out = Vec::new();
        self.route_into(src, dst, &mut out);
        out
    }

    /// As [`LinkRoutes::route`], into `out` (cleared first) to reuse its allocation.
    pub fn route_into(&self, src: u32, dst: u32, out: &mut Vec<u32>) {
        out.clear();
        let base = 2 * self.ends.len() as u32;
        out.push(base + 2 * src);
        let (rs, rd) = (
            self.endpoint_router[src as usize] as usize,
            self.endpoint_router[dst as usize] as usize,
        );
        match &self.kind {
            Kind::Tree {
                parent,
                parent_link,
                depth,
            } => {
                // The lowest common ancestor, then up from rs to it and down from it to rd.
                let (mut x, mut y) = (rs, rd);
                while depth[x] > depth[y] {
                    x = parent[x] as usize;
                }
                while depth[y] > depth[x] {
                    y = parent[y] as usize;
                }
                while x != y {
                    x = parent[x] as usize;
                    y = parent[y] as usize;
                }
                let lca = x;
                let mut x = rs;
                while x != lca {
                    let l = parent_link[x] as usize;
                    out.push(2 * l as u32 + u32::from(self.ends[l].0 != x as u32));
                    x = parent[x] as usize;
                }
                let down = (depth[rd] - depth[lca]) as usize;
                let at = out.len();
                out.resize(at + down, 0);
                let mut y = rd;
                for i in (0..down).rev() {
                    let l = parent_link[y] as usize;
                    let p = parent[y];
                    out[at + i] = 2 * l as u32 + u32::from(self.ends[l].0 != p);
                    y = p as usize;
                }
            }
            Kind::Minimal {
                dist,
                offsets,
                nbr,
                link,
            } => {
                let r = self.routers;
                let row = &dist[rd * r..(rd + 1) * r];
                let mut x = rs;
                // Mixed-radix digits of the destination pick among the minimal next hops.
                let mut v = dst as usize;
                while x != rd {
                    let want = row[x] - 1;
                    let (s, e) = (offsets[x] as usize, offsets[x + 1] as usize);
                    let closer = |j: &usize| row[nbr[*j] as usize] == want;
                    let j = match self.routing {
                        Routing::First => (s..e).find(closer),
                        Routing::DestinationDigits => {
                            let c = (s..e).filter(closer).count().max(1);
                            let pick = v % c;
                            v /= c;
                            (s..e).filter(closer).nth(pick)
                        }
                    }
                    .expect("a connected router has a neighbour one hop closer");
                    let l = link[j] as usize;
                    out.push(2 * l as u32 + u32::from(self.ends[l].0 != x as u32));
                    x = nbr[j] as usize;
                }
            }
        }
        out.push(base + 2 * dst + 1);
    }
}

/// Parent pointers from router 0 if the router graph is a tree.
fn tree_kind(topo: &Topology) -> Option<Kind> {
    let r = topo.num_routers();
    if r == 0 || topo.num_links() + 1 != r {
        return None;
    }
    let mut parent = vec![u32::MAX; r];
    let mut parent_link = vec![u32::MAX; r];
    let mut depth = vec![0u32; r];
    parent[0] = 0;
    let mut stack = vec![0usize];
    let mut seen = 1;
    while let Some(x) = stack.pop() {
        let (nbr, lk) = topo.adjacency(x);
        for (&y, &l) in nbr.iter().zip(lk) {
            let y = y as usize;
            if parent[y] == u32::MAX {
                parent[y] = x as u32;
                parent_link[y] = l;
                depth[y] = depth[x] + 1;
                seen += 1;
                stack.push(y);
            }
        }
    }
    (seen == r).then_some(Kind::Tree {
        parent,
        parent_link,
        depth,
    })
}

/// A router's name, or `r<index>`.
pub(crate) fn router_label(topo: &Topology, r: usize) -> String {
    topo.router_name(r)
        .map(str::to_string)
        .unwrap_or_else(|| format!("r{r}"))
}

/// An endpoint's name, or `e<index>`.
pub(crate) fn endpoint_label(topo: &Topology, e: usize) -> String {
    topo.endpoint_name(e)
        .map(str::to_string)
        .unwrap_or_else(|| format!("e{e}"))
}
