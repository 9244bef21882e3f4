//! Recursive multiplying and the other issue-3 algorithms: schedule strings, error messages,
//! exact programs of the seed's small examples, simulated times of the seed's Figs. 18–23, and
//! the closed forms against the simulator.

use crate::common::{ops_text, sends};
use hypercuboid_core::collectives::allreduce::recursive_multiplying::search::{
    estimate, for_each_schedule, EnumerateOptions, Params,
};
use hypercuboid_core::collectives::allreduce::{
    self, cost, Algorithm, AllreduceSpec, ScheduleString, Stage,
};
use hypercuboid_core::model::{parse_model, ModelSpec, PostalModel};
use hypercuboid_core::schedule::{Dtype, OpKind, Program, ReduceOp, Schedule};
use hypercuboid_core::sim::{simulate, SimOptions};

fn spec(n: u32, count: u64) -> AllreduceSpec {
    AllreduceSpec::new(n, count, Dtype::Int64, ReduceOp::Sum)
}

fn rm(s: &str) -> Algorithm {
    Algorithm::RecursiveMultiplying(ScheduleString::parse(s).unwrap())
}

fn gen(alg: &Algorithm, n: u32, count: u64) -> Schedule {
    allreduce::generate(alg, &spec(n, count)).unwrap()
}

fn err(name: &str) -> String {
    Algorithm::parse(name).unwrap_err().to_string()
}

// ---------------------------------------------------------------------------------------------
// Schedule strings and algorithm names
// ---------------------------------------------------------------------------------------------

#[test]
fn schedule_strings_parse_to_their_stages_and_print_back() {
    let s = ScheduleString::parse("c6m2,a2,a2,e6m2").unwrap();
    assert_eq!(
        s.stages(),
        [
            Stage::Collapse {
                threshold: 6,
                base: 2
            },
            Stage::Factor(2),
            Stage::Factor(2),
            Stage::Expand {
                threshold: 6,
                base: 2
            },
        ]
    );
    let m = ScheduleString::parse("m3g2a2,n3g2a2").unwrap();
    assert_eq!(
        m.stages(),
        [
            Stage::Merge {
                remainder: 3,
                groups: 2,
                base: 2
            },
            Stage::InverseMerge {
                remainder: 3,
                groups: 2,
                base: 2
            },
        ]
    );
    assert_eq!(
        ScheduleString::parse("a8,a3,a4").unwrap().factors(),
        [8, 3, 4]
    );
    // The N each of the seed's examples fits.
    for (t, n) in [
        ("a8,a3,a4", Some(96)),
        ("a2,a2,a2", Some(8)),
        ("a8", Some(8)),
        ("c6m2,a2,a2,e6m2", Some(7)),
        ("m1g2a3,n1g3a2", Some(7)),
        ("m3g2a2,n3g2a2", Some(7)),
        ("a3,a2", Some(6)),
        ("c4m4,c2m2,m2g3a4,n2g4a3,e2m2,e4m4", Some(18)),
        ("c4m4,e4m4", Some(4)),
        ("", Some(1)),
        ("m1g3a3,n1g3a2", None),
    ] {
        let s = ScheduleString::parse(t).unwrap();
        assert_eq!(s.to_string(), t);
        assert_eq!(s.nranks(), n, "{t}");
    }
}

