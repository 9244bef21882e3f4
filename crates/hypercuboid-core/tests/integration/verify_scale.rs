//! The verifier at scale. Ignored by default (they take seconds in release and minutes in
//! debug); they assert results, never times, and print how long they took:
//! `cargo test -p hypercuboid-core --release --test integration -- --ignored --nocapture verify_scale::`.

use crate::common::{input, out, tmp};
use hypercuboid_core::collectives::allreduce::{self, Algorithm, AllreduceSpec};
use hypercuboid_core::schedule::verify::{verify, VerifyOptions};
use hypercuboid_core::schedule::{
    Combine, Dtype, Meta, Program, ReduceOp, Schedule, ScheduleBuilder, Slice, Slot,
};
use std::time::Instant;

const C: u64 = 1 << 20;

/// Recursive doubling as sendrecv pairs with fused receive-reduce: 2 ops a stage.
fn rd_program(p: &mut Program, r: u32, n: u32, data: bool) {
    p.clear();
    let mut prev: Vec<u32> = Vec::new();
    if data {
        prev.push(p.copy(input(C), out(C)));
    }
    let mut mask = 1;
    while mask < n {
        let dst = r ^ mask;
        let s = p.send(dst, 0, out(C));
        // MPICH's order for a non-commutative op makes every rank's program distinct (it
        // depends on the bits of the rank); without data, use the commutative order.
        let combine = if data && dst < r {
            Combine::Before
        } else if data {
            Combine::After
        } else {
            Combine::Before
        };
        let rv = if data {
            p.recv(dst, 0, tmp(C))
        } else {
            p.recv_reduce(dst, 0, out(C), combine)
        };
        p.requires_all(s, &prev);
        p.requires_all(rv, &prev);
        prev = vec![s, rv];
        if data {
            let red = p.reduce(tmp(C), out(C), combine);
            p.requires_all(red, &[s, rv]);
            prev = vec![red];
        }
        mask <<= 1;
    }
}

fn build(n: u32, meta: Meta, f: impl Fn(&mut Program, u32)) -> Schedule {
    let mut b = ScheduleBuilder::new(n as u64, meta).unwrap();
    let mut p = Program::new();
    for r in 0..n {
        f(&mut p, r);
        b.push(&mut p).unwrap();
    }
    b.finish().unwrap()
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let x = f();
    println!("{what}: {:.2} s", t.elapsed().as_secs_f64());
    x
}

#[test]
#[ignore]
fn million_ranks_matching_and_deadlock() {
    let n = 1 << 20;
    let rd = |p: &mut Program, r| rd_program(p, r, n, false);
    let s = timed("build 2^20 ranks x 40 ops", || {
        build(n, Meta::sizes_only("rd 2^20"), rd)
    });
    assert_eq!(s.total_ops(), 40 << 20);
    let rep = timed("verify (matching + deadlock)", || {
        verify(&s, &VerifyOptions::default())
    });
    assert!(rep.is_sound(), "{rep}");
    assert_eq!(rep.stats.messages, 20 << 20);
}

/// The bar of issue 17: the matching and deadlock check of the real `recursive_doubling`
/// allreduce generator at 2^20 ranks (2 × 20 ops a rank, one program shape shared by every
/// rank), without the symbolic data check. One element of `float64` a rank; sends are
/// synchronous above `eager_limit = 0` bytes, so this is the run with rendezvous sends.
#[test]
#[ignore]
fn million_ranks_recursive_doubling_generator() {
    let n = 1 << 20;
    let alg = Algorithm::parse("recursive_doubling").unwrap();
    let spec = AllreduceSpec::new(n, 1, Dtype::Float64, ReduceOp::Sum);
    let s = timed("generate recursive_doubling 2^20 ranks x 40 ops", || {
        allreduce::generate(&alg, &spec).unwrap()
    });
    assert_eq!(s.total_ops(), 40 << 20);
    assert_eq!(s.num_shapes(), 1);
    let opts = VerifyOptions {
        semantics: false,
        ..VerifyOptions::default()
    };
    let rep = timed("verify recursive_doubling (matching + deadlock)", || {
        verify(&s, &opts)
    });
    assert!(rep.is_sound(), "{rep}");
    assert_eq!(rep.stats.messages, 20 << 20);
    assert_eq!(rep.stats.bytes, 8 * (20 << 20));
    assert_eq!(rep.notes, ["semantics not checked: disabled"]);
}

#[test]
#[ignore]
fn million_ranks_with_a_deadlock() {
    // Every rank receives before it sends at stage 10: one head-to-head deadlock per pair.
    let n = 1 << 20;
    let s = build(n, Meta::sizes_only("rd 2^20 broken"), |p, r| {
        rd_program(p, r, n, false);
        // Make the stage-10 send wait for the stage-10 receive.
        p.requires(20, 21);
    });
    let rep = timed("verify 2^20 ranks with 2^19 deadlocks", || {
        verify(&s, &VerifyOptions::default())
    });
    assert_eq!(rep.problems.len(), 20);
    assert_eq!(rep.truncated, (1 << 19) - 20);
}

