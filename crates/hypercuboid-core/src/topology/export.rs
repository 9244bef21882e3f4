//! Reading and writing topologies: our JSON schema (round-trips exactly), GraphML, BookSim2
//! `anynet` network files, Graphviz dot, and edge lists.
//!
//! # JSON schema (`format` = `hypercuboid-topology`, `version` = 1)
//! ```json
//! {
//!   "format": "hypercuboid-topology",
//!   "version": 1,
//!   "name": "oft:k=3,p=3",
//!   "family": "oft",
//!   "params": [["k", "3"], ["p", "3"]],
//!   "kinds": ["L0", "L1", "L2"],
//!   "coord_names": ["level", "index"],
//!   "routers": [{"kind": "L0", "coords": [0, 0]}, {"kind": "L0", "coords": [0, 1], "name": "x"}],
//!   "endpoints": [[0, 100.0, 50000], [0, 100.0, 50000]],
//!   "endpoint_names": ["n0", "n1"],
//!   "links": [[0, 7, 100.0, 50000]]
//! }
//! ```
//! `params` are `[key, value]` string pairs in spec order; a router's `name` is optional (all or none); `endpoints` lists
//! `[router, bandwidth_gbps, latency_ps]` in endpoint order; `endpoint_names` is optional;
//! `links` lists `[router_a, router_b, bandwidth_gbps, latency_ps]`.
//!
//! # BookSim2 anynet
//! One line per router: `router R node E … router S [w] …` (BookSim2's `anynet` network,
//! `src/networks/anynet.cpp`: `node` ids are endpoints and must be 0…N−1, a number after a
//! `router` neighbour is the link's latency in cycles). Each router-to-router link is listed on
//! both of its routers' lines. Latencies are written as cycles only when a cycle time is given
//! (rounded, at least 1). Parallel links cannot be represented (BookSim keeps one per pair).

use super::error::TopologyError;
use super::graph::{Link, LinkParams, Topology, TopologyParts};
use crate::spec::{Choice, Choices};
use crate::units::Time;
use serde_json::Value;
use std::fmt::Write;

/// The `format` tag of our JSON.
pub const JSON_FORMAT: &str = "hypercuboid-topology";
/// The schema version written and read.
pub const JSON_VERSION: u64 = 1;

fn num(x: f64) -> String {
    serde_json::Number::from_f64(x)
        .map(|n| n.to_string())
        .unwrap_or_else(|| "null".into())
}

fn jstr(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// A format a topology is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// [`to_json`].
    Json,
    /// [`to_graphml`].
    GraphMl,
    /// [`to_anynet`].
    Anynet,
    /// [`to_dot`].
    Dot,
    /// [`super::simgrid::to_simgrid`].
    SimGrid,
}

/// The formats a topology is written in (`topo export --format`), in the order listed.
pub const EXPORT_FORMATS: Choices<ExportFormat> = Choices::new(
    "export format",
    &[
        Choice::new(
            "json",
            ExportFormat::Json,
            "our JSON schema (reads back exactly)",
        ),
        Choice::new("graphml", ExportFormat::GraphMl, "GraphML"),
        Choice::new(
            "anynet",
            ExportFormat::Anynet,
            "a BookSim2 anynet network file",
        ),
        Choice::new("dot", ExportFormat::Dot, "Graphviz dot"),
        Choice::new(
            "simgrid",
            ExportFormat::SimGrid,
            "a SimGrid platform (version 4.1, one Floyd zone)",
        ),
    ],
);

