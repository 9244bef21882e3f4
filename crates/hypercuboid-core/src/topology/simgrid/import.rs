//! Reading a SimGrid platform into a [`Topology`]: the subset of the parent module's
//! documentation.

use super::{parse_bandwidth, parse_latency, LOOPBACK_GBPS, PLATFORM_VERSION};
use crate::topology::{Link, LinkParams, Topology, TopologyError, TopologyParts};
use crate::units::Time;
use roxmltree::{Document, Node};
use std::collections::HashMap;

/// The routings of a zone that are read.
const ROUTINGS: [&str; 4] = ["Full", "Floyd", "Dijkstra", "DijkstraCache"];

/// A `<host>` or a `<router>`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Host,
    Router,
}

struct Netpoint {
    name: String,
    kind: Kind,
}

struct SgLink {
    id: String,
    params: LinkParams,
}

struct Route {
    src: usize,
    dst: usize,
    /// Each link and the end it is entered by, if its direction says (`UP`: 0, `DOWN`: 1).
    links: Vec<(usize, Option<usize>)>,
    /// Where its element starts in the text (its line is counted only for an error).
    pos: usize,
}

/// Everything read from the platform, before the graph is built.
#[derive(Default)]
struct Platform {
    netpoints: Vec<Netpoint>,
    by_name: HashMap<String, usize>,
    links: Vec<SgLink>,
    link_by_id: HashMap<String, usize>,
    routes: Vec<Route>,
    params: Vec<(String, String)>,
}

struct Reader<'a> {
    doc: &'a Document<'a>,
    what: &'a str,
}

impl Reader<'_> {
    fn line(&self, node: Node<'_, '_>) -> u32 {
        self.doc.text_pos_at(node.range().start).row
    }

    fn err(&self, node: Node<'_, '_>, reason: impl std::fmt::Display) -> TopologyError {
        TopologyError::Parse {
            what: self.what.to_string(),
            reason: format!("line {}: {reason}", self.line(node)),
        }
    }

    fn attr<'n>(&self, node: Node<'n, '_>, name: &str) -> Result<&'n str, TopologyError> {
        node.attribute(name).ok_or_else(|| {
            self.err(
                node,
                format!("<{}> has no '{name}' attribute", node.tag_name().name()),
            )
        })
    }

    fn bandwidth(&self, node: Node<'_, '_>, name: &str) -> Result<f64, TopologyError> {
        let v = self.attr(node, name)?;
        parse_bandwidth(v).map_err(|e| self.err(node, format!("{name}=\"{v}\": {e}")))
    }

    fn latency(&self, node: Node<'_, '_>, name: &str) -> Result<Time, TopologyError> {
        match node.attribute(name) {
            None => Ok(0),
            Some(v) => parse_latency(v).map_err(|e| self.err(node, format!("{name}=\"{v}\": {e}"))),
        }
    }

    fn unsupported(&self, node: Node<'_, '_>, inside: &str, accepted: &str) -> TopologyError {
        self.err(
            node,
            format!(
                "<{}> in <{inside}> is not read; accepted: {accepted}",
                node.tag_name().name()
            ),
        )
    }
}

fn elements<'a, 'i>(node: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(|c| c.is_element())
}

/// Appends `item`, the `what` named `name`, to `items` and indexes it by its name in `index`;
/// its index, or why not (the name is taken).
fn declare<T>(
    index: &mut HashMap<String, usize>,
    items: &mut Vec<T>,
    name: &str,
    item: T,
    what: &str,
) -> Result<usize, String> {
    if index.contains_key(name) {
        return Err(format!("{what} '{name}' is declared twice"));
    }
    index.insert(name.to_string(), items.len());
    items.push(item);
    Ok(items.len() - 1)
}

impl Platform {
    fn netpoint(
        &mut self,
        r: &Reader<'_>,
        node: Node<'_, '_>,
        name: &str,
        kind: Kind,
    ) -> Result<(), TopologyError> {
        let point = Netpoint {
            name: name.to_string(),
            kind,
        };
        declare(
            &mut self.by_name,
            &mut self.netpoints,
            name,
            point,
            "netpoint",
        )
        .map_err(|e| r.err(node, e))?;
        Ok(())
    }

