//! Every generated alltoall schedule passes the verifier for every N in 1..=128 (issue 15,
//! section 1; `make test` runs N ≤ 64, `make test-long` every N ≤ 128): matched, deadlock-free with every send synchronous (`eager_limit = 0`), race
//! free, and the data check: rank `j`'s output block `i` is exactly rank `i`'s input block `j`,
//! element by element. Also: the verifier catches a wrong alltoall (the check can fail), and
//! one rank's program built alone equals its program in the whole schedule.

use hypercuboid_core::collectives::alltoall::{self, Algorithm, AlltoallSpec, ALGORITHMS};
use hypercuboid_core::schedule::verify::{verify, Report, VerifyOptions};
use hypercuboid_core::schedule::{Dtype, Meta, Program, Schedule, Slice, Slot};

fn sync() -> VerifyOptions {
    VerifyOptions {
        eager_limit: 0,
        ..VerifyOptions::default()
    }
}

fn check(alg: &Algorithm, n: u32, count: u64) {
    let spec = AlltoallSpec::new(n, count, Dtype::Float64);
    let s = alltoall::generate(alg, &spec).unwrap();
    assert_eq!(s.meta().count, n as u64 * count);
    assert_eq!(s.meta().collective.block(), Some(count));
    let rep = verify(&s, &sync());
    let what = format!("{alg} n={n} count={count}");
    assert!(rep.is_sound(), "{what}:\n{rep}");
    assert!(rep.notes.is_empty(), "{what}: {:?}", rep.notes);
    if count == 0 {
        assert_eq!(s.total_ops(), 0, "{what}");
        return;
    }
    let sem = rep.semantics.as_ref().expect("an alltoall has semantics");
    assert!(sem.correct && sem.exact && !sem.reduces, "{what}");
    // Every pair of distinct ranks exchanges its block once (linear algorithms) or the Bruck
    // messages carry every block: at least N(N-1) blocks' worth of bytes either way.
    assert!(
        rep.stats.bytes >= (n as u64) * (n as u64 - 1) * count * 8,
        "{what}"
    );
}

/// The algorithms of the tests: every entry's parameters at their defaults and at the ends of
/// their ranges.
fn algorithms() -> Vec<Algorithm> {
    [
        "linear",
        "linear_shifted",
        "linear_shifted:block=1",
        "linear_shifted:block=5",
        "pairwise",
        "bruck",
        "k_bruck:k=3",
        "k_bruck:k=4",
        "k_bruck:k=200",
        "linear_sync",
        "linear_sync:max=1",
        "linear_sync:max=3",
        "linear_sync:max=0",
    ]
    .iter()
    .map(|t| Algorithm::parse(t).unwrap())
    .collect()
}

/// Every algorithm for every N ≤ `most` (count 1), and at some N with other counts.
fn every_algorithm_up_to(most: u32) {
    for alg in algorithms() {
        for n in 1..=most {
            check(&alg, n, 1);
        }
        for n in [1, 2, 3, 7, 8, 13, 32, 33] {
            check(&alg, n, 0);
            check(&alg, n, 3);
        }
    }
}

#[test]
fn every_algorithm_verifies_for_every_n_up_to_64() {
    every_algorithm_up_to(64);
}

#[test]
#[ignore = "long: make test-long"]
fn every_algorithm_verifies_for_every_n_up_to_128() {
    every_algorithm_up_to(128);
}

#[test]
fn every_registered_algorithm_verifies_its_examples() {
    for entry in ALGORITHMS {
        assert!(!entry.examples.is_empty(), "{}", entry.form.name);
        for text in entry.examples {
            let alg = Algorithm::parse(text).unwrap();
            assert!(std::ptr::eq(alg.entry(), *entry), "{text}");
            // scheduled's examples run on tree:fig1, 6 machines: one rank each.
            let most = if entry.form.name == "scheduled" {
                6
            } else {
                24
            };
            for n in 1..=most {
                check(&alg, n, 2);
            }
        }
    }
}

#[test]
fn one_rank_alone_equals_its_program_in_the_schedule() {
    let mut p = Program::new();
    for alg in algorithms() {
        for n in [1u32, 2, 5, 8, 12] {
            let spec = AlltoallSpec::new(n, 2, Dtype::Int32);
            let s = alltoall::generate(&alg, &spec).unwrap();
            for r in 0..n {
                alltoall::program(&alg, &spec, r, &mut p).unwrap();
                assert_eq!(p, s.program(r), "{alg} n={n} rank {r}");
            }
        }
    }
}

