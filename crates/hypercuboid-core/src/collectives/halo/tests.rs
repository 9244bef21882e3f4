use super::*;
use crate::schedule::verify::{verify, VerifyOptions};
use crate::schedule::{OpKind, Payload, Schedule};

fn algs() -> Vec<Algorithm> {
    [
        "halo_blocking",
        "halo_nonblocking",
        "halo_nonblocking:unpack=on_arrival",
        "halo_reduced",
    ]
    .iter()
    .map(|t| Algorithm::parse(t).unwrap())
    .collect()
}

/// The box `origin`, `extent` of every value of a 4x4x4 output array with 2 values per site.
fn out_region(origin: [u32; 3], extent: [u32; 3]) -> Region {
    Region {
        slot: crate::schedule::Slot::Output,
        dims: [4, 4, 4, 2],
        origin,
        extent,
        values: Region::ALL_VALUES,
    }
}

/// The first `len` elements of scratch buffer 0.
fn scratch(len: u64) -> crate::schedule::Slice {
    crate::schedule::Slice::new(crate::schedule::Slot::Scratch(0), 0, len)
}

/// The times of rank 0's computes, in program order.
fn computes(s: &Schedule) -> Vec<u64> {
    let v = s.rank(0);
    (0..v.len())
        .filter_map(|i| match v.op(i).kind {
            OpKind::Compute { time } => Some(time),
            _ => None,
        })
        .collect()
}

fn problem(lattice: [u32; 3], dims: [u32; 3], periodic: [bool; 3]) -> HaloProblem {
    HaloProblem::new(Decomposition::new(lattice, dims, periodic).unwrap())
}

/// Verifies with every send synchronous (the seed's `MPI_Issend`); panics with the report.
fn assert_sound(alg: &Algorithm, p: &HaloProblem) -> Schedule {
    let s = generate(alg, p).unwrap();
    let r = verify(&s, &VerifyOptions::default());
    assert!(r.is_sound(), "{alg} on {}: {r}", p.decomp.describe());
    let sem = r.semantics.as_ref().expect("semantics checked");
    assert!(sem.correct && sem.exact, "{alg}: {r}");
    s
}

#[test]
fn every_variant_on_every_small_decomposition_verifies() {
    let dims_list = [
        [1, 1, 1],
        [2, 1, 1],
        [1, 2, 1],
        [1, 1, 2],
        [2, 2, 2],
        [3, 1, 1],
        [3, 2, 1],
        [1, 3, 2],
        [2, 3, 2],
    ];
    let periodics = [
        [true, true, true],
        [false, false, false],
        [true, false, true],
        [false, true, false],
    ];
    for dims in dims_list {
        for periodic in periodics {
            // uneven subdomains: 3 or 2 sites per rank and axis (2 or 3 in every subdomain)
            let lattice = dims.map(|p| 2 * p + 1);
            let p = problem(lattice, dims, periodic);
            for alg in algs() {
                assert_sound(&alg, &p);
            }
        }
    }
}

#[test]
fn the_seeds_decomposition_verifies_with_cubic_subdomains() {
    let d = Decomposition::with_subdomain([4, 4, 4], dims_create(24), [true; 3]).unwrap();
    assert_eq!(d.dims, [4, 3, 2]);
    let p = HaloProblem::new(d);
    for alg in algs() {
        assert_sound(&alg, &p);
    }
}

#[test]
fn message_counts_per_rank() {
    let p = problem([9, 9, 9], [3, 3, 3], [true; 3]);
    let count = |alg: &str| {
        let s = generate(&Algorithm::parse(alg).unwrap(), &p).unwrap();
        let v = s.rank(13);
        let sends = (0..v.len())
            .filter(|&i| matches!(v.op(i).kind, OpKind::Send { .. }))
            .count();
        let packs = (0..v.len())
            .filter(|&i| matches!(v.op(i).kind, OpKind::Pack { .. }))
            .count();
        (sends, packs)
    };
    assert_eq!(count("blocking"), (6, 6));
    assert_eq!(count("nonblocking"), (26, 26));
    assert_eq!(count("reduced"), (18, 18));
    // a non-periodic corner rank of 3x3x3 has 7 neighbours (3 faces, 3 edges, 1 corner)
    let q = problem([9, 9, 9], [3, 3, 3], [false; 3]);
    let s = generate(&Algorithm::parse("nonblocking").unwrap(), &q).unwrap();
    let v = s.rank(0);
    let sends = (0..v.len())
        .filter(|&i| matches!(v.op(i).kind, OpKind::Send { .. }))
        .count();
    assert_eq!(sends, 7);
}

