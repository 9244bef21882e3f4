//! Graph analysis of a topology: sizes, radices, cost per endpoint, distances, minimal-path
//! diversity, Moore bound and (for trees) the AAPC bottleneck.
//!
//! # Definitions
//! * **router radix**: the largest number of ports of a router, network ports plus endpoint
//!   ports; **network radix**: the largest number of router-to-router ports.
//! * **ports per endpoint**: all router ports (2 per router-to-router link, 1 per endpoint)
//!   divided by N; **links per endpoint**: (router-to-router links + endpoint links) / N. These
//!   are the seed's N_p/N and N_l/N (diameter-two seed, section 2.1.2): Slim Fly q = 13 has
//!   3211 router links and 338 routers of network radix 19, so p = 9 gives 9464/3042 = 3.111
//!   ports and 6253/3042 = 2.0556 links (printed 3.11 and 2.05 by the seed, i.e. truncated),
//!   p = 10 gives 9802/3380 = 2.900 and 6591/3380 = 1.950.
//! * **diameter**: the largest router-to-router hop count between two routers that carry
//!   endpoints (so an OFT or MLFM has diameter 2, as the seed says, although its routers
//!   without endpoints are farther apart); **router diameter**: over all router pairs.
//! * **average hops**: router-to-router hops averaged over ordered pairs of distinct endpoints
//!   (0 for two endpoints of one router); **average router distance**: averaged over pairs of
//!   distinct routers with endpoints.
//! * **path diversity**: for every unordered pair of distinct routers with endpoints, the
//!   number of minimal (shortest) router paths between them (the seed's section 2.3.3); its
//!   distribution overall and by distance.
//! * **Moore bound** (direct topologies only, every router carrying endpoints): the most
//!   routers a graph of maximum degree d and diameter D can have, 1 + d·Σ_{i<D}(d − 1)^i
//!   (Miller and Širáň, Electron. J. Combin. DS14); d² + 1 for D = 2. The fraction is R over
//!   the bound with d the network radix and D the diameter.

use super::error::TopologyError;
use super::tree::{analyze_tree, TreeAnalysis};
use super::Topology;
use std::collections::HashMap;

/// Routers of one kind.
#[derive(Clone, Debug, PartialEq)]
pub struct KindSummary {
    /// Kind name.
    pub name: String,
    /// Routers of this kind.
    pub count: usize,
    /// Smallest and largest network degree.
    pub network_degree: (usize, usize),
    /// Smallest and largest number of endpoints.
    pub endpoints: (usize, usize),
}

/// Minimal paths between router pairs at one distance.
#[derive(Clone, Debug, PartialEq)]
pub struct DistanceDiversity {
    /// Hops.
    pub distance: u32,
    /// Unordered pairs of routers with endpoints at this distance.
    pub pairs: u64,
    /// Mean number of minimal paths.
    pub mean_paths: f64,
    /// Largest number of minimal paths.
    pub max_paths: u64,
}

/// Distribution of the number of minimal paths between pairs of routers with endpoints.
#[derive(Clone, Debug, PartialEq)]
pub struct PathDiversity {
    /// `(paths, pairs)`: how many unordered pairs have exactly this many minimal paths,
    /// ascending in paths.
    pub histogram: Vec<(u64, u64)>,
    /// Mean number of minimal paths over all pairs.
    pub mean: f64,
    /// Largest number of minimal paths.
    pub max: u64,
    /// The same by distance, ascending.
    pub by_distance: Vec<DistanceDiversity>,
}

/// Moore bound of a direct topology.
#[derive(Clone, Debug, PartialEq)]
pub struct MooreBound {
    /// Maximum degree d (the network radix).
    pub degree: u64,
    /// Diameter D.
    pub diameter: u32,
    /// 1 + d·Σ_{i<D}(d − 1)^i (saturating).
    pub bound: u64,
    /// R / bound.
    pub fraction: f64,
}

