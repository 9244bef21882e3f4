//! Deadlock freedom: the channel dependency graph of every (topology, routing) is acyclic with
//! the VC assignment the routing picks, and cyclic where the seed says VCs are needed.

use hypercuboid_core::network::{cdg, Algorithm, Routes, RoutingSpec, VcScheme};
use hypercuboid_core::topology::generate;

const ROUTINGS: [&str; 4] = ["min", "inr", "ugal", "ugal-th"];

fn routes(spec: &str, routing: &str) -> Routes {
    let t = generate(spec).unwrap();
    Routes::new(&t, &RoutingSpec::parse(routing).unwrap()).unwrap()
}

/// (topology, expected scheme, VCs for MIN, VCs for indirect routings).
const CASES: &[(&str, VcScheme, usize, usize)] = &[
    // Seed section 3.4: SF 2 VCs minimal, 4 indirect (Besta and Hoefler).
    ("slimfly:q=5", VcScheme::Hop, 2, 4),
    ("slimfly:q=5,p=floor", VcScheme::Hop, 2, 4),
    ("slimfly:q=7", VcScheme::Hop, 2, 4),
    ("slimfly:q=4", VcScheme::Hop, 2, 4),
    // MLFM and OFT: 1 VC minimal (towards/away), 2 indirect.
    ("mlfm:h=4", VcScheme::Phase, 1, 2),
    ("mlfm:h=3,l=2,p=2", VcScheme::Phase, 1, 2),
    ("oft:k=4", VcScheme::Phase, 1, 2),
    ("oft:k=6", VcScheme::Phase, 1, 2),
    // Fat trees: up/down.
    ("fattree:k=4", VcScheme::Phase, 1, 2),
    ("fattree:k=4,levels=3", VcScheme::Phase, 1, 2),
    ("karyntree:k=2,n=3", VcScheme::Phase, 1, 2),
    // Others: a full mesh and a tree need no VC for minimal routes; the rest hop-index.
    ("fullmesh:n=5,p=2", VcScheme::Phase, 1, 2),
    ("tree:fig1", VcScheme::Phase, 1, 2),
    ("polarfly:q=3", VcScheme::Hop, 2, 4),
    ("hyperx:s=3x3,p=2", VcScheme::Hop, 2, 4),
    ("dragonfly:p=1", VcScheme::Hop, 3, 6),
    ("torus:dims=4x4", VcScheme::Hop, 4, 8),
    ("mesh:dims=3x3", VcScheme::Hop, 4, 8),
];

#[test]
fn every_topology_and_routing_is_deadlock_free() {
    for &(spec, scheme, vmin, vind) in CASES {
        for routing in ROUTINGS {
            let r = routes(spec, routing);
            assert_eq!(r.scheme(), scheme, "{spec} {routing}");
            let want = if routing == "min" { vmin } else { vind };
            assert_eq!(r.num_vcs(), want, "{spec} {routing}: VCs");
            let g = cdg::build(&r, r.spec().algorithm);
            assert!(
                !g.edges().is_empty() || routing == "min",
                "{spec} {routing}"
            );
            assert_eq!(
                g.find_cycle(),
                None,
                "{spec} {routing}: the channel dependency graph has a cycle"
            );
            // Every dependency stays within the routing's VCs and joins adjacent channels.
            for &(a, b) in g.edges() {
                let (ca, cb) = (g.channel(a), g.channel(b));
                assert_eq!(ca.to, cb.from, "{spec} {routing}: {ca} -> {cb}");
                assert!((cb.vc as usize) < want);
            }
        }
    }
}

