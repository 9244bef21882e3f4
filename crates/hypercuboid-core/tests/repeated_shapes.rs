//! Generation through one shared program shape and its peer rules
//! (`ScheduleBuilder::push_repeated`, taken by `generate` for recursive doubling and radix-2
//! recursive multiplying on a power of two) gives the schedule built rank by rank, `==`, for
//! every algorithm that takes it and those that do not; and `push_repeated` itself gives what
//! `push` gives, errors included.

use hypercuboid_core::collectives::allreduce::{self, Algorithm, AllreduceSpec};
use hypercuboid_core::schedule::{
    Combine, Dtype, Meta, PeerRule, Program, Rank, ReduceOp, Schedule, ScheduleBuilder, Slice,
    Slot, ANY_SOURCE,
};

/// The schedule of `alg` on `spec`, each rank's program built alone and pushed.
fn rank_by_rank(alg: &Algorithm, spec: &AllreduceSpec) -> Schedule {
    let mut b = ScheduleBuilder::new(spec.nranks as u64, spec.meta(alg)).unwrap();
    let mut p = Program::new();
    for r in 0..spec.nranks {
        p.clear();
        allreduce::program(alg, spec, r, &mut p).unwrap();
        b.push(&mut p).unwrap();
    }
    b.finish().unwrap()
}

#[test]
fn generate_equals_rank_by_rank() {
    let names = [
        "recursive_doubling",
        "tree",
        "recursive_multiplying:a2",
        "recursive_multiplying:a2,a2",
        "recursive_multiplying:a2,a2,a2,a2,a2,a2,a2,a2,a2,a2",
        "recursive_multiplying:a4,a4,a4",
        "recursive_multiplying:a4,a2,a4",
        "recursive_multiplying:a8,a3",
        "recursive_multiplying:c6m2,a2,a2,e6m2",
    ];
    for name in names {
        let alg = Algorithm::parse(name).unwrap();
        for n in [
            1u32, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64, 96, 100, 128, 1024,
        ] {
            let spec = AllreduceSpec::new(n, 3, Dtype::Int64, ReduceOp::Sum);
            let Ok(fast) = allreduce::generate(&alg, &spec) else {
                // The schedule string does not fit n: rank by rank says the same.
                assert!(allreduce::program(&alg, &spec, 0, &mut Program::new()).is_err());
                continue;
            };
            assert_eq!(fast, rank_by_rank(&alg, &spec), "{name} on {n} ranks");
        }
    }
}

#[test]
fn generate_at_scale_has_one_shape_and_xor_rules() {
    for name in [
        "recursive_doubling",
        "recursive_multiplying:a2,a2,a2,a2,a2,a2,a2,a2,a2,a2,a2,a2",
    ] {
        let alg = Algorithm::parse(name).unwrap();
        let spec = AllreduceSpec::new(1 << 12, 1, Dtype::Int64, ReduceOp::Sum);
        let s = allreduce::generate(&alg, &spec).unwrap();
        assert_eq!(s, rank_by_rank(&alg, &spec), "{name}");
        assert_eq!(s.num_shapes(), 1, "{name}");
        assert_eq!(s.explicit_peers(), 0, "{name}");
        let expect: Vec<PeerRule> = (0..12).flat_map(|k| [PeerRule::Xor(1 << k); 2]).collect();
        assert_eq!(s.shapes()[0].peers, expect, "{name}");
        assert_eq!(s.total_ops(), 24 << 12, "{name}");
    }
}

/// A pairwise exchange with `peer`, operands in rank order, and a local copy first.
fn exchange(rank: Rank, peer: Rank) -> Program {
    let mut p = Program::new();
    let input = Slice::new(Slot::Input, 0, 4);
    let out = Slice::new(Slot::Output, 0, 4);
    let c = p.copy(input, out);
    let s = p.send(peer, 7, input);
    let r = p.recv_reduce(peer, 7, out, Combine::rank_order(rank, peer));
    p.requires(r, c);
    p.irequires(s, c);
    p
}

/// Pushes `first` ranks of `program` one by one, then the rest with `push_repeated` under
/// `rules`; and every rank with `push`. Both results (schedules or errors) must be equal.
fn both_ways(
    n: u32,
    first: u32,
    program: impl Fn(Rank) -> Program,
    rules: &[PeerRule],
) -> Result<Schedule, String> {
    let meta = Meta::sizes_only("test");
    let one_by_one = (|| {
        let mut b = ScheduleBuilder::new(n as u64, meta.clone())?;
        for r in 0..n {
            b.push(&mut program(r))?;
        }
        b.finish()
    })()
    .map_err(|e| e.to_string());
    let repeated = (|| {
        let mut b = ScheduleBuilder::new(n as u64, meta.clone())?;
        let mut last = Program::new();
        for r in 0..first {
            last = program(r);
            b.push(&mut last)?;
        }
        b.push_repeated(&last, rules, n - first)?;
        b.finish()
    })()
    .map_err(|e| e.to_string());
    assert_eq!(repeated, one_by_one, "{n} ranks, {first} pushed first");
    repeated
}