/// Our JSON, documented in the module.
pub fn to_json(topo: &Topology) -> String {
    let p = topo.parts();
    let mut o = String::with_capacity(64 * (topo.num_links() + topo.num_endpoints()) + 256);
    let list = |v: &[String]| v.iter().map(|s| jstr(s)).collect::<Vec<_>>().join(", ");
    o.push_str("{\n");
    let _ = writeln!(o, "  \"format\": {},", jstr(JSON_FORMAT));
    let _ = writeln!(o, "  \"version\": {JSON_VERSION},");
    let _ = writeln!(o, "  \"name\": {},", jstr(&p.name));
    let _ = writeln!(o, "  \"family\": {},", jstr(&p.family));
    let params: Vec<String> = p
        .params
        .iter()
        .map(|(k, v)| format!("[{}, {}]", jstr(k), jstr(v)))
        .collect();
    let _ = writeln!(o, "  \"params\": [{}],", params.join(", "));
    let _ = writeln!(o, "  \"kinds\": [{}],", list(&p.kinds));
    let _ = writeln!(o, "  \"coord_names\": [{}],", list(&p.coord_names));
    o.push_str("  \"routers\": [");
    for r in 0..topo.num_routers() {
        o.push_str(if r == 0 { "\n    " } else { ",\n    " });
        let coords: Vec<String> = topo.coords(r).iter().map(|c| c.to_string()).collect();
        let _ = write!(
            o,
            "{{\"kind\": {}, \"coords\": [{}]",
            jstr(topo.router_kind_name(r)),
            coords.join(", ")
        );
        if let Some(n) = topo.router_name(r) {
            let _ = write!(o, ", \"name\": {}", jstr(n));
        }
        o.push('}');
    }
    o.push_str("\n  ],\n  \"endpoints\": [");
    for e in 0..topo.num_endpoints() {
        o.push_str(if e == 0 { "\n    " } else { ",\n    " });
        let l = topo.endpoint_link(e);
        let _ = write!(
            o,
            "[{}, {}, {}]",
            topo.endpoint_router(e),
            num(l.bandwidth_gbps),
            l.latency
        );
    }
    o.push_str("\n  ],\n");
    if let Some(names) = &p.endpoint_names {
        let _ = writeln!(o, "  \"endpoint_names\": [{}],", list(names));
    }
    o.push_str("  \"links\": [");
    for (i, l) in topo.links().iter().enumerate() {
        o.push_str(if i == 0 { "\n    " } else { ",\n    " });
        let _ = write!(
            o,
            "[{}, {}, {}, {}]",
            l.a,
            l.b,
            num(l.bandwidth_gbps),
            l.latency
        );
    }
    o.push_str("\n  ]\n}\n");
    o
}

fn perr(what: &str, reason: impl Into<String>) -> TopologyError {
    TopologyError::Parse {
        what: what.to_string(),
        reason: reason.into(),
    }
}

fn get_u32(v: &Value, what: &str, ctx: &str) -> Result<u32, TopologyError> {
    v.as_u64()
        .filter(|&x| x <= u32::MAX as u64)
        .map(|x| x as u32)
        .ok_or_else(|| {
            perr(
                what,
                format!("{ctx}: expected a non-negative integer, got {v}"),
            )
        })
}

fn get_f64(v: &Value, what: &str, ctx: &str) -> Result<f64, TopologyError> {
    v.as_f64()
        .ok_or_else(|| perr(what, format!("{ctx}: expected a number, got {v}")))
}

fn get_time(v: &Value, what: &str, ctx: &str) -> Result<Time, TopologyError> {
    v.as_u64().ok_or_else(|| {
        perr(
            what,
            format!("{ctx}: expected a latency in integer picoseconds, got {v}"),
        )
    })
}

fn get_strings(v: &Value, what: &str, key: &str) -> Result<Vec<String>, TopologyError> {
    v.as_array()
        .ok_or_else(|| perr(what, format!("'{key}' must be a list of strings")))?
        .iter()
        .map(|x| {
            x.as_str().map(str::to_string).ok_or_else(|| {
                perr(
                    what,
                    format!("'{key}' must be a list of strings, found {x}"),
                )
            })
        })
        .collect()
}