    fn link(
        &mut self,
        r: &Reader<'_>,
        node: Node<'_, '_>,
        id: &str,
        params: LinkParams,
    ) -> Result<usize, TopologyError> {
        let link = SgLink {
            id: id.to_string(),
            params,
        };
        declare(&mut self.link_by_id, &mut self.links, id, link, "link").map_err(|e| r.err(node, e))
    }

    fn zone(&mut self, r: &Reader<'_>, zone: Node<'_, '_>) -> Result<(), TopologyError> {
        let routing = r.attr(zone, "routing")?;
        let clusters: Vec<_> = elements(zone)
            .filter(|c| c.has_tag_name("cluster"))
            .collect();
        if !clusters.is_empty() {
            if let Some(other) =
                elements(zone).find(|c| !c.has_tag_name("cluster") && !c.has_tag_name("prop"))
            {
                return Err(r.unsupported(other, "zone", "one <cluster> alone in a zone"));
            }
            if clusters.len() > 1 {
                return Err(r.err(
                    clusters[1],
                    "a second <cluster>: routes between zones are not read; accepted: one cluster",
                ));
            }
            return self.cluster(r, clusters[0]);
        }
        if !ROUTINGS.contains(&routing) {
            return Err(r.err(
                zone,
                format!(
                    "zone routing '{routing}' is not read; accepted: {}",
                    ROUTINGS.join(", ")
                ),
            ));
        }
        self.params.push(("routing".into(), routing.into()));
        self.params
            .push(("zone".into(), zone.attribute("id").unwrap_or("").into()));
        const IN_ZONE: &str = "host, router, link, route, prop";
        for c in elements(zone) {
            match c.tag_name().name() {
                "host" => self.netpoint(r, c, r.attr(c, "id")?, Kind::Host)?,
                "router" => self.netpoint(r, c, r.attr(c, "id")?, Kind::Router)?,
                "link" => {
                    let params = LinkParams {
                        bandwidth_gbps: r.bandwidth(c, "bandwidth")?,
                        latency: r.latency(c, "latency")?,
                    };
                    self.link(r, c, r.attr(c, "id")?, params)?;
                }
                "route" | "prop" => {}
                _ => return Err(r.unsupported(c, "zone", IN_ZONE)),
            }
        }
        // Routes after every declaration: a route may name what is declared after it.
        for c in elements(zone).filter(|c| c.has_tag_name("route")) {
            self.route(r, c)?;
        }
        Ok(())
    }

    fn route(&mut self, r: &Reader<'_>, node: Node<'_, '_>) -> Result<(), TopologyError> {
        let end = |name: &str| -> Result<usize, TopologyError> {
            let v = r.attr(node, name)?;
            self.by_name.get(v).copied().ok_or_else(|| {
                r.err(
                    node,
                    format!("route {name}=\"{v}\" names no host or router of the zone"),
                )
            })
        };
        let (src, dst) = (end("src")?, end("dst")?);
        let mut links = Vec::new();
        for c in elements(node) {
            if !c.has_tag_name("link_ctn") {
                return Err(r.unsupported(c, "route", "link_ctn"));
            }
            let id = r.attr(c, "id")?;
            let &l = self
                .link_by_id
                .get(id)
                .ok_or_else(|| r.err(c, format!("link_ctn id=\"{id}\" names no link")))?;
            let dir = match c.attribute("direction") {
                None | Some("NONE") => None,
                Some("UP") => Some(0),
                Some("DOWN") => Some(1),
                Some(d) => {
                    return Err(r.err(
                        c,
                        format!("link_ctn direction=\"{d}\"; accepted: UP, DOWN, NONE"),
                    ))
                }
            };
            links.push((l, dir));
        }
        if links.is_empty() && src != dst {
            return Err(r.err(node, "a route without links between two netpoints"));
        }
        self.routes.push(Route {
            src,
            dst,
            links,
            pos: node.range().start,
        });
        Ok(())
    }

