//! Every recursive multiplying schedule passes the verifier (issue 3, part 1: "Every schedule the
//! grammar accepts must pass the verifier ... for every N in 1..=256, every schedule the
//! enumerator produces verifies").
//!
//! Verified with `eager_limit = 0` (safe with synchronous sends), with data semantics: every
//! rank gets the reduction of every input exactly once, in rank order (`canonical_order`) and
//! by the same expression on every rank (`same_order_noncommutative`: bitwise identical). The
//! enumerator's 10,954 schedules of N ≤ 256 take about 27 s of CPU, split over two tests so
//! that the harness runs them on two cores; `make test` runs N ≤ 64 and `make test-long` (the
//! ignored tests) every N ≤ 256.

use hypercuboid_core::collectives::allreduce::recursive_multiplying::search::{
    count_schedules, for_each_schedule, EnumerateOptions,
};
use hypercuboid_core::collectives::allreduce::{
    self, Algorithm, AllreduceSpec, ScheduleString, Stage,
};
use hypercuboid_core::schedule::verify::{verify, VerifyOptions};
use hypercuboid_core::schedule::{Dtype, ReduceOp};
use proptest::prelude::*;

fn check(s: &ScheduleString, n: u32, count: u64) {
    let spec = AllreduceSpec::new(n, count, Dtype::Float64, ReduceOp::Sum);
    let sched = allreduce::generate(&Algorithm::RecursiveMultiplying(s.clone()), &spec)
        .unwrap_or_else(|e| panic!("{s} on {n}: {e}"));
    let rep = verify(&sched, &VerifyOptions::default());
    let what = format!("{s} on {n} ranks, count {count}");
    assert!(rep.is_sound(), "{what}:\n{rep}");
    if count == 0 {
        return;
    }
    let sem = rep.semantics.expect("allreduce semantics");
    assert!(sem.correct, "{what}");
    assert!(sem.exact, "{what}");
    assert!(sem.canonical_order, "{what}: {:?}", sem.noncanonical);
    assert!(
        sem.same_order_noncommutative,
        "{what}: {:?}",
        sem.noncommutative_difference
    );
}

/// Verifies every schedule of the selected families for every N ≤ `most`; returns how many.
fn all_up_to(most: u32, opts: EnumerateOptions) -> u128 {
    let mut total = 0;
    for n in 1..=most {
        let counted = count_schedules(n, &opts).unwrap().total();
        let mut seen = 0u128;
        for_each_schedule(n, &opts, &mut |s| {
            assert_eq!(s.nranks(), Some(n), "{s}");
            check(s, n, 1);
            seen += 1;
        })
        .unwrap();
        assert_eq!(seen, counted, "n={n}");
        total += seen;
    }
    total
}

fn factored() -> EnumerateOptions {
    EnumerateOptions {
        split: false,
        merged: false,
        ..Default::default()
    }
}

fn split_and_merged() -> EnumerateOptions {
    EnumerateOptions {
        factored: false,
        ..Default::default()
    }
}

#[test]
fn every_factored_schedule_of_every_n_up_to_64_verifies() {
    // Σ_{N ≤ 64} H(N), the ordered factorisations (computed independently in Python).
    assert_eq!(all_up_to(64, factored()), 441);
}

#[test]
#[ignore = "long: make test-long"]
fn every_factored_schedule_of_every_n_up_to_256_verifies() {
    // Σ_{N ≤ 256} H(N), likewise.
    assert_eq!(all_up_to(256, factored()), 4743);
}

#[test]
fn every_split_and_merged_schedule_of_every_n_up_to_64_verifies() {
    assert_eq!(all_up_to(64, split_and_merged()), 689);
}

#[test]
#[ignore = "long: make test-long"]
fn every_split_and_merged_schedule_of_every_n_up_to_256_verifies() {
    assert_eq!(all_up_to(256, split_and_merged()), 6211);
}

#[test]
fn larger_schedules_verify_with_uneven_counts() {
    for (s, n) in [
        ("a8,a9,a10", 720),
        ("a10,a9,a8", 720),
        ("c2m2,a4,a4,a4,a4,e2m2", 257),
        ("m1g64a4,a4,a4,n1g64a4", 257),
        ("c246m2,a2,a2,a2,a2,a2,a2,a2,e246m2", 251),
        ("m1g50a5,a5,a5,n1g125a2", 251),
        ("c4m4,c2m2,m2g3a4,n2g4a3,e2m2,e4m4", 18),
    ] {
        let sched = ScheduleString::parse(s).unwrap();
        assert_eq!(sched.nranks(), Some(n), "{s}");
        for count in [1, 5] {
            check(&sched, n, count);
        }
    }
}

/// A random schedule the grammar accepts: 1–4 factors, maybe a merge, up to two nested
/// collapses; returns it with the N it fits.
fn grammar_schedule() -> impl Strategy<Value = (ScheduleString, u32)> {
    (
        prop::collection::vec(2u32..=6, 1..=4),
        0u32..=5,
        prop::collection::vec((2u32..=4, 1u32..=3), 0..=2),
    )
        .prop_map(|(factors, merge, collapses)| {
            let mut n: u32 = factors.iter().product();
            let mut body: Vec<Stage> = factors.iter().map(|&b| Stage::Factor(b)).collect();
            if merge > 0 && factors.len() >= 2 {
                let inner = n;
                let k = factors.len() - 1;
                body[0] = Stage::Merge {
                    remainder: merge,
                    groups: inner / factors[0],
                    base: factors[0],
                };
                body[k] = Stage::InverseMerge {
                    remainder: merge,
                    groups: inner / factors[k],
                    base: factors[k],
                };
                n += merge;
            }
            let mut pre = Vec::new();
            let mut post = Vec::new();
            for (base, groups) in collapses {
                let groups = groups.min(n);
                let t = groups * base;
                pre.push(Stage::Collapse { threshold: t, base });
                post.push(Stage::Expand { threshold: t, base });
                n += t - groups;
            }
            pre.reverse();
            pre.extend(body);
            pre.extend(post);
            (ScheduleString::new(pre).expect("well formed"), n)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_grammar_schedules_verify((s, n) in grammar_schedule(), count in 1u64..4) {
        prop_assert_eq!(s.nranks(), Some(n));
        let text = s.to_string();
        prop_assert_eq!(ScheduleString::parse(&text).unwrap(), s.clone());
        check(&s, n, count);
    }
}