#[test]
fn two_ranks_on_a_periodic_axis_tell_their_messages_apart_by_tag() {
    let p = problem([4, 2, 2], [2, 1, 1], [true; 3]);
    let s = assert_sound(&Algorithm::parse("blocking").unwrap(), &p);
    let v = s.rank(0);
    let mut sends: Vec<(u32, i32)> = (0..v.len())
        .filter_map(|i| match v.op(i).kind {
            OpKind::Send { peer, tag, .. } => Some((peer, tag)),
            _ => None,
        })
        .collect();
    sends.sort_unstable();
    // x: both to rank 1 (tags of -x and +x); y, z: to itself
    let t = |d: [i8; 3]| tag(d);
    let mut want = vec![
        (1, t([-1, 0, 0])),
        (1, t([1, 0, 0])),
        (0, t([0, -1, 0])),
        (0, t([0, 1, 0])),
        (0, t([0, 0, -1])),
        (0, t([0, 0, 1])),
    ];
    want.sort_unstable();
    assert_eq!(sends, want);
}

#[test]
fn the_reduced_exchange_sends_5_per_face_and_1_per_edge() {
    let d = Decomposition::with_subdomain([16, 16, 16], [2, 2, 2], [true; 3]).unwrap();
    let spec = HaloProblem::new(d)
        .spec(&Algorithm::Reduced { overlap: false })
        .unwrap();
    let (full, reduced) = reduced::saving(&spec, 0);
    assert_eq!(full, (6 * 256 + 12 * 16 + 8) * 19);
    assert_eq!(reduced, 6 * 256 * 5 + 12 * 16);
    // bytes on the wire per rank, from the schedule itself
    let s = generate(&Algorithm::parse("reduced").unwrap(), &HaloProblem::new(d)).unwrap();
    let v = s.rank(0);
    let bytes: u64 = (0..v.len())
        .filter(|&i| matches!(v.op(i).kind, OpKind::Send { .. }))
        .map(|i| v.op(i).bytes(8))
        .sum();
    assert_eq!(bytes, reduced * 8);
    assert!(
        HaloProblem::new(Decomposition::new([4, 4, 4], [1, 1, 1], [true; 3]).unwrap())
            .spec(&Algorithm::Reduced { overlap: false })
            .is_ok()
    );
    let mut p = HaloProblem::new(d);
    p.values = 7;
    assert_eq!(
        generate(&Algorithm::parse("reduced").unwrap(), &p)
            .unwrap_err()
            .to_string(),
        "invalid values '7': the D3Q19 stencil moves the 19 distributions of a site; accepted: 19"
    );
}

#[test]
fn unknown_variants_name_the_accepted_ones() {
    let e = Algorithm::parse("halo_fast").unwrap_err().to_string();
    assert!(
        e.contains("unknown halo algorithm 'halo_fast'")
            && e.contains("halo_blocking")
            && e.contains("halo_nonblocking")
            && e.contains("halo_reduced"),
        "{e}"
    );
    let e = Algorithm::parse("nonblocking:unpack=early")
        .unwrap_err()
        .to_string();
    assert!(e.contains("accepted: at_end, on_arrival"), "{e}");
    assert_eq!(
        Algorithm::parse("nonblocking:unpack=on_arrival").unwrap(),
        Algorithm::Nonblocking {
            unpack: Unpack::OnArrival,
            overlap: false
        }
    );
    assert_eq!(
        Algorithm::parse("nonblocking:unpack=on_arrival")
            .unwrap()
            .name(),
        "halo_nonblocking:unpack=on_arrival"
    );
}

/// The schedule with one op of rank `r` replaced.
fn broken(s: &Schedule, r: Rank, f: impl Fn(&mut Program)) -> Schedule {
    let progs = (0..s.nranks()).map(|q| {
        let mut p = s.program(q);
        if q == r {
            f(&mut p);
        }
        p
    });
    Schedule::from_programs(s.meta().clone(), progs).unwrap()
}

/// Unpacks rank 0's -x face buffer into its +x halo plane instead.
fn misplace_unpack(prog: &mut Program) {
    let mut first: Option<usize> = None;
    for i in 0..prog.ops.len() {
        if let OpKind::Unpack { dst, .. } = prog.ops[i].kind {
            if dst.origin[0] == 0 && dst.extent[1] == 2 && dst.extent[2] == 2 {
                first = Some(i);
            }
        }
    }
    let i = first.expect("the -x unpack");
    if let OpKind::Unpack { dst, .. } = &mut prog.ops[i].kind {
        dst.origin[0] = 3;
    }
}

