//! The decisions a routing takes while packets move ([`Decider`]), and what it reads and
//! writes of a packet ([`RouteState`]).

use super::{Algorithm, MinChoice, Routes, VcScheme};
use crate::network::rng::SplitMix64;

/// What routing reads and writes of a packet in flight.
pub trait RouteState {
    /// The destination endpoint.
    fn dst(&self) -> u32;
    /// The intermediate router of an indirect path (`None`: a minimal path).
    fn intermediate(&self) -> Option<u32>;
    /// Sends the packet through intermediate router `x`.
    fn set_intermediate(&mut self, x: u32);
    /// Router-to-router hops taken so far.
    fn hops(&self) -> u8;
    /// True once the packet has reached its intermediate router.
    fn passed(&self) -> bool;
    /// Records that the packet has reached its intermediate router.
    fn set_passed(&mut self);
    /// Records that the packet takes an indirect path (for the report's indirect fraction).
    fn set_indirect(&mut self);
}

/// The decisions a routing takes while packets move: the output port and VC of a packet at a
/// router, Valiant's intermediate router, UGAL's choice between the minimal path and indirect
/// candidates, and the choice among several minimal next hops.
///
/// It holds the routing's options; it reads the [`Routes`] tables and the number of packets
/// in every output buffer (what UGAL and lowest-cost choices compare), and draws every random
/// choice at router r from r's own stream, which the caller passes in. The order of the draws
/// at a router is part of the contract (it fixes the results for a seed):
///
/// * at the source router of an indirect routing, INR draws its intermediate router (one
///   draw per try until it is neither the source nor the destination router); UGAL picks the
///   minimal first hop, then for each of its `n` candidates draws an intermediate router and
///   picks that path's first hop;
/// * picking among several minimal ports draws one number with `choice=random`, and with
///   `choice=lowest` one number per port tied with the best so far (reservoir sampling over
///   the ties, in port order); a single minimal port draws nothing.
///
/// The packet engine keeps a packet's routing state packed in its packet record and exposes it
/// through [`RouteState`].
#[derive(Clone, Debug, PartialEq)]
pub struct Decider {
    algorithm: Algorithm,
    choice: MinChoice,
    candidates: u32,
    /// UGAL-th: the minimal path is taken below this many packets in its output buffer.
    threshold_pkts: f64,
    scheme: VcScheme,
}

impl Decider {
    /// The decisions of `routes`' routing, whose output buffers hold `buffer_packets` packets
    /// (UGAL-th's threshold is a percentage of that).
    pub fn new(routes: &Routes, buffer_packets: u32) -> Decider {
        let spec = routes.spec();
        Decider {
            algorithm: spec.algorithm,
            choice: spec.choice,
            candidates: spec.candidates,
            threshold_pkts: spec.threshold / 100.0 * buffer_packets as f64,
            scheme: routes.scheme(),
        }
    }

    /// Picks one of the minimal local ports `ports` of router `r`, given the packets `occ[p]`
    /// in the output buffer of every port `p`; `rng` is router `r`'s stream.
    #[inline(always)]
    pub fn pick(
        &self,
        routes: &Routes,
        occ: &[u32],
        rng: &mut SplitMix64,
        r: usize,
        ports: &[u16],
    ) -> u16 {
        // Most hops have a single minimal port: decided here, without a call.
        if ports.len() == 1 {
            return ports[0];
        }
        self.pick_among(routes, occ, rng, r, ports)
    }

    /// [`Decider::pick`] among the minimal ports of router `r` toward target router `t`
    /// (another router with endpoints): a single one from one load of the first-port table
    /// ([`Routes::single_min_port`]), without building the list.
    #[inline(always)]
    fn pick_toward(
        &self,
        routes: &Routes,
        occ: &[u32],
        rng: &mut SplitMix64,
        r: usize,
        t: usize,
    ) -> u16 {
        debug_assert_ne!(r, t);
        match routes.single_min_port(r, t) {
            Some(j) => j,
            None => self.pick_among(routes, occ, rng, r, routes.min_ports(r, t)),
        }
    }

