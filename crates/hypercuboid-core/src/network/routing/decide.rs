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
                    let jm = self.pick(routes, occ, rng, r, routes.min_ports(r, dr));
                    let qm = occ[routes.port(r, jm as usize)];
                    let below = self.algorithm == Algorithm::UgalThreshold
                        && (qm as f64) < self.threshold_pkts;
                    let mut take = None;
                    if !below {
                        let lm = routes.dist(r, dr);
                        let mut best = qm as f64;
                        for _ in 0..self.candidates {
                            let x = Self::intermediate(routes, rng, r, dr);
                            let j = self.pick(routes, occ, rng, r, routes.min_ports(r, x));
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
        let inter = p.intermediate();
        if let Some(x) = inter {
            if !p.passed() && r == x as usize {
                p.set_passed();
            }
        }
        let passed = p.passed();
        if r == dr && (inter.is_none() || passed) {
            (routes.endpoint_port(p.dst() as usize) as u32, 0)
        } else {
            let target = match inter {
                Some(x) if !passed => x as usize,
                _ => dr,
            };
            let j = self.pick(routes, occ, rng, r, routes.min_ports(r, target));
            (
                routes.port(r, j as usize) as u32,
                self.scheme.vc(p.hops(), passed),
            )
        }
    }
}
