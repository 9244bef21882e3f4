//! Recursive doubling allreduce of 8 B on 2^20 ranks under LogGOPS (42M ops), end to end.
//! Ignored by default (it is a measurement, run by hand):
//! `cargo test --release -p hypercuboid-core --test sim_scale -- --ignored --nocapture`
//! (under `/usr/bin/time -v` for wall time and peak memory). The assertion is the exact
//! completion time, 20 × 6042 ns (LogGOPSim's per-step 2o + L + 7G).

mod common;

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
