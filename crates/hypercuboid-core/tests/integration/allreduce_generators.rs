//! The classic allreduce generators: exact structure (peers, tags, op counts, chunk sizes),
//! single-rank generation, numeric execution, operand order, race freedom, and closed-form costs
//! against a reference execution in the postal model.
//!
//! `reference` below is a small sequential interpreter written for these tests (not the crate's
//! simulator): it runs a schedule with concrete values in the postal model of
//! `collectives::allreduce::cost`, so the closed forms are checked now, before the simulator and
//! verifier exist. [`check_generated`] is the one place to add the verifier's check when it lands.

use crate::common::{expected, ops_text, recvs, sends};
use hypercuboid_core::collectives::allreduce::{self, block, cost, tree, Algorithm, AllreduceSpec};
use hypercuboid_core::model::PostalModel;
use hypercuboid_core::schedule::{
    Combine, DepKind, Dtype, OpKind, Payload, Program, Rank, ReduceOp, Schedule, Slice, Slot,
    MAX_RANKS,
};

const ALL: [Algorithm; 4] = [
    Algorithm::RingRotate,
    Algorithm::Ring,
    Algorithm::Tree,
    Algorithm::RecursiveDoubling,
];

fn spec(nranks: u32, count: u64) -> AllreduceSpec {
    AllreduceSpec::new(nranks, count, Dtype::Int64, ReduceOp::Sum)
}

