//! Contention-free AAPC phases (alltoall seed, Faraj and Yuan, section 4; issue 15, sections 2
//! and 6): Table 4 reproduced, the presets, 10,000 random trees, the general heuristic on a
//! fat tree, a Slim Fly and a torus, the checks catching broken tables, and bad input.

use hypercuboid_core::collectives::alltoall::phases::check::{
    complete, contention_free, link_loads, optimal,
};
use hypercuboid_core::collectives::alltoall::phases::random::{random_tree, Shape, SHAPES};
use hypercuboid_core::collectives::alltoall::phases::tree::faraj_yuan;
use hypercuboid_core::collectives::alltoall::phases::{
    phases, DirectedLink, LinkRoutes, Method, PhaseError, PhaseTable, Routing, Violation,
};
use hypercuboid_core::network::routing::{Routes, RoutingSpec};
use hypercuboid_core::topology::tree::{analyze_tree, TreeDescription};
use hypercuboid_core::topology::{generate, Topology};

/// The seed's Table 4 ("Results of global and local message assignment for the cluster in
/// Figure 1"), row by row in its column order (global messages of t_0, t_1, t_2, then the
/// local messages of t_0, t_1), with its naming t_{0,0..2} = n0..n2, t_{1,0..1} = n3, n4,
/// t_{2,0} = n5.
#[test]
fn table_4_of_the_seed() {
    let t = generate("tree:fig1").unwrap();
    let r = phases(&t, Method::Auto, Routing::default()).unwrap();
    assert_eq!(r.method, Method::FarajYuan);
    assert_eq!(r.subtrees, vec![vec![0, 1, 2], vec![3, 4], vec![5]]);
    assert_eq!(r.root, Some((1, "s1".to_string())));
    let table4: Vec<Vec<(u32, u32)>> = vec![
        vec![(0, 4), (3, 5), (5, 1), (1, 0)],
        vec![(1, 3), (4, 5), (5, 2), (2, 1)],
        vec![(2, 4), (5, 0), (0, 2)],
        vec![(0, 3), (3, 2), (2, 0)],
        vec![(1, 4), (3, 0), (0, 1), (4, 3)],
        vec![(2, 3), (3, 1), (1, 2)],
        vec![(0, 5), (4, 0)],
        vec![(1, 5), (4, 1), (5, 3), (3, 4)],
        vec![(2, 5), (4, 2), (5, 4)],
    ];
    let got: Vec<Vec<(u32, u32)>> = r.table.iter().map(|p| p.to_vec()).collect();
    assert_eq!(got, table4);
    assert_eq!(r.table, PhaseTable::from_phases(6, &table4));
    assert_eq!((r.num_phases(), r.load, r.gap()), (9, 9, 0));
    assert!(r.checks.ok(), "{:?}", r.checks);
}

/// Every preset: complete, contention-free, and exactly the bottleneck load of phases
/// (fig1 3·3, fig5a 1·23, fig5b 8·24, fig5c 16·16).
#[test]
fn presets_are_optimal() {
    for (name, load, root) in [
        ("fig1", 9, "s1"),
        ("fig5a", 23, "s0"),
        ("fig5b", 192, "s0"),
        ("fig5c", 256, "s1"),
    ] {
        let t = generate(&format!("tree:{name}")).unwrap();
        let r = phases(&t, Method::FarajYuan, Routing::default()).unwrap();
        assert_eq!(r.num_phases(), load, "{name}");
        assert_eq!(r.load, load as u64, "{name}");
        assert_eq!(r.root.as_ref().unwrap().1, root, "{name}");
        assert!(r.checks.ok(), "{name}: {:?}", r.checks);
        let n = t.num_endpoints();
        assert_eq!(r.table.num_messages(), n * (n - 1), "{name}");
    }
}

