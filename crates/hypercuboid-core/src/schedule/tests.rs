use super::storage::UintColumn;
use super::*;

fn pairwise(rank: u32, n: u32) -> Program {
    let mut p = Program::new();
    let peer = rank ^ 1;
    let all = Slice::new(Slot::Input, 0, 4);
    let out = Slice::new(Slot::Output, 0, 4);
    let c = p.copy(all, out);
    let s = p.send(peer % n, 0, all);
    let r = p.recv_reduce(peer % n, 0, out, Combine::rank_order(rank, peer % n));
    p.requires(r, c);
    p.irequires(s, c);
    p
}

#[test]
fn shares_shapes_and_restores_peers() {
    let meta = Meta::allreduce(4, Dtype::Float64, ReduceOp::Sum, "test");
    let s = Schedule::from_programs(meta, (0..8).map(|r| pairwise(r, 8))).unwrap();
    assert_eq!(s.nranks(), 8);
    assert_eq!(s.num_shapes(), 1);
    assert_eq!(s.total_ops(), 24);
    for r in 0..8 {
        let mut expect = pairwise(r, 8);
        expect.normalize();
        assert_eq!(s.program(r), expect);
        assert_eq!(s.rank(r).op(1).peer(), Some(r ^ 1));
    }
    let v = s.rank(3);
    assert_eq!(
        v.deps(2),
        &[Dep {
            on: 0,
            kind: DepKind::Requires
        }]
    );
    assert_eq!(
        v.dependents(0),
        &[(1, DepKind::IRequires), (2, DepKind::Requires)]
    );
    assert!(v.dependents(2).is_empty());
}

#[test]
fn rank_ordered_reductions_share_a_shape() {
    // MPICH's order: the lower rank's value on the left. Rank 2k receives from 2k+1 with
    // `After`, rank 2k+1 from 2k with `Before`; stored relative to the peer, both are alike.
    let meta = Meta::allreduce(1, Dtype::Float64, ReduceOp::Sum, "t");
    let progs = (0..4u32).map(|r| {
        let mut p = Program::new();
        let x = Slice::new(Slot::Input, 0, 1);
        let y = Slice::new(Slot::Output, 0, 1);
        p.send(r ^ 1, 0, x);
        p.recv_reduce_into(r ^ 1, 0, x, y, Combine::rank_order(r, r ^ 1));
        p
    });
    let s = Schedule::from_programs(meta, progs).unwrap();
    assert_eq!(s.num_shapes(), 1);
    for r in 0..4 {
        let OpKind::Recv {
            combine, operand, ..
        } = s.rank(r).op(1).kind
        else {
            panic!("op 1 is a recv")
        };
        let expect = if r % 2 == 0 {
            Combine::After
        } else {
            Combine::Before
        };
        assert_eq!(combine, expect, "rank {r}");
        assert_eq!(operand, Some(Slice::new(Slot::Input, 0, 1)));
    }
}

#[test]
fn distinct_shapes_are_kept_apart() {
    let meta = Meta::sizes_only("t");
    let mut progs = vec![Program::new(), Program::new()];
    progs[0].send(1, 0, Slice::new(Slot::Input, 0, 1));
    progs[1].recv(0, 0, Slice::new(Slot::Output, 0, 1));
    let s = Schedule::from_programs(meta, progs).unwrap();
    assert_eq!(s.num_shapes(), 2);
    assert_eq!(s.rank(0).op(0).name(), "send");
    assert_eq!(s.rank(1).op(0).name(), "recv");
}