#[test]
fn malformed_schedules_say_what_is_wrong() {
    let msg = |t: &str| ScheduleString::parse(t).unwrap_err().to_string();
    assert_eq!(
        msg("a8,x3"),
        "invalid schedule 'a8,x3': stage 2: 'x3' is not a stage; accepted stages: aB (B >= 2), \
         cTmB, eTmB, mRgGaB, nRgGaB"
    );
    assert_eq!(
        msg("a1"),
        "invalid schedule 'a1': stage 1: 'a1': the factor B of aB must be at least 2 (a stage \
         of 1 exchanges nothing)"
    );
    assert_eq!(
        msg("a8,,a3"),
        "invalid schedule 'a8,,a3': stage 2: empty stage (two commas in a row, or a trailing \
         comma); accepted: aB (B >= 2), cTmB, eTmB, mRgGaB, nRgGaB"
    );
    assert_eq!(
        msg("a08"),
        "invalid schedule 'a08': stage 1: 'a08': numbers are written without leading zeros"
    );
    assert_eq!(
        msg("c5m2,a2,e5m2"),
        "invalid schedule 'c5m2,a2,e5m2': stage 1: 'c5m2': the threshold T = 5 must be a \
         positive multiple of the base B = 2"
    );
    assert_eq!(
        msg("m0g2a3,n0g3a2"),
        "invalid schedule 'm0g2a3,n0g3a2': stage 1: 'm0g2a3': the remainder R must be at least \
         1 (with no remainder write aB)"
    );
    assert_eq!(
        msg("a99999999999"),
        "invalid schedule 'a99999999999': stage 1: 'a99999999999': 99999999999 is larger than \
         4294967295"
    );
    assert_eq!(
        msg("e6m2,a2"),
        "invalid schedule 'e6m2,a2': 'e6m2' must come after every other stage (expands are the \
         last stages)"
    );
    assert_eq!(
        msg("a2,c6m2"),
        "invalid schedule 'a2,c6m2': 'c6m2' must come before every other stage (collapses are \
         the first stages)"
    );
    assert_eq!(
        msg("c6m2,a2,e4m2"),
        "invalid schedule 'c6m2,a2,e4m2': 'c6m2' is closed by 'e4m2'; the expand must repeat \
         the collapse's T and B (e6m2)"
    );
    assert_eq!(
        msg("c6m2,a2,a2"),
        "invalid schedule 'c6m2,a2,a2': 1 collapse stage(s) but 0 expand stage(s); every cTmB \
         needs an eTmB with the same T and B at the mirrored position"
    );
    assert_eq!(
        msg("m1g2a3,a2"),
        "invalid schedule 'm1g2a3,a2': a merged schedule has one mRgGaB as its first exchange \
         stage and one nRgGaB as its last, with only aB stages between (e.g. m1g2a3,n1g3a2)"
    );
    assert_eq!(
        msg("m1g2a3,n2g3a2"),
        "invalid schedule 'm1g2a3,n2g3a2': the merge takes in 1 remainder rank(s) but the \
         inverse merge serves 2; R must be the same in both"
    );
}

#[test]
fn schedules_that_do_not_fit_say_why_and_suggest_ones_that_do() {
    let msg = |t: &str, n: u32| {
        allreduce::generate(&rm(t), &spec(n, 1))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        msg("a8,a3", 7),
        "invalid schedule 'a8,a3': it does not fit 7 ranks: the factors 8 x 3 multiply to 24, \
         not 7; schedules that fit 7 ranks include 'a7', 'c6m2,a2,a2,e6m2', 'm1g2a3,n1g3a2'"
    );
    assert_eq!(
        msg("a8,a3,a4", 95),
        "invalid schedule 'a8,a3,a4': it does not fit 95 ranks: the factors 8 x 3 x 4 multiply \
         to 96, not 95; schedules that fit 95 ranks include 'a19,a5', \
         'c62m2,a2,a2,a2,a2,a2,a2,e62m2', 'm1g2a47,n1g47a2'"
    );
    assert_eq!(
        msg("c6m2,a2,a2,e6m2", 8),
        "invalid schedule 'c6m2,a2,a2,e6m2': it does not fit 8 ranks: the collapses leave 5 \
         ranks, but the factors 2 x 2 multiply to 4; schedules that fit 8 ranks include 'a8', \
         'a2,a2,a2'"
    );
    assert_eq!(
        msg("c8m2,a2,a2,e8m2", 7),
        "invalid schedule 'c8m2,a2,a2,e8m2': it does not fit 7 ranks: 'c8m2' folds the ranks \
         below T = 8, but only 7 ranks are there; schedules that fit 7 ranks include 'a7', \
         'c6m2,a2,a2,e6m2', 'm1g2a3,n1g3a2'"
    );
    assert_eq!(
        msg("m1g3a3,n1g3a2", 7),
        "invalid schedule 'm1g3a3,n1g3a2': it does not fit 7 ranks: 'm1g3a3' has G = 3 \
         groups, but 6 ranks in groups of 3 make G = 2; schedules that fit 7 ranks include \
         'a7', 'c6m2,a2,a2,e6m2', 'm1g2a3,n1g3a2'"
    );
    assert_eq!(
        msg("m7g2a3,n7g3a2", 7),
        "invalid schedule 'm7g2a3,n7g3a2': it does not fit 7 ranks: 'm7g2a3' sets 7 ranks \
         aside, but only 7 ranks are there; R must be smaller; schedules that fit 7 ranks \
         include 'a7', 'c6m2,a2,a2,e6m2', 'm1g2a3,n1g3a2'"
    );
    assert_eq!(
        msg("a2", 1),
        "invalid schedule 'a2': it does not fit 1 rank: the stage a2 spans 2 ranks, not 1; \
         schedules that fit 1 rank include '' (the empty schedule)"
    );
    // Even an empty vector is refused: the schedule is checked before anything is built.
    assert!(allreduce::generate(&rm("a4"), &spec(6, 0)).is_err());
    let mut p = Program::new();
    assert_eq!(
        allreduce::program(&rm("a4"), &spec(6, 1), 0, &mut p)
            .unwrap_err()
            .to_string(),
        msg("a4", 6)
    );
}

