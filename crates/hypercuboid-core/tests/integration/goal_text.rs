//! The lossless text form: exact round trips `parse(write_text(s)) == s`, its golden text, units
//! and headers.

use crate::common::{self, AllKinds};
use hypercuboid_core::schedule::goal::{parse, parse_reader, write_text};
use hypercuboid_core::schedule::{
    Collective, Combine, Dtype, Meta, Op, OpKind, Payload, Program, ReduceOp, Schedule, Slice,
    Slot, ANY_SOURCE, ANY_TAG,
};
use proptest::prelude::*;
use std::io::BufReader;

fn text(s: &Schedule) -> String {
    let mut out = Vec::new();
    write_text(s, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn round_trip(s: &Schedule) {
    let t = text(s);
    assert_eq!(
        &parse(&t, "ignored: the file names itself").unwrap(),
        s,
        "{t}"
    );
    assert_eq!(
        &parse_reader(BufReader::with_capacity(5, t.as_bytes()), "x").unwrap(),
        s
    );
}

fn v(slot: Slot, a: u64, b: u64) -> Slice {
    Slice::new(slot, a, b - a)
}

/// Every op kind, cpu/nic, both dependency kinds, wildcards, a size-only payload, and a third
/// rank with nothing to do.
fn all_kinds() -> Schedule {
    common::all_kinds(AllKinds::Text)
}

const ALL_KINDS_TEXT: &str = r#"num_ranks 3
collective allreduce count 8 dtype float64 op max
name "allreduce \"all\" kinds"

rank 0 {
l0: copy in[0:8] to out[0:8]
l1: send 64b to 1 tag 5 data in[0:8] cpu 1 nic 2
l2: recv 64b from 1 tag 5 data out[0:8] reduce after
l3: reduce scratch0[0:4] into out[4:8] before
l4: sleep 1500ps
l5: calc 10 cpu 3 nic 4
recv 3b from -1 tag -1 reduce before
l1 irequires l0
l2 requires l0
l3 requires l2
l4 irequires l2
l5 requires l3
l5 requires l4
}

rank 1 {
send 64b to 0 tag 5 data in[0:8]
l1: recv 64b from 0 tag 5 data scratch12[0:8]
l2: reduce scratch12[0:8] into out[0:8] after
l2 requires l1
}

rank 2 {
}
"#;

#[test]
fn golden_text_of_every_op_kind() {
    assert_eq!(text(&all_kinds()), ALL_KINDS_TEXT);
    round_trip(&all_kinds());
}

#[test]
fn goal_files_round_trip_through_the_lossless_form() {
    for name in [
        "binomial_bcast_8.goal",
        "dissemination_8.goal",
        "liberal.goal",
    ] {
        let path = format!("{}/tests/data/goal/{name}", env!("CARGO_MANIFEST_DIR"));
        let s = parse(&std::fs::read_to_string(path).unwrap(), name).unwrap();
        round_trip(&s);
    }
}

#[test]
fn units_and_header_defaults() {
    let s = parse(
        "num_ranks 1\ncollective allreduce\nrank 0 {\ncalc 1.5us\ncalc 3\nsleep 2ms\nsleep 7ps\ncalc 1\u{b5}s\ncalc 0.5ns\nsleep 1s\ncalc 2.25\n}\n",
        "u",
    )
    .unwrap();
    assert_eq!(
        s.meta(),
        &Meta::allreduce(0, Dtype::Byte, ReduceOp::Sum, "u")
    );
    let times: Vec<(&str, u64)> = (0..8)
        .map(|i| match s.rank(0).op(i).kind {
            OpKind::Compute { time } => ("calc", time),
            OpKind::Sleep { time } => ("sleep", time),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        times,
        [
            ("calc", 1_500_000),
            ("calc", 3_000),
            ("sleep", 2_000_000_000),
            ("sleep", 7),
            ("calc", 1_000_000),
            ("calc", 500),
            ("sleep", 1_000_000_000_000),
            ("calc", 2_250),
        ]
    );
    // The collective's fields in any order; an unquoted name is the rest of the line.
    let s = parse(
        "num_ranks 1\nname  my schedule  \ncollective none op min dtype int32 count 3\n",
        "u",
    )
    .unwrap();
    assert_eq!(
        s.meta(),
        &Meta {
            collective: Collective::None,
            count: 3,
            dtype: Dtype::Int32,
            name: "my schedule".into()
        }
    );
    // `op` belongs to a reducing collective: `none` reads and drops it, `allreduce` keeps it
    // (and is `sum` without one, as files written before the operator moved into it have it).
    let s = parse(
        "num_ranks 1
collective allreduce op min count 2
",
        "u",
    )
    .unwrap();
    assert_eq!(
        s.meta().collective,
        Collective::Allreduce { op: ReduceOp::Min }
    );
    let s = parse(
        "num_ranks 1
collective allreduce count 2
",
        "u",
    )
    .unwrap();
    assert_eq!(s.meta().op(), Some(ReduceOp::Sum));
}

#[test]
fn names_with_every_kind_of_character_round_trip() {
    for name in [
        "",
        "plain",
        "  spaces around  ",
        "quote \" backslash \\ tab \t newline \n cr \r",
        "control \u{1} \u{1f} \u{7f}",
        "unicode µs → ∑",
        "// not a comment /* nor this */",
    ] {
        let s = Schedule::from_programs(Meta::sizes_only(name), [Program::new()]).unwrap();
        round_trip(&s);
    }
}

#[test]
fn data_sizes_follow_the_dtype() {
    let s = parse(
        "num_ranks 2\ncollective allreduce count 4 dtype int16 op prod\nrank 0 {\nsend 8b to 1 data out[0:4]\n}\nrank 1 {\nrecv 8b from 0 data scratch3[2:6] reduce before\n}\n",
        "d",
    )
    .unwrap();
    assert_eq!(
        s.rank(1).op(0).kind,
        OpKind::Recv {
            peer: 0,
            tag: 0,
            data: Payload::Data(v(Slot::Scratch(3), 2, 6)),
            combine: Combine::Before,
            operand: None,
        }
    );
    assert_eq!(s.shapes()[1].scratch, vec![0, 0, 0, 6]);
}

// ---- random schedules -----------------------------------------------------------------------

fn slot() -> impl Strategy<Value = Slot> {
    prop_oneof![
        Just(Slot::Input),
        Just(Slot::Output),
        (0u16..3).prop_map(Slot::Scratch),
        Just(Slot::Scratch(u16::MAX)),
    ]
}

fn slice_of(len: u64) -> impl Strategy<Value = Slice> {
    (slot(), 0u64..100).prop_map(move |(s, off)| Slice::new(s, off, len))
}

fn writable(s: Slice) -> Slice {
    if s.slot == Slot::Input {
        Slice::new(Slot::Output, s.offset, s.len)
    } else {
        s
    }
}

fn combine() -> impl Strategy<Value = Combine> {
    prop_oneof![Just(Combine::Before), Just(Combine::After)]
}

fn time() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..5_000,
        (0u64..1_000_000).prop_map(|ns| ns * 1000),
        any::<u64>(),
    ]
}

fn op(nranks: u32) -> impl Strategy<Value = Op> {
    let payload = prop_oneof![
        any::<u64>().prop_map(Payload::Bytes),
        (0u64..20).prop_flat_map(slice_of).prop_map(Payload::Data),
    ];
    let send_tag = prop_oneof![Just(ANY_TAG), 0..=i32::MAX];
    let recv_peer = prop_oneof![Just(ANY_SOURCE), 0..nranks];
    let recv_combine = prop_oneof![Just(Combine::Assign), combine()];
    let kind =
        prop_oneof![
            (0..nranks, send_tag.clone(), payload.clone())
                .prop_map(|(peer, tag, data)| OpKind::Send { peer, tag, data }),
            (
                recv_peer,
                send_tag,
                payload,
                recv_combine,
                any::<bool>(),
                0u64..20
            )
                .prop_map(|(peer, tag, data, combine, with, at)| {
                    let data = match data {
                        Payload::Data(s) => Payload::Data(writable(s)),
                        b => b,
                    };
                    // a reducing receive with a data slice may read a separate operand
                    let operand = match data {
                        Payload::Data(s) if with && combine != Combine::Assign => {
                            Some(Slice::new(Slot::Input, at, s.len))
                        }
                        _ => None,
                    };
                    OpKind::Recv {
                        peer,
                        tag,
                        data,
                        combine,
                        operand,
                    }
                }),
            (0u64..20)
                .prop_flat_map(|n| (slice_of(n), slice_of(n), combine()))
                .prop_map(|(src, dst, combine)| OpKind::Reduce {
                    src,
                    dst: writable(dst),
                    combine
                }),
            (0u64..20)
                .prop_flat_map(|n| (slice_of(n), slice_of(n)))
                .prop_map(|(src, dst)| OpKind::Copy {
                    src,
                    dst: writable(dst)
                }),
            time().prop_map(|time| OpKind::Compute { time }),
            time().prop_map(|time| OpKind::Sleep { time }),
        ];
    let small = prop_oneof![Just(0u16), 0u16..4, any::<u16>()];
    (kind, small.clone(), small).prop_map(|(kind, cpu, nic)| Op { kind, cpu, nic })
}

fn program(nranks: u32) -> impl Strategy<Value = Program> {
    prop::collection::vec(op(nranks), 0..8).prop_flat_map(|ops| {
        let n = ops.len() as u32;
        let deps = if n < 2 {
            Just(Vec::new()).boxed()
        } else {
            prop::collection::vec((0..n, 0..n, any::<bool>()), 0..12).boxed()
        };
        deps.prop_map(move |deps| {
            let mut p = Program::new();
            p.ops = ops.clone();
            for (a, b, start) in deps {
                if a != b {
                    if start {
                        p.irequires(a, b);
                    } else {
                        p.requires(a, b);
                    }
                }
            }
            p
        })
    })
}

fn schedule() -> impl Strategy<Value = Schedule> {
    let meta = (
        prop_oneof![
            Just(Collective::None),
            prop::sample::select(ReduceOp::ALL.to_vec())
                .prop_map(|op| Collective::Allreduce { op })
        ],
        any::<u64>(),
        prop::sample::select(Dtype::ALL.to_vec()),
        any::<String>(),
    )
        .prop_map(|(collective, count, dtype, name)| Meta {
            collective,
            count,
            dtype,
            name,
        });
    (1u32..6, meta).prop_flat_map(|(n, meta)| {
        // Repeat a few programs so that shapes are shared, as generators produce them.
        prop::collection::vec(program(n), 1..4).prop_flat_map(move |progs| {
            let meta = meta.clone();
            prop::collection::vec(0..progs.len(), n as usize).prop_map(move |pick| {
                let programs = pick.iter().map(|&i| progs[i].clone());
                Schedule::from_programs(meta.clone(), programs).unwrap()
            })
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_schedules_round_trip(s in schedule()) {
        let t = text(&s);
        prop_assert_eq!(parse(&t, "x").unwrap(), s, "{}", t);
    }
}

#[test]
fn receive_reduce_with_an_operand_round_trips() {
    let text = "num_ranks 2\ncollective allreduce count 2 dtype float32 op sum\nrank 0 {\nsend 8b to 1 tag 0 data in[0:2]\n}\nrank 1 {\nrecv 8b from 0 tag 0 data out[0:2] reduce before with in[0:2]\n}\n";
    let s = parse(text, "w").unwrap();
    assert_eq!(
        s.rank(1).op(0).kind,
        OpKind::Recv {
            peer: 0,
            tag: 0,
            data: Payload::Data(v(Slot::Output, 0, 2)),
            combine: Combine::Before,
            operand: Some(v(Slot::Input, 0, 2)),
        }
    );
    let mut out = Vec::new();
    write_text(&s, &mut out).unwrap();
    assert_eq!(parse(std::str::from_utf8(&out).unwrap(), "w").unwrap(), s);
    let e = parse(
        "num_ranks 2\ncollective allreduce count 2 dtype float32 op sum\nrank 0 {\nsend 8b to 1 tag 0 data in[0:2]\n}\nrank 1 {\nrecv 8b from 0 tag 0 data out[0:2] with in[0:2]\n}\n",
        "w",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 7, column 1: recv with operand in[0:2] must reduce (before or after); a plain receive has no operand"
    );
}
