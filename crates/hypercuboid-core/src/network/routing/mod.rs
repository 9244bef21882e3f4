//! Routing (diameter-two seed, section 3): minimal (MIN), Valiant's indirect random (INR) and
//! UGAL-local, generic and with a threshold, with virtual channels assigned so that every
//! routing is deadlock-free (section 3.4).
//!
//! # Routings
//! * `min` — a minimal path; where several minimal next hops exist, a random one
//!   (`choice=random`, default) or the one whose output buffer holds the fewest packets
//!   (`choice=lowest`, ties broken at random).
//! * `inr` — Valiant: minimal to an intermediate router chosen uniformly at random, other than
//!   the source and destination routers, then minimal to the destination. The intermediate set
//!   is every router with endpoints: all routers of a direct topology (Slim Fly, 2-4 hops), the
//!   local routers of an MLFM and the L0/L2 routers of an OFT (exactly 4 hops), the leaves of a
//!   fat tree.
//! * `ugal` — UGAL-L, decided once at the source router: the minimal path costs
//!   C_M = q_M, each of `n` random indirect candidates C_I = c·q_I, where q is the number of
//!   packets in the output buffer of the path's first port (all VCs). With `cost=ratio` (the
//!   seed's SF-A) c = (L_I / L_M)·c, L the path lengths in hops; with `cost=const` (MLFM-A,
//!   OFT-A) c is constant. The cheapest path wins; ties go to the minimal one.
//! * `ugal-th` — as `ugal`, but minimal whenever q_M < t% of the output buffer (SF-ATh,
//!   MLFM-ATh, OFT-ATh).
//!
//! Keys: `choice=random|lowest` (every routing, for its minimal hops), `n` (indirect
//! candidates, default 4), `c` (penalty; default 1 with `cost=ratio`, 2 with `cost=const`,
//! which are the same for paths of 2 and 4 hops), `cost=auto|ratio|const` (default `auto`:
//! ratio with the hop-index VC assignment, i.e. direct topologies, const otherwise), `t`
//! (threshold in percent, default 10, `ugal-th` only), `vcs=auto|hop|phase|none`.
//!
//! # Virtual channels
//! * `hop` — VC = number of router-to-router hops taken so far (Besta and Hoefler's scheme for
//!   the Slim Fly): VCs strictly increase along every path, so the channel dependency graph is
//!   acyclic for any routing. MIN needs D VCs, INR and UGAL 2D, D the largest distance between
//!   routers with endpoints: 2 and 4 on a Slim Fly.
//! * `phase` — VC 0 until the packet reaches its intermediate router, VC 1 after (the seed's
//!   towards/away scheme for MLFM and OFT, up/down for fat trees): deadlock-free where the
//!   minimal routes alone have an acyclic dependency graph on one VC; MIN needs 1 VC, INR and
//!   UGAL 2.
//! * `none` — every packet on VC 0 (deliberately unsafe: to show a deadlock).
//! * `auto` (default) — `phase` when the one-VC dependency graph of the minimal routes between
//!   routers with endpoints is acyclic (MLFM, OFT, fat trees, full meshes, trees), `hop`
//!   otherwise (Slim Fly, HyperX, Dragonfly, tori).
//!
//! # Rooms
//! This module holds the names and options ([`RoutingSpec`]) and the tables ([`Routes`]);
//! [`Decider`] takes the decisions of a packet in flight (`decide.rs`) and [`Channel`] names a
//! virtual channel of a link (`channel.rs`).

use super::error::NetworkError;
use crate::spec::{self, Choice, Choices, Form, FormTable, Key, Spec, SpecError};
use crate::topology::{router_distances, Topology};
use std::fmt;

pub mod cdg;
pub(crate) mod channel;
mod decide;

pub use channel::{format_cycle, Channel};
pub use decide::{Decider, RouteState};

/// One routing a spec string may name: what it accepts and its algorithm.
#[derive(Clone, Copy, Debug)]
pub struct RoutingEntry {
    /// Its name, aliases, keys and an example.
    pub form: Form,
    /// The algorithm (its options are read by [`RoutingSpec::parse`]).
    pub algorithm: Algorithm,
}