#[test]
fn algorithm_names_round_trip() {
    for (text, alg) in [
        ("rabenseifner", Algorithm::Rabenseifner),
        ("elimination", Algorithm::Elimination),
        (
            "mpich_recursive_multiplying:k=4",
            Algorithm::MpichRecursiveMultiplying { k: 4 },
        ),
        ("recursive_multiplying:a8,a3,a4", rm("a8,a3,a4")),
        (
            "recursive_multiplying:c6m2,a2,a2,e6m2",
            rm("c6m2,a2,a2,e6m2"),
        ),
        ("recursive_multiplying:m1g2a3,n1g3a2", rm("m1g2a3,n1g3a2")),
        ("recursive_multiplying:", rm("")),
    ] {
        assert_eq!(Algorithm::parse(text).unwrap(), alg, "{text}");
        assert_eq!(alg.name(), text);
        assert_eq!(alg.to_string(), text);
    }
    // Shorthands: a bare schedule; MPICH's default radix (MPIR_CVAR_ALLREDUCE_RECURSIVE_
    // MULTIPLYING_KVAL = 2).
    assert_eq!(Algorithm::parse("a8,a3,a4").unwrap(), rm("a8,a3,a4"));
    assert_eq!(
        Algorithm::parse("c6m2,a2,a2,e6m2").unwrap(),
        rm("c6m2,a2,a2,e6m2")
    );
    assert_eq!(
        Algorithm::parse("m3g2a2,n3g2a2").unwrap().name(),
        "recursive_multiplying:m3g2a2,n3g2a2"
    );
    assert_eq!(
        Algorithm::parse("mpich_recursive_multiplying").unwrap(),
        Algorithm::MpichRecursiveMultiplying { k: 2 }
    );
    assert_eq!(
        gen(&rm("a3,a2"), 6, 1).meta().name,
        "allreduce recursive_multiplying:a3,a2"
    );
}

#[test]
fn bad_algorithm_names_list_the_accepted_forms() {
    let accepted = "accepted: ring_rotate, ring, tree, recursive_doubling, rabenseifner, \
                    elimination, recursive_multiplying:SCHEDULE, mpich_recursive_multiplying";
    assert_eq!(
        err("butterfly"),
        format!("unknown allreduce algorithm 'butterfly'; {accepted}")
    );
    assert_eq!(
        err("recursive_multiplying"),
        "invalid allreduce algorithm spec 'recursive_multiplying': recursive_multiplying needs \
         a schedule, e.g. recursive_multiplying:a8,a3,a4"
    );
    assert_eq!(
        err("recursive_multiplying:a8,x3"),
        "invalid schedule 'a8,x3': stage 2: 'x3' is not a stage; accepted stages: aB (B >= 2), \
         cTmB, eTmB, mRgGaB, nRgGaB"
    );
    assert_eq!(
        err("mpich_recursive_multiplying:k=1"),
        "invalid allreduce algorithm spec 'mpich_recursive_multiplying:k=1': k=1: the radix is \
         2 ..= 65536"
    );
    assert_eq!(
        err("mpich_recursive_multiplying:4"),
        "invalid allreduce algorithm spec 'mpich_recursive_multiplying:4': '4' is not \
         key=value; mpich_recursive_multiplying takes keys k"
    );
    let bad = Algorithm::MpichRecursiveMultiplying { k: 70000 };
    assert_eq!(
        allreduce::generate(&bad, &spec(4, 1))
            .unwrap_err()
            .to_string(),
        "invalid mpich_recursive_multiplying radix '70000': the radix is 2 ..= 65536"
    );
}

// ---------------------------------------------------------------------------------------------
// Exact programs
// ---------------------------------------------------------------------------------------------

