//! LogGOPS issue order (`loggops:...,order=program|gcc`) against LogGOPSim built both ways.
//!
//! The programs are generated here exactly as `benchmarks/loggopsim_order.py` generates them
//! (alltoall on 12, 17, 24 and 32 ranks, every rank posting its N−1 receives and N−1 sends at
//! once, peers in ascending or shifted order; and the non-overtaking `trailer17` program).
//! `tests/data/loggops/order/stock.txt` holds what a stock LogGOPSim printed for them and
//! `stable.txt` what LogGOPSim built with `std::stable_sort` printed: spcl/LogGOPSim commit
//! 76451de16546c7ea39651c183cbc532f4a3457c0, g++ 12.2 (Debian 12), its own Makefile, with every
//! host's finish time printed (see `tests/data/loggops/README.md`). One line per program and
//! parameter set: `NAME SET t0 t1 ...`, every rank's finish time in ns. Every rank must agree
//! exactly: stock with `order=gcc`, stable with the default `order=program`.

use crate::common;

use common::*;
use hypercuboid_core::model::parse_model;
use hypercuboid_core::schedule::Schedule;
use hypercuboid_core::sim::{simulate, SimOptions, SimResult};
use hypercuboid_core::units::{ns, Time};
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

/// The parameter sets (LogGOPSim's flags, ns and bytes) and a size below and above S.
const SETS: [(&str, &str, [u64; 2]); 2] = [
    (
        "p1",
        "L=3000,o=1500,g=1000,G=6,O=0,S=65535",
        [1024, 100_000],
    ),
    ("p2", "L=2500,o=200,g=500,G=2,O=1,S=4096", [1000, 8000]),
];

/// Every rank posts its N−1 receives, then its N−1 sends, peers ascending (`linear`) or
/// rank+1, rank+2, ... (`shifted`).
fn alltoall(n: u32, size: u64, style: &str) -> String {
    let mut g = format!("num_ranks {n}\n\n");
    for r in 0..n {
        let peers: Vec<u32> = match style {
            "linear" => (0..n).filter(|&p| p != r).collect(),
            _ => (1..n).map(|i| (r + i) % n).collect(),
        };
        writeln!(g, "rank {r} {{").unwrap();
        let mut k = 0;
        for &p in &peers {
            writeln!(g, "l{k}: recv {size}b from {p} tag 0").unwrap();
            k += 1;
        }
        for &p in &peers {
            writeln!(g, "l{k}: send {size}b to {p} tag 0").unwrap();
            k += 1;
        }
        g.push_str("}\n\n");
    }
    g
}

/// Rank 0 sends `payload` bytes to rank 1, then to each of ranks 2..16, then an 8-byte trailer
/// to rank 1 with the same tag; rank 1 receives the payload, then the trailer.
fn trailer(payload: u64) -> String {
    let mut g = String::from("num_ranks 17\n\nrank 0 {\n");
    writeln!(g, "l0: send {payload}b to 1 tag 0").unwrap();
    for p in 2..17 {
        writeln!(g, "l{}: send {payload}b to {p} tag 0", p - 1).unwrap();
    }
    g.push_str("l16: send 8b to 1 tag 0\n}\n\nrank 1 {\n");
    writeln!(g, "l0: recv {payload}b from 0 tag 0").unwrap();
    g.push_str("l1: recv 8b from 0 tag 0\n}\n\n");
    for r in 2..17 {
        writeln!(g, "rank {r} {{\nl0: recv {payload}b from 0 tag 0\n}}\n").unwrap();
    }
    g
}

/// Every program of the benchmark: `(name, set, model spec, GOAL text)`.
fn programs() -> Vec<(String, &'static str, String, String)> {
    let mut out = Vec::new();
    for (set, params, sizes) in SETS {
        let spec = format!("loggops:{params}");
        for style in ["linear", "shifted"] {
            for n in [12, 17, 24, 32] {
                for size in sizes {
                    let name = format!("alltoall_{style}{n}_{size}b");
                    out.push((name, set, spec.clone(), alltoall(n, size, style)));
                }
            }
        }
        for size in sizes {
            out.push((
                format!("trailer17_{size}b"),
                set,
                spec.clone(),
                trailer(size),
            ));
        }
    }
    out
}

