//! GOAL export: the lossy mapping of every op kind, files that follow txt2bin's grammar strictly,
//! and byte-identical re-export of what `write_goal` wrote.

use crate::common::{self, AllKinds};
use hypercuboid_core::schedule::goal::{parse, write_goal, GoalExportOptions};
use hypercuboid_core::schedule::{
    Combine, Meta, Op, OpKind, Payload, Program, Schedule, Slice, Slot,
};
use std::collections::HashSet;

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/goal/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn goal(s: &Schedule, ns_per_byte: f64) -> String {
    let mut out = Vec::new();
    write_goal(
        s,
        &GoalExportOptions {
            reduce_ns_per_byte: ns_per_byte,
        },
        &mut out,
    )
    .unwrap();
    String::from_utf8(out).unwrap()
}

fn goal_err(s: &Schedule, ns_per_byte: f64) -> std::io::Error {
    let mut out = Vec::new();
    write_goal(
        s,
        &GoalExportOptions {
            reduce_ns_per_byte: ns_per_byte,
        },
        &mut out,
    )
    .unwrap_err()
}

/// Two ranks using every op kind, cpu/nic, both dependency kinds, a fused receive-reduce (on
/// cpu 1) with a `requires` and an `irequires` dependent, and a wildcard receive.
fn all_kinds() -> Schedule {
    common::all_kinds(AllKinds::Export)
}

// Costs at 0.25 ns/byte: copy and fused reduce of 8 float64 = 64 B -> 16 ns; reduce of 4
// float64 = 32 B -> 8 ns; sleep 1.5 ns rounds up to 2; compute 10 ns. The fused receive is
// written as l2 (recv) + l3 (calc): `red requires rr` points at the calc (l4 requires l3),
// `sl irequires rr` at the recv (l5 irequires l2).
const ALL_KINDS_GOAL: &str = "num_ranks 2

rank 0 {
l0: calc 16
l1: send 64b to 1 tag 5 cpu 1 nic 2
l2: recv 64b from 1 tag 5 cpu 1
l3: calc 16 cpu 1
l4: calc 8
l5: calc 2
l6: calc 10 cpu 3
recv 3b from -1 tag -1
l1 irequires l0
l2 requires l0
l3 requires l2
l4 requires l3
l5 irequires l2
l6 requires l4
l6 requires l5
}

rank 1 {
send 64b to 0 tag 5
l1: recv 64b from 0 tag 5
l2: calc 16
l2 requires l1
}
";

#[test]
fn every_op_kind_maps_as_documented() {
    assert_eq!(goal(&all_kinds(), 0.25), ALL_KINDS_GOAL);
    assert_txt2bin_accepts(ALL_KINDS_GOAL);
}

#[test]
fn default_reduction_cost_is_zero() {
    let text = goal(
        &all_kinds(),
        GoalExportOptions::default().reduce_ns_per_byte,
    );
    assert!(text.contains("l0: calc 0\n"), "{text}");
    assert!(text.contains("l3: calc 0 cpu 1\n"), "{text}");
}

#[test]
fn rewriting_what_write_goal_wrote_is_byte_identical() {
    let first = goal(&all_kinds(), 0.25);
    let again = parse(&first, "x").unwrap();
    assert_eq!(goal(&again, 0.25), first);
    assert_eq!(
        goal(&again, 99.0),
        first,
        "re-read GOAL has no reductions left"
    );
    for name in [
        "binomial_bcast_8.goal",
        "dissemination_8.goal",
        "liberal.goal",
    ] {
        let s = parse(&data(name), name).unwrap();
        let first = goal(&s, 0.0);
        assert_txt2bin_accepts(&first);
        let s2 = parse(&first, name).unwrap();
        // These files have only GOAL ops: the export loses nothing.
        assert_eq!(s2, s, "{name}");
        assert_eq!(goal(&s2, 0.0), first, "{name}");
    }
}

