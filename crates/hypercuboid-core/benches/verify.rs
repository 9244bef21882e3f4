//! The verifier on recursive doubling: matching and deadlock only (sizes-only schedule), and
//! with the symbolic execution of the allreduce semantics.
//! `cargo bench -p hypercuboid-core --bench verify`

use criterion::{criterion_group, criterion_main, Criterion};
use hypercuboid_core::schedule::verify::{verify, VerifyOptions};
use hypercuboid_core::schedule::{
    Combine, Dtype, Meta, Program, ReduceOp, Schedule, ScheduleBuilder, Slice, Slot,
};
use std::hint::black_box;

/// Recursive doubling for `n` (a power of two) ranks; with `data`, MPICH's operand order for a
/// non-commutative op and a copy of the input first, else fused receive-reduce only.
fn recursive_doubling(n: u32, data: bool) -> Schedule {
    let c = 1 << 16;
    let meta = if data {
        Meta::allreduce(c, Dtype::Float64, ReduceOp::Sum, "rd")
    } else {
        Meta::sizes_only("rd")
    };
    let (input, out) = (
        Slice::new(Slot::Input, 0, c),
        Slice::new(Slot::Output, 0, c),
    );
    let tmp = Slice::new(Slot::Scratch(0), 0, c);
    let mut b = ScheduleBuilder::new(n as u64, meta).unwrap();
    let mut p = Program::new();
    for r in 0..n {
        p.clear();
        let mut prev = vec![];
        if data {
            prev.push(p.copy(input, out));
        }
        let mut mask = 1;
        while mask < n {
            let dst = r ^ mask;
            let s = p.send(dst, 0, out);
            let rv = if data {
                p.recv(dst, 0, tmp)
            } else {
                p.recv_reduce(dst, 0, out, Combine::Before)
            };
            p.requires_all(s, &prev);
            p.requires_all(rv, &prev);
            prev = vec![s, rv];
            if data {
                let combine = if dst < r {
                    Combine::Before
                } else {
                    Combine::After
                };
                let red = p.reduce(tmp, out, combine);
                p.requires_all(red, &[s, rv]);
                prev = vec![red];
            }
            mask <<= 1;
        }
        b.push(&mut p).unwrap();
    }
    b.finish().unwrap()
}

fn bench(c: &mut Criterion) {
    let opts = VerifyOptions::default();
    let sizes = recursive_doubling(1 << 14, false);
    c.bench_function("verify rd 2^14 ranks sizes only", |b| {
        b.iter(|| black_box(verify(&sizes, &opts)))
    });
    let data = recursive_doubling(1 << 10, true);
    c.bench_function("verify rd 2^10 ranks with semantics", |b| {
        b.iter(|| black_box(verify(&data, &opts)))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
