//! Spec strings: `NAME:key=value,...` (or `NAME:ARG,...` for families that read a file or a
//! preset), the compact way to name any topology on the command line, read by the one spec
//! grammar ([`crate::spec`]) against one table, [`FAMILIES`].
//!
//! Every generator family accepts `bw` (link bandwidth: `100Gbps`, `12.5GB/s`, a bare number is
//! Gb/s; default 100) and `lat` (link latency with unit, default 50ns), applied to every link.
//! Every generator family, `tree` and `edgelist` also accept `switch` (the routers' switch
//! model: `vct` by default, or `ethernet`, [`super::switch`]) and, with `switch=ethernet`, its
//! `buffer` (frames), `mtu` (bytes) and `delay` (a time).
//! [`FAMILIES`] lists the families, their keys and defaults; an unknown family or key errors
//! with the accepted ones.

use super::dragonfly::Dragonfly;
use super::error::{io_err, TopologyError};
use super::export::{from_edge_list, from_json};
use super::fattree::{FatTree, KaryNTree};
use super::fullmesh::FullMesh;
use super::graph::LinkParams;
use super::hyperx::HyperX;
use super::mlfm::Mlfm;
use super::oft::Oft;
use super::polarfly::PolarFly;
use super::slimfly::{Concentration, SlimFly};
use super::switch::{Ethernet, SwitchModel, SWITCHES, SWITCH_KEYS};
use super::torus::Torus;
use super::tree::{TreeDescription, PRESETS};
use super::Topology;
use crate::spec::{self, Form, Key, Positional, Spec, SpecError};

/// One topology family a spec string may name: what it accepts and how it is built.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// Its name, keys (with what they mean and their defaults), positional argument and an
    /// example.
    pub form: Form,
    /// What the positional argument is, in full (`hypercuboid topo list` prints it); `None`
    /// when the family takes none.
    pub arg: Option<&'static str>,
    /// Builds the topology from a spec that [`spec::parse`] matched to this family.
    pub build: fn(&Spec) -> Result<Topology, TopologyError>,
}

const GRAPHML: &str = "graphml";

const BW: Key = Key::new("bw", "link bandwidth in Gb/s (default 100)");
const LAT: Key = Key::new("lat", "link latency with unit (default 50ns)");
const SWITCH: Key = Key::new(
    "switch",
    "switch model: vct (virtual cut-through, default) or ethernet (store-and-forward frames, \
     small buffers, 802.3x PAUSE)",
);
const BUFFER: Key = Key::new(
    "buffer",
    "ethernet: frames buffered per port and direction (default 8)",
);
const MTU: Key = Key::new(
    "mtu",
    "ethernet: frame payload in bytes, 576 to 9000 (default 1500)",
);
const DELAY: Key = Key::new(
    "delay",
    "ethernet: forwarding delay with unit (default 4us)",
);

/// `p` where it defaults to one endpoint per router ([`endpoints`]).
const P: Key = Key::new("p", "endpoints per router (default 1)");

/// A family's own keys, then the link and switch keys every family with links accepts.
macro_rules! link_keys {
    ($($own:expr),* $(,)?) => {
        &[$($own,)* BW, LAT, SWITCH, BUFFER, MTU, DELAY]
    };
}

/// A family of generated topologies (keys, no positional argument).
const fn generated(
    name: &'static str,
    summary: &'static str,
    keys: &'static [Key],
    example: &'static str,
    build: fn(&Spec) -> Result<Topology, TopologyError>,
) -> Family {
    Family {
        form: Form::named(name, summary)
            .with_keys(keys)
            .with_example(example),
        arg: None,
        build,
    }
}

/// A family read from a file or a preset (`placeholder` is the positional argument in short,
/// `arg` in full).
const fn read(
    name: &'static str,
    summary: &'static str,
    keys: &'static [Key],
    (placeholder, arg): (&'static str, &'static str),
    example: &'static str,
    build: fn(&Spec) -> Result<Topology, TopologyError>,
) -> Family {
    Family {
        form: Form::named(name, summary)
            .with_keys(keys)
            .with_positional(Positional::One(placeholder))
            .with_example(example),
        arg: Some(arg),
        build,
    }
}

