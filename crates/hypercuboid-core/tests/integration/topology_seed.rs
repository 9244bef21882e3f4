//! The numbers of the diameter-two seed (Kathareios et al., SC15, "Cost-effective diameter-two
//! topologies: analysis and evaluation"), reproduced by the generators and the analysis.

use hypercuboid_core::topology::compare::largest_within_radix;
use hypercuboid_core::topology::oft::ml3b;
use hypercuboid_core::topology::{analyze, generate};

/// Seed section 4.1: the simulated configurations.
#[test]
fn section_4_1_configurations() {
    for (spec, n, r, radix) in [
        ("slimfly:q=13,p=9", 3042, 338, 28),
        ("slimfly:q=13,p=10", 3380, 338, 29),
        ("slimfly:q=13,p=floor", 3042, 338, 28),
        ("slimfly:q=13,p=ceil", 3380, 338, 29),
        ("mlfm:h=15", 3600, 360, 30),
        ("oft:k=12", 3192, 399, 24),
    ] {
        let a = analyze(&generate(spec).unwrap());
        assert_eq!(
            (a.endpoints, a.routers, a.router_radix),
            (n, r, radix),
            "{spec}"
        );
        assert_eq!(a.diameter, Some(2), "{spec}");
    }
}

/// Seed section 2.1.2: q = 13 costs 3.11 ports and 2.05 links per endpoint with p = 9, 2.9 and
/// 1.95 with p = 10. Total router ports / N and (router links + endpoint links) / N reproduce
/// them exactly: 9464/3042 = 3.1111, 6253/3042 = 2.0556 (the seed truncates to 2.05),
/// 9802/3380 = 2.9000, 6591/3380 = 1.9500.
#[test]
fn section_2_1_2_cost_per_endpoint() {
    let a = analyze(&generate("slimfly:q=13,p=9").unwrap());
    assert_eq!(a.network_radix, 19); // r' = (3q - δ)/2 = (39 - 1)/2
    assert_eq!((a.total_ports, a.total_links), (9464, 6253));
    assert_eq!((a.ports_per_endpoint * 100.0).floor() / 100.0, 3.11);
    assert_eq!((a.links_per_endpoint * 100.0).floor() / 100.0, 2.05);
    let a = analyze(&generate("slimfly:q=13,p=10").unwrap());
    assert_eq!((a.total_ports, a.total_links), (9802, 6591));
    assert!((a.ports_per_endpoint - 2.9).abs() < 1e-12);
    assert!((a.links_per_endpoint - 1.95).abs() < 1e-12);
    // The SSPTs cost exactly 3 ports and 2 links per endpoint (sections 2.2.2-2.2.4).
    for spec in [
        "mlfm:h=15",
        "oft:k=12",
        "hyperx:s=22x22,p=21",
        "fattree:k=64",
    ] {
        let a = analyze(&generate(spec).unwrap());
        assert_eq!(
            (a.ports_per_endpoint, a.links_per_endpoint),
            (3.0, 2.0),
            "{spec}"
        );
    }
}

/// Seed Table 2: the 4-ML3B built by the MOLS procedure of section 2.2.4.
#[test]
fn table_2_four_ml3b() {
    // The table's 13 rows, a line per first entry.
    #[rustfmt::skip]
    let want: Vec<Vec<u32>> = [
        [9, 10, 11, 12], [9, 0, 1, 2], [9, 3, 4, 5], [9, 6, 7, 8],
        [10, 0, 3, 6], [10, 1, 4, 7], [10, 2, 5, 8],
        [11, 0, 4, 8], [11, 1, 5, 6], [11, 2, 3, 7],
        [12, 0, 5, 7], [12, 1, 3, 8], [12, 2, 4, 6],
    ]
    .iter()
    .map(|row| row.to_vec())
    .collect();
    assert_eq!(ml3b(4).unwrap(), want);
    // The 4-OFT links L0 router i to exactly the L1 routers of row i.
    let t = generate("oft:k=4").unwrap();
    for (i, row) in want.iter().enumerate() {
        let mut n: Vec<u32> = t.neighbors(i).iter().map(|&x| x - 13).collect();
        n.sort_unstable();
        let mut r = row.clone();
        r.sort_unstable();
        assert_eq!(n, r);
    }
}

