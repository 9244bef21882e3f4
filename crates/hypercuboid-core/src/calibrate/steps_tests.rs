//! [`fit_chains`] and [`fit_steps`]: the values the Python fit (`mpi/calibrate.py`'s
//! `fit_exchange` and `fit_steps`, before they moved here) gave on measurements recorded by
//! `mpiexec -n 2 hypercuboid calibrate` on this machine, a known machine recovered from
//! synthetic chains, and bad input.
//!
//! The expected values were printed with Python's `repr` (shortest round trip), so the same
//! literals here are the same doubles. The parameters are equal to the last bit. R² of
//! `fit_steps` is the core's [`r_squared`] where the Python fit used NumPy (pairwise sums of
//! `w²·…` instead of sequential sums of `(w·…)²`): it agrees within 1e-12.

use super::tests::{noise, within};
use super::*;

/// The sizes and step counts of both kinds of chain (each size with 1, 2 and 4 steps).
const CHAIN_SIZES: [f64; 69] = [
    1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 4.0, 4.0, 4.0, 8.0, 8.0, 8.0, 16.0, 16.0, 16.0, 32.0, 32.0, 32.0,
    64.0, 64.0, 64.0, 128.0, 128.0, 128.0, 256.0, 256.0, 256.0, 512.0, 512.0, 512.0, 1024.0,
    1024.0, 1024.0, 2048.0, 2048.0, 2048.0, 4096.0, 4096.0, 4096.0, 8192.0, 8192.0, 8192.0,
    16384.0, 16384.0, 16384.0, 32768.0, 32768.0, 32768.0, 65536.0, 65536.0, 65536.0, 131072.0,
    131072.0, 131072.0, 262144.0, 262144.0, 262144.0, 524288.0, 524288.0, 524288.0, 1048576.0,
    1048576.0, 1048576.0, 2097152.0, 2097152.0, 2097152.0, 4194304.0, 4194304.0, 4194304.0,
];
const CHAIN_STEPS: [f64; 69] = [
    1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0,
    2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0,
    4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0,
    1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 4.0,
];
const EXCHANGE_TIMES: [f64; 69] = [
    0.2909999996525414,
    0.5810000001105209,
    1.2119999999171682,
    0.29100000009663063,
    0.5810000001105209,
    1.2119999999171682,
    0.29100000009663063,
    0.5910000000497462,
    1.2220000003004827,
    0.29999999995311555,
    0.5899999999670058,
    1.2120000003612574,
    0.29999999995311555,
    0.5809999996664317,
    1.1920000000387176,
    0.28100000015740534,
    0.5700000000885552,
    1.1820000000994924,
    0.28100000015740534,
    0.5700000000885552,
    1.201999999977943,
    0.29100000009663063,
    0.5809999996664317,
    1.1920000000387176,
    0.29000000001389026,
    0.5809999996664317,
    1.2119999999171682,
    0.4600000003129878,
    0.861999999823837,
    1.7225000001896973,
    0.4709999998908643,
    0.8910000000028617,
    1.7930000000276891,
    0.5110000000918546,
    0.9510000000823027,
    1.9129999997424818,
    2.2429999999573624,
    4.456999999291611,
    8.882999999570984,
    2.4539999996520123,
    4.897000000170237,
    9.784999999595811,
    2.9540000001659905,
    5.749000000498938,
    11.527500000330093,
    3.844999999724763,
    7.651999999858106,
    15.313000000460875,
    5.7689999994892105,
    11.42700000045238,
    22.793999999937142,
    9.303500000168441,
    27.490999999990606,
    63.804999999916845,
    16.59499999995262,
    49.67399999999955,
    116.77449999991651,
    34.09599999981694,
    102.75799999970303,
    242.74750000019552,
    71.6920000001231,
    216.386999999596,
    576.3544999997094,
    183.32849999991296,
    429.9809999999127,
    13703.478500000088,
    239.03149999959794,
    27998.194000001142,
    14457.928500001493,
];
const ONE_WAY_TIMES: [f64; 69] = [
    0.2810000019337622,
    0.3810000031023719,
    0.7920000015815276,
    0.28999999912571184,
    0.38099999954965824,
    0.8009999987734773,
    0.2810000019337622,
    0.38099999954965824,
    0.7919999980288139,
    0.28999999912571184,
    0.38099999954965824,
    0.810999999600881,
    0.2800000018510218,
    0.3909999968243483,
    0.7910000014987872,
    0.27999999829830813,
    0.39100000037706195,
    0.8009999987734773,
    0.2909999992084522,
    0.4000000011217253,
    0.8009999987734773,
    0.2800000018510218,
    0.39100000037706195,
    0.8210000004282847,
    0.28999999912571184,
    0.41100000025551253,
    0.8610000001851859,
    0.33099999896535337,
    0.6009999999889715,
    1.1919999991505392,
    0.3510000006201608,
    0.6100000007336348,
    1.2120000008053466,
    0.39999999934536845,
    0.6809999995027738,
    1.3420000009034538,
    2.1329999988495274,
    4.167000000165899,
    8.302499999501833,
    2.2629999989476346,
    4.586999999389718,
    9.113000000837701,
    2.6950000027170518,
    5.488500001149532,
    10.93599999890671,
    3.59050000042771,
    7.29099999929872,
    14.61200000107965,
    5.338000001131604,
    11.03700000015806,
    22.123000000817683,
    8.984000000822334,
    18.16699999679372,
    36.574999999317015,
    16.449999998613407,
    33.72000000112507,
    70.11999999839702,
    49.07299999956649,
    83.59999999996148,
    132.8234999995459,
    67.78100000026654,
    141.29550000063773,
    292.68099999946173,
    146.8489999982836,
    270.4535000006558,
    25848.307500000446,
    455.5294999999404,
    1273.879499999353,
    1529.8969999992805,
];
const EXCHANGE_STEP: [f64; 23] = [
    0.2946115190773428,
    0.2946115192328938,
    0.2970895387384079,
    0.29926022447673545,
    0.29605238053257377,
    0.2869103160943423,
    0.28835620630466197,
    0.2930876715337227,
    0.29425967496066935,
    0.43971052376227826,
    0.454357130961008,
    0.4872212471658542,
    2.2306739210812117,
    2.4495746889215115,
    2.9025835291999345,
    3.833045928608412,
    5.726680367383986,
    11.6926262952429,
    20.97489577764614,
    43.21014367487454,
    91.82051367822648,
    202.0037488929198,
    257.7182074781058,
];
const ONE_WAY_STEP: [f64; 23] = [
    0.15945761519530902,
    0.1616540015576004,
    0.15945761399087316,
    0.16248433610258584,
    0.16166873343932495,
    0.16254218909344878,
    0.16659400839656202,
    0.164207006100722,
    0.17431178511921863,
    0.25127312167928206,
    0.26073571068849716,
    0.29890579035689235,
    2.037482354660764,
    2.2178454034017077,
    2.663611732259239,
    3.568714378698881,
    5.398476497937745,
    9.008952440861636,
    16.8619137163226,
    39.229633126290864,
    70.3330177004546,
    141.98238287534386,
    451.7734795817973,
];
const PREDICTED: [f64; 46] = [
    0.1585442939986289,
    0.15860977472408683,
    0.1587407361750027,
    0.15900265907683445,
    0.1595265048804979,
    0.16057419648782487,
    0.16266957970247878,
    0.16686034613178655,
    0.17524187899040217,
    0.2399704012179889,
    0.2734965326524513,
    0.340548795521376,
    1.8874839259817533,
    2.155692977457452,
    2.69211108040885,
    3.7649472863116458,
    5.9106196981172365,
    10.201964521728419,
    18.784654168950784,
    35.95003346339551,
    70.28079205228498,
    138.9423092300639,
    276.26534358562174,
    0.29422850052109506,
    0.2943014801141975,
    0.29444743930040235,
    0.2947393576728121,
    0.29532319441763155,
    0.2964908679072705,
    0.29882621488654837,
    0.3034969088451041,
    0.3128382967622156,
    0.37948652910679403,
    0.4168520807752399,
    0.49158318411213164,
    2.053875995508443,
    2.3528004088560097,
    2.9506492355511433,
    4.1463468889414115,
    6.537742195721947,
    11.320532809283018,
    20.886114036405157,
    40.017276490649444,
    78.27960139913802,
    154.80425121611512,
    307.85355085006944,
];
const PREDICTED_ONE_WAY: [f64; 23] = [
    0.15997280121635973,
    0.16003828194181766,
    0.16016924339273353,
    0.16043116629456527,
    0.16095501209822874,
    0.1620027037055557,
    0.1640980869202096,
    0.16828885334951738,
    0.176670386208133,
    0.228595718922825,
    0.26212185035728736,
    0.3291741132262121,
    1.8783342139036345,
    2.146543265379333,
    2.682961368330731,
    3.755797574233527,
    5.9014699860391175,
    10.192814809650299,
    18.775504456872667,
    35.94088375131739,
    70.27164234020685,
    138.93315951798579,
    276.25619387354357,
];

