//! The verifier's report does not depend on its thread count: matching and the structural
//! peel split the ranks between threads, and the report must be the one of a single thread.
//! Here, the allreduce generators through the public options (their blocks of ranks are large
//! outside the crate's unit tests, so the peel runs one block); random schedules full of
//! problems, on blocks of a few ops, are checked in `schedule::verify::peel`'s tests.

use hypercuboid_core::collectives::allreduce::{self, Algorithm, AllreduceSpec};
use hypercuboid_core::schedule::verify::{verify, Report, VerifyOptions};
use hypercuboid_core::schedule::{Dtype, ReduceOp, Schedule};

fn report(s: &Schedule, eager_limit: u64, semantics: bool, max: usize, threads: usize) -> Report {
    verify(
        s,
        &VerifyOptions {
            semantics,
            eager_limit,
            max_problems: max,
            threads,
        },
    )
}

/// Every thread count gives the report of one thread; returns it.
fn same_for_any_threads(s: &Schedule, eager_limit: u64, semantics: bool, max: usize) -> Report {
    let one = report(s, eager_limit, semantics, max, 1);
    for threads in [2, 3, 4, 7] {
        let many = report(s, eager_limit, semantics, max, threads);
        assert_eq!(
            many, one,
            "{threads} threads, eager_limit {eager_limit}, semantics {semantics}, max {max}"
        );
    }
    one
}

#[test]
fn allreduces_report_the_same_sound_result() {
    for (name, n) in [
        ("recursive_doubling", 64),
        ("ring", 24),
        ("tree", 37),
        ("rabenseifner", 48),
        ("recursive_multiplying:a3,a3,a3,a3", 81),
    ] {
        let alg = Algorithm::parse(name).unwrap();
        let spec = AllreduceSpec::new(n, 6, Dtype::Float64, ReduceOp::Sum);
        let s = allreduce::generate(&alg, &spec).unwrap();
        for eager_limit in [0, 1 << 20] {
            for semantics in [false, true] {
                let r = same_for_any_threads(&s, eager_limit, semantics, 20);
                assert!(r.is_sound(), "{name} on {n} ranks: {r}");
                assert_eq!(r.stats.ranks, n);
            }
        }
    }
}