/// Reads our JSON (see the module); `what` names the source in errors.
pub fn from_json(text: &str, what: &str) -> Result<Topology, TopologyError> {
    let v: Value = serde_json::from_str(text).map_err(|e| perr(what, e.to_string()))?;
    let o = v
        .as_object()
        .ok_or_else(|| perr(what, "expected a JSON object"))?;
    const KEYS: [&str; 12] = [
        "format",
        "version",
        "name",
        "family",
        "params",
        "kinds",
        "coord_names",
        "routers",
        "endpoints",
        "endpoint_names",
        "links",
        "comment",
    ];
    if let Some(k) = o.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(perr(
            what,
            format!("unknown key '{k}'; accepted: {}", KEYS.join(", ")),
        ));
    }
    if o.get("format").and_then(Value::as_str) != Some(JSON_FORMAT) {
        return Err(perr(
            what,
            format!("'format' must be \"{JSON_FORMAT}\" (our topology JSON)"),
        ));
    }
    match o.get("version").and_then(Value::as_u64) {
        Some(JSON_VERSION) => {}
        _ => {
            return Err(perr(
                what,
                format!("'version' must be {JSON_VERSION}, the version this library reads"),
            ))
        }
    }
    let req = |k: &str| {
        o.get(k)
            .ok_or_else(|| perr(what, format!("missing key '{k}'")))
    };
    let s = |k: &str| -> Result<String, TopologyError> {
        req(k)?
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| perr(what, format!("'{k}' must be a string")))
    };
    let mut parts = TopologyParts {
        name: s("name")?,
        family: s("family")?,
        kinds: get_strings(req("kinds")?, what, "kinds")?,
        coord_names: get_strings(req("coord_names")?, what, "coord_names")?,
        ..TopologyParts::default()
    };
    let params = req("params")?
        .as_array()
        .ok_or_else(|| perr(what, "'params' must be a list of [key, value] strings"))?;
    for kv in params {
        match kv.as_array().map(|a| a.as_slice()) {
            Some([Value::String(k), Value::String(v)]) => parts.params.push((k.clone(), v.clone())),
            _ => {
                return Err(perr(
                    what,
                    format!("'params' must be a list of [key, value] strings, found {kv}"),
                ))
            }
        }
    }
    let routers = req("routers")?
        .as_array()
        .ok_or_else(|| perr(what, "'routers' must be a list"))?;
    let stride = parts.coord_names.len();
    let mut names = Vec::new();
    for (i, r) in routers.iter().enumerate() {
        let ctx = format!("router {i}");
        let ro = r
            .as_object()
            .ok_or_else(|| perr(what, format!("{ctx}: expected an object")))?;
        if let Some(k) = ro
            .keys()
            .find(|k| !["kind", "coords", "name"].contains(&k.as_str()))
        {
            return Err(perr(
                what,
                format!("{ctx}: unknown key '{k}'; accepted: kind, coords, name"),
            ));
        }
        let kind = ro
            .get("kind")
            .and_then(Value::as_str)
            .ok_or_else(|| perr(what, format!("{ctx}: 'kind' must be a string")))?;
        let k = parts.kinds.iter().position(|x| x == kind).ok_or_else(|| {
            perr(
                what,
                format!(
                    "{ctx}: kind '{kind}' is not in kinds [{}]",
                    parts.kinds.join(", ")
                ),
            )
        })?;
        parts.router_kind.push(k as u8);
        let coords = ro
            .get("coords")
            .and_then(Value::as_array)
            .ok_or_else(|| perr(what, format!("{ctx}: 'coords' must be a list")))?;
        if coords.len() != stride {
            return Err(perr(
                what,
                format!("{ctx}: {} coordinates, expected {stride}", coords.len()),
            ));
        }
        for c in coords {
            parts.coords.push(get_u32(c, what, &ctx)?);
        }
        if let Some(n) = ro.get("name") {
            let n = n
                .as_str()
                .ok_or_else(|| perr(what, format!("{ctx}: 'name' must be a string")))?;
            names.push(n.to_string());
        }
    }
    if !names.is_empty() {
        if names.len() != routers.len() {
            return Err(perr(what, "either every router has a 'name' or none"));
        }
        parts.router_names = Some(names);
    }
    let eps = req("endpoints")?
        .as_array()
        .ok_or_else(|| perr(what, "'endpoints' must be a list"))?;
    for (i, e) in eps.iter().enumerate() {
        let ctx = format!("endpoint {i}");
        let a = e.as_array().filter(|a| a.len() == 3).ok_or_else(|| {
            perr(
                what,
                format!("{ctx}: expected [router, bandwidth_gbps, latency_ps], got {e}"),
            )
        })?;
        parts.endpoint_router.push(get_u32(&a[0], what, &ctx)?);
        parts.endpoint_links.push(LinkParams {
            bandwidth_gbps: get_f64(&a[1], what, &ctx)?,
            latency: get_time(&a[2], what, &ctx)?,
        });
    }
    if let Some(n) = o.get("endpoint_names") {
        parts.endpoint_names = Some(get_strings(n, what, "endpoint_names")?);
    }
    let links = req("links")?
        .as_array()
        .ok_or_else(|| perr(what, "'links' must be a list"))?;
    for (i, l) in links.iter().enumerate() {
        let ctx = format!("link {i}");
        let a = l.as_array().filter(|a| a.len() == 4).ok_or_else(|| {
            perr(
                what,
                format!(
                    "{ctx}: expected [router_a, router_b, bandwidth_gbps, latency_ps], got {l}"
                ),
            )
        })?;
        parts.links.push(Link {
            a: get_u32(&a[0], what, &ctx)?,
            b: get_u32(&a[1], what, &ctx)?,
            bandwidth_gbps: get_f64(&a[2], what, &ctx)?,
            latency: get_time(&a[3], what, &ctx)?,
        });
    }
    Topology::from_parts(parts)
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// GraphML: routers `r<i>` and endpoints `e<j>` as nodes (`type` = router|endpoint, `kind`,
/// `coords` as comma-separated text, optional `label`), links as edges with `bandwidth_gbps`,
/// `latency_ps`, and for router links their index `link` and first end `link_a` (GraphML readers
/// do not keep edge order or direction); graph attributes `name`, `family`, `params` (`k=v,...`), `kinds` and
/// `coord_names` (comma-separated) so that the Python reader rebuilds the same topology.
pub fn to_graphml(topo: &Topology) -> String {
    let p = topo.parts();
    let mut o = String::with_capacity(160 * (topo.num_links() + topo.num_endpoints()) + 1024);
    o.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    o.push_str("<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n");
    for (id, what, ty) in [
        ("name", "graph", "string"),
        ("family", "graph", "string"),
        ("params", "graph", "string"),
        ("kinds", "graph", "string"),
        ("coord_names", "graph", "string"),
        ("type", "node", "string"),
        ("kind", "node", "string"),
        ("coords", "node", "string"),
        ("label", "node", "string"),
        ("bandwidth_gbps", "edge", "double"),
        ("latency_ps", "edge", "long"),
        ("link", "edge", "long"),
        ("link_a", "edge", "long"),
    ] {
        let _ = writeln!(
            o,
            "  <key id=\"{id}\" for=\"{what}\" attr.name=\"{id}\" attr.type=\"{ty}\"/>"
        );
    }
    o.push_str("  <graph id=\"G\" edgedefault=\"undirected\">\n");
    let params: Vec<String> = p.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    for (k, v) in [
        ("name", p.name.clone()),
        ("family", p.family.clone()),
        ("params", params.join(",")),
        ("kinds", p.kinds.join(",")),
        ("coord_names", p.coord_names.join(",")),
    ] {
        let _ = writeln!(o, "    <data key=\"{k}\">{}</data>", xml(&v));
    }
    for r in 0..topo.num_routers() {
        let coords: Vec<String> = topo.coords(r).iter().map(|c| c.to_string()).collect();
        let _ = write!(
            o,
            "    <node id=\"r{r}\"><data key=\"type\">router</data><data key=\"kind\">{}</data><data key=\"coords\">{}</data>",
            xml(topo.router_kind_name(r)),
            coords.join(",")
        );
        if let Some(n) = topo.router_name(r) {
            let _ = write!(o, "<data key=\"label\">{}</data>", xml(n));
        }
        o.push_str("</node>\n");
    }
    for e in 0..topo.num_endpoints() {
        let _ = write!(
            o,
            "    <node id=\"e{e}\"><data key=\"type\">endpoint</data>"
        );
        if let Some(n) = topo.endpoint_name(e) {
            let _ = write!(o, "<data key=\"label\">{}</data>", xml(n));
        }
        o.push_str("</node>\n");
    }
    for (i, l) in topo.links().iter().enumerate() {
        let _ = writeln!(
            o,
            "    <edge source=\"r{}\" target=\"r{}\"><data key=\"bandwidth_gbps\">{}</data><data key=\"latency_ps\">{}</data><data key=\"link\">{i}</data><data key=\"link_a\">{}</data></edge>",
            l.a,
            l.b,
            num(l.bandwidth_gbps),
            l.latency,
            l.a
        );
    }
    for e in 0..topo.num_endpoints() {
        let l = topo.endpoint_link(e);
        let _ = writeln!(
            o,
            "    <edge source=\"e{e}\" target=\"r{}\"><data key=\"bandwidth_gbps\">{}</data><data key=\"latency_ps\">{}</data></edge>",
            topo.endpoint_router(e),
            num(l.bandwidth_gbps),
            l.latency
        );
    }
    o.push_str("  </graph>\n</graphml>\n");
    o
}

