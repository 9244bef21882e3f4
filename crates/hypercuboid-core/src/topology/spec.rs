//! Spec strings: `NAME:key=value,...` (or `NAME:ARG,...` for families that read a file or a
//! preset), the compact way to name any topology on the command line.
//!
//! Every generator family accepts `bw` (link bandwidth in Gb/s, default 100) and `lat` (link
//! latency with unit, default 50ns), applied to every link. [`FAMILIES`] lists the families,
//! their keys and defaults; an unknown family or key errors with the accepted ones.

use super::dragonfly::Dragonfly;
use super::error::{io_err, param_err, TopologyError};
use super::export::{from_edge_list, from_json};
use super::fattree::{FatTree, KaryNTree};
use super::fullmesh::FullMesh;
use super::graph::LinkParams;
use super::hyperx::HyperX;
use super::mlfm::Mlfm;
use super::oft::Oft;
use super::polarfly::PolarFly;
use super::slimfly::{Concentration, SlimFly};
use super::torus::Torus;
use super::tree::{TreeDescription, PRESETS};
use super::Topology;

/// A topology family as the spec parser knows it.
#[derive(Clone, Copy, Debug)]
pub struct FamilyInfo {
    /// Family name (the part before `:`).
    pub name: &'static str,
    /// One line of description.
    pub summary: &'static str,
    /// Accepted keys and what they mean (with defaults), `bw`/`lat` included where accepted.
    pub keys: &'static [(&'static str, &'static str)],
    /// The positional argument (a file or a preset), if the family takes one.
    pub positional: Option<&'static str>,
    /// An example spec.
    pub example: &'static str,
}

const BW: (&str, &str) = ("bw", "link bandwidth in Gb/s (default 100)");
const LAT: (&str, &str) = ("lat", "link latency with unit (default 50ns)");