#[test]
fn a3_a2_on_six_ranks_is_the_seed_fig_17_program() {
    // Fig. 17: stage 1 (tag 0) exchanges in the groups {0,1,2} and {3,4,5}, stage 2 (tag 1) in
    // the pairs {0,3}, {1,4}, {2,5}. Sends go to w+1, w+2 (mod 3) as Algorithm 2 orders them;
    // each fold is ((v0 ⊕ v1) ⊕ v2) into scratch0, then the pair's lower value on the left
    // into out. Digit-2 ranks receive v0 plainly and reduce their own input at its place.
    let s = gen(&rm("a3,a2"), 6, 2);
    assert_eq!(
        ops_text(&s, 0),
        [
            "send in[0:2] to 1 tag 0",
            "send in[0:2] to 2 tag 0",
            "recv scratch0[0:2] from 1 tag 0 reduce after with in[0:2]",
            "recv scratch0[0:2] from 2 tag 0 reduce after",
            "send scratch0[0:2] to 3 tag 1",
            "recv out[0:2] from 3 tag 1 reduce after with scratch0[0:2]",
        ]
    );
    assert_eq!(
        ops_text(&s, 1),
        [
            "send in[0:2] to 2 tag 0",
            "send in[0:2] to 0 tag 0",
            "recv scratch0[0:2] from 0 tag 0 reduce before with in[0:2]",
            "recv scratch0[0:2] from 2 tag 0 reduce after",
            "send scratch0[0:2] to 4 tag 1",
            "recv out[0:2] from 4 tag 1 reduce after with scratch0[0:2]",
        ]
    );
    assert_eq!(
        ops_text(&s, 2),
        [
            "send in[0:2] to 0 tag 0",
            "send in[0:2] to 1 tag 0",
            "recv scratch0[0:2] from 0 tag 0",
            "recv scratch0[0:2] from 1 tag 0 reduce after",
            "reduce in[0:2] into scratch0[0:2] after",
            "send scratch0[0:2] to 5 tag 1",
            "recv out[0:2] from 5 tag 1 reduce after with scratch0[0:2]",
        ]
    );
    assert_eq!(
        ops_text(&s, 5),
        [
            "send in[0:2] to 3 tag 0",
            "send in[0:2] to 4 tag 0",
            "recv scratch0[0:2] from 3 tag 0",
            "recv scratch0[0:2] from 4 tag 0 reduce after",
            "reduce in[0:2] into scratch0[0:2] after",
            "send scratch0[0:2] to 2 tag 1",
            "recv out[0:2] from 2 tag 1 reduce before with scratch0[0:2]",
        ]
    );
    // The chain: each receive waits for the previous fold op; sends wait for the value.
    let p = s.program(2);
    let deps: Vec<(u32, u32)> = p.deps.iter().map(|(a, d)| (*a, d.on)).collect();
    assert_eq!(deps, [(3, 2), (4, 3), (5, 4), (6, 4)]);
    // Digits 0 and 1 share one program shape, digit 2 another.
    assert_eq!(s.num_shapes(), 2);
}

#[test]
fn seven_ranks_merge_in_exactly_two_stages() {
    // Fig. 7 / 21: rank 0 is the remainder; ranks 1-3 and 4-6 exchange in threes while rank 0
    // sends its value to 1, 2, 3 (tag 0); then the pairs {1,4}, {2,5}, {3,6} exchange while
    // 1 and 4 also send their partial results to rank 0 (tag 1), which reduces them itself.
    let s = gen(&rm("m1g2a3,n1g3a2"), 7, 2);
    assert_eq!(
        ops_text(&s, 0),
        [
            "send in[0:2] to 1 tag 0",
            "send in[0:2] to 2 tag 0",
            "send in[0:2] to 3 tag 0",
            "recv out[0:2] from 1 tag 1",
            "recv out[0:2] from 4 tag 1 reduce after",
        ]
    );
    assert_eq!(
        ops_text(&s, 1),
        [
            "send in[0:2] to 2 tag 0",
            "send in[0:2] to 3 tag 0",
            "recv scratch0[0:2] from 0 tag 0 reduce before with in[0:2]",
            "recv scratch0[0:2] from 2 tag 0 reduce after",
            "recv scratch0[0:2] from 3 tag 0 reduce after",
            "send scratch0[0:2] to 4 tag 1",
            "send scratch0[0:2] to 0 tag 1",
            "recv out[0:2] from 4 tag 1 reduce after with scratch0[0:2]",
        ]
    );
    assert_eq!(
        ops_text(&s, 3),
        [
            "send in[0:2] to 1 tag 0",
            "send in[0:2] to 2 tag 0",
            "recv scratch0[0:2] from 0 tag 0",
            "recv scratch0[0:2] from 1 tag 0 reduce after",
            "recv scratch0[0:2] from 2 tag 0 reduce after",
            "reduce in[0:2] into scratch0[0:2] after",
            "send scratch0[0:2] to 6 tag 1",
            "recv out[0:2] from 6 tag 1 reduce after with scratch0[0:2]",
        ]
    );
    assert_eq!(
        ops_text(&s, 6),
        [
            "send in[0:2] to 4 tag 0",
            "send in[0:2] to 5 tag 0",
            "recv scratch0[0:2] from 4 tag 0",
            "recv scratch0[0:2] from 5 tag 0 reduce after",
            "reduce in[0:2] into scratch0[0:2] after",
            "send scratch0[0:2] to 3 tag 1",
            "recv out[0:2] from 3 tag 1 reduce before with scratch0[0:2]",
        ]
    );
    // Two stages: every message carries tag 0 or 1, 3 + 6·2 + 6 + 2 = 23 messages in all.
    let mut msgs = 0;
    for r in 0..7 {
        let v = s.rank(r);
        for i in 0..v.len() {
            if let OpKind::Send { tag, .. } = v.op(i).kind {
                assert!(tag == 0 || tag == 1);
                msgs += 1;
            }
        }
    }
    assert_eq!(msgs, 23);
}

