//! Generation and analysis (no bisection) of the diameter-two seed's configurations.

use criterion::{criterion_group, criterion_main, Criterion};
use hypercuboid_core::topology::{analyze, generate, refine_bisection};
use std::hint::black_box;

fn topologies(c: &mut Criterion) {
    for spec in ["slimfly:q=13,p=9", "oft:k=12", "mlfm:h=15"] {
        c.bench_function(&format!("generate {spec}"), |b| {
            b.iter(|| generate(black_box(spec)).unwrap())
        });
        let t = generate(spec).unwrap();
        c.bench_function(&format!("analyze {spec}"), |b| {
            b.iter(|| analyze(black_box(&t)))
        });
        let half: Vec<bool> = (0..t.num_routers()).map(|r| r % 2 == 1).collect();
        c.bench_function(&format!("refine_bisection {spec}"), |b| {
            b.iter(|| refine_bisection(black_box(&t), &half).unwrap())
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = topologies
}
criterion_main!(benches);
