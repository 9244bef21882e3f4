//! Traffic patterns and exchanges: the worst cases' structure (seed section 4.2), torus
//! fitting and mapping (section 4.4), spec parsing and its errors.

use hypercuboid_core::network::traffic::distance_two_walks;
use hypercuboid_core::network::{
    fit_torus, ExchangeSpec, Pattern, Routes, RoutingSpec, TrafficSpec,
};
use hypercuboid_core::topology::{generate, Topology};
use std::collections::HashMap;

fn min_routes(t: &Topology) -> Routes {
    Routes::new(t, &RoutingSpec::parse("min").unwrap()).unwrap()
}

fn map(t: &Topology, r: &Routes, traffic: &str) -> Vec<u32> {
    match TrafficSpec::parse(traffic)
        .unwrap()
        .resolve(t, r, 3)
        .unwrap()
    {
        Pattern::Map(m) => m,
        Pattern::Uniform => panic!("{traffic} is not a permutation"),
    }
}

fn assert_permutation(m: &[u32]) {
    let mut seen = vec![false; m.len()];
    for (e, &d) in m.iter().enumerate() {
        assert_ne!(d as usize, e, "node {e} sends to itself");
        assert!(!seen[d as usize], "{d} receives twice");
        seen[d as usize] = true;
    }
}

/// Endpoint flows per directed router link, walking every flow's (unique) minimal path.
fn link_flows(t: &Topology, r: &Routes, m: &[u32]) -> HashMap<(usize, usize), u32> {
    let mut load = HashMap::new();
    for (e, &d) in m.iter().enumerate() {
        let (mut x, dr) = (t.endpoint_router(e), t.endpoint_router(d as usize));
        while x != dr {
            let ports = r.min_ports(x, dr);
            assert_eq!(ports.len(), 1, "single minimal path expected {x} -> {dr}");
            let n = t.neighbors(x)[ports[0] as usize] as usize;
            *load.entry((x, n)).or_insert(0) += 1;
            x = n;
        }
    }
    load
}

#[test]
fn sspt_worst_case_is_a_shift_by_p_onto_single_paths() {
    // Seed section 4.2: MLFM shift by h, OFT shift by k. Each router's p nodes all send to the
    // nodes of one other router (not its column / symmetric counterpart), so all p flows take
    // the same single 2-hop path, up one link class and down the other, and every link used
    // carries exactly p flows.
    for (spec, p) in [
        ("mlfm:h=4", 4),
        ("mlfm:h=6", 6),
        ("oft:k=4", 4),
        ("oft:k=6", 6),
    ] {
        let t = generate(spec).unwrap();
        let r = min_routes(&t);
        let m = map(&t, &r, "worst");
        assert_permutation(&m);
        assert_eq!(m, map(&t, &r, &format!("shift:{p}")), "{spec}");
        for x in 0..t.num_routers() {
            let eps = t.router_endpoints(x);
            if eps.is_empty() {
                continue;
            }
            let dst: Vec<usize> = eps
                .iter()
                .map(|&e| t.endpoint_router(m[e as usize] as usize))
                .collect();
            assert!(dst.iter().all(|&d| d == dst[0]), "{spec}: router {x}");
            assert_eq!(r.dist(x, dst[0]), 2);
            assert_eq!(r.min_ports(x, dst[0]).len(), 1, "{spec}: {x} -> {}", dst[0]);
        }
        let load = link_flows(&t, &r, &m);
        assert!(load.values().all(|&f| f == p), "{spec}: {load:?}");
        // Up then down: the first hop leaves a router with endpoints, the second enters one.
        for &(a, b) in load.keys() {
            let up = !t.router_endpoints(a).is_empty();
            assert_ne!(up, !t.router_endpoints(b).is_empty());
        }
        assert_eq!(load.len(), 2 * t.num_endpoint_routers(), "{spec}");
    }
}

