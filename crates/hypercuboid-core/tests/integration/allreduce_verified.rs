//! Every generated allreduce schedule passes the verifier (issue "Foundation", section 5:
//! "property tests over all N in 1..=256 and random larger N, several counts"; issue 3: the
//! new algorithms, all verified for all N ≤ 256).
//!
//! Verified with `eager_limit = 0`: no schedule relies on MPI buffering. Beyond soundness, each
//! algorithm's reduction order is pinned: which ones give bitwise-identical results on every
//! rank, and which ones are also right for a non-commutative operator. Recursive multiplying's
//! schedules are verified in `allreduce_rm_verified.rs`.

use hypercuboid_core::collectives::allreduce::{self, Algorithm, AllreduceSpec, ALGORITHMS};
use hypercuboid_core::collectives::registry::Property;
use hypercuboid_core::schedule::verify::{verify, VerifyOptions};
use hypercuboid_core::schedule::{Dtype, ReduceOp};
use proptest::prelude::*;

const ALL: [Algorithm; 4] = [
    Algorithm::RingRotate,
    Algorithm::Ring,
    Algorithm::Tree,
    Algorithm::RecursiveDoubling,
];

/// The issue-3 algorithms without a schedule string (MPICH's radix at several values).
const NEW: [Algorithm; 6] = [
    Algorithm::Rabenseifner,
    Algorithm::Elimination,
    Algorithm::MpichRecursiveMultiplying { k: 2 },
    Algorithm::MpichRecursiveMultiplying { k: 3 },
    Algorithm::MpichRecursiveMultiplying { k: 4 },
    Algorithm::MpichRecursiveMultiplying { k: 7 },
];

/// Whether `n` is a power of `k` (1 included).
fn power_of(n: u32, k: u32) -> bool {
    let mut p = 1u64;
    while p < n as u64 {
        p *= k as u64;
    }
    p == n as u64
}

fn check(alg: &Algorithm, n: u32, count: u64) {
    let spec = AllreduceSpec {
        nranks: n,
        count,
        dtype: Dtype::Float64,
        op: ReduceOp::Sum,
    };
    let s = allreduce::generate(alg, &spec).unwrap();
    let rep = verify(&s, &VerifyOptions::default());
    let what = format!("{alg} n={n} count={count}");
    assert!(rep.is_sound(), "{what}:\n{rep}");
    if count == 0 {
        return;
    }
    let sem = rep
        .semantics
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no semantics"));
    assert!(sem.correct, "{what}");
    assert!(sem.exact, "{what}: confirmed by fingerprint only");
    match alg {
        // The coursework's ring: every rank adds in its own rotation (seed section 2.1), so the
        // bits agree only when two operands are all there is.
        Algorithm::RingRotate => {
            assert_eq!(sem.same_order_commutative, n <= 2, "{what}");
            assert_eq!(sem.same_order_noncommutative, n == 1, "{what}");
        }
        // Reduce-scatter then allgather: each chunk is reduced once and copied around.
        Algorithm::Ring => {
            assert!(sem.same_order_noncommutative, "{what}");
            assert!(sem.same_order_commutative, "{what}");
        }
        // MPICH's order: lower ranks on the left, the same expression on every rank.
        Algorithm::Tree | Algorithm::RecursiveDoubling => {
            assert!(sem.same_order_noncommutative, "{what}");
            assert!(sem.same_order_commutative, "{what}");
            assert!(sem.canonical_order, "{what}");
        }
        // Chunks reduced once in rank order (lower virtual rank on the left), then copied.
        Algorithm::Rabenseifner => {
            assert!(sem.same_order_noncommutative, "{what}");
            assert!(sem.canonical_order, "{what}");
        }
        // The same expression everywhere; the downward masks that let each triple meet last
        // break rank order unless there is no triple (a power of two) or only one step (N = 3).
        Algorithm::Elimination => {
            assert!(sem.same_order_noncommutative, "{what}");
            assert_eq!(sem.canonical_order, n.is_power_of_two() || n == 3, "{what}");
        }
        // MPICH's fold puts the folded-in higher ranks first: rank order only on a power of k.
        Algorithm::MpichRecursiveMultiplying { k } => {
            assert!(sem.same_order_noncommutative, "{what}");
            assert_eq!(sem.canonical_order, power_of(n, *k), "{what}");
        }
        _ => unreachable!(),
    }
}

