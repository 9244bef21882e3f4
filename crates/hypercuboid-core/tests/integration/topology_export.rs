//! JSON round trip, BookSim2 anynet, GraphML, dot and edge lists.

use hypercuboid_core::topology::export::{
    from_edge_list, from_json, to_anynet, to_dot, to_graphml, to_json,
};
use hypercuboid_core::topology::{generate, LinkParams};

const SPECS: [&str; 14] = [
    "slimfly:q=5",
    "slimfly:q=4,p=2",
    "polarfly:q=3",
    "mlfm:h=3",
    "oft:k=3",
    "hyperx:s=3x4,p=2",
    "fattree:k=4,levels=3",
    "karyntree:k=2,n=3",
    "dragonfly:p=1",
    "torus:dims=3x3,bw=25,lat=1.5ns",
    "mesh:dims=2x3",
    "fullmesh:n=4",
    "tree:fig1",
    "tree:fig5c",
];

#[test]
fn json_round_trips_exactly() {
    for spec in SPECS {
        let t = generate(spec).unwrap();
        let text = to_json(&t);
        let back = from_json(&text, "x").unwrap();
        assert_eq!(back, t, "{spec}");
        assert_eq!(to_json(&back), text, "{spec}");
    }
}

#[test]
fn json_schema_fields() {
    let text = to_json(&generate("tree:fig1").unwrap());
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["format"], "hypercuboid-topology");
    assert_eq!(v["version"], 1);
    assert_eq!(v["name"], "tree:fig1");
    assert_eq!(v["params"], serde_json::json!([["name", "fig1"]]));
    assert_eq!(
        v["routers"][1],
        serde_json::json!({"kind": "switch", "coords": [], "name": "s1"})
    );
    assert_eq!(v["endpoints"][5], serde_json::json!([1, 0.1, 50000]));
    assert_eq!(v["endpoint_names"][5], "n5");
    assert_eq!(v["links"][0], serde_json::json!([0, 1, 0.1, 50000]));
}

#[test]
fn anynet_lists_every_router_with_its_nodes_and_neighbours() {
    let t = generate("tree:fig1").unwrap();
    assert_eq!(
        to_anynet(&t, None).unwrap(),
        "router 0 node 0 node 1 node 2 router 1\n\
         router 1 node 5 router 0 router 2\n\
         router 2 node 3 node 4 router 1\n"
    );
    // Latencies in cycles: 50 ns links at a 10 ns cycle are 5 cycles.
    let t = generate("fullmesh:n=2,p=1").unwrap();
    assert_eq!(
        to_anynet(&t, Some(10_000)).unwrap(),
        "router 0 node 0 router 1 5\nrouter 1 node 1 router 0 5\n"
    );
    // Every SF router line has p nodes and r' routers; every link appears on both lines.
    let t = generate("slimfly:q=5").unwrap();
    let text = to_anynet(&t, None).unwrap();
    assert_eq!(text.lines().count(), 50);
    for line in text.lines() {
        assert_eq!(line.matches(" node ").count(), 4);
        assert_eq!(line.matches(" router ").count(), 7);
    }
}

#[test]
fn anynet_refuses_parallel_links() {
    let t = from_edge_list("a b\na b\n", "x", 1, LinkParams::default()).unwrap();
    assert!(t.has_parallel_links());
    assert_eq!(
        to_anynet(&t, None).unwrap_err().to_string(),
        "cannot export to anynet: the topology has parallel links between a pair of routers; \
         BookSim's anynet keeps one link per pair"
    );
}

#[test]
fn graphml_and_dot() {
    let t = generate("oft:k=3").unwrap();
    let g = to_graphml(&t);
    assert!(g.starts_with("<?xml"));
    assert_eq!(g.matches("<node id=\"r").count(), t.num_routers());
    assert_eq!(g.matches("<node id=\"e").count(), t.num_endpoints());
    assert_eq!(
        g.matches("<edge ").count(),
        t.num_links() + t.num_endpoints()
    );
    assert!(g.contains("<data key=\"params\">k=3,p=3</data>"));
    assert!(g.contains("<node id=\"r7\"><data key=\"type\">router</data><data key=\"kind\">L1</data><data key=\"coords\">1,0</data></node>"));
    let d = to_dot(&t, false);
    assert!(d.starts_with("graph \"oft:k=3,p=3\" {"));
    assert_eq!(d.matches(" -- ").count(), t.num_links());
    assert_eq!(
        to_dot(&t, true).matches(" -- ").count(),
        t.num_links() + t.num_endpoints()
    );
    // Names are escaped.
    let t = from_edge_list("<a> b&c\n", "x", 0, LinkParams::default()).unwrap();
    assert!(to_graphml(&t).contains("&lt;a&gt;"));
}

#[test]
fn edge_list() {
    let text = "# ring\nx y\ny z 50 1us\nz x\nlonely\n";
    let t = from_edge_list(text, "ring.txt", 2, LinkParams::default()).unwrap();
    assert_eq!(
        (t.num_routers(), t.num_links(), t.num_endpoints()),
        (4, 3, 8)
    );
    assert_eq!(t.router_name(3), Some("lonely"));
    assert_eq!(
        (t.links()[1].bandwidth_gbps, t.links()[1].latency),
        (50.0, 1_000_000)
    );
    assert_eq!(t.name(), "edgelist:ring.txt");
}