/// Everything [`analyze`] computes.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// Endpoints N.
    pub endpoints: usize,
    /// Routers R.
    pub routers: usize,
    /// Routers with at least one endpoint.
    pub endpoint_routers: usize,
    /// Router-to-router links.
    pub network_links: usize,
    /// Largest ports of a router (network + endpoints).
    pub router_radix: usize,
    /// Largest router-to-router ports of a router.
    pub network_radix: usize,
    /// Per router kind.
    pub kinds: Vec<KindSummary>,
    /// All router ports: 2 per router-to-router link plus N.
    pub total_ports: u64,
    /// `total_ports / N`.
    pub ports_per_endpoint: f64,
    /// Router-to-router links plus N endpoint links.
    pub total_links: u64,
    /// `total_links / N`.
    pub links_per_endpoint: f64,
    /// True if every router reaches every other.
    pub connected: bool,
    /// Largest distance between routers with endpoints (`None` if some are unreachable).
    pub diameter: Option<u32>,
    /// Largest distance between any routers (`None` if disconnected).
    pub router_diameter: Option<u32>,
    /// Mean hops over ordered pairs of distinct endpoints (reachable pairs).
    pub avg_hops: f64,
    /// Mean distance over pairs of distinct routers with endpoints (reachable pairs).
    pub avg_router_distance: f64,
    /// `distance_histogram[d]`: unordered pairs of distinct routers with endpoints at distance d.
    pub distance_histogram: Vec<u64>,
    /// Minimal-path diversity.
    pub paths: PathDiversity,
    /// Moore bound, for direct connected topologies.
    pub moore: Option<MooreBound>,
    /// AAPC analysis, if the router graph is a tree.
    pub tree: Option<TreeAnalysis>,
}

/// All-pairs router distances (`u16::MAX` for unreachable).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistanceMatrix {
    n: usize,
    d: Vec<u16>,
}

impl DistanceMatrix {
    /// Unreachable marker.
    pub const UNREACHABLE: u16 = u16::MAX;

    /// Number of routers.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True for an empty matrix.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Distance from router `a` to `b`, `None` if unreachable.
    pub fn get(&self, a: usize, b: usize) -> Option<u16> {
        let d = self.d[a * self.n + b];
        (d != Self::UNREACHABLE).then_some(d)
    }

    /// Distances from router `a` to every router.
    pub fn row(&self, a: usize) -> &[u16] {
        &self.d[a * self.n..(a + 1) * self.n]
    }

    /// Row-major R × R data.
    pub fn as_slice(&self) -> &[u16] {
        &self.d
    }
}

/// Largest number of routers for [`router_distances`] (R² u16 entries).
pub const MAX_DISTANCE_ROUTERS: usize = 40_000;

/// Breadth-first search from `s`: distances (u32::MAX unreachable) and numbers of shortest
/// paths (saturating), reusing the buffers.
fn bfs(topo: &Topology, s: usize, dist: &mut [u32], sigma: &mut [u64], queue: &mut Vec<u32>) {
    dist.fill(u32::MAX);
    sigma.fill(0);
    queue.clear();
    dist[s] = 0;
    sigma[s] = 1;
    queue.push(s as u32);
    let (off, nbr, _) = topo.csr();
    let mut head = 0;
    while head < queue.len() {
        let x = queue[head] as usize;
        head += 1;
        let dx = dist[x] + 1;
        let sx = sigma[x];
        for &y in &nbr[off[x] as usize..off[x + 1] as usize] {
            let y = y as usize;
            if dist[y] == u32::MAX {
                dist[y] = dx;
                queue.push(y as u32);
            }
            if dist[y] == dx {
                sigma[y] = sigma[y].saturating_add(sx);
            }
        }
    }
}

/// Runs `f(source, dist, sigma)` for every router, spread over the available cores; each
/// worker folds into its own accumulator, returned in worker order.
fn for_each_source<A: Send>(
    topo: &Topology,
    init: impl Fn() -> A + Sync,
    f: impl Fn(&mut A, usize, &[u32], &[u64]) + Sync,
) -> Vec<A> {
    let r = topo.num_routers();
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(r.div_ceil(64))
        .max(1);
    let run = |w: usize| {
        let mut acc = init();
        let mut dist = vec![0u32; r];
        let mut sigma = vec![0u64; r];
        let mut queue = Vec::with_capacity(r);
        let mut s = w;
        while s < r {
            if crate::cancel::requested() {
                break;
            }
            bfs(topo, s, &mut dist, &mut sigma, &mut queue);
            f(&mut acc, s, &dist, &sigma);
            s += workers;
        }
        acc
    };
    if workers == 1 {
        return vec![run(0)];
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers).map(|w| scope.spawn(move || run(w))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("analysis worker panicked"))
            .collect()
    })
}