const CHOICE: Key = Key::new(
    "choice",
    "minimal next hop: random (default) or lowest (fewest packets in the output buffer)",
);
const VCS: Key = Key::new(
    "vcs",
    "virtual channels: auto (default), hop, phase or none",
);
const UGAL_KEYS: [Key; 5] = [
    CHOICE,
    VCS,
    Key::new("n", "indirect candidates, 1 to 64 (default 4)"),
    Key::new(
        "c",
        "penalty of an indirect path (default 1 with cost=ratio, 2 with cost=const)",
    ),
    Key::new("cost", "auto (default), ratio or const"),
];

const MIN: Form = Form::named("min", "minimal paths")
    .with_aliases(&["minimal"])
    .with_keys(&[CHOICE, VCS])
    .with_example("min:choice=lowest");
const INR: Form = Form::named(
    "inr",
    "Valiant: minimal to a random intermediate router, then minimal to the destination",
)
.with_aliases(&["valiant"])
.with_keys(&[CHOICE, VCS]);
const UGAL: Form = Form::named(
    "ugal",
    "UGAL-local: the minimal or an indirect path by output buffer occupancy",
)
.with_aliases(&["ugal-l"])
.with_keys(&UGAL_KEYS)
.with_example("ugal:n=8,c=1.5");
const UGAL_TH: Form = Form::named(
    "ugal-th",
    "UGAL-local with a threshold: minimal while its buffer is below t%",
)
.with_aliases(&["ugal_th", "ugalth"])
.with_keys(&[
    UGAL_KEYS[0],
    UGAL_KEYS[1],
    UGAL_KEYS[2],
    UGAL_KEYS[3],
    UGAL_KEYS[4],
    Key::new("t", "threshold, % of the output buffer (default 10)"),
])
.with_example("ugal-th:t=20");

/// Every routing [`RoutingSpec::parse`] accepts, in the order error messages list them: the
/// network simulator's routings of packets and flows, specs with keys (`ugal:n=8,c=1.5`). Not
/// the alltoall phases' choice of minimal paths
/// ([`crate::collectives::alltoall::phases::PHASE_ROUTINGS`], plain names).
pub const ROUTINGS: FormTable<RoutingEntry> = FormTable {
    what: "routing",
    form: |r| &r.form,
    entries: &[
        RoutingEntry {
            form: MIN,
            algorithm: Algorithm::Min,
        },
        RoutingEntry {
            form: INR,
            algorithm: Algorithm::Inr,
        },
        RoutingEntry {
            form: UGAL,
            algorithm: Algorithm::Ugal,
        },
        RoutingEntry {
            form: UGAL_TH,
            algorithm: Algorithm::UgalThreshold,
        },
    ],
};

/// The values of the key `choice`, the default first.
const CHOICES: Choices<MinChoice> = Choices::new(
    "choice",
    &[
        Choice::new("random", MinChoice::Random, "a minimal next hop at random"),
        Choice::aka(
            "lowest",
            &["lowest-cost", "cost"],
            MinChoice::LowestCost,
            "the minimal next hop with the fewest packets in its output buffer",
        ),
    ],
);

/// The values of the key `vcs`, the default first.
const VC_POLICIES: Choices<VcPolicy> = Choices::new(
    "vcs",
    &[
        Choice::new(
            "auto",
            VcPolicy::Auto,
            "phase where it is deadlock-free, hop otherwise",
        ),
        Choice::new("hop", VcPolicy::Hop, "virtual channel = hops taken"),
        Choice::new(
            "phase",
            VcPolicy::Phase,
            "virtual channel 0 before the intermediate router, 1 after",
        ),
        Choice::aka(
            "none",
            &["1", "single"],
            VcPolicy::Single,
            "one virtual channel for everything (unsafe, for demonstrations)",
        ),
    ],
);

