//! Peers read through the schedule's per-shape rules (and its explicit column where no rule
//! holds) equal the peers each generator wrote, rank by rank, for every collective family.

use hypercuboid_core::collectives::{allreduce, alltoall, halo};
use hypercuboid_core::schedule::halo::Decomposition;
use hypercuboid_core::schedule::{Dtype, Program, Rank, ReduceOp, Schedule, ANY_SOURCE};

/// Every rank's peers and program in `s` equal what `program(rank)` writes alone.
fn assert_peers(what: &str, s: &Schedule, program: impl Fn(Rank, &mut Program)) {
    let mut p = Program::new();
    for r in 0..s.nranks() {
        program(r, &mut p);
        let expect: Vec<Rank> = p
            .ops
            .iter()
            .map(|o| o.peer().unwrap_or(ANY_SOURCE))
            .collect();
        let got: Vec<Rank> = s.rank(r).peers().collect();
        assert_eq!(got, expect, "{what}: peers of rank {r}");
        assert_eq!(s.program(r), p, "{what}: program of rank {r}");
    }
}

#[test]
fn allreduce_peers_follow_the_generators() {
    let names = [
        "recursive_doubling",
        "tree",
        "ring",
        "ring_rotate",
        "rabenseifner",
        "elimination",
        "recursive_multiplying:a2,a2,a2,a2,a2,a2",
        "recursive_multiplying:a4,a4,a4",
        "recursive_multiplying:a8,a3",
        "mpich_recursive_multiplying:k=4",
    ];
    for name in names {
        let alg = allreduce::Algorithm::parse(name).unwrap();
        for n in [1u32, 2, 3, 7, 12, 24, 64] {
            let spec = allreduce::AllreduceSpec::new(n, 10, Dtype::Int64, ReduceOp::Sum);
            let Ok(s) = allreduce::generate(&alg, &spec) else {
                continue; // a radix schedule that does not fit n
            };
            assert_peers(&format!("{name} on {n}"), &s, |r, p| {
                allreduce::program(&alg, &spec, r, p).unwrap()
            });
        }
    }
    // The O(log N) schedules on a power of two store no peer at all.
    for name in [
        "recursive_doubling",
        "tree",
        "ring",
        "recursive_multiplying:a2,a2,a2,a2,a2,a2",
    ] {
        let alg = allreduce::Algorithm::parse(name).unwrap();
        let spec = allreduce::AllreduceSpec::new(64, 10, Dtype::Int64, ReduceOp::Sum);
        let s = allreduce::generate(&alg, &spec).unwrap();
        assert_eq!(s.explicit_peers(), 0, "{name}");
    }
    // Radix 4 replaces a base-4 digit of the rank, which no rule expresses: of its 1,248 ops,
    // 208 keep their peers (its 27 shapes are shared by ranks whose digits differ).
    let alg = allreduce::Algorithm::parse("recursive_multiplying:a4,a4,a4").unwrap();
    let spec = allreduce::AllreduceSpec::new(64, 10, Dtype::Int64, ReduceOp::Sum);
    let s = allreduce::generate(&alg, &spec).unwrap();
    assert_eq!((s.total_ops(), s.explicit_peers()), (1248, 208));
}

#[test]
fn alltoall_peers_follow_the_generators() {
    for name in [
        "linear",
        "linear_shifted",
        "pairwise",
        "bruck",
        "k_bruck:k=3",
        "linear_sync",
    ] {
        let alg = alltoall::Algorithm::parse(name).unwrap();
        for n in [1u32, 2, 5, 8, 12] {
            let spec = alltoall::AlltoallSpec::new(n, 2, Dtype::Int32);
            let s = alltoall::generate(&alg, &spec).unwrap();
            assert_peers(&format!("{name} on {n}"), &s, |r, p| {
                alltoall::program(&alg, &spec, r, p).unwrap()
            });
        }
    }
}

#[test]
fn halo_peers_follow_the_generators() {
    for name in ["halo_blocking", "halo_nonblocking", "halo_reduced"] {
        let alg = halo::Algorithm::parse(name).unwrap();
        for (dims, periodic) in [
            ([2, 2, 2], [true, true, true]),
            ([3, 2, 1], [false, true, false]),
            ([4, 3, 2], [true, false, true]),
        ] {
            let lattice = dims.map(|d| 3 * d);
            let problem =
                halo::HaloProblem::new(Decomposition::new(lattice, dims, periodic).unwrap());
            let s = halo::generate(&alg, &problem).unwrap();
            assert_peers(&format!("{name} on {dims:?}"), &s, |r, p| {
                halo::program(&alg, &problem, r, p).unwrap()
            });
        }
    }
}
