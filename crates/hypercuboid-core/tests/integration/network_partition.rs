//! The packet engine's parts: routers split by graph cuts, balanced by ports, and the same
//! results for every thread count.

use hypercuboid_core::network::{
    NetParams, Network, Report, RoutingSpec, Synthetic, TrafficSpec, Workload,
};
use hypercuboid_core::topology::{generate, Topology};
use hypercuboid_core::units::us;

fn network(topo: &Topology, threads: usize) -> Network<'_> {
    routed(topo, "min", threads)
}

fn routed<'t>(topo: &'t Topology, routing: &str, threads: usize) -> Network<'t> {
    let p = NetParams {
        threads,
        ..NetParams::default()
    };
    Network::new(topo, &RoutingSpec::parse(routing).unwrap(), p).unwrap()
}

/// Router-to-router links whose ends lie in different parts.
fn cut(topo: &Topology, owner: &[u8]) -> usize {
    topo.links()
        .iter()
        .filter(|l| owner[l.a as usize] != owner[l.b as usize])
        .count()
}

/// Ports (network and endpoint) of every router.
fn ports(topo: &Topology) -> Vec<usize> {
    (0..topo.num_routers())
        .map(|x| topo.neighbors(x).len() + topo.router_endpoints(x).len())
        .collect()
}

/// The partition the engine used before graph cuts: runs of consecutive routers with about
/// as many ports each.
fn runs(topo: &Topology, parts: usize) -> Vec<u8> {
    let w = ports(topo);
    let total: usize = w.iter().sum();
    let mut before = 0;
    w.iter()
        .map(|&x| {
            let o = (before * parts / total) as u8;
            before += x;
            o
        })
        .collect()
}

/// Parts; links cut by the graph cuts and by runs of routers; the lightest and heaviest
/// part's ports.
type Row = (usize, usize, usize, usize, usize);

/// Per network, a [`Row`] per part count.
const CUTS: [(&str, [Row; 4]); 4] = [
    (
        "slimfly:q=5",
        [
            (2, 65, 125, 275, 275),
            (4, 99, 131, 132, 143),
            (8, 121, 141, 55, 77),
            (16, 141, 154, 33, 44),
        ],
    ),
    (
        "slimfly:q=13",
        [
            (2, 1105, 2197, 4901, 4901),
            (4, 1683, 2239, 2436, 2465),
            (8, 2005, 2305, 1189, 1247),
            (16, 2219, 2415, 580, 638),
        ],
    ),
    (
        "dragonfly:p=4",
        [
            (2, 272, 272, 1980, 1980),
            (4, 408, 424, 990, 990),
            (8, 476, 532, 495, 495),
            (16, 572, 664, 240, 255),
        ],
    ),
    (
        "fattree:k=16,levels=3",
        [
            (2, 496, 1024, 2560, 2560),
            (4, 761, 1920, 1264, 1296),
            (8, 928, 2000, 624, 656),
            (16, 1044, 2040, 304, 336),
        ],
    ),
];

#[test]
fn graph_cuts_cut_fewer_links_than_runs_of_routers() {
    // Slim Fly q = 13 in 16 parts: 2219 of 3211 links cut (69 %) against 2415 (75 %); a fat
    // tree's pods stay whole (1044 of 2048 against 2040 at 16 parts). A dragonfly's routers
    // are numbered group by group, so runs of them are already whole groups; in two halves of
    // its 33 groups one group is split either way, and the graph cut finds no better.
    for (spec, rows) in CUTS {
        let topo = generate(spec).unwrap();
        let w = ports(&topo);
        let total: usize = w.iter().sum();
        let wmax = *w.iter().max().unwrap();
        for (parts, want, want_runs, lightest, heaviest) in rows {
            let n = network(&topo, parts);
            let (owner, lookahead) = n.partition();
            assert_eq!(owner, n.partition().0, "{spec} {parts}: deterministic");
            let mut pw = vec![0usize; parts];
            for (x, &o) in owner.iter().enumerate() {
                pw[o as usize] += w[x];
            }
            let got = (
                cut(&topo, &owner),
                cut(&topo, &runs(&topo, parts)),
                *pw.iter().min().unwrap(),
                *pw.iter().max().unwrap(),
            );
            assert_eq!(got, (want, want_runs, lightest, heaviest), "{spec} {parts}");
            if spec.starts_with("dragonfly") && parts == 2 {
                assert_eq!(want, want_runs);
            } else {
                assert!(want < want_runs, "{spec} {parts}");
            }
            // Every part within two routers' ports of the mean.
            let mean = total / parts;
            assert!(heaviest <= mean + 1 + 2 * wmax, "{spec} {parts}");
            assert!(lightest + 2 * wmax >= mean, "{spec} {parts}");
            // Uniform links: L + min(S, σ).
            assert_eq!(lookahead, 70_480, "{spec} {parts}");
        }
    }
}

#[test]
fn every_part_gets_a_router_when_parts_are_nearly_as_many() {
    // 20 switches of a fat tree in 16 and 20 parts, 8 routers of a ring in 8.
    for (spec, parts) in [
        ("fattree:k=4,levels=3", 16),
        ("fattree:k=4,levels=3", 20),
        ("torus:dims=8", 8),
    ] {
        let topo = generate(spec).unwrap();
        let (owner, _) = network(&topo, parts).partition();
        let mut seen = vec![0usize; parts];
        for &o in &owner {
            seen[o as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 0), "{spec} {parts}: {seen:?}");
    }
}

#[test]
fn every_thread_count_gives_the_same_report() {
    // The parts of graph cuts are no contiguous runs: a part's neighbours are not its
    // number's neighbours, and each hears only from the parts a link joins to it. Every
    // packet's path and time stay those of one thread.
    for (spec, routing, traffic, load) in [
        ("slimfly:q=5", "ugal", "uniform", 0.6),
        ("dragonfly:p=2", "ugal", "shift:3", 0.5),
        ("fattree:k=8,levels=3", "min", "uniform", 0.9),
        ("torus:dims=4x4x4", "min", "uniform", 0.5),
    ] {
        let topo = generate(spec).unwrap();
        let run = |threads: usize| -> Report {
            let n = routed(&topo, routing, threads);
            let pattern = TrafficSpec::parse(traffic)
                .unwrap()
                .resolve(&topo, n.routes(), 5)
                .unwrap();
            let mut s = Synthetic::new(pattern, load);
            s.duration = us(8);
            s.warmup = us(2);
            s.drain = true;
            let mut r = n.run(&Workload::Synthetic(s), traffic).unwrap();
            assert_eq!(r.threads, threads, "{spec}");
            (r.wall_seconds, r.events, r.threads) = (0.0, 0, 0);
            r
        };
        let one = run(1);
        assert!(one.delivered > 500, "{spec}: {}", one.delivered);
        for threads in [2, 4, 8] {
            assert_eq!(run(threads), one, "{spec} {routing}: {threads} threads");
        }
    }
}