/// One tree through the scheduler and the three checks, with the bound recomputed from the
/// routes (the largest directed-link load) and compared with the analysis's |M_u|·|M_v|.
fn assert_optimal(desc: &TreeDescription) -> (usize, usize) {
    let t = desc.build().unwrap();
    let routes = LinkRoutes::new(&t, Routing::default()).unwrap();
    assert!(routes.is_tree());
    let r = faraj_yuan(&t).unwrap_or_else(|e| panic!("{}: {e}", desc.name));
    let a = analyze_tree(&t).unwrap();
    let m0 = r.subtrees[0].len() as u64;
    let m = t.num_endpoints() as u64;
    assert_eq!(m0 * (m - m0), a.load, "{}: |M0|(|M|-|M0|)", desc.name);
    let max_load = link_loads(&routes).into_iter().max().unwrap();
    assert_eq!(max_load, a.load, "{}", desc.name);
    assert_eq!(complete(&r.table).violation, None, "{}", desc.name);
    assert_eq!(
        contention_free(&r.table, &routes).violation,
        None,
        "{}",
        desc.name
    );
    assert_eq!(optimal(&r.table, a.load).violation, None, "{}", desc.name);
    (
        r.subtrees.len(),
        r.subtrees.iter().filter(|s| s.len() == 1).count(),
    )
}

/// 10,000 random trees of 2 to 64 machines in five shapes (random, chain, star, deep, sparse
/// with machine-less switches): every one complete, contention-free and optimal. Also counts
/// that the shapes the issue names occur: machines attached directly to the root, chains,
/// stars, deep trees.
#[test]
fn ten_thousand_random_trees() {
    let mut direct_on_root = 0;
    let mut single_switch = 0;
    let mut deep = 0;
    for i in 0..10_000u64 {
        let shape = SHAPES[(i % 5) as usize];
        let machines = 2 + (i.wrapping_mul(2_654_435_761) % 63) as usize;
        let switches = 1 + ((i / 5).wrapping_mul(40_503) % 24) as usize;
        let desc = random_tree(machines, switches, shape, i);
        let t = desc.build().unwrap();
        let (_, singles) = assert_optimal(&desc);
        let a = analyze_tree(&t).unwrap();
        if !t.router_endpoints(a.root).is_empty() && singles > 0 {
            direct_on_root += 1;
        }
        if switches == 1 {
            single_switch += 1;
        }
        if shape == Shape::Deep && switches >= 12 {
            deep += 1;
        }
    }
    assert!(direct_on_root > 1000, "{direct_on_root}");
    assert!(single_switch > 300, "{single_switch}");
    assert!(deep > 500, "{deep}");
}

/// Hand-made corner cases: two machines, a chain of switches each with one machine, machines
/// only at the ends of a long chain, a star of single-machine switches, subtrees of equal size.
#[test]
fn corner_trees() {
    let link = |a: &str, b: &str| (a.to_string(), b.to_string(), Default::default());
    let tree = |name: &str, switches: usize, links: Vec<(&str, &str)>| {
        let machines: Vec<String> = links
            .iter()
            .flat_map(|(a, b)| [a, b])
            .filter(|x| x.starts_with('n'))
            .map(|x| x.to_string())
            .collect();
        TreeDescription {
            name: name.into(),
            switches: (0..switches).map(|i| format!("s{i}")).collect(),
            machines,
            links: links.into_iter().map(|(a, b)| link(a, b)).collect(),
        }
    };
    let two = tree("two", 1, vec![("n0", "s0"), ("n1", "s0")]);
    assert_optimal(&two);
    let chain = tree(
        "chain",
        4,
        vec![
            ("s0", "s1"),
            ("s1", "s2"),
            ("s2", "s3"),
            ("n0", "s0"),
            ("n1", "s1"),
            ("n2", "s2"),
            ("n3", "s3"),
        ],
    );
    assert_optimal(&chain);
    let ends = tree(
        "ends",
        5,
        vec![
            ("s0", "s1"),
            ("s1", "s2"),
            ("s2", "s3"),
            ("s3", "s4"),
            ("n0", "s0"),
            ("n1", "s0"),
            ("n2", "s4"),
        ],
    );
    assert_optimal(&ends);
    let equal = tree(
        "equal",
        3,
        vec![
            ("s0", "s1"),
            ("s0", "s2"),
            ("n0", "s1"),
            ("n1", "s1"),
            ("n2", "s2"),
            ("n3", "s2"),
            ("n4", "s0"),
        ],
    );
    assert_eq!(assert_optimal(&equal), (3, 1));
}