/// Every family [`generate`] accepts, in the order `hypercuboid topo list` and error messages
/// list them.
pub const FAMILIES: &[Family] = &[
    generated(
        "slimfly",
        "Slim Fly (MMS graph), diameter 2",
        link_keys![
            Key::new("q", "prime power 4w+d, d in {-1,0,1} (required)"),
            Key::new(
                "p",
                "endpoints per router: floor, ceil or a count (default ceil = ceil(r'/2))",
            ),
        ],
        "slimfly:q=13,p=9",
        |s| {
            SlimFly {
                q: s.required("q", spec::whole)?,
                p: concentration(s)?,
                link: link(s)?,
            }
            .build()
        },
    ),
    generated(
        "polarfly",
        "PolarFly (Erdos-Renyi polarity graph ER_q), diameter 2",
        link_keys![
            Key::new("q", "prime power (required)"),
            Key::new(
                "p",
                "endpoints per router: floor, ceil or a count (default ceil((q+1)/2))",
            ),
        ],
        "polarfly:q=7",
        |s| {
            PolarFly {
                q: s.required("q", spec::whole)?,
                p: concentration(s)?,
                link: link(s)?,
            }
            .build()
        },
    ),
    generated(
        "mlfm",
        "Multi-Layer Full-Mesh (h, l, p), diameter 2",
        link_keys![
            Key::new("h", "network ports of a local router, >= 2 (required)"),
            Key::new("l", "layers (default h)"),
            Key::new("p", "endpoints per local router (default h)"),
        ],
        "mlfm:h=15",
        |s| {
            let h = s.required("h", spec::whole)?;
            Mlfm {
                h,
                l: s.value("l", spec::whole)?.unwrap_or(h),
                p: endpoints(s, h)?,
                link: link(s)?,
            }
            .build()
        },
    ),
    generated(
        "oft",
        "two-level Orthogonal Fat-Tree, diameter 2",
        link_keys![
            Key::new("k", "k-1 a prime power (required); radix 2k"),
            Key::new("p", "endpoints per L0/L2 router (default k)"),
        ],
        "oft:k=12",
        |s| {
            let k = s.required("k", spec::whole)?;
            Oft {
                k,
                p: endpoints(s, k)?,
                link: link(s)?,
            }
            .build()
        },
    ),
    generated(
        "hyperx",
        "HyperX (n-D), diameter n",
        link_keys![
            Key::new("s", "dimension sizes, e.g. 8x8 (required)"),
            Key::new("p", "endpoints per router (default min(s)-1)"),
        ],
        "hyperx:s=8x8,p=6",
        |s| {
            let mut h = HyperX::new(&s.required("s", dims)?);
            if let Some(p) = s.value("p", spec::whole)? {
                h.p = p;
            }
            h.link = link(s)?;
            h.build()
        },
    ),
    generated(
        "fattree",
        "full-bisection fat tree of radix-k routers",
        link_keys![
            Key::new("k", "router radix, even (required)"),
            Key::new("levels", "2, 3 or 4 (default 2)"),
        ],
        "fattree:k=8,levels=3",
        |s| {
            FatTree {
                k: s.required("k", spec::whole)?,
                levels: s.value("levels", spec::whole)?.unwrap_or(2),
                link: link(s)?,
            }
            .build()
        },
    ),
    generated(
        "karyntree",
        "k-ary n-tree (Petrini-Vanneschi)",
        link_keys![
            Key::new("k", "arity >= 2 (required)"),
            Key::new("n", "levels >= 1 (required)"),
        ],
        "karyntree:k=4,n=3",
        |s| {
            KaryNTree {
                k: s.required("k", spec::whole)?,
                n: s.required("n", spec::whole)?,
                link: link(s)?,
            }
            .build()
        },
    ),
    generated(
        "dragonfly",
        "Dragonfly (a, p, h), balanced a=2p=2h by default",
        link_keys![
            Key::new("a", "routers per group (default 2p)"),
            Key::new("p", "endpoints per router (default h, or a/2)"),
            Key::new("h", "global links per router (default p, or a/2)"),
            Key::new("g", "groups, 2..a*h+1 (default a*h+1)"),
        ],
        "dragonfly:p=4",
        dragonfly,
    ),
    generated(
        "torus",
        "torus (k-ary n-cube)",
        link_keys![
            Key::new("dims", "dimension sizes, e.g. 4x4x4 (required)"),
            P,
        ],
        "torus:dims=4x4x4",
        |s| torus(s, true),
    ),
    generated(
        "mesh",
        "mesh (no wrap-around)",
        link_keys![Key::new("dims", "dimension sizes, e.g. 8x8 (required)"), P],
        "mesh:dims=8x8",
        |s| torus(s, false),
    ),
    generated(
        "fullmesh",
        "full mesh of n routers, diameter 1",
        link_keys![Key::new("n", "routers >= 2 (required)"), P],
        "fullmesh:n=16,p=8",
        |s| {
            FullMesh {
                n: s.required("n", spec::whole)?,
                p: endpoints(s, 1)?,
                link: link(s)?,
            }
            .build()
        },
    ),
    read(
        "tree",
        "Ethernet switched tree: a preset (fig1, fig5a, fig5b, fig5c) or a JSON description; \
         bw and lat, where given, replace every link's",
        link_keys![],
        (
            "preset or file",
            "preset name or path of a JSON tree description",
        ),
        "tree:fig1",
        |s| {
            let arg = arg(s);
            let mut desc = if PRESETS.contains(&arg) {
                TreeDescription::preset(arg)?
            } else if arg.ends_with(".json") || std::path::Path::new(arg).exists() {
                TreeDescription::from_json(&read_file(arg)?, arg)?
            } else {
                TreeDescription::preset(arg)?
            };
            let (bw, lat) = (s.value("bw", spec::bandwidth)?, s.value("lat", spec::time)?);
            for (_, _, p) in &mut desc.links {
                p.bandwidth_gbps = bw.unwrap_or(p.bandwidth_gbps);
                p.latency = lat.unwrap_or(p.latency);
            }
            desc.build()
        },
    ),
    read(
        "json",
        "a topology in our JSON schema",
        &[],
        ("file", "path of the JSON file"),
        "json:topology.json",
        |s| from_json(&read_file(arg(s))?, arg(s)),
    ),
    read(
        "edgelist",
        "routers and links from an edge list ('a b [bandwidth_gbps [latency]]' lines)",
        link_keys![P],
        ("file", "path of the edge list"),
        "edgelist:links.txt,p=2",
        |s| {
            let path = arg(s);
            from_edge_list(&read_file(path)?, path, endpoints(s, 1)?, link(s)?)
        },
    ),
    read(
        GRAPHML,
        "GraphML (read by the Python package through networkx)",
        &[Key::new(
            "p",
            "endpoints per router if the file marks none (default 1)",
        )],
        ("file", "path of the GraphML file"),
        "graphml:topology.graphml",
        |s| {
            Err(TopologyError::Parse {
                what: arg(s).to_string(),
                reason: "GraphML is read by the Python package (hypercuboid.topology.generate, \
                         through networkx)"
                    .into(),
            })
        },
    ),
];