/// The sender's `o` of the recorded run (its delayed train's slope).
const O: f64 = 0.06898624310316344;

fn chains() -> (ChainFit, ChainFit) {
    let ex = fit_chains(&CHAIN_SIZES, &CHAIN_STEPS, &EXCHANGE_TIMES).unwrap();
    let one = fit_chains(&CHAIN_SIZES, &CHAIN_STEPS, &ONE_WAY_TIMES).unwrap();
    (ex, one)
}

fn steps(c: &ChainFit) -> Steps<'_> {
    Steps {
        sizes: &c.sizes,
        times: &c.step,
    }
}

#[test]
fn recorded_chains_give_the_python_fit_exactly() {
    let (ex, one) = chains();
    let sizes: Vec<f64> = (0..23).map(|k| f64::from(1 << k)).collect();
    assert_eq!(
        (ex.sizes.as_slice(), one.sizes.as_slice()),
        (&sizes[..], &sizes[..])
    );
    assert_eq!((ex.call, ex.r2), (0.0, 0.9113161105222135));
    assert_eq!(
        (one.call, one.r2),
        (0.10292110448764816, 0.9624146415971111)
    );
    assert_eq!(ex.step, EXCHANGE_STEP);
    assert_eq!(one.step, ONE_WAY_STEP);
    for (c, times) in [(&ex, &EXCHANGE_TIMES), (&one, &ONE_WAY_TIMES)] {
        for ((r, t), p) in c.residuals.iter().zip(times).zip(&c.predicted) {
            assert_eq!(*r, t - p);
        }
    }
}

