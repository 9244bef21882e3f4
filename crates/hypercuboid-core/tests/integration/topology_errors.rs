//! Every bad spec or parameter errors with a message naming the bad value and the accepted ones.

use hypercuboid_core::topology::{generate, TopologyError};

fn err(spec: &str) -> String {
    generate(spec).unwrap_err().to_string()
}

#[test]
fn slim_fly_q_must_be_a_prime_power_4w_plus_delta() {
    let accepted = "q must be a prime power 4w+δ with w ≥ 1 and δ ∈ {-1, 0, 1} \
                    (3, 4, 5, 7, 8, 9, 11, 13, 16, ...)";
    assert_eq!(
        err("slimfly:q=6"),
        format!(
            "slimfly: invalid q=6: not a prime power; {accepted}; the nearest valid q is 5 or 7"
        )
    );
    assert_eq!(
        err("slimfly:q=12"),
        format!(
            "slimfly: invalid q=12: not a prime power; {accepted}; the nearest valid q is 11 or 13"
        )
    );
    assert_eq!(
        err("slimfly:q=2"),
        format!("slimfly: invalid q=2: too small; {accepted}; the nearest valid q is 3")
    );
    assert_eq!(
        err("slimfly:q=13,p=0"),
        "invalid topology spec 'slimfly:q=13,p=0': p=0: accepted: floor, ceil or a count >= 1"
    );
    assert_eq!(
        err("slimfly:q=13,p=half"),
        "invalid topology spec 'slimfly:q=13,p=half': p=half: accepted: floor, ceil or a count \
         >= 1"
    );
    assert_eq!(
        err("slimfly:q=x"),
        "invalid topology spec 'slimfly:q=x': q=x: not a whole number in range"
    );
    assert_eq!(
        err("slimfly:q=100003"),
        "slimfly: too large: 20001200018 routers (limit 16777216 routers)"
    );
    // The largest u32 prime: no overflow, a clean error.
    assert!(err("slimfly:q=4294967291").starts_with("slimfly: too large"));
}

#[test]
fn other_family_parameters() {
    assert_eq!(
        err("polarfly:q=6"),
        "polarfly: invalid q=6: not a prime power; q must be a prime power (2, 3, 4, 5, 7, 8, 9, \
         11, ...); the nearest valid q is 5 or 7"
    );
    assert_eq!(
        err("oft:k=7"),
        "oft: invalid k=7: k-1=6 is not a prime power; k-1 must be a prime power (k = 3, 4, 5, 6, \
         8, 9, 10, 12, 14, ...); the nearest valid k is 6 or 8"
    );
    assert_eq!(
        err("oft:k=2"),
        "oft: invalid k=2: k-1=1 is not a prime power; k-1 must be a prime power (k = 3, 4, 5, 6, \
         8, 9, 10, 12, 14, ...); the nearest valid k is 3"
    );
    assert_eq!(err("oft:k=12,p=0"), "oft: invalid p=0: must be >= 1");
    assert_eq!(
        err("mlfm:h=1"),
        "mlfm: invalid h=1: must be >= 2 (h + 1 local routers a layer)"
    );
    assert_eq!(err("mlfm:h=4,l=0"), "mlfm: invalid l=0: must be >= 1 layer");
    assert_eq!(
        err("mlfm:h=4,p=0"),
        "mlfm: invalid p=0: must be >= 1 endpoint a local router"
    );
    assert_eq!(
        err("hyperx:s=8x1"),
        "hyperx: invalid s=8x1: every dimension needs size >= 2, e.g. s=8x8"
    );
    assert_eq!(
        err("hyperx:s=8xa"),
        "invalid topology spec 'hyperx:s=8xa': s=8xa: accepted positive integers joined by 'x' \
         (8x8 or 4x4x4)"
    );
    assert_eq!(
        err("fattree:k=7"),
        "fattree: invalid k=7: the router radix must be even and >= 2"
    );
    assert_eq!(
        err("fattree:k=8,levels=5"),
        "fattree: invalid levels=5: accepted: 2, 3 or 4"
    );
    assert_eq!(
        err("karyntree:k=1,n=2"),
        "karyntree: invalid k=1: must be >= 2"
    );
    assert_eq!(
        err("karyntree:k=2,n=0"),
        "karyntree: invalid n=0: must be >= 1 level"
    );
    assert_eq!(
        err("dragonfly:a=4,p=2,h=2,g=10"),
        "dragonfly: invalid g=10: accepted: 2 <= g <= a*h+1 = 9"
    );
    assert_eq!(
        err("torus:dims=0x4"),
        "invalid topology spec 'torus:dims=0x4': dims=0x4: accepted positive integers joined by \
         'x' (8x8 or 4x4x4)"
    );
    assert_eq!(
        err("fullmesh:n=1"),
        "fullmesh: invalid n=1: must be >= 2 routers"
    );
    assert_eq!(
        err("slimfly:q=13,bw=0"),
        "invalid topology spec 'slimfly:q=13,bw=0': bw=0: a bandwidth must be > 0"
    );
    assert_eq!(
        err("slimfly:q=13,bw=-1"),
        "invalid topology spec 'slimfly:q=13,bw=-1': bw=-1: negative; bandwidths must be > 0"
    );
    assert_eq!(
        err("slimfly:q=13,bw=100 Gbit"),
        "invalid topology spec 'slimfly:q=13,bw=100 Gbit': bw=100 Gbit: unknown unit 'Gbit'; \
         accepted units are bps, Kbps, Mbps, Gbps, Tbps, Gb/s, B/s, KB/s, MB/s, GB/s, TB/s \
         (decimal: 1 Gbps = 10^9 bit/s; a bare number is Gb/s)"
    );
    assert_eq!(
        err("slimfly:q=13,lat=5parsecs"),
        "invalid topology spec 'slimfly:q=13,lat=5parsecs': lat=5parsecs: unknown unit \
         'parsecs'; accepted units are ps, ns, us, ms, s (a bare number is ns)"
    );
    assert_eq!(
        err("tree:fig9"),
        "tree: invalid preset=fig9: unknown preset; accepted: fig1, fig5a, fig5b, fig5c or the \
         path of a JSON description"
    );
}