    /// A flat cluster: hosts `prefix<i>suffix` for the radical's `i`, each with its private
    /// link to the cluster's router; the backbone's latency is split between the two private
    /// links of every path.
    fn cluster(&mut self, r: &Reader<'_>, c: Node<'_, '_>) -> Result<(), TopologyError> {
        if let Some(t) = c.attribute("topology").filter(|t| *t != "FLAT") {
            return Err(r.err(
                c,
                format!("cluster topology=\"{t}\" is not read; accepted: FLAT"),
            ));
        }
        if let Some(inner) = elements(c).find(|n| !n.has_tag_name("prop")) {
            return Err(r.unsupported(inner, "cluster", "prop"));
        }
        let id = r.attr(c, "id")?;
        let prefix = c.attribute("prefix").unwrap_or("");
        let suffix = c.attribute("suffix").unwrap_or("");
        let radical = r.attr(c, "radical")?;
        let ids =
            parse_radical(radical).map_err(|e| r.err(c, format!("radical=\"{radical}\": {e}")))?;
        let bw = r.bandwidth(c, "bw")?;
        let lat = r.latency(c, "lat")?;
        let bb_lat = r.latency(c, "bb_lat")?;
        self.params.push(("cluster".into(), id.into()));
        if c.attribute("bb_bw").is_some() {
            let bb = r.bandwidth(c, "bb_bw")?;
            self.params.push(("bb_bw".into(), format!("{bb}Gbps")));
        }
        let router = c
            .attribute("router_id")
            .map_or_else(|| format!("{prefix}{id}_router{suffix}"), str::to_string);
        self.netpoint(r, c, &router, Kind::Router)?;
        let params = LinkParams {
            bandwidth_gbps: bw,
            latency: lat + bb_lat / 2,
        };
        for i in ids {
            let host = format!("{prefix}{i}{suffix}");
            self.netpoint(r, c, &host, Kind::Host)?;
            let l = self.link(r, c, &format!("{host}_link"), params)?;
            self.routes.push(Route {
                src: self.by_name[&host],
                dst: self.by_name[&router],
                links: vec![(l, None)],
                pos: c.range().start,
            });
        }
        Ok(())
    }
}

/// `0-3,5,7-8` → 0, 1, 2, 3, 5, 7, 8.
fn parse_radical(text: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let num = |s: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("'{}' is not a whole number", s.trim()))
        };
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if b < a || b - a >= super::super::graph::MAX_ELEMENTS as u64 {
            return Err(format!("range '{}' is empty or too large", part.trim()));
        }
        out.extend(a..=b);
    }
    Ok(out)
}

/// Union-find over the links' ends (`2l`, `2l + 1`) and the netpoints (`2L + p`).
struct Ends {
    parent: Vec<usize>,
    /// The netpoint of each root's class, if any.
    netpoint: Vec<Option<usize>>,
    /// Whether each link end has been joined to anything.
    bound: Vec<bool>,
}

impl Ends {
    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    /// Joins two classes; `Err((p, q))` if both hold a netpoint (two different ones).
    fn union(&mut self, a: usize, b: usize) -> Result<(), (usize, usize)> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return Ok(());
        }
        match (self.netpoint[ra], self.netpoint[rb]) {
            (Some(p), Some(q)) => Err((p, q)),
            (p, q) => {
                self.parent[rb] = ra;
                self.netpoint[ra] = p.or(q);
                Ok(())
            }
        }
    }
}