#[test]
fn merge_layout_puts_remainders_before_their_group() {
    // m3g2a2 on 7: group 0 (ranks 2, 3) takes in remainders 0 and 1, group 1 (ranks 5, 6)
    // remainder 4; remainders q = 0, 1, 2 (ranks 0, 1, 4) are served by the last stage's
    // groups q mod 2 = {2, 5}, {3, 6}, {2, 5}.
    let s = gen(&rm("m3g2a2,n3g2a2"), 7, 1);
    assert_eq!(sends(&s, 0), [(2, 0), (3, 0)]);
    assert_eq!(sends(&s, 1), [(2, 0), (3, 0)]);
    assert_eq!(sends(&s, 4), [(5, 0), (6, 0)]);
    assert_eq!(sends(&s, 2), [(3, 0), (5, 1), (0, 1), (4, 1)]);
    assert_eq!(sends(&s, 3), [(2, 0), (6, 1), (1, 1)]);
    assert_eq!(sends(&s, 5), [(6, 0), (2, 1), (0, 1), (4, 1)]);
}

#[test]
fn c6m2_is_mpich_recursive_doubling_up_to_tags() {
    // The generalised fix with B = 2 and T = 2·rem is MPICH's Algorithm 1, op for op (tags
    // aside). recursive_doubling adds one dependency we do not need: its exchange receive
    // always waits for the previous step's send, even when that send read the input.
    for n in [3u32, 5, 6, 7, 11, 12, 13] {
        let pof2 = 1u32 << (31 - n.leading_zeros());
        let rem = n - pof2;
        let mut st = format!("c{}m2", 2 * rem);
        for _ in 0..pof2.trailing_zeros() {
            st.push_str(",a2");
        }
        st.push_str(&format!(",e{}m2", 2 * rem));
        let a = gen(&rm(&st), n, 3);
        let b = gen(&Algorithm::RecursiveDoubling, n, 3);
        for r in 0..n {
            let (pa, pb) = (a.program(r), b.program(r));
            for d in &pa.deps {
                assert!(pb.deps.contains(d), "{st} rank {r}: {d:?}");
            }
            let strip = |p: &Program| -> Vec<String> {
                p.ops
                    .iter()
                    .map(|o| {
                        let t = o.to_string();
                        // Drop the tag: "... tag 3 reduce ..." -> "... reduce ...".
                        let mut w: Vec<&str> = t.split(' ').collect();
                        if let Some(i) = w.iter().position(|x| *x == "tag") {
                            w.drain(i..i + 2);
                        }
                        w.join(" ")
                    })
                    .collect()
            };
            assert_eq!(strip(&pa), strip(&pb), "{st} rank {r}");
        }
    }
}

#[test]
fn one_rank_alone_equals_the_whole_schedule() {
    let algs = [
        rm("a3,a2"),
        rm("c6m2,a2,a2,e6m2"),
        rm("m3g2a2,n3g2a2"),
        rm("c4m4,c2m2,m2g3a4,n2g4a3,e2m2,e4m4"),
        Algorithm::Rabenseifner,
        Algorithm::Elimination,
        Algorithm::MpichRecursiveMultiplying { k: 3 },
    ];
    let ns = [6u32, 7, 7, 18, 13, 13, 13];
    let mut p = Program::new();
    for (alg, n) in algs.iter().zip(ns) {
        for count in [1u64, 10] {
            let s = gen(alg, n, count);
            for r in 0..n {
                allreduce::program(alg, &spec(n, count), r, &mut p).unwrap();
                assert_eq!(p, s.program(r), "{alg} rank {r}");
            }
        }
    }
}

