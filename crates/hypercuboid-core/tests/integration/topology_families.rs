//! Every generated topology has its documented size, degrees and diameter (proptest over small
//! parameters), and its closed-form `size()` matches the built graph.

use hypercuboid_core::topology::dragonfly::Dragonfly;
use hypercuboid_core::topology::fattree::{FatTree, KaryNTree};
use hypercuboid_core::topology::fullmesh::FullMesh;
use hypercuboid_core::topology::galois::prime_power;
use hypercuboid_core::topology::hyperx::HyperX;
use hypercuboid_core::topology::mlfm::Mlfm;
use hypercuboid_core::topology::oft::Oft;
use hypercuboid_core::topology::polarfly::PolarFly;
use hypercuboid_core::topology::slimfly::{Concentration, SlimFly};
use hypercuboid_core::topology::torus::Torus;
use hypercuboid_core::topology::{analyze, generate, Size, Topology};
use proptest::prelude::*;

/// Built graph agrees with the closed form; links join distinct routers; no parallel links;
/// endpoints of a router are consecutive and routers carry them in router order.
fn check_size(t: &Topology, s: Size) {
    assert_eq!(t.num_routers() as u64, s.routers, "{}", t.name());
    assert_eq!(t.num_endpoints() as u64, s.endpoints, "{}", t.name());
    assert_eq!(t.num_links() as u64, s.links, "{}", t.name());
    let a = analyze(t);
    assert_eq!(a.router_radix as u32, s.router_radix, "{}", t.name());
    assert_eq!(a.network_radix as u32, s.network_radix, "{}", t.name());
    assert!(!t.has_parallel_links(), "{}", t.name());
    let routers = t.endpoint_routers();
    assert!(
        routers.windows(2).all(|w| w[0] <= w[1]),
        "{}: endpoint order",
        t.name()
    );
    assert!(a.connected, "{}", t.name());
}

fn degrees(t: &Topology) -> Vec<usize> {
    (0..t.num_routers()).map(|r| t.network_degree(r)).collect()
}

