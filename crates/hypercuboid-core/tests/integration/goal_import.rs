//! GOAL import: example files in LogGOPSim's style (written for these tests), the liberties the
//! parser takes beyond txt2bin, streaming, and the exact text of every parse error.

use hypercuboid_core::schedule::goal::{parse, parse_reader};
use hypercuboid_core::schedule::{
    Combine, Dep, DepKind, Meta, Op, OpKind, Payload, Program, Schedule, ScheduleError, ANY_SOURCE,
    ANY_TAG,
};
use std::io::BufReader;

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/goal/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn send(peer: u32, tag: i32, bytes: u64) -> Op {
    Op::new(OpKind::Send {
        peer,
        tag,
        data: Payload::Bytes(bytes),
    })
}

fn recv(peer: u32, tag: i32, bytes: u64) -> Op {
    Op::new(OpKind::Recv {
        peer,
        tag,
        data: Payload::Bytes(bytes),
        combine: Combine::Assign,
        operand: None,
    })
}

fn calc(ns: u64) -> Op {
    Op::new(OpKind::Compute { time: ns * 1000 })
}

fn with(op: Op, cpu: u16, nic: u16) -> Op {
    Op { cpu, nic, ..op }
}

/// The binomial broadcast of tests/data/goal/binomial_bcast_8.goal, built from its definition:
/// rank r > 0 receives from r minus its highest set bit, then sends to r + 2^k for every 2^k
/// above r (rank 0: every 2^k), each send requiring the receive.
fn binomial_bcast(n: u32) -> Vec<Program> {
    (0..n)
        .map(|r| {
            let mut p = Program::new();
            let parent = (r > 0).then(|| {
                let hb = 1 << (31 - r.leading_zeros());
                p.push(recv(r - hb, 7, 4))
            });
            let mut k = if r == 0 {
                1
            } else {
                1 << (32 - r.leading_zeros())
            };
            while r + k < n {
                let s = p.push(send(r + k, 7, 4));
                if let Some(pa) = parent {
                    p.requires(s, pa);
                }
                k <<= 1;
            }
            p
        })
        .collect()
}

#[test]
fn binomial_broadcast_file() {
    let s = parse(&data("binomial_bcast_8.goal"), "bcast").unwrap();
    let expect = Schedule::from_programs(Meta::sizes_only("bcast"), binomial_bcast(8)).unwrap();
    assert_eq!(s, expect);
    assert_eq!(s.total_ops(), 14); // 7 receives and 7 sends
    assert_eq!(s.meta(), &Meta::sizes_only("bcast"));
}

#[test]
fn dissemination_file() {
    let s = parse(&data("dissemination_8.goal"), "barrier").unwrap();
    let progs = (0..8u32).map(|r| {
        let mut p = Program::new();
        for k in 0..3 {
            let d = 1 << k;
            let s = p.push(send((r + d) % 8, k, 1));
            p.push(recv((r + 8 - d) % 8, k, 1));
            if k > 0 {
                p.requires(s, s - 1);
            }
        }
        p
    });
    let expect = Schedule::from_programs(Meta::sizes_only("barrier"), progs).unwrap();
    assert_eq!(s, expect);
    // Every rank runs the same program up to its peers.
    assert_eq!(s.num_shapes(), 1);
    assert_eq!(s.total_ops(), 48);
}

fn liberal_expected() -> Schedule {
    let mut r0 = Program::new();
    let a1 = r0.push(send(1, 0, 16));
    let after = r0.push(with(calc(100), 2, 0));
    let b = r0.push(with(recv(1, 3, 8), 1, 2));
    r0.push(send(3, 12, 8));
    r0.irequires(after, a1);
    r0.requires(b, a1);
    let mut r1 = Program::new();
    r1.push(recv(0, 0, 16));
    r1.push(send(0, 3, 8));
    r1.push(calc(0));
    let mut r3 = Program::new();
    let first = r3.push(with(calc(1500), 1, 0));
    let second = r3.push(with(recv(ANY_SOURCE, ANY_TAG, 16), 0, 1));
    r3.requires(second, first);
    Schedule::from_programs(Meta::sizes_only("lib"), [r0, r1, Program::new(), r3]).unwrap()
}