#[test]
fn without_vcs_the_seed_topologies_have_cycles_where_the_seed_says() {
    // Slim Fly: minimal routing already needs VCs.
    let r = routes("slimfly:q=5", "min:vcs=none");
    assert_eq!(r.num_vcs(), 1);
    let cycle = cdg::build(&r, Algorithm::Min)
        .find_cycle()
        .expect("SF MIN on 1 VC cycles");
    for w in cycle.windows(2) {
        assert_eq!(w[0].to, w[1].from);
    }
    assert_eq!(cycle.last().unwrap().to, cycle[0].from);
    // MLFM and OFT: minimal routing is deadlock-free on one VC (towards then away), indirect
    // routing is not (towards, away, towards, away).
    for spec in ["mlfm:h=4", "oft:k=4"] {
        let r = routes(spec, "min:vcs=none");
        assert_eq!(cdg::build(&r, Algorithm::Min).find_cycle(), None, "{spec}");
        let r = routes(spec, "inr:vcs=none");
        assert!(
            cdg::build(&r, Algorithm::Inr).find_cycle().is_some(),
            "{spec}: INR on one VC must cycle"
        );
    }
    // A ring: minimal routing cycles around it.
    let r = routes("torus:dims=6", "min:vcs=none");
    let c = cdg::build(&r, Algorithm::Min).find_cycle().unwrap();
    assert_eq!(c.len(), 6, "{c:?}");
}

#[test]
fn phase_scheme_is_refused_where_minimal_routes_cycle() {
    let t = generate("slimfly:q=5").unwrap();
    let e = Routes::new(&t, &RoutingSpec::parse("inr:vcs=phase").unwrap()).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with(
            "routing inr cannot run on slimfly:q=5,p=4: the phase VC assignment needs minimal \
             routes whose one-VC channel dependency graph is acyclic, and here it has the cycle r"
        ),
        "{msg}"
    );
    assert!(msg.ends_with("; use vcs=hop"), "{msg}");
    // Hop-index is always accepted, and acyclic.
    for spec in ["mlfm:h=4", "oft:k=4"] {
        let r = routes(spec, "inr:vcs=hop");
        assert_eq!(r.scheme(), VcScheme::Hop);
        assert_eq!(r.num_vcs(), 4);
        assert_eq!(cdg::build(&r, Algorithm::Inr).find_cycle(), None);
    }
}

#[test]
fn minimal_tables_step_one_closer() {
    for spec in ["slimfly:q=5", "mlfm:h=4", "oft:k=4", "fattree:k=4,levels=3"] {
        let r = routes(spec, "min");
        let t = generate(spec).unwrap();
        for x in 0..r.num_routers() {
            for &d in r.targets() {
                let d = d as usize;
                let ports = r.min_ports(x, d);
                assert_eq!(ports.is_empty(), x == d);
                for &j in ports {
                    let n = t.neighbors(x)[j as usize] as usize;
                    assert_eq!(r.dist(n, d) + 1, r.dist(x, d), "{spec} {x}->{d}");
                }
                // Every neighbour one step closer is listed.
                let closer = t
                    .neighbors(x)
                    .iter()
                    .filter(|&&n| r.dist(n as usize, d) + 1 == r.dist(x, d))
                    .count();
                assert_eq!(ports.len(), closer);
            }
        }
    }
}

#[test]
fn indirect_paths_have_the_seeds_lengths() {
    // Seed section 3.2: intermediates are routers with endpoints; on MLFM and OFT every
    // indirect path has exactly 4 hops, on SF 2 to 4.
    for (spec, lo, hi) in [
        ("mlfm:h=4", 4, 4),
        ("oft:k=4", 4, 4),
        ("oft:k=6", 4, 4),
        ("slimfly:q=5", 2, 4),
    ] {
        let r = routes(spec, "inr");
        let ts = r.targets();
        let (mut mn, mut mx) = (u16::MAX, 0);
        for &s in ts {
            for &i in ts {
                for &d in ts {
                    if s == i || i == d || s == d {
                        continue;
                    }
                    let l = r.dist(s as usize, i as usize) + r.dist(i as usize, d as usize);
                    mn = mn.min(l);
                    mx = mx.max(l);
                }
            }
        }
        assert_eq!((mn, mx), (lo, hi), "{spec}");
    }
    // The MLFM's local routers and the OFT's L0/L2 routers are the intermediate set.
    assert_eq!(routes("mlfm:h=4", "inr").targets().len(), 4 * 5);
    assert_eq!(routes("oft:k=4", "inr").targets().len(), 2 * 13);
    assert_eq!(routes("slimfly:q=5", "inr").targets().len(), 50);
}