/// Every family [`generate`] accepts.
pub const FAMILIES: &[FamilyInfo] = &[
    FamilyInfo {
        name: "slimfly",
        summary: "Slim Fly (MMS graph), diameter 2",
        keys: &[
            ("q", "prime power 4w+d, d in {-1,0,1} (required)"),
            (
                "p",
                "endpoints per router: floor, ceil or a count (default ceil = ceil(r'/2))",
            ),
            BW,
            LAT,
        ],
        positional: None,
        example: "slimfly:q=13,p=9",
    },
    FamilyInfo {
        name: "polarfly",
        summary: "PolarFly (Erdos-Renyi polarity graph ER_q), diameter 2",
        keys: &[
            ("q", "prime power (required)"),
            (
                "p",
                "endpoints per router: floor, ceil or a count (default ceil((q+1)/2))",
            ),
            BW,
            LAT,
        ],
        positional: None,
        example: "polarfly:q=7",
    },
    FamilyInfo {
        name: "mlfm",
        summary: "Multi-Layer Full-Mesh (h, l, p), diameter 2",
        keys: &[
            ("h", "network ports of a local router, >= 2 (required)"),
            ("l", "layers (default h)"),
            ("p", "endpoints per local router (default h)"),
            BW,
            LAT,
        ],
        positional: None,
        example: "mlfm:h=15",
    },
    FamilyInfo {
        name: "oft",
        summary: "two-level Orthogonal Fat-Tree, diameter 2",
        keys: &[
            ("k", "k-1 a prime power (required); radix 2k"),
            ("p", "endpoints per L0/L2 router (default k)"),
            BW,
            LAT,
        ],
        positional: None,
        example: "oft:k=12",
    },
    FamilyInfo {
        name: "hyperx",
        summary: "HyperX (n-D), diameter n",
        keys: &[
            ("s", "dimension sizes, e.g. 8x8 (required)"),
            ("p", "endpoints per router (default min(s)-1)"),
            BW,
            LAT,
        ],
        positional: None,
        example: "hyperx:s=8x8,p=6",
    },
    FamilyInfo {
        name: "fattree",
        summary: "full-bisection fat tree of radix-k routers",
        keys: &[
            ("k", "router radix, even (required)"),
            ("levels", "2, 3 or 4 (default 2)"),
            BW,
            LAT,
        ],
        positional: None,
        example: "fattree:k=8,levels=3",
    },
    FamilyInfo {
        name: "karyntree",
        summary: "k-ary n-tree (Petrini-Vanneschi)",
        keys: &[
            ("k", "arity >= 2 (required)"),
            ("n", "levels >= 1 (required)"),
            BW,
            LAT,
        ],
        positional: None,
        example: "karyntree:k=4,n=3",
    },
    FamilyInfo {
        name: "dragonfly",
        summary: "Dragonfly (a, p, h), balanced a=2p=2h by default",
        keys: &[
            ("a", "routers per group (default 2p)"),
            ("p", "endpoints per router (default h, or a/2)"),
            ("h", "global links per router (default p, or a/2)"),
            ("g", "groups, 2..a*h+1 (default a*h+1)"),
            BW,
            LAT,
        ],
        positional: None,
        example: "dragonfly:p=4",
    },
    FamilyInfo {
        name: "torus",
        summary: "torus (k-ary n-cube)",
        keys: &[
            ("dims", "dimension sizes, e.g. 4x4x4 (required)"),
            ("p", "endpoints per router (default 1)"),
            BW,
            LAT,
        ],
        positional: None,
        example: "torus:dims=4x4x4",
    },
    FamilyInfo {
        name: "mesh",
        summary: "mesh (no wrap-around)",
        keys: &[
            ("dims", "dimension sizes, e.g. 8x8 (required)"),
            ("p", "endpoints per router (default 1)"),
            BW,
            LAT,
        ],
        positional: None,
        example: "mesh:dims=8x8",
    },
    FamilyInfo {
        name: "fullmesh",
        summary: "full mesh of n routers, diameter 1",
        keys: &[
            ("n", "routers >= 2 (required)"),
            ("p", "endpoints per router (default 1)"),
            BW,
            LAT,
        ],
        positional: None,
        example: "fullmesh:n=16,p=8",
    },
    FamilyInfo {
        name: "tree",
        summary:
            "Ethernet switched tree: a preset (fig1, fig5a, fig5b, fig5c) or a JSON description",
        keys: &[],
        positional: Some("preset name or path of a JSON tree description"),
        example: "tree:fig1",
    },
    FamilyInfo {
        name: "json",
        summary: "a topology in our JSON schema",
        keys: &[],
        positional: Some("path of the JSON file"),
        example: "json:topology.json",
    },
    FamilyInfo {
        name: "edgelist",
        summary: "routers and links from an edge list ('a b [bandwidth_gbps [latency]]' lines)",
        keys: &[("p", "endpoints per router (default 1)"), BW, LAT],
        positional: Some("path of the edge list"),
        example: "edgelist:links.txt,p=2",
    },
    FamilyInfo {
        name: "graphml",
        summary: "GraphML (read by the Python package through networkx)",
        keys: &[(
            "p",
            "endpoints per router if the file marks none (default 1)",
        )],
        positional: Some("path of the GraphML file"),
        example: "graphml:topology.graphml",
    },
];

/// A parsed spec string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// The text as given.
    pub text: String,
    /// Family name.
    pub family: String,
    /// Positional argument (file or preset), if any.
    pub arg: Option<String>,
    /// `key=value` pairs in order.
    pub params: Vec<(String, String)>,
}