#[test]
fn liberal_file() {
    // CRLF, tabs, indentation, comments after statements and over lines, a dependency before its
    // label, rank 3 before rank 0, rank 2 missing, `to1`/`tag0`/`100cpu 2` without spaces.
    let text = data("liberal.goal");
    let s = parse(&text, "lib").unwrap();
    assert_eq!(s, liberal_expected());
    let r0 = s.rank(0);
    assert_eq!(
        r0.deps(1),
        &[Dep {
            on: 0,
            kind: DepKind::IRequires
        }]
    );
    assert!(s.rank(2).is_empty());
}

#[test]
fn streaming_reader_agrees_with_parse() {
    for name in [
        "binomial_bcast_8.goal",
        "dissemination_8.goal",
        "liberal.goal",
    ] {
        let text = data(name);
        // A tiny buffer makes lines straddle reads.
        let r = BufReader::with_capacity(7, text.as_bytes());
        assert_eq!(
            parse_reader(r, "x").unwrap(),
            parse(&text, "x").unwrap(),
            "{name}"
        );
    }
    for bad in [
        "num_ranks 2\nrank 0 {\nsend 8b from 1\n}\n",
        "",
        "\n",
        "// c",
        "// c\n",
        "// c\r\n\n",
        "num_ranks 1\nrank 0 {",
    ] {
        assert_eq!(
            parse_reader(BufReader::with_capacity(3, bad.as_bytes()), "x").unwrap_err(),
            parse(bad, "x").unwrap_err(),
            "{bad:?}"
        );
    }
}

#[test]
fn read_errors_are_io_errors() {
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    let e = parse_reader(BufReader::new(Broken), "f.goal").unwrap_err();
    assert_eq!(e.to_string(), "f.goal: disk on fire");
    assert!(matches!(e, ScheduleError::Io { .. }));
}

#[test]
fn keywords_of_the_extension_are_labels_when_used_as_labels() {
    let s = parse(
        "num_ranks 1\nrank 0 {\ncopy: calc 1\nname: calc 2\nname requires copy\n}\n",
        "k",
    )
    .unwrap();
    let mut p = Program::new();
    p.push(calc(1));
    p.push(calc(2));
    p.requires(1, 0);
    assert_eq!(
        s,
        Schedule::from_programs(Meta::sizes_only("k"), [p]).unwrap()
    );
}

#[test]
fn send_tag_minus_one_and_large_values() {
    // txt2bin reads `tag -1` on a send too (LogGOPSim then matches it with any receive tag).
    let s = parse(
        "num_ranks 2\nrank 0 {\nsend 18446744073709551615b to 1 tag -1 cpu 65535 nic 300\ncalc 18446744073709551\n}\n",
        "x",
    )
    .unwrap();
    assert_eq!(
        s.rank(0).op(0),
        with(send(1, ANY_TAG, u64::MAX), u16::MAX, 300)
    );
    assert_eq!(s.rank(0).op(1), calc(18_446_744_073_709_551));
    assert_eq!(s.rank(1).len(), 0);
}

/// Parses `text`, expecting exactly one error with this message.
fn err(text: &str) -> String {
    match parse(text, "t") {
        Ok(_) => panic!("parsed without error:\n{text}"),
        Err(e) => {
            assert!(matches!(e, ScheduleError::Parse { .. }), "{e:?}");
            e.to_string()
        }
    }
}

/// `num_ranks 2`, then `body` inside rank 0's block.
fn in_rank0(body: &str) -> String {
    err(&format!("num_ranks 2\nrank 0 {{\n{body}\n}}\n"))
}