/// The positional argument of a family that takes one (the grammar checks it is given).
fn arg(s: &Spec) -> &str {
    s.positional
        .as_deref()
        .expect("the spec grammar checks that a file or preset is given")
}

/// The endpoints per router, `p`, or `default` where the spec does not give it.
fn endpoints(s: &Spec, default: u32) -> Result<u32, SpecError> {
    Ok(s.value("p", spec::whole)?.unwrap_or(default))
}

/// Reads `8x8`, `4x4x4` with [`spec::parse_dims`] (for [`Spec::value`]).
fn dims(v: &str) -> Result<Vec<u32>, String> {
    spec::parse_dims(v, None)
}

/// `p` of Slim Fly and PolarFly: `floor`, `ceil` (the default) or a count >= 1.
fn concentration(s: &Spec) -> Result<Concentration, SpecError> {
    Ok(s.value("p", |v| match v {
        "ceil" => Ok(Concentration::Ceil),
        "floor" => Ok(Concentration::Floor),
        _ => match v.parse::<u32>() {
            Ok(p) if p >= 1 => Ok(Concentration::Count(p)),
            _ => Err("accepted: floor, ceil or a count >= 1".to_string()),
        },
    })?
    .unwrap_or(Concentration::Ceil))
}

/// The `switch` key and the Ethernet keys (`buffer`, `mtu`, `delay`), which only
/// `switch=ethernet` accepts.
fn switch_model(s: &Spec) -> Result<SwitchModel, SpecError> {
    let kind = s.value("switch", |v| SWITCHES.read(v))?;
    if kind != Some(true) {
        for k in &SWITCH_KEYS[1..] {
            if let Some(v) = s.get(k) {
                return Err(s.bad(
                    k,
                    v,
                    "only switch=ethernet takes it (the vct switch's buffers, packets and \
                     latency are the simulator's --buffer, --packet-size and --switch-latency)",
                ));
            }
        }
        return Ok(SwitchModel::Vct);
    }
    let d = Ethernet::default();
    let e = Ethernet {
        buffer_frames: s.value("buffer", spec::whole)?.unwrap_or(d.buffer_frames),
        mtu: s.value("mtu", spec::whole)?.unwrap_or(d.mtu),
        latency: s.value("delay", spec::time)?.unwrap_or(d.latency),
    };
    if let Err((key, value, reason)) = e.check() {
        return Err(s.bad(key, &value, reason));
    }
    Ok(SwitchModel::Ethernet(e))
}