#[test]
fn malformed_specs() {
    let families = "slimfly, polarfly, mlfm, oft, hyperx, fattree, karyntree, dragonfly, torus, \
                    mesh, fullmesh, tree:preset or file, json:file, edgelist:file, graphml:file";
    assert_eq!(
        err("foo:x=1"),
        format!("unknown topology 'foo'; accepted: {families}")
    );
    assert_eq!(
        err(":q=1"),
        format!(
            "invalid topology spec ':q=1': empty name; expected NAME or NAME:key=value,...; \
             accepted: {families}"
        )
    );
    assert_eq!(
        err("slimfly"),
        "invalid topology spec 'slimfly': slimfly needs q, e.g. slimfly:q=13,p=9"
    );
    assert_eq!(
        err("slimfly:q=13,z=1"),
        "invalid topology spec 'slimfly:q=13,z=1': unknown key 'z' for slimfly; accepted: q, p, \
         bw, lat, switch, buffer, mtu, delay"
    );
    assert_eq!(
        err("slimfly:q=13,q=13"),
        "invalid topology spec 'slimfly:q=13,q=13': key 'q' given twice"
    );
    assert_eq!(
        err("slimfly:q="),
        "invalid topology spec 'slimfly:q=': key 'q' has no value"
    );
    assert_eq!(
        err("slimfly:q=13,,p=9"),
        "invalid topology spec 'slimfly:q=13,,p=9': empty item between commas"
    );
    assert_eq!(
        err("slimfly:13"),
        "invalid topology spec 'slimfly:13': '13' is not key=value; slimfly takes keys q, p, bw, \
         lat, switch, buffer, mtu, delay"
    );
    assert_eq!(
        err("hyperx:p=2"),
        "invalid topology spec 'hyperx:p=2': hyperx needs s, e.g. hyperx:s=8x8,p=6"
    );
    assert_eq!(
        err("dragonfly"),
        "invalid topology spec 'dragonfly': dragonfly needs one of a, p, h, e.g. dragonfly:p=4"
    );
    assert_eq!(
        err("tree"),
        "invalid topology spec 'tree': tree needs a preset or file, e.g. tree:fig1"
    );
    assert_eq!(
        err("tree:fig1,x=1"),
        "invalid topology spec 'tree:fig1,x=1': unknown key 'x' for tree; accepted: bw, lat, switch, \
         buffer, mtu, delay"
    );
    assert_eq!(
        err("tree:a,b"),
        "invalid topology spec 'tree:a,b': 'b' is a second preset or file; tree takes one, e.g. \
         tree:fig1"
    );
    assert_eq!(
        err("json:/nonexistent/t.json"),
        "cannot access '/nonexistent/t.json': No such file or directory"
    );
    assert_eq!(
        err("graphml:x.graphml"),
        "cannot read x.graphml: GraphML is read by the Python package \
         (hypercuboid.topology.generate, through networkx)"
    );
    assert!(matches!(
        generate("oft:k=7").unwrap_err(),
        TopologyError::Parameter {
            family: "oft",
            name: "k",
            ..
        }
    ));
}
