//! Bisection bandwidth: a cut of the network into two halves with exactly ⌊N/2⌋ and ⌈N/2⌉
//! endpoints, as small as we can find.
//!
//! A partitioner (METIS from Python, or [`bisect`]'s own starts) proposes a router partition;
//! partitioners balance vertex weights only approximately (METIS may give 27/23 routers of a
//! Slim Fly q = 5), so [`refine_bisection`] repairs it:
//!
//! 1. **balance**: while the endpoint split is off by more than N mod 2, move the router from
//!    the heavy side that reduces the imbalance with the best cut gain;
//! 2. **refine**: Fiduccia–Mattheyses passes whose moves keep the endpoint split exactly:
//!    swapping two routers with the same number of endpoints across the cut, or moving a
//!    router without endpoints; each pass makes the best move available (even a worsening one),
//!    locks the moved routers and finally rolls back to the best prefix; passes repeat while
//!    they improve the cut;
//! 3. **detach**: if routers alone cannot balance the endpoints (e.g. an odd number of
//!    routers with equal endpoints), single endpoints move to the light side and their links
//!    are cut.
//!
//! The cut bandwidth is the sum of the bandwidths of cut links (router links and endpoint
//! links); per endpoint it is divided by ⌊N/2⌋ times the mean endpoint-link bandwidth, i.e.
//! expressed in link bandwidths b as the seed's section 2.3.2 does (1.0 for a full-bisection
//! fat tree).

use super::error::TopologyError;
use super::Topology;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

/// An exact endpoint bisection.
#[derive(Clone, Debug, PartialEq)]
pub struct Bisection {
    /// Side of every router (`false` = side 0).
    pub router_side: Vec<bool>,
    /// Side of every endpoint (normally its router's).
    pub endpoint_side: Vec<bool>,
    /// Endpoints on side 0 and side 1 (⌊N/2⌋ and ⌈N/2⌉ in some order).
    pub endpoints: [usize; 2],
    /// Routers on side 0 and side 1.
    pub routers: [usize; 2],
    /// Router-to-router links cut.
    pub cut_links: usize,
    /// Endpoint links cut (endpoints placed apart from their router).
    pub cut_endpoint_links: usize,
    /// Total bandwidth of the cut links, Gb/s.
    pub cut_bandwidth_gbps: f64,
    /// Cut bandwidth per endpoint of the smaller half, in endpoint-link bandwidths.
    pub per_endpoint: f64,
}

const EPS: f64 = 1e-9;

struct State<'a> {
    topo: &'a Topology,
    w: Vec<u64>,
    side: Vec<bool>,
    gain: Vec<f64>,
    ep: [u64; 2],
}

impl<'a> State<'a> {
    fn new(topo: &'a Topology, side: Vec<bool>) -> Self {
        let r = topo.num_routers();
        let w: Vec<u64> = (0..r)
            .map(|x| topo.router_endpoints(x).len() as u64)
            .collect();
        let mut ep = [0u64; 2];
        for x in 0..r {
            ep[side[x] as usize] += w[x];
        }
        let mut s = State {
            topo,
            w,
            side,
            gain: vec![0.0; r],
            ep,
        };
        for x in 0..r {
            s.gain[x] = s.compute_gain(x);
        }
        s
    }

    /// Cut reduction if `x` switched sides.
    fn compute_gain(&self, x: usize) -> f64 {
        let (nbr, lk) = self.topo.adjacency(x);
        let links = self.topo.links();
        let mut g = 0.0;
        for (&y, &l) in nbr.iter().zip(lk) {
            let bw = links[l as usize].bandwidth_gbps;
            if self.side[y as usize] != self.side[x] {
                g += bw;
            } else {
                g -= bw;
            }
        }
        g
    }

    fn imbalance(&self) -> u64 {
        self.ep[0].abs_diff(self.ep[1])
    }

    fn flip(&mut self, x: usize) {
        let from = self.side[x] as usize;
        self.ep[from] -= self.w[x];
        self.ep[1 - from] += self.w[x];
        self.side[x] = !self.side[x];
        self.gain[x] = -self.gain[x];
        let (nbr, lk) = self.topo.adjacency(x);
        let links = self.topo.links();
        for (&y, &l) in nbr.iter().zip(lk) {
            let y = y as usize;
            let bw = links[l as usize].bandwidth_gbps;
            // Before the flip y and x were on the same side iff now they differ.
            if self.side[y] != self.side[x] {
                self.gain[y] += 2.0 * bw;
            } else {
                self.gain[y] -= 2.0 * bw;
            }
        }
    }