/// The values of the key `cost`, the default first.
const UGAL_COSTS: Choices<UgalCost> = Choices::new(
    "cost",
    &[
        Choice::new(
            "auto",
            UgalCost::Auto,
            "ratio with the hop VC scheme, const with the phase scheme",
        ),
        Choice::new(
            "ratio",
            UgalCost::Ratio,
            "c times the ratio of indirect to minimal path length (SF-A, Singh's UGAL)",
        ),
        Choice::aka(
            "const",
            &["constant"],
            UgalCost::Constant,
            "a constant penalty c (MLFM-A, OFT-A)",
        ),
    ],
);

/// Most virtual channels a routing may need.
pub const MAX_VCS: usize = 32;

/// Routing algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Minimal paths.
    Min,
    /// Valiant's indirect random routing.
    Inr,
    /// UGAL-local.
    Ugal,
    /// UGAL-local with a threshold.
    UgalThreshold,
}

impl Algorithm {
    /// The routing's name (`min`, `inr`, `ugal`, `ugal-th`).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Min => MIN.name,
            Algorithm::Inr => INR.name,
            Algorithm::Ugal => UGAL.name,
            Algorithm::UgalThreshold => UGAL_TH.name,
        }
    }

    /// True if packets may take indirect paths.
    pub fn indirect(self) -> bool {
        self != Algorithm::Min
    }
}

/// How a minimal next hop is picked where several exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinChoice {
    /// Uniformly at random.
    Random,
    /// The port whose output buffer holds the fewest packets (ties at random).
    LowestCost,
}

/// How UGAL weighs an indirect path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UgalCost {
    /// `Ratio` with the hop VC scheme, `Constant` with the phase scheme.
    Auto,
    /// c·(L_I / L_M) (the seed's SF-A, Singh's UGAL).
    Ratio,
    /// A constant c (the seed's MLFM-A and OFT-A).
    Constant,
}

/// Virtual-channel assignment asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VcPolicy {
    /// Phase where it is deadlock-free, hop otherwise.
    Auto,
    /// VC = hops taken.
    Hop,
    /// VC = 0 before the intermediate router, 1 after.
    Phase,
    /// One VC for everything (unsafe, for demonstrations).
    Single,
}

/// Virtual-channel assignment in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VcScheme {
    /// VC = hops taken.
    Hop,
    /// VC = 0 before the intermediate router, 1 after.
    Phase,
    /// VC 0 always.
    Single,
}

impl VcScheme {
    /// The scheme's name.
    pub fn name(self) -> &'static str {
        match self {
            VcScheme::Hop => "hop",
            VcScheme::Phase => "phase",
            VcScheme::Single => "none",
        }
    }

    /// The VC of the next hop of a packet that has taken `hops` router-to-router hops and has
    /// (`passed`) or has not yet reached its intermediate router.
    #[inline]
    pub fn vc(self, hops: u8, passed: bool) -> u8 {
        match self {
            VcScheme::Hop => hops,
            VcScheme::Phase => passed as u8,
            VcScheme::Single => 0,
        }
    }
}

/// A routing with its options, as parsed from `NAME[:key=value,...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct RoutingSpec {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Minimal next-hop choice.
    pub choice: MinChoice,
    /// UGAL: indirect candidates n_I (≥ 1).
    pub candidates: u32,
    /// UGAL: penalty c (`None`: 1 with ratio cost, 2 with constant cost).
    pub c: Option<f64>,
    /// UGAL: cost mode.
    pub cost: UgalCost,
    /// UGAL-th: threshold in percent of the output buffer.
    pub threshold: f64,
    /// VC assignment.
    pub vcs: VcPolicy,
}

impl RoutingSpec {
    /// The algorithm with default options.
    pub fn new(algorithm: Algorithm) -> RoutingSpec {
        RoutingSpec {
            algorithm,
            choice: MinChoice::Random,
            candidates: 4,
            c: None,
            cost: UgalCost::Auto,
            threshold: 10.0,
            vcs: VcPolicy::Auto,
        }
    }

    /// Parses `min`, `inr`, `ugal`, `ugal-th`, optionally followed by `:key=value,...` (the
    /// entries of [`ROUTINGS`]).
    pub fn parse(text: &str) -> Result<RoutingSpec, NetworkError> {
        let (entry, s) = ROUTINGS.parse(text)?;
        Ok(RoutingSpec::read(entry.algorithm, &s)?)
    }