#[test]
fn rejects_bad_programs() {
    let meta = Meta::sizes_only("t");
    let mut b = ScheduleBuilder::new(2, meta.clone()).unwrap();
    let mut p = Program::new();
    p.send(2, 0, Slice::new(Slot::Input, 0, 1));
    assert_eq!(
        b.push(&mut p).unwrap_err().to_string(),
        "rank 0 op 0: send to rank 2 but the schedule has ranks 0..2"
    );
    let mut p = Program::new();
    let a = p.compute(5);
    p.requires(a, 7);
    assert_eq!(
        b.push(&mut p).unwrap_err().to_string(),
        "rank 0 op 0 depends on op 7: op index out of range (the rank has 1 ops)"
    );
    assert_eq!(
        ScheduleBuilder::new(0, meta.clone())
            .unwrap_err()
            .to_string(),
        format!("invalid number of ranks 0: a schedule has 1 to {MAX_RANKS} ranks")
    );
    let b = ScheduleBuilder::new(3, meta.clone()).unwrap();
    assert_eq!(
        b.finish().unwrap_err().to_string(),
        "schedule has programs for 0 of 3 ranks"
    );
    // A program of the last rank's shape is checked for its peers only, with the same
    // messages as the full check.
    let mut b = ScheduleBuilder::new(2, meta).unwrap();
    let program = |peer: Rank, from: Rank| {
        let mut p = Program::new();
        p.send(peer, 0, Slice::new(Slot::Input, 0, 1));
        p.recv(from, 0, Slice::new(Slot::Output, 0, 1));
        p
    };
    b.push(&mut program(1, 1)).unwrap();
    assert_eq!(
        b.push(&mut program(2, 0)).unwrap_err().to_string(),
        "rank 1 op 0: send to rank 2 but the schedule has ranks 0..2"
    );
    assert_eq!(
        b.push(&mut program(0, 5)).unwrap_err().to_string(),
        "rank 1 op 1: recv from rank 5 but the schedule has ranks 0..2 (or -1 for any)"
    );
    b.push(&mut program(0, ANY_SOURCE)).unwrap();
    assert_eq!(b.finish().unwrap().num_shapes(), 1);
    assert!(Dtype::parse("float128")
        .unwrap_err()
        .to_string()
        .contains("accepted: int8"));
}

/// Builds a schedule of `n` ranks whose programs `f` writes, checking that every rank's
/// program (peers included) reads back as written.
fn built(n: u32, f: impl Fn(Rank, &mut Program)) -> Schedule {
    let progs: Vec<Program> = (0..n)
        .map(|r| {
            let mut p = Program::new();
            f(r, &mut p);
            p.normalize();
            p
        })
        .collect();
    let s = Schedule::from_programs(Meta::sizes_only("rules"), progs.clone()).unwrap();
    for (r, p) in progs.iter().enumerate() {
        assert_eq!(&s.program(r as Rank), p, "rank {r}");
        let peers: Vec<Rank> = s.rank(r as Rank).peers().collect();
        let expect: Vec<Rank> = p
            .ops
            .iter()
            .map(|o| o.peer().unwrap_or(ANY_SOURCE))
            .collect();
        assert_eq!(peers, expect, "rank {r}");
    }
    s
}

#[test]
fn peer_rules_xor_shift_and_constants() {
    use PeerRule::{Const, Shift, Xor};
    let x = Slice::new(Slot::Input, 0, 1);
    let y = Slice::new(Slot::Output, 0, 1);
    // Pairwise exchange: XOR 1 (a shift by 1 fails at rank 1), the copy has no peer.
    let s = built(8, |r, p| {
        p.compute(5);
        p.send(r ^ 1, 0, x);
        p.recv(r ^ 1, 0, y);
    });
    assert_eq!(s.num_shapes(), 1);
    assert_eq!(s.shapes()[0].peers, [Const(ANY_SOURCE), Xor(1), Xor(1)]);
    assert_eq!(s.explicit_peers(), 0);
    // A ring on 6 ranks (not a power of two): shifts by 1 and by n − 1, wrapping.
    let s = built(6, |r, p| {
        p.send((r + 1) % 6, 0, x);
        p.recv((r + 5) % 6, 0, y);
    });
    assert_eq!(s.shapes()[0].peers, [Shift(1), Shift(5)]);
    assert_eq!(s.rank(5).peer(0), 0);
    assert_eq!(s.rank(0).peer(1), 5);
    assert_eq!(s.explicit_peers(), 0);
    // Every rank sends to rank 0 and receives from anyone: constants.
    let s = built(4, |r, p| {
        if r != 0 {
            p.send(0, 0, x);
        }
        p.recv(ANY_SOURCE, 0, y);
    });
    assert_eq!(s.num_shapes(), 2);
    assert_eq!(s.shapes()[1].peers, [Const(0), Const(ANY_SOURCE)]);
    // A shape of one rank: its peers are constants.
    assert_eq!(s.shapes()[0].peers, [Const(ANY_SOURCE)]);
    assert_eq!(s.explicit_peers(), 0);
    // Ranks with programs of different lengths are numbered from a stored column.
    assert_eq!(
        (0..4).map(|r| s.op_offset(r)).collect::<Vec<_>>(),
        [0, 1, 3, 5]
    );
    assert_eq!(s.total_ops(), 7);
}