#[test]
fn slim_fly_worst_case_pairs_routers_at_distance_two_with_overlapping_routes() {
    // Seed Fig. 5: R_A -> R_C over R_B and R_B -> R_D over R_C share R_B -> R_C, which then
    // carries 2p flows. On SF q=5 the greedy walks place every router at distance 2 from its
    // partner over a single path; 45 links carry two routers' flows, and 46 of the 50 flows
    // cross one of them (the walks' ends do not).
    let t = generate("slimfly:q=5").unwrap(); // p = 4
    let r = min_routes(&t);
    let f = distance_two_walks(&r);
    let mut seen = [false; 50];
    for (x, &y) in f.iter().enumerate() {
        assert_ne!(x, y as usize);
        assert!(!std::mem::replace(&mut seen[y as usize], true));
        assert_eq!(r.dist(x, y as usize), 2);
    }
    let m = map(&t, &r, "worst");
    assert_permutation(&m);
    // Node j of router x sends to node j of router f(x).
    for (e, &d) in m.iter().enumerate() {
        assert_eq!(
            t.endpoint_router(d as usize),
            f[t.endpoint_router(e)] as usize
        );
        assert_eq!(d as usize % 4, e % 4);
    }
    let load = link_flows(&t, &r, &m);
    assert_eq!(load.values().max(), Some(&8)); // 2p
    assert_eq!(load.values().filter(|&&f| f == 8).count(), 45);
    let crossing = (0..50)
        .filter(|&x| {
            let y = f[x] as usize;
            let mid = t.neighbors(x)[r.min_ports(x, y)[0] as usize] as usize;
            load[&(x, mid)] == 8 || load[&(mid, y)] == 8
        })
        .count();
    assert_eq!(crossing, 46);
}

#[test]
fn permutation_and_shift() {
    let t = generate("oft:k=4").unwrap();
    let r = min_routes(&t);
    let n = t.num_endpoints();
    let p = map(&t, &r, "permutation");
    assert_permutation(&p);
    // A single cycle (Sattolo): following it visits every node.
    let (mut x, mut steps) = (0usize, 0);
    loop {
        x = p[x] as usize;
        steps += 1;
        if x == 0 {
            break;
        }
    }
    assert_eq!(steps, n);
    let s = map(&t, &r, "shift:-1");
    assert_eq!(s[0] as usize, n - 1);
    assert_eq!(s[5], 4);
    let e = TrafficSpec::parse(&format!("shift:{n}"))
        .unwrap()
        .resolve(&t, &r, 1)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "invalid shift shift:{n}: an offset that is a multiple of N = {n} sends every node to \
             itself"
        )
    );
}

#[test]
fn seed_torus_sizes() {
    // Seed section 4.4 (the seed writes 15x16x15 for the MLFM: the same factors).
    assert_eq!(fit_torus(3192), Some([12, 14, 19])); // OFT k=12
    assert_eq!(fit_torus(3600), Some([15, 15, 16])); // MLFM h=15
    assert_eq!(fit_torus(3042), Some([13, 13, 18])); // SF q=13 p=9
    assert_eq!(fit_torus(3380), Some([13, 13, 20])); // SF q=13 p=10
    assert_eq!(fit_torus(8), Some([2, 2, 2]));
    // 14 = 2 * 7 has no factorisation with Z <= 2X: the largest torus below is 12 = 2x2x3.
    assert_eq!(fit_torus(14), Some([2, 2, 3]));
    assert_eq!(fit_torus(1), Some([1, 1, 1]));
}

#[test]
fn nearest_neighbour_plan_is_a_symmetric_torus() {
    let t = generate("mlfm:h=15").unwrap(); // 3600 nodes
    let spec = ExchangeSpec::NearestNeighbor {
        dims: Some([15, 16, 15]),
        bytes: 512 * 1024,
    };
    let plan = spec.plan(&t, 256, 1).unwrap();
    assert_eq!(plan.nodes, 3600);
    assert_eq!(plan.packets_per_message, 2048);
    let mut pairs = std::collections::HashSet::new();
    for e in 0..3600 {
        let ds = &plan.dest[plan.off[e] as usize..plan.off[e + 1] as usize];
        assert_eq!(ds.len(), 6);
        for &d in ds {
            pairs.insert((e as u32, d));
        }
    }
    for &(a, b) in &pairs {
        assert!(pairs.contains(&(b, a)));
    }
    // Contiguous mapping: node x + 15(y + 16z); X neighbours share the local router (15
    // nodes), Y neighbours share the layer (16 routers), Z neighbours the router column.
    let ds = &plan.dest[plan.off[0] as usize..plan.off[1] as usize];
    assert_eq!(ds, &[1, 14, 15, 225, 240, 3360]);
    assert_eq!(t.endpoint_router(0), t.endpoint_router(14));
    assert_eq!(t.coords(t.endpoint_router(3360)), &[14, 0]); // layer 14, position 0
    let big = ExchangeSpec::NearestNeighbor {
        dims: Some([16, 16, 16]),
        bytes: 1,
    };
    assert_eq!(
        big.plan(&t, 256, 1).unwrap_err().to_string(),
        "invalid torus 16x16x16: the torus must have dimensions >= 1 and at most N = 3600 \
         processes"
    );
}