#[test]
fn hand_broken_schedules_are_reported_exactly() {
    let p = problem([2, 2, 2], [1, 1, 1], [true; 3]);
    let s = generate(&Algorithm::parse("nonblocking").unwrap(), &p).unwrap();
    let r = verify(&broken(&s, 0, misplace_unpack), &VerifyOptions::default());
    assert!(!r.is_sound());
    let lines: Vec<String> = r.problems.iter().map(|p| p.to_string()).collect();
    // The -x halo keeps its old values; the +x one is overwritten by the wrong plane.
    assert_eq!(
        lines,
        vec![
            "wrong result: rank 0 out[95:133] holds rank 0's site (0, 1, 1) value 0: rank 0's \
             site (0, 1, 1) value 0 mirrors rank 0's site (2, 1, 1) value 0, which it must \
             hold (76 elements of the output wrong)"
                .to_string()
        ]
    );
    // Unpacked on arrival, the two unpacks into the +x halo are unordered: a race too.
    let s = generate(
        &Algorithm::parse("nonblocking:unpack=on_arrival").unwrap(),
        &p,
    )
    .unwrap();
    let r = verify(&broken(&s, 0, misplace_unpack), &VerifyOptions::default());
    let kinds: Vec<&str> = r.problems.iter().map(|p| p.kind()).collect();
    assert_eq!(kinds, vec!["buffer-race", "wrong-result"], "{r}");
    assert!(
        r.problems[0].to_string().ends_with(
            "both touch out[1007:1045], one of them writes, and neither completes before the \
             other starts"
        ),
        "{r}"
    );
    // A send shorter than its receive: a size mismatch.
    let b = broken(&s, 0, |prog| {
        let i = prog
            .ops
            .iter()
            .position(|o| matches!(o.kind, OpKind::Send { .. }))
            .unwrap();
        if let OpKind::Send {
            data: Payload::Data(sl),
            ..
        } = &mut prog.ops[i].kind
        {
            sl.len -= 1;
        }
    });
    let r = verify(&b, &VerifyOptions::default());
    assert!(!r.is_sound());
    assert_eq!(r.problems[0].kind(), "size-mismatch", "{r}");
}

#[test]
fn regions_name_their_runs_and_problems() {
    let r = out_region([1, 0, 3], [2, 4, 1]);
    let mut runs = Vec::new();
    r.for_each_run(|s| runs.push((s.offset, s.len)));
    // z = 3 of every (i, j): runs of 2 values, one per row
    assert_eq!(runs.len(), 8);
    assert_eq!(runs[0], (r.index(1, 0, 3, 0), 2));
    assert_eq!(r.len(), 16);
    assert_eq!(r.to_string(), "out<4x4x4x2>[1:3,0:4,3:4,*]");
    let full = Region {
        origin: [1, 0, 0],
        extent: [2, 4, 4],
        ..r
    };
    let mut runs = Vec::new();
    full.for_each_run(|s| runs.push((s.offset, s.len)));
    assert_eq!(runs, vec![(32, 64)]);
    let masked = Region { values: 0b10, ..r };
    assert_eq!(masked.len(), 8);
    assert_eq!(masked.to_string(), "out<4x4x4x2>[1:3,0:4,3:4,{1}]");
    let bad = Region {
        extent: [4, 4, 1],
        ..r
    };
    assert_eq!(
        bad.problem().unwrap(),
        "region out<4x4x4x2>[1:5,0:4,3:4,*]: sites 1..5 on axis x are outside the array's 4 sites"
    );
    let bad = Region { values: 0b100, ..r };
    assert_eq!(
        bad.problem().unwrap(),
        "region out<4x4x4x2>[1:3,0:4,3:4,{2}]: it selects values beyond the array's 2 values per site"
    );
}

#[test]
fn overlap_puts_the_interior_between_start_and_end() {
    let mut p = problem([8, 8, 8], [2, 1, 1], [true; 3]);
    p.kernel = 1000;
    let s = generate(&Algorithm::parse("nonblocking:overlap=on").unwrap(), &p).unwrap();
    // 4x8x8 subdomain: interior 2x6x6 = 72 sites, boundary 256 - 72 = 184
    assert_eq!(computes(&s), vec![72 * 1000, 184 * 1000]);
    assert!(verify(&s, &VerifyOptions::default()).is_sound());
    let s = generate(&Algorithm::parse("blocking").unwrap(), &p).unwrap();
    assert_eq!(computes(&s), vec![256 * 1000]);
}

#[test]
fn one_rank_programs_equal_the_schedules() {
    let p = problem([7, 5, 6], [3, 2, 2], [true, false, true]);
    for alg in algs() {
        let s = generate(&alg, &p).unwrap();
        let mut out = Program::new();
        for r in 0..s.nranks() {
            program(&alg, &p, r, &mut out).unwrap();
            assert_eq!(out, s.program(r), "{alg} rank {r}");
        }
    }
}