/// All-pairs router distances. Errors above [`MAX_DISTANCE_ROUTERS`] routers.
pub fn router_distances(topo: &Topology) -> Result<DistanceMatrix, TopologyError> {
    let r = topo.num_routers();
    if r > MAX_DISTANCE_ROUTERS {
        return Err(TopologyError::Analysis {
            reason: format!(
                "a distance matrix of {r} routers is too large (limit {MAX_DISTANCE_ROUTERS})"
            ),
        });
    }
    let rows = for_each_source(
        topo,
        Vec::new,
        |acc: &mut Vec<(usize, Vec<u16>)>, s, dist, _| {
            acc.push((
                s,
                dist.iter()
                    .map(|&d| {
                        if d == u32::MAX {
                            u16::MAX
                        } else {
                            d.min(u16::MAX as u32 - 1) as u16
                        }
                    })
                    .collect(),
            ));
        },
    );
    let mut d = vec![0u16; r * r];
    for (s, row) in rows.into_iter().flatten() {
        d[s * r..(s + 1) * r].copy_from_slice(&row);
    }
    Ok(DistanceMatrix { n: r, d })
}

#[derive(Default)]
struct Acc {
    router_diameter: u32,
    disconnected: bool,
    dist_hist: Vec<u64>,
    hop_weight: u128,
    path_hist: HashMap<u64, u64>,
    by_dist: Vec<(u64, f64, u64)>, // pairs, sum of paths, max paths
}

/// The most routers [`try_analyze`] takes: the analysis runs a search from every router
/// (some 10^9 router visits at this size).
pub const MAX_ANALYSIS_ROUTERS: usize = 1 << 15;

/// [`analyze`], refused above [`MAX_ANALYSIS_ROUTERS`] routers, and stopped with
/// [`TopologyError::Interrupted`] on a request to stop ([`crate::cancel`]).
pub fn try_analyze(topo: &Topology) -> Result<Analysis, TopologyError> {
    let r = topo.num_routers();
    if r > MAX_ANALYSIS_ROUTERS {
        return Err(TopologyError::Analysis {
            reason: format!(
                "{r} routers: the path analysis searches from every router and takes at most \
                 {MAX_ANALYSIS_ROUTERS}; analyse a smaller instance"
            ),
        });
    }
    crate::cancel::check()?;
    let a = analyze(topo);
    // (A request to stop ends the searches early: what they left is no analysis.)
    crate::cancel::check()?;
    Ok(a)
}