#[test]
fn errors_named_in_the_issue() {
    assert_eq!(
        in_rank0("l1: send 64b from 1"),
        "line 3, column 14: expected 'to' after the send size, found 'from'"
    );
    assert_eq!(
        err("num_ranks 4\n\nrank 7 {\n}\n"),
        "line 3, column 1: rank 7 is outside num_ranks 4 (ranks are 0..3)"
    );
    assert_eq!(
        err("num_ranks 3\nrank 2 {\nl0: calc 1\nl1: calc 2\nl2: calc 3\nl3: calc 4\nl4: calc 5\nl1 requires l99\n}\n"),
        "line 8, column 13: unknown label 'l99' in dependency (labels defined in rank 2: l0, l1, l2, l3, ...)"
    );
    assert_eq!(
        in_rank0("x: calc 1\ny requires x"),
        "line 4, column 1: unknown label 'y' in dependency (labels defined in rank 0: x)"
    );
    assert_eq!(
        in_rank0("calc 1\nl2 irequires l1"),
        "line 4, column 1: unknown label 'l2' in dependency (rank 0 defines no labels)"
    );
    assert_eq!(
        err("rank 0 {\n}\n"),
        "line 1, column 1: expected 'num_ranks N' before the first rank block"
    );
    assert_eq!(
        err(""),
        "line 1, column 1: missing 'num_ranks N': the file never says how many ranks it has"
    );
    assert_eq!(
        err("// nothing here\n"),
        "line 1, column 16: missing 'num_ranks N': the file never says how many ranks it has"
    );
    assert_eq!(
        err("num_ranks 1\n  /* open\nrank 0 {\n}\n"),
        "line 2, column 3: unterminated '/*' comment: no '*/' before the end of the file"
    );
    assert_eq!(
        err("num_ranks 1\nrank 0 {\ncalc 1 /* trailing, never closed\n}\n"),
        "line 3, column 8: unterminated '/*' comment: no '*/' before the end of the file"
    );
    assert_eq!(
        err("num_ranks 2\nrank 0 {\n}\nrank 1 {\ncalc 5\n"),
        "line 4, column 1: rank 1 block is not closed: expected '}' before the end of the file"
    );
    assert_eq!(
        in_rank0("l1: calc 5\nl1: calc 6"),
        "line 4, column 1: label 'l1' is defined twice in rank 0 (first on line 3)"
    );
    assert_eq!(
        in_rank0("send 8 to 1"),
        "line 3, column 8: expected 'b' after the send size 8 (sizes are in bytes, e.g. 8b), found 'to'"
    );
    assert_eq!(
        in_rank0("recv -8b from 1"),
        "line 3, column 6: recv size must be a whole number of bytes >= 0, found '-8b'"
    );
}