#[test]
fn columns_carry_regions_both_ways() {
    use crate::schedule::columns::{Columns, REGION_FIELDS};
    let p = problem([5, 4, 3], [1, 1, 1], [true, false, true]);
    for alg in algs() {
        let s = generate(&alg, &p).unwrap();
        let v = s.rank(0);
        let cols = Columns::of_rank(&v, 8);
        let regions = cols.region.iter().filter(|&&r| r >= 0).count();
        assert_eq!(cols.regions.len(), regions * REGION_FIELDS);
        let back = cols.checked(0, 1, s.meta().rank_buffer_lens(0)).unwrap();
        assert_eq!(back, s.program(0), "{alg}");
        // a region row beyond the table is refused with the op named
        let mut bad = cols.clone();
        let k = bad.region.iter().position(|&r| r >= 0).unwrap();
        bad.region[k] = 999;
        assert_eq!(
            bad.decode(0).unwrap_err().to_string(),
            format!(
                "rank 0 op {k}: a pack needs a region: region 999 is not a row of the {regions} \
                 regions"
            )
        );
    }
}

#[test]
fn region_ops_are_validated() {
    let region = out_region([0, 0, 0], [1, 4, 4]);
    let mut prog = Program::new();
    prog.pack(region, scratch(31));
    assert_eq!(
        prog.validate(0, 1).unwrap_err().to_string(),
        "rank 0 op 0: pack of 32 elements between out<4x4x4x2>[0:1,0:4,0:4,*] and \
         scratch0[0:31]: lengths differ"
    );
    let mut prog = Program::new();
    prog.unpack(
        scratch(32),
        Region {
            slot: crate::schedule::Slot::Input,
            ..region
        },
    );
    assert_eq!(
        prog.validate(0, 1).unwrap_err().to_string(),
        "rank 0 op 0: unpack into the input buffer: it is read-only"
    );
    // a region beyond the end of its buffer is outside it
    let last = Region {
        origin: [3, 0, 0],
        ..region
    };
    let mut prog = Program::new();
    prog.pack(last, scratch(32));
    assert_eq!(
        prog.check_extents(0, (0, 100), &[32])
            .unwrap_err()
            .to_string(),
        "rank 0 op 0: pack slice out[96:128] is outside the output buffer (100 elements)"
    );
    assert!(prog.check_extents(0, (0, 128), &[32]).is_ok());
}

#[test]
fn too_large_for_the_element_check_is_a_note() {
    // 1 rank, (512+2) x (512+2) x (30+2) x 19 elements plus the scratch buffers > 2^27
    let p = problem([512, 512, 30], [1, 1, 1], [true; 3]);
    let s = generate(&Algorithm::parse("blocking").unwrap(), &p).unwrap();
    let r = verify(&s, &VerifyOptions::default());
    assert!(r.is_sound(), "{r}");
    assert!(r.semantics.is_none());
    assert!(
        r.notes.iter().any(|n| n.starts_with(
            "semantics not checked: the halo check tracks every element of every local array \
             and scratch buffer, 180710064 here, above its limit of 134217728"
        )),
        "{:?}",
        r.notes
    );
}

#[test]
fn repeated_calls_simulate_every_op_every_call() {
    use crate::model::parse_model;
    use crate::sim::{simulate, SimOptions};
    let p = problem([8, 8, 8], [2, 2, 2], [true; 3]);
    let s = generate(&Algorithm::parse("nonblocking").unwrap(), &p).unwrap();
    let m = parse_model("loggops:L=2us,o=1us,g=1us,G=2.78ns,S=64KiB,copy=0.25ns").unwrap();
    let run = |calls| {
        simulate(
            &s,
            &m,
            &SimOptions {
                calls,
                ..SimOptions::default()
            },
        )
        .unwrap()
    };
    let one = run(1);
    let five = run(5);
    assert_eq!(one.ops, s.total_ops());
    assert_eq!(five.ops, 5 * s.total_ops());
    assert_eq!(five.messages, 5 * 8 * 26);
    assert!(
        five.completion >= 5 * one.completion - 5 * 1_000_000,
        "{}",
        five.completion
    );
    assert_eq!(run(0).completion, one.completion); // 0 and 1: once
    let traced = simulate(
        &s,
        &m,
        &SimOptions {
            calls: 2,
            trace: true,
            ..SimOptions::default()
        },
    );
    assert_eq!(
        traced.unwrap_err().to_string(),
        "schedule too large to simulate: a trace of 2 calls (a trace records one: simulate 1 \
         call) (limit 1)"
    );
}

#[test]
fn byte_values_are_refused_in_a_halo_exchanges_words() {
    let mut p = problem([4, 4, 4], [2, 1, 1], [true; 3]);
    p.dtype = Dtype::Byte;
    assert_eq!(
        generate(&algs()[0], &p).unwrap_err().to_string(),
        "invalid dtype 'byte': a halo exchange moves typed values; accepted: float64, float32, \
         int16, uint8 (bytes 8, 4, 2, 1)"
    );
}