/// `bw` (a bandwidth, a bare number is Gb/s) and `lat` (a time) of every link.
fn link(s: &Spec) -> Result<LinkParams, SpecError> {
    let d = LinkParams::default();
    Ok(LinkParams {
        bandwidth_gbps: s.value("bw", spec::bandwidth)?.unwrap_or(d.bandwidth_gbps),
        latency: s.value("lat", spec::time)?.unwrap_or(d.latency),
    })
}

fn dragonfly(s: &Spec) -> Result<Topology, TopologyError> {
    let (a, p, h) = (
        s.value("a", spec::whole::<u32>)?,
        s.value("p", spec::whole::<u32>)?,
        s.value("h", spec::whole::<u32>)?,
    );
    let (a, p, h) = match (a, p, h) {
        (None, None, None) => return Err(s.missing("one of a, p, h").into()),
        (a, Some(p), h) => (a.unwrap_or(2 * p), p, h.unwrap_or(p)),
        (a, None, Some(h)) => (a.unwrap_or(2 * h), h, h),
        (Some(a), None, None) => (a, (a / 2).max(1), (a / 2).max(1)),
    };
    let g = s
        .value("g", spec::whole::<u32>)?
        .unwrap_or_else(|| a.saturating_mul(h).saturating_add(1));
    Dragonfly {
        a,
        p,
        h,
        g,
        link: link(s)?,
    }
    .build()
}

fn torus(s: &Spec, wrap: bool) -> Result<Topology, TopologyError> {
    Torus {
        sizes: s.required("dims", dims)?,
        wrap,
        p: endpoints(s, 1)?,
        link: link(s)?,
    }
    .build()
}

fn read_file(path: &str) -> Result<String, TopologyError> {
    crate::resources::read_text(path).map_err(|e| io_err(path, &e))
}

/// Looks the family of `text` up in [`FAMILIES`] and reads its keys and positional argument.
pub fn parse_spec(text: &str) -> Result<(&'static Family, Spec), TopologyError> {
    Ok(spec::parse("topology", FAMILIES, |f| &f.form, text)?)
}