#[test]
fn recorded_steps_give_the_python_fit_exactly() {
    let (ex, one) = chains();
    let f = fit_steps(O, steps(&one), Some(steps(&ex)), 4).unwrap();
    assert_eq!((f.latency, f.latency_excess), (0.020571807792302027, 0.0));
    assert_eq!(
        (f.gap_per_byte, f.two_flows_gap_per_byte),
        (6.54807254579343e-05, 7.297959310243333e-05)
    );
    assert_eq!((f.eager_limit, f.eager_found), (2048.0, true));
    assert_eq!(f.rendezvous, 1.4128306047225276);
    assert_eq!(
        (f.second_limit, f.second_rendezvous),
        (Some(256.0), 0.04796545651035558)
    );
    assert_eq!(f.exchange_wait, 0.13568420652246616);
    assert_eq!(
        f.switches,
        vec![(2048.0, 1.5036746770299023), (256.0, 0.09908173649660619)]
    );
    assert_eq!(f.breaks, vec![vec![4096.0], vec![4096.0]]);
    assert_eq!(f.predicted, PREDICTED);
    assert!((f.r2 - 0.9816015167449718).abs() < 1e-12, "{}", f.r2);
    // the rows: the one-way steps, then the exchanges; residuals measured less predicted
    assert_eq!(f.sizes, [one.sizes.clone(), ex.sizes.clone()].concat());
    assert_eq!(f.times, [one.step.clone(), ex.step.clone()].concat());
    assert_eq!(f.exchange, [[false; 23], [true; 23]].concat());
    for ((r, t), p) in f.residuals.iter().zip(&f.times).zip(&f.predicted) {
        assert_eq!(*r, t - p);
    }
}

