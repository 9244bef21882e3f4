//! Channel dependency graphs (Dally and Seitz; Dally and Towles, section 14.1): a node per
//! virtual channel of a directed router-to-router link, an edge c₁ → c₂ where a packet holding
//! c₁ may request c₂ next. A routing is deadlock-free if this graph is acyclic.
//!
//! The graph is built from the same tables and VC function the engine uses
//! ([`Routes::min_ports`], [`VcScheme::vc`](super::VcScheme::vc)). A packet's next channel depends only on its
//! router, its current target (intermediate or destination router), its hop count and whether
//! it has passed its intermediate router, so the builder propagates, per target, the set of
//! hop counts a packet can have at each router (a bitmask) from the routers where such packets
//! start, in decreasing distance to the target, and adds an edge from every channel that can
//! bring a packet with `h − 1` hops into a router to every channel that packet can take next:
//!
//! * minimal packets (MIN, and UGAL's minimal choice) start at every router with endpoints
//!   with 0 hops toward every other such router;
//! * indirect packets (INR, UGAL) start likewise toward their intermediate router (phase 0); at
//!   the intermediate router `i` they switch to phase 1 toward every destination other than
//!   `i`, with the hop counts they arrived with, and the channels that brought them into `i`
//!   gain edges to the phase-1 channels leaving `i`.
//!
//! Phase 1 leaves a packet's source out of the state, so the graph also holds the dependencies
//! of a packet whose destination is its own source router; that only adds edges, so an acyclic
//! result still proves deadlock freedom.

use super::{Algorithm, Channel, Routes, VcScheme};
use rustc_hash::FxHashSet;

/// A channel dependency graph.
#[derive(Clone, Debug)]
pub struct Cdg {
    vcs: usize,
    channels: Vec<Channel>,
    /// Dependency edges `(from channel id, to channel id)`, sorted.
    edges: Vec<(u32, u32)>,
}

impl Cdg {
    /// Number of channel ids (`ports × VCs`; endpoint ports' ids are unused).
    pub fn num_channels(&self) -> usize {
        self.channels.len()
    }

    /// VCs per port.
    pub fn num_vcs(&self) -> usize {
        self.vcs
    }

    /// The dependency edges as channel-id pairs, sorted.
    pub fn edges(&self) -> &[(u32, u32)] {
        &self.edges
    }

    /// The channel of an id.
    pub fn channel(&self, id: u32) -> Channel {
        self.channels[id as usize]
    }

    /// Channels that some dependency touches.
    pub fn used_channels(&self) -> usize {
        let mut s = FxHashSet::default();
        for &(a, b) in &self.edges {
            s.insert(a);
            s.insert(b);
        }
        s.len()
    }

    /// A cycle of channels, if the graph has one (`None` proves the routing deadlock-free).
    pub fn find_cycle(&self) -> Option<Vec<Channel>> {
        let n = self.channels.len();
        let mut off = vec![0u32; n + 1];
        for &(a, _) in &self.edges {
            off[a as usize + 1] += 1;
        }
        for i in 0..n {
            off[i + 1] += off[i];
        }
        let adj: Vec<u32> = self.edges.iter().map(|&(_, b)| b).collect(); // edges sorted by a
                                                                          // Iterative DFS, colours 0 white, 1 on stack, 2 done.
        let mut colour = vec![0u8; n];
        let mut stack: Vec<(u32, u32)> = Vec::new();
        for s in 0..n {
            if colour[s] != 0 || off[s] == off[s + 1] {
                continue;
            }
            colour[s] = 1;
            stack.push((s as u32, off[s]));
            while let Some(top) = stack.last_mut() {
                let (v, ref mut next) = *top;
                if *next < off[v as usize + 1] {
                    let w = adj[*next as usize];
                    *next += 1;
                    match colour[w as usize] {
                        0 => {
                            colour[w as usize] = 1;
                            stack.push((w, off[w as usize]));
                        }
                        1 => {
                            let start = stack.iter().position(|&(x, _)| x == w).unwrap();
                            return Some(
                                stack[start..]
                                    .iter()
                                    .map(|&(x, _)| self.channels[x as usize])
                                    .collect(),
                            );
                        }
                        _ => {}
                    }
                } else {
                    colour[v as usize] = 2;
                    stack.pop();
                }
            }
        }
        None
    }
}