/// Analyses `topo` (everything but the bisection, see [`super::bisection`]).
pub fn analyze(topo: &Topology) -> Analysis {
    let r = topo.num_routers();
    let n = topo.num_endpoints();
    let eps: Vec<u64> = (0..r)
        .map(|x| topo.router_endpoints(x).len() as u64)
        .collect();
    let accs = for_each_source(topo, Acc::default, |acc, s, dist, sigma| {
        for (t, &d) in dist.iter().enumerate() {
            if d == u32::MAX {
                acc.disconnected = true;
                continue;
            }
            acc.router_diameter = acc.router_diameter.max(d);
            if t <= s || eps[s] == 0 || eps[t] == 0 {
                continue;
            }
            let d = d as usize;
            if acc.dist_hist.len() <= d {
                acc.dist_hist.resize(d + 1, 0);
                acc.by_dist.resize(d + 1, (0, 0.0, 0));
            }
            acc.dist_hist[d] += 1;
            acc.hop_weight += (eps[s] * eps[t]) as u128 * d as u128;
            *acc.path_hist.entry(sigma[t]).or_insert(0) += 1;
            let b = &mut acc.by_dist[d];
            b.0 += 1;
            b.1 += sigma[t] as f64;
            b.2 = b.2.max(sigma[t]);
        }
    });
    let mut total = Acc::default();
    for a in accs {
        total.router_diameter = total.router_diameter.max(a.router_diameter);
        total.disconnected |= a.disconnected;
        if total.dist_hist.len() < a.dist_hist.len() {
            total.dist_hist.resize(a.dist_hist.len(), 0);
            total.by_dist.resize(a.dist_hist.len(), (0, 0.0, 0));
        }
        for (d, c) in a.dist_hist.iter().enumerate() {
            total.dist_hist[d] += c;
            let (p, s, m) = a.by_dist[d];
            let t = &mut total.by_dist[d];
            t.0 += p;
            t.1 += s;
            t.2 = t.2.max(m);
        }
        total.hop_weight += a.hop_weight;
        for (k, v) in a.path_hist {
            *total.path_hist.entry(k).or_insert(0) += v;
        }
    }
    // Endpoint routers unreachable from each other make the diameter undefined.
    let ep_routers = eps.iter().filter(|&&e| e > 0).count();
    let reachable_pairs: u64 = total.dist_hist.iter().sum();
    let all_pairs = (ep_routers as u64) * (ep_routers.saturating_sub(1) as u64) / 2;
    let diameter = (reachable_pairs == all_pairs)
        .then(|| total.dist_hist.iter().rposition(|&c| c > 0).unwrap_or(0) as u32);
    let router_diameter = (!total.disconnected).then_some(total.router_diameter);
    let mut histogram: Vec<(u64, u64)> = total.path_hist.into_iter().collect();
    histogram.sort_unstable();
    let path_sum: f64 = histogram.iter().map(|&(p, c)| p as f64 * c as f64).sum();
    let paths = PathDiversity {
        mean: if reachable_pairs > 0 {
            path_sum / reachable_pairs as f64
        } else {
            0.0
        },
        max: histogram.last().map(|&(p, _)| p).unwrap_or(0),
        histogram,
        by_distance: total
            .by_dist
            .iter()
            .enumerate()
            .filter(|(_, b)| b.0 > 0)
            .map(|(d, &(pairs, sum, max))| DistanceDiversity {
                distance: d as u32,
                pairs,
                mean_paths: sum / pairs as f64,
                max_paths: max,
            })
            .collect(),
    };
    let network_radix = (0..r).map(|x| topo.network_degree(x)).max().unwrap_or(0);
    let router_radix = (0..r).map(|x| topo.router_degree(x)).max().unwrap_or(0);
    let mut kinds: Vec<KindSummary> = topo
        .kinds()
        .iter()
        .map(|k| KindSummary {
            name: k.clone(),
            count: 0,
            network_degree: (usize::MAX, 0),
            endpoints: (usize::MAX, 0),
        })
        .collect();
    for x in 0..r {
        let k = &mut kinds[topo.router_kind(x)];
        k.count += 1;
        let d = topo.network_degree(x);
        let e = eps[x] as usize;
        k.network_degree = (k.network_degree.0.min(d), k.network_degree.1.max(d));
        k.endpoints = (k.endpoints.0.min(e), k.endpoints.1.max(e));
    }
    kinds.retain(|k| k.count > 0);
    let total_ports = 2 * topo.num_links() as u64 + n as u64;
    let total_links = topo.num_links() as u64 + n as u64;
    let per = |x: u64| if n > 0 { x as f64 / n as f64 } else { 0.0 };
    let ordered_pairs = n as f64 * (n as f64 - 1.0);
    let moore = match (topo.is_direct(), diameter) {
        (true, Some(d)) if d > 0 => {
            let deg = network_radix as u64;
            let mut sum: u128 = 0;
            let mut term: u128 = 1;
            for _ in 0..d {
                sum = sum.saturating_add(term);
                term = term.saturating_mul(deg.saturating_sub(1) as u128);
            }
            let bound = (1u128).saturating_add((deg as u128).saturating_mul(sum));
            let bound = bound.min(u64::MAX as u128) as u64;
            Some(MooreBound {
                degree: deg,
                diameter: d,
                bound,
                fraction: r as f64 / bound as f64,
            })
        }
        _ => None,
    };
    Analysis {
        endpoints: n,
        routers: r,
        endpoint_routers: ep_routers,
        network_links: topo.num_links(),
        router_radix,
        network_radix,
        kinds,
        total_ports,
        ports_per_endpoint: per(total_ports),
        total_links,
        links_per_endpoint: per(total_links),
        connected: !total.disconnected,
        diameter,
        router_diameter,
        avg_hops: if ordered_pairs > 0.0 {
            2.0 * total.hop_weight as f64 / ordered_pairs
        } else {
            0.0
        },
        avg_router_distance: if reachable_pairs > 0 {
            total
                .dist_hist
                .iter()
                .enumerate()
                .map(|(d, &c)| d as f64 * c as f64)
                .sum::<f64>()
                / reachable_pairs as f64
        } else {
            0.0
        },
        distance_histogram: total.dist_hist,
        paths,
        moore,
        tree: analyze_tree(topo),
    }
}