/// `{(name, set): per-rank finish times in ps}` from a golden file.
fn read_golden(file: &str) -> HashMap<(String, String), Vec<Time>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/loggops/order")
        .join(file);
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = HashMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut it = line.split_whitespace();
        let key = (
            it.next().unwrap().to_string(),
            it.next().unwrap().to_string(),
        );
        let times = it.map(|t| ns(t.parse::<u64>().unwrap())).collect();
        assert!(out.insert(key, times).is_none(), "{line}");
    }
    out
}

fn run(s: &Schedule, spec: &str, trace: bool) -> SimResult {
    let opts = SimOptions {
        trace,
        ..SimOptions::default()
    };
    simulate(s, &parse_model(spec).unwrap(), &opts).unwrap()
}

/// Checks every program under `order` against `file`; returns the completion times.
fn check(file: &str, order: &str) -> HashMap<(String, String), Time> {
    let golden = read_golden(file);
    let progs = programs();
    assert_eq!(
        golden.len(),
        progs.len(),
        "{file}: one line per program and set"
    );
    let mut done = HashMap::new();
    for (name, set, spec, goal) in progs {
        let expected = &golden[&(name.clone(), set.to_string())];
        let s = read_goal(&goal);
        let spec = format!("{spec}{order}");
        let r = run(&s, &spec, false);
        assert_eq!(&r.rank_finish, expected, "{name} under {spec}");
        assert_eq!(r.completion, *expected.iter().max().unwrap());
        done.insert((name, set.to_string()), r.completion);
    }
    done
}

#[test]
fn order_gcc_agrees_with_a_stock_loggopsim_on_every_rank() {
    check("stock.txt", ",order=gcc");
}

#[test]
fn program_order_agrees_with_loggopsim_built_with_stable_sort_on_every_rank() {
    check("stable.txt", "");
    check("stable.txt", ",order=program");
}

#[test]
fn the_orders_differ_beyond_16_ops_freed_together() {
    let gcc = check("stock.txt", ",order=gcc");
    let program = check("stable.txt", "");
    let differ = |name: &str, set: &str| {
        let k = (name.to_string(), set.to_string());
        gcc[&k] != program[&k]
    };
    // 12 ranks free 22 ops per rank at once: LAM's linear rendezvous alltoall takes 12.05 ms in
    // a stock LogGOPSim's order and 12.65 ms in program order (stock.txt / stable.txt).
    let k = ("alltoall_linear12_100000b".to_string(), "p1".to_string());
    assert_eq!((gcc[&k], program[&k]), (ns(12_050_380), ns(12_653_874)));
    // The shifted order is a rotation on every rank, and every rank permutes it alike: it
    // stays free of receiver contention either way.
    assert!(!differ("alltoall_shifted32_100000b", "p1"));
    assert!(differ("trailer17_100000b", "p1"));
    // Up to 16 ops nothing is permuted: every rank of a 9-rank alltoall frees 16.
    let s = read_goal(&alltoall(9, 100_000, "linear"));
    let spec = "loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535";
    assert_eq!(
        run(&s, spec, false).rank_finish,
        run(&s, &format!("{spec},order=gcc"), false).rank_finish
    );
}

#[test]
fn a_stock_loggopsims_order_pairs_the_trailer_with_the_payloads_receive() {
    // MPI's non-overtaking rule: rank 0's payload (send 0) and trailer (send 16) go to rank 1
    // with one tag, so rank 1's first receive takes the payload and its second the trailer.
    // libstdc++'s std::sort of 17 equal ops leaves them as 8, 16, 15, ..., 9, 0, 7, ..., 1:
    // the trailer leaves first and lands in the payload's receive.
    for (payload, set) in [(1024, "p1"), (100_000, "p1"), (1000, "p2"), (8000, "p2")] {
        let params = SETS.iter().find(|x| x.0 == set).unwrap().1;
        let s = read_goal(&trailer(payload));
        for (order, pairs) in [
            ("", [(0, 0, payload), (16, 1, 8)]),
            (",order=gcc", [(16, 0, 8), (0, 1, payload)]),
        ] {
            let r = run(&s, &format!("loggops:{params}{order}"), true);
            let t = r.trace.unwrap();
            let to_rank1: Vec<(u32, u32, u64)> = (0..t.num_messages())
                .filter(|&m| t.msg_dst[m] == 1)
                .map(|m| (t.msg_src_op[m], t.msg_dst_op[m], t.msg_bytes[m]))
                .collect();
            assert_eq!(to_rank1, pairs, "{payload} B under {params}{order}");
        }
    }
}
