//! GOAL text throughput: parse and write a recursive-doubling-shaped schedule of 2^16 ranks with
//! 40 ops a rank (20 rounds of send + receive, each send requiring the previous receive).
//!
//! `cargo bench -p hypercuboid-core --bench goal`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hypercuboid_core::schedule::goal::{parse, parse_reader, write_goal, GoalExportOptions};
use hypercuboid_core::schedule::{Combine, Meta, Op, OpKind, Payload, Program, Schedule};
use std::hint::black_box;

const LOG_RANKS: u32 = 16;
const ROUNDS: u32 = 20;

fn schedule() -> Schedule {
    let n = 1u32 << LOG_RANKS;
    let programs = (0..n).map(|r| {
        let mut p = Program::new();
        let mut last = None;
        for k in 0..ROUNDS {
            let peer = r ^ (1 << (k % LOG_RANKS));
            let bytes = 8u64 << (k % 8);
            let s = p.push(Op::new(OpKind::Send {
                peer,
                tag: k as i32,
                data: Payload::Bytes(bytes),
            }));
            let rv = p.push(Op::new(OpKind::Recv {
                peer,
                tag: k as i32,
                data: Payload::Bytes(bytes),
                combine: Combine::Assign,
                operand: None,
            }));
            if let Some(prev) = last {
                p.requires(s, prev);
            }
            last = Some(rv);
        }
        p
    });
    Schedule::from_programs(Meta::sizes_only("rd"), programs).unwrap()
}

fn bench(c: &mut Criterion) {
    let s = schedule();
    let mut text = Vec::new();
    write_goal(&s, &GoalExportOptions::default(), &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    let mut g = c.benchmark_group("goal");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("parse 2^16 ranks x 40 ops", |b| {
        b.iter(|| parse(black_box(&text), "rd").unwrap())
    });
    g.bench_function("parse_reader 2^16 ranks x 40 ops", |b| {
        b.iter(|| {
            let r = std::io::BufReader::with_capacity(1 << 16, black_box(text.as_bytes()));
            parse_reader(r, "rd").unwrap()
        })
    });
    g.bench_function("write_goal 2^16 ranks x 40 ops", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(text.len());
            write_goal(black_box(&s), &GoalExportOptions::default(), &mut out).unwrap();
            out
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
