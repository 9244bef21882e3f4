//! Ethernet switched trees (alltoall seed, section 3: Faraj and Yuan, IPDPS 2005): switches
//! and machines joined by links into a tree, machines only as leaves; and the analysis of any
//! tree-shaped topology: per-link AAPC load |M_u|·|M_v|, the bottleneck link, the peak
//! aggregate AAPC throughput bound and the root of section 4.1.
//!
//! # Description file (JSON)
//! ```json
//! {
//!   "name": "fig1",
//!   "bandwidth_gbps": 0.1,
//!   "latency": "50ns",
//!   "switches": ["s0", "s1", "s3"],
//!   "machines": ["n0", "n1", "n2", "n3", "n4", "n5"],
//!   "links": [["n0", "s0"], ["n1", "s0"], ["n2", "s0"], ["s0", "s1"],
//!             {"a": "s1", "b": "s3", "bandwidth_gbps": 1, "latency": "1us"}, ...]
//! }
//! ```
//! `name`, `bandwidth_gbps` and `latency` (a time with unit, or a number of ns) are optional
//! defaults for every link; a link is `[a, b]` or an object overriding them. Switches become
//! routers and machines endpoints, both in file order.
//!
//! # Presets
//! * `fig1`: the example cluster of the seed's Figure 1, as pinned down by its text: s0 holds
//!   n0, n1, n2; s1 holds s0, s3 and n5; s3 holds n3 and n4 (path(n0, n3) = n0 s0 s1 s3 n3;
//!   the root s1 has subtrees t_s0, t_s3, t_n5 with 3, 2 and 1 machines). The figure's switch
//!   s2 appears in no path or subtree the text names, so it is left out.
//! * `fig5a`: 24 machines on one switch (Figure 5 (a)).
//! * `fig5b`: 32 machines, 8 on each of 4 switches, s1, s2, s3 each linked to s0 (bottleneck
//!   load 8·24 = 192).
//! * `fig5c`: 32 machines, 8 on each of 4 switches in a chain s0–s1–s2–s3 (bottleneck load
//!   16·16 = 256).
//!
//! The seed's Figure 5 is a drawing; (b) and (c) are inferred from its text (8 nodes on each
//! of four 2224 switches, bottleneck links between switches) and from its measurements: the
//! scheduled AAPC times at 256 KB, 4836 ms on (b) and 6396 ms on (c), stand in the ratio
//! 1.32 ≈ 256/192 of the bottleneck loads of a star and a chain. All presets use the seed's
//! 100 Mb/s links (section 6).

use super::error::TopologyError;
use super::graph::{format_latency, LinkParams, Topology, TopologyParts};
use crate::units::{parse_time, Time};
use serde_json::Value;
use std::collections::HashMap;

/// Names of the presets accepted by [`TreeDescription::preset`].
pub const PRESETS: [&str; 4] = ["fig1", "fig5a", "fig5b", "fig5c"];

/// A switched tree as described in a file: switches, machines and links between them.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeDescription {
    /// Name of the cluster.
    pub name: String,
    /// Switch names, in order.
    pub switches: Vec<String>,
    /// Machine names, in order.
    pub machines: Vec<String>,
    /// Links `(a, b, params)` by name.
    pub links: Vec<(String, String, LinkParams)>,
}

/// 100 Mb/s Ethernet with the library's default latency.
fn ethernet() -> LinkParams {
    LinkParams {
        bandwidth_gbps: 0.1,
        ..LinkParams::default()
    }
}

fn parse_err(what: &str, reason: impl Into<String>) -> TopologyError {
    TopologyError::Parse {
        what: what.to_string(),
        reason: reason.into(),
    }
}

fn parse_latency(v: &Value, ctx: &str, what: &str) -> Result<Time, TopologyError> {
    match v {
        Value::String(s) => parse_time(s).map_err(|e| parse_err(what, format!("{ctx}: {e}"))),
        Value::Number(n) => {
            let t = n.as_f64().unwrap_or(-1.0);
            parse_time(&format!("{t}ns")).map_err(|e| parse_err(what, format!("{ctx}: {e}")))
        }
        _ => Err(parse_err(
            what,
            format!("{ctx}: latency must be a time such as \"50ns\" or a number of ns"),
        )),
    }
}

