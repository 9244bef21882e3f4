//! Traffic (diameter-two seed, section 4): synthetic patterns at an offered load and exchanges
//! of a fixed amount of data.
//!
//! # Synthetic patterns ([`TrafficSpec`])
//! * `uniform` — every packet to an endpoint drawn uniformly among the others.
//! * `worst` — the topology's adversarial permutation under minimal routing (seed section
//!   4.2): on a direct topology of diameter 2 (Slim Fly, PolarFly, 2-D HyperX) routers send
//!   to routers at distance 2 along greedy walks X₀ X₁ X₂ … of adjacent routers, X_k to
//!   X_{k+2}, so that the routes X_k→X_{k+1}→X_{k+2} and X_{k+1}→X_{k+2}→X_{k+3} overlap on
//!   X_{k+1}→X_{k+2} and every link of a walk carries 2p flows (seed Fig. 5); node j of a
//!   router sends to node j of its partner. On an MLFM the shift by h endpoints, on an OFT the
//!   shift by k: every router's nodes send to the next router's nodes over its single minimal
//!   path, h (or k) flows a link.
//! * `permutation` — a random cyclic permutation of the endpoints (Sattolo's algorithm: no
//!   node sends to itself), fixed by the seed.
//! * `shift:K` — node e sends to node (e + K) mod N.
//!
//! # Exchanges ([`ExchangeSpec`])
//! * `a2a` — every node sends `bytes` (default 7.5 KB = 30 packets of 256 B) to every other
//!   node, the destinations in a random order of its own (fixed by the seed), one message after
//!   the other (the randomised order of Kumar et al.'s all-to-all, seed section 4.4).
//! * `nn` — nearest neighbour on a 3-D torus X×Y×Z of processes mapped contiguously onto the
//!   endpoints in the seed's node order (process (x, y, z) on endpoint x + X(y + Yz)): each
//!   process sends `bytes` (default 512 KB) to each of its 6 neighbours, packets interleaved
//!   over the 6 messages. Without explicit dimensions, the largest torus that fits: the largest
//!   P ≤ N with a factorisation X ≤ Y ≤ Z, Z ≤ 2X, the most cubic one (smallest Z − X).

use super::error::{param, NetworkError};
use super::rng::SplitMix64;
use super::routing::{Routes, NONE};
use crate::spec::{self, Form, Key, Positional, Spec, SpecError};
use crate::topology::Topology;
use std::fmt;

/// One synthetic traffic pattern a spec string may name: what it accepts and how it is read.
#[derive(Clone, Copy, Debug)]
pub struct TrafficEntry {
    /// Its name, aliases, keys and an example.
    pub form: Form,
    /// Reads a spec that [`spec::parse`] matched to this entry.
    pub build: fn(&Spec) -> Result<TrafficSpec, SpecError>,
}

const fn traffic(
    name: &'static str,
    aliases: &'static [&'static str],
    summary: &'static str,
    build: fn(&Spec) -> Result<TrafficSpec, SpecError>,
) -> TrafficEntry {
    TrafficEntry {
        form: Form::named(name, summary).with_aliases(aliases),
        build,
    }
}

const UNIFORM: &str = "uniform";
const WORST: &str = "worst";
const PERMUTATION: &str = "permutation";
const SHIFT: &str = "shift";

/// Every synthetic pattern [`TrafficSpec::parse`] accepts, in the order error messages list
/// them.
pub const TRAFFICS: &[TrafficEntry] = &[
    traffic(
        UNIFORM,
        &["uni", "random"],
        "every packet to an endpoint drawn uniformly among the others",
        |_| Ok(TrafficSpec::Uniform),
    ),
    traffic(
        WORST,
        &["wc", "worst-case"],
        "the topology's adversarial permutation under minimal routing",
        |_| Ok(TrafficSpec::Worst),
    ),
    traffic(
        PERMUTATION,
        &["perm"],
        "a random cyclic permutation of the endpoints, fixed by the seed",
        |_| Ok(TrafficSpec::Permutation),
    ),
    TrafficEntry {
        form: Form::named(SHIFT, "node e sends to node (e + K) mod N")
            .with_keys(&[Key::new("k", "the offset K, a whole number")])
            .with_positional(Positional::OneOrKey("K", "k"))
            .with_example("shift:12"),
        build: |s| {
            let k = s
                .positional
                .as_deref()
                .expect("the spec grammar checks that K is given");
            let k = spec::whole::<i64>(k).map_err(|reason| s.bad("K", k, reason))?;
            Ok(TrafficSpec::Shift(k))
        },
    },
];

