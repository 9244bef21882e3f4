//! The bisection repair and refinement: exact endpoint halves, whatever the start.

use hypercuboid_core::topology::{bisect, generate, refine_bisection, Topology};

/// Recounts the cut of a result from its sides.
fn recount(t: &Topology, side: &[bool], ep_side: &[bool]) -> (usize, usize, [usize; 2]) {
    let cut = t
        .links()
        .iter()
        .filter(|l| side[l.a as usize] != side[l.b as usize])
        .count();
    let ep_cut = (0..t.num_endpoints())
        .filter(|&e| ep_side[e] != side[t.endpoint_router(e)])
        .count();
    let mut n = [0, 0];
    for &s in ep_side {
        n[s as usize] += 1;
    }
    (cut, ep_cut, n)
}

#[test]
fn repairs_an_unbalanced_partition() {
    // The 27/23 router split METIS may return on the Slim Fly q = 5 (50 routers, 4 endpoints
    // each) becomes an exact 100/100 endpoint split.
    let t = generate("slimfly:q=5").unwrap();
    let start: Vec<bool> = (0..50).map(|r| r >= 27).collect();
    let b = refine_bisection(&t, &start).unwrap();
    assert_eq!(b.endpoints, [100, 100]);
    assert_eq!(b.routers, [25, 25]);
    assert_eq!(b.cut_endpoint_links, 0);
    let (cut, ep_cut, n) = recount(&t, &b.router_side, &b.endpoint_side);
    assert_eq!((cut, ep_cut, n), (b.cut_links, 0, [100, 100]));
    assert_eq!(b.cut_bandwidth_gbps, 100.0 * cut as f64);
    assert_eq!(b.per_endpoint, cut as f64 / 100.0);
    // Everything on one side is repaired too.
    let b = refine_bisection(&t, &[false; 50]).unwrap();
    assert_eq!(b.endpoints, [100, 100]);
}

#[test]
fn detaches_endpoints_when_routers_cannot_balance() {
    // PolarFly q = 7: 57 routers of 4 endpoints; 114 per side needs 28.5 routers, so two
    // endpoints sit apart from their router and their links are cut.
    let t = generate("polarfly:q=7").unwrap();
    let b = bisect(&t, 4, 1).unwrap();
    assert_eq!(b.endpoints, [114, 114]);
    assert_eq!(b.cut_endpoint_links, 2);
    let (cut, ep_cut, n) = recount(&t, &b.router_side, &b.endpoint_side);
    assert_eq!((cut, ep_cut, n), (b.cut_links, 2, [114, 114]));
    assert_eq!(b.per_endpoint, (cut + 2) as f64 / 114.0);
}

#[test]
fn odd_endpoint_count_splits_floor_ceil() {
    let t = generate("fullmesh:n=5").unwrap();
    let b = bisect(&t, 2, 0).unwrap();
    let mut e = b.endpoints;
    e.sort_unstable();
    assert_eq!(e, [2, 3]);
    assert_eq!(b.cut_links, 6); // K5 split 2/3
}

#[test]
fn full_bisection_fat_tree_has_one_link_per_endpoint() {
    for spec in ["fattree:k=8", "fattree:k=4,levels=3"] {
        let t = generate(spec).unwrap();
        let b = bisect(&t, 4, 0).unwrap();
        assert_eq!(b.per_endpoint, 1.0, "{spec}");
    }
}

#[test]
fn mlfm_column_split() {
    // MLFM h = 3: splitting the 4 LR positions 2/2 cuts 3 of the 6 links of each of the 4 GRs
    // joining the halves: 12 links. The refinement finds a cut at least as small.
    let t = generate("mlfm:h=3").unwrap();
    let b = bisect(&t, 8, 0).unwrap();
    assert_eq!(b.endpoints, [18, 18]);
    assert!(b.cut_links <= 12, "cut {}", b.cut_links);
}

#[test]
fn deterministic_for_a_seed() {
    let t = generate("oft:k=5").unwrap();
    assert_eq!(bisect(&t, 4, 7).unwrap(), bisect(&t, 4, 7).unwrap());
}

#[test]
fn bad_partitions_and_tiny_topologies() {
    let t = generate("fullmesh:n=3").unwrap();
    assert_eq!(
        refine_bisection(&t, &[true]).unwrap_err().to_string(),
        "cannot analyse: a partition of 1 routers for 3 routers"
    );
    let t = generate("tree:fig5a").unwrap();
    let b = refine_bisection(&t, &[false]).unwrap();
    assert_eq!((b.endpoints, b.cut_endpoint_links), ([12, 12], 12));
}