#[test]
#[ignore]
fn recursive_doubling_semantics_4096() {
    let n = 4096;
    let meta = Meta::allreduce(C, Dtype::Float64, ReduceOp::Sum, "rd 4096");
    let s = build(n, meta, |p, r| rd_program(p, r, n, true));
    let rep = timed("verify rd 4096 with semantics", || {
        verify(&s, &VerifyOptions::default())
    });
    assert!(rep.is_sound(), "{rep}");
    let sem = rep.semantics.unwrap();
    assert!(sem.correct && sem.same_order_noncommutative && sem.canonical_order);
}

#[test]
#[ignore]
fn ring_rotate_semantics_1024() {
    let n = 1024u32;
    let meta = Meta::allreduce(C, Dtype::Float64, ReduceOp::Sum, "ring_rotate 1024");
    let s = build(n, meta, |p, r| {
        p.clear();
        let mut prev = p.copy(input(C), out(C));
        for k in 0..n - 1 {
            let s = p.send((r + 1) % n, k as i32, out(C));
            let rv = p.recv((r + n - 1) % n, k as i32, tmp(C));
            let red = p.reduce(input(C), tmp(C), Combine::After);
            let cp = p.copy(tmp(C), out(C));
            p.requires(s, prev);
            p.requires(rv, prev);
            p.requires(red, rv);
            p.requires_all(cp, &[red, s]);
            prev = cp;
        }
    });
    let rep = timed("verify ring_rotate 1024 (4M ops) with semantics", || {
        verify(&s, &VerifyOptions::default())
    });
    assert!(rep.is_sound(), "{rep}");
    let sem = rep.semantics.unwrap();
    assert!(sem.correct && !sem.same_order_commutative);
}

/// Ring reduce-scatter + allgather on `n` chunks: every rank's program differs (chunk offsets),
/// and there are n² distinct partial results.
#[test]
#[ignore]
fn ring_reduce_scatter_allgather_semantics_512() {
    let n = 512u32;
    let chunk = 8u64;
    let count = chunk * n as u64;
    let meta = Meta::allreduce(count, Dtype::Float64, ReduceOp::Sum, "ring 512");
    let piece = |slot: Slot, c: u32| Slice::new(slot, c as u64 * chunk, chunk);
    let s = build(n, meta, |p, r| {
        p.clear();
        let (next, prev_rank) = ((r + 1) % n, (r + n - 1) % n);
        let mut prev = vec![p.copy(
            Slice::new(Slot::Input, 0, count),
            Slice::new(Slot::Output, 0, count),
        )];
        for k in 0..n - 1 {
            let send_c = (r + n - k) % n;
            let recv_c = (r + n - k - 1) % n;
            let s = p.send(next, 0, piece(Slot::Output, send_c));
            let rv = p.recv(prev_rank, 0, piece(Slot::Scratch(0), recv_c));
            let red = p.reduce(
                piece(Slot::Scratch(0), recv_c),
                piece(Slot::Output, recv_c),
                Combine::Before,
            );
            p.requires_all(s, &prev);
            p.requires_all(rv, &prev);
            p.requires(red, rv);
            prev = vec![red, s];
        }
        for k in 0..n - 1 {
            let send_c = (r + 1 + n - k) % n;
            let recv_c = (r + n - k) % n;
            let s = p.send(next, 1, piece(Slot::Output, send_c));
            let rv = p.recv(prev_rank, 1, piece(Slot::Output, recv_c));
            p.requires_all(s, &prev);
            p.requires_all(rv, &prev);
            prev = vec![s, rv];
        }
    });
    let rep = timed("verify ring 512 with semantics", || {
        verify(&s, &VerifyOptions::default())
    });
    assert!(rep.is_sound(), "{rep}");
    let sem = rep.semantics.unwrap();
    assert!(sem.correct && sem.same_order_noncommutative, "{sem}");
}

/// Every rank with a program of its own (as imported GOAL text gives): 2^18 distinct shapes.
#[test]
#[ignore]
fn distinct_programs_per_rank() {
    let n = 1 << 18;
    let s = timed("build 2^18 distinct programs x 36 ops", || {
        build(n, Meta::sizes_only("rd distinct"), |p, r| {
            rd_program(p, r, n, false);
            // Rank-dependent operand order makes every program distinct. Stage k's order
            // follows bit k + 1 of the rank: schedules store it relative to the peer, which
            // flips it by bit k, so the stored orders are bit k XOR bit k + 1 (and bit 17
            // alone at the last stage), one program per rank.
            let stages = n.trailing_zeros() as usize;
            for (k, op) in p.ops.iter_mut().enumerate() {
                if let hypercuboid_core::schedule::OpKind::Recv { combine, .. } = &mut op.kind {
                    let stage = k / 2;
                    if stage + 1 < stages && (r >> (stage + 1)) & 1 == 1 {
                        *combine = Combine::After;
                    }
                }
            }
        })
    });
    assert_eq!(s.num_shapes(), 1 << 18);
    let rep = timed("verify 2^18 distinct programs", || {
        verify(&s, &VerifyOptions::default())
    });
    assert!(rep.is_sound(), "{rep}");
}