fn parse_bandwidth(v: &Value, ctx: &str, what: &str) -> Result<f64, TopologyError> {
    match v.as_f64() {
        Some(b) if b.is_finite() && b > 0.0 => Ok(b),
        _ => Err(parse_err(
            what,
            format!("{ctx}: bandwidth_gbps must be a number > 0, got {v}"),
        )),
    }
}

impl TreeDescription {
    /// One of [`PRESETS`].
    pub fn preset(name: &str) -> Result<TreeDescription, TopologyError> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let link = |a: &str, b: &str| (a.to_string(), b.to_string(), ethernet());
        let machines = |n: usize| (0..n).map(|i| format!("n{i}")).collect::<Vec<_>>();
        let star = |switches: usize, per: usize, chain: bool, name: &str| {
            let mut links = Vec::new();
            for sw in 0..switches {
                for m in 0..per {
                    links.push(link(&format!("n{}", sw * per + m), &format!("s{sw}")));
                }
            }
            for sw in 1..switches {
                let up = if chain { sw - 1 } else { 0 };
                links.push(link(&format!("s{up}"), &format!("s{sw}")));
            }
            TreeDescription {
                name: name.to_string(),
                switches: (0..switches).map(|i| format!("s{i}")).collect(),
                machines: machines(switches * per),
                links,
            }
        };
        match name {
            "fig1" => Ok(TreeDescription {
                name: "fig1".into(),
                switches: s(&["s0", "s1", "s3"]),
                machines: machines(6),
                links: vec![
                    link("n0", "s0"),
                    link("n1", "s0"),
                    link("n2", "s0"),
                    link("s0", "s1"),
                    link("s1", "s3"),
                    link("n3", "s3"),
                    link("n4", "s3"),
                    link("n5", "s1"),
                ],
            }),
            "fig5a" => Ok(star(1, 24, false, "fig5a")),
            "fig5b" => Ok(star(4, 8, false, "fig5b")),
            "fig5c" => Ok(star(4, 8, true, "fig5c")),
            _ => Err(TopologyError::Parameter {
                family: "tree",
                name: "preset",
                value: name.to_string(),
                reason: format!(
                    "unknown preset; accepted: {} or the path of a JSON description",
                    PRESETS.join(", ")
                ),
            }),
        }
    }

    /// Parses the JSON description documented in the module; `what` names the source in
    /// errors (a file name).
    pub fn from_json(text: &str, what: &str) -> Result<TreeDescription, TopologyError> {
        let v: Value = serde_json::from_str(text).map_err(|e| parse_err(what, e.to_string()))?;
        let obj = v.as_object().ok_or_else(|| {
            parse_err(
                what,
                "expected a JSON object with switches, machines and links",
            )
        })?;
        for key in obj.keys() {
            if ![
                "name",
                "bandwidth_gbps",
                "latency",
                "switches",
                "machines",
                "links",
            ]
            .contains(&key.as_str())
            {
                return Err(parse_err(
                    what,
                    format!(
                        "unknown key '{key}'; accepted: name, bandwidth_gbps, latency, \
                         switches, machines, links"
                    ),
                ));
            }
        }
        let mut default = ethernet();
        if let Some(b) = obj.get("bandwidth_gbps") {
            default.bandwidth_gbps = parse_bandwidth(b, "top level", what)?;
        }
        if let Some(l) = obj.get("latency") {
            default.latency = parse_latency(l, "top level", what)?;
        }
        let names = |key: &str| -> Result<Vec<String>, TopologyError> {
            let arr = obj
                .get(key)
                .and_then(Value::as_array)
                .ok_or_else(|| parse_err(what, format!("'{key}' must be a list of names")))?;
            arr.iter()
                .map(|x| {
                    x.as_str().map(str::to_string).ok_or_else(|| {
                        parse_err(what, format!("'{key}' must be a list of names, found {x}"))
                    })
                })
                .collect()
        };
        let switches = names("switches")?;
        let machines = names("machines")?;
        let arr = obj
            .get("links")
            .and_then(Value::as_array)
            .ok_or_else(|| parse_err(what, "'links' must be a list of [a, b] pairs"))?;
        let mut links = Vec::with_capacity(arr.len());
        for (i, l) in arr.iter().enumerate() {
            let ctx = format!("link {i}");
            let bad = || {
                parse_err(
                    what,
                    format!("{ctx}: expected [a, b] or {{\"a\": .., \"b\": ..}}, got {l}"),
                )
            };
            let (a, b, params) = match l {
                Value::Array(x) if x.len() == 2 => {
                    let a = x[0].as_str().ok_or_else(bad)?;
                    let b = x[1].as_str().ok_or_else(bad)?;
                    (a.to_string(), b.to_string(), default)
                }
                Value::Object(o) => {
                    let a = o.get("a").and_then(Value::as_str).ok_or_else(bad)?;
                    let b = o.get("b").and_then(Value::as_str).ok_or_else(bad)?;
                    let mut p = default;
                    for (k, v) in o {
                        match k.as_str() {
                            "a" | "b" => {}
                            "bandwidth_gbps" => p.bandwidth_gbps = parse_bandwidth(v, &ctx, what)?,
                            "latency" => p.latency = parse_latency(v, &ctx, what)?,
                            _ => {
                                return Err(parse_err(
                                    what,
                                    format!(
                                        "{ctx}: unknown key '{k}'; accepted: a, b, \
                                         bandwidth_gbps, latency"
                                    ),
                                ))
                            }
                        }
                    }
                    (a.to_string(), b.to_string(), p)
                }
                _ => return Err(bad()),
            };
            links.push((a, b, params));
        }
        let name = match obj.get("name") {
            None => what.to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(x) => return Err(parse_err(what, format!("'name' must be a string, got {x}"))),
        };
        Ok(TreeDescription {
            name,
            switches,
            machines,
            links,
        })
    }

    /// The description as JSON (the format [`TreeDescription::from_json`] reads).
    pub fn to_json(&self) -> String {
        let q = |s: &str| Value::String(s.to_string()).to_string();
        let list = |v: &[String]| v.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ");
        let mut out = String::new();
        out.push_str("{\n");
        out.push_str(&format!("  \"name\": {},\n", q(&self.name)));
        out.push_str(&format!("  \"switches\": [{}],\n", list(&self.switches)));
        out.push_str(&format!("  \"machines\": [{}],\n", list(&self.machines)));
        out.push_str("  \"links\": [\n");
        for (i, (a, b, p)) in self.links.iter().enumerate() {
            let sep = if i + 1 < self.links.len() { "," } else { "" };
            out.push_str(&format!(
                "    {{\"a\": {}, \"b\": {}, \"bandwidth_gbps\": {}, \"latency\": \"{}\"}}{sep}\n",
                q(a),
                q(b),
                p.bandwidth_gbps,
                format_latency(p.latency)
            ));
        }
        out.push_str("  ]\n}\n");
        out
    }

    /// Validates the tree and builds the topology (switches → routers, machines → endpoints).
    ///
    /// Rejected, with the reason: duplicate names, links naming unknown nodes, self-links,
    /// duplicate links, no machine, a machine that is not a leaf (linked to a machine, or with
    /// other than one link), a link that closes a loop, a disconnected part.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let what = self.name.as_str();
        if self.switches.is_empty() {
            return Err(parse_err(what, "no switches"));
        }
        if self.machines.is_empty() {
            return Err(parse_err(what, "no machines"));
        }
        let ns = self.switches.len();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, n) in self.switches.iter().chain(&self.machines).enumerate() {
            if index.insert(n.as_str(), i).is_some() {
                return Err(parse_err(what, format!("name '{n}' is used twice")));
            }
        }
        let total = index.len();
        let name = |i: usize| -> &str {
            if i < ns {
                &self.switches[i]
            } else {
                &self.machines[i - ns]
            }
        };
        let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); total];
        let mut seen = std::collections::HashSet::new();
        let mut parent: Vec<usize> = (0..total).collect();
        fn find(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        for (li, (a, b, _)) in self.links.iter().enumerate() {
            let lookup = |n: &str| {
                index.get(n).copied().ok_or_else(|| {
                    parse_err(
                        what,
                        format!("link {li} names '{n}', which is neither a switch nor a machine"),
                    )
                })
            };
            let (x, y) = (lookup(a)?, lookup(b)?);
            if x == y {
                return Err(parse_err(what, format!("link {li} joins '{a}' to itself")));
            }
            if !seen.insert((x.min(y), x.max(y))) {
                return Err(parse_err(what, format!("link {a}-{b} is listed twice")));
            }
            if x >= ns && y >= ns {
                return Err(TopologyError::NotATree {
                    reason: format!(
                        "link {a}-{b} joins two machines; a machine must hang off a switch"
                    ),
                });
            }
            let (rx, ry) = (find(&mut parent, x), find(&mut parent, y));
            if rx == ry {
                // Name the loop: the tree path from y to x, closed by this link.
                let path = tree_path(&adj, y, x);
                let mut names: Vec<&str> = path.iter().map(|&i| name(i)).collect();
                names.push(name(y));
                return Err(TopologyError::NotATree {
                    reason: format!("link {a}-{b} closes a loop {}", names.join(" - ")),
                });
            }
            parent[rx] = ry;
            adj[x].push((y, li));
            adj[y].push((x, li));
        }
        for (m, mname) in self.machines.iter().enumerate() {
            let links = &adj[ns + m];
            if links.is_empty() {
                return Err(TopologyError::NotATree {
                    reason: format!("machine '{mname}' has no link"),
                });
            }
            if links.len() > 1 {
                let to: Vec<&str> = links.iter().map(|&(o, _)| name(o)).collect();
                return Err(TopologyError::NotATree {
                    reason: format!(
                        "machine '{mname}' is not a leaf: it has {} links (to {})",
                        links.len(),
                        to.join(", ")
                    ),
                });
            }
        }
        let root0 = find(&mut parent, 0);
        let apart: Vec<&str> = (0..total)
            .filter(|&i| find(&mut parent, i) != root0)
            .map(name)
            .collect();
        if !apart.is_empty() {
            let shown = apart.iter().take(6).copied().collect::<Vec<_>>().join(", ");
            let more = if apart.len() > 6 {
                format!(" and {} more", apart.len() - 6)
            } else {
                String::new()
            };
            return Err(TopologyError::NotATree {
                reason: format!(
                    "disconnected: {shown}{more} cannot reach switch '{}'",
                    self.switches[0]
                ),
            });
        }
        // Build: switches are routers, machines endpoints.
        let mut parts = TopologyParts {
            name: format!("tree:{}", self.name),
            family: "tree".into(),
            params: vec![("name".into(), self.name.clone())],
            kinds: vec!["switch".into()],
            router_kind: vec![0; ns],
            router_names: Some(self.switches.clone()),
            endpoint_names: Some(self.machines.clone()),
            ..TopologyParts::default()
        };
        parts.endpoint_router = vec![0; self.machines.len()];
        parts.endpoint_links = vec![LinkParams::default(); self.machines.len()];
        for (a, b, p) in &self.links {
            let (x, y) = (index[a.as_str()], index[b.as_str()]);
            if x >= ns || y >= ns {
                let (m, s) = if x >= ns { (x, y) } else { (y, x) };
                parts.endpoint_router[m - ns] = s as u32;
                parts.endpoint_links[m - ns] = *p;
            } else {
                parts.links.push(super::Link {
                    a: x as u32,
                    b: y as u32,
                    bandwidth_gbps: p.bandwidth_gbps,
                    latency: p.latency,
                });
            }
        }
        Topology::from_parts(parts)
    }
}

