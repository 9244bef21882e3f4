//! Simulator throughput: recursive doubling allreduce of 8 B under LogGOPS (LogGOPSim's default
//! parameters with L = 3000), 40 ops a rank at N = 2^20 scale, and the binomial tree's (partners
//! 2^k ranks apart: the engine's cache-miss case) under LogGOPSim's `std::sort` tie order. Run with
//! `cargo bench -p hypercuboid-core --bench sim`. The 2^20 end-to-end measurement is the ignored
//! test `tests/integration/sim_scale.rs`.

#[path = "../tests/integration/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hypercuboid_core::collectives::allreduce::{generate, Algorithm, AllreduceSpec};
use hypercuboid_core::model::parse_model;
use hypercuboid_core::schedule::{Dtype, ReduceOp, Schedule};
use hypercuboid_core::sim::{simulate, SimOptions};
use std::hint::black_box;

/// Times `simulate` of `schedule(N)` under `model` for N = 2^14 and 2^17 in the group `name`,
/// with `with_generate` also generating the schedule inside the timed call.
fn simulate_group(
    c: &mut Criterion,
    name: &str,
    model: &str,
    schedule: fn(u32) -> Schedule,
    with_generate: bool,
) {
    let model = parse_model(model).unwrap();
    let mut g = c.benchmark_group(name);
    g.sample_size(10);
    for log_n in [14u32, 17] {
        let n = 1u32 << log_n;
        let s = schedule(n);
        g.throughput(Throughput::Elements(s.total_ops()));
        g.bench_with_input(BenchmarkId::new("simulate", n), &s, |b, s| {
            b.iter(|| simulate(black_box(s), &model, &SimOptions::default()).unwrap())
        });
        if with_generate {
            g.bench_with_input(BenchmarkId::new("generate+simulate", n), &n, |b, &n| {
                b.iter(|| {
                    simulate(&schedule(black_box(n)), &model, &SimOptions::default()).unwrap()
                })
            });
        }
    }
    g.finish();
}

fn recursive_doubling_loggops(c: &mut Criterion) {
    simulate_group(
        c,
        "sim/recursive_doubling_8B_loggops",
        "loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535",
        |n| common::recursive_doubling(n, 8),
        true,
    );
}

fn tree_loggops(c: &mut Criterion) {
    simulate_group(
        c,
        "sim/tree_8B_loggops_gcc",
        "loggops:L=3000,o=1500,g=1000,G=6,order=gcc",
        |n| {
            let spec = AllreduceSpec::new(n, 1, Dtype::Int64, ReduceOp::Sum);
            generate(&Algorithm::Tree, &spec).unwrap()
        },
        false,
    );
}

criterion_group!(benches, recursive_doubling_loggops, tree_loggops);
criterion_main!(benches);
