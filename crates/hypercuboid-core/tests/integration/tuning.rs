//! Schedule search: the enumerator's lists and counts, the closed form, the dynamic program
//! against exhaustive search, b_opt (eq. 5), ranking and its limits.

use crate::common::expected;
use hypercuboid_core::collectives::allreduce::recursive_multiplying::search::{
    b_opt, b_opt_integer, collapse_for, count_schedules, enumerate_schedules, estimate,
    for_each_schedule, inner_sizes, lambert_w0, multiplicative_partitions, optimal_factored,
    ordered_factorisations, rank_schedules, suggest, Counts, EnumerateOptions, Method, Params,
    RankOptions, TuningError,
};
use hypercuboid_core::collectives::allreduce::ScheduleString;
use hypercuboid_core::model::{parse_model, PostalModel};
use hypercuboid_core::schedule::Dtype;

fn list(n: u32) -> Vec<String> {
    enumerate_schedules(n, &EnumerateOptions::default())
        .unwrap()
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn sched(s: &str) -> ScheduleString {
    ScheduleString::parse(s).unwrap()
}

const US: u64 = 1_000_000;

#[test]
fn enumerated_schedules_of_small_n_by_hand() {
    assert_eq!(list(1), [""]);
    assert_eq!(list(2), ["a2"]);
    // 3: the largest smaller size free of the prime 3 is 2; fold ranks 0 and 1 into 1.
    assert_eq!(list(3), ["a3", "c2m2,a2,e2m2"]);
    assert_eq!(list(4), ["a2,a2", "a4"]);
    // 5: inner size 4 with factors below 5: split with bodies a4 and a2,a2; one merge.
    assert_eq!(
        list(5),
        ["a5", "c2m2,a4,e2m2", "c2m2,a2,a2,e2m2", "m1g2a2,n1g2a2"]
    );
    // 6 = 2·3: inner size 4 (5 keeps a factor >= 3) with factors below 3: MPICH's fix and a
    // merge of 2.
    assert_eq!(
        list(6),
        ["a2,a3", "a3,a2", "a6", "c4m2,a2,a2,e4m2", "m2g2a2,n2g2a2"]
    );
    // 7: inner sizes 6 (collapse 1 extra rank: c2m2) and 4 (collapse 3: c6m2), bodies with
    // factors below 7; the seed's Figs. 20-22 are among them.
    assert_eq!(list(7), expected("recursive_multiplying_schedules_of_7"));
    assert_eq!(list(8), ["a2,a2,a2", "a2,a4", "a4,a2", "a8"]);
    // 12 = 2²·3: inner size 8 with factors below 3.
    assert_eq!(
        list(12),
        [
            "a2,a2,a3",
            "a2,a3,a2",
            "a2,a6",
            "a3,a2,a2",
            "a3,a4",
            "a4,a3",
            "a6,a2",
            "a12",
            "c8m2,a2,a2,a2,e8m2",
            "m4g4a2,a2,n4g4a2",
        ]
    );
}

#[test]
fn counts_match_the_lists_and_known_values() {
    for n in 1..=300u32 {
        let c = count_schedules(n, &EnumerateOptions::default()).unwrap();
        let l = enumerate_schedules(n, &EnumerateOptions::default()).unwrap();
        assert_eq!(c.total(), l.len() as u128, "n={n}");
        assert_eq!(
            c.factored,
            l.iter().filter(|s| s.is_factored()).count() as u128
        );
    }
    // H(n), the ordered factorisations (OEIS A074206): H(720) = 1888, H(5040) = 20128,
    // H(2^16) = 2^15, H(10^6) = 287648, H(2^20) = 2^19.
    assert_eq!(ordered_factorisations(720), 1888);
    assert_eq!(ordered_factorisations(5040), 20128);
    assert_eq!(ordered_factorisations(65536), 32768);
    assert_eq!(ordered_factorisations(1_000_000), 287_648);
    assert_eq!(ordered_factorisations(1 << 20), 1 << 19);
    // Multiplicative partitions (A001055): 8 -> 3, 12 -> 4, 2^7 -> p(7) = 15.
    assert_eq!(multiplicative_partitions(8), 3);
    assert_eq!(multiplicative_partitions(12), 4);
    assert_eq!(multiplicative_partitions(128), 15);
    let c = |n| count_schedules(n, &EnumerateOptions::default()).unwrap();
    assert_eq!(
        c(720),
        Counts {
            factored: 1888,
            split: 7,
            merged: 7
        }
    );
    assert_eq!(
        c(5040),
        Counts {
            factored: 20128,
            split: 9,
            merged: 9
        }
    );
    assert_eq!(
        c(65536),
        Counts {
            factored: 32768,
            split: 0,
            merged: 0
        }
    );
    // A prime: one factored schedule, everything else goes through 65536.
    assert_eq!(
        c(65537),
        Counts {
            factored: 1,
            split: 231,
            merged: 230
        }
    );
    assert_eq!(inner_sizes(7).unwrap(), [6, 4]);
    assert_eq!(inner_sizes(720).unwrap(), [648, 512]);
    assert_eq!(inner_sizes(5040).unwrap(), [5000, 4096]);
    assert_eq!(inner_sizes(1021).unwrap(), [1020, 512]);
    assert!(inner_sizes(1 << 20).unwrap().is_empty());
    assert_eq!(collapse_for(7, 3), Some((6, 2)));
    // 9 ranks onto 2: 7 extra ranks; B = 2 would need T = 14 > 9, B = 8 folds 8 into 1.
    assert_eq!(collapse_for(9, 7), Some((8, 8)));
}

#[test]
fn the_cap_refuses_before_enumerating() {
    let opts = EnumerateOptions {
        max_schedules: 1000,
        ..Default::default()
    };
    let e = enumerate_schedules(720, &opts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "720 ranks have 1902 schedules, more than the cap of 1000; raise the cap, or use the \
         dynamic program (optimal_factored), which finds the model-optimal factored schedule \
         without enumerating"
    );
    assert!(matches!(e, TuningError::TooMany { count: 1902, .. }));
    assert_eq!(
        inner_sizes(1 << 25).unwrap_err().to_string(),
        "invalid nranks '33554432': split and merged schedules are enumerated up to 16777216 \
         ranks"
    );
}

#[test]
fn dynamic_program_equals_exhaustive_search_up_to_256() {
    // Several machines: the paper's Table 1 fits, Fig. 4's α_p/α_r = 4, ratio 1, ratio 100,
    // and one with every bandwidth and reduction term.
    let params = [
        Params::table1_minimum(),
        Params::table1_median(),
        Params::latency(US, US / 4),
        Params::latency(500_000, 500_000),
        Params::latency(10 * US, 100_000),
        Params {
            model: PostalModel {
                alpha_p: 500_000,
                alpha_r: 100_000,
                beta: 400.0,
                gamma: 50.0,
                delta: 10_000,
            },
            bytes: 64,
        },
    ];
    let factored = EnumerateOptions {
        split: false,
        merged: false,
        max_schedules: 0,
        ..Default::default()
    };
    for p in &params {
        for n in 1..=256u32 {
            let mut best = u64::MAX;
            for_each_schedule(n, &factored, &mut |s| {
                best = best.min(estimate(s, n, p).unwrap());
            })
            .unwrap();
            let o = optimal_factored(n, p).unwrap();
            assert_eq!(o.time, best, "n={n} {p:?}");
            assert_eq!(estimate(&o.schedule, n, p).unwrap(), o.time);
            assert_eq!(o.schedule.nranks(), Some(n));
        }
    }
}

#[test]
fn dynamic_program_at_scale() {
    // Table 1 minimum: α_p = 1.34 µs, α_r = 0.34 µs. A stage of B costs α_p + (B − 1)α_r per
    // log2 B doublings: 1.68 (B=2), 2.36/2 = 1.18 (B=4), 2.70/log2 5 = 1.163 (B=5), 3.72/3 =
    // 1.24 (B=8). So 2^20 = 4^10 costs 10 × 2.36 = 23.6 µs and 10^6 = 5^6·4^3 costs
    // 6 × 2.70 + 3 × 2.36 = 23.28 µs.
    let p = Params::table1_minimum();
    let o = optimal_factored(1 << 20, &p).unwrap();
    assert_eq!(o.schedule.to_string(), "a4,a4,a4,a4,a4,a4,a4,a4,a4,a4");
    assert_eq!(o.time, 23_600_000);
    assert_eq!(o.divisors, 21);
    let o = optimal_factored(1_000_000, &p).unwrap();
    assert_eq!(o.schedule.to_string(), "a5,a5,a5,a5,a5,a5,a4,a4,a4");
    assert_eq!(o.time, 23_280_000);
    assert_eq!(o.divisors, 49);
    // A highly composite N: 720720 = 2^4·3^2·5·7·11·13 (240 divisors).
    let o = optimal_factored(720_720, &p).unwrap();
    assert_eq!(o.schedule.to_string(), "a13,a11,a7,a6,a6,a5,a4");
    assert_eq!(o.divisors, 240);
    // A prime has one factored schedule.
    assert_eq!(
        optimal_factored(4_294_967_291, &p)
            .unwrap()
            .schedule
            .to_string(),
        "a4294967291"
    );
}

#[test]
fn b_opt_is_eq_5() {
    // Eq. 5 solves (b + 1)(ln(b + 1) − 1) = ratio − 1; at ratio 1 that is b + 1 = e.
    let e = std::f64::consts::E;
    assert!((b_opt(1.0).unwrap() - (e - 1.0)).abs() < 1e-12);
    for (ratio, expect) in [
        (2.0, 2.591_121_476_668_622_6),
        (4.0, 3.970_625_759_544_232),
        (10.0, 7.174_364_667_724_808),
        (100.0, 36.661_923_488_098_95),
    ] {
        let b = b_opt(ratio).unwrap();
        assert!((b - expect).abs() < 1e-9, "ratio {ratio}: {b}");
        let u = b + 1.0;
        assert!((u * (u.ln() - 1.0) - (ratio - 1.0)).abs() < 1e-9);
    }
    // Below the continuous optimum, the integer one: ratio 1 gives b = 2 (a 3-way exchange,
    // 3/ln 3 = 2.73 against 2/ln 2 = 2.89 for pairwise exchange); ratio 4 gives 4.
    assert_eq!(b_opt_integer(1.0).unwrap(), 2);
    assert_eq!(b_opt_integer(4.0).unwrap(), 4);
    assert_eq!(b_opt(0.0).unwrap(), 0.0);
    assert_eq!(
        b_opt(-1.0).unwrap_err().to_string(),
        "invalid alpha_p / alpha_r '-1': the overlap ratio is a finite number >= 0 (the paper \
         calls ratios below 1 unreasonable)"
    );
    assert!((lambert_w0(1.0) - 0.567_143_290_409_783_8).abs() < 1e-15);
}

#[test]
fn estimates_of_the_seed_examples() {
    // The seed's simulator settings as the closed form sees them (8-byte vectors):
    // c_m = 100 + 3.2 = 103.2 ns, c_r = 10 ns.
    let m =
        parse_model("pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0,delta=10ns").unwrap();
    let p = Params::from_model(&m, 8).unwrap();
    let e = |s: &str, n: u32| estimate(&sched(s), n, &p).unwrap();
    assert_eq!(e("a2,a2,a2", 8), 3 * 613_200);
    assert_eq!(e("a8", 8), 500_000 + 7 * 113_200);
    // Collapse (1 message, 1 reduction), two a2 stages, expand (1 message).
    assert_eq!(e("c6m2,a2,a2,e6m2", 7), 613_200 + 2 * 613_200 + 603_200);
    // Merge: a remainder sends 3 messages, a member folds 3 values (⌈1/2⌉ + 2 reductions);
    // inverse merge: group 0 sends 1 + ⌈1/3⌉ = 2 messages, 1 reduction.
    assert_eq!(
        e("m1g2a3,n1g3a2", 7),
        (500_000 + 3 * 103_200 + 3 * 10_000) + (500_000 + 2 * 103_200 + 10_000)
    );
    // The paper's Σ (α_p + b_i α_r) for small messages.
    let t1 = Params::table1_minimum();
    assert_eq!(
        estimate(&sched("a8,a3,a4"), 96, &t1).unwrap(),
        3 * 1_340_000 + (7 + 2 + 3) * 340_000
    );
    assert!(estimate(&sched("a8"), 7, &t1).is_err());
    assert_eq!(
        Params::from_model(&parse_model("loggops:L=1us,o=1us,g=1us,G=0").unwrap(), 8)
            .unwrap_err()
            .to_string(),
        "invalid model 'loggops': the closed form is the pipelined postal model's (postal or \
         pipelined); simulate to rank schedules under LogGOPS"
    );
}

#[test]
fn ranking_table_2_process_counts() {
    // The model's best schedule for the seed's Table 2 process counts with Table 1's minimum
    // fit, first by (time, stages, text); the paper's measured best in the comment.
    let p = Params::table1_minimum();
    let best = |n| {
        let r = rank_schedules(n, &p, &RankOptions::default()).unwrap();
        (r.rows[0].schedule.to_string(), r.rows[0].predicted)
    };
    assert_eq!(best(4), ("a4".into(), 2_360_000)); // a4
    assert_eq!(best(6), ("a6".into(), 3_040_000)); // a6
    assert_eq!(best(8), ("a8".into(), 3_720_000)); // a2,a4 (4.04 µs in the model)
    assert_eq!(best(12), ("a3,a4".into(), 4_380_000)); // a3,a4
    assert_eq!(best(16), ("a4,a4".into(), 4_720_000)); // a4,a4
    assert_eq!(best(24), ("a4,a6".into(), 5_400_000)); // a4,a6
    assert_eq!(best(32), ("a4,a8".into(), 6_080_000)); // a8,a4 (same time)
    assert_eq!(best(48), ("a3,a4,a4".into(), 6_740_000)); // a8,a6 (6.76 µs)
    assert_eq!(best(64), ("a4,a4,a4".into(), 7_080_000)); // a8,a8 (7.44 µs)
    assert_eq!(best(96), ("a4,a4,a6".into(), 7_760_000)); // a8,a3,a4 (8.10 µs)
    assert_eq!(best(128), ("a4,a4,a8".into(), 8_440_000)); // a8,a4,a4 (same time)
}

#[test]
fn ranking_orders_rows_and_simulates_on_request() {
    let p = Params::table1_minimum();
    let r = rank_schedules(8, &p, &RankOptions::default()).unwrap();
    let rows: Vec<(String, u64)> = r
        .rows
        .iter()
        .map(|x| (x.schedule.to_string(), x.predicted))
        .collect();
    assert_eq!(
        rows,
        [
            ("a8".to_string(), 3_720_000),
            ("a2,a4".to_string(), 4_040_000),
            ("a4,a2".to_string(), 4_040_000),
            ("a2,a2,a2".to_string(), 5_040_000),
        ]
    );
    assert_eq!(
        r.method,
        Method::Exhaustive {
            counts: Counts {
                factored: 4,
                split: 0,
                merged: 0
            }
        }
    );
    assert!((r.b_opt.unwrap() - b_opt(1.34 / 0.34).unwrap()).abs() < 1e-12);
    // Simulated under the same model, the factored schedules take exactly their closed form;
    // the split and merged ones of 7 ranks are ranked by simulation (the two merges tie at
    // 1452.8 ns and are ordered by their text).
    let m =
        parse_model("pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0,delta=10ns").unwrap();
    let opts = RankOptions {
        top: 3,
        simulate: Some(m.clone()),
        count: 1,
        dtype: Dtype::Int64,
        ..Default::default()
    };
    let r = rank_schedules(7, &Params::from_model(&m, 8).unwrap(), &opts).unwrap();
    assert_eq!(r.simulated, 7);
    let rows: Vec<(String, u64, Option<u64>)> = r
        .rows
        .iter()
        .map(|x| (x.schedule.to_string(), x.predicted, x.simulated))
        .collect();
    assert_eq!(
        rows,
        [
            ("a7".to_string(), 1_179_200, Some(1_179_200)),
            ("m1g2a3,n1g3a2".to_string(), 1_556_000, Some(1_452_800)),
            ("m3g2a2,n3g2a2".to_string(), 1_556_000, Some(1_452_800)),
        ]
    );
    // The vector must match the model's bytes.
    let bad = RankOptions {
        count: 2,
        ..opts.clone()
    };
    assert_eq!(
        rank_schedules(7, &Params::from_model(&m, 8).unwrap(), &bad)
            .unwrap_err()
            .to_string(),
        "invalid count '2': count x 8 bytes must equal the model's vector of 8 bytes"
    );
}

#[test]
fn too_many_schedules_fall_back_to_the_dynamic_program() {
    let p = Params::table1_minimum();
    let r = rank_schedules(1_000_000, &p, &RankOptions::default()).unwrap();
    assert_eq!(r.rows.len(), 1);
    assert_eq!(r.rows[0].schedule.to_string(), "a5,a5,a5,a5,a5,a5,a4,a4,a4");
    assert_eq!(
        r.method,
        Method::DynamicProgram {
            reason: "287682 schedules (287648 factored) exceed the cap of 200000".into(),
            divisors: 49
        }
    );
    let r = rank_schedules(u32::MAX - 1, &p, &RankOptions::default()).unwrap();
    assert!(matches!(r.method, Method::DynamicProgram { ref reason, .. }
        if reason == "4294967294 ranks is beyond the enumerator's 16777216"));
}

#[test]
fn suggestions_fit() {
    for n in 1..=300u32 {
        let s = suggest(n);
        assert!(!s.is_empty(), "n={n}");
        for x in &s {
            assert_eq!(x.nranks(), Some(n), "{x} for {n}");
        }
    }
    let txt: Vec<String> = suggest(7).iter().map(|s| s.to_string()).collect();
    assert_eq!(txt, ["a7", "c6m2,a2,a2,e6m2", "m1g2a3,n1g3a2"]);
}