    /// [`Decider::pick`] among two ports or more.
    #[inline(never)]
    fn pick_among(
        &self,
        routes: &Routes,
        occ: &[u32],
        rng: &mut SplitMix64,
        r: usize,
        ports: &[u16],
    ) -> u16 {
        match self.choice {
            MinChoice::Random => ports[rng.below(ports.len() as u64) as usize],
            MinChoice::LowestCost => {
                let mut best = ports[0];
                let mut best_q = u32::MAX;
                let mut ties = 0u64;
                for &j in ports {
                    let q = occ[routes.port(r, j as usize)];
                    if q < best_q {
                        best_q = q;
                        best = j;
                        ties = 1;
                    } else if q == best_q {
                        ties += 1;
                        if rng.below(ties) == 0 {
                            best = j;
                        }
                    }
                }
                best
            }
        }
    }

    /// A uniformly random intermediate router other than `a` and `b`, drawn from `rng` (router
    /// `a`'s stream).
    #[inline]
    pub fn intermediate(routes: &Routes, rng: &mut SplitMix64, a: usize, b: usize) -> usize {
        let t = routes.targets();
        loop {
            let x = t[rng.below(t.len() as u64) as usize] as usize;
            if x != a && x != b {
                return x;
            }
        }
    }

    /// The output port (global id) and VC of packet `p`, whose head is at router `r` and
    /// whose destination endpoint is attached to router `dr`; `source` when it has just been
    /// injected (the UGAL / Valiant decision is taken there, and recorded in `p`). `occ[q]` is
    /// the number of packets in the output buffer of port `q`; `rng` is router `r`'s stream.
    ///
    /// Inlined into the caller: the packet engine calls it once per packet and router, and
    /// its arguments then stay in registers.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn route<P: RouteState>(
        &self,
        routes: &Routes,
        occ: &[u32],
        rng: &mut SplitMix64,
        r: usize,
        dr: usize,
        source: bool,
        p: &mut P,
    ) -> (u32, u8) {
        if source && r != dr {
            match self.algorithm {
                Algorithm::Min => {}
                Algorithm::Inr => {
                    let x = Self::intermediate(routes, rng, r, dr) as u32;
                    p.set_intermediate(x);
                    p.set_indirect();
                }
                Algorithm::Ugal | Algorithm::UgalThreshold => {
                    let jm = self.pick_toward(routes, occ, rng, r, dr);
                    let qm = occ[routes.port(r, jm as usize)];
                    let below = self.algorithm == Algorithm::UgalThreshold
                        && (qm as f64) < self.threshold_pkts;
                    let mut take = None;
                    if !below {
                        let lm = routes.dist(r, dr);
                        let mut best = qm as f64;
                        for _ in 0..self.candidates {
                            let x = Self::intermediate(routes, rng, r, dr);
                            let j = self.pick_toward(routes, occ, rng, r, x);
                            let q = occ[routes.port(r, j as usize)];
                            let li = routes.dist(r, x) + routes.dist(x, dr);
                            let cost = routes.ugal_factor(li, lm) * q as f64;
                            if cost < best {
                                best = cost;
                                take = Some((x, j));
                            }
                        }
                    }
                    let j = match take {
                        Some((x, j)) => {
                            p.set_intermediate(x as u32);
                            p.set_indirect();
                            j
                        }
                        None => jm,
                    };
                    return (routes.port(r, j as usize) as u32, self.scheme.vc(0, false));
                }
            }
        }
        let hop = Hop::of(r, dr, p);
        if hop.reach {
            p.set_passed();
        }
        if hop.target == r {
            (routes.endpoint_port(p.dst() as usize) as u32, 0)
        } else {
            let j = self.pick_toward(routes, occ, rng, r, hop.target);
            (
                routes.port(r, j as usize) as u32,
                self.scheme.vc(p.hops(), hop.passed),
            )
        }
    }

    /// [`Decider::route`] when its decision draws nothing and reads no buffer: a hop with a
    /// single minimal port (or the delivery at the destination router) that is not a source
    /// decision of an indirect routing. Then it returns the same port and VC and records the
    /// same in `p` as [`Decider::route`] would, at any time and whatever the buffers hold;
    /// otherwise it returns `None` and leaves `p` as it was. The packet engine routes such a
    /// hop when the packet enters the router's input, before its crossing.
    #[inline(always)]
    pub fn route_fixed<P: RouteState>(
        &self,
        routes: &Routes,
        r: usize,
        dr: usize,
        source: bool,
        p: &mut P,
    ) -> Option<(u32, u8)> {
        if source && r != dr && self.algorithm != Algorithm::Min {
            return None;
        }
        let hop = Hop::of(r, dr, p);
        let out = if hop.target == r {
            (routes.endpoint_port(p.dst() as usize) as u32, 0)
        } else {
            let j = routes.single_min_port(r, hop.target)?;
            (
                routes.port(r, j as usize) as u32,
                self.scheme.vc(p.hops(), hop.passed),
            )
        };
        if hop.reach {
            p.set_passed();
        }
        Some(out)
    }
}

