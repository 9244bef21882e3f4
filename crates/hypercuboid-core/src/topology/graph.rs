//! The [`Topology`] type: routers, endpoints attached to routers, links with bandwidth and
//! latency, and a CSR router adjacency.

use super::error::TopologyError;
use super::switch::{SwitchModel, SWITCH_KEYS};
use crate::units::{self, Time};

/// Bandwidth and latency of one link (both directions alike).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkParams {
    /// Bandwidth per direction in gigabits per second (10^9 bit/s).
    pub bandwidth_gbps: f64,
    /// Propagation latency in picoseconds.
    pub latency: Time,
}

impl Default for LinkParams {
    /// 100 Gb/s and 50 ns: the links of the diameter-two seed's simulations (section 4.1).
    fn default() -> Self {
        LinkParams {
            bandwidth_gbps: 100.0,
            latency: units::ns(50),
        }
    }
}

impl LinkParams {
    /// Serialisation cost of one byte in picoseconds (`8000 / bandwidth_gbps`), the per-byte
    /// rate the cost models and simulators take.
    pub fn ps_per_byte(&self) -> f64 {
        8000.0 / self.bandwidth_gbps
    }
}

/// A bidirectional link between two routers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    /// One end (router index).
    pub a: u32,
    /// The other end (router index).
    pub b: u32,
    /// Bandwidth per direction in Gb/s.
    pub bandwidth_gbps: f64,
    /// Latency in picoseconds.
    pub latency: Time,
}

impl Link {
    /// The link's bandwidth and latency.
    pub fn params(&self) -> LinkParams {
        LinkParams {
            bandwidth_gbps: self.bandwidth_gbps,
            latency: self.latency,
        }
    }

    /// The end that is not `r` (`r` must be an end).
    pub fn other(&self, r: u32) -> u32 {
        if self.a == r {
            self.b
        } else {
            self.a
        }
    }
}

/// The pieces a [`Topology`] is made of, with public fields: what readers fill in and
/// [`Topology::from_parts`] validates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TopologyParts {
    /// Canonical spec string (e.g. `slimfly:q=13,p=9`) or a file name.
    pub name: String,
    /// Family name (`slimfly`, `oft`, ..., `tree`, `json`, `graph`).
    pub family: String,
    /// Resolved generator parameters, in spec order.
    pub params: Vec<(String, String)>,
    /// Names of the router kinds (e.g. `L0`, `L1`, `L2` for an OFT); at most 256.
    pub kinds: Vec<String>,
    /// Kind of each router (index into `kinds`); its length is the number of routers.
    pub router_kind: Vec<u8>,
    /// Names of the coordinates every router carries (may be empty).
    pub coord_names: Vec<String>,
    /// Router coordinates, `coord_names.len()` per router, router-major.
    pub coords: Vec<u32>,
    /// Optional router names (tree descriptions, GraphML).
    pub router_names: Option<Vec<String>>,
    /// Optional endpoint names.
    pub endpoint_names: Option<Vec<String>>,
    /// Router of each endpoint; its length is the number of endpoints.
    pub endpoint_router: Vec<u32>,
    /// Link of each endpoint to its router.
    pub endpoint_links: Vec<LinkParams>,
    /// Router-to-router links.
    pub links: Vec<Link>,
    /// How the routers forward packets (virtual cut-through by default).
    pub switch: SwitchModel,
}

/// A network: routers, endpoints (each attached by one link to one router) and router-to-router
/// links with bandwidth and latency.
///
/// Indices are stable: routers `0..num_routers()`, endpoints `0..num_endpoints()` in the order
/// the generator documents (the seed's node order: endpoints of a router are consecutive, then
/// routers of a group/column/layer, then groups), links `0..num_links()`. The router adjacency
/// is stored as CSR: the neighbours of router `r` are `adjacency(r)`, each with the index of
/// the link that reaches it (parallel links appear once per link).
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    parts: TopologyParts,
    adj_offsets: Vec<u32>,
    adj_nbr: Vec<u32>,
    adj_link: Vec<u32>,
    ep_offsets: Vec<u32>,
    ep_list: Vec<u32>,
}