#[test]
fn errors_in_ops() {
    let cases: &[(&str, &str)] = &[
        ("send b to 1", "line 3, column 6: expected a size in bytes after 'send' (e.g. 8b), found 'b'"),
        ("send 99999999999999999999b to 1", "line 3, column 6: send size 99999999999999999999 is too large (at most 18446744073709551615 bytes)"),
        ("recv 8b to 1", "line 3, column 9: expected 'from' after the recv size, found 'to'"),
        ("send 8b to -1", "line 3, column 12: send to rank -1: ranks are 0..1"),
        ("send 8b to", "line 3, column 11: expected a rank after 'to', found end of line"),
        ("send 8b to 2", "line 3, column 12: send to rank 2 but num_ranks is 2 (ranks are 0..1)"),
        ("recv 8b from 5", "line 3, column 14: recv from rank 5 but num_ranks is 2 (ranks are 0..1, or -1 for any source)"),
        ("recv 8b from -2", "line 3, column 14: recv from rank -2: ranks are 0..1, or -1 for any source"),
        ("recv 8b from x", "line 3, column 14: expected a rank or -1 after 'from', found 'x'"),
        ("send 8b to 1 tag 2147483648", "line 3, column 18: tag 2147483648 is out of range (tags are 0..2147483647, or -1 for any)"),
        ("recv 8b from 1 tag -2", "line 3, column 20: tag -2 is out of range (tags are 0..2147483647, or -1 for any)"),
        ("send 8b to 1 tag", "line 3, column 17: expected a tag (an integer >= 0, or -1 for any) after 'tag', found end of line"),
        ("send 8b to 1 tga 1", "line 3, column 14: expected 'tag', 'cpu', 'nic', 'data' or end of line after the send, found 'tga'"),
        ("recv 8b from 1 sum", "line 3, column 16: expected 'tag', 'cpu', 'nic', 'data', 'reduce', 'with' or end of line after the recv, found 'sum'"),
        ("send 8b to 1 tag 1 tag 2", "line 3, column 20: 'tag' given twice"),
        ("send 8b to 1 cpu 70000", "line 3, column 18: cpu 70000 is too large (at most 65535)"),
        ("send 8b to 1 nic x", "line 3, column 18: expected a number after 'nic', found 'x'"),
        ("calc 5 tag 1", "line 3, column 8: expected 'cpu', 'nic' or end of line after the calc, found 'tag'"),
        ("calc", "line 3, column 5: expected a time after 'calc' (a number of ns, or with a unit: 250ns, 1.5us), found end of line"),
        ("calc -5", "line 3, column 6: calc time must be >= 0, found '-5'"),
        ("calc 5xs", "line 3, column 7: unknown time unit 'xs' (units are ps, ns, us, ms, s; a bare number is ns)"),
        ("sleep 0.0001ns", "line 3, column 7: sleep time 0.0001ns is finer than one picosecond, the simulator's resolution"),
        ("calc 18446744073709552", "line 3, column 6: calc time 18446744073709552 is too large (at most 18446744073709551615 ps)"),
        ("l1: snd 8b to 1", "line 3, column 5: expected an op (send, recv, calc, reduce, copy, sleep) after the label 'l1:', found 'snd'"),
        ("sned 8b to 1", "line 3, column 1: expected an op (send, recv, calc, reduce, copy, sleep), a label ('l1: send ...'), a dependency ('l2 requires l1') or '}', found 'sned'"),
        ("5: calc 1", "line 3, column 1: expected an op (send, recv, calc, reduce, copy, sleep), a label ('l1: send ...'), a dependency ('l2 requires l1') or '}', found '5:'"),
        ("a: calc 1\nb: calc 1\na requires b c", "line 5, column 14: expected end of line after the dependency, found 'c'"),
        ("a: calc 1\na requires", "line 4, column 11: expected a label after 'requires', found end of line"),
        ("a: calc 1\na irequires a", "line 4, column 13: 'a irequires a': an op cannot depend on itself"),
        ("calc 5 }", "line 3, column 8: expected 'cpu', 'nic' or end of line after the calc, found '}'"),
        ("rank 1 {", "line 3, column 1: rank 1 block opened inside the block of rank 0 (opened on line 2); expected '}' first"),
        ("num_ranks 2", "line 3, column 1: 'num_ranks' inside a rank block; it must come before the first rank block"),
        ("collective allreduce", "line 3, column 1: 'collective' must come before the first rank block"),
        // Lossless extension.
        ("copy in[0:4] to out[0:2]", "line 3, column 1: copy of in[0:4] to out[0:2]: lengths differ"),
        ("recv 8b from 1 data in[0:8]", "line 3, column 1: recv into in[0:8]: the input buffer is read-only"),
        ("reduce in[0:2] into out[0:2]", "line 3, column 29: expected 'before' (dst = src op dst) or 'after' (dst = dst op src) after the reduce destination, found end of line"),
        ("reduce in[0:2] out[0:2] after", "line 3, column 16: expected 'into' after the reduce source in[0:2], found 'out[0:2]'"),
        ("copy in[4:2] to out[0:2]", "line 3, column 6: slice in[4:2] ends before it starts"),
        ("copy buf[0:2] to out[0:2]", "line 3, column 6: expected a buffer slice (in[a:b], out[a:b] or scratchK[a:b]), found 'buf[0:2]'"),
        ("copy in(0:2) to out[0:2]", "line 3, column 8: expected '[' in the slice (e.g. in[0:8]), found '(0:2)'"),
        ("copy in[0-2] to out[0:2]", "line 3, column 10: expected ':' in the slice (e.g. in[0:8]), found '-2]'"),
        ("copy in[0:] to out[0:2]", "line 3, column 11: expected the end element of the slice, found ']'"),
        ("copy in[0:2 to out[0:2]", "line 3, column 12: expected ']' to close the slice, found 'to'"),
        ("copy scratchX[0:2] to out[0:2]", "line 3, column 13: expected a scratch buffer number 0..65535 after 'scratch', found 'X[0:2]'"),
        ("send 16b to 1 data in[0:8]", "line 3, column 20: send size 16b does not match data in[0:8]: 8 elements of byte are 8 bytes"),
        ("recv 8b from 1 reduce sideways", "line 3, column 23: expected 'before' (dst = src op dst) or 'after' (dst = dst op src) after 'reduce', found 'sideways'"),
    ];
    for (body, want) in cases {
        assert_eq!(in_rank0(body), *want, "input: {body}");
    }
}

