//! Schedule search for recursive multiplying: exhaustive enumeration and ranking by the closed
//! form (N = 720, 5040, 65536), and the dynamic program's model-optimal factored schedule
//! (N = 10^6, 2^20, 720720). Table 1's minimum fit (α_p = 1.34 µs, α_r = 0.34 µs).
//! `cargo bench -p hypercuboid-core --bench tuning`

use criterion::{criterion_group, criterion_main, Criterion};
use hypercuboid_core::collectives::allreduce::recursive_multiplying::search::{
    count_schedules, optimal_factored, rank_schedules, EnumerateOptions, Params, RankOptions,
};
use std::hint::black_box;

fn enumerate_and_rank(c: &mut Criterion) {
    let p = Params::table1_minimum();
    let mut g = c.benchmark_group("enumerate_and_rank");
    g.sample_size(10);
    for n in [720u32, 5040, 65536] {
        let count = count_schedules(n, &EnumerateOptions::default())
            .unwrap()
            .total();
        g.bench_function(format!("n={n} ({count} schedules)"), |b| {
            b.iter(|| rank_schedules(black_box(n), &p, &RankOptions::default()).unwrap())
        });
    }
    g.finish();
}

fn dynamic_program(c: &mut Criterion) {
    let p = Params::table1_minimum();
    let mut g = c.benchmark_group("optimal_factored");
    for n in [1_000_000u32, 1 << 20, 720_720] {
        g.bench_function(format!("n={n}"), |b| {
            b.iter(|| optimal_factored(black_box(n), &p).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, enumerate_and_rank, dynamic_program);
criterion_main!(benches);