impl Spec {
    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn family_names() -> String {
    FAMILIES
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses `NAME:key=value,...`, checking the family and keys.
pub fn parse_spec(text: &str) -> Result<Spec, TopologyError> {
    let err = |reason: String| TopologyError::Spec {
        spec: text.to_string(),
        reason,
    };
    let t = text.trim();
    let (name, rest) = match t.split_once(':') {
        Some((n, r)) => (n.trim(), r.trim()),
        None => (t, ""),
    };
    if name.is_empty() {
        return Err(err(format!(
            "expected NAME:key=value,...; families: {}",
            family_names()
        )));
    }
    let info = FAMILIES
        .iter()
        .find(|f| f.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            err(format!(
                "unknown family '{name}'; accepted: {}",
                family_names()
            ))
        })?;
    let mut spec = Spec {
        text: text.to_string(),
        family: info.name.to_string(),
        arg: None,
        params: Vec::new(),
    };
    let keys: Vec<&str> = info.keys.iter().map(|(k, _)| *k).collect();
    if !rest.is_empty() {
        for item in rest.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(err("empty item between commas".into()));
            }
            match item.split_once('=') {
                Some((k, v)) => {
                    let (k, v) = (k.trim(), v.trim());
                    if !keys.contains(&k) {
                        let accepted = if keys.is_empty() {
                            "none".to_string()
                        } else {
                            keys.join(", ")
                        };
                        return Err(err(format!(
                            "unknown key '{k}' for {}; accepted keys: {accepted}",
                            info.name
                        )));
                    }
                    if v.is_empty() {
                        return Err(err(format!("key '{k}' has no value")));
                    }
                    if spec.get(k).is_some() {
                        return Err(err(format!("key '{k}' is given twice")));
                    }
                    spec.params.push((k.to_string(), v.to_string()));
                }
                None => {
                    if info.positional.is_none() {
                        return Err(err(format!(
                            "'{item}' is not key=value; {} takes keys {}",
                            info.name,
                            keys.join(", ")
                        )));
                    }
                    if spec.arg.is_some() {
                        return Err(err(format!("{} takes one file or preset", info.name)));
                    }
                    spec.arg = Some(item.to_string());
                }
            }
        }
    }
    if let Some(what) = info.positional {
        if spec.arg.is_none() {
            return Err(err(format!(
                "{} needs a {what}, e.g. {}",
                info.name, info.example
            )));
        }
    }
    Ok(spec)
}

fn u32_of(family: &'static str, key: &'static str, v: &str) -> Result<u32, TopologyError> {
    v.parse::<u32>()
        .map_err(|_| param_err(family, key, v, "not a non-negative integer"))
}

fn dims_of(family: &'static str, key: &'static str, v: &str) -> Result<Vec<u32>, TopologyError> {
    v.split(['x', 'X'])
        .map(|s| s.trim().parse::<u32>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| {
            param_err(
                family,
                key,
                v,
                "expected sizes joined by 'x', e.g. 8x8 or 4x4x4",
            )
        })
}

fn concentration(family: &'static str, v: Option<&str>) -> Result<Concentration, TopologyError> {
    match v {
        None | Some("ceil") => Ok(Concentration::Ceil),
        Some("floor") => Ok(Concentration::Floor),
        Some(x) => match x.parse::<u32>() {
            Ok(p) if p >= 1 => Ok(Concentration::Count(p)),
            _ => Err(param_err(
                family,
                "p",
                x,
                "accepted: floor, ceil or a count >= 1",
            )),
        },
    }
}

fn link_of(family: &'static str, spec: &Spec) -> Result<LinkParams, TopologyError> {
    let mut l = LinkParams::default();
    if let Some(b) = spec.get("bw") {
        l.bandwidth_gbps = b
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| param_err(family, "bw", b, "a bandwidth in Gb/s > 0, e.g. bw=100"))?;
    }
    if let Some(t) = spec.get("lat") {
        l.latency =
            crate::units::parse_time(t).map_err(|e| param_err(family, "lat", t, e.reason))?;
    }
    Ok(l)
}

fn read_file(path: &str) -> Result<String, TopologyError> {
    std::fs::read_to_string(path).map_err(|e| io_err(path, &e))
}