fn gen(alg: Algorithm, nranks: u32, count: u64) -> Schedule {
    allreduce::generate(&alg, &spec(nranks, count)).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Names and errors
// ---------------------------------------------------------------------------------------------

#[test]
fn names_round_trip_and_unknown_names_list_the_accepted_ones() {
    let names: Vec<&str> = allreduce::ALGORITHMS.iter().map(|e| e.form.name).collect();
    assert_eq!(names, expected("allreduce_algorithms"));
    for (alg, name) in ALL.iter().zip(&names) {
        assert_eq!(alg.name(), *name);
        assert_eq!(Algorithm::parse(name).unwrap(), *alg);
        assert_eq!(alg.to_string(), *name);
    }
    assert_eq!(
        Algorithm::parse("butterfly").unwrap_err().to_string(),
        "unknown allreduce algorithm 'butterfly'; accepted: ring_rotate, ring, tree, \
         recursive_doubling, rabenseifner, elimination, recursive_multiplying:SCHEDULE, \
         mpich_recursive_multiplying"
    );
    assert_eq!(
        gen(Algorithm::Tree, 4, 2).meta().name,
        "allreduce tree".to_string()
    );
}

#[test]
fn bad_specs_are_refused_with_clear_messages() {
    let rd = Algorithm::RecursiveDoubling;
    let msg = |s: AllreduceSpec| allreduce::generate(&rd, &s).unwrap_err().to_string();
    assert_eq!(
        msg(spec(0, 4)),
        format!("invalid number of ranks 0: an allreduce has 1 to {MAX_RANKS} ranks")
    );
    assert_eq!(
        msg(spec(u32::MAX, 4)),
        format!("invalid number of ranks 4294967295: an allreduce has 1 to {MAX_RANKS} ranks")
    );
    assert_eq!(
        msg(AllreduceSpec::new(
            4,
            u64::MAX / 4,
            Dtype::Float64,
            ReduceOp::Max
        )),
        "invalid count '4611686018427387903': 4611686018427387903 elements of float64 \
         (8 bytes each) exceed 2^64 - 1 bytes"
    );
    assert_eq!(
        msg(AllreduceSpec::new(4, 1, Dtype::Byte, ReduceOp::Sum)),
        "invalid dtype 'byte': an allreduce needs a numeric dtype to reduce; accepted: int8, \
         int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64"
    );
    // The largest byte size that fits is fine (no data is allocated to build a program).
    let huge = AllreduceSpec::new(4, u64::MAX / 8, Dtype::Float64, ReduceOp::Sum);
    let mut p = Program::new();
    allreduce::program(&Algorithm::Ring, &huge, 1, &mut p).unwrap();
    assert_eq!(p.len(), 2 + 2 * 3 + 2 * 3);
    assert_eq!(
        allreduce::program(&rd, &spec(4, 1), 4, &mut p)
            .unwrap_err()
            .to_string(),
        "invalid rank '4': the allreduce has ranks 0..4"
    );
}

#[test]
fn cost_functions_refuse_what_they_cannot_state_exactly() {
    let m = PostalModel::postal(1000, 1.0, 1.0, 0);
    let e = |r: Result<u64, _>| -> String {
        let err: hypercuboid_core::schedule::ScheduleError = r.unwrap_err();
        err.to_string()
    };
    assert_eq!(
        e(cost::eq1(6, 8, &m)),
        "invalid nranks '6': eq. 1 holds for a power of two; use recursive_doubling for any N"
    );
    assert_eq!(
        e(cost::eq2(0, 1000)),
        "invalid nranks '0': an allreduce has at least 1 rank"
    );
    assert_eq!(
        e(cost::tree_coursework(
            6,
            8,
            &PostalModel::postal(1, 1.0, 0.0, 0)
        )),
        "invalid nranks '6': the coursework's tree formula holds for a power of two; use tree \
         for any P"
    );
    assert_eq!(
        e(cost::tree_coursework(8, 8, &m)),
        "invalid gamma '1': the coursework's tree formula has no reduction term (gamma = 0); \
         use tree"
    );
    assert_eq!(
        e(cost::ring(&spec(4, 10), &m)),
        "invalid count '10': the ring's closed form needs equal chunks: count divisible by \
         nranks = 4"
    );
    // The model's own check (PostalModel::validate), and the closed forms' (the postal model
    // without a fixed cost per reduction).
    let negative = PostalModel::postal(1, -1.0, 0.0, 0);
    assert_eq!(
        negative.validate().unwrap_err().to_string(),
        "invalid beta '-1': a per-byte time is a finite number of picoseconds >= 0"
    );
    assert_eq!(
        e(cost::ring_rotate(&spec(4, 1), &negative)),
        "invalid beta '-1': a per-byte time is a finite number of picoseconds >= 0"
    );
    assert_eq!(
        e(cost::eq1(4, 8, &PostalModel::postal(1, 0.0, f64::NAN, 0))),
        "invalid gamma 'NaN': a per-byte time is a finite number of picoseconds >= 0"
    );
    let pipelined = PostalModel {
        alpha_p: 500,
        ..PostalModel::postal(1, 0.0, 0.0, 0)
    };
    assert_eq!(
        e(cost::tree(&spec(4, 1), &pipelined)),
        "invalid alpha_p '500': the closed forms are the postal model's (alpha_p = 0); simulate \
         the pipelined model"
    );
    assert_eq!(
        e(cost::allreduce(
            &Algorithm::Ring,
            &spec(4, 4),
            &PostalModel::postal(1, 0.0, 0.0, 7)
        )),
        "invalid delta '7': the closed forms have no fixed cost per reduction (delta = 0); \
         simulate"
    );
    let slow = PostalModel::postal(u64::MAX / 2, 0.0, 0.0, 0);
    assert_eq!(
        e(cost::ring_rotate(&spec(4, 1), &slow)),
        "invalid cost '27670116110564327421 ps': exceeds the 2^64 - 1 ps (213 days) that \
         simulated time can hold"
    );
    assert!(cost::ring(&spec(0, 4), &m).is_err());
}

// ---------------------------------------------------------------------------------------------
// Structure: peers, tags, op counts, chunks
// ---------------------------------------------------------------------------------------------

#[test]
fn recursive_doubling_on_8_ranks_rank_5_exchanges_with_4_7_1() {
    let s = gen(Algorithm::RecursiveDoubling, 8, 3);
    assert_eq!(sends(&s, 5), [(4, 0), (7, 1), (1, 2)]);
    assert_eq!(recvs(&s, 5), [(4, 0), (7, 1), (1, 2)]);
    // Every step a send and a fused receive-reduce-copy into the other of out / scratch0,
    // step 0 straight from the input, the last into out. Peer 4 is lower (incoming ⊕ own), 7
    // higher (own ⊕ incoming), 1 lower again.
    assert_eq!(
        ops_text(&s, 5),
        [
            "send in[0:3] to 4 tag 0",
            "recv out[0:3] from 4 tag 0 reduce before with in[0:3]",
            "send out[0:3] to 7 tag 1",
            "recv scratch0[0:3] from 7 tag 1 reduce after with out[0:3]",
            "send scratch0[0:3] to 1 tag 2",
            "recv out[0:3] from 1 tag 2 reduce before with scratch0[0:3]",
        ]
    );
    for r in 0..8 {
        let peers: Vec<Rank> = sends(&s, r).iter().map(|p| p.0).collect();
        assert_eq!(peers, [r ^ 1, r ^ 2, r ^ 4]);
    }
}

#[test]
fn recursive_doubling_on_6_ranks_follows_fig_2() {
    // Ruefenacht et al., Fig. 2: ranks 0 and 2 hand their data to 1 and 3 (collapse, tag 2),
    // the four active ranks 1, 3, 4, 5 run two doubling steps (tags 0, 1), then 1 and 3 return
    // the result to 0 and 2 (expand, tag 3).
    let s = gen(Algorithm::RecursiveDoubling, 6, 2);
    let expect_sends: [&[(Rank, i32)]; 6] = [
        &[(1, 2)],
        &[(3, 0), (4, 1), (0, 3)],
        &[(3, 2)],
        &[(1, 0), (5, 1), (2, 3)],
        &[(5, 0), (1, 1)],
        &[(4, 0), (3, 1)],
    ];
    let expect_recvs: [&[(Rank, i32)]; 6] = [
        &[(1, 3)],
        &[(0, 2), (3, 0), (4, 1)],
        &[(3, 3)],
        &[(2, 2), (1, 0), (5, 1)],
        &[(5, 0), (1, 1)],
        &[(4, 0), (3, 1)],
    ];
    for r in 0..6 {
        assert_eq!(sends(&s, r), expect_sends[r as usize], "sends of rank {r}");
        assert_eq!(recvs(&s, r), expect_recvs[r as usize], "recvs of rank {r}");
    }
    assert_eq!(
        ops_text(&s, 1),
        [
            "recv out[0:2] from 0 tag 2 reduce before with in[0:2]",
            "send out[0:2] to 3 tag 0",
            "recv scratch0[0:2] from 3 tag 0 reduce after with out[0:2]",
            "send scratch0[0:2] to 4 tag 1",
            "recv out[0:2] from 4 tag 1 reduce after with scratch0[0:2]",
            "send out[0:2] to 0 tag 3",
        ]
    );
    assert_eq!(
        ops_text(&s, 0),
        ["send in[0:2] to 1 tag 2", "recv out[0:2] from 1 tag 3"]
    );
}

#[test]
fn op_counts_per_rank() {
    let counts = |alg, n| -> Vec<usize> {
        let s = gen(alg, n, 64);
        (0..n).map(|r| s.rank(r).len()).collect()
    };
    // Recursive doubling: 2K on a power of two (K steps of a send and a fused receive), 2K + 2
    // for the odd collapsed ranks, 2 for the even ones.
    assert_eq!(counts(Algorithm::RecursiveDoubling, 1), [1]);
    assert_eq!(counts(Algorithm::RecursiveDoubling, 2), [2, 2]);
    assert_eq!(counts(Algorithm::RecursiveDoubling, 8), [6; 8]);
    assert_eq!(counts(Algorithm::RecursiveDoubling, 6), [2, 6, 2, 6, 4, 4]);
    assert_eq!(
        counts(Algorithm::RecursiveDoubling, 7),
        [2, 6, 2, 6, 2, 6, 4]
    );
    // Ring rotation: 3 ops a round.
    assert_eq!(counts(Algorithm::RingRotate, 2), [3, 3]);
    assert_eq!(counts(Algorithm::RingRotate, 5), [12; 5]);
    // Ring: 4(P − 1) messages and a copy on each side of the own chunk (one at the ends).
    assert_eq!(counts(Algorithm::Ring, 2), [5, 5]);
    assert_eq!(counts(Algorithm::Ring, 4), [13, 14, 14, 13]);
    // Tree: 2 for a leaf, 2c + 3 with c children, 2c + 1 for the root.
    assert_eq!(counts(Algorithm::Tree, 8), [7, 2, 5, 2, 7, 2, 5, 2]);
    assert_eq!(counts(Algorithm::Tree, 6), [7, 2, 5, 2, 5, 2]);
    assert_eq!(counts(Algorithm::Tree, 3), [5, 2, 2]);
    // Every algorithm on one rank: a copy; on an empty vector: nothing.
    for alg in ALL {
        assert_eq!(
            ops_text(&gen(alg.clone(), 1, 5), 0),
            ["copy in[0:5] to out[0:5]"]
        );
        let empty = gen(alg.clone(), 9, 0);
        assert_eq!(empty.total_ops(), 0, "{alg}");
        assert_eq!(empty.nranks(), 9);
    }
}

#[test]
fn recursive_doubling_at_2_pow_20_is_40_ops_a_rank_built_alone() {
    let n = 1u32 << 20;
    let mut p = Program::new();
    for r in [0, 1, 12345, n - 1] {
        allreduce::program(&Algorithm::RecursiveDoubling, &spec(n, 1), r, &mut p).unwrap();
        assert_eq!(p.len(), 40);
        let sends = p
            .ops
            .iter()
            .filter(|o| matches!(o.kind, OpKind::Send { .. }))
            .count();
        assert_eq!(sends, 20);
    }
    // The largest rank count, one rank at a time: O(its own ops).
    let big = spec(MAX_RANKS as u32, 1);
    allreduce::program(&Algorithm::RecursiveDoubling, &big, 7, &mut p).unwrap();
    assert_eq!(p.len(), 2 * 31 + 2);
    allreduce::program(&Algorithm::Tree, &big, 0, &mut p).unwrap();
    assert_eq!(p.len(), 2 * 32 + 1);
    assert_eq!(tree::children(MAX_RANKS as u32, 0), 32);
}

#[test]
fn ring_chunks_of_10_elements_on_4_ranks_are_3_3_2_2() {
    let sizes: Vec<u64> = (0..4).map(|i| block(10, 4, i).1).collect();
    assert_eq!(sizes, [3, 3, 2, 2]);
    let s = gen(Algorithm::Ring, 4, 10);
    assert_eq!(
        ops_text(&s, 1),
        [
            "copy in[0:3] to out[0:3]",
            "copy in[6:10] to out[6:10]",
            // Reduce-scatter: send chunk r − s, receive and reduce chunk r − s − 1.
            "send in[3:6] to 2 tag 0",
            "recv out[0:3] from 0 tag 0 reduce before",
            "send out[0:3] to 2 tag 1",
            "recv out[8:10] from 0 tag 1 reduce before",
            "send out[8:10] to 2 tag 2",
            "recv out[6:8] from 0 tag 2 reduce before",
            // Allgather: send chunk r + 1 − s, receive chunk r − s.
            "send out[6:8] to 2 tag 3",
            "recv out[3:6] from 0 tag 3",
            "send out[3:6] to 2 tag 4",
            "recv out[0:3] from 0 tag 4",
            "send out[0:3] to 2 tag 5",
            "recv out[8:10] from 0 tag 5",
        ]
    );
    // Fewer elements than ranks: empty chunks get no messages.
    let s = gen(Algorithm::Ring, 5, 2);
    for r in 0..5 {
        let v = s.rank(r);
        for i in 0..v.len() {
            if let Payload::Data(d) = match v.op(i).kind {
                OpKind::Send { data, .. } | OpKind::Recv { data, .. } => data,
                _ => continue,
            } {
                assert_eq!(d.len, 1);
            }
        }
        // Two non-empty chunks: each rank passes each chunk at most twice per phase.
        assert!(sends(&s, r).len() <= 4);
    }
}

#[test]
fn tree_on_6_ranks() {
    let s = gen(Algorithm::Tree, 6, 1);
    // Rank 0's children are 1, 2, 4 (tags 0, 1, 2); the broadcast (tags 3 + i) goes to 4, 2, 1.
    assert_eq!(
        ops_text(&s, 0),
        [
            "recv out[0:1] from 1 tag 0",
            "reduce in[0:1] into out[0:1] before",
            "recv out[0:1] from 2 tag 1 reduce after",
            "recv out[0:1] from 4 tag 2 reduce after",
            "send out[0:1] to 4 tag 5",
            "send out[0:1] to 2 tag 4",
            "send out[0:1] to 1 tag 3",
        ]
    );
    assert_eq!(
        ops_text(&s, 4),
        [
            "recv out[0:1] from 5 tag 0",
            "reduce in[0:1] into out[0:1] before",
            "send out[0:1] to 0 tag 2",
            "recv out[0:1] from 0 tag 5",
            "send out[0:1] to 5 tag 3",
        ]
    );
    assert_eq!(
        ops_text(&s, 5),
        ["send in[0:1] to 4 tag 0", "recv out[0:1] from 4 tag 3"]
    );
}

#[test]
fn ring_rotation_alternates_buffers_so_the_last_round_lands_in_the_output() {
    let s = gen(Algorithm::RingRotate, 4, 2);
    assert_eq!(
        ops_text(&s, 0),
        [
            "send in[0:2] to 1 tag 0",
            "recv out[0:2] from 3 tag 0",
            "reduce in[0:2] into out[0:2] after",
            "send out[0:2] to 1 tag 1",
            "recv scratch0[0:2] from 3 tag 1",
            "reduce in[0:2] into scratch0[0:2] after",
            "send scratch0[0:2] to 1 tag 2",
            "recv out[0:2] from 3 tag 2",
            "reduce in[0:2] into out[0:2] after",
        ]
    );
    assert_eq!(s.num_shapes(), 1);
}

#[test]
fn program_of_one_rank_equals_that_rank_of_the_schedule() {
    let mut p = Program::new();
    for alg in ALL {
        for n in [1, 2, 3, 5, 6, 8, 12, 17, 32, 33] {
            for count in [0, 1, 3, 10, 64] {
                let sp = spec(n, count);
                let s = allreduce::generate(&alg, &sp).unwrap();
                assert_eq!(s.meta().count, count);
                for r in 0..n {
                    allreduce::program(&alg, &sp, r, &mut p).unwrap();
                    assert_eq!(p, s.program(r), "{alg} n={n} count={count} rank={r}");
                }
            }
        }
    }
}

#[test]
fn dependencies_point_backwards_and_shapes_are_shared_where_the_algorithm_allows() {
    // Every dependency is on an earlier op: program order is an execution order.
    for alg in ALL {
        for n in [2, 5, 8, 13] {
            let s = gen(alg.clone(), n, 7);
            for r in 0..n {
                let p = s.program(r);
                for (a, d) in &p.deps {
                    assert!(
                        d.on < *a,
                        "{alg} n={n} rank {r}: op {a} depends on later {}",
                        d.on
                    );
                    assert_eq!(d.kind, DepKind::Requires);
                }
            }
        }
    }
    assert_eq!(gen(Algorithm::RingRotate, 64, 4).num_shapes(), 1);
    // Tree: shapes by number of children and role (leaf, inner, root).
    assert_eq!(gen(Algorithm::Tree, 64, 4).num_shapes(), 7);
    // Recursive doubling: one shape on a power of two (a receive's operand order is stored
    // relative to its peer); with the fold, one each for dropped, collapsed and plain ranks.
    assert_eq!(gen(Algorithm::RecursiveDoubling, 64, 4).num_shapes(), 1);
    assert_eq!(gen(Algorithm::RecursiveDoubling, 100, 4).num_shapes(), 3);
}

// ---------------------------------------------------------------------------------------------
// Execution with concrete values, operand order, races
// ---------------------------------------------------------------------------------------------

/// The first `k` primes.
fn primes(k: usize) -> Vec<u64> {
    // The k-th prime is below k (ln k + ln ln k) for k >= 6.
    let kf = k.max(6) as f64;
    let limit = (kf * (kf.ln() + kf.ln().ln())) as usize + 16;
    let mut sieve = vec![true; limit];
    let mut out = Vec::new();
    for i in 2..limit {
        if sieve[i] {
            out.push(i as u64);
            let mut j = i * i;
            while j < limit {
                sieve[j] = false;
                j += i;
            }
        }
    }
    assert!(out.len() >= k);
    out.truncate(k);
    out
}

/// Checks a generated schedule: the static race check, and a reference execution with integer
/// sums in the postal model. **When the verifier lands, call it here** (for example
/// `hypercuboid_core::schedule::verify::verify(s)`), and use [`verifier_cases`] for the property
/// test over all N in 1..=256.
fn check_generated(alg: Algorithm, sp: &AllreduceSpec, s: &Schedule) {
    let what = format!("{alg} n={} count={}", sp.nranks, sp.count);
    if let Err(e) = reference::races(s) {
        panic!("{what}: {e}");
    }
    let n = sp.nranks as usize;
    let count = sp.count as usize;
    let p = primes(n * count.max(1));
    let model = PostalModel::postal(1000, 2.5, 0.5, 0);
    let out = reference::run(
        s,
        &model,
        reference::Protocol::Eager,
        |r, e| p[r as usize * count + e as usize],
        |a, b| a + b,
    )
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    for e in 0..count {
        let sum: u64 = (0..n).map(|r| p[r * count + e]).sum();
        for r in 0..n {
            assert_eq!(out.outputs[r][e], sum, "{what}: rank {r} element {e}");
        }
    }
}

/// The cases of the verifier property test: every N in 1..=256 and 24 random N up to 2^20
/// (seeded), each with element counts 0, 1, N − 1, N, N + 1 and 1000.
#[allow(dead_code)]
fn verifier_cases() -> Vec<AllreduceSpec> {
    let mut seed = 0x5eed_u64;
    let mut ns: Vec<u32> = (1..=256).collect();
    for _ in 0..24 {
        ns.push(257 + (splitmix(&mut seed) % (1 << 20)) as u32);
    }
    let mut out = Vec::new();
    for n in ns {
        let mut counts = vec![0, 1, n as u64 - 1, n as u64, n as u64 + 1, 1000];
        counts.sort_unstable();
        counts.dedup();
        for c in counts {
            out.push(spec(n, c));
        }
    }
    out
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
fn every_rank_gets_the_exact_sum_for_1_to_64_ranks() {
    for alg in ALL {
        for n in 1..=64u32 {
            for count in [0, 1, n as u64 - 1, n as u64 + 3] {
                let sp = spec(n, count);
                let s = allreduce::generate(&alg, &sp).unwrap();
                check_generated(alg.clone(), &sp, &s);
            }
        }
    }
}

#[test]
fn tree_and_recursive_doubling_for_every_n_up_to_256() {
    for n in 1..=256u32 {
        for alg in [Algorithm::Tree, Algorithm::RecursiveDoubling] {
            for count in [1, 5] {
                let sp = spec(n, count);
                check_generated(alg.clone(), &sp, &allreduce::generate(&alg, &sp).unwrap());
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

    #[test]
    fn larger_random_rank_counts_and_element_counts(
        n in 257u32..3000,
        count in 0u64..40,
        ring_n in 65u32..160,
        ring_count in 0u64..400,
    ) {
        for alg in [Algorithm::Tree, Algorithm::RecursiveDoubling] {
            let sp = spec(n, count);
            check_generated(alg.clone(), &sp, &allreduce::generate(&alg, &sp).unwrap());
        }
        let sp = spec(ring_n, ring_count);
        check_generated(Algorithm::Ring, &sp, &allreduce::generate(&Algorithm::Ring, &sp).unwrap());
    }
}

/// Runs `s` with each input element the one-letter word `[rank]` and `⊕` = concatenation (a
/// non-commutative operator), returning each rank's output words.
fn words(s: &Schedule) -> Vec<Vec<Vec<u16>>> {
    let m = PostalModel::postal(1, 0.0, 0.0, 0);
    reference::run(
        s,
        &m,
        reference::Protocol::Eager,
        |r, _| vec![r as u16],
        |a: &Vec<u16>, b: &Vec<u16>| a.iter().chain(b).copied().collect(),
    )
    .unwrap()
    .outputs
}

#[test]
fn tree_and_recursive_doubling_keep_rank_order_on_every_rank() {
    for alg in [Algorithm::Tree, Algorithm::RecursiveDoubling] {
        for n in 1..=40u32 {
            let order: Vec<u16> = (0..n as u16).collect();
            for out in words(&gen(alg.clone(), n, 3)) {
                for w in out {
                    assert_eq!(w, order, "{alg} n={n}");
                }
            }
        }
    }
}

#[test]
fn ring_reduces_each_chunk_in_cyclic_order_from_its_index() {
    for n in 1..=24u32 {
        let count = 2 * n as u64 + 1;
        let out = words(&gen(Algorithm::Ring, n, count));
        for e in 0..count {
            // Element e is in chunk c; chunk c is M(c) ⊕ M(c+1) ⊕ … ⊕ M(c−1).
            let c = (0..n as u64)
                .find(|&c| {
                    let (o, l) = block(count, n as u64, c);
                    o <= e && e < o + l
                })
                .unwrap();
            let expect: Vec<u16> = (0..n as u64).map(|i| ((c + i) % n as u64) as u16).collect();
            for (r, words) in out.iter().enumerate() {
                assert_eq!(words[e as usize], expect, "n={n} element {e} rank {r}");
            }
        }
    }
}

#[test]
fn ring_rotation_gives_each_rank_its_own_rotation() {
    for n in 1..=24u32 {
        let out = words(&gen(Algorithm::RingRotate, n, 2));
        for r in 0..n {
            let expect: Vec<u16> = (1..=n).map(|i| ((r + i) % n) as u16).collect();
            assert_eq!(out[r as usize][0], expect, "n={n} rank {r}");
            assert_eq!(out[r as usize][1], expect);
        }
    }
}

#[test]
fn ring_tree_and_rotation_also_complete_with_rendezvous_sends() {
    // With sends that complete only once matched, these never wait on each other: no schedule
    // relies on MPI buffering. (Recursive doubling's fused receive writes the buffer the
    // previous step's send read, never the one its own step's send reads.)
    let m = PostalModel::postal(1000, 1.0, 1.0, 0);
    for n in [2, 3, 6, 8, 13] {
        for alg in ALL {
            let r = reference::run(
                &gen(alg.clone(), n, 9),
                &m,
                reference::Protocol::Rendezvous,
                |_, _| 1u64,
                |a, b| a + b,
            );
            assert!(r.is_ok(), "{alg} n={n}: {:?}", r.err());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Closed forms against the reference execution in the postal model
// ---------------------------------------------------------------------------------------------

fn simulated(s: &Schedule, m: &PostalModel) -> u64 {
    reference::time(s, m).unwrap()
}

#[test]
fn closed_forms_equal_the_reference_execution_to_the_picosecond() {
    // β and γ with fractions of a picosecond a byte, so that rounding once per message shows.
    let models = [
        PostalModel::postal(1_500_000, 0.37, 0.11, 0),
        PostalModel::postal(700, 13.0, 29.5, 0),
        PostalModel::postal(1000, 0.0, 0.0, 0),
    ];
    // Every N up to 40 for every algorithm; larger N for the O(N log N) ones.
    let few = [
        48, 64, 100, 127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025,
    ];
    for m in &models {
        for n in (1..=40u32).chain(few) {
            let algs: &[Algorithm] = if n <= 64 {
                &[
                    Algorithm::RingRotate,
                    Algorithm::Tree,
                    Algorithm::RecursiveDoubling,
                ]
            } else {
                &[Algorithm::Tree, Algorithm::RecursiveDoubling]
            };
            for count in [1u64, 7, 1000] {
                let sp = spec(n, count);
                for alg in algs {
                    let s = allreduce::generate(alg, &sp).unwrap();
                    let t = simulated(&s, m);
                    let skewed = *alg == Algorithm::RecursiveDoubling
                        && !n.is_power_of_two()
                        && m.gamma != 0.0;
                    if skewed {
                        // No closed form: between the γ = 0 time and the bound.
                        assert!(cost::allreduce(alg, &sp, m).is_err());
                        let no_gamma = PostalModel::postal(m.alpha_r, m.beta, 0.0, 0);
                        let lo = cost::recursive_doubling(&sp, &no_gamma).unwrap();
                        let hi = cost::recursive_doubling_bound(&sp, m).unwrap();
                        assert!(
                            lo <= t && t <= hi,
                            "rd n={n} count={count}: {lo} <= {t} <= {hi}"
                        );
                    } else {
                        assert_eq!(
                            t,
                            cost::allreduce(alg, &sp, m).unwrap(),
                            "{alg} n={n} count={count} {m:?}"
                        );
                    }
                }
            }
            if n <= 64 {
                let sp = spec(n, 3 * n as u64);
                let s = allreduce::generate(&Algorithm::Ring, &sp).unwrap();
                assert_eq!(
                    simulated(&s, m),
                    cost::ring(&sp, m).unwrap(),
                    "ring n={n} {m:?}"
                );
            }
        }
    }
}

#[test]
fn the_papers_equations_are_the_special_cases() {
    // Eq. 1 (Ruefenacht et al.): (α + nβ + nγ)·log2 N on a power of two.
    let m = PostalModel::postal(2000, 0.5, 0.25, 0);
    for k in 0..=7 {
        let n = 1u32 << k;
        let sp = spec(n, 100); // 800 bytes: nβ = 400 ps, nγ = 200 ps
        let eq1 = cost::eq1(n, 800, &m).unwrap();
        assert_eq!(eq1, k as u64 * (2000 + 400 + 200));
        assert_eq!(cost::recursive_doubling(&sp, &m).unwrap(), eq1);
        assert_eq!(
            simulated(&gen(Algorithm::RecursiveDoubling, n, 100), &m),
            eq1
        );
    }
    // Eq. 2: α(⌊log2 N⌋ + 0 or 2) for small messages (β = γ = 0).
    let small = PostalModel::postal(3000, 0.0, 0.0, 0);
    assert_eq!(cost::eq2(8, 3000).unwrap(), 9000);
    assert_eq!(cost::eq2(6, 3000).unwrap(), 12000);
    assert_eq!(cost::eq2(1, 3000).unwrap(), 0);
    for n in 1..=70u32 {
        let s = gen(Algorithm::RecursiveDoubling, n, 1);
        assert_eq!(simulated(&s, &small), cost::eq2(n, 3000).unwrap(), "n={n}");
    }
    // The coursework (section 3.1): T_ring = (P − 1)(α + βB), T_tree = 2·log2 P·(α + βB).
    let cw = PostalModel::postal(5000, 2.0, 0.0, 0);
    for k in 0..=6 {
        let p = 1u32 << k;
        let sp = spec(p, 16); // 128 bytes: βB = 256 ps
        let t_ring = (p as u64 - 1) * (5000 + 256);
        assert_eq!(cost::ring_rotate(&sp, &cw).unwrap(), t_ring);
        assert_eq!(simulated(&gen(Algorithm::RingRotate, p, 16), &cw), t_ring);
        let t_tree = 2 * k as u64 * (5000 + 256);
        assert_eq!(cost::tree_coursework(p, 128, &cw).unwrap(), t_tree);
        assert_eq!(simulated(&gen(Algorithm::Tree, p, 16), &cw), t_tree);
    }
    // Bandwidth-optimal ring: 2(P − 1)(α + βn/P) + (P − 1)γn/P.
    let m = PostalModel::postal(1000, 1.0, 3.0, 0);
    let sp = spec(8, 64); // 512 bytes, chunks of 64 bytes
    assert_eq!(cost::ring(&sp, &m).unwrap(), 2 * 7 * (1000 + 64) + 7 * 192);
    // Empty vectors and single ranks cost nothing.
    for alg in ALL {
        assert_eq!(cost::allreduce(&alg, &spec(8, 0), &m).unwrap(), 0);
        assert_eq!(cost::allreduce(&alg, &spec(1, 9), &m).unwrap(), 0);
    }
}

mod reference;