/// One exchange a spec string may name.
#[derive(Clone, Copy, Debug)]
pub struct ExchangeEntry {
    /// Its name, aliases and an example.
    pub form: Form,
    /// Reads a spec that [`spec::parse`] matched to this entry.
    pub build: fn(&Spec) -> Result<ExchangeSpec, SpecError>,
}

const A2A: &str = "a2a";
const NN: &str = "nn";

/// Every exchange [`ExchangeSpec::parse`] accepts, in the order error messages list them.
pub const EXCHANGES: &[ExchangeEntry] = &[
    ExchangeEntry {
        form: Form::named(A2A, "all-to-all: 7.5 KB from every node to every other")
            .with_aliases(&["alltoall", "all-to-all"]),
        build: |_| {
            Ok(ExchangeSpec::AllToAll {
                bytes: 7680,
                interleave: true,
            })
        },
    },
    ExchangeEntry {
        form: Form::named(
            NN,
            "3-D torus nearest neighbour: 512 KB to each of 6 neighbours",
        )
        .with_aliases(&["nearest-neighbor", "nearest-neighbour", "halo"]),
        build: |_| {
            Ok(ExchangeSpec::NearestNeighbor {
                dims: None,
                bytes: 512 * 1024,
            })
        },
    },
];

/// A synthetic traffic pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrafficSpec {
    /// Uniform random destinations.
    Uniform,
    /// The topology's worst case under minimal routing.
    Worst,
    /// A random cyclic permutation of the endpoints.
    Permutation,
    /// Node e sends to node (e + k) mod N.
    Shift(i64),
}

impl TrafficSpec {
    /// Parses `uniform`, `worst`, `permutation`, `shift:K` (or `shift:k=K`): the entries of
    /// [`TRAFFICS`].
    pub fn parse(text: &str) -> Result<TrafficSpec, NetworkError> {
        let (entry, s) = spec::parse("traffic", TRAFFICS, |t| &t.form, text)?;
        Ok((entry.build)(&s)?)
    }

    /// The destination of every endpoint (`None` for uniform traffic).
    pub fn resolve(
        &self,
        topo: &Topology,
        routes: &Routes,
        seed: u64,
    ) -> Result<Pattern, NetworkError> {
        let n = topo.num_endpoints();
        let unsupported = |reason: String| NetworkError::Unsupported {
            what: format!("traffic {self}"),
            topology: topo.name().to_string(),
            reason,
        };
        if n < 2 {
            return Err(unsupported(format!(
                "traffic needs at least 2 endpoints, the topology has {n}"
            )));
        }
        match self {
            TrafficSpec::Uniform => Ok(Pattern::Uniform),
            TrafficSpec::Shift(k) => {
                let k = k.rem_euclid(n as i64) as usize;
                if k == 0 {
                    return Err(param(
                        "shift",
                        self.to_string(),
                        format!(
                            "an offset that is a multiple of N = {n} sends every node to itself"
                        ),
                    ));
                }
                Ok(Pattern::Map((0..n).map(|e| ((e + k) % n) as u32).collect()))
            }
            TrafficSpec::Permutation => {
                let mut rng = SplitMix64::new(seed ^ 0x7065_726d_7574_6521);
                let mut p: Vec<u32> = (0..n as u32).collect();
                // Sattolo: a uniformly random n-cycle.
                for i in (1..n).rev() {
                    let j = rng.below(i as u64) as usize;
                    p.swap(i, j);
                }
                Ok(Pattern::Map(p))
            }
            TrafficSpec::Worst => worst_case(topo, routes).map_err(unsupported),
        }
    }
}

impl fmt::Display for TrafficSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrafficSpec::Uniform => write!(f, "{UNIFORM}"),
            TrafficSpec::Worst => write!(f, "{WORST}"),
            TrafficSpec::Permutation => write!(f, "{PERMUTATION}"),
            TrafficSpec::Shift(k) => write!(f, "{SHIFT}:{k}"),
        }
    }
}