#[test]
fn exact_op_counts() {
    // n = 8, count 1: the own copy, then 7 receives and 7 sends for the linear algorithms.
    let spec = AlltoallSpec::new(8, 1, Dtype::Float64);
    for (text, ops) in [
        ("linear", 15u64),
        ("linear_shifted", 15),
        ("pairwise", 15),
        ("linear_sync:max=2", 15),
    ] {
        let s = alltoall::generate(&Algorithm::parse(text).unwrap(), &spec).unwrap();
        assert_eq!(s.total_ops(), 8 * ops, "{text}");
    }
    // bruck at n = 8, rank 1: the own copy, 2 rotation copies, three steps of a send, a
    // receive and a pack and an unpack copy per run (4, 2 and 1 runs), 7 final copies:
    // 1 + 2 + 10 + 6 + 4 + 7 = 30 ops; rank 0 has one rotation copy fewer.
    let mut p = Program::new();
    alltoall::program(&Algorithm::Bruck, &spec, 1, &mut p).unwrap();
    assert_eq!(p.len(), 30);
    alltoall::program(&Algorithm::Bruck, &spec, 0, &mut p).unwrap();
    assert_eq!(p.len(), 29);
    // radix 4 at n = 8, rank 1: digit 0 has 3 exchanges of 2 runs each, digit 1 one exchange
    // of 1 run: 1 + 2 + 3 x (2 + 4) + (2 + 2) + 7 = 32.
    alltoall::program(&Algorithm::KBruck { k: 4 }, &spec, 1, &mut p).unwrap();
    assert_eq!(p.len(), 32);
}

/// The verifier's report (every send synchronous) on an alltoall of two hand-built ranks,
/// `count` float64 per block, and its problems as text.
fn verify_two(count: u64, name: &str, p0: Program, p1: Program) -> (Report, Vec<String>) {
    let meta = Meta::alltoall(2, count, Dtype::Float64, name).unwrap();
    let rep = verify(&Schedule::from_programs(meta, [p0, p1]).unwrap(), &sync());
    let problems = rep.problems.iter().map(|p| p.to_string()).collect();
    (rep, problems)
}

#[test]
fn the_verifier_catches_a_wrong_alltoall() {
    let input = |at, len| Slice::new(Slot::Input, at, len);
    let output = |at, len| Slice::new(Slot::Output, at, len);
    // Rank 1 receives rank 0's block into the wrong place: rank 1's output block 0 is never
    // written and block 1 holds rank 0's data.
    let mut p0 = Program::new();
    p0.copy(input(0, 2), output(0, 2));
    p0.send(1, 0, input(2, 2));
    p0.recv(1, 0, output(2, 2));
    let mut p1 = Program::new();
    p1.send(0, 0, input(0, 2));
    p1.recv(0, 0, output(2, 2));
    let (rep, problems) = verify_two(2, "wrong", p0, p1);
    assert!(!rep.is_sound());
    assert!(!rep.semantics.as_ref().unwrap().correct);
    assert_eq!(
        problems,
        [
            "wrong result: rank 1 out[0:2] holds ?: never written; expected x0[2] (rank 0's \
             block 1 at block 0) (4 elements of the output wrong)"
        ]
    );

    // A rank that sends its own block instead of the peer's: the data is in the right place
    // by size, but it is the wrong element.
    let mut p0 = Program::new();
    p0.copy(input(0, 1), output(0, 1));
    p0.send(1, 0, input(0, 1));
    p0.recv(1, 0, output(1, 1));
    let mut p1 = Program::new();
    p1.copy(input(1, 1), output(1, 1));
    p1.send(0, 0, input(0, 1));
    p1.recv(0, 0, output(0, 1));
    let (rep, problems) = verify_two(1, "shifted", p0, p1);
    assert_eq!(
        problems,
        [
            "wrong result: rank 1 out[0:1] holds x0[0]: another element's data; expected \
             x0[1] (rank 0's block 1 at block 0) (1 element of the output wrong)"
        ]
    );
    assert!(rep.to_string().contains("result: WRONG"), "{rep}");
}

#[test]
fn errors_name_the_bad_value_and_the_accepted_ones() {
    let e = Algorithm::parse("ring").unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown alltoall algorithm 'ring'; accepted: linear, linear_shifted, pairwise, \
         bruck, k_bruck, linear_sync, scheduled"
    );
    let e = Algorithm::parse("k_bruck:k=1").unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid alltoall algorithm spec 'k_bruck:k=1': k=1: k is 2 ..= 32768"
    );
    // The error of generating `alg` on `n` ranks, `count` elements of `dtype`.
    let refused = |alg: Algorithm, n: u32, count: u64, dtype: Dtype| {
        alltoall::generate(&alg, &AlltoallSpec::new(n, count, dtype))
            .unwrap_err()
            .to_string()
    };
    let e = refused(Algorithm::LinearShifted { block: 0 }, 4, 1, Dtype::Int8);
    assert_eq!(
        e,
        "invalid linear_shifted block '0': a block has 1 ..= 2147483647 peers"
    );
    let e = refused(Algorithm::KBruck { k: 1 }, 4, 1, Dtype::Int8);
    assert_eq!(e, "invalid k_bruck radix '1': the radix is 2 ..= 32768");
    let e = refused(Algorithm::Linear, 4, 1, Dtype::Byte);
    assert!(
        e.starts_with("invalid dtype 'byte': an alltoall moves typed elements"),
        "{e}"
    );
    let e = refused(Algorithm::Linear, 0, 1, Dtype::Int8);
    assert_eq!(
        e,
        "invalid number of ranks 0: an alltoall has 1 to 4294967294 ranks"
    );
    let e = refused(Algorithm::Linear, 4, u64::MAX / 2, Dtype::Int8);
    assert_eq!(
        e,
        "invalid count '9223372036854775807': 4 ranks x 9223372036854775807 elements of int8 (1 \
         bytes each) exceed 2^64 - 1 bytes"
    );
}