/// The route of a message on a tree is its unique path, in order: fig1's path(n0, n3) is
/// (n0, s0), (s0, s1), (s1, s3), (s3, n3) (seed, section 3).
#[test]
fn routes_follow_the_seed_paths() {
    let t = generate("tree:fig1").unwrap();
    let routes = LinkRoutes::new(&t, Routing::default()).unwrap();
    let names: Vec<String> = routes
        .route(0, 3)
        .iter()
        .map(|&l| routes.name(&t, l))
        .collect();
    assert_eq!(names, ["n0->s0", "s0->s1", "s1->s3", "s3->n3"]);
    assert_eq!(routes.num_directed_links(), 2 * (2 + 6));
    assert_eq!(
        routes.describe(routes.route(0, 3)[0]),
        DirectedLink::Send { endpoint: 0 }
    );
    assert_eq!(
        routes.describe(routes.route(0, 3)[3]),
        DirectedLink::Receive { endpoint: 3 }
    );
    // Same switch: up and down only.
    assert_eq!(routes.route(0, 1).len(), 2);
}

/// Off trees, the route takes at every router one of the minimal next hops of `min` routing,
/// in its candidate order: the first (`first`), or candidate v mod c with v the destination's
/// remaining mixed-radix digits (`dmodk`).
#[test]
fn minimal_routes_match_the_network_routing() {
    for spec in ["torus:dims=8x8", "slimfly:q=5", "fattree:k=4,levels=3"] {
        let t = generate(spec).unwrap();
        let net = Routes::new(&t, &RoutingSpec::parse("min").unwrap()).unwrap();
        for routing in [Routing::First, Routing::DestinationDigits] {
            let routes = LinkRoutes::new(&t, routing).unwrap();
            assert!(!routes.is_tree());
            let n = t.num_endpoints() as u32;
            for (s, d) in [
                (0, n - 1),
                (1, n / 2),
                (n - 1, 0),
                (n / 3, 2 * n / 3),
                (2, 7),
            ] {
                let path = routes.route(s, d);
                let mut x = t.endpoint_router(s as usize);
                let rd = t.endpoint_router(d as usize);
                let (mut hops, mut v) = (0, d as usize);
                while x != rd {
                    let cands = net.min_ports(x, rd);
                    let j = match routing {
                        Routing::First => cands[0],
                        Routing::DestinationDigits => {
                            let c = cands[v % cands.len()];
                            v /= cands.len();
                            c
                        }
                    } as usize;
                    let (nbr, lk) = t.adjacency(x);
                    match routes.describe(path[1 + hops]) {
                        DirectedLink::Network { link, from, to } => {
                            assert_eq!((link, from, to), (lk[j], x as u32, nbr[j]), "{spec}");
                        }
                        other => panic!("{spec}: {other:?}"),
                    }
                    x = nbr[j] as usize;
                    hops += 1;
                }
                assert_eq!(path.len(), hops + 2, "{spec}");
            }
        }
    }
}