/// BookSim2 `anynet` network file (see the module). With `cycle` = `Some(t)`, each
/// router-to-router link carries its latency in cycles of t picoseconds (rounded, ≥ 1).
pub fn to_anynet(topo: &Topology, cycle: Option<Time>) -> Result<String, TopologyError> {
    if topo.has_parallel_links() {
        return Err(TopologyError::Export {
            format: "anynet",
            reason: "the topology has parallel links between a pair of routers; BookSim's \
                     anynet keeps one link per pair"
                .into(),
        });
    }
    if cycle == Some(0) {
        return Err(TopologyError::Export {
            format: "anynet",
            reason: "the cycle time must be > 0".into(),
        });
    }
    let mut o = String::with_capacity(24 * (2 * topo.num_links() + topo.num_endpoints()));
    for r in 0..topo.num_routers() {
        let _ = write!(o, "router {r}");
        for &e in topo.router_endpoints(r) {
            let _ = write!(o, " node {e}");
        }
        let (nbr, lk) = topo.adjacency(r);
        for (&y, &l) in nbr.iter().zip(lk) {
            let _ = write!(o, " router {y}");
            if let Some(c) = cycle {
                let lat = topo.links()[l as usize].latency;
                let cycles = ((lat as f64 / c as f64).round() as u64).max(1);
                let _ = write!(o, " {cycles}");
            }
        }
        o.push('\n');
    }
    Ok(o)
}