/// Parses `text` and builds the topology it names, with the switch model its `switch` key
/// names (families that take one: every generator, `tree` and `edgelist`).
pub fn generate(text: &str) -> Result<Topology, TopologyError> {
    let (family, s) = parse_spec(text)?;
    if !family.form.keys.iter().any(|k| k.name == SWITCH.name) {
        return (family.build)(&s);
    }
    let switch = switch_model(&s)?;
    let mut topo = (family.build)(&s)?;
    topo.set_switch(switch);
    Ok(topo)
}

/// The file and the endpoints per router (`p`, default 1) of a `graphml:FILE[,p=P]` spec, which
/// the Python package reads; `None` for a spec of another family. Errors as [`generate`] for
/// a spec that does not parse.
pub fn graphml_source(text: &str) -> Result<Option<(String, u32)>, TopologyError> {
    let (family, s) = parse_spec(text)?;
    if family.form.name != GRAPHML {
        return Ok(None);
    }
    Ok(Some((arg(&s).to_string(), endpoints(&s, 1)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> SpecError {
        match generate(text).unwrap_err() {
            TopologyError::Spec(e) => e,
            e => panic!("not a spec error: {e}"),
        }
    }

    #[test]
    fn the_table_is_the_accepted_names_and_keys() {
        let names: Vec<String> = FAMILIES.iter().map(|f| f.form.usage()).collect();
        assert_eq!(
            names.join(", "),
            "slimfly, polarfly, mlfm, oft, hyperx, fattree, karyntree, dragonfly, torus, mesh, \
             fullmesh, tree:preset or file, json:file, edgelist:file, graphml:file"
        );
        assert_eq!(err("fly").accepted(), names);
        for f in FAMILIES {
            let name = f.form.name;
            // The full description of the positional argument exactly where there is one.
            assert_eq!(
                f.arg.is_some(),
                f.form.positional != Positional::None,
                "{name}"
            );
            let pos = if f.arg.is_some() { "x," } else { "" };
            let e = err(&format!("{name}:{pos}zeta=1"));
            assert_eq!(e.accepted(), f.form.key_names(), "{name}");
            assert_eq!(
                e.to_string(),
                format!(
                    "invalid topology spec '{name}:{pos}zeta=1': unknown key 'zeta' for {name}; \
                     accepted: {}",
                    if f.form.keys.is_empty() {
                        "none".to_string()
                    } else {
                        f.form.key_names().join(", ")
                    }
                )
            );
            if let Some(k) = f.form.keys.first() {
                let k = k.name;
                assert_eq!(
                    err(&format!("{name}:{pos}{k}=1,{k}=1")).to_string(),
                    format!(
                        "invalid topology spec '{name}:{pos}{k}=1,{k}=1': key '{k}' given twice"
                    )
                );
            }
            // Every generator's example builds.
            if f.arg.is_none() {
                generate(f.form.example).unwrap();
            }
        }
        generate("tree:fig1").unwrap();
    }

    #[test]
    fn links_take_units() {
        let bw = |text: &str| generate(text).unwrap().links()[0].bandwidth_gbps;
        assert_eq!(bw("fullmesh:n=3"), 100.0);
        assert_eq!(bw("fullmesh:n=3,bw=50"), 50.0);
        assert_eq!(bw("fullmesh:n=3,bw=400Gbps"), 400.0);
        assert_eq!(bw("fullmesh:n=3,bw=12.5GB/s"), 100.0);
        let lat = generate("fullmesh:n=3,lat=1.5us").unwrap().links()[0].latency;
        assert_eq!(lat, 1_500_000);
        assert_eq!(
            graphml_source("graphml:t.graphml,p=2").unwrap(),
            Some(("t.graphml".to_string(), 2))
        );
        assert_eq!(graphml_source("fullmesh:n=3").unwrap(), None);
        assert_eq!(
            graphml_source("graphml:t.graphml,p=x")
                .unwrap_err()
                .to_string(),
            "invalid topology spec 'graphml:t.graphml,p=x': p=x: not a whole number in range"
        );
    }
}