#[test]
fn errors_at_file_level() {
    let cases: &[(&str, &str)] = &[
        ("num_ranks 1\nsend 8b to 0\n", "line 2, column 1: send outside a rank block; expected 'rank R {' before it"),
        ("num_ranks 1\nl1: calc 5\n", "line 2, column 1: label 'l1' outside a rank block; expected 'rank R {' before it"),
        ("num_ranks 1\na requires b\n", "line 2, column 1: a dependency outside a rank block; expected 'rank R {' before it"),
        ("num_ranks 1\n}\n", "line 2, column 1: '}' without an open rank block"),
        ("num_ranks 1\nrank 0 {\n}\n}\n", "line 4, column 1: '}' without an open rank block"),
        ("num_ranks 2\nrank 0 {\n}\nrank 0 {\n}\n", "line 4, column 1: rank 0 has a second block (a rank has at most one)"),
        ("num_ranks 3\nrank 2 {\n}\nrank 2 {\n}\n", "line 4, column 1: rank 2 has a second block (a rank has at most one)"),
        ("num_ranks 2\nrank 0\n{\n}\n", "line 2, column 7: expected '{' after 'rank 0', found end of line"),
        ("num_ranks 2\nrank x {\n}\n", "line 2, column 6: expected a rank number after 'rank', found 'x'"),
        ("num_ranks 2\nrank 99999999999999999999 {\n}\n", "line 2, column 1: rank 99999999999999999999 is outside num_ranks 2 (ranks are 0..1)"),
        ("num_ranks x\n", "line 1, column 11: expected the number of ranks after 'num_ranks', found 'x'"),
        ("num_ranks 0\n", "line 1, column 11: num_ranks 0 is out of range (1 to 4294967294)"),
        ("num_ranks 4294967295\n", "line 1, column 11: num_ranks 4294967295 is out of range (1 to 4294967294)"),
        ("num_ranks 4\nnum_ranks 5\n", "line 2, column 1: num_ranks 5 contradicts num_ranks 4 on line 1"),
        ("num_ranks 4\nranks 4\n", "line 2, column 1: expected 'num_ranks N', 'rank R {', 'collective ...' or 'name ...', found 'ranks'"),
        ("num_ranks 1 rank 0 { calc 5 }\n", "line 1, column 29: expected 'cpu', 'nic' or end of line after the calc, found '}'"),
        ("/* é */ num_ranks 1\nrank 0 {\nsend 8b from 0\n}\n", "line 3, column 9: expected 'to' after the send size, found 'from'"),
        ("/* é */ send 8b to 0\n", "line 1, column 9: send outside a rank block; expected 'rank R {' before it"),
        ("num_ranks 1\nrank 0 {\n}\ncollective none\n", "line 4, column 1: 'collective' must come before the first rank block"),
        ("num_ranks 1\ncollective none\ncollective none\n", "line 3, column 1: 'collective' given twice (first on line 2)"),
        ("num_ranks 1\ncollective all\n", "line 2, column 12: unknown collective 'all'; accepted: none, allreduce, alltoall"),
        ("num_ranks 1\ncollective\n", "line 2, column 11: expected a collective (none, allreduce, alltoall) after 'collective', found end of line"),
        ("num_ranks 1\ncollective allreduce dtype float128\n", "line 2, column 28: unknown dtype 'float128'; accepted: int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, byte"),
        ("num_ranks 1\ncollective allreduce op xor\n", "line 2, column 25: unknown reduction op 'xor'; accepted: sum, prod, max, min"),
        ("num_ranks 1\ncollective allreduce count x\n", "line 2, column 28: expected an element count after 'count', found 'x'"),
        ("num_ranks 1\ncollective allreduce count 1 count 2\n", "line 2, column 30: 'count' given twice"),
        ("num_ranks 1\ncollective allreduce size 2\n", "line 2, column 22: expected 'count', 'dtype', 'op', 'block' or end of line after the collective, found 'size'"),
        ("num_ranks 1\nname \"a\nrank 0 {\n}\n", "line 2, column 6: unterminated quoted name: expected a closing '\"' on the same line"),
        ("num_ranks 1\nname \"a\\qb\"\n", "line 2, column 8: unknown escape '\\qb\"' in the name (accepted: \\\\ \\\" \\n \\r \\t \\xHH)"),
        ("num_ranks 1\nname \"a\\xff\"\n", "line 2, column 8: expected two hex digits below 80 after '\\x'"),
        ("num_ranks 1\nname \"a\" b\n", "line 2, column 10: expected end of line after the quoted name, found 'b'"),
        ("num_ranks 1\nname \"a\"\nname \"b\"\n", "line 3, column 1: 'name' given twice (first on line 2)"),
    ];
    for (text, want) in cases {
        assert_eq!(err(text), *want, "input: {text}");
    }
}