    /// Bandwidth of links between x and y.
    fn between(&self, x: usize, y: usize) -> f64 {
        let (nbr, lk) = self.topo.adjacency(x);
        let links = self.topo.links();
        nbr.iter()
            .zip(lk)
            .filter(|(&z, _)| z as usize == y)
            .map(|(_, &l)| links[l as usize].bandwidth_gbps)
            .sum()
    }

    /// Phase 1: greedy moves that reduce the endpoint imbalance.
    fn balance(&mut self, target: u64) {
        while self.imbalance() > target {
            let heavy = self.ep[1] > self.ep[0];
            let imb = self.imbalance();
            let mut best: Option<(f64, usize)> = None;
            for x in 0..self.side.len() {
                if self.side[x] != heavy || self.w[x] == 0 {
                    continue;
                }
                // New imbalance |imb - 2w|.
                if imb.abs_diff(2 * self.w[x]) >= imb {
                    continue;
                }
                if best.is_none_or(|(g, _)| self.gain[x] > g + EPS) {
                    best = Some((self.gain[x], x));
                }
            }
            match best {
                Some((_, x)) => self.flip(x),
                None => break,
            }
        }
    }

    /// One FM pass of balance-preserving moves; returns the cut improvement kept.
    fn pass(&mut self, max_bad: usize) -> f64 {
        let r = self.side.len();
        let mut locked = vec![false; r];
        let mut classes: HashMap<u64, usize> = HashMap::new();
        for &w in &self.w {
            if w > 0 {
                let n = classes.len();
                classes.entry(w).or_insert(n);
            }
        }
        let nc = classes.len();
        let class_of: Vec<usize> = self
            .w
            .iter()
            .map(|w| classes.get(w).copied().unwrap_or(usize::MAX))
            .collect();
        let mut moves: Vec<(usize, Option<usize>)> = Vec::new();
        let (mut cum, mut best_cum, mut best_len) = (0.0f64, 0.0f64, 0usize);
        const TOP: usize = 3;
        loop {
            // Best single move of a router without endpoints, and top candidates per class and
            // side for swaps.
            let mut single: Option<(f64, usize)> = None;
            let mut top: Vec<[Vec<(f64, usize)>; 2]> = vec![[Vec::new(), Vec::new()]; nc];
            for x in 0..r {
                if locked[x] {
                    continue;
                }
                let g = self.gain[x];
                if self.w[x] == 0 {
                    if single.is_none_or(|(b, _)| g > b + EPS) {
                        single = Some((g, x));
                    }
                    continue;
                }
                let t = &mut top[class_of[x]][self.side[x] as usize];
                if t.len() < TOP || g > t[TOP - 1].0 + EPS {
                    let pos = t.iter().position(|&(b, _)| g > b + EPS).unwrap_or(t.len());
                    t.insert(pos, (g, x));
                    t.truncate(TOP);
                }
            }
            let mut best: Option<(f64, usize, Option<usize>)> = single.map(|(g, x)| (g, x, None));
            for t in &top {
                for &(ga, a) in &t[0] {
                    for &(gb, b) in &t[1] {
                        let g = ga + gb - 2.0 * self.between(a, b);
                        if best.is_none_or(|(bg, _, _)| g > bg + EPS) {
                            best = Some((g, a, Some(b)));
                        }
                    }
                }
            }
            let Some((g, a, b)) = best else { break };
            self.flip(a);
            locked[a] = true;
            if let Some(b) = b {
                self.flip(b);
                locked[b] = true;
            }
            moves.push((a, b));
            cum += g;
            if cum > best_cum + EPS {
                best_cum = cum;
                best_len = moves.len();
            } else if moves.len() - best_len >= max_bad {
                break;
            }
        }
        for &(a, b) in moves[best_len..].iter().rev() {
            if let Some(b) = b {
                self.flip(b);
            }
            self.flip(a);
        }
        best_cum
    }
}

