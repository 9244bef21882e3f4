//! Generation through classes of ranks that share a program shape and its peer rules
//! (`ScheduleBuilder::push_classes`, taken by `generate` for the binomial tree on any number of
//! ranks, and for recursive doubling and radix-2 recursive multiplying on a power of two
//! through one class) gives the schedule built rank by rank, `==`, for every algorithm that
//! takes it and those that do not; and `push_classes` / `push_repeated` themselves give what
//! `push` gives, errors included.

use hypercuboid_core::collectives::allreduce::{self, Algorithm, Allreduce, AllreduceSpec};
use hypercuboid_core::collectives::registry::{self, Context, Family};
use hypercuboid_core::schedule::{
    Combine, Dtype, Meta, PeerRule, Program, Rank, RankClass, ReduceOp, Schedule, ScheduleBuilder,
    Slice, Slot, ANY_SOURCE,
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
fn tree_by_classes_equals_rank_by_rank_on_every_rank_count() {
    let alg = Algorithm::Tree;
    for n in 1u32..=1024 {
        for count in [1u64, 5, 1000] {
            let spec = AllreduceSpec::new(n, count, Dtype::Float32, ReduceOp::Prod);
            let fast = allreduce::generate(&alg, &spec).unwrap();
            assert_eq!(
                fast,
                rank_by_rank(&alg, &spec),
                "tree on {n} ranks, {count} elements"
            );
        }
    }
    // Past one block of classes (4096 ranks), where blocks below N − 2^(L−2) take the
    // classes from the levels alone.
    for n in [4097u32, 6000, 8191, 8192, 8193, 12345, 1 << 14] {
        let spec = AllreduceSpec::new(n, 2, Dtype::Float64, ReduceOp::Sum);
        let fast = allreduce::generate(&alg, &spec).unwrap();
        assert_eq!(fast, rank_by_rank(&alg, &spec), "tree on {n} ranks");
    }
    // No ops at all: the same empty programs.
    let spec = AllreduceSpec::new(100, 0, Dtype::Int64, ReduceOp::Sum);
    assert_eq!(
        allreduce::generate(&alg, &spec).unwrap(),
        rank_by_rank(&alg, &spec)
    );
}

#[test]
fn tree_classes_are_the_levels_and_their_peers_xor_rules() {
    // 2^12 ranks: one shape per level j = 0..12 (the ranks with lowest set bit 2^j, j
    // children) and rank 0's, in the order of their first ranks (1, 2, 4, ..., then 0 first:
    // rank 0 comes first). No peer is stored; every peer of a level is rank XOR 2^i.
    let spec = AllreduceSpec::new(1 << 12, 1, Dtype::Int64, ReduceOp::Sum);
    let s = allreduce::generate(&Algorithm::Tree, &spec).unwrap();
    assert_eq!(s, rank_by_rank(&Algorithm::Tree, &spec));
    assert_eq!(s.num_shapes(), 13);
    assert_eq!(s.explicit_peers(), 0);
    // Rank 0: 12 children, one rank (constants: 1, local reduce, 2, 4, ..., then 2048 .. 1).
    let root = &s.shapes()[s.shape_index(0)];
    assert_eq!(root.len(), 2 * 12 + 1);
    assert!(root.peers.iter().all(|r| matches!(r, PeerRule::Const(_))));
    for j in 0..12u32 {
        let shape = &s.shapes()[s.shape_index(1 << j)];
        if j < 11 {
            assert_eq!(s.shape_index(3 << j), s.shape_index(1 << j), "level {j}");
        }
        // c = j children: 2c + 3 ops, or 2 for a leaf.
        assert_eq!(shape.len(), if j == 0 { 2 } else { 2 * j as usize + 3 });
        let xor: Vec<Rank> = shape
            .peers
            .iter()
            .filter_map(|r| match r {
                PeerRule::Xor(m) => Some(*m),
                _ => None,
            })
            .collect();
        let mut expect: Vec<Rank> = (0..j).map(|i| 1 << i).collect();
        expect.extend([1 << j, 1 << j]);
        expect.extend((0..j).rev().map(|i| 1 << i));
        if j == 11 {
            // Level 11 has one rank (2048): its peers are constants.
            assert!(xor.is_empty());
            continue;
        }
        assert_eq!(xor, expect, "level {j}");
    }
    // 2(N − 1) messages, a send and a receive each, and one local reduce on each rank with
    // children (the even ranks).
    assert_eq!(s.total_ops(), 4 * ((1 << 12) - 1) + (1 << 11));
    // 1000 ranks: rank 992 (level 5) has 3 children (993, 994, 996; 1000 is past the end), a
    // class of its own; level 9 is rank 512 alone. 12 shapes, no peer stored.
    let spec = AllreduceSpec::new(1000, 1, Dtype::Int64, ReduceOp::Sum);
    let s = allreduce::generate(&Algorithm::Tree, &spec).unwrap();
    assert_eq!(s, rank_by_rank(&Algorithm::Tree, &spec));
    assert_eq!(s.num_shapes(), 12);
    assert_eq!(s.explicit_peers(), 0);
    assert_ne!(s.shape_index(992), s.shape_index(32));
    assert_eq!(s.shape_index(928), s.shape_index(32));
    assert_eq!(s.rank(992).len(), 2 * 3 + 3);
    assert_eq!(
        s.shapes()[s.shape_index(992)].peers[..2],
        [PeerRule::Const(993), PeerRule::Const(ANY_SOURCE)]
    );
    assert_eq!(s.shapes()[s.shape_index(32)].peers[0], PeerRule::Xor(1));
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

/// Every rank of `program` pushed one by one with `push` (the reference).
fn pushed_one_by_one(
    n: u32,
    meta: &Meta,
    program: &impl Fn(Rank) -> Program,
) -> Result<Schedule, String> {
    (|| {
        let mut b = ScheduleBuilder::new(n as u64, meta.clone())?;
        for r in 0..n {
            b.push(&mut program(r))?;
        }
        b.finish()
    })()
    .map_err(|e| e.to_string())
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
    let one_by_one = pushed_one_by_one(n, &meta, &program);
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
    // The exchange with rank r XOR k on n ranks, `first` of them pushed rank by rank: one
    // shape, the XOR rule.
    let xor_rule = |n: u32, first: u32, k: u32| {
        let rules = [local, PeerRule::Xor(k), PeerRule::Xor(k)];
        let s = both_ways(n, first, |r| exchange(r, r ^ k), &rules).unwrap();
        assert_eq!(
            s.shapes()[0].peers,
            rules,
            "{n} ranks, {first} first, XOR {k}"
        );
    };
    // XOR on a power of two.
    for n in [2u32, 4, 16, 64] {
        for first in 1..n.min(5) {
            xor_rule(n, first, 1);
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
    xor_rule(8, 1, 2);
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
    // after the rules have settled (2 ranks pushed first) and before they settle (1 rank
    // pushed: the shift by 2 is still held).
    for first in [2, 1] {
        let err = both_ways(
            6,
            first,
            |r| exchange(r, r ^ 2),
            &[local, PeerRule::Xor(2), PeerRule::Xor(2)],
        )
        .unwrap_err();
        assert_eq!(
            err, "rank 4 op 1: send to rank 6 but the schedule has ranks 0..6",
            "{first} pushed first"
        );
    }

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

/// Pushes `first` ranks of `program` one by one, then the rest with `push_classes` (class of
/// rank `r`: `class_of(r)`, class `c` built from its first rank at or after `first`, with
/// `rules[c]`); and every rank with `push`. Both results (schedules or errors) must be equal.
fn classes_both_ways(
    n: u32,
    first: u32,
    program: impl Fn(Rank) -> Program,
    class_of: impl Fn(Rank) -> usize + Copy,
    rules: &[Vec<PeerRule>],
) -> Result<Schedule, String> {
    let meta = Meta::sizes_only("test");
    let one_by_one = pushed_one_by_one(n, &meta, &program);
    let classes: Vec<RankClass> = rules
        .iter()
        .enumerate()
        .map(|(c, rules)| {
            let r = (first..n).find(|&r| class_of(r) == c).unwrap_or(0);
            RankClass::new(program(r), r, rules.clone())
        })
        .collect();
    let by_classes = (|| {
        let mut b = ScheduleBuilder::new(n as u64, meta.clone())?;
        for r in 0..first {
            b.push(&mut program(r))?;
        }
        b.push_classes(
            &classes,
            |from, out| {
                for (r, c) in (from..).zip(out) {
                    *c = class_of(r) as u32;
                }
            },
            n - first,
        )?;
        b.finish()
    })()
    .map_err(|e| e.to_string());
    assert_eq!(by_classes, one_by_one, "{n} ranks, {first} pushed first");
    by_classes
}

/// Even ranks exchange with `rank XOR 1` (tag 1), odd ranks send to it and receive from it
/// with another tag and a local compute: two shapes.
fn even_odd(r: Rank) -> Program {
    if r.is_multiple_of(2) {
        exchange(r, r ^ 1)
    } else {
        let mut p = Program::new();
        let a = p.compute(3);
        let s = p.send(r ^ 1, 7, Slice::new(Slot::Input, 0, 4));
        p.recv(r ^ 1, 7, Slice::new(Slot::Output, 0, 4));
        p.requires(s, a);
        p
    }
}

#[test]
fn push_classes_equals_push_for_interleaved_classes() {
    let local = PeerRule::Const(ANY_SOURCE);
    let rules = vec![
        vec![local, PeerRule::Xor(1), PeerRule::Xor(1)],
        vec![local, PeerRule::Xor(1), PeerRule::Xor(1)],
    ];
    for n in [2u32, 4, 8, 16, 64] {
        for first in [0, 1, 2, 3] {
            if first >= n {
                continue;
            }
            let s = classes_both_ways(n, first, even_odd, |r| (r % 2) as usize, &rules).unwrap();
            assert_eq!(s.num_shapes(), 2);
            assert_eq!(s.explicit_peers(), 0);
            if n > 2 {
                assert_eq!(s.shapes()[0].peers, rules[0], "{n} ranks");
                assert_eq!(s.shapes()[1].peers, rules[1], "{n} ranks");
            }
        }
    }
    // An odd number of ranks: the last rank (even) exchanges with a rank past the end, the
    // error `push` gives, for the same rank (XOR peers are checked rank by rank there).
    for n in [3u32, 7, 65] {
        let err = classes_both_ways(n, 0, even_odd, |r| (r % 2) as usize, &rules).unwrap_err();
        assert_eq!(
            err,
            format!(
                "rank {} op 1: send to rank {n} but the schedule has ranks 0..{n}",
                n - 1
            )
        );
    }
}

#[test]
fn push_classes_equals_push_when_rules_are_not_the_preferred_or_differ() {
    let local = PeerRule::Const(ANY_SOURCE);
    // Declared shifts where XOR holds too (even r + 1 = r XOR 1, odd r − 1 = r XOR 1): the
    // finished schedule has the XOR rule, as rank by rank.
    for n in [4u32, 8, 32] {
        let rules = vec![
            vec![local, PeerRule::Shift(1), PeerRule::Shift(1)],
            vec![local, PeerRule::Shift(n - 1), PeerRule::Shift(n - 1)],
        ];
        let s = classes_both_ways(n, 0, even_odd, |r| (r % 2) as usize, &rules).unwrap();
        assert_eq!(
            s.shapes()[0].peers,
            [local, PeerRule::Xor(1), PeerRule::Xor(1)]
        );
    }
    // Two classes of one shape with other rules: even ranks send to r + 1, odd ranks to r + 2
    // (mod n). No rule holds for the shape: its peers are stored, as rank by rank.
    for n in [5u32, 8, 9] {
        let ring = move |r: Rank| {
            let mut p = Program::new();
            p.send((r + 1 + r % 2) % n, 0, Slice::new(Slot::Input, 0, 1));
            p
        };
        let rules = vec![vec![PeerRule::Shift(1)], vec![PeerRule::Shift(2)]];
        let s = classes_both_ways(n, 0, ring, |r| (r % 2) as usize, &rules).unwrap();
        assert_eq!(s.num_shapes(), 1);
        assert_eq!(s.shapes()[0].peers, [PeerRule::Column(0)]);
        assert_eq!(s.explicit_peers(), n as usize);
        for r in 0..n {
            assert_eq!(s.peer(r, 0), (r + 1 + r % 2) % n);
        }
    }
    // A class with one rank keeps constants.
    let rules = vec![
        vec![local, PeerRule::Xor(1), PeerRule::Xor(1)],
        vec![local, PeerRule::Xor(1), PeerRule::Xor(1)],
    ];
    let s = classes_both_ways(2, 0, even_odd, |r| (r % 2) as usize, &rules).unwrap();
    assert_eq!(
        s.shapes()[1].peers,
        [local, PeerRule::Const(0), PeerRule::Const(0)]
    );
}

#[test]
fn push_classes_errors() {
    let local = PeerRule::Const(ANY_SOURCE);
    let rules = vec![local, PeerRule::Xor(1), PeerRule::Xor(1)];
    let class = RankClass::new(exchange(0, 1), 0, rules.clone());
    let meta = Meta::sizes_only("test");
    let mut b = ScheduleBuilder::new(4, meta.clone()).unwrap();
    assert_eq!(
        b.push_classes(
            std::slice::from_ref(&class),
            |from, out| {
                for (r, c) in (from..).zip(out) {
                    *c = r;
                }
            },
            4,
        )
        .unwrap_err()
        .to_string(),
        "invalid rank class '1': the class of rank 1 is one of the 1 classes given, 0..1"
    );
    let mut b = ScheduleBuilder::new(4, meta.clone()).unwrap();
    assert_eq!(
        b.push_classes(std::slice::from_ref(&class), |_, out| out.fill(0), 5)
            .unwrap_err()
            .to_string(),
        "program for rank 4 pushed, but rank 4 was expected next"
    );
    let short = RankClass::new(exchange(0, 1), 0, rules[..2].to_vec());
    assert_eq!(
        b.push_classes(&[class.clone(), short], |_, out| out.fill(0), 4)
            .unwrap_err()
            .to_string(),
        "invalid rank class 'class 1: 3 ops, 2 peer rules': each op of a class has one rule \
         (const, xor or shift)"
    );
    let column = RankClass::new(
        exchange(0, 1),
        0,
        vec![local, PeerRule::Column(0), PeerRule::Xor(1)],
    );
    assert!(b
        .push_classes(&[column], |_, out| out.fill(0), 4)
        .unwrap_err()
        .to_string()
        .starts_with("invalid rank class 'class 0: 3 ops, 3 peer rules'"));
    // A program that fails validation at the class's first rank: `push`'s error there.
    let mut bad = Program::new();
    let a = bad.compute(1);
    bad.requires(a, 4);
    let mut b = ScheduleBuilder::new(4, meta).unwrap();
    b.push(&mut exchange(0, 1)).unwrap();
    assert_eq!(
        b.push_classes(
            &[RankClass::new(bad, 1, vec![local])],
            |_, out| out.fill(0),
            3
        )
        .unwrap_err()
        .to_string(),
        "rank 1 op 0 depends on op 4: op index out of range (the rank has 1 ops)"
    );
    // `admits` checks a rank against the class's program and its rules.
    assert!(class.admits(&mut exchange(3, 2), 3, 4));
    assert!(!class.admits(&mut exchange(3, 1), 3, 4));
    assert!(!class.admits(&mut even_odd(3), 3, 4));
    let mut longer = exchange(3, 2);
    longer.compute(1);
    assert!(!class.admits(&mut longer, 3, 4));
}

/// Every rank of every class the allreduce family declares for `alg` on `n` ranks runs its
/// class's program (built from the class's first listed rank) up to peers that follow the
/// class's rules, and the classes of a block of ranks are those of each rank alone: what
/// `generate` checks on the listed ranks only, here on all.
fn classes_hold(alg: &Algorithm, n: u32) -> usize {
    let spec = AllreduceSpec::new(n, 3, Dtype::Int32, ReduceOp::Max);
    let prepared = registry::prepare::<Allreduce>(alg, &spec, &Context::default()).unwrap();
    let rc = Allreduce::rank_classes(alg, &prepared, &spec).expect("classes declared");
    let mut all = vec![0u32; n as usize];
    (rc.class_of)(0, &mut all);
    for (r, &c) in all.iter().enumerate() {
        let mut one = [u32::MAX];
        (rc.class_of)(r as Rank, &mut one);
        assert_eq!(one[0], c, "{alg} on {n}: class of rank {r} alone");
    }
    // Blocks of odd lengths at odd starts.
    let mut from = 1;
    while from < n {
        let len = 777.min(n - from);
        let mut out = vec![0u32; len as usize];
        (rc.class_of)(from, &mut out);
        assert_eq!(
            out,
            all[from as usize..(from + len) as usize],
            "{alg} on {n}"
        );
        from += len;
    }
    let templates: Vec<Option<RankClass>> = rc
        .classes
        .iter()
        .map(|d| {
            d.ranks.first().map(|&r| {
                let mut p = Program::new();
                allreduce::program(alg, &spec, r, &mut p).unwrap();
                RankClass::new(p, r, d.rules.clone())
            })
        })
        .collect();
    for (c, d) in rc.classes.iter().enumerate() {
        for &r in &d.ranks {
            assert_eq!(all[r as usize] as usize, c, "{alg} on {n}: listed rank {r}");
        }
    }
    let mut p = Program::new();
    for (r, &c) in all.iter().enumerate() {
        let t = templates[c as usize]
            .as_ref()
            .unwrap_or_else(|| panic!("{alg} on {n}: rank {r} in class {c}, which lists no rank"));
        allreduce::program(alg, &spec, r as Rank, &mut p).unwrap();
        assert!(
            t.admits(&mut p, r as Rank, n),
            "{alg} on {n}: rank {r}, class {c}"
        );
    }
    templates.iter().flatten().count()
}

#[test]
fn declared_classes_hold_for_every_rank() {
    let tree = Algorithm::Tree;
    for n in (2u32..=300).chain([1000, 1024, 4097, 6000, 8193]) {
        let classes = classes_hold(&tree, n);
        // One class per level below ⌈log2 N⌉ with all its children, rank 0, and the ranks
        // with fewer children than their level.
        if n.is_power_of_two() {
            assert_eq!(classes, n.trailing_zeros() as usize + 1, "tree on {n}");
        }
    }
    assert_eq!(classes_hold(&tree, 1000), 12);
    for name in [
        "recursive_doubling",
        "recursive_multiplying:a2,a2,a2,a2,a2,a2,a2,a2,a2,a2",
    ] {
        let alg = Algorithm::parse(name).unwrap();
        assert_eq!(classes_hold(&alg, 1024), 1, "{name}");
    }
    // None where the ranks do not fall into classes (non-powers of two, other algorithms).
    for (name, n) in [
        ("recursive_doubling", 12u32),
        ("ring", 16),
        ("rabenseifner", 16),
    ] {
        let alg = Algorithm::parse(name).unwrap();
        let spec = AllreduceSpec::new(n, 3, Dtype::Int32, ReduceOp::Max);
        let prepared = registry::prepare::<Allreduce>(&alg, &spec, &Context::default()).unwrap();
        assert!(
            Allreduce::rank_classes(&alg, &prepared, &spec).is_none(),
            "{name}"
        );
    }
}