/// Largest topology built in memory: routers, endpoints and links each at most this many.
pub const MAX_ELEMENTS: u128 = 1 << 24;

/// Refuses sizes above [`MAX_ELEMENTS`] before anything is allocated.
pub(crate) fn check_size(
    family: &'static str,
    routers: u128,
    endpoints: u128,
    links: u128,
) -> Result<(), TopologyError> {
    for (what, n) in [
        ("routers", routers),
        ("endpoints", endpoints),
        ("links", links),
    ] {
        if n > MAX_ELEMENTS {
            return Err(TopologyError::TooLarge {
                family,
                what: format!("{n} {what}"),
                limit: format!("{MAX_ELEMENTS} {what}"),
            });
        }
    }
    Ok(())
}

impl Topology {
    /// Validates `parts` and builds the adjacency.
    ///
    /// Checks: at least one router; every kind index, coordinate count, name count, endpoint
    /// router and link end in range; no self-loop; bandwidths finite and positive.
    pub fn from_parts(parts: TopologyParts) -> Result<Topology, TopologyError> {
        let inv = |reason: String| TopologyError::Invalid { reason };
        let r = parts.router_kind.len();
        if r == 0 {
            return Err(inv("a topology needs at least one router".into()));
        }
        if r as u128 > MAX_ELEMENTS
            || parts.endpoint_router.len() as u128 > MAX_ELEMENTS
            || parts.links.len() as u128 > MAX_ELEMENTS
        {
            return Err(inv(format!(
                "more than {MAX_ELEMENTS} routers, endpoints or links"
            )));
        }
        if parts.kinds.is_empty() || parts.kinds.len() > 256 {
            return Err(inv(format!(
                "{} router kinds; between 1 and 256 are accepted",
                parts.kinds.len()
            )));
        }
        if let Some(k) = parts
            .router_kind
            .iter()
            .position(|&k| k as usize >= parts.kinds.len())
        {
            return Err(inv(format!(
                "router {k} has kind {} but only {} kinds are named",
                parts.router_kind[k],
                parts.kinds.len()
            )));
        }
        if parts.coords.len() != r * parts.coord_names.len() {
            return Err(inv(format!(
                "{} coordinates for {r} routers with {} coordinates each",
                parts.coords.len(),
                parts.coord_names.len()
            )));
        }
        if let Some(names) = &parts.router_names {
            if names.len() != r {
                return Err(inv(format!("{} router names for {r} routers", names.len())));
            }
        }
        let n = parts.endpoint_router.len();
        if let Some(names) = &parts.endpoint_names {
            if names.len() != n {
                return Err(inv(format!(
                    "{} endpoint names for {n} endpoints",
                    names.len()
                )));
            }
        }
        if parts.endpoint_links.len() != n {
            return Err(inv(format!(
                "{} endpoint links for {n} endpoints",
                parts.endpoint_links.len()
            )));
        }
        if let Some(e) = parts.endpoint_router.iter().position(|&x| x as usize >= r) {
            return Err(inv(format!(
                "endpoint {e} is attached to router {} but there are {r} routers",
                parts.endpoint_router[e]
            )));
        }
        let bad_bw = |b: f64| !(b.is_finite() && b > 0.0);
        if let Some(e) = parts
            .endpoint_links
            .iter()
            .position(|l| bad_bw(l.bandwidth_gbps))
        {
            return Err(inv(format!(
                "endpoint {e} link bandwidth {} Gb/s; it must be finite and > 0",
                parts.endpoint_links[e].bandwidth_gbps
            )));
        }
        for (i, l) in parts.links.iter().enumerate() {
            if l.a as usize >= r || l.b as usize >= r {
                return Err(inv(format!(
                    "link {i} joins routers {} and {} but there are {r} routers",
                    l.a, l.b
                )));
            }
            if l.a == l.b {
                return Err(inv(format!("link {i} is a self-loop on router {}", l.a)));
            }
            if bad_bw(l.bandwidth_gbps) {
                return Err(inv(format!(
                    "link {i} bandwidth {} Gb/s; it must be finite and > 0",
                    l.bandwidth_gbps
                )));
            }
        }
        // CSR adjacency, neighbours in link order.
        let mut deg = vec![0u32; r + 1];
        for l in &parts.links {
            deg[l.a as usize] += 1;
            deg[l.b as usize] += 1;
        }
        let mut adj_offsets = vec![0u32; r + 1];
        for i in 0..r {
            adj_offsets[i + 1] = adj_offsets[i] + deg[i];
        }
        let mut fill = adj_offsets.clone();
        let mut adj_nbr = vec![0u32; 2 * parts.links.len()];
        let mut adj_link = vec![0u32; 2 * parts.links.len()];
        for (i, l) in parts.links.iter().enumerate() {
            for (x, y) in [(l.a, l.b), (l.b, l.a)] {
                let slot = fill[x as usize] as usize;
                adj_nbr[slot] = y;
                adj_link[slot] = i as u32;
                fill[x as usize] += 1;
            }
        }
        // Router -> endpoints, in endpoint order.
        let mut ep_offsets = vec![0u32; r + 1];
        for &x in &parts.endpoint_router {
            ep_offsets[x as usize + 1] += 1;
        }
        for i in 0..r {
            ep_offsets[i + 1] += ep_offsets[i];
        }
        let mut fill = ep_offsets.clone();
        let mut ep_list = vec![0u32; n];
        for (e, &x) in parts.endpoint_router.iter().enumerate() {
            ep_list[fill[x as usize] as usize] = e as u32;
            fill[x as usize] += 1;
        }
        Ok(Topology {
            parts,
            adj_offsets,
            adj_nbr,
            adj_link,
            ep_offsets,
            ep_list,
        })
    }