    /// The options of `algorithm` that `s` gives (every key of `s` is one of its entry's).
    fn read(algorithm: Algorithm, s: &Spec) -> Result<RoutingSpec, SpecError> {
        let d = RoutingSpec::new(algorithm);
        let c = s.value("c", spec::number)?;
        if c.is_some_and(|c| c < 0.0) {
            return Err(s.bad(
                "c",
                s.get("c").unwrap_or_default(),
                "the penalty must be >= 0",
            ));
        }
        let threshold = s.value("t", spec::number)?.unwrap_or(d.threshold);
        if !(0.0..=100.0).contains(&threshold) {
            return Err(s.bad(
                "t",
                s.get("t").unwrap_or_default(),
                "the threshold is a percentage of the output buffer, 0 to 100",
            ));
        }
        Ok(RoutingSpec {
            algorithm,
            choice: s.value("choice", |v| CHOICES.read(v))?.unwrap_or(d.choice),
            candidates: s
                .value("n", |v| {
                    v.parse::<u32>()
                        .ok()
                        .filter(|n| (1..=64).contains(n))
                        .ok_or_else(|| "the indirect candidates must be 1 to 64".to_string())
                })?
                .unwrap_or(d.candidates),
            c,
            cost: s.value("cost", |v| UGAL_COSTS.read(v))?.unwrap_or(d.cost),
            threshold,
            vcs: s.value("vcs", |v| VC_POLICIES.read(v))?.unwrap_or(d.vcs),
        })
    }
}

impl fmt::Display for RoutingSpec {
    /// The canonical spec: the name and every option that differs from its default.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = RoutingSpec::new(self.algorithm);
        let mut kv: Vec<String> = Vec::new();
        if self.choice != d.choice {
            kv.push(format!("choice={}", CHOICES.name(self.choice)));
        }
        if self.vcs != d.vcs {
            kv.push(format!("vcs={}", VC_POLICIES.name(self.vcs)));
        }
        if matches!(self.algorithm, Algorithm::Ugal | Algorithm::UgalThreshold) {
            if self.candidates != d.candidates {
                kv.push(format!("n={}", self.candidates));
            }
            if let Some(c) = self.c {
                kv.push(format!("c={c}"));
            }
            if self.cost != d.cost {
                kv.push(format!("cost={}", UGAL_COSTS.name(self.cost)));
            }
            if self.algorithm == Algorithm::UgalThreshold && self.threshold != d.threshold {
                kv.push(format!("t={}", self.threshold));
            }
        }
        write!(f, "{}", self.algorithm.name())?;
        if !kv.is_empty() {
            write!(f, ":{}", kv.join(","))?;
        }
        Ok(())
    }
}

/// Sentinel for "none" in u32 index arrays.
pub(crate) const NONE: u32 = u32::MAX;