/// Every entry of the registry, through its examples: each verifies for every N it fits up to
/// 48 (a schedule string fits one N), and every guarantee the entry promises holds.
#[test]
fn every_registered_algorithm_keeps_its_promises() {
    for entry in ALGORITHMS {
        assert!(
            !entry.examples.is_empty(),
            "{}: no examples",
            entry.form.name
        );
        for text in entry.examples {
            let alg = Algorithm::parse(text).unwrap();
            assert!(
                std::ptr::eq(alg.entry(), *entry),
                "{text} parses to another entry"
            );
            let mut verified = 0;
            for n in 1..=48u32 {
                for count in [1u64, 5, n as u64 + 1] {
                    let spec = AllreduceSpec::new(n, count, Dtype::Float64, ReduceOp::Sum);
                    let Ok(s) = allreduce::generate(&alg, &spec) else {
                        continue;
                    };
                    let rep = verify(&s, &VerifyOptions::default());
                    let what = format!("{text} n={n} count={count}");
                    assert!(rep.is_sound(), "{what}:\n{rep}");
                    let sem = rep.semantics.as_ref().expect("an allreduce has semantics");
                    assert!(sem.correct && sem.exact, "{what}");
                    for p in Property::ALL {
                        if entry.promises(p, &alg, n) {
                            let holds = match p {
                                Property::SameBitsCommutative => sem.same_order_commutative,
                                Property::SameExpression => sem.same_order_noncommutative,
                                Property::RankOrder => sem.canonical_order,
                            };
                            assert!(holds, "{what}: promises {} ({})", p.name(), entry.when(p));
                        }
                    }
                    verified += 1;
                }
            }
            assert!(verified > 0, "{text}: fits no N up to 48");
        }
    }
}

/// Every algorithm for every N ≤ `most`, at counts 0, 1, 7 and around N.
fn every_algorithm_up_to(most: u32) {
    for n in 1..=most {
        for alg in ALL {
            // Counts around N (a chunk per rank, some chunks empty, uneven chunks) for every N
            // where the check is cheap; the rings' symbolic state grows as N × chunks, so for
            // them only up to 64 and around the powers of two 128 and 256.
            let around = !matches!(alg, Algorithm::Ring | Algorithm::RingRotate)
                || n <= 64
                || [127, 128, 129, 255, 256].contains(&n);
            let mut counts = vec![0, 1, 7];
            if around {
                counts.extend([n as u64 - 1, n as u64 + 1]);
            }
            counts.sort_unstable();
            counts.dedup();
            for &c in &counts {
                check(&alg, n, c);
            }
        }
    }
}

#[test]
fn every_algorithm_verifies_for_every_n_up_to_64() {
    every_algorithm_up_to(64);
}

#[test]
#[ignore = "long: make test-long"]
fn every_algorithm_verifies_for_every_n_up_to_256() {
    every_algorithm_up_to(256);
}

#[test]
fn new_algorithms_verify_for_every_n_up_to_256() {
    for n in 1..=256u32 {
        for alg in &NEW {
            // Rabenseifner splits the vector: counts around N give empty and uneven chunks.
            // The others move whole vectors: the count does not change their structure.
            let mut counts = vec![0, 1, 3];
            if *alg == Algorithm::Rabenseifner {
                counts.extend([7, n as u64 - 1, n as u64 + 1]);
            }
            counts.sort_unstable();
            counts.dedup();
            for &c in &counts {
                check(alg, n, c);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn larger_random_n(n in 257u32..4096, count in 1u64..40) {
        check(&Algorithm::Tree, n, count);
        check(&Algorithm::RecursiveDoubling, n, count);
        check(&Algorithm::Rabenseifner, n, count);
        check(&Algorithm::Elimination, n, count);
        check(&Algorithm::MpichRecursiveMultiplying { k: 4 }, n, count);
    }

    #[test]
    fn rings_at_larger_random_n(n in 257u32..400, count in prop_oneof![Just(1u64), 1u64..500]) {
        check(&Algorithm::Ring, n, count);
        check(&Algorithm::RingRotate, n, count);
    }
}

#[test]
fn the_verifier_reads_a_fused_receives_operand() {
    use hypercuboid_core::schedule::{Combine, Meta, Program, Schedule, Slice, Slot};
    // Two ranks exchange inputs and reduce into out with a separate operand: right when the
    // operand is the input, an uninitialized read when it is a scratch buffer nobody wrote.
    let run = |operand: Slot| {
        let progs = (0..2u32).map(|r| {
            let mut p = Program::new();
            p.send(1 - r, 0, Slice::new(Slot::Input, 0, 3));
            let o = Slice::new(operand, 0, 3);
            let d = Slice::new(Slot::Output, 0, 3);
            p.recv_reduce_into(1 - r, 0, o, d, Combine::rank_order(r, 1 - r));
            p
        });
        let meta = Meta::allreduce(3, Dtype::Int32, ReduceOp::Sum, "pair");
        verify(
            &Schedule::from_programs(meta, progs).unwrap(),
            &VerifyOptions::default(),
        )
    };
    let good = run(Slot::Input);
    assert!(good.is_sound(), "{good}");
    let sem = good.semantics.unwrap();
    assert!(sem.correct && sem.canonical_order && sem.same_order_noncommutative);
    let bad = run(Slot::Scratch(0));
    assert!(!bad.is_sound());
    assert!(
        bad.problems
            .iter()
            .any(|p| p.to_string().contains("uninitialized")
                || p.to_string().contains("never written")),
        "{bad}"
    );
}