fn slimfly_qs() -> Vec<u32> {
    (3..=17)
        .filter(|&q| prime_power(q as u64).is_some())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn slimfly_is_mms(i in 0usize..9, floor in any::<bool>()) {
        let q = slimfly_qs()[i];
        let sf = SlimFly { p: if floor { Concentration::Floor } else { Concentration::Ceil }, ..SlimFly::new(q) };
        let t = sf.build().unwrap();
        check_size(&t, sf.size().unwrap());
        let delta = match q % 4 { 1 => 1i64, 0 => 0, _ => -1 };
        let rn = ((3 * q as i64 - delta) / 2) as usize;
        prop_assert_eq!(t.num_routers() as u32, 2 * q * q);
        prop_assert!(degrees(&t).iter().all(|&d| d == rn), "q={} degree {}", q, rn);
        let p = if floor { rn / 2 } else { rn.div_ceil(2) };
        prop_assert_eq!(t.num_endpoints(), p * 2 * (q * q) as usize);
        prop_assert_eq!(analyze(&t).diameter, Some(2));
    }

    #[test]
    fn polarfly_is_er_q(q in prop::sample::select(vec![2u32, 3, 4, 5, 7, 8, 9, 11])) {
        let pf = PolarFly::new(q);
        let t = pf.build().unwrap();
        check_size(&t, pf.size().unwrap());
        prop_assert_eq!(t.num_routers() as u32, q * q + q + 1);
        let d = degrees(&t);
        // q + 1 absolute (quadric) points of degree q, the others q + 1.
        let quadric = (0..t.num_routers()).filter(|&r| t.router_kind_name(r) == "quadric").count();
        prop_assert_eq!(quadric as u32, q + 1);
        for (r, &dr) in d.iter().enumerate() {
            let want = if t.router_kind_name(r) == "quadric" { q } else { q + 1 };
            prop_assert_eq!(dr as u32, want);
        }
        prop_assert_eq!(analyze(&t).diameter, Some(2));
    }

    #[test]
    fn mlfm_has_h_l_p(h in 2u32..9, l in 1u32..6, p in 1u32..6) {
        let m = Mlfm { h, l, p, ..Mlfm::new(h) };
        let t = m.build().unwrap();
        check_size(&t, m.size().unwrap());
        let lr = (l * (h + 1)) as usize;
        prop_assert_eq!(t.num_routers(), lr + (h * (h + 1) / 2) as usize);
        for (r, &d) in degrees(&t).iter().enumerate() {
            let (want_d, want_e) = if r < lr { (h, p) } else { (2 * l, 0) };
            prop_assert_eq!(d as u32, want_d);
            prop_assert_eq!(t.router_endpoints(r).len() as u32, want_e);
        }
        let a = analyze(&t);
        prop_assert_eq!(a.diameter, Some(2));
        // Seed section 2.3.3: h minimal paths between LRs of one column, 1 otherwise.
        let by2 = a.paths.by_distance.iter().find(|b| b.distance == 2).unwrap();
        prop_assert_eq!(by2.max_paths, if l > 1 { h as u64 } else { 1 });
    }

    #[test]
    fn oft_is_two_stacked_single_path_trees(k in prop::sample::select(vec![3u32, 4, 5, 6, 8, 9, 10, 12])) {
        let o = Oft::new(k);
        let t = o.build().unwrap();
        check_size(&t, o.size().unwrap());
        let rl = (k * k - k + 1) as usize;
        for (r, &d) in degrees(&t).iter().enumerate() {
            let mid = (rl..2 * rl).contains(&r);
            prop_assert_eq!(d as u32, if mid { 2 * k } else { k });
            prop_assert_eq!(t.router_endpoints(r).len() as u32, if mid { 0 } else { k });
        }
        let a = analyze(&t);
        prop_assert_eq!(a.diameter, Some(2));
        prop_assert_eq!(a.router_diameter, Some(3));
        // Seed section 2.3.3: one minimal path between L0/L2 routers, except k between
        // counterparts (0, i) and (2, i).
        let hist = &a.paths.histogram;
        prop_assert_eq!(hist.len(), 2);
        prop_assert_eq!(hist[1], (k as u64, rl as u64));
    }

    #[test]
    fn hyperx_is_product_of_full_meshes(s in prop::collection::vec(2u32..6, 1..4), p in 1u32..4) {
        let h = HyperX { p, ..HyperX::new(&s) };
        let t = h.build().unwrap();
        check_size(&t, h.size().unwrap());
        let rn: u32 = s.iter().map(|x| x - 1).sum();
        prop_assert!(degrees(&t).iter().all(|&d| d as u32 == rn));
        prop_assert_eq!(analyze(&t).diameter, Some(s.len() as u32));
    }

    #[test]
    fn fat_tree_is_full_bisection(half in 1u32..5, levels in 2u32..4) {
        let k = 2 * half;
        let f = FatTree::new(k, levels);
        let t = f.build().unwrap();
        check_size(&t, f.size().unwrap());
        prop_assert_eq!(t.num_endpoints() as u32, 2 * half.pow(levels));
        for r in 0..t.num_routers() {
            let ports = t.router_degree(r) as u32;
            prop_assert_eq!(ports, k, "every port used");
        }
        let a = analyze(&t);
        prop_assert_eq!(a.diameter, Some(2 * (levels - 1)));
        // Full bisection: as many uplinks above every leaf as endpoints below.
        for r in 0..t.num_routers() {
            if t.router_kind(r) == 0 {
                prop_assert_eq!(t.network_degree(r), t.router_endpoints(r).len());
            }
        }
    }

    #[test]
    fn kary_n_tree(k in 2u32..5, n in 1u32..4) {
        let f = KaryNTree::new(k, n);
        let t = f.build().unwrap();
        check_size(&t, f.size().unwrap());
        prop_assert_eq!(t.num_endpoints() as u32, k.pow(n));
        prop_assert_eq!(t.num_routers() as u32, n * k.pow(n - 1));
        prop_assert_eq!(analyze(&t).diameter, Some(2 * (n - 1)));
    }

    #[test]
    fn dragonfly_balanced(p in 1u32..4) {
        let d = Dragonfly::balanced(p);
        let t = d.build().unwrap();
        check_size(&t, d.size().unwrap());
        prop_assert_eq!(t.num_routers() as u32, 2 * p * (2 * p * p + 1));
        prop_assert!(degrees(&t).iter().all(|&x| x as u32 == 2 * p - 1 + p));
        prop_assert_eq!(analyze(&t).diameter, Some(3));
    }

    #[test]
    fn dragonfly_fewer_groups(a in 2u32..5, h in 1u32..3, g in 2u32..6) {
        prop_assume!(g <= a * h + 1);
        let d = Dragonfly { a, p: 1, h, g, link: Default::default() };
        let t = d.build().unwrap();
        check_size(&t, d.size().unwrap());
        prop_assert!(analyze(&t).diameter.unwrap() <= 3);
    }

    #[test]
    fn torus_and_mesh(s in prop::collection::vec(1u32..6, 1..4), wrap in any::<bool>()) {
        prop_assume!(s.iter().product::<u32>() >= 2);
        let tt = if wrap { Torus::wrapped(&s) } else { Torus::mesh(&s) };
        let t = tt.build().unwrap();
        check_size(&t, tt.size().unwrap());
        let diam: u32 = s.iter().map(|&x| if wrap { x / 2 } else { x - 1 }).sum();
        prop_assert_eq!(analyze(&t).diameter, Some(diam));
        if wrap {
            let deg: u32 = s.iter().map(|&x| match x { 1 => 0, 2 => 1, _ => 2 }).sum();
            prop_assert!(degrees(&t).iter().all(|&d| d as u32 == deg));
        }
    }

    #[test]
    fn full_mesh(n in 2u32..12, p in 1u32..4) {
        let f = FullMesh { p, ..FullMesh::new(n) };
        let t = f.build().unwrap();
        check_size(&t, f.size().unwrap());
        prop_assert_eq!(analyze(&t).diameter, Some(1));
    }
}

