//! LogGOPS against LogGOPSim.
//!
//! `tests/data/loggops/*.goal` are GOAL schedules; `NAME.p1.out`, `NAME.p2.out` are what
//! LogGOPSim printed for them under two parameter sets (first line), one `Host i: finish` line
//! per rank (ns): a stock build, whose `std::sort` order hypercuboid reproduces with
//! `order=gcc`. `NAME.pK.stable.out`, where present, is what LogGOPSim built with
//! `std::stable_sort` printed, which hypercuboid's default `order=program` reproduces; where
//! absent the stable build printed the same as the stock one. See
//! `tests/data/loggops/README.md` for how they were produced (spcl/LogGOPSim commit 76451de,
//! whose event loop is that of d5bb14a). Every rank's finish time must agree exactly.

use crate::common;

use common::*;
use hypercuboid_core::model::{parse_model, ModelSpec};
use hypercuboid_core::schedule::Program;
use hypercuboid_core::sim::{simulate, SimOptions};
use hypercuboid_core::units::{ns, Time};
use std::path::Path;

fn loggops(spec: &str) -> ModelSpec {
    parse_model(spec).unwrap()
}

/// `(model spec, per-host finish times in ps)` from a LogGOPSim output file.
fn read_output(text: &str) -> (String, Vec<Time>) {
    let first = text.lines().next().unwrap();
    // "size: 8 (1 CPUs, 1 NICs); L=3000, o=1500 g=1000, G=6, O=0, P=8, S=65535"
    let params = first.split("; ").nth(1).unwrap();
    let mut kv = Vec::new();
    for item in params.split([',', ' ']).filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=').unwrap();
        if k != "P" {
            kv.push(format!("{k}={v}"));
        }
    }
    let hosts = text
        .lines()
        .filter_map(|l| l.strip_prefix("Host "))
        .map(|l| ns(l.split(": ").nth(1).unwrap().parse::<u64>().unwrap()))
        .collect();
    (format!("loggops:{}", kv.join(",")), hosts)
}

/// Checks `name` under both parameter sets: `order=gcc` against the stock build's output and
/// the default order against the stable build's.
fn golden(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/loggops");
    let goal = std::fs::read_to_string(dir.join(format!("{name}.goal"))).unwrap();
    let s = read_goal(&goal);
    for set in ["p1", "p2"] {
        let stock = dir.join(format!("{name}.{set}.out"));
        let stable = dir.join(format!("{name}.{set}.stable.out"));
        let stable = if stable.exists() {
            stable
        } else {
            stock.clone()
        };
        for (file, order) in [(stock, ",order=gcc"), (stable, "")] {
            let (spec, hosts) = read_output(&std::fs::read_to_string(&file).unwrap());
            let spec = format!("{spec}{order}");
            assert_eq!(hosts.len() as u32, s.nranks());
            let r = simulate(&s, &loggops(&spec), &SimOptions::default()).unwrap();
            assert_eq!(r.rank_finish, hosts, "{name} under {spec}");
            assert_eq!(r.completion, *hosts.iter().max().unwrap());
        }
    }
}

#[test]
fn golden_recursive_doubling_eager() {
    golden("rd8_8b");
    golden("rd64_2000b");
}

#[test]
fn golden_recursive_doubling_rendezvous() {
    golden("rd16_100000b");
}

#[test]
fn golden_binomial_eager_rendezvous_and_calc() {
    golden("binomial32_mixed");
}

#[test]
fn golden_irequires_ring() {
    golden("ring_irequires16");
}

#[test]
fn golden_multiple_cpus_and_nics() {
    golden("multi_cpu_nic8");
}

#[test]
fn golden_alltoall() {
    golden("alltoall8");
    golden("alltoall16");
}

#[test]
fn golden_wildcards() {
    golden("wildcard12");
}

#[test]
fn golden_unexpected_messages() {
    golden("unexpected24");
}

#[test]
fn golden_dissemination() {
    golden("dissemination64");
}

#[test]
fn golden_more_than_16_ops_ready_at_once() {
    // A stock LogGOPSim's std::sort permutes ties beyond 16 elements; per-host times depend on
    // it, so the stock and the stable build differ here (both files are checked).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/loggops");
    for set in ["p1", "p2"] {
        let stock = std::fs::read_to_string(dir.join(format!("fanout20_sizes.{set}.out")));
        let stable = std::fs::read_to_string(dir.join(format!("fanout20_sizes.{set}.stable.out")));
        assert_ne!(
            read_output(&stock.unwrap()).1,
            read_output(&stable.unwrap()).1
        );
    }
    golden("fanout20_sizes");
}

#[test]
fn golden_random_schedules() {
    // Random deadlock-free schedules (2–3 CPUs, 2 NICs, calc, irequires, ANY_SOURCE and
    // ANY_TAG receives, eager and rendezvous sizes); see the README for the generator.
    golden("random7");
    golden("random21");
    golden("random47");
}