/// Path from `from` to `to` in the forest `adj` (both in one tree).
fn tree_path(adj: &[Vec<(usize, usize)>], from: usize, to: usize) -> Vec<usize> {
    let mut prev = vec![usize::MAX; adj.len()];
    let mut queue = std::collections::VecDeque::from([from]);
    prev[from] = from;
    while let Some(x) = queue.pop_front() {
        if x == to {
            break;
        }
        for &(y, _) in &adj[x] {
            if prev[y] == usize::MAX {
                prev[y] = x;
                queue.push_back(y);
            }
        }
    }
    let mut path = vec![to];
    let mut x = to;
    while x != from {
        x = prev[x];
        path.push(x);
    }
    path.reverse();
    path
}

/// An edge of a tree topology: a router-to-router link or an endpoint's link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeEdge {
    /// Router-to-router link (index into [`Topology::links`]).
    Link(usize),
    /// The link of this endpoint to its router.
    Endpoint(usize),
}

/// A subtree hanging off the root: its top node and machine count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subtree {
    /// Name of the node adjacent to the root (a switch or a machine).
    pub top: String,
    /// The top node as an edge from the root.
    pub edge: TreeEdge,
    /// Machines (endpoints) in the subtree.
    pub machines: usize,
}

/// AAPC analysis of a tree (alltoall seed, sections 3 and 4.1).
#[derive(Clone, Debug, PartialEq)]
pub struct TreeAnalysis {
    /// Load of every router-to-router link: |M_u|·|M_v|, machines on each side.
    pub link_loads: Vec<u64>,
    /// Load of every endpoint link: |M| − 1.
    pub endpoint_load: u64,
    /// The bottleneck (most loaded edge; the first in link order, then endpoint order, on
    /// ties).
    pub bottleneck: TreeEdge,
    /// `u-v` names of the bottleneck's ends, the side with more machines first.
    pub bottleneck_name: String,
    /// Machines on the bottleneck's larger side |M_u| and smaller side |M_v|.
    pub m_u: usize,
    /// See `m_u`.
    pub m_v: usize,
    /// AAPC load |M_u|·|M_v|: messages crossing the bottleneck each way, and the minimum
    /// number of contention-free phases.
    pub load: u64,
    /// Bandwidth of the bottleneck in Gb/s.
    pub bottleneck_bandwidth_gbps: f64,
    /// Peak aggregate AAPC throughput bound |M|(|M| − 1)B/(|M_u||M_v|) in Gb/s.
    pub peak_throughput_gbps: f64,
    /// The root of section 4.1 (a router).
    pub root: usize,
    /// Its name.
    pub root_name: String,
    /// The root's subtrees with machines, most machines first (t_0, t_1, …).
    pub subtrees: Vec<Subtree>,
}