#[test]
fn recorded_one_way_steps_alone_give_the_python_fit_exactly() {
    let (_, one) = chains();
    let f = fit_steps(O, steps(&one), None, 4).unwrap();
    assert_eq!((f.latency, f.latency_excess), (0.022000315010032856, 0.0));
    assert_eq!(
        (f.gap_per_byte, f.two_flows_gap_per_byte),
        (6.54807254579343e-05, 6.54807254579343e-05)
    );
    assert_eq!((f.eager_limit, f.eager_found), (2048.0, true));
    assert_eq!(f.rendezvous, 1.4150555749395728);
    assert_eq!(
        (f.second_limit, f.second_rendezvous, f.exchange_wait),
        (Some(256.0), 0.03516226699746083, 0.0)
    );
    assert_eq!(
        f.switches,
        vec![(2048.0, 1.5214947268073948), (256.0, 0.0625309665590362)]
    );
    assert_eq!(f.breaks, vec![vec![4096.0]]);
    assert_eq!(f.predicted, PREDICTED_ONE_WAY);
    assert!((f.r2 - 0.9788592285661715).abs() < 1e-12, "{}", f.r2);
    assert!(f.exchange.iter().all(|x| !x));
}

#[test]
fn a_known_machine_is_recovered_within_two_percent_from_its_chains_and_trains() {
    // µs and bytes: LogGOPS L, o, g, G, O = 0 (a per-byte CPU overhead is not told apart from G
    // by these measurements; calibrate writes O=0); eager up to S, R more above; a second
    // switch above S2 costs R2; an exchange's two flows share the node (G2 per byte each) and
    // a message waits X at a rank that is sending too; every call costs C more
    let (l, o, g, big_g, s, r, s2, r2) = (0.5, 0.08, 0.1, 1e-4, 4096.0, 2.0, 256.0, 0.3);
    let (g2, x, call) = (1.5e-4, 0.15, 0.2);
    let step = |size: f64, per_byte: f64| {
        l + 2.0 * o
            + (size - 1.0) * per_byte
            + if size > s { r } else { 0.0 }
            + if size > s2 { r2 } else { 0.0 }
    };
    let sizes: Vec<f64> = (0..23).map(|k| f64::from(1 << k)).collect();
    let mut rows = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &size in &sizes {
        for k in [1.0, 2.0, 4.0] {
            rows.0.push(size);
            rows.1.push(k);
            rows.2.push(call + k * step(size, big_g));
            rows.3.push(call + k * (step(size, g2) + x));
        }
    }
    // 0.2 % noise: C is the intercept of 1 to 4 steps, its error several times the noise
    let e1 = noise(rows.2.len(), 0.002, 1);
    let e2 = noise(rows.3.len(), 0.002, 2);
    let one_t: Vec<f64> = rows.2.iter().zip(&e1).map(|(t, e)| t * e).collect();
    let ex_t: Vec<f64> = rows.3.iter().zip(&e2).map(|(t, e)| t * e).collect();
    let one = fit_chains(&rows.0, &rows.1, &one_t).unwrap();
    let ex = fit_chains(&rows.0, &rows.1, &ex_t).unwrap();
    assert!(
        within(one.call, call, 0.02) && within(ex.call, call, 0.02),
        "{} {}",
        one.call,
        ex.call
    );
    // o and g from the issue-rate trains, as calibrate fits them
    let m: Vec<f64> = (0..7).map(|k| f64::from(1 << k)).collect();
    let train: Vec<f64> = m
        .iter()
        .zip(noise(7, 0.002, 3))
        .map(|(m, e)| (0.05 + g * m) * e)
        .collect();
    let delayed: Vec<f64> = m
        .iter()
        .zip(noise(7, 0.002, 4))
        .map(|(m, e)| 20.0 + o * m * e)
        .collect();
    let pp: Vec<f64> = sizes.iter().map(|&v| step(v, big_g)).collect();
    let lg = fit_loggops(&sizes, &pp, &m, &train, &m, &delayed, 4).unwrap();
    assert!(
        within(lg.overhead, o, 0.02) && within(lg.gap, g, 0.02),
        "{} {}",
        lg.overhead,
        lg.gap
    );
    let f = fit_steps(lg.overhead, steps(&one), Some(steps(&ex)), 4).unwrap();
    assert!(within(f.latency, l, 0.02), "L {}", f.latency);
    assert!(within(f.gap_per_byte, big_g, 0.02), "G {}", f.gap_per_byte);
    assert!(
        within(f.two_flows_gap_per_byte, g2, 0.02),
        "G2 {}",
        f.two_flows_gap_per_byte
    );
    assert_eq!(
        (f.eager_limit, f.eager_found, f.second_limit),
        (s, true, Some(s2))
    );
    assert!(within(f.rendezvous, r, 0.02), "R {}", f.rendezvous);
    assert!(
        within(f.second_rendezvous, r2, 0.02),
        "R2 {}",
        f.second_rendezvous
    );
    assert!(within(f.exchange_wait, x, 0.02), "X {}", f.exchange_wait);
    assert_eq!(f.latency_excess, 0.0);
    assert!(f.r2 > 0.999, "{}", f.r2);
    // exact measurements: exact parameters
    let exact = fit_steps(
        o,
        Steps {
            sizes: &sizes,
            times: &pp,
        },
        None,
        4,
    )
    .unwrap();
    assert!((exact.latency - l).abs() < 1e-9 && (exact.rendezvous - r).abs() < 1e-9);
    assert!((exact.gap_per_byte - big_g).abs() < 1e-15);
}