#[test]
fn recursive_doubling_is_log_n_times_6042ns() {
    // The pin: 2o + L + 7G = 6042 ns per step for 8 B under L=3000 o=1500 g=1000 G=6
    // (LogGOPSim prints 6042, 18126 and 60420 for N = 2, 8, 1024).
    let m = loggops("loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535");
    for n in [2u32, 8, 1024] {
        let r = simulate(&recursive_doubling(n, 8), &m, &SimOptions::default()).unwrap();
        assert_eq!(r.completion, ns(6042) * n.trailing_zeros() as u64, "N={n}");
        assert!(r.rank_finish.iter().all(|&t| t == r.completion));
    }
}

#[test]
fn eager_and_rendezvous_differ_by_the_receivers_wait() {
    // Rank 1 computes 10 us before posting its receive. Eager: rank 0's send completes at once
    // and rank 0 finishes at o (+ (s−1)O). Rendezvous: the send completes only when rank 1
    // posts, so rank 0's next op (a compute) starts at 10 us.
    let build = || {
        let mut progs = vec![Program::new(); 2];
        let sd = send(&mut progs[0], 1, 0, 1000);
        let c0 = progs[0].compute(ns(1));
        progs[0].requires(c0, sd);
        let c = progs[1].compute(ns(10_000));
        let rv = recv(&mut progs[1], 0, 0, 1000, false);
        progs[1].requires(rv, c);
        schedule("eager vs rendezvous", progs)
    };
    let s = build();
    let eager = simulate(
        &s,
        &loggops("loggops:L=3000,o=1500,g=1000,G=6,O=0,S=1000"),
        &SimOptions::default(),
    )
    .unwrap();
    let rdv = simulate(
        &s,
        &loggops("loggops:L=3000,o=1500,g=1000,G=6,O=0,S=999"),
        &SimOptions::default(),
    )
    .unwrap();
    // Eager: compute after the send's o: 1500 + 1.
    assert_eq!(eager.rank_finish[0], ns(1501));
    // Rendezvous: compute at the match (10 us) + 1.
    assert_eq!(rdv.rank_finish[0], ns(10_001));
    // The message arrived at o + L = 4500 while rank 1's CPU was busy until 10 us; it is taken
    // in then (receive overhead o + 999·G) and the receive, posted at 10 us right after,
    // finds it in the unexpected queue: rank 1 finishes at 10000 + 1500 + 5994 ns either way.
    assert_eq!(eager.rank_finish[1], ns(17_494));
    assert_eq!(rdv.rank_finish[1], ns(17_494));
}

#[test]
fn zero_byte_messages_cost_no_negative_time() {
    // LogGOPSim computes (s−1)·G in unsigned arithmetic, which wraps for s = 0; here (s−1) is
    // taken as 0, so a zero-byte message costs exactly what a one-byte message costs:
    // sender o, receiver o after L.
    for bytes in [0u64, 1] {
        let mut progs = vec![Program::new(); 2];
        send(&mut progs[0], 1, 0, bytes);
        recv(&mut progs[1], 0, 0, bytes, false);
        let s = schedule("zero", progs);
        let r = simulate(
            &s,
            &loggops("loggops:L=3000,o=1500,g=1000,G=6,O=2,S=65535"),
            &SimOptions::default(),
        )
        .unwrap();
        assert_eq!(r.rank_finish, vec![ns(1500), ns(6000)], "{bytes} B");
    }
    // In a postal model a zero-byte message costs α.
    let s = recursive_doubling(4, 0);
    let r = simulate(
        &s,
        &parse_model("postal:alpha=1us,beta=1ns,gamma=1ns").unwrap(),
        &SimOptions::default(),
    )
    .unwrap();
    assert_eq!(r.completion, ns(2000));
}

#[test]
fn irequires_lets_a_send_start_with_its_receive() {
    // Both ranks post a receive and a send that irequires it: the sends go at time 0.
    let s = send_after_recv(true);
    let r = simulate(
        &s,
        &loggops("loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535"),
        &SimOptions::default(),
    )
    .unwrap();
    // Send at 0 (o until 1500), message at 4500, receive overhead o + 7G: 6042.
    assert_eq!(r.rank_finish, vec![ns(6042), ns(6042)]);
}

#[test]
fn reductions_cost_gamma_and_delta_when_given() {
    // Fused receive-reduce: free by default, n·γ + δ on the receive's CPU when given.
    let s = recursive_doubling(8, 1000);
    let completion = |model: &str| {
        simulate(&s, &loggops(model), &SimOptions::default())
            .unwrap()
            .completion
    };
    let base = completion("loggops:L=3000,o=1500,g=1000,G=6");
    let with = completion("loggops:L=3000,o=1500,g=1000,G=6,gamma=0.5ns,delta=10ns");
    assert_eq!(base, 3 * ns(3000 + 1500 + 1500 + 999 * 6));
    assert_eq!(with, base + 3 * ns(500 + 10));
}