#[test]
fn push_repeated_equals_push_for_every_rule_kind() {
    let local = PeerRule::Const(ANY_SOURCE);
    // XOR on a power of two: one shape, the XOR rule.
    for n in [2u32, 4, 16, 64] {
        for first in 1..n.min(5) {
            let s = both_ways(
                n,
                first,
                |r| exchange(r, r ^ 1),
                &[local, PeerRule::Xor(1), PeerRule::Xor(1)],
            )
            .unwrap();
            assert_eq!(
                s.shapes()[0].peers,
                [local, PeerRule::Xor(1), PeerRule::Xor(1)]
            );
        }
    }
    // A shift (a ring), any n: for n = 2 the XOR rule is preferred, as rank by rank.
    for n in [2u32, 3, 5, 9] {
        let ring = |r: Rank| exchange(r, (r + 1) % n);
        let s = both_ways(n, 1, ring, &[local, PeerRule::Shift(1), PeerRule::Shift(1)]).unwrap();
        let want = if n == 2 {
            PeerRule::Xor(1)
        } else {
            PeerRule::Shift(1)
        };
        assert_eq!(s.shapes()[0].peers, [local, want, want], "{n} ranks");
    }
    // XOR 2 on 8 ranks equals a shift by 2 below rank 2 only: the XOR rule after 3 ranks.
    let s = both_ways(
        8,
        1,
        |r| exchange(r, r ^ 2),
        &[local, PeerRule::Xor(2), PeerRule::Xor(2)],
    )
    .unwrap();
    assert_eq!(
        s.shapes()[0].peers,
        [local, PeerRule::Xor(2), PeerRule::Xor(2)]
    );
}

#[test]
fn push_repeated_stores_peers_that_follow_no_rule_of_the_shape() {
    // Ranks 0 and 1 exchange with rank 3 and 2 (XOR 3); the declared XOR 1 then holds for no
    // rule of the shape from rank 2 on: peers are stored from there, as `push` stores them.
    let peer = |r: Rank| if r < 2 { r ^ 3 } else { r ^ 1 };
    let s = both_ways(
        8,
        2,
        |r| exchange(r, peer(r)),
        &[
            PeerRule::Const(ANY_SOURCE),
            PeerRule::Xor(1),
            PeerRule::Xor(1),
        ],
    );
    let s = s.unwrap();
    assert!(s.explicit_peers() > 0);
    for r in 0..8 {
        assert_eq!(s.peer(r, 1), peer(r), "rank {r}");
    }
}

#[test]
fn push_repeated_errors_are_those_of_push() {
    let local = PeerRule::Const(ANY_SOURCE);
    // A peer out of range on a non-power of two: rank 4 of 6 sends to 4 XOR 2 = 6, found
    // after the rules have settled.
    let err = both_ways(
        6,
        2,
        |r| exchange(r, r ^ 2),
        &[local, PeerRule::Xor(2), PeerRule::Xor(2)],
    )
    .unwrap_err();
    assert_eq!(
        err,
        "rank 4 op 1: send to rank 6 but the schedule has ranks 0..6"
    );
    // The same before they settle (one rank pushed: the shift by 2 is still held).
    let err = both_ways(
        6,
        1,
        |r| exchange(r, r ^ 2),
        &[local, PeerRule::Xor(2), PeerRule::Xor(2)],
    )
    .unwrap_err();
    assert_eq!(
        err,
        "rank 4 op 1: send to rank 6 but the schedule has ranks 0..6"
    );

    let meta = Meta::sizes_only("test");
    let rules = [local, PeerRule::Xor(1), PeerRule::Xor(1)];
    // Nothing pushed yet.
    let mut b = ScheduleBuilder::new(4, meta.clone()).unwrap();
    assert_eq!(
        b.push_repeated(&exchange(0, 1), &rules, 4)
            .unwrap_err()
            .to_string(),
        "invalid repeated program '4 ranks': push the program it repeats first"
    );
    // Beyond the last rank.
    b.push(&mut exchange(0, 1)).unwrap();
    assert_eq!(
        b.push_repeated(&exchange(0, 1), &rules, 4)
            .unwrap_err()
            .to_string(),
        "program for rank 4 pushed, but rank 4 was expected next"
    );
    // A template that is not the last program, or rules of another length or a column.
    let mut other = exchange(0, 1);
    other.compute(5);
    for (t, r) in [
        (other, &rules[..]),
        (exchange(0, 1), &rules[..2]),
        (
            exchange(0, 1),
            &[local, PeerRule::Column(0), PeerRule::Xor(1)][..],
        ),
    ] {
        let e = b.push_repeated(&t, r, 3).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "invalid repeated program '{} ops, {} peer rules': the template is the last program \
                 pushed and each of its ops has one rule (const, xor or shift)",
                t.len(),
                r.len()
            )
        );
    }
    // `follows` checks a rank against the last program and the rules.
    assert!(b.follows(&mut exchange(2, 3), 2, &rules));
    assert!(!b.follows(&mut exchange(2, 0), 2, &rules));
    assert!(!b.follows(&mut exchange(2, 3), 2, &rules[..2]));
}