#[test]
fn binomial_broadcast_export_text() {
    let s = parse(&data("binomial_bcast_8.goal"), "b").unwrap();
    let text = goal(&s, 0.0);
    // Labels only where a dependency names the op; ranks with no dependency carry none.
    assert!(text.starts_with(
        "num_ranks 8\n\nrank 0 {\nsend 4b to 1 tag 7\nsend 4b to 2 tag 7\nsend 4b to 4 tag 7\n}\n\n\
         rank 1 {\nl0: recv 4b from 0 tag 7\nl1: send 4b to 3 tag 7\nl2: send 4b to 5 tag 7\n\
         l1 requires l0\nl2 requires l0\n}\n"
    ));
    assert!(
        text.ends_with("rank 7 {\nrecv 4b from 3 tag 7\n}\n"),
        "{text}"
    );
}

#[test]
fn costs_round_to_picoseconds_then_up_to_nanoseconds() {
    let mut p = Program::new();
    let b = |n| Slice::new(Slot::Output, 0, n);
    let a = |n| Slice::new(Slot::Scratch(0), 0, n);
    p.reduce(a(30), b(30), Combine::After); // 30 B x 0.1 ns = 3 ns exactly (not 3.0000000000000004)
    p.reduce(a(31), b(31), Combine::After); // 3.1 ns -> 4
    p.copy(a(0), b(0)); // nothing to copy -> 0
    p.compute(1); // 1 ps -> 1 ns
    p.sleep(u64::MAX); // no overflow
    let s = Schedule::from_programs(Meta::sizes_only("r"), [p]).unwrap();
    assert_eq!(
        goal(&s, 0.1),
        "num_ranks 1\n\nrank 0 {\ncalc 3\ncalc 4\ncalc 0\ncalc 1\ncalc 18446744073709552\n}\n"
    );
}

#[test]
fn empty_ranks_still_get_blocks() {
    let s = Schedule::from_programs(Meta::sizes_only("e"), vec![Program::new(); 3]).unwrap();
    let text = goal(&s, 0.0);
    assert_eq!(
        text,
        "num_ranks 3\n\nrank 0 {\n}\n\nrank 1 {\n}\n\nrank 2 {\n}\n"
    );
    assert_txt2bin_accepts(&text);
}

#[test]
fn refuses_what_txt2bin_would_misread() {
    let one = |op: Op| {
        let mut p = Program::new();
        p.push(op);
        Schedule::from_programs(Meta::sizes_only("x"), [p, Program::new()]).unwrap()
    };
    let send = |tag| {
        Op::new(OpKind::Send {
            peer: 1,
            tag,
            data: Payload::Bytes(1),
        })
    };
    let e = goal_err(
        &one(Op {
            cpu: 256,
            ..send(0)
        }),
        0.0,
    );
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(
        e.to_string(),
        "rank 0 op 0: cpu 256 does not fit GOAL's 8-bit cpu field (0..255)"
    );
    let e = goal_err(
        &one(Op {
            nic: 300,
            ..send(0)
        }),
        0.0,
    );
    assert_eq!(
        e.to_string(),
        "rank 0 op 0: nic 300 does not fit GOAL's 8-bit nic field (0..255)"
    );
    let e = goal_err(&one(send(-5)), 0.0);
    assert_eq!(
        e.to_string(),
        "rank 0 op 0: tag -5 cannot be written (tags are 0..2147483647, or -1 for any)"
    );
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let e = goal_err(&one(send(0)), bad);
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(
            e.to_string(),
            format!("reduce_ns_per_byte {bad} is invalid: expected a finite number >= 0")
        );
    }
    // A calc's nic has no place in GOAL and is dropped, whatever its value.
    let text = goal(
        &one(Op {
            nic: 1000,
            ..Op::new(OpKind::Compute { time: 5000 })
        }),
        0.0,
    );
    assert_eq!(text, "num_ranks 2\n\nrank 0 {\ncalc 5\n}\n\nrank 1 {\n}\n");
}

