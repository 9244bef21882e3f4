//! Recursive doubling allreduce of 8 B on 2^20 ranks under LogGOPS (42M ops), end to end.
//! Ignored by default (it is a measurement, run by hand):
//! `cargo test --release -p hypercuboid-core --test integration -- --ignored --nocapture sim_scale::`
//! (under `/usr/bin/time -v` for wall time and peak memory). The assertion is the exact
//! completion time, 20 × 6042 ns (LogGOPSim's per-step 2o + L + 7G).

use crate::common;

use hypercuboid_core::model::parse_model;
use hypercuboid_core::sim::{simulate, SimOptions};
use hypercuboid_core::units::ns;
use std::time::Instant;

#[test]
#[ignore]
fn recursive_doubling_2_pow_20_under_loggops() {
    let n = 1u32 << 20;
    let t0 = Instant::now();
    let s = common::recursive_doubling(n, 8);
    let t1 = Instant::now();
    let m = parse_model("loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535").unwrap();
    let r = simulate(&s, &m, &SimOptions::default()).unwrap();
    let t2 = Instant::now();
    assert_eq!(r.ops, 40 * n as u64);
    assert_eq!(r.completion, 20 * ns(6042));
    eprintln!(
        "N=2^20: {} ops, schedule {:.0} MB; generate {:.2} s, simulate {:.2} s",
        r.ops,
        s.memory_bytes() as f64 / 1e6,
        (t1 - t0).as_secs_f64(),
        (t2 - t1).as_secs_f64()
    );
}

/// The algorithms of the 2^24-rank measurement (`benchmarks/scale.py`), at 2^12 ranks: the
/// simulated completion equals the postal closed form to the picosecond
/// (`collectives::allreduce::cost`), and recursive doubling under LogGOPS is log2 N × 6042 ns.
#[test]
fn scale_algorithms_equal_their_closed_forms_at_4096_ranks() {
    use hypercuboid_core::collectives::allreduce::{cost, generate, Algorithm, AllreduceSpec};
    use hypercuboid_core::model::ModelSpec;
    use hypercuboid_core::schedule::{Dtype, ReduceOp};

    let spec = AllreduceSpec::new(1 << 12, 1, Dtype::Int64, ReduceOp::Sum);
    let ModelSpec::Postal(postal) = parse_model("postal:alpha=1us,beta=1ns,gamma=1ns").unwrap()
    else {
        panic!("a postal spec gives the postal model")
    };
    // (algorithm, closed form in ns: α + 8β + 8γ = 1016 ns a message and its reduction; the
    // tree's broadcast messages are not reduced, α + 8β = 1008 ns)
    for (name, ns_expected) in [
        ("recursive_doubling", 12 * 1016),
        ("tree", 12 * 1016 + 12 * 1008),
        ("recursive_multiplying:a4,a4,a4,a4,a4,a4", 6 * 3 * 1016),
        (
            "recursive_multiplying:a2,a2,a2,a2,a2,a2,a2,a2,a2,a2,a2,a2",
            12 * 1016,
        ),
    ] {
        let alg = Algorithm::parse(name).unwrap();
        let s = generate(&alg, &spec).unwrap();
        let r = simulate(&s, &ModelSpec::Postal(postal), &SimOptions::default()).unwrap();
        assert_eq!(
            r.completion,
            cost::allreduce(&alg, &spec, &postal).unwrap(),
            "{name}"
        );
        assert_eq!(r.completion, ns(ns_expected), "{name}");
    }
    let loggops = parse_model("loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535").unwrap();
    let s = generate(&Algorithm::parse("recursive_doubling").unwrap(), &spec).unwrap();
    let r = simulate(&s, &loggops, &SimOptions::default()).unwrap();
    assert_eq!(r.completion, 12 * ns(6042));
}