/// Reads a SimGrid platform (the subset of the parent module's documentation). `what` names
/// the input in errors (a file name); errors name the line.
pub fn from_simgrid(text: &str, what: &str) -> Result<Topology, TopologyError> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = Document::parse_with_options(text, opts).map_err(|e| TopologyError::Parse {
        what: what.to_string(),
        reason: format!("line {}: {e}", e.pos().row),
    })?;
    let r = Reader { doc: &doc, what };
    let root = doc.root_element();
    if !root.has_tag_name("platform") {
        return Err(r.err(
            root,
            format!(
                "the root element is <{}>; a SimGrid platform's is <platform>",
                root.tag_name().name()
            ),
        ));
    }
    let version = r.attr(root, "version")?;
    if !matches!(version, "4" | "4.0" | "4.1") {
        return Err(r.err(
            root,
            format!(
                "platform version \"{version}\"; accepted: {PLATFORM_VERSION} (SimGrid's \
                 simgrid_update_xml converts older files)"
            ),
        ));
    }
    let mut p = Platform::default();
    let tops: Vec<_> = elements(root)
        .filter(|c| !c.has_tag_name("config") && !c.has_tag_name("prop"))
        .collect();
    match tops.as_slice() {
        [] => return Err(r.err(root, "the platform has no zone and no cluster")),
        [z] if z.has_tag_name("zone") => p.zone(&r, *z)?,
        [c] if c.has_tag_name("cluster") => p.cluster(&r, *c)?,
        [one] => return Err(r.unsupported(*one, "platform", "one zone or one cluster")),
        [_, second, ..] => {
            return Err(r.err(
                *second,
                format!(
                    "a second <{}> in <platform>: routes between zones are not read; \
                     accepted: one zone or one cluster",
                    second.tag_name().name()
                ),
            ))
        }
    }
    build(&p, what, text)
}