#[test]
fn rabenseifner_splits_uneven_counts_like_mpich() {
    // 4 ranks, 10 elements: chunks of 3, 3, 2, 2 (MPICH's cnts). Rank 0 keeps chunks 0-1
    // (6 elements), then chunk 0; the allgather returns chunk 1, then chunks 2-3.
    let s = gen(&Algorithm::Rabenseifner, 4, 10);
    assert_eq!(
        ops_text(&s, 0),
        [
            "send in[6:10] to 1 tag 1",
            "recv out[0:6] from 1 tag 1 reduce after with in[0:6]",
            "send out[3:6] to 2 tag 2",
            "recv out[0:3] from 2 tag 2 reduce after",
            "send out[0:3] to 2 tag 3",
            "recv out[3:6] from 2 tag 3",
            "send out[0:6] to 1 tag 4",
            "recv out[6:10] from 1 tag 4",
        ]
    );
    // Fewer elements than ranks: empty chunks get no message.
    let s = gen(&Algorithm::Rabenseifner, 8, 3);
    let msgs: usize = (0..8)
        .map(|r| {
            let v = s.rank(r);
            (0..v.len())
                .filter(|&i| matches!(v.op(i).kind, OpKind::Send { .. }))
                .count()
        })
        .sum();
    // Chunks 0, 1, 2 hold one element each, chunks 3-7 none. Reduce-scatter: step 0, the
    // upper rank of each pair sends chunks 0-3 (the lower would send the empty 4-7): 4
    // messages; step 1, both ranks of the pairs holding 0-3 send (chunks 0-1 and 2): 4;
    // step 2, ranks 0 and 4 swap chunks 0 and 1, rank 6 sends chunk 2 to rank 2 (rank 2's
    // chunk 3 is empty): 3. The allgather mirrors them: 22 in all.
    assert_eq!(msgs, 22);
}

#[test]
fn elimination_of_six_is_two_triples() {
    // 6 = 4 + 2: two 3-2 eliminations. Rank 2 hands its input to 1, then gets the result from
    // 0 and 1 in the last exchange; no expand stage.
    let s = gen(&Algorithm::Elimination, 6, 1);
    assert_eq!(
        ops_text(&s, 2),
        [
            "send in[0:1] to 1 tag 0",
            "recv out[0:1] from 0 tag 2",
            "recv out[0:1] from 1 tag 2 reduce after",
        ]
    );
    assert_eq!(
        ops_text(&s, 0),
        [
            "send in[0:1] to 3 tag 1",
            "recv scratch0[0:1] from 3 tag 1 reduce after with in[0:1]",
            "send scratch0[0:1] to 1 tag 2",
            "send scratch0[0:1] to 2 tag 2",
            "recv out[0:1] from 1 tag 2 reduce after with scratch0[0:1]",
        ]
    );
}