/// A resolved synthetic pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Uniform random destinations.
    Uniform,
    /// A fixed destination per source endpoint (`u32::MAX`: the endpoint does not send).
    Map(Vec<u32>),
}

/// Endpoints per router with endpoints, if the same for all.
fn uniform_p(topo: &Topology) -> Option<usize> {
    let mut p = None;
    for r in 0..topo.num_routers() {
        let k = topo.router_endpoints(r).len();
        if k == 0 {
            continue;
        }
        match p {
            None => p = Some(k),
            Some(q) if q != k => return None,
            _ => {}
        }
    }
    p
}

fn worst_case(topo: &Topology, routes: &Routes) -> Result<Pattern, String> {
    let n = topo.num_endpoints();
    let fam = topo.family();
    let p = uniform_p(topo);
    match fam {
        "mlfm" | "oft" => {
            let p = p.ok_or("the routers carry different numbers of endpoints")?;
            Ok(Pattern::Map((0..n).map(|e| ((e + p) % n) as u32).collect()))
        }
        _ if topo.is_direct() && routes.diameter() == 2 => {
            let p = p.ok_or("the routers carry different numbers of endpoints")?;
            let f = distance_two_walks(routes);
            let mut map = vec![0u32; n];
            for (r, &fr) in f.iter().enumerate() {
                let src = topo.router_endpoints(r);
                let dst = topo.router_endpoints(fr as usize);
                for j in 0..p {
                    map[src[j] as usize] = dst[j];
                }
            }
            Ok(Pattern::Map(map))
        }
        _ => Err(format!(
            "a worst-case pattern is defined for direct topologies of diameter 2 (slimfly, \
             polarfly, 2-D hyperx), mlfm and oft, not for {fam}{}; use shift:K or permutation",
            if topo.is_direct() {
                format!(" of diameter {}", routes.diameter())
            } else {
                String::new()
            }
        )),
    }
}

/// The router permutation of the worst case of a direct diameter-2 topology: greedy walks
/// of adjacent routers X₀ X₁ …, each X_{k+1} the lowest-numbered unvisited neighbour of X_k at
/// distance 2 from X_{k−1} (preferring one with a single minimal path from X_{k−1}), with
/// f(X_k) = X_{k+2}; the two last routers of every walk are then matched to the two first
/// ones of the walks, at distance 2 where possible.
pub fn distance_two_walks(routes: &Routes) -> Vec<u32> {
    let r = routes.num_routers();
    let mut f = vec![NONE; r];
    let mut visited = vec![false; r];
    let mut senders: Vec<u32> = Vec::new();
    let mut receivers: Vec<u32> = Vec::new();
    let nbrs = |x: usize| -> Vec<u32> {
        (0..routes.degree(x))
            .map(|j| routes.port_nbr[routes.port(x, j)])
            .collect()
    };
    for start in 0..r {
        if visited[start] {
            continue;
        }
        let mut walk = vec![start as u32];
        visited[start] = true;
        if let Some(&x1) = nbrs(start).iter().filter(|&&y| !visited[y as usize]).min() {
            walk.push(x1);
            visited[x1 as usize] = true;
            loop {
                let last = *walk.last().unwrap() as usize;
                let prev = walk[walk.len() - 2] as usize;
                let mut cands: Vec<u32> = nbrs(last)
                    .into_iter()
                    .filter(|&c| !visited[c as usize] && routes.dist(prev, c as usize) == 2)
                    .collect();
                cands.sort_unstable();
                cands.dedup();
                let pick = cands
                    .iter()
                    .copied()
                    .find(|&c| routes.min_ports(prev, c as usize).len() == 1)
                    .or_else(|| cands.first().copied());
                match pick {
                    Some(c) => {
                        walk.push(c);
                        visited[c as usize] = true;
                    }
                    None => break,
                }
            }
        }
        let m = walk.len();
        for k in 0..m.saturating_sub(2) {
            f[walk[k] as usize] = walk[k + 2];
        }
        senders.extend_from_slice(&walk[m.saturating_sub(2)..]);
        receivers.extend_from_slice(&walk[..m.min(2)]);
    }
    // Match leftovers: distance 2 first, then the farthest, never a router to itself.
    let mut used = vec![false; receivers.len()];
    for &s in &senders {
        let s = s as usize;
        let best = (0..receivers.len())
            .filter(|&i| !used[i] && receivers[i] as usize != s)
            .max_by_key(|&i| {
                let d = routes.dist(s, receivers[i] as usize);
                (d == 2, d, std::cmp::Reverse(i))
            });
        match best {
            Some(i) => {
                used[i] = true;
                f[s] = receivers[i];
            }
            None => {
                // Only s itself is left: swap with an already matched leftover sender.
                let i = (0..receivers.len()).find(|&i| !used[i]).unwrap();
                used[i] = true;
                let other = senders
                    .iter()
                    .map(|&x| x as usize)
                    .find(|&x| x != s && f[x] != NONE)
                    .expect("at least two routers");
                f[s] = f[other];
                f[other] = s as u32;
                let _ = i;
            }
        }
    }
    f
}