/// Section 6: the heuristic on a fat tree, a Slim Fly and an 8×8 torus under both routings:
/// complete, contention-free, at least the lower bound; the counts are golden (deterministic).
/// With `dmodk` the fat tree reaches |M| − 1 = 15, the bound of a machine's own link.
#[test]
fn general_topologies() {
    for (spec, routing, load, phases_golden) in [
        ("fattree:k=4,levels=3", Routing::DestinationDigits, 15, 15),
        ("slimfly:q=5", Routing::DestinationDigits, 208, 219),
        ("torus:dims=8x8", Routing::DestinationDigits, 95, 95),
        ("fattree:k=4,levels=3", Routing::First, 48, 48),
        ("slimfly:q=5", Routing::First, 208, 219),
        ("torus:dims=8x8", Routing::First, 180, 180),
    ] {
        let t = generate(spec).unwrap();
        let r = phases(&t, Method::Auto, routing).unwrap();
        assert_eq!((r.method, r.routing), (Method::Greedy, routing), "{spec}");
        assert!(r.checks.complete.ok, "{spec}: {:?}", r.checks.complete);
        assert!(
            r.checks.contention_free.ok,
            "{spec}: {:?}",
            r.checks.contention_free
        );
        assert!(r.num_phases() as u64 >= r.load, "{spec}");
        assert_eq!(
            (r.load, r.num_phases()),
            (load, phases_golden),
            "{spec} {routing:?}"
        );
    }
    assert_eq!(Routing::parse("first").unwrap(), Routing::First);
    assert_eq!(
        Routing::parse("ecmp").unwrap_err().to_string(),
        "unknown alltoall phase routing 'ecmp'; accepted: dmodk, first"
    );
}

/// The heuristic on a tree is valid but not always optimal; `auto` still picks Faraj–Yuan.
#[test]
fn trees_keep_the_optimal_construction() {
    let t = generate("tree:fig5c").unwrap();
    assert_eq!(
        phases(&t, Method::Auto, Routing::default())
            .unwrap()
            .num_phases(),
        256
    );
    let g = phases(&t, Method::Greedy, Routing::default()).unwrap();
    assert_eq!(g.method, Method::Greedy);
    assert!(g.checks.complete.ok && g.checks.contention_free.ok);
    assert!(g.num_phases() >= 256);
    // A 1-D mesh is a tree too (a chain of routers).
    let m = generate("mesh:dims=5,p=2").unwrap();
    let r = phases(&m, Method::Auto, Routing::default()).unwrap();
    assert_eq!(r.method, Method::FarajYuan);
    assert_eq!((r.num_phases(), r.load), (24, 24));
    assert!(r.checks.ok());
}

/// The checks fail on broken tables and name the first violation.
#[test]
fn checks_name_the_first_violation() {
    let t = generate("tree:fig1").unwrap();
    let routes = LinkRoutes::new(&t, Routing::default()).unwrap();
    let good: Vec<Vec<(u32, u32)>> = phases(&t, Method::Auto, Routing::default())
        .unwrap()
        .table
        .iter()
        .map(|p| p.to_vec())
        .collect();
    // A message dropped.
    let mut missing = good.clone();
    missing[8].pop();
    let v = complete(&PhaseTable::from_phases(6, &missing))
        .violation
        .unwrap();
    assert_eq!(v, Violation::Missing { message: (5, 4) });
    assert_eq!(v.to_string(), "message 5->4 is in no phase");
    // A message twice.
    let mut twice = good.clone();
    twice[8].push((0, 4));
    let v = complete(&PhaseTable::from_phases(6, &twice))
        .violation
        .unwrap();
    assert_eq!(
        v.to_string(),
        "message 0->4 is in phase 0 and again in phase 8"
    );
    // Self message and unknown machine.
    let v = complete(&PhaseTable::from_phases(6, &[vec![(2, 2)]]))
        .violation
        .unwrap();
    assert_eq!(v.to_string(), "phase 0: machine 2 sends to itself");
    let v = complete(&PhaseTable::from_phases(6, &[vec![(2, 6)]]))
        .violation
        .unwrap();
    assert_eq!(
        v.to_string(),
        "phase 0: message 2->6 names a machine outside 0..6"
    );
    // Two messages on s0->s1 in one phase: n0->n4 and n2->n3 (n2 is idle in phase 0).
    let mut clash = good.clone();
    clash[0].push((2, 3));
    let table = PhaseTable::from_phases(6, &clash);
    let r = contention_free(&table, &routes);
    assert!(!r.ok);
    match r.violation.unwrap() {
        Violation::Contention {
            phase,
            link,
            first,
            second,
            ..
        } => {
            assert_eq!((phase, first, second), (0, (0, 4), (2, 3)));
            assert_eq!(routes.name(&t, link), "s0->s1");
        }
        other => panic!("{other:?}"),
    }
    // Through `phases`' checks the link is named.
    let named = hypercuboid_core::collectives::alltoall::phases::check::run(
        &table,
        &routes,
        Some(9),
        |l| routes.name(&t, l),
    );
    assert_eq!(
        named.contention_free.violation.unwrap().to_string(),
        "phase 0: messages 0->4 and 2->3 share directed link 0 (s0->s1)"
    );
    // One phase too many.
    let mut longer = good.clone();
    longer.push(vec![]);
    let v = optimal(&PhaseTable::from_phases(6, &longer), 9)
        .violation
        .unwrap();
    assert_eq!(v.to_string(), "10 phases, and the lower bound is 9");
}