#[test]
fn peers_without_a_rule_are_stored() {
    use PeerRule::{Column, Const, Shift, Xor};
    let x = Slice::new(Slot::Input, 0, 1);
    let y = Slice::new(Slot::Output, 0, 1);
    // Op 1 follows no rule in this one shape (a permutation that is neither a XOR nor a
    // shift nor constant), op 0 does: only op 1's peers are stored, one a rank.
    const PERM: [Rank; 8] = [5, 3, 6, 1, 7, 0, 2, 4];
    let s = built(8, |r, p| {
        p.send(r ^ 2, 0, x);
        p.send(PERM[r as usize], 1, x);
    });
    assert_eq!(s.num_shapes(), 1);
    assert_eq!(s.shapes()[0].peers, [Xor(2), Column(0)]);
    assert_eq!(s.explicit_peers(), 8);
    assert_eq!(s.peer_row(3), &[1]);
    // A shared shape whose rule holds for some ranks only: ranks 0..5 send to r + 1 (rank 4's
    // r XOR 1 = 5 agrees too), ranks 5..8 to r XOR 1. The shift fails first at rank 5; the
    // peers of ranks 0..5, not kept while they were pushed, come back from the shift.
    let s = built(8, |r, p| {
        p.compute(1);
        p.send(if r < 5 { r + 1 } else { r ^ 1 }, 0, x);
        p.recv(r ^ 4, 0, y);
    });
    assert_eq!(s.num_shapes(), 1);
    assert_eq!(s.shapes()[0].peers, [Const(ANY_SOURCE), Column(0), Xor(4)]);
    assert_eq!(
        (0..8).map(|r| s.peer_row(r)[0]).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 4, 7, 6]
    );
    assert_eq!(s.explicit_peers(), 8);
    // Two shapes: only the ranks of the one without a rule have rows.
    let s = built(6, |r, p| {
        if r < 3 {
            p.send(r + 3, 0, x);
        } else {
            p.recv([1, 2, 0][r as usize - 3], 0, y);
        }
    });
    assert_eq!(s.num_shapes(), 2);
    assert_eq!(s.shapes()[0].peers, [Shift(3)]);
    assert_eq!(s.shapes()[1].peers, [Column(0)]);
    assert_eq!(s.explicit_peers(), 3);
    assert!(s.peer_row(1).is_empty());
    assert_eq!(s.peer_row(4), &[2]);
}

#[test]
fn uint_columns_widen_and_compare_by_value() {
    let mut c = UintColumn::with_capacity(4);
    let values = [0, 255, 256, 65_535, 65_536, u32::MAX as u64, 1 << 32, 7];
    let widths = [1, 1, 2, 2, 4, 4, 8, 8];
    let mut narrow = UintColumn::default();
    for (i, (&v, &w)) in values.iter().zip(&widths).enumerate() {
        c.push(v);
        assert_eq!((c.len(), c.width(), c.bytes()), (i + 1, w, (i + 1) * w));
        assert_eq!(c.last(), Some(v));
        if w == 1 {
            narrow.push(v);
        }
    }
    assert_eq!((0..c.len()).map(|i| c.get(i)).collect::<Vec<_>>(), values);
    // Equal values in different widths are equal columns.
    let mut wide = UintColumn::default();
    wide.push(1 << 40);
    let mut wide = match wide {
        UintColumn::U64(mut v) => {
            v.clear();
            UintColumn::U64(v)
        }
        _ => panic!("a value of 2^40 needs 8 bytes"),
    };
    wide.push(0);
    wide.push(255);
    assert_eq!(wide, narrow);
    assert_ne!(wide.bytes(), narrow.bytes());
    // `fill` widens first, then repeats.
    let mut f = UintColumn::default();
    f.fill(0, 9);
    assert!(f.is_empty() && f.last().is_none());
    f.push(3);
    f.fill(3, 300);
    assert_eq!((f.len(), f.width()), (4, 2));
    assert_eq!(
        (0..4).map(|i| f.get(i)).collect::<Vec<_>>(),
        [3, 300, 300, 300]
    );
}

#[test]
fn scratch_extents() {
    let mut p = Program::new();
    p.recv(0, 0, Slice::new(Slot::Scratch(1), 3, 5));
    assert_eq!(p.scratch_extents(), vec![0, 8]);
}