    /// The validated pieces.
    pub fn parts(&self) -> &TopologyParts {
        &self.parts
    }

    /// Consumes the topology, returning its pieces.
    pub fn into_parts(self) -> TopologyParts {
        self.parts
    }

    /// Canonical spec string (e.g. `slimfly:q=13,p=9`), or the file it was read from.
    pub fn name(&self) -> &str {
        &self.parts.name
    }

    /// Family name (`slimfly`, `mlfm`, `oft`, ...).
    pub fn family(&self) -> &str {
        &self.parts.family
    }

    /// Resolved generator parameters.
    pub fn params(&self) -> &[(String, String)] {
        &self.parts.params
    }

    /// Number of routers R.
    pub fn num_routers(&self) -> usize {
        self.parts.router_kind.len()
    }

    /// Number of endpoints N.
    pub fn num_endpoints(&self) -> usize {
        self.parts.endpoint_router.len()
    }

    /// Number of router-to-router links.
    pub fn num_links(&self) -> usize {
        self.parts.links.len()
    }

    /// Router-to-router links.
    pub fn links(&self) -> &[Link] {
        &self.parts.links
    }

    /// Neighbours of router `r` and the link reaching each, in link order.
    pub fn adjacency(&self, r: usize) -> (&[u32], &[u32]) {
        let (s, e) = (
            self.adj_offsets[r] as usize,
            self.adj_offsets[r + 1] as usize,
        );
        (&self.adj_nbr[s..e], &self.adj_link[s..e])
    }

    /// Neighbours of router `r`, in link order.
    pub fn neighbors(&self, r: usize) -> &[u32] {
        self.adjacency(r).0
    }

    /// The whole adjacency as CSR arrays: `(offsets, neighbours, link ids)`, `offsets` of
    /// length R + 1.
    pub fn csr(&self) -> (&[u32], &[u32], &[u32]) {
        (&self.adj_offsets, &self.adj_nbr, &self.adj_link)
    }

    /// Number of router-to-router ports of router `r` (its network degree).
    pub fn network_degree(&self, r: usize) -> usize {
        (self.adj_offsets[r + 1] - self.adj_offsets[r]) as usize
    }