/// The 1-based line of byte `pos` of `text`.
fn line_at(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn build(p: &Platform, what: &str, text: &str) -> Result<Topology, TopologyError> {
    let nl = p.links.len();
    let total = 2 * nl + p.netpoints.len();
    let mut ends = Ends {
        parent: (0..total).collect(),
        netpoint: (0..total).map(|x| x.checked_sub(2 * nl)).collect(),
        bound: vec![false; 2 * nl],
    };
    let fail = |pos: usize, reason: String| TopologyError::Parse {
        what: what.to_string(),
        reason: format!("line {}: {reason}", line_at(text, pos)),
    };
    let joined = |route: &Route, (a, b): (usize, usize)| {
        fail(
            route.pos,
            format!(
                "route {} -> {}: its links join netpoints '{}' and '{}' into one node (a link \
                 shared by several paths, such as a backbone, is not a graph edge)",
                p.netpoints[route.src].name,
                p.netpoints[route.dst].name,
                p.netpoints[a].name,
                p.netpoints[b].name
            ),
        )
    };
    let mut used = vec![false; nl];
    for route in &p.routes {
        if route.src == route.dst {
            continue; // a loopback
        }
        let mut cur = 2 * nl + route.src;
        for &(l, dir) in &route.links {
            let root = ends.find(cur);
            let entry = match dir {
                Some(d) => d,
                None if ends.find(2 * l) == root => 0,
                None if ends.find(2 * l + 1) == root => 1,
                None if !ends.bound[2 * l] => 0,
                None if !ends.bound[2 * l + 1] => 1,
                None => {
                    return Err(fail(
                        route.pos,
                        format!(
                            "route {} -> {}: link '{}' does not continue the path (both its \
                             ends are joined elsewhere: a link shared by several paths, such \
                             as a backbone, is not a graph edge)",
                            p.netpoints[route.src].name, p.netpoints[route.dst].name, p.links[l].id
                        ),
                    ))
                }
            };
            ends.union(2 * l + entry, cur)
                .map_err(|np| joined(route, np))?;
            ends.bound[2 * l] = true;
            ends.bound[2 * l + 1] = true;
            used[l] = true;
            cur = 2 * l + 1 - entry;
        }
        ends.union(cur, 2 * nl + route.dst)
            .map_err(|np| joined(route, np))?;
    }
    // Classes: the netpoints' and the anonymous ones of the used links' ends.
    let mut incident: HashMap<usize, Vec<usize>> = HashMap::new();
    for l in (0..nl).filter(|&l| used[l]) {
        let (a, b) = (ends.find(2 * l), ends.find(2 * l + 1));
        if a == b {
            return Err(TopologyError::Parse {
                what: what.to_string(),
                reason: format!(
                    "link '{}' joins a node to itself (its routes close a loop)",
                    p.links[l].id
                ),
            });
        }
        incident.entry(a).or_default().push(l);
        incident.entry(b).or_default().push(l);
    }
    let class_of = |ends: &mut Ends, np: usize| ends.find(2 * nl + np);
    let host_class: Vec<bool> = (0..total)
        .map(|x| {
            let root = ends.parent[x] == x;
            root && ends.netpoint[x].is_some_and(|np| p.netpoints[np].kind == Kind::Host)
        })
        .collect();
    // A host is an endpoint of a router if it has one link and the other end is no host.
    let mut attached: Vec<Option<usize>> = vec![None; p.netpoints.len()];
    for (np, n) in p.netpoints.iter().enumerate() {
        if n.kind != Kind::Host {
            continue;
        }
        let c = class_of(&mut ends, np);
        match incident.get(&c).map(Vec::as_slice) {
            None | Some([]) => {
                return Err(TopologyError::Parse {
                    what: what.to_string(),
                    reason: format!("host '{}' has no route to any other host or router", n.name),
                })
            }
            Some(&[l]) => {
                let other = ends.find(2 * l) ^ ends.find(2 * l + 1) ^ c;
                if !host_class[other] {
                    attached[np] = Some(l);
                }
            }
            Some(_) => {}
        }
    }
    // Routers: declared routers, hosts that are not endpoints, then anonymous nodes.
    let mut router_of: HashMap<usize, u32> = HashMap::new();
    let mut names = Vec::new();
    let mut kinds = Vec::new();
    for pass in [Kind::Router, Kind::Host] {
        for (np, n) in p.netpoints.iter().enumerate() {
            if n.kind == pass && attached[np].is_none() {
                router_of.insert(class_of(&mut ends, np), names.len() as u32);
                names.push(n.name.clone());
                kinds.push(u8::from(pass == Kind::Host));
            }
        }
    }
    let mut anonymous = 0;
    for l in (0..nl).filter(|&l| used[l]) {
        for e in [2 * l, 2 * l + 1] {
            let c = ends.find(e);
            let is_endpoint = ends.netpoint[c].is_some_and(|np| attached[np].is_some());
            if !is_endpoint && !router_of.contains_key(&c) {
                router_of.insert(c, names.len() as u32);
                names.push(format!("x{anonymous}"));
                kinds.push(2);
                anonymous += 1;
            }
        }
    }
    let mut endpoint_router = Vec::new();
    let mut endpoint_links = Vec::new();
    let mut endpoint_names = Vec::new();
    let mut endpoint_link_of = vec![false; nl];
    for (np, n) in p.netpoints.iter().enumerate() {
        if n.kind != Kind::Host {
            continue;
        }
        let c = class_of(&mut ends, np);
        match attached[np] {
            Some(l) => {
                let other = ends.find(2 * l) ^ ends.find(2 * l + 1) ^ c;
                endpoint_router.push(router_of[&other]);
                endpoint_links.push(p.links[l].params);
                endpoint_link_of[l] = true;
            }
            None => {
                endpoint_router.push(router_of[&c]);
                endpoint_links.push(LinkParams {
                    bandwidth_gbps: LOOPBACK_GBPS,
                    latency: 0,
                });
            }
        }
        endpoint_names.push(n.name.clone());
    }
    let mut links = Vec::new();
    for l in (0..nl).filter(|&l| used[l] && !endpoint_link_of[l]) {
        let (a, b) = (ends.find(2 * l), ends.find(2 * l + 1));
        links.push(Link {
            a: router_of[&a],
            b: router_of[&b],
            bandwidth_gbps: p.links[l].params.bandwidth_gbps,
            latency: p.links[l].params.latency,
        });
    }
    let mut kind_names = vec!["router".to_string()];
    if kinds.contains(&1) || anonymous > 0 {
        kind_names.push("host".into());
    }
    if anonymous > 0 {
        kind_names.push("node".into());
    }
    Topology::from_parts(TopologyParts {
        name: what.to_string(),
        family: "simgrid".into(),
        params: p.params.clone(),
        kinds: kind_names,
        router_kind: kinds,
        coord_names: Vec::new(),
        coords: Vec::new(),
        router_names: Some(names),
        endpoint_names: Some(endpoint_names),
        endpoint_router,
        endpoint_links,
        links,
        switch: Default::default(),
    })
}