#[test]
fn the_text_form_keeps_the_block() {
    use hypercuboid_core::schedule::goal;
    let spec = AlltoallSpec::new(5, 3, Dtype::Uint16);
    for alg in algorithms() {
        let s = alltoall::generate(&alg, &spec).unwrap();
        let mut text = Vec::new();
        goal::write_text(&s, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.starts_with("num_ranks 5\ncollective alltoall count 15 dtype uint16 block 3\n"),
            "{text}"
        );
        let back = goal::parse(&text, "t").unwrap();
        assert_eq!(back.meta(), s.meta());
        for r in 0..5 {
            assert_eq!(back.program(r), s.program(r), "{alg} rank {r}");
        }
        assert!(verify(&back, &sync()).is_sound());
    }
    // The error of reading two ranks with the collective line `collective`.
    let refused = |collective: &str| {
        let text = format!("num_ranks 2\ncollective {collective}\n");
        goal::parse(&text, "t").unwrap_err().to_string()
    };
    let e = refused("alltoall count 4 dtype int8");
    assert!(
        e.ends_with("an alltoall needs 'block B': the elements each rank sends to each rank"),
        "{e}"
    );
    let e = refused("allreduce count 4 dtype int8 block 2");
    assert!(
        e.ends_with("'block' is an alltoall's; a collective allreduce has none"),
        "{e}"
    );
    let e = refused("alltoall count 5 dtype int8 block 2");
    assert_eq!(
        e,
        "invalid alltoall count '5': an alltoall of 2 ranks with blocks of 2 elements has \
         buffers of 2 x 2 elements"
    );
}

#[test]
fn the_postal_simulation_equals_every_registered_closed_form() {
    use hypercuboid_core::collectives::alltoall::cost;
    use hypercuboid_core::model::{ModelSpec, PostalModel};
    use hypercuboid_core::sim::{simulate, SimOptions};
    use hypercuboid_core::units::us;

    // β of 123.4 ps per byte exercises the rounding of each message's β·b.
    let m = PostalModel::postal(us(1), 123.4, 50.0, 0);
    let model = ModelSpec::Postal(m);
    for alg in algorithms() {
        let entry = alg.entry();
        let formula = entry
            .cost
            .as_ref()
            .expect("every alltoall has a closed form");
        for n in 1..=64u32 {
            for count in [0u64, 1, 3] {
                let spec = AlltoallSpec::new(n, count, Dtype::Float64);
                let s = alltoall::generate(&alg, &spec).unwrap();
                let sim = simulate(&s, &model, &SimOptions::default()).unwrap();
                let closed = (formula.time)(&alg, &spec, &m).unwrap();
                assert_eq!(sim.completion, closed, "{alg} n={n} count={count}");
                assert_eq!(closed, cost::alltoall(&alg, &spec, &m).unwrap());
            }
        }
    }
    // Published shapes: pairwise (N − 1)(α + βm); Bruck log2 N (α + β·(N/2)·m).
    let spec = AlltoallSpec::new(16, 1000, Dtype::Float64);
    let postal = PostalModel::postal(us(1), 400.0, 0.0, 0);
    assert_eq!(
        cost::alltoall(&Algorithm::Pairwise, &spec, &postal).unwrap(),
        15 * (us(1) + 3_200_000)
    );
    assert_eq!(
        cost::alltoall(&Algorithm::Bruck, &spec, &postal).unwrap(),
        4 * (us(1) + 25_600_000)
    );
    let pipelined = PostalModel {
        alpha_p: 500_000,
        ..postal
    };
    assert_eq!(
        cost::alltoall(&Algorithm::Bruck, &spec, &pipelined)
            .unwrap_err()
            .to_string(),
        "invalid alpha_p '500000': the closed forms are the postal model's (alpha_p = 0); \
         simulate the pipelined model"
    );
}