    /// Ports of router `r`: network degree plus attached endpoints.
    pub fn router_degree(&self, r: usize) -> usize {
        self.network_degree(r) + self.router_endpoints(r).len()
    }

    /// Router of every endpoint.
    pub fn endpoint_routers(&self) -> &[u32] {
        &self.parts.endpoint_router
    }

    /// Router of endpoint `e`.
    pub fn endpoint_router(&self, e: usize) -> usize {
        self.parts.endpoint_router[e] as usize
    }

    /// Endpoints attached to router `r`, in endpoint order.
    pub fn router_endpoints(&self, r: usize) -> &[u32] {
        &self.ep_list[self.ep_offsets[r] as usize..self.ep_offsets[r + 1] as usize]
    }

    /// The link of endpoint `e` to its router.
    pub fn endpoint_link(&self, e: usize) -> LinkParams {
        self.parts.endpoint_links[e]
    }

    /// How the routers forward packets.
    pub fn switch(&self) -> SwitchModel {
        self.parts.switch
    }

    /// Sets how the routers forward packets; the switch model's name and parameters join
    /// [`Topology::params`] and the name (`tree:fig5b,switch=ethernet`) unless it is the
    /// default [`SwitchModel::Vct`].
    pub fn set_switch(&mut self, switch: SwitchModel) {
        let p = &mut self.parts;
        p.params.retain(|(k, _)| !SWITCH_KEYS.contains(&k.as_str()));
        if let Some(at) = p.name.find(",switch=") {
            p.name.truncate(at);
        }
        p.switch = switch;
        if let SwitchModel::Ethernet(e) = switch {
            let d = super::switch::Ethernet::default();
            let mut keys = vec![("switch", switch.name().to_string())];
            if e.buffer_frames != d.buffer_frames {
                keys.push(("buffer", e.buffer_frames.to_string()));
            }
            if e.mtu != d.mtu {
                keys.push(("mtu", e.mtu.to_string()));
            }
            if e.latency != d.latency {
                keys.push(("delay", crate::units::format_time_exact(e.latency)));
            }
            for (k, v) in keys {
                p.name.push_str(&format!(",{k}={v}"));
                p.params.push((k.to_string(), v));
            }
        }
    }

    /// Names of the router kinds.
    pub fn kinds(&self) -> &[String] {
        &self.parts.kinds
    }

    /// Kind index of router `r`.
    pub fn router_kind(&self, r: usize) -> usize {
        self.parts.router_kind[r] as usize
    }

    /// Kind name of router `r`.
    pub fn router_kind_name(&self, r: usize) -> &str {
        &self.parts.kinds[self.router_kind(r)]
    }

    /// Names of the router coordinates.
    pub fn coord_names(&self) -> &[String] {
        &self.parts.coord_names
    }

    /// Coordinates of router `r` (see the generator's documentation).
    pub fn coords(&self, r: usize) -> &[u32] {
        let k = self.parts.coord_names.len();
        &self.parts.coords[r * k..(r + 1) * k]
    }

    /// Name of router `r`, if the topology carries names.
    pub fn router_name(&self, r: usize) -> Option<&str> {
        self.parts.router_names.as_ref().map(|v| v[r].as_str())
    }

    /// Name of endpoint `e`, if the topology carries names.
    pub fn endpoint_name(&self, e: usize) -> Option<&str> {
        self.parts.endpoint_names.as_ref().map(|v| v[e].as_str())
    }

    /// Number of routers with at least one endpoint.
    pub fn num_endpoint_routers(&self) -> usize {
        (0..self.num_routers())
            .filter(|&r| !self.router_endpoints(r).is_empty())
            .count()
    }

    /// True when every router carries endpoints (a direct topology such as a Slim Fly);
    /// false for indirect ones (fat trees, OFT, MLFM) with routers that carry none.
    pub fn is_direct(&self) -> bool {
        (0..self.num_routers()).all(|r| !self.router_endpoints(r).is_empty())
    }