#[test]
fn without_a_switch_s_is_the_largest_size_and_nothing_is_negative() {
    let sizes: Vec<f64> = (0..12).map(|k| f64::from(1 << k)).collect();
    let t: Vec<f64> = sizes.iter().map(|s| 1.2 + 3.5e-4 * s).collect();
    let f = fit_steps(
        0.1,
        Steps {
            sizes: &sizes,
            times: &t,
        },
        None,
        4,
    )
    .unwrap();
    assert_eq!(
        (f.eager_limit, f.eager_found, f.second_limit),
        (2048.0, false, None)
    );
    assert_eq!(
        (f.rendezvous, f.second_rendezvous, f.exchange_wait),
        (0.0, 0.0, 0.0)
    );
    assert!(f.switches.is_empty());
    // o above half a step: L is 0 and the excess is said, never a negative L
    let f = fit_steps(
        1.0,
        Steps {
            sizes: &sizes,
            times: &t,
        },
        None,
        4,
    )
    .unwrap();
    assert_eq!(f.latency, 0.0);
    assert!(
        (f.latency_excess - (2.0 - (1.2 + 3.5e-4))).abs() < 1e-9,
        "{}",
        f.latency_excess
    );
    // steps that fall with size: no term can be negative, and R² says the model does not fit
    let falling: Vec<f64> = sizes.iter().map(|s| 50.0 - s.log2()).collect();
    let f = fit_steps(
        0.1,
        Steps {
            sizes: &sizes,
            times: &falling,
        },
        None,
        4,
    )
    .unwrap();
    assert!(f.latency >= 0.0 && f.gap_per_byte >= 0.0 && f.rendezvous >= 0.0);
    assert!(f.r2 < 0.9, "{}", f.r2);
}