/// Bad input: one-line errors naming the value and what is accepted.
#[test]
fn bad_input() {
    let err = |t: &Topology, m: Method| phases(t, m, Routing::default()).unwrap_err().to_string();
    let torus = generate("torus:dims=8x8").unwrap();
    assert_eq!(
        err(&torus, Method::FarajYuan),
        "the Faraj-Yuan tree scheduler needs a tree of switches with machines as leaves, and \
         torus:dims=8x8,p=1 is not one: it has 64 routers and 128 links, and a tree has routers - 1 \
         links; use method auto or greedy"
    );
    let one = TreeDescription {
        name: "one".into(),
        switches: vec!["s0".into()],
        machines: vec!["n0".into()],
        links: vec![("n0".into(), "s0".into(), Default::default())],
    }
    .build()
    .unwrap();
    assert_eq!(
        err(&one, Method::Auto),
        "alltoall phases need at least 2 machines, and tree:one has 1"
    );
    assert_eq!(
        Method::parse("ring").unwrap_err().to_string(),
        "unknown alltoall phase method 'ring'; accepted: auto, faraj-yuan, greedy"
    );
    assert_eq!(Method::parse("tree").unwrap(), Method::FarajYuan);
    // A machine as an inner node is refused by the tree description.
    let inner = TreeDescription::from_json(
        r#"{"switches": ["s0"], "machines": ["n0", "n1", "n2"],
            "links": [["n0", "s0"], ["n1", "s0"], ["n1", "n2"]]}"#,
        "inner.json",
    )
    .unwrap()
    .build()
    .unwrap_err();
    assert_eq!(
        inner.to_string(),
        "not a tree: link n1-n2 joins two machines; a machine must hang off a switch"
    );
    let big = generate("fullmesh:n=2,p=600").unwrap();
    assert_eq!(
        err(&big, Method::Greedy),
        "alltoall phases (greedy): fullmesh:n=2,p=600 has 1200 machines, more than the limit \
         of 1024"
    );
    let e: PhaseError = phases(&big, Method::Greedy, Routing::default()).unwrap_err();
    assert!(e.accepted().is_empty());
}

/// Deterministic: the same table twice.
#[test]
fn deterministic() {
    let t = random_tree(40, 9, Shape::Random, 7).build().unwrap();
    assert_eq!(
        phases(&t, Method::Auto, Routing::default()).unwrap().table,
        phases(&t, Method::Auto, Routing::default()).unwrap().table
    );
    let s = generate("torus:dims=4x4").unwrap();
    assert_eq!(
        phases(&s, Method::Auto, Routing::default()).unwrap().table,
        phases(&s, Method::Auto, Routing::default()).unwrap().table
    );
}