/// Which packets a propagation pass follows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Toward the destination without an intermediate router.
    Minimal,
    /// Toward the intermediate router.
    Phase0,
    /// From the intermediate router toward the destination.
    Phase1,
}

/// Builds the channel dependency graph of `algorithm` with the tables and VC scheme of
/// `routes` (the routing spec's own algorithm is not consulted, so a probe can ask for MIN).
pub fn build(routes: &Routes, algorithm: Algorithm) -> Cdg {
    build_as(routes, algorithm, routes.scheme() != VcScheme::Hop)
}

/// [`build`], following packets by hop count (`hop_free` false) or, when the VC of a channel
/// does not depend on the hop (`Single`, `Phase`), by whether any packet crosses it at all.
///
/// Packets are followed toward each target by the set of hop counts they can have at each
/// router (a bit mask). A channel `b → c` at hop `h` depends on `a → b` at `h − 1` when `a`
/// carries hop `h − 1`; whichever hop a packet has at `a`, it reaches `b` at the next one, so
/// when VCs ignore hops the union over `h` of these edges is the set of `a → b` from every `a`
/// carrying any hop: one pass over the predecessors instead of one per hop count (the one-VC
/// probe of `vcs=auto` on a 40 × 40 torus, with paths of up to 40 hops, does 20 times less).
fn build_as(routes: &Routes, algorithm: Algorithm, hop_free: bool) -> Cdg {
    let vcs = routes.num_vcs();
    let np = routes.num_ports();
    let scheme = routes.scheme();
    debug_assert!(!hop_free || scheme != VcScheme::Hop);
    let mut channels = vec![
        Channel {
            from: u32::MAX,
            to: u32::MAX,
            vc: 0
        };
        np * vcs
    ];
    for p in 0..np {
        if let Some((a, b)) = routes.port_ends(p) {
            for v in 0..vcs {
                channels[p * vcs + v] = Channel {
                    from: a,
                    to: b,
                    vc: v as u8,
                };
            }
        }
    }
    let r = routes.num_routers();
    let targets = routes.targets().to_vec();
    let mut edges: FxHashSet<u64> = FxHashSet::default();
    let chan = |port: usize, hops: u32, passed: bool| -> Option<u32> {
        let v = scheme.vc(hops.min(255) as u8, passed) as usize;
        (v < vcs).then_some((port * vcs + v) as u32)
    };
    // Routers by decreasing distance to t.
    let order_for = |t: usize, order: &mut Vec<u32>| {
        order.clear();
        order.extend(0..r as u32);
        order.sort_by_key(|&x| std::cmp::Reverse(routes.dist(x as usize, t)));
    };
    let mut order = Vec::with_capacity(r);
    let mut mask = vec![0u64; r];
    // arrivals[i]: (port into i, hops at i) of phase-0 packets reaching intermediate i.
    let mut arrivals: Vec<Vec<(u32, u32)>> = vec![Vec::new(); r];
    let modes: &[Mode] = match algorithm {
        Algorithm::Min => &[Mode::Minimal],
        Algorithm::Inr => &[Mode::Phase0, Mode::Phase1],
        Algorithm::Ugal | Algorithm::UgalThreshold => &[Mode::Minimal, Mode::Phase0, Mode::Phase1],
    };
    let mut missing_vc = false;
    for &mode in modes {
        let passed = mode == Mode::Phase1;
        for &t in &targets {
            let t = t as usize;
            order_for(t, &mut order);
            mask.fill(0);
            match mode {
                Mode::Minimal | Mode::Phase0 => {
                    for &s in &targets {
                        if s as usize != t {
                            mask[s as usize] |= 1;
                        }
                    }
                }
                Mode::Phase1 => {
                    for &i in &targets {
                        if i as usize != t {
                            for &(_, h) in &arrivals[i as usize] {
                                mask[i as usize] |= 1u64 << h.min(63);
                            }
                        }
                    }
                }
            }
            for &b in &order {
                let b = b as usize;
                if mask[b] == 0 || b == t {
                    continue;
                }
                let db = routes.dist(b, t);
                let outs = routes.min_ports(b, t);
                // Predecessors: neighbours one step farther from t that carry a packet here.
                let deg = routes.degree(b);
                for &j in outs {
                    let out_port = routes.port(b, j as usize);
                    let c = routes.port_nbr[out_port] as usize;
                    // Hop-free: bit 1 stands for every hop > 0.
                    mask[c] |= if hop_free { 2 } else { mask[b] << 1 };
                    let mut m = mask[b];
                    if hop_free {
                        // Hop 0 (packets starting here) and one hop that stands for all others.
                        let arrived = m & !1;
                        m = (m & 1) | (arrived & arrived.wrapping_neg());
                    }
                    while m != 0 {
                        let h = m.trailing_zeros();
                        m &= m - 1;
                        let Some(to) = chan(out_port, h, passed) else {
                            missing_vc = true;
                            continue;
                        };
                        if h == 0 {
                            continue;
                        }
                        for k in 0..deg {
                            let back = routes.port(b, k);
                            let a = routes.port_nbr[back] as usize;
                            let carried = if hop_free {
                                mask[a] != 0
                            } else {
                                mask[a] & (1u64 << (h - 1)) != 0
                            };
                            if routes.dist(a, t) != db + 1 || !carried {
                                continue;
                            }
                            // a's port toward b must be a minimal hop of a (it is: one step
                            // closer to t), and carry hop h - 1.
                            let in_port = routes.port_peer[back] as usize;
                            if let Some(from) = chan(in_port, h - 1, passed) {
                                edges.insert(((from as u64) << 32) | to as u64);
                            }
                        }
                        if mode == Mode::Phase1 {
                            // Packets switching phase at b (b is their intermediate).
                            for &(in_port, ha) in &arrivals[b] {
                                if ha == h || hop_free {
                                    if let Some(from) = chan(in_port as usize, h - 1, false) {
                                        edges.insert(((from as u64) << 32) | to as u64);
                                    }
                                }
                            }
                        }
                    }
                }
            }
            if mode == Mode::Phase0 {
                // Record arrivals at the intermediate t.
                let deg = routes.degree(t);
                for k in 0..deg {
                    let back = routes.port(t, k);
                    let a = routes.port_nbr[back] as usize;
                    if routes.dist(a, t) == 1 && mask[a] != 0 {
                        let in_port = routes.port_peer[back];
                        let mut m = mask[a];
                        while m != 0 {
                            let h = m.trailing_zeros();
                            m &= m - 1;
                            arrivals[t].push((in_port, h + 1));
                        }
                    }
                }
            }
        }
    }
    debug_assert!(!missing_vc, "a hop needs a VC beyond the routing's count");
    let mut edges: Vec<(u32, u32)> = edges
        .into_iter()
        .map(|e| ((e >> 32) as u32, e as u32))
        .collect();
    edges.sort_unstable();
    Cdg {
        vcs,
        channels,
        edges,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::RoutingSpec;
    use crate::topology::generate;

    /// With VCs that ignore hops, following packets by "any hop" gives the edges that following
    /// them hop by hop gives, for every algorithm (paths here are shorter than 63 hops).
    #[test]
    fn hop_free_edges_are_the_union_over_hops() {
        let topologies = [
            "slimfly:q=5",
            "mlfm:h=3,l=2,p=2",
            "oft:k=4",
            "fattree:k=4,levels=3",
            "fullmesh:n=5,p=2",
            "hyperx:s=3x3,p=2",
            "dragonfly:p=1",
            "torus:dims=5x4",
            "mesh:dims=3x4",
        ];
        let mut compared = 0;
        for spec in topologies {
            let t = generate(spec).unwrap();
            let routes = Routes::new(&t, &RoutingSpec::parse("ugal:vcs=hop").unwrap()).unwrap();
            for (scheme, vcs) in [(VcScheme::Single, 1), (VcScheme::Phase, 2)] {
                let r = routes.with_scheme(scheme, vcs);
                for alg in [Algorithm::Min, Algorithm::Inr, Algorithm::Ugal] {
                    let fast = build_as(&r, alg, true);
                    let slow = build_as(&r, alg, false);
                    assert_eq!(fast.edges, slow.edges, "{spec} {scheme:?} {alg:?}");
                    compared += fast.edges.len();
                }
            }
        }
        assert!(compared > 10_000, "{compared}");
    }
}