/// AAPC analysis if the router graph is a tree (connected, R − 1 links) and there are at least
/// two endpoints; `None` otherwise.
pub fn analyze_tree(topo: &Topology) -> Option<TreeAnalysis> {
    let r = topo.num_routers();
    let n = topo.num_endpoints();
    if n < 2 || topo.num_links() + 1 != r {
        return None;
    }
    // Rooted at router 0: parent, parent link, DFS order.
    let mut parent = vec![usize::MAX; r];
    let mut plink = vec![usize::MAX; r];
    let mut order = Vec::with_capacity(r);
    parent[0] = 0;
    let mut stack = vec![0usize];
    while let Some(x) = stack.pop() {
        order.push(x);
        let (nbr, lk) = topo.adjacency(x);
        for (&y, &l) in nbr.iter().zip(lk) {
            let y = y as usize;
            if parent[y] == usize::MAX {
                parent[y] = x;
                plink[y] = l as usize;
                stack.push(y);
            }
        }
    }
    if order.len() != r {
        return None; // disconnected
    }
    let mut below = vec![0usize; r];
    for &x in order.iter().rev() {
        below[x] += topo.router_endpoints(x).len();
        if x != 0 {
            let p = parent[x];
            below[p] += below[x];
        }
    }
    let mut link_loads = vec![0u64; topo.num_links()];
    for x in 1..r {
        let m = below[x] as u64;
        link_loads[plink[x]] = m * (n as u64 - m);
    }
    let endpoint_load = n as u64 - 1;
    let (mut best, mut load) = (TreeEdge::Endpoint(0), endpoint_load);
    for (i, &l) in link_loads.iter().enumerate() {
        if l > load || (l == load && matches!(best, TreeEdge::Endpoint(_))) {
            best = TreeEdge::Link(i);
            load = l;
        }
    }
    let rname = |x: usize| {
        topo.router_name(x)
            .map(str::to_string)
            .unwrap_or_else(|| format!("r{x}"))
    };
    let ename = |e: usize| {
        topo.endpoint_name(e)
            .map(str::to_string)
            .unwrap_or_else(|| format!("e{e}"))
    };
    // Machines on the side of router `y` when the edge towards `x` is removed.
    let side = |x: usize, y: usize| -> usize {
        if parent[y] == x {
            below[y]
        } else {
            n - below[x]
        }
    };
    // Section 4.1: from the bottleneck's larger side u, walk away from v while u has a single
    // branch with machines; `skip` is the endpoint on the far side when the bottleneck is an
    // endpoint link.
    let walk = |mut u: usize, mut v: usize, mut skip: Option<usize>| -> usize {
        loop {
            let mut branches = topo
                .router_endpoints(u)
                .iter()
                .filter(|&&e| Some(e as usize) != skip)
                .count();
            let mut next = None;
            for &w in topo.neighbors(u) {
                let w = w as usize;
                if w != v && side(u, w) > 0 {
                    branches += 1;
                    next = Some(w);
                }
            }
            match (branches, next) {
                (1, Some(w)) => {
                    v = u;
                    u = w;
                    skip = None;
                }
                _ => return u,
            }
        }
    };
    let (bottleneck_name, m_u, m_v, bw, root) = match best {
        TreeEdge::Endpoint(e) => {
            let s = topo.endpoint_router(e);
            (
                format!("{}-{}", rname(s), ename(e)),
                n - 1,
                1,
                topo.endpoint_link(e).bandwidth_gbps,
                walk(s, usize::MAX, Some(e)),
            )
        }
        TreeEdge::Link(i) => {
            let l = topo.links()[i];
            let (a, b) = (l.a as usize, l.b as usize);
            let (ma, mb) = (side(b, a), side(a, b));
            let (u, v, mu, mv) = if ma >= mb {
                (a, b, ma, mb)
            } else {
                (b, a, mb, ma)
            };
            // On a tie both ends qualify (section 4.1 assumes |M_u| >= |M_v|); take the root
            // with fewer subtrees, then the link's first end. This picks s1 in the seed's
            // Figure 1, as its text does.
            let root = if ma == mb {
                let branches = |x: usize| {
                    topo.router_endpoints(x).len()
                        + topo
                            .neighbors(x)
                            .iter()
                            .filter(|&&w| side(x, w as usize) > 0)
                            .count()
                };
                let (ra, rb) = (walk(a, b, None), walk(b, a, None));
                if branches(rb) < branches(ra) {
                    rb
                } else {
                    ra
                }
            } else {
                walk(u, v, None)
            };
            (
                format!("{}-{}", rname(u), rname(v)),
                mu,
                mv,
                l.bandwidth_gbps,
                root,
            )
        }
    };
    let mut subtrees: Vec<Subtree> = Vec::new();
    for &e in topo.router_endpoints(root) {
        subtrees.push(Subtree {
            top: ename(e as usize),
            edge: TreeEdge::Endpoint(e as usize),
            machines: 1,
        });
    }
    let (nbr, lk) = topo.adjacency(root);
    for (&w, &l) in nbr.iter().zip(lk) {
        let m = side(root, w as usize);
        if m > 0 {
            subtrees.push(Subtree {
                top: rname(w as usize),
                edge: TreeEdge::Link(l as usize),
                machines: m,
            });
        }
    }
    // Most machines first; switches before machines, then adjacency order, on ties.
    subtrees.sort_by_key(|s| {
        (
            std::cmp::Reverse(s.machines),
            matches!(s.edge, TreeEdge::Endpoint(_)),
        )
    });
    Some(TreeAnalysis {
        link_loads,
        endpoint_load,
        bottleneck: best,
        bottleneck_name,
        m_u,
        m_v,
        load,
        bottleneck_bandwidth_gbps: bw,
        peak_throughput_gbps: n as f64 * (n as f64 - 1.0) * bw / load as f64,
        root,
        root_name: rname(root),
        subtrees,
    })
}