#[test]
fn mpich_recursive_multiplying_follows_mpich() {
    // k = 3 on 10 ranks: p = 9; rank 9 folds into rank 0, which reduces (x9 ⊕ x0) first.
    let s = gen(&Algorithm::MpichRecursiveMultiplying { k: 3 }, 10, 1);
    assert_eq!(
        ops_text(&s, 9),
        [
            "copy in[0:1] to out[0:1]",
            "send out[0:1] to 0 tag 0",
            "recv out[0:1] from 0 tag 3",
        ]
    );
    assert_eq!(
        ops_text(&s, 1),
        [
            "copy in[0:1] to out[0:1]",
            "send out[0:1] to 0 tag 1",
            "recv scratch0[0:1] from 0 tag 1",
            "send out[0:1] to 2 tag 1",
            "recv scratch1[0:1] from 2 tag 1",
            "reduce scratch0[0:1] into out[0:1] before",
            "reduce out[0:1] into scratch1[0:1] before",
            "copy scratch1[0:1] to out[0:1]",
            "send out[0:1] to 4 tag 2",
            "recv scratch0[0:1] from 4 tag 2",
            "send out[0:1] to 7 tag 2",
            "recv scratch1[0:1] from 7 tag 2",
            "reduce out[0:1] into scratch0[0:1] before",
            "reduce scratch0[0:1] into scratch1[0:1] before",
            "copy scratch1[0:1] to out[0:1]",
        ]
    );
    assert_eq!(
        &ops_text(&s, 0)[..4],
        [
            "copy in[0:1] to out[0:1]",
            "recv scratch0[0:1] from 9 tag 0",
            "reduce scratch0[0:1] into out[0:1] before",
            "send out[0:1] to 1 tag 1",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// The seed's simulator settings (section 6.2): latency 500 ns, pipeline latency 100 ns,
// 0.4 ns per byte, compute 10 ns; one 8-byte element (the seed's benchmark, section 5).
// ---------------------------------------------------------------------------------------------

const SEED_MODEL: &str = "pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0,delta=10ns";

fn seed_sim(alg: &Algorithm, n: u32) -> (u64, Vec<u64>) {
    let m = parse_model(SEED_MODEL).unwrap();
    let r = simulate(&gen(alg, n, 1), &m, &SimOptions::default()).unwrap();
    (r.completion, r.rank_finish)
}

/// Asserts the completion and every rank's finish time of `alg` on `finish.len()` ranks under
/// the seed's model; returns the completion.
fn assert_seed_sim(alg: &Algorithm, completion: u64, finish: &[u64]) -> u64 {
    let n = finish.len() as u32;
    let (t, f) = seed_sim(alg, n);
    assert_eq!(t, completion, "{alg} on {n} ranks");
    assert_eq!(f, finish, "{alg} on {n} ranks");
    t
}

#[test]
fn fig_18_and_19_by_hand() {
    // A message of 8 bytes: issued at t, the port is busy α_r + 8β = 103.2 ns, it arrives
    // 500 ns later; a fused receive-reduce adds δ = 10 ns.
    // Fig. 18, a2,a2,a2: three stages of one message and one reduction, 3 × 613.2 ns.
    assert_seed_sim(&rm("a2,a2,a2"), 1_839_600, &[1_839_600; 8]);
    // Fig. 19, a8: rank j sends to j+1, …, j+7 (mod 8) at 103.2 ns intervals, so it receives
    // from j−1, j−2, … in that order; its fold (v0 ⊕ v1 ⊕ …) waits for v_{j+1}, which comes
    // last at 500 + 7 × 103.2 = 1222.4 ns, then folds the 7 − j values from there on (10 ns
    // each); rank 7 waits for v0 (also last) and folds all 7: 1292.4 ns, the closed form
    // α_p + 7(α_r + nβ + δ).
    assert_seed_sim(
        &rm("a8"),
        1_292_400,
        &[
            1_292_400, 1_282_400, 1_272_400, 1_262_400, 1_252_400, 1_242_400, 1_232_400, 1_292_400,
        ],
    );
    assert_eq!(
        estimate(
            &ScheduleString::parse("a8").unwrap(),
            8,
            &Params::from_model(&parse_model(SEED_MODEL).unwrap(), 8).unwrap()
        )
        .unwrap(),
        1_292_400
    );
}

#[test]
fn fig_21_merging_by_hand() {
    // m1g2a3,n1g3a2. Stage 1: rank 0 sends to 1, 2, 3 (arriving 603.2, 706.4, 809.6 ns).
    // Rank 1 folds x0 ⊕ x1 at 613.2, ⊕ v2 (arrived 706.4) at 716.4, ⊕ v3 at 726.4; rank 2
    // takes x0 at 706.4 and is done at 736.4; rank 3 takes x0 at 809.6, done at 839.6; the
    // other group is a plain a3: ranks 4 and 6 at 726.4, rank 5 at 716.4.
    // Stage 2: ranks 1 and 4 (ready 726.4) exchange (arrival 1329.6, done 1339.6) and then
    // send to rank 0 (issued 829.6, arriving 1432.8); rank 0 folds them by 1442.8. Rank 3
    // (ready 839.6) sends to 6, arriving 1442.8: rank 6 finishes last at 1452.8.
    assert_seed_sim(
        &rm("m1g2a3,n1g3a2"),
        1_452_800,
        &[
            1_442_800, 1_339_600, 1_329_600, 1_339_600, 1_339_600, 1_349_600, 1_452_800,
        ],
    );
}

#[test]
fn fig_20_22_23_simulated() {
    // Fig. 20, the split c6m2,a2,a2,e6m2 (= MPICH's recursive doubling on 7): the folded
    // ranks wait for the collapse, so leaders finish the body at different times; the expand
    // ends at 2442.8 ns. Finish times spread over 1010 ns (the seed reports about 700).
    let t20 = assert_seed_sim(
        &rm("c6m2,a2,a2,e6m2"),
        2_442_800,
        &[
            1_932_800, 1_432_800, 2_442_800, 1_942_800, 2_442_800, 1_942_800, 1_839_600,
        ],
    );
    assert_eq!(seed_sim(&Algorithm::RecursiveDoubling, 7).0, t20);
    // Fig. 22, m3g2a2,n3g2a2: 1452.8 ns, spread 216.4 ns (the seed: within 200 ns).
    assert_seed_sim(
        &rm("m3g2a2,n3g2a2"),
        1_452_800,
        &[
            1_349_600, 1_452_800, 1_236_400, 1_339_600, 1_452_800, 1_246_400, 1_349_600,
        ],
    );
    // Merging beats splitting by 990 ns (the seed: "approximately one microsecond").
    let (t21, _) = seed_sim(&rm("m1g2a3,n1g3a2"), 7);
    assert_eq!(t20 - t21, 990_000);
    // Fig. 23, elimination on 6 ranks: the 3-2 eliminations overlap the first exchange, and
    // ranks 2 and 5 get their result in the last exchange (no expand stage), at 1942.8 ns.
    // MPICH's fold overlaps just as well here (its unfolded ranks start at once): recursive
    // doubling on 6 ranks takes 1932.8 ns, 10 ns less (t2 reduces the two values it gets).
    assert_seed_sim(
        &Algorithm::Elimination,
        1_942_800,
        &[
            1_839_600, 1_432_800, 1_942_800, 1_839_600, 1_432_800, 1_942_800,
        ],
    );
    assert_eq!(seed_sim(&Algorithm::RecursiveDoubling, 6).0, 1_932_800);
    // Elimination on 7 needs 2-1 eliminations and gains nothing (seed section 6.4).
    assert_eq!(seed_sim(&Algorithm::Elimination, 7).0, t20);
}

// ---------------------------------------------------------------------------------------------
// Closed forms against the simulator
// ---------------------------------------------------------------------------------------------

#[test]
fn the_closed_form_is_exact_for_every_factored_schedule() {
    // Pipelined model with every term non-zero, 3 float64 elements (24 bytes).
    let m = parse_model("pipelined:alpha_p=1.34us,alpha_r=340ns,beta=0.4ns,gamma=0.05ns,delta=7ns")
        .unwrap();
    let p = Params::from_model(&m, 24).unwrap();
    let opts = EnumerateOptions {
        split: false,
        merged: false,
        ..Default::default()
    };
    let mut checked = 0;
    for n in 1..=64u32 {
        for_each_schedule(n, &opts, &mut |s| {
            let sp = AllreduceSpec::new(n, 3, Dtype::Float64, ReduceOp::Sum);
            let sched =
                allreduce::generate(&Algorithm::RecursiveMultiplying(s.clone()), &sp).unwrap();
            let sim = simulate(&sched, &m, &SimOptions::default()).unwrap();
            assert_eq!(sim.completion, estimate(s, n, &p).unwrap(), "{s} on {n}");
            checked += 1;
        })
        .unwrap();
    }
    assert_eq!(checked, 441); // Σ_{N ≤ 64} H(N), computed independently
}

#[test]
fn postal_closed_forms_match_the_simulator() {
    // One model for both: the simulator runs the spec, the closed forms read the same
    // PostalModel.
    let model = parse_model("postal:alpha=1us,beta=0.4ns,gamma=0.1ns").unwrap();
    let ModelSpec::Postal(m) = model.clone() else {
        panic!("{model} is not the postal model")
    };
    assert_eq!(m, PostalModel::postal(1_000_000, 400.0, 100.0, 0));
    let sim = |alg: &Algorithm, n: u32, count: u64| {
        let sp = AllreduceSpec::new(n, count, Dtype::Float64, ReduceOp::Sum);
        let s = allreduce::generate(alg, &sp).unwrap();
        (
            simulate(&s, &model, &SimOptions::default())
                .unwrap()
                .completion,
            cost::allreduce(alg, &sp, &m),
        )
    };
    for (s, n) in [
        ("a8,a3,a4", 96u32),
        ("a6", 6),
        ("a2,a2,a2", 8),
        ("a3,a5", 15),
    ] {
        let (t, c) = sim(&rm(s), n, 5);
        assert_eq!(Ok(t), c, "{s}");
    }
    // Σ (B_i − 1)(α + nβ + nγ), n = 40 bytes: (7 + 2 + 3) × (1 µs + 16 ns + 4 ns).
    assert_eq!(sim(&rm("a8,a3,a4"), 96, 5).0, 12 * 1_020_000);
    for n in [2u32, 4, 8, 16, 32] {
        let (t, c) = sim(&Algorithm::Rabenseifner, n, 3 * n as u64);
        assert_eq!(Ok(t), c, "rabenseifner {n}");
        let (t, c) = sim(&Algorithm::Elimination, n, 3);
        assert_eq!(Ok(t), c, "elimination {n}");
    }
    for (k, n) in [(2u32, 16u32), (3, 27), (4, 64), (5, 5)] {
        let alg = Algorithm::MpichRecursiveMultiplying { k };
        let (t, c) = sim(&alg, n, 2);
        assert_eq!(Ok(t), c, "{alg} {n}");
    }
    // Where the ranks skew, no formula is claimed.
    let sp = AllreduceSpec::new(7, 1, Dtype::Float64, ReduceOp::Sum);
    assert_eq!(
        cost::allreduce(&rm("m1g2a3,n1g3a2"), &sp, &m)
            .unwrap_err()
            .to_string(),
        "invalid schedule 'm1g2a3,n1g3a2': collapse/expand and merge stages skew the ranks, so \
         there is no exact closed form; simulate, or use search::estimate for the model's \
         estimate"
    );
    assert!(cost::allreduce(&Algorithm::Rabenseifner, &sp, &m).is_err());
    assert!(cost::allreduce(&Algorithm::Elimination, &sp, &m).is_err());
    assert!(cost::allreduce(&Algorithm::MpichRecursiveMultiplying { k: 2 }, &sp, &m).is_err());
}