#[test]
fn invalid_utf8_is_one_error() {
    let mut bytes = b"num_ranks 1\nrank 0 {\nl\xff: calc 1\n}\n".to_vec();
    let e = parse_reader(bytes.as_slice(), "x").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 3, column 1: expected an op (send, recv, calc, reduce, copy, sleep), a label ('l1: send ...'), a dependency ('l2 requires l1') or '}', found 'l\u{fffd}:'"
    );
    bytes = b"num_ranks 1\nname \"\xff\"\n".to_vec();
    let e = parse_reader(bytes.as_slice(), "x").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 2, column 6: the name is not valid UTF-8"
    );
}

#[test]
fn numbered_and_named_labels_are_distinct() {
    // `l1` and `l01` are different labels to txt2bin (it compares strings); so are labels with
    // more digits than a u64 holds.
    let s = parse(
        "num_ranks 1\nrank 0 {\nl1: calc 1\nl01: calc 2\nl0: calc 3\nl99999999999999999999: calc 4\nl999999999999999999: calc 5\n\
         l0 requires l01\nl1 requires l0\nl999999999999999999 requires l99999999999999999999\n}\n",
        "n",
    )
    .unwrap();
    let mut p = Program::new();
    for ns in 1..=5 {
        p.push(calc(ns));
    }
    p.requires(2, 1);
    p.requires(0, 2);
    p.requires(4, 3);
    assert_eq!(
        s,
        Schedule::from_programs(Meta::sizes_only("n"), [p]).unwrap()
    );
    assert_eq!(
        in_rank0("l1: calc 1\nl01: calc 2\nl1: calc 3"),
        "line 5, column 1: label 'l1' is defined twice in rank 0 (first on line 3)"
    );
    assert_eq!(
        in_rank0("l1: calc 1\nl01: calc 2\nl2 requires l1"),
        "line 5, column 1: unknown label 'l2' in dependency (labels defined in rank 0: l1, l01)"
    );
}