/// Builds the topology a parsed spec names.
pub fn build(spec: &Spec) -> Result<Topology, TopologyError> {
    let missing = |key: &str| {
        let info = FAMILIES
            .iter()
            .find(|f| f.name == spec.family)
            .expect("parsed family");
        TopologyError::Spec {
            spec: spec.text.clone(),
            reason: format!("{} needs {key}, e.g. {}", info.name, info.example),
        }
    };
    let req = |family: &'static str, key: &'static str| -> Result<u32, TopologyError> {
        u32_of(family, key, spec.get(key).ok_or_else(|| missing(key))?)
    };
    let opt = |family: &'static str, key: &'static str| -> Result<Option<u32>, TopologyError> {
        spec.get(key).map(|v| u32_of(family, key, v)).transpose()
    };
    match spec.family.as_str() {
        "slimfly" => SlimFly {
            q: req("slimfly", "q")?,
            p: concentration("slimfly", spec.get("p"))?,
            link: link_of("slimfly", spec)?,
        }
        .build(),
        "polarfly" => PolarFly {
            q: req("polarfly", "q")?,
            p: concentration("polarfly", spec.get("p"))?,
            link: link_of("polarfly", spec)?,
        }
        .build(),
        "mlfm" => {
            let h = req("mlfm", "h")?;
            Mlfm {
                h,
                l: opt("mlfm", "l")?.unwrap_or(h),
                p: opt("mlfm", "p")?.unwrap_or(h),
                link: link_of("mlfm", spec)?,
            }
            .build()
        }
        "oft" => {
            let k = req("oft", "k")?;
            Oft {
                k,
                p: opt("oft", "p")?.unwrap_or(k),
                link: link_of("oft", spec)?,
            }
            .build()
        }
        "hyperx" => {
            let s = dims_of("hyperx", "s", spec.get("s").ok_or_else(|| missing("s"))?)?;
            let mut h = HyperX::new(&s);
            if let Some(p) = opt("hyperx", "p")? {
                h.p = p;
            }
            h.link = link_of("hyperx", spec)?;
            h.build()
        }
        "fattree" => FatTree {
            k: req("fattree", "k")?,
            levels: opt("fattree", "levels")?.unwrap_or(2),
            link: link_of("fattree", spec)?,
        }
        .build(),
        "karyntree" => KaryNTree {
            k: req("karyntree", "k")?,
            n: req("karyntree", "n")?,
            link: link_of("karyntree", spec)?,
        }
        .build(),
        "dragonfly" => {
            let (a, p, h) = (
                opt("dragonfly", "a")?,
                opt("dragonfly", "p")?,
                opt("dragonfly", "h")?,
            );
            let (a, p, h) = match (a, p, h) {
                (None, None, None) => return Err(missing("one of a, p, h")),
                (a, Some(p), h) => (a.unwrap_or(2 * p), p, h.unwrap_or(p)),
                (a, None, Some(h)) => (a.unwrap_or(2 * h), h, h),
                (Some(a), None, None) => (a, (a / 2).max(1), (a / 2).max(1)),
            };
            let g = opt("dragonfly", "g")?.unwrap_or_else(|| a.saturating_mul(h).saturating_add(1));
            Dragonfly {
                a,
                p,
                h,
                g,
                link: link_of("dragonfly", spec)?,
            }
            .build()
        }
        "torus" | "mesh" => {
            let fam: &'static str = if spec.family == "torus" {
                "torus"
            } else {
                "mesh"
            };
            let dims = dims_of(
                fam,
                "dims",
                spec.get("dims").ok_or_else(|| missing("dims"))?,
            )?;
            Torus {
                sizes: dims,
                wrap: fam == "torus",
                p: opt(fam, "p")?.unwrap_or(1),
                link: link_of(fam, spec)?,
            }
            .build()
        }
        "fullmesh" => FullMesh {
            n: req("fullmesh", "n")?,
            p: opt("fullmesh", "p")?.unwrap_or(1),
            link: link_of("fullmesh", spec)?,
        }
        .build(),
        "tree" => {
            let arg = spec.arg.as_deref().expect("checked by parse_spec");
            let desc = if PRESETS.contains(&arg) {
                TreeDescription::preset(arg)?
            } else if arg.ends_with(".json") || std::path::Path::new(arg).exists() {
                TreeDescription::from_json(&read_file(arg)?, arg)?
            } else {
                TreeDescription::preset(arg)?
            };
            desc.build()
        }
        "json" => {
            let arg = spec.arg.as_deref().expect("checked by parse_spec");
            from_json(&read_file(arg)?, arg)
        }
        "edgelist" => {
            let arg = spec.arg.as_deref().expect("checked by parse_spec");
            from_edge_list(
                &read_file(arg)?,
                arg,
                opt("edgelist", "p")?.unwrap_or(1),
                link_of("edgelist", spec)?,
            )
        }
        "graphml" => Err(TopologyError::Spec {
            spec: spec.text.clone(),
            reason: "GraphML is read by the Python package (hypercuboid.topology.generate, \
                     through networkx)"
                .into(),
        }),
        _ => unreachable!("parse_spec accepts only known families"),
    }
}

/// Parses `text` and builds the topology it names.
pub fn generate(text: &str) -> Result<Topology, TopologyError> {
    build(&parse_spec(text)?)
}