#[test]
fn all_to_all_plan_visits_every_other_node_once() {
    let t = generate("oft:k=4").unwrap(); // 104 nodes
    let plan = ExchangeSpec::parse("a2a")
        .unwrap()
        .plan(&t, 256, 9)
        .unwrap();
    assert_eq!(plan.packets_per_message, 30);
    assert!(plan.interleave);
    for e in 0..104 {
        let mut ds: Vec<u32> = plan.dest[plan.off[e] as usize..plan.off[e + 1] as usize].to_vec();
        ds.sort_unstable();
        let want: Vec<u32> = (0..104).filter(|&d| d != e as u32).collect();
        assert_eq!(ds, want);
    }
    // Each node has its own order.
    assert_ne!(
        &plan.dest[0..5],
        &plan.dest[plan.off[1] as usize..plan.off[1] as usize + 5]
    );
}

#[test]
fn spec_errors_name_the_accepted_values() {
    for (spec, message) in [
        (
            "tornado",
            "unknown traffic 'tornado'; accepted: uniform, worst, permutation, shift:K",
        ),
        (
            "shift",
            "invalid traffic spec 'shift': shift needs K (or k=K), e.g. shift:12",
        ),
        (
            "shift:x",
            "invalid traffic spec 'shift:x': K=x: not a whole number in range",
        ),
        (
            "uniform:3",
            "invalid traffic spec 'uniform:3': '3' is not key=value; uniform takes no parameters",
        ),
    ] {
        assert_eq!(TrafficSpec::parse(spec).unwrap_err().to_string(), message);
    }
    assert_eq!(
        TrafficSpec::parse("shift:k=12").unwrap(),
        TrafficSpec::Shift(12)
    );
    assert_eq!(TrafficSpec::parse("WC").unwrap(), TrafficSpec::Worst);
    for (spec, message) in [
        (
            "dor",
            "unknown routing 'dor'; accepted: min, inr, ugal, ugal-th",
        ),
        (
            "min:n=3",
            "invalid routing spec 'min:n=3': unknown key 'n' for min; accepted: choice, vcs",
        ),
        (
            "ugal:t=5",
            "invalid routing spec 'ugal:t=5': unknown key 't' for ugal; accepted: choice, vcs, n, \
             c, cost",
        ),
        (
            "ugal-th:t=150",
            "invalid routing spec 'ugal-th:t=150': t=150: the threshold is a percentage of the \
             output buffer, 0 to 100",
        ),
        (
            "ugal:n=0",
            "invalid routing spec 'ugal:n=0': n=0: the indirect candidates must be 1 to 64",
        ),
        (
            "ugal:c=1,c=2",
            "invalid routing spec 'ugal:c=1,c=2': key 'c' given twice",
        ),
        (
            "inr:vcs=7",
            "invalid routing spec 'inr:vcs=7': vcs=7: accepted: auto, hop, phase, none",
        ),
    ] {
        assert_eq!(RoutingSpec::parse(spec).unwrap_err().to_string(), message);
    }
    // Round trip of the canonical form.
    for s in [
        "min",
        "min:choice=lowest",
        "inr:vcs=hop",
        "ugal:n=8,c=0.5,cost=const",
        "ugal-th:t=20",
    ] {
        assert_eq!(RoutingSpec::parse(s).unwrap().to_string(), s);
    }
}