    /// True if some pair of routers is joined by more than one link.
    pub fn has_parallel_links(&self) -> bool {
        let mut seen = rustc_hash::FxHashSet::default();
        self.parts
            .links
            .iter()
            .any(|l| !seen.insert((l.a.min(l.b), l.a.max(l.b))))
    }
}

/// Incremental construction used by the generators.
pub(crate) struct Builder {
    parts: TopologyParts,
    link: LinkParams,
}

impl Builder {
    /// A builder for `family` with router kinds `kinds` and coordinates `coord_names`.
    pub(super) fn new(
        family: &str,
        kinds: &[&str],
        coord_names: &[&str],
        link: LinkParams,
    ) -> Self {
        Builder {
            parts: TopologyParts {
                family: family.to_string(),
                kinds: kinds.iter().map(|s| s.to_string()).collect(),
                coord_names: coord_names.iter().map(|s| s.to_string()).collect(),
                ..TopologyParts::default()
            },
            link,
        }
    }

    /// Reserves room for the routers, endpoints and links of `size`.
    pub(super) fn reserve(&mut self, size: &super::Size) {
        let (routers, endpoints) = (size.routers as usize, size.endpoints as usize);
        let links = size.links as usize;
        self.parts.router_kind.reserve(routers);
        self.parts
            .coords
            .reserve(routers * self.parts.coord_names.len());
        self.parts.endpoint_router.reserve(endpoints);
        self.parts.endpoint_links.reserve(endpoints);
        self.parts.links.reserve(links);
    }

    /// Adds a router of kind `kind` with `coords`; returns its index.
    pub(super) fn router(&mut self, kind: u8, coords: &[u32]) -> u32 {
        debug_assert_eq!(coords.len(), self.parts.coord_names.len());
        self.parts.router_kind.push(kind);
        self.parts.coords.extend_from_slice(coords);
        (self.parts.router_kind.len() - 1) as u32
    }

    /// Attaches `count` endpoints to `router`.
    pub(super) fn endpoints(&mut self, router: u32, count: u32) {
        for _ in 0..count {
            self.parts.endpoint_router.push(router);
            self.parts.endpoint_links.push(self.link);
        }
    }

    /// Adds a link between routers `a` and `b`.
    pub(super) fn link(&mut self, a: u32, b: u32) {
        self.parts.links.push(Link {
            a,
            b,
            bandwidth_gbps: self.link.bandwidth_gbps,
            latency: self.link.latency,
        });
    }

    /// Validates and builds, recording the canonical name and parameters.
    /// Link parameters other than the default are appended as `bw` and `lat`.
    pub(super) fn finish(
        mut self,
        mut params: Vec<(String, String)>,
    ) -> Result<Topology, TopologyError> {
        params.extend(link_kv(&self.link));
        let mut name = self.parts.family.clone();
        for (i, (k, v)) in params.iter().enumerate() {
            name.push(if i == 0 { ':' } else { ',' });
            name.push_str(k);
            name.push('=');
            name.push_str(v);
        }
        self.parts.name = name;
        self.parts.params = params;
        Topology::from_parts(self.parts)
    }
}

/// Formats `(key, value)` pairs for [`Builder::finish`].
pub(crate) fn kv(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// `bw` and `lat` spec entries for `link`, empty when it is the default.
pub(crate) fn link_kv(link: &LinkParams) -> Vec<(String, String)> {
    let d = LinkParams::default();
    let mut out = Vec::new();
    if link.bandwidth_gbps != d.bandwidth_gbps {
        out.push(("bw".to_string(), format!("{}", link.bandwidth_gbps)));
    }
    if link.latency != d.latency {
        out.push(("lat".to_string(), format_latency(link.latency)));
    }
    out
}

/// A latency as spec text: `50ns` when a whole number of nanoseconds, else `1500ps`.
pub(crate) fn format_latency(t: Time) -> String {
    if t.is_multiple_of(units::PS_PER_NS) {
        format!("{}ns", t / units::PS_PER_NS)
    } else {
        format!("{t}ps")
    }
}