#[test]
fn slim_fly_every_prime_power_up_to_32_has_diameter_two() {
    // Includes q = 4, 8, 9, 16, 25, 27, 32, which need GF(p^m) arithmetic.
    for q in (3..=32).filter(|&q| prime_power(q as u64).is_some()) {
        let t = SlimFly::new(q).build().unwrap();
        let a = analyze(&t);
        assert_eq!(a.diameter, Some(2), "q={q}");
        assert!(a.paths.by_distance.iter().all(|b| b.distance <= 2));
    }
}

#[test]
fn oft_every_prime_power_order_is_a_projective_plane() {
    // k - 1 in {2, 3, 4, 5, 7, 8, 9, 11, 13, 16}: two L0 rows share exactly one L1 router, and
    // two L1 routers share exactly one L0 row.
    for k in [3u32, 4, 5, 6, 8, 9, 10, 12, 14, 17] {
        let table = hypercuboid_core::topology::oft::ml3b(k).unwrap();
        let rl = (k * k - k + 1) as usize;
        assert_eq!(table.len(), rl);
        let sets: Vec<std::collections::HashSet<u32>> =
            table.iter().map(|r| r.iter().copied().collect()).collect();
        for s in &sets {
            assert_eq!(s.len(), k as usize, "k={k}: a row repeats an L1 router");
            assert!(s.iter().all(|&j| (j as usize) < rl));
        }
        for i in 0..rl {
            for j in i + 1..rl {
                assert_eq!(
                    sets[i].intersection(&sets[j]).count(),
                    1,
                    "k={k} rows {i},{j}"
                );
            }
        }
        let mut cols = vec![Vec::new(); rl];
        for (i, row) in table.iter().enumerate() {
            for &j in row {
                cols[j as usize].push(i);
            }
        }
        for c in &cols {
            assert_eq!(c.len(), k as usize);
        }
    }
}

#[test]
fn spec_names_are_canonical() {
    for (spec, name) in [
        ("slimfly:q=13", "slimfly:q=13,p=10"),
        ("slimfly:q=13,p=floor", "slimfly:q=13,p=9"),
        ("mlfm:h=15", "mlfm:h=15,l=15,p=15"),
        ("oft:k=12", "oft:k=12,p=12"),
        ("hyperx:s=8x8,p=6", "hyperx:s=8x8,p=6"),
        ("fattree:k=8,levels=3", "fattree:k=8,levels=3"),
        ("dragonfly:p=2", "dragonfly:a=4,p=2,h=2,g=9"),
        (
            "torus:dims=4x4,bw=200,lat=1us",
            "torus:dims=4x4,p=1,bw=200,lat=1000ns",
        ),
    ] {
        assert_eq!(generate(spec).unwrap().name(), name, "{spec}");
    }
    // A canonical name generates the same topology.
    for s in [
        "slimfly:q=9",
        "polarfly:q=5",
        "mlfm:h=3,l=2,p=4",
        "karyntree:k=3,n=3",
        "mesh:dims=3x2",
    ] {
        let t = generate(s).unwrap();
        assert_eq!(generate(t.name()).unwrap(), t);
    }
}

#[test]
fn link_parameters_apply_to_every_link() {
    let t = generate("fullmesh:n=4,p=2,bw=25,lat=1.5us").unwrap();
    assert!(t
        .links()
        .iter()
        .all(|l| l.bandwidth_gbps == 25.0 && l.latency == 1_500_000));
    for e in 0..t.num_endpoints() {
        assert_eq!(t.endpoint_link(e).bandwidth_gbps, 25.0);
        assert_eq!(t.endpoint_link(e).latency, 1_500_000);
    }
    assert_eq!(t.links()[0].params().ps_per_byte(), 320.0); // 25 Gb/s = 3.125 B/ns
}
