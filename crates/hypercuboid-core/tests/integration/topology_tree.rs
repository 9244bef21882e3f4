//! Ethernet switched trees (alltoall seed, Faraj and Yuan, sections 3, 4.1 and 6): presets,
//! AAPC loads and bottlenecks, the root, and the rejection of descriptions that are not trees.

use hypercuboid_core::topology::tree::{analyze_tree, TreeDescription, TreeEdge};
use hypercuboid_core::topology::{analyze, generate, TopologyError};

/// Figure 1 / section 4.2: the root s1 has subtrees t0 = t_s0 (3 machines), t1 = t_s3 (2) and
/// t2 = t_n5 (1); the load of AAPC is |M0|·(|M| − |M0|) = 3·3 = 9 (Table 4 has 9 phases).
#[test]
fn figure_1() {
    let t = generate("tree:fig1").unwrap();
    assert_eq!((t.num_routers(), t.num_endpoints()), (3, 6));
    // path(n0, n3) = n0 s0 s1 s3 n3: 2 router hops between s0 and s3.
    let d = hypercuboid_core::topology::router_distances(&t).unwrap();
    assert_eq!(d.get(0, 2), Some(2));
    let a = analyze_tree(&t).unwrap();
    assert_eq!(a.bottleneck_name, "s0-s1");
    assert_eq!((a.m_u, a.m_v, a.load), (3, 3, 9));
    assert_eq!(a.root_name, "s1");
    let subs: Vec<(&str, usize)> = a
        .subtrees
        .iter()
        .map(|s| (s.top.as_str(), s.machines))
        .collect();
    assert_eq!(subs, [("s0", 3), ("s3", 2), ("n5", 1)]);
    // Loads of the two switch links: s0-s1 3·3, s1-s3 2·4; machine links 5.
    assert_eq!(a.link_loads, [9, 8]);
    assert_eq!(a.endpoint_load, 5);
    // Peak aggregate throughput |M|(|M|-1)B/(|Mu||Mv|) = 30·0.1/9 Gb/s (section 3).
    assert!((a.peak_throughput_gbps - 30.0 * 0.1 / 9.0).abs() < 1e-12);
}

/// Section 6, Figure 5: (a) 24 machines on one switch, (b) four switches of 8 machines as a
/// star, (c) the same as a chain.
#[test]
fn figure_5() {
    let a = analyze(&generate("tree:fig5a").unwrap()).tree.unwrap();
    assert_eq!((a.load, a.m_u, a.m_v), (23, 23, 1));
    assert!(matches!(a.bottleneck, TreeEdge::Endpoint(0)));
    assert_eq!(a.root_name, "s0");
    assert_eq!(a.subtrees.len(), 24);
    let a = analyze(&generate("tree:fig5b").unwrap()).tree.unwrap();
    assert_eq!((a.load, a.m_u, a.m_v), (192, 24, 8));
    assert_eq!(a.root_name, "s0");
    assert_eq!(
        a.subtrees[..3]
            .iter()
            .map(|s| s.machines)
            .collect::<Vec<_>>(),
        [8, 8, 8]
    );
    let a = analyze(&generate("tree:fig5c").unwrap()).tree.unwrap();
    assert_eq!((a.load, a.m_u, a.m_v), (256, 16, 16));
    assert_eq!(a.bottleneck_name, "s1-s2");
    // Lemma 1: every subtree of the root holds at most |M|/2 machines.
    assert!(a.subtrees.iter().all(|s| s.machines <= 16));
    for name in ["fig1", "fig5a", "fig5b", "fig5c"] {
        let t = generate(&format!("tree:{name}")).unwrap();
        assert!(
            t.links().iter().all(|l| l.bandwidth_gbps == 0.1),
            "100 Mb/s Ethernet"
        );
    }
}

#[test]
fn bw_and_lat_replace_every_link_of_a_tree() {
    let t = generate("tree:fig5b,bw=1Gbps,lat=2us").unwrap();
    assert!(t.num_links() > 0);
    for l in t.links() {
        assert_eq!((l.bandwidth_gbps, l.latency), (1.0, 2_000_000), "{l:?}");
    }
    for e in 0..t.num_endpoints() {
        let p = t.endpoint_link(e);
        assert_eq!((p.bandwidth_gbps, p.latency), (1.0, 2_000_000));
    }
    // Without them, the preset's own 100 Mb/s links.
    let plain = generate("tree:fig5b").unwrap();
    assert!(plain.links().iter().all(|l| l.bandwidth_gbps == 0.1));
}

#[test]
fn non_trees_have_no_tree_analysis() {
    assert!(analyze(&generate("slimfly:q=3").unwrap()).tree.is_none());
    // A k-ary 1-tree is a single switch: a tree.
    assert_eq!(
        analyze(&generate("karyntree:k=4,n=1").unwrap())
            .tree
            .unwrap()
            .load,
        3
    );
}