/// Seed section 2.3.1: at router radix 64 the OFT reaches ≈63.5K endpoints (k = 32:
/// 2k³ − 2k² + 2k = 63,552) and the MLFM h = 32 has h³ + h² = 33,792 (the seed's "34-36K");
/// the largest Slim Fly within radix 64 is q = 29 with p = ⌊r'/2⌋ = 21: 35,322 endpoints.
#[test]
fn section_2_3_1_radix_64() {
    let rows = largest_within_radix(64);
    let get = |label: &str| rows.iter().find(|r| r.label == label).unwrap();
    assert_eq!(get("OFT").spec, "oft:k=32");
    assert_eq!(get("OFT").size.endpoints, 63_552);
    assert_eq!(get("MLFM").spec, "mlfm:h=32");
    assert_eq!(get("MLFM").size.endpoints, 33_792);
    assert_eq!(get("Slim Fly (p=floor)").spec, "slimfly:q=29,p=21");
    assert_eq!(get("Slim Fly (p=floor)").size.endpoints, 35_322);
    assert_eq!(get("Slim Fly (p=ceil)").spec, "slimfly:q=27,p=21");
    assert_eq!(get("Slim Fly (p=ceil)").size.endpoints, 30_618);
    assert_eq!(get("2-level fat tree").size.endpoints, 2048); // r²/2, section 2.2.1
    assert_eq!(get("3-level fat tree").size.endpoints, 65_536);
    assert_eq!(get("2D HyperX").size.endpoints, 21 * 22 * 22); // (r/3)(r/3 + 1)², 2.1.1
                                                               // The closed forms are those of the built graphs, all of diameter two and radix 64.
    for label in ["OFT", "MLFM", "Slim Fly (p=floor)"] {
        let row = get(label);
        let a = analyze(&generate(&row.spec).unwrap());
        assert_eq!(a.endpoints as u64, row.size.endpoints, "{label}");
        assert_eq!(a.routers as u64, row.size.routers, "{label}");
        assert_eq!(a.router_radix, 64, "{label}");
        assert_eq!(a.diameter, Some(2), "{label}");
    }
}

/// Seed section 2.3.3: in the Slim Fly q = 23 the average number of minimal paths between
/// routers that are not directly connected is ≈ 1.1, the maximum 8; adjacent routers have one.
#[test]
fn section_2_3_3_slim_fly_path_diversity() {
    let a = analyze(&generate("slimfly:q=23").unwrap());
    let d1 = &a.paths.by_distance[0];
    assert_eq!((d1.distance, d1.mean_paths, d1.max_paths), (1, 1.0, 1));
    let d2 = &a.paths.by_distance[1];
    assert_eq!(d2.distance, 2);
    assert_eq!((d2.mean_paths * 10.0).round() / 10.0, 1.1);
    assert_eq!(d2.max_paths, 8);
}

/// Seed section 2.1.2: the Slim Fly approaches the Moore bound (k² + 1 for diameter 2); for
/// q = 5 the MMS graph is the Hoffman–Singleton graph, a Moore graph.
#[test]
fn moore_bound() {
    let a = analyze(&generate("slimfly:q=5").unwrap());
    let m = a.moore.unwrap();
    assert_eq!((m.degree, m.diameter, m.bound, m.fraction), (7, 2, 50, 1.0));
    let m = analyze(&generate("slimfly:q=13").unwrap()).moore.unwrap();
    assert_eq!(m.bound, 19 * 19 + 1);
    // Indirect topologies have no Moore bound.
    assert!(analyze(&generate("oft:k=4").unwrap()).moore.is_none());
    // Full mesh of n routers: diameter 1, bound 1 + (n - 1) = n.
    let m = analyze(&generate("fullmesh:n=6").unwrap()).moore.unwrap();
    assert_eq!((m.bound, m.fraction), (6, 1.0));
}
