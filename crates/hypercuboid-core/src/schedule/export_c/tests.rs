use super::names::c_identifiers;
use super::*;
use crate::collectives::allreduce::{self, Algorithm, AllreduceSpec};

fn allreduce(alg: &str, n: u32, count: u64, dtype: Dtype, op: ReduceOp) -> Schedule {
    let alg = Algorithm::parse(alg).unwrap();
    allreduce::generate(&alg, &AllreduceSpec::new(n, count, dtype, op)).unwrap()
}

fn text(s: &Schedule, name: &str) -> String {
    let mut out = Vec::new();
    write_c(s, &CExportOptions::new(name), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_entry_point_has_the_exact_signature() {
    let s = allreduce("recursive_doubling", 4, 37, Dtype::Float64, ReduceOp::Sum);
    let t = text(&s, "hc_allreduce");
    assert!(
        t.contains("\nint hc_allreduce(const void *sendbuf, void *recvbuf, MPI_Comm comm)\n{\n")
    );
    // the only function at file scope without `static` (the runner's have HC_API)
    let lines: Vec<&str> = t.lines().collect();
    let external: Vec<&str> = (1..lines.len())
        .filter(|&i| lines[i].starts_with("int ") || lines[i].starts_with("void "))
        .filter(|&i| lines[i - 1] != "HC_API")
        .map(|i| lines[i])
        .collect();
    assert_eq!(
        external,
        ["int hc_allreduce(const void *sendbuf, void *recvbuf, MPI_Comm comm)"]
    );
    for line in [
        "#define HCE_NRANKS 4\n",
        "#define HCE_COUNT 37\n",
        "#define HCE_DTYPE HC_DTYPE_FLOAT64\n",
        "#define HCE_OP HC_REDUCE_SUM\n",
        "#define HCE_INPUT_BYTES ((size_t)296)\n",
        "#define HC_API static __attribute__((unused))\n",
        " * Collective: allreduce of 37 float64 (double) with sum\n",
        " *     MPI_Allreduce(sendbuf, recvbuf, 37, MPI_DOUBLE, MPI_SUM, comm)\n",
        " *     int hc_allreduce(const void *sendbuf, void *recvbuf, MPI_Comm comm);\n",
    ] {
        assert!(t.contains(line), "{line:?} missing");
    }
    // the runner and its headers are inlined, not included
    assert!(!t.contains("#include \"hc_"));
    assert!(t.contains("#define HC_OP_SEND 0\n"));
    assert!(t.contains("HC_API\nint hc_plan_create("));
}

#[test]
fn a_sizes_only_schedule_takes_only_the_communicator() {
    let g = "num_ranks 2\nrank 0 {\nsend 8b to 1 tag 5\ncalc 100\n}\nrank 1 {\nrecv 8b from -1 tag 5\n}\n";
    let s = crate::schedule::goal::parse(g, "two.goal").unwrap();
    let opts = CExportOptions::for_schedule(&s);
    assert_eq!(opts.name, "hc_schedule");
    let e = CExport::new(&s, &opts).unwrap();
    assert_eq!(e.prototype(), "int hc_schedule(MPI_Comm comm)");
    let t = text(&s, "hc_schedule");
    assert!(t.contains("\nint hc_schedule(MPI_Comm comm)\n{\n"));
    assert!(t.contains("#define HCE_MAX_TAG 5\n"));
    assert!(t.contains("#define HCE_DTYPE HC_DTYPE_BYTE\n"));
    assert!(t.contains("static const int64_t hce_peers[3] = {\n    1, -1, -1\n};\n"));
    assert!(t.contains("static const uint64_t hce_peer_start[3] = {\n    0, 2, 3\n};\n"));
}

#[test]
fn ranks_of_one_shape_share_their_tables() {
    let s = allreduce(
        "recursive_doubling",
        4096,
        1000,
        Dtype::Float64,
        ReduceOp::Sum,
    );
    assert_eq!(s.num_shapes(), 1);
    let e = CExport::new(&s, &CExportOptions::new("hc_rd")).unwrap();
    // one body: its ops are written once
    assert_eq!(e.num_bodies(), 1);
    let t = text(&s, "hc_rd");
    assert_eq!(t.matches("static const uint8_t hce_b0_kind[").count(), 1);
    // kind and dep_kind of body 0 only
    assert_eq!(t.matches("static const uint8_t hce_").count(), 2);
    assert_eq!(t.matches(".kind = hce_b0_kind,").count(), 1);
    assert!(t.contains("static const hc_program hce_bodies[1] = {\n"));
    assert!(t.contains("static const uint32_t hce_rank_body[4096] = {\n    0, 0, 0, 0,"));
    // a receive's operand order is the rank's own (the lower rank's value on the left):
    // rank r's combine column spells r's bits, 4096 distinct small columns
    assert_eq!(e.num_combines(), 4096);
    assert_eq!(t.matches("static const int8_t hce_r").count(), 4096);
    assert!(t.contains(
        "static const int8_t *const hce_rank_combine[4096] = {\n    hce_r0_combine, \
         hce_r1_combine,"
    ));
    let ops = s.total_ops();
    assert!(t.contains(&format!("static const int64_t hce_peers[{ops}] = {{\n")));
    assert!(t.contains("static const uint64_t hce_peer_start[4097] = {\n"));
    // rank 1's peers in the flat array (recursive doubling: 1 ^ 2^k)
    let start = s.op_offset(1) as usize;
    let v = s.rank(1);
    let first: Vec<i64> = (0..v.len())
        .map(|i| v.op(i).peer().map_or(-1, |p| p as i64))
        .collect();
    assert_eq!(&e.peers[start..start + v.len()], first.as_slice());
    assert!(e.peers[start..start + v.len()].contains(&3));
    // one table of ops, not 4096: the file stays small
    assert!(t.len() < 2_000_000, "{} bytes", t.len());
}

#[test]
fn distinct_shapes_get_their_own_bodies() {
    let s = allreduce("tree", 3, 10, Dtype::Int32, ReduceOp::Max);
    let e = CExport::new(&s, &CExportOptions::new("hc_tree")).unwrap();
    assert_eq!(s.num_shapes(), 3);
    assert_eq!(e.num_bodies(), 3);
    assert_eq!(e.body_rank, vec![0, 1, 2]);
    let t = text(&s, "hc_tree");
    assert!(t.contains("#define HCE_OP HC_REDUCE_MAX\n"));
    assert!(t.contains("#define HCE_DTYPE HC_DTYPE_INT32\n"));
    assert_eq!(t.matches("    {   /* body ").count(), 3);
}

#[test]
fn names_must_be_c_identifiers_the_file_does_not_use() {
    for ok in [
        "hc_allreduce",
        "my_allreduce2",
        "_private",
        "allreduce_f64",
        "hc_schedule",
    ] {
        check_c_name(ok).unwrap();
    }
    let err = |n: &str| check_c_name(n).unwrap_err().to_string();
    assert_eq!(
        err("2fast"),
        "invalid C entry point name '2fast': a C identifier is a letter or '_' followed by \
         letters, digits and '_' (ASCII)"
    );
    assert!(err("hc-allreduce").contains("a C identifier is a letter"));
    assert!(err("").contains("a C identifier is a letter"));
    assert!(err("héllo").contains("(ASCII)"));
    assert_eq!(
        err("int"),
        "invalid C entry point name 'int': 'int' is a C keyword or main"
    );
    assert!(err("main").contains("C keyword or main"));
    assert!(err("_Foo").contains("reserved for the C implementation"));
    assert!(err("__foo").contains("reserved for the C implementation"));
    assert!(err("MPI_Allreduce").contains("reserves names beginning with MPI_ and PMPI_"));
    assert!(err("pmpi_x").contains("reserves names beginning with MPI_ and PMPI_"));
    assert!(err("hce_bodies").contains("hce_"));
    assert_eq!(
        err("reduce"),
        "invalid C entry point name 'reduce': 'reduce' is an identifier the exported file \
         already uses (the embedded runner or the entry point's code); choose another, e.g. \
         hc_allreduce_reduce"
    );
    for used in [
        "hc_plan_run",
        "hc_plan_create",
        "memcpy",
        "HC_OK",
        "int64_t",
        "rc",
    ] {
        assert!(err(used).contains("already uses"), "{used}");
    }
    // through the writer: refused before anything is written
    let s = allreduce("ring", 2, 4, Dtype::Int32, ReduceOp::Sum);
    let mut out = Vec::new();
    let e = write_c(&s, &CExportOptions::new("9lives"), &mut out).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert!(out.is_empty());
}

#[test]
fn identifiers_skip_comments_strings_and_numbers() {
    let mut ids = Vec::new();
    c_identifiers(
        "/* alpha */ int beta = 64ull; // gamma\nchar *d = \"delta \\\" eps\"; 'z' x1e9",
        |i| ids.push(i.to_string()),
    );
    assert_eq!(ids, ["int", "beta", "char", "d", "x1e9"]);
}

#[test]
fn refuses_what_cannot_run() {
    let err = |s: &Schedule| {
        CExport::new(s, &CExportOptions::new("f"))
            .unwrap_err()
            .to_string()
    };
    // a message above 2^31 - 1 bytes (ring: each message is a chunk of count / N)
    let s = allreduce(
        "recursive_doubling",
        2,
        1 << 28,
        Dtype::Float64,
        ReduceOp::Sum,
    );
    assert_eq!(
        err(&s),
        "rank 0 op 0: a send of 2147483648 bytes cannot be exported: one MPI call of the \
         runner moves at most 2^31 - 1 = 2147483647 bytes"
    );
    // a buffer whose bytes overflow
    let mut b = crate::schedule::ScheduleBuilder::new(
        1,
        crate::schedule::Meta::allreduce(u64::MAX / 4, Dtype::Float64, ReduceOp::Sum, "big"),
    )
    .unwrap();
    b.push(&mut crate::schedule::Program::new()).unwrap();
    let s = b.finish().unwrap();
    assert_eq!(
        err(&s),
        format!(
            "invalid count '{}': the input buffer of {} elements of float64 (8 bytes each) \
             exceeds 2^63 - 1 bytes, which the C export cannot address",
            u64::MAX / 4,
            u64::MAX / 4
        )
    );
    // a send with tag -1
    let g = "num_ranks 2\nrank 0 {\nsend 8b to 1 tag -1\n}\nrank 1 {\nrecv 8b from 0 tag -1\n}\n";
    let s = crate::schedule::goal::parse(g, "t").unwrap();
    assert_eq!(
        err(&s),
        "rank 0 op 0: a send with tag -1 cannot be exported: MPI has no \"any tag\" for a \
         send; give it a tag of 0 or more"
    );
    // an allreduce of bytes
    let b = crate::schedule::ScheduleBuilder::new(
        1,
        crate::schedule::Meta::allreduce(4, Dtype::Byte, ReduceOp::Sum, "b"),
    )
    .unwrap();
    let mut b = b;
    b.push(&mut crate::schedule::Program::new()).unwrap();
    assert!(err(&b.finish().unwrap()).starts_with(
        "invalid dtype 'byte': an allreduce needs a numeric dtype to reduce; accepted: int8"
    ));
}

#[test]
fn schedule_names_cannot_break_the_comment() {
    assert_eq!(comment_text("a */ b /* c\nd ??/"), "a * / b / * c?d ? ?/");
    let mut s = allreduce("ring", 2, 4, Dtype::Int32, ReduceOp::Sum);
    s = Schedule::from_programs(
        crate::schedule::Meta::allreduce(4, Dtype::Int32, ReduceOp::Sum, "evil */ x"),
        (0..2).map(|r| s.program(r)),
    )
    .unwrap();
    let t = text(&s, "f");
    assert!(t.contains(" * Schedule:   evil * / x\n"));
}

#[test]
fn empty_programs_export() {
    let s = Schedule::from_programs(
        crate::schedule::Meta::sizes_only("empty"),
        [crate::schedule::Program::new()],
    )
    .unwrap();
    let t = text(&s, "hc_empty");
    assert!(t.contains(".nops = 0,\n        .kind = NULL,"));
    assert!(t.contains("static const int64_t hce_peers[1] = {-1};"));
}