/// Checks `text` against txt2bin's grammar as LogGOPSim's `txt2bin.re` defines it, in the
/// strict form `write_goal` promises: `num_ranks` first, every rank's block once and in order,
/// no indentation, single spaces, no comments, clauses in txt2bin's order (`tag`, `cpu`, `nic`),
/// `cpu`/`nic` in 0..=255, labels defined once and before any dependency names them.
fn assert_txt2bin_accepts(text: &str) {
    assert!(text.ends_with('\n'));
    let mut lines = text.lines().enumerate();
    let (_, first) = lines.next().unwrap();
    let n: u32 = first
        .strip_prefix("num_ranks ")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("first line {first:?}"));
    let uint = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let uint_or_any = |t: &str| uint(t) || t == "-1";
    let byte = |t: &str| uint(t) && t.parse::<u32>().unwrap() <= 255;
    let mut next_rank = 0;
    let mut in_block = false;
    let mut labels: HashSet<String> = HashSet::new();
    for (i, line) in lines {
        let at = format!("line {}: {line:?}", i + 1);
        assert!(!line.contains('/'), "comment at {at}");
        let toks: Vec<&str> = line.split(' ').collect();
        assert!(
            toks.iter().all(|t| !t.is_empty()) || line.is_empty(),
            "spacing at {at}"
        );
        if !in_block {
            if line.is_empty() {
                continue;
            }
            assert_eq!(line, format!("rank {next_rank} {{"), "{at}");
            in_block = true;
            labels.clear();
            continue;
        }
        if line == "}" {
            in_block = false;
            next_rank += 1;
            continue;
        }
        let mut t = &toks[..];
        if let [l, kw, ..] = t {
            if let Some(l) = l.strip_suffix(':') {
                assert!(l.starts_with('l') && uint(&l[1..]), "label at {at}");
                assert!(labels.insert(l.to_string()), "label twice at {at}");
                assert!(["send", "recv", "calc"].contains(kw), "{at}");
                t = &toks[1..];
            }
        }
        let ok = match t {
            [a, req, b] if *req == "requires" || *req == "irequires" => {
                assert!(
                    labels.contains(*a) && labels.contains(*b),
                    "undefined label at {at}"
                );
                true
            }
            ["calc", ns, rest @ ..] => {
                uint(ns)
                    && match rest {
                        [] => true,
                        ["cpu", c] => byte(c),
                        _ => false,
                    }
            }
            [op @ ("send" | "recv"), size, dir, peer, "tag", tag, rest @ ..] => {
                let send = *op == "send";
                size.strip_suffix('b').is_some_and(uint)
                    && *dir == if send { "to" } else { "from" }
                    && (if send { uint(peer) } else { uint_or_any(peer) })
                    && uint_or_any(tag)
                    && match rest {
                        [] => true,
                        ["cpu" | "nic", c] => byte(c),
                        ["cpu", c, "nic", k] => byte(c) && byte(k),
                        _ => false,
                    }
            }
            _ => false,
        };
        assert!(ok, "not txt2bin grammar at {at}");
    }
    assert!(!in_block, "unclosed block");
    assert_eq!(next_rank, n, "every rank has a block, in order");
}

#[test]
fn the_rule_checker_can_fail() {
    for bad in [
        "num_ranks 1\n\nrank 0 {\n  calc 5\n}\n",
        "num_ranks 1\n\nrank 0 {\ncalc 5 // c\n}\n",
        "num_ranks 2\n\nrank 1 {\n}\n\nrank 0 {\n}\n",
        "num_ranks 1\n\nrank 0 {\nl1 requires l0\nl0: calc 1\nl1: calc 1\n}\n",
        "num_ranks 1\n\nrank 0 {\nsend 1b to 0 cpu 1 tag 0\n}\n",
        "num_ranks 1\n\nrank 0 {\ncalc 5 nic 1\n}\n",
        "num_ranks 1\n\nrank 0 {\nsend 1b to 0 tag 0 cpu 256\n}\n",
        "num_ranks 1\n\nrank 0 {\nsend 1b to 0 tag 0 data in[0:1]\n}\n",
    ] {
        let r = std::panic::catch_unwind(|| assert_txt2bin_accepts(bad));
        assert!(r.is_err(), "accepted: {bad}");
    }
}