/// The routing tables of one topology for one routing: the port numbering, minimal next hops
/// toward every router with endpoints, the intermediate set and the VC assignment.
///
/// Ports: router `r` has local ports `0..deg(r)` to its neighbours (in adjacency order), then
/// one per attached endpoint (in endpoint order); global port ids are `port_base(r) + local`.
/// A port has an input side (packets entering `r`) and an output side (leaving `r`).
#[derive(Clone, Debug)]
pub struct Routes {
    spec: RoutingSpec,
    scheme: VcScheme,
    vcs: usize,
    name: String,
    r: usize,
    dist: Vec<u16>,
    pub(crate) port_base: Vec<u32>,
    pub(crate) deg: Vec<u32>,
    /// Owner router of every port.
    pub(crate) port_router: Vec<u32>,
    /// Network port: the router at the other end; endpoint port: `NONE`.
    pub(crate) port_nbr: Vec<u32>,
    /// Network port: the port at the other end of the link; endpoint port: the endpoint.
    pub(crate) port_peer: Vec<u32>,
    /// Link index of a network port (`NONE` for endpoint ports).
    pub(crate) port_link: Vec<u32>,
    /// Port of every endpoint at its router.
    pub(crate) endpoint_port: Vec<u32>,
    /// Router → index among the targets (routers with endpoints), or `NONE`.
    target_idx: Vec<u32>,
    targets: Vec<u32>,
    /// Per (router, target index): the single minimal local port, or `MULTI` (several: see
    /// `multi`), or `EMPTY` at the target itself. Two bytes an entry, so that the table of a
    /// few hundred routers stays in the second-level cache.
    mn_first: Vec<u16>,
    /// `mn_first` in one byte an entry (`MULTI` and `EMPTY` as 255 and 254) when every router
    /// has fewer than 254 neighbours, else empty: half the bytes (114 KB on the seed's Slim
    /// Fly), so that the table the packet engine reads at every hop of a fixed route is more
    /// often in the second-level cache under the ports' own traffic.
    first8: Vec<u8>,
    /// Per router, CSR into `multi_keys`: the targets toward which it has several minimal
    /// ports, ascending, with the offset of their count-prefixed list in `mn_ports`.
    multi_off: Vec<u32>,
    multi_keys: Vec<(u32, u32)>,
    mn_ports: Vec<u16>,
    /// `0, 1, 2, ...`: one-element slices for single minimal ports.
    ident: Vec<u16>,
    diameter: u16,
}

const MULTI: u16 = u16::MAX;
const EMPTY: u16 = u16::MAX - 1;
/// `EMPTY` in the one-byte table (`MULTI` is 255 there, above it).
const EMPTY8: u8 = u8::MAX - 1;

/// Largest routers × routers-with-endpoints for the minimal-hop tables.
const MAX_TABLE: usize = 1 << 26;