/// A fixed exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExchangeSpec {
    /// All-to-all: `bytes` from every node to every other.
    AllToAll {
        /// Bytes per (source, destination) pair.
        bytes: u64,
        /// Interleave packets over the destinations (true) or send whole messages one after
        /// the other (false), in both cases in a random order of destinations per node.
        interleave: bool,
    },
    /// 3-D torus nearest neighbour: `bytes` to each of 6 neighbours.
    NearestNeighbor {
        /// Torus dimensions X, Y, Z (`None`: the largest that fits).
        dims: Option<[u32; 3]>,
        /// Bytes per neighbour pair.
        bytes: u64,
    },
}

impl ExchangeSpec {
    /// Parses `a2a` or `nn` (the entries of [`EXCHANGES`]), with the seed's sizes (7.5 KB,
    /// 512 KB).
    pub fn parse(text: &str) -> Result<ExchangeSpec, NetworkError> {
        let (entry, s) = spec::parse("exchange", EXCHANGES, |x| &x.form, text)?;
        Ok((entry.build)(&s)?)
    }

    /// The exchange's name (`a2a`, `nn`).
    pub fn name(&self) -> &'static str {
        match self {
            ExchangeSpec::AllToAll { .. } => A2A,
            ExchangeSpec::NearestNeighbor { .. } => NN,
        }
    }

    /// The messages of every node, for `packet_bytes` packets.
    pub fn plan(
        &self,
        topo: &Topology,
        packet_bytes: u32,
        seed: u64,
    ) -> Result<ExchangePlan, NetworkError> {
        let n = topo.num_endpoints();
        let packets = |bytes: u64| -> Result<u32, NetworkError> {
            if bytes == 0 {
                return Err(param("message size", bytes, "must be >= 1 byte"));
            }
            let p = bytes.div_ceil(packet_bytes as u64);
            u32::try_from(p).map_err(|_| {
                param(
                    "message size",
                    bytes,
                    "more than 2^32 packets in one message",
                )
            })
        };
        match *self {
            ExchangeSpec::AllToAll { bytes, interleave } => {
                if n < 2 {
                    return Err(param(
                        "endpoints",
                        n,
                        "an all-to-all needs at least 2 nodes",
                    ));
                }
                if (n as u128) * (n as u128 - 1) > (1u128 << 31) {
                    return Err(param(
                        "endpoints",
                        n,
                        "an all-to-all of more than 2^31 messages is not simulated",
                    ));
                }
                let per = packets(bytes)?;
                let mut dest = Vec::with_capacity(n * (n - 1));
                let mut off = Vec::with_capacity(n + 1);
                off.push(0u64);
                let mut rng = SplitMix64::new(seed ^ 0x6132_6121);
                let mut row: Vec<u32> = Vec::with_capacity(n - 1);
                for e in 0..n {
                    row.clear();
                    row.extend((0..n as u32).filter(|&d| d as usize != e));
                    for i in (1..row.len()).rev() {
                        let j = rng.below(i as u64 + 1) as usize;
                        row.swap(i, j);
                    }
                    dest.extend_from_slice(&row);
                    off.push(dest.len() as u64);
                }
                Ok(ExchangePlan {
                    name: "a2a".into(),
                    nodes: n,
                    dims: None,
                    off,
                    dest,
                    packets_per_message: per,
                    interleave,
                    message_bytes: bytes,
                })
            }
            ExchangeSpec::NearestNeighbor { dims, bytes } => {
                let d = match dims {
                    Some(d) => {
                        let p = d.iter().map(|&x| x as u64).product::<u64>();
                        if d.contains(&0) || p > n as u64 {
                            return Err(param(
                                "torus",
                                format!("{}x{}x{}", d[0], d[1], d[2]),
                                format!(
                                    "the torus must have dimensions >= 1 and at most N = {n} \
                                     processes"
                                ),
                            ));
                        }
                        d
                    }
                    None => fit_torus(n as u64).ok_or_else(|| {
                        param("endpoints", n, "no 3-D torus fits in fewer than 1 node")
                    })?,
                };
                let per = packets(bytes)?;
                let (x, y, z) = (d[0] as usize, d[1] as usize, d[2] as usize);
                let procs = x * y * z;
                let mut dest = Vec::with_capacity(procs * 6);
                let mut off = vec![0u64];
                for e in 0..n {
                    if e < procs {
                        let (cx, cy, cz) = (e % x, (e / x) % y, e / (x * y));
                        let id = |a: usize, b: usize, c: usize| (a + x * (b + y * c)) as u32;
                        let nb = [
                            id((cx + 1) % x, cy, cz),
                            id((cx + x - 1) % x, cy, cz),
                            id(cx, (cy + 1) % y, cz),
                            id(cx, (cy + y - 1) % y, cz),
                            id(cx, cy, (cz + 1) % z),
                            id(cx, cy, (cz + z - 1) % z),
                        ];
                        dest.extend(nb.iter().copied().filter(|&t| t as usize != e));
                    }
                    off.push(dest.len() as u64);
                }
                Ok(ExchangePlan {
                    name: "nn".into(),
                    nodes: procs,
                    dims: Some(d),
                    off,
                    dest,
                    packets_per_message: per,
                    interleave: true,
                    message_bytes: bytes,
                })
            }
        }
    }
}