/// What a hop past the source decision does, from the packet's state before it: the one
/// place [`Decider::route`] and [`Decider::route_fixed`] read it.
struct Hop {
    /// The hop reaches the packet's intermediate router (`set_passed` is due).
    reach: bool,
    /// The intermediate router is behind the packet, counting this hop.
    passed: bool,
    /// The router to head for minimally: the intermediate router until it is passed, then
    /// the destination's. The hop delivers when that is this router (an intermediate
    /// router is never the target at itself: reaching it passes it).
    target: usize,
}

impl Hop {
    /// The hop at router `r` of packet `p`, whose destination endpoint is at router `dr`.
    #[inline(always)]
    fn of<P: RouteState>(r: usize, dr: usize, p: &P) -> Hop {
        let inter = p.intermediate();
        let reach = matches!(inter, Some(x) if !p.passed() && r == x as usize);
        let passed = reach || p.passed();
        let target = match inter {
            Some(x) if !passed => x as usize,
            _ => dr,
        };
        debug_assert_eq!(target == r, r == dr && (inter.is_none() || passed));
        Hop {
            reach,
            passed,
            target,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::routing::RoutingSpec;
    use crate::topology::generate;

    /// A packet's routing state, as plain fields.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct St {
        dst: u32,
        inter: Option<u32>,
        hops: u8,
        passed: bool,
        indirect: bool,
    }

    impl RouteState for St {
        fn dst(&self) -> u32 {
            self.dst
        }
        fn intermediate(&self) -> Option<u32> {
            self.inter
        }
        fn set_intermediate(&mut self, x: u32) {
            self.inter = Some(x);
        }
        fn hops(&self) -> u8 {
            self.hops
        }
        fn passed(&self) -> bool {
            self.passed
        }
        fn set_passed(&mut self) {
            self.passed = true;
        }
        fn set_indirect(&mut self) {
            self.indirect = true;
        }
    }

    /// On every (router, destination endpoint) of the topology, for a source and a transit
    /// hop, minimal and through every fourth target as intermediate (before and after it):
    /// where `route_fixed` decides, it gives `route`'s port and VC and packet state, and
    /// `route` draws nothing there; where it does not, it leaves the packet as it was.
    /// Returns (decided, not decided).
    fn agree(topo: &str, routing: &str) -> (usize, usize) {
        let topo = generate(topo).unwrap();
        let routes = Routes::new(&topo, &RoutingSpec::parse(routing).unwrap()).unwrap();
        let d = Decider::new(&routes, 8);
        // Occupancies that make lowest-cost choices and UGAL differ from port order.
        let occ: Vec<u32> = (0..routes.num_ports() as u32)
            .map(|p| p.wrapping_mul(2_654_435_761) % 7)
            .collect();
        let ep_router = topo.endpoint_routers();
        let mut inters = vec![None];
        inters.extend(routes.targets().iter().step_by(4).map(|&x| Some(x)));
        let (mut fixed, mut open) = (0, 0);
        for r in 0..routes.num_routers() {
            for (e, &dr) in ep_router.iter().enumerate() {
                let dr = dr as usize;
                for source in [true, false] {
                    for &inter in &inters {
                        for passed in [false, true] {
                            if inter.is_none() && passed {
                                continue;
                            }
                            let st = St {
                                dst: e as u32,
                                inter,
                                hops: if source { 0 } else { 1 },
                                passed,
                                indirect: inter.is_some(),
                            };
                            let mut a = st;
                            let mut rng_a = SplitMix64::stream(7, r as u64);
                            let ra = d.route(&routes, &occ, &mut rng_a, r, dr, source, &mut a);
                            let mut b = st;
                            match d.route_fixed(&routes, r, dr, source, &mut b) {
                                Some(rb) => {
                                    fixed += 1;
                                    assert_eq!(rb, ra, "{routing} r={r} e={e} {st:?}");
                                    assert_eq!(b, a, "{routing} r={r} e={e} {st:?}");
                                    let mut rng_b = SplitMix64::stream(7, r as u64);
                                    assert_eq!(
                                        rng_a.next_u64(),
                                        rng_b.next_u64(),
                                        "route drew at a fixed hop: {routing} r={r} e={e}"
                                    );
                                }
                                None => {
                                    open += 1;
                                    assert_eq!(b, st, "{routing} r={r} e={e}");
                                }
                            }
                        }
                    }
                }
            }
        }
        (fixed, open)
    }

    #[test]
    fn fixed_routes_are_the_routes() {
        // Slim Fly (q = 5): minimal paths mostly single; a fat tree and a torus: several
        // minimal ports on most hops; a dragonfly.
        for topo in [
            "slimfly:q=5",
            "fattree:k=4,levels=3",
            "torus:dims=4x4",
            "dragonfly:p=2",
        ] {
            for routing in ["min", "min:choice=lowest", "inr", "ugal", "ugal-th:t=20"] {
                let (fixed, open) = agree(topo, routing);
                assert!(fixed > 0, "{topo} {routing}: no fixed hop");
                assert!(
                    open > 0 || topo == "slimfly:q=5",
                    "{topo} {routing}: all fixed"
                );
            }
        }
        // The phase VC assignment (where minimal routes are acyclic): the VC of a hop depends
        // on whether the packet has passed its intermediate router.
        for topo in ["fattree:k=4,levels=3", "mlfm:h=4", "fullmesh:n=8"] {
            for routing in ["inr:vcs=phase", "ugal:vcs=phase,choice=lowest"] {
                let (fixed, open) = agree(topo, routing);
                assert!(
                    fixed > 0 && open > 0,
                    "{topo} {routing}: {fixed} fixed, {open} open"
                );
            }
        }
    }

    #[test]
    fn fixed_routes_exactly_where_nothing_is_drawn() {
        // Slim Fly q = 5, MIN: every router pair at distance 1 or 2 has a single minimal
        // port (the graph has girth 5), so every hop is fixed; UGAL's and Valiant's source
        // decisions away from the destination router are not.
        let (fixed, open) = agree("slimfly:q=5", "min");
        assert_eq!(open, 0);
        let (ufixed, uopen) = agree("slimfly:q=5", "ugal");
        assert_eq!(ufixed + uopen, fixed);
        let topo = generate("slimfly:q=5").unwrap();
        let routes = Routes::new(&topo, &RoutingSpec::parse("ugal").unwrap()).unwrap();
        let ep_router = topo.endpoint_routers();
        let away = (0..routes.num_routers())
            .flat_map(|r| ep_router.iter().map(move |&dr| (r, dr as usize)))
            .filter(|&(r, dr)| r != dr)
            .count();
        // Per (router, endpoint) pair away from its router, the source hop with each
        // intermediate choice (none, every fourth target, passed or not) is open.
        let per_pair = 1 + 2 * routes.targets().iter().step_by(4).count();
        assert_eq!(uopen, away * per_pair);
    }
}