impl Routes {
    /// Builds the tables of `spec` on `topo`, or says why the topology cannot be served.
    pub fn new(topo: &Topology, spec: &RoutingSpec) -> Result<Routes, NetworkError> {
        let unsupported = |reason: String| NetworkError::Unsupported {
            what: format!("routing {}", spec.algorithm.name()),
            topology: topo.name().to_string(),
            reason,
        };
        let r = topo.num_routers();
        if topo.num_endpoints() == 0 {
            return Err(unsupported("the topology has no endpoints".into()));
        }
        let targets: Vec<u32> = (0..r as u32)
            .filter(|&x| !topo.router_endpoints(x as usize).is_empty())
            .collect();
        if r.saturating_mul(targets.len()) > MAX_TABLE {
            return Err(unsupported(format!(
                "{r} routers and {} routers with endpoints exceed the routing tables' limit of \
                 {MAX_TABLE} entries",
                targets.len()
            )));
        }
        let dm = router_distances(topo)?;
        let dist = dm.as_slice().to_vec();
        let mut target_idx = vec![NONE; r];
        for (i, &t) in targets.iter().enumerate() {
            target_idx[t as usize] = i as u32;
        }
        let mut diameter = 0u16;
        for &a in &targets {
            for &b in &targets {
                let d = dist[a as usize * r + b as usize];
                if d == u16::MAX {
                    return Err(unsupported(format!(
                        "routers {a} and {b}, both with endpoints, are not connected"
                    )));
                }
                diameter = diameter.max(d);
            }
        }
        if spec.algorithm.indirect() && targets.len() < 3 {
            return Err(unsupported(format!(
                "it needs an intermediate router other than the source and destination \
                 routers, and only {} routers have endpoints",
                targets.len()
            )));
        }
        // Port map.
        let mut port_base = vec![0u32; r + 1];
        let mut deg = vec![0u32; r];
        for x in 0..r {
            deg[x] = topo.network_degree(x) as u32;
            port_base[x + 1] = port_base[x] + deg[x] + topo.router_endpoints(x).len() as u32;
        }
        let np = port_base[r] as usize;
        let mut port_router = vec![0u32; np];
        let mut port_nbr = vec![NONE; np];
        let mut port_peer = vec![NONE; np];
        let mut port_link = vec![NONE; np];
        let mut endpoint_port = vec![0u32; topo.num_endpoints()];
        for x in 0..r {
            let (nbrs, links) = topo.adjacency(x);
            let base = port_base[x] as usize;
            for j in 0..(port_base[x + 1] - port_base[x]) as usize {
                port_router[base + j] = x as u32;
            }
            for (j, (&n, &l)) in nbrs.iter().zip(links).enumerate() {
                port_nbr[base + j] = n;
                port_link[base + j] = l;
            }
            for (k, &e) in topo.router_endpoints(x).iter().enumerate() {
                let p = base + deg[x] as usize + k;
                port_peer[p] = e;
                endpoint_port[e as usize] = p as u32;
            }
        }
        // Peer of a network port: the port of the same link at the neighbour.
        for x in 0..r {
            let (_, links) = topo.adjacency(x);
            let base = port_base[x] as usize;
            for (j, &l) in links.iter().enumerate() {
                let n = port_nbr[base + j] as usize;
                let (_, nl) = topo.adjacency(n);
                // Parallel links have distinct ids, so the link id identifies the port.
                let k = nl.iter().position(|&y| y == l).expect("link in both lists");
                port_peer[base + j] = port_base[n] + k as u32;
            }
        }
        // Minimal next hops toward every target.
        let nt = targets.len();
        let mut mn_first = Vec::with_capacity(r * nt);
        let mut multi_off = Vec::with_capacity(r + 1);
        let mut multi_keys: Vec<(u32, u32)> = Vec::new();
        let mut mn_ports: Vec<u16> = Vec::new();
        let mut cands: Vec<u16> = Vec::new();
        let mut max_deg = 0usize;
        multi_off.push(0u32);
        for x in 0..r {
            let nbrs = topo.neighbors(x);
            max_deg = max_deg.max(nbrs.len());
            if nbrs.len() >= EMPTY as usize {
                return Err(unsupported(format!(
                    "router {x} has {} neighbours, more than {}",
                    nbrs.len(),
                    EMPTY - 1
                )));
            }
            for (ti, &t) in targets.iter().enumerate() {
                let row = &dist[t as usize * r..(t as usize + 1) * r];
                let dx = row[x];
                cands.clear();
                if dx != 0 && dx != u16::MAX {
                    for (j, &n) in nbrs.iter().enumerate() {
                        if row[n as usize] == dx - 1 {
                            cands.push(j as u16);
                        }
                    }
                }
                mn_first.push(match cands.len() {
                    0 => EMPTY,
                    1 => cands[0],
                    k => {
                        multi_keys.push((ti as u32, mn_ports.len() as u32));
                        mn_ports.push(k as u16);
                        mn_ports.extend_from_slice(&cands);
                        MULTI
                    }
                });
            }
            multi_off.push(multi_keys.len() as u32);
        }
        let ident: Vec<u16> = (0..max_deg.max(1) as u32).map(|j| j as u16).collect();
        let first8 = if max_deg < EMPTY8 as usize {
            mn_first
                .iter()
                .map(|&f| match f {
                    MULTI => u8::MAX,
                    EMPTY => EMPTY8,
                    j => j as u8,
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut routes = Routes {
            spec: spec.clone(),
            scheme: VcScheme::Single,
            vcs: 1,
            name: topo.name().to_string(),
            r,
            dist,
            port_base,
            deg,
            port_router,
            port_nbr,
            port_peer,
            port_link,
            endpoint_port,
            target_idx,
            targets,
            mn_first,
            first8,
            multi_off,
            multi_keys,
            mn_ports,
            ident,
            diameter,
        };
        let min_acyclic = || -> Result<Option<Vec<Channel>>, NetworkError> {
            let probe = routes.with_scheme(VcScheme::Single, 1);
            Ok(cdg::build(&probe, Algorithm::Min).find_cycle())
        };
        let scheme = match spec.vcs {
            VcPolicy::Single => VcScheme::Single,
            VcPolicy::Hop => VcScheme::Hop,
            VcPolicy::Phase => match min_acyclic()? {
                None => VcScheme::Phase,
                Some(cycle) => {
                    return Err(unsupported(format!(
                        "the phase VC assignment needs minimal routes whose one-VC channel \
                         dependency graph is acyclic, and here it has the cycle {}; use vcs=hop",
                        format_cycle(&cycle)
                    )))
                }
            },
            VcPolicy::Auto => {
                if r > 4096 {
                    VcScheme::Hop
                } else if min_acyclic()?.is_none() {
                    VcScheme::Phase
                } else {
                    VcScheme::Hop
                }
            }
        };
        let vcs = match (scheme, spec.algorithm.indirect()) {
            (VcScheme::Single, _) => 1,
            (VcScheme::Phase, false) => 1,
            (VcScheme::Phase, true) => 2,
            (VcScheme::Hop, false) => diameter.max(1) as usize,
            (VcScheme::Hop, true) => 2 * diameter.max(1) as usize,
        };
        if vcs > MAX_VCS {
            return Err(unsupported(format!(
                "the hop-index VC assignment needs {vcs} virtual channels (diameter {diameter}{}) \
                 and at most {MAX_VCS} are supported",
                if spec.algorithm.indirect() {
                    ", twice for indirect paths"
                } else {
                    ""
                }
            )));
        }
        routes.scheme = scheme;
        routes.vcs = vcs;
        Ok(routes)
    }

    /// A copy with another VC scheme (for the CDG probe and tests).
    pub fn with_scheme(&self, scheme: VcScheme, vcs: usize) -> Routes {
        let mut r = self.clone();
        r.scheme = scheme;
        r.vcs = vcs;
        r
    }

    /// The routing spec.
    pub fn spec(&self) -> &RoutingSpec {
        &self.spec
    }

    /// The topology's name.
    pub fn topology_name(&self) -> &str {
        &self.name
    }

    /// The VC scheme in use.
    pub fn scheme(&self) -> VcScheme {
        self.scheme
    }

    /// Virtual channels per network port.
    pub fn num_vcs(&self) -> usize {
        self.vcs
    }

    /// Number of routers.
    pub fn num_routers(&self) -> usize {
        self.r
    }

    /// Number of ports (network and endpoint).
    pub fn num_ports(&self) -> usize {
        self.port_router.len()
    }

    /// Router-to-router distance.
    #[inline]
    pub fn dist(&self, a: usize, b: usize) -> u16 {
        self.dist[a * self.r + b]
    }

    /// Largest distance between routers with endpoints.
    pub fn diameter(&self) -> u16 {
        self.diameter
    }

    /// Routers with endpoints (the destinations and the intermediate set), ascending.
    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    /// Local ports of `router` on a minimal path toward target router `t` (which must carry
    /// endpoints); empty when `router == t`.
    #[inline]
    pub fn min_ports(&self, router: usize, t: usize) -> &[u16] {
        let (ti, f) = self.first_entry(router, t);
        if f < EMPTY {
            let j = f as usize;
            &self.ident[j..j + 1]
        } else if f == EMPTY {
            &[]
        } else {
            let keys = &self.multi_keys
                [self.multi_off[router] as usize..self.multi_off[router + 1] as usize];
            let k = keys.partition_point(|&(x, _)| x < ti);
            let off = keys[k].1 as usize;
            let n = self.mn_ports[off] as usize;
            &self.mn_ports[off + 1..off + 1 + n]
        }
    }

    /// The one local port of `router` on a minimal path toward target router `t` (which must
    /// carry endpoints): `Some(j)` when [`Routes::min_ports`] is `[j]`, `None` when there are
    /// several or none (`router == t`). One load of the first-port table, no slice: what the
    /// packet engine asks of a hop whose choice draws nothing.
    #[inline(always)]
    pub fn single_min_port(&self, router: usize, t: usize) -> Option<u16> {
        let i = router * self.targets.len() + self.target_idx[t] as usize;
        if let Some(&f) = self.first8.get(i) {
            return (f < EMPTY8).then_some(f as u16);
        }
        let f = self.mn_first[i];
        (f < EMPTY).then_some(f)
    }

    /// The index of target router `t` among the targets, and the first-port table's entry of
    /// (`router`, `t`): the port when it is the only minimal one, `EMPTY` when there is none,
    /// above it when there are several.
    #[inline(always)]
    fn first_entry(&self, router: usize, t: usize) -> (u32, u16) {
        let ti = self.target_idx[t];
        (ti, self.mn_first[router * self.targets.len() + ti as usize])
    }

    /// Global id of local port `j` of `router`.
    #[inline]
    pub fn port(&self, router: usize, j: usize) -> usize {
        self.port_base[router] as usize + j
    }

    /// Network degree of `router`.
    #[inline]
    pub fn degree(&self, router: usize) -> usize {
        self.deg[router] as usize
    }

    /// `(from router, to router)` of a network port; `None` for an endpoint port.
    pub fn port_ends(&self, port: usize) -> Option<(u32, u32)> {
        let n = self.port_nbr[port];
        (n != NONE).then(|| (self.port_router[port], n))
    }

    /// Link index (into `Topology::links`) of a network port.
    pub fn port_link(&self, port: usize) -> Option<u32> {
        let l = self.port_link[port];
        (l != NONE).then_some(l)
    }

    /// Router of a port.
    pub fn port_router(&self, port: usize) -> u32 {
        self.port_router[port]
    }

    /// Port of endpoint `e` at its router.
    pub fn endpoint_port(&self, e: usize) -> usize {
        self.endpoint_port[e] as usize
    }

    /// The endpoint of an endpoint port (`None` for a network port).
    pub fn port_endpoint(&self, port: usize) -> Option<u32> {
        (self.port_nbr[port] == NONE).then(|| self.port_peer[port])
    }

    /// UGAL penalty factor for an indirect path of `li` hops against a minimal one of `lm`.
    pub fn ugal_factor(&self, li: u16, lm: u16) -> f64 {
        let ratio = match self.spec.cost {
            UgalCost::Ratio => true,
            UgalCost::Constant => false,
            UgalCost::Auto => self.scheme == VcScheme::Hop,
        };
        if ratio {
            self.spec.c.unwrap_or(1.0) * li as f64 / lm.max(1) as f64
        } else {
            self.spec.c.unwrap_or(2.0)
        }
    }

    /// The UGAL cost mode in use (`ratio` or `const`).
    pub fn ugal_cost_mode(&self) -> &'static str {
        let ratio = match self.spec.cost {
            UgalCost::Ratio => true,
            UgalCost::Constant => false,
            UgalCost::Auto => self.scheme == VcScheme::Hop,
        };
        if ratio {
            "ratio"
        } else {
            "const"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::generate;

    #[test]
    fn first_ports_are_the_minimal_ports() {
        // Several minimal ports on most hops (fat tree, torus) and mostly one (Slim Fly,
        // dragonfly): `min_ports` and `single_min_port` against the ports computed from the
        // distances and the adjacency directly, on every (router, target).
        for topo in [
            "slimfly:q=5",
            "fattree:k=4,levels=3",
            "torus:dims=4x4",
            "dragonfly:p=2",
        ] {
            let topo = generate(topo).unwrap();
            let routes = Routes::new(&topo, &RoutingSpec::parse("min").unwrap()).unwrap();
            let (mut singles, mut multis) = (0, 0);
            for x in 0..routes.num_routers() {
                let nbrs = topo.neighbors(x);
                for &t in routes.targets() {
                    let t = t as usize;
                    let want: Vec<u16> = if x == t {
                        Vec::new()
                    } else {
                        let dx = routes.dist(x, t);
                        (0..nbrs.len() as u16)
                            .filter(|&j| routes.dist(nbrs[j as usize] as usize, t) + 1 == dx)
                            .collect()
                    };
                    assert_eq!(routes.min_ports(x, t), &want[..], "router {x}, target {t}");
                    let single = (want.len() == 1).then(|| want[0]);
                    assert_eq!(
                        routes.single_min_port(x, t),
                        single,
                        "router {x}, target {t}"
                    );
                    singles += single.is_some() as usize;
                    multis += (want.len() > 1) as usize;
                }
            }
            assert!(singles > 0, "{}: no single minimal port", topo.name());
            assert!(
                multis > 0 || topo.name().starts_with("slimfly"),
                "{}: no router with several minimal ports",
                topo.name()
            );
        }
    }
}