/// Graphviz dot: routers as boxes labelled with index, kind and name, endpoints (if
/// `endpoints`) as points.
pub fn to_dot(topo: &Topology, endpoints: bool) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "graph {} {{", jstr(topo.name()));
    o.push_str("  node [shape=box, fontsize=10];\n");
    for r in 0..topo.num_routers() {
        let mut label = format!("r{r} {}", topo.router_kind_name(r));
        if let Some(n) = topo.router_name(r) {
            label = format!("{n} ({label})");
        }
        let _ = writeln!(o, "  r{r} [label={}];", jstr(&label));
    }
    if endpoints {
        for e in 0..topo.num_endpoints() {
            match topo.endpoint_name(e) {
                Some(n) => {
                    let _ = writeln!(o, "  e{e} [shape=ellipse, label={}];", jstr(n));
                }
                None => {
                    let _ = writeln!(o, "  e{e} [shape=point];");
                }
            }
        }
    }
    for l in topo.links() {
        let _ = writeln!(o, "  r{} -- r{};", l.a, l.b);
    }
    if endpoints {
        for e in 0..topo.num_endpoints() {
            let _ = writeln!(o, "  e{e} -- r{};", topo.endpoint_router(e));
        }
    }
    o.push_str("}\n");
    o
}

/// Reads an edge list: one link per line, `a b [bandwidth_gbps [latency]]`, where a and b
/// are router names (any token without spaces; routers are numbered in order of first
/// appearance), latency a time with unit (`50ns`); a line with a single name declares a
/// router; `#` starts a comment. Every router gets `p` endpoints; `link` is the default for
/// every link and every endpoint link.
pub fn from_edge_list(
    text: &str,
    what: &str,
    p: u32,
    link: LinkParams,
) -> Result<Topology, TopologyError> {
    let mut names: Vec<String> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let mut links = Vec::new();
    let mut id = |n: &str, names: &mut Vec<String>| -> u32 {
        *index.entry(n.to_string()).or_insert_with(|| {
            names.push(n.to_string());
            (names.len() - 1) as u32
        })
    };
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let t: Vec<&str> = line.split_whitespace().collect();
        let ctx = format!("line {}", i + 1);
        match t.len() {
            1 => {
                id(t[0], &mut names);
            }
            2..=4 => {
                let mut lp = link;
                if let Some(b) = t.get(2) {
                    lp.bandwidth_gbps = b
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite() && *x > 0.0)
                        .ok_or_else(|| {
                            perr(
                                what,
                                format!("{ctx}: bandwidth '{b}' is not a number > 0 (Gb/s)"),
                            )
                        })?;
                }
                if let Some(l) = t.get(3) {
                    lp.latency = crate::units::parse_time(l)
                        .map_err(|e| perr(what, format!("{ctx}: {e}")))?;
                }
                let a = id(t[0], &mut names);
                let b = id(t[1], &mut names);
                if a == b {
                    return Err(perr(what, format!("{ctx}: self-loop on '{}'", t[0])));
                }
                links.push(Link {
                    a,
                    b,
                    bandwidth_gbps: lp.bandwidth_gbps,
                    latency: lp.latency,
                });
            }
            _ => {
                return Err(perr(
                    what,
                    format!("{ctx}: expected 'a b [bandwidth_gbps [latency]]', got '{line}'"),
                ))
            }
        }
    }
    if names.is_empty() {
        return Err(perr(what, "no routers"));
    }
    let r = names.len();
    let mut parts = TopologyParts {
        name: format!("edgelist:{what}"),
        family: "edgelist".into(),
        params: vec![("p".into(), p.to_string())],
        kinds: vec!["router".into()],
        router_kind: vec![0; r],
        router_names: Some(names),
        links,
        ..TopologyParts::default()
    };
    for x in 0..r as u32 {
        for _ in 0..p {
            parts.endpoint_router.push(x);
            parts.endpoint_links.push(link);
        }
    }
    Topology::from_parts(parts)
}