/// The largest 3-D torus of at most `n` processes: the largest P ≤ n with a factorisation
/// X ≤ Y ≤ Z, Z ≤ 2X, and among those the smallest Z − X (then the smallest Z).
pub fn fit_torus(n: u64) -> Option<[u32; 3]> {
    if n == 0 {
        return None;
    }
    for p in (1..=n).rev() {
        let mut best: Option<(u64, u64, [u32; 3])> = None;
        let mut a = 1;
        while a * a * a <= p {
            if p % a == 0 {
                let q = p / a;
                let mut b = a;
                while b * b <= q {
                    if q % b == 0 {
                        let c = q / b;
                        if c <= 2 * a {
                            let key = (c - a, c);
                            if best.as_ref().is_none_or(|&(d, z, _)| key < (d, z)) {
                                best = Some((key.0, key.1, [a as u32, b as u32, c as u32]));
                            }
                        }
                    }
                    b += 1;
                }
            }
            a += 1;
        }
        if let Some((_, _, d)) = best {
            return Some(d);
        }
    }
    None
}

/// The messages of an exchange: for every endpoint a list of destinations (CSR), each
/// receiving `packets_per_message` packets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangePlan {
    /// `a2a` or `nn`.
    pub name: String,
    /// Endpoints taking part (N for a2a, X·Y·Z for nn).
    pub nodes: usize,
    /// Torus dimensions (nn).
    pub dims: Option<[u32; 3]>,
    /// CSR offsets into `dest`, one per endpoint plus one.
    pub off: Vec<u64>,
    /// Destinations, in sending order per endpoint.
    pub dest: Vec<u32>,
    /// Packets per message.
    pub packets_per_message: u32,
    /// Interleave packets over the node's messages (nn) or send them one after the other (a2a).
    pub interleave: bool,
    /// Bytes per message.
    pub message_bytes: u64,
}

impl ExchangePlan {
    /// Total packets of the exchange.
    pub fn total_packets(&self) -> u64 {
        self.dest.len() as u64 * self.packets_per_message as u64
    }

    /// Total bytes of the exchange (messages × message size).
    pub fn total_bytes(&self) -> u64 {
        self.dest.len() as u64 * self.message_bytes
    }
}