/// Repairs and refines a router partition (`initial[r]` = side of router r) into an exact
/// endpoint bisection; see the module documentation.
pub fn refine_bisection(topo: &Topology, initial: &[bool]) -> Result<Bisection, TopologyError> {
    let r = topo.num_routers();
    let n = topo.num_endpoints();
    if initial.len() != r {
        return Err(TopologyError::Analysis {
            reason: format!("a partition of {} routers for {r} routers", initial.len()),
        });
    }
    if n < 2 {
        return Err(TopologyError::Analysis {
            reason: format!("a bisection needs at least 2 endpoints, the topology has {n}"),
        });
    }
    let target = (n % 2) as u64;
    let mut s = State::new(topo, initial.to_vec());
    s.balance(target);
    let max_bad = 64.max(r / 50);
    for _ in 0..50 {
        if s.pass(max_bad) <= EPS {
            break;
        }
    }
    // Phase 3: detach endpoints from the heavy side.
    let mut endpoint_side: Vec<bool> = (0..n).map(|e| s.side[topo.endpoint_router(e)]).collect();
    let mut cut_endpoint_links = 0;
    let mut cut_ep_bw = 0.0;
    if s.imbalance() > target {
        let heavy = s.ep[1] > s.ep[0];
        let need = ((s.imbalance() - target) / 2) as usize;
        let mut cands: Vec<usize> = (0..n).filter(|&e| endpoint_side[e] == heavy).collect();
        cands.sort_by(|&a, &b| {
            topo.endpoint_link(a)
                .bandwidth_gbps
                .total_cmp(&topo.endpoint_link(b).bandwidth_gbps)
        });
        for &e in cands.iter().take(need) {
            endpoint_side[e] = !heavy;
            cut_endpoint_links += 1;
            cut_ep_bw += topo.endpoint_link(e).bandwidth_gbps;
        }
    }
    let mut cut_links = 0;
    let mut cut_bw = cut_ep_bw;
    for l in topo.links() {
        if s.side[l.a as usize] != s.side[l.b as usize] {
            cut_links += 1;
            cut_bw += l.bandwidth_gbps;
        }
    }
    let mut endpoints = [0usize; 2];
    for &x in &endpoint_side {
        endpoints[x as usize] += 1;
    }
    let mut routers = [0usize; 2];
    for &x in &s.side {
        routers[x as usize] += 1;
    }
    let mean_ep_bw: f64 = (0..n)
        .map(|e| topo.endpoint_link(e).bandwidth_gbps)
        .sum::<f64>()
        / n as f64;
    Ok(Bisection {
        router_side: s.side,
        endpoint_side,
        endpoints,
        routers,
        cut_links,
        cut_endpoint_links,
        cut_bandwidth_gbps: cut_bw,
        per_endpoint: cut_bw / ((n / 2) as f64 * mean_ep_bw),
    })
}

/// Bisection without METIS: `starts` initial partitions grown breadth-first from random
/// routers (seeded by `seed`) until they hold half the endpoints, each refined by
/// [`refine_bisection`]; the smallest cut wins (ties: the first).
pub fn bisect(topo: &Topology, starts: u32, seed: u64) -> Result<Bisection, TopologyError> {
    let r = topo.num_routers();
    let n = topo.num_endpoints();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut best: Option<Bisection> = None;
    for _ in 0..starts.max(1) {
        let mut side = vec![true; r];
        let mut seen = vec![false; r];
        let mut order: Vec<usize> = (0..r).collect();
        order.shuffle(&mut rng);
        let mut held = 0usize;
        let mut queue = std::collections::VecDeque::new();
        let start: usize = rng.random_range(0..r);
        queue.push_back(start);
        seen[start] = true;
        let mut rest = order.into_iter();
        while held < n / 2 {
            let x = match queue.pop_front() {
                Some(x) => x,
                None => match rest.find(|&x| !seen[x]) {
                    Some(x) => {
                        seen[x] = true;
                        x
                    }
                    None => break,
                },
            };
            side[x] = false;
            held += topo.router_endpoints(x).len();
            for &y in topo.neighbors(x) {
                if !seen[y as usize] {
                    seen[y as usize] = true;
                    queue.push_back(y as usize);
                }
            }
        }
        let b = refine_bisection(topo, &side)?;
        if best
            .as_ref()
            .is_none_or(|c| b.cut_bandwidth_gbps < c.cut_bandwidth_gbps - EPS)
        {
            best = Some(b);
        }
    }
    Ok(best.expect("at least one start"))
}