#[test]
fn merge_switches_averages_a_size_found_twice_and_puts_the_largest_jump_first() {
    let x: Vec<f64> = (0..16).map(|k| f64::from(1 << k)).collect();
    let line = |jump_at: f64, jump: f64| -> Vec<f64> {
        x.iter()
            .map(|&s| 1.0 + 1e-3 * s + if s > jump_at { jump } else { 0.0 })
            .collect()
    };
    let a = piecewise(&x, &line(64.0, 1.0), 4, 3).unwrap();
    let b = piecewise(&x, &line(64.0, 3.0), 4, 3).unwrap();
    let c = piecewise(&x, &line(1024.0, 1.5), 4, 3).unwrap();
    let (ja, jb, jc) = (a.switches()[0].1, b.switches()[0].1, c.switches()[0].1);
    assert_eq!(
        merge_switches(&[&a, &c, &b]),
        vec![(64.0, (0.0 + ja + jb) / 2.0), (1024.0, jc)]
    );
    assert_eq!(merge_switches(&[&a, &c]), vec![(1024.0, jc), (64.0, ja)]);
    assert!(merge_switches(&[]).is_empty());
}

#[test]
fn bad_steps_and_chains_are_one_line_naming_them() {
    let s = [1.0, 2.0, 4.0];
    let t = [1.0, 1.1, 1.3];
    let one = Steps {
        sizes: &s,
        times: &t,
    };
    let e = |r: Result<StepsFit, FitError>| r.unwrap_err().to_string();
    assert_eq!(
        e(fit_steps(
            0.1,
            Steps {
                sizes: &s[..2],
                times: &t[..2]
            },
            None,
            4
        )),
        "a fit of the one-way steps needs at least 3 points with different x, got 2"
    );
    assert_eq!(
        e(fit_steps(
            0.1,
            one,
            Some(Steps {
                sizes: &[8.0],
                times: &[1.0]
            }),
            4
        )),
        "a fit of the exchange steps needs at least 3 points with different x, got 1"
    );
    assert_eq!(
        e(fit_steps(
            0.1,
            Steps {
                sizes: &s,
                times: &[1.0, 0.0, 2.0]
            },
            None,
            4
        )),
        "one-way step times[1] = 0: a finite number > 0"
    );
    assert_eq!(
        e(fit_steps(
            0.1,
            one,
            Some(Steps {
                sizes: &s,
                times: &[1.0, 2.0, -3.0]
            }),
            4
        )),
        "exchange step times[2] = -3: a finite number > 0"
    );
    assert_eq!(
        e(fit_steps(
            0.1,
            Steps {
                sizes: &s,
                times: &t[..2]
            },
            None,
            4
        )),
        "one-way step times has 2 values, the measurements 3: give one per point"
    );
    assert_eq!(
        e(fit_steps(
            0.1,
            Steps {
                sizes: &[1.0, 4.0, 2.0],
                times: &t
            },
            None,
            4
        )),
        "one-way step sizes[2] = 2: sizes strictly ascending"
    );
    assert_eq!(
        e(fit_steps(-0.5, one, None, 4)),
        "o = -0.5: a finite time >= 0"
    );
    assert_eq!(
        e(fit_steps(f64::NAN, one, None, 4)),
        "o = NaN: a finite time >= 0"
    );
    let c = |r: Result<ChainFit, FitError>| r.unwrap_err().to_string();
    assert_eq!(
        c(fit_chains(&[8.0, 8.0], &[1.0, 2.0], &[1.0, -1.0])),
        "chain times[1] = -1: a finite number > 0"
    );
    assert_eq!(
        c(fit_chains(&[8.0, 8.0], &[1.0, 0.0], &[1.0, 2.0])),
        "chain steps[1] = 0: a finite number > 0"
    );
    assert_eq!(
        c(fit_chains(&[8.0, 16.0], &[1.0, 2.0], &[1.0, 2.0])),
        "a chain fit (one per size and one more) needs at least 3 points with different x, got 2"
    );
    assert_eq!(
        c(fit_chains(&[8.0], &[1.0, 2.0], &[1.0, 2.0])),
        "chain sizes has 1 values, the measurements 2: give one per point"
    );
}