#[test]
fn description_round_trips_and_reads_overrides() {
    for name in ["fig1", "fig5a", "fig5b", "fig5c"] {
        let d = TreeDescription::preset(name).unwrap();
        let back = TreeDescription::from_json(&d.to_json(), "x").unwrap();
        assert_eq!(back, d);
        assert_eq!(back.build().unwrap(), d.build().unwrap());
    }
    let text = r#"{"name": "two", "bandwidth_gbps": 1, "latency": "2us",
        "switches": ["a", "b"], "machines": ["m0", "m1", "m2"],
        "links": [["m0", "a"], ["m1", "a"], {"a": "a", "b": "b", "bandwidth_gbps": 10, "latency": 100},
                  ["b", "m2"]]}"#;
    let t = TreeDescription::from_json(text, "x")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(t.name(), "tree:two");
    assert_eq!(t.endpoint_routers(), [0, 0, 1]);
    assert_eq!(
        (t.links()[0].bandwidth_gbps, t.links()[0].latency),
        (10.0, 100_000)
    );
    assert_eq!(t.endpoint_link(2).latency, 2_000_000);
    assert_eq!(t.endpoint_name(2), Some("m2"));
}

fn tree_err(text: &str) -> String {
    TreeDescription::from_json(text, "t.json")
        .and_then(|d| d.build())
        .unwrap_err()
        .to_string()
}

#[test]
fn rejects_what_is_not_a_tree() {
    assert_eq!(
        tree_err(
            r#"{"switches":["s0","s1","s2"],"machines":["n0","n1"],"links":[["n0","s0"],["n1","s1"],["s0","s1"],["s1","s2"],["s2","s0"]]}"#
        ),
        "not a tree: link s2-s0 closes a loop s0 - s1 - s2 - s0"
    );
    assert_eq!(
        tree_err(
            r#"{"switches":["s0","s1"],"machines":["n0","n1"],"links":[["n0","s0"],["n0","s1"],["n1","s1"]]}"#
        ),
        "not a tree: machine 'n0' is not a leaf: it has 2 links (to s0, s1)"
    );
    assert_eq!(
        tree_err(r#"{"switches":["s0"],"machines":["n0","n1"],"links":[["n0","n1"],["n1","s0"]]}"#),
        "not a tree: link n0-n1 joins two machines; a machine must hang off a switch"
    );
    assert_eq!(
        tree_err(
            r#"{"switches":["s0","s1"],"machines":["n0","n1","n2"],"links":[["n0","s0"],["n1","s1"],["n2","s1"]]}"#
        ),
        "not a tree: disconnected: s1, n1, n2 cannot reach switch 's0'"
    );
    assert_eq!(
        tree_err(r#"{"switches":["s0"],"machines":["n0","n1"],"links":[["n0","s0"]]}"#),
        "not a tree: machine 'n1' has no link"
    );
    let e = TreeDescription::from_json(
        r#"{"switches":["s0","s1"],"machines":["n0"],"links":[["n0","s0"],["s0","s1"],["s1","s0"]]}"#,
        "t.json",
    )
    .and_then(|d| d.build())
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot read t.json: link s1-s0 is listed twice"
    );
    assert!(matches!(e, TopologyError::Parse { .. }));
}

#[test]
fn rejects_malformed_descriptions() {
    for (text, msg) in [
        (r#"{"switches":["s0"],"machines":["n0","s0"],"links":[]}"#, "name 's0' is used twice"),
        (r#"{"switches":["s0"],"machines":["n0"],"links":[["n0","x"]]}"#, "link 0 names 'x', which is neither a switch nor a machine"),
        (r#"{"switches":["s0"],"machines":["n0"],"links":[["n0"]]}"#, r#"link 0: expected [a, b] or {"a": .., "b": ..}, got ["n0"]"#),
        (r#"{"switches":["s0"],"machines":["n0"],"links":[["n0","s0"]],"colour":1}"#, "unknown key 'colour'; accepted: name, bandwidth_gbps, latency, switches, machines, links"),
        (r#"{"switches":["s0"],"machines":[],"links":[]}"#, "no machines"),
        (r#"[1,2]"#, "expected a JSON object with switches, machines and links"),
        (r#"{"switches":["s0"]"#, "EOF while parsing an object at line 1 column 18"),
        (r#"{"switches":["s0"],"machines":["n0"],"links":[{"a":"n0","b":"s0","latency":"5 parsecs"}]}"#,
         "link 0: invalid time '5 parsecs': unknown unit 'parsecs'; accepted units are ps, ns, us, ms, s (a bare number is ns)"),
    ] {
        assert_eq!(tree_err(text), format!("cannot read t.json: {msg}"));
    }
}
