//! The verifier on hand-built allreduce schedules: correct ones with their exact order flags,
//! and faulty ones, each caught with its exact problem and message.
//!
//! The builders are local (the real generators are written elsewhere): MPICH recursive doubling
//! with its operand order (MPIR_Allreduce_intra_recursive_doubling: `MPI_Reduce_local(tmp_buf,
//! recvbuf)` when the op is commutative or the peer is lower, else `recvbuf ⊕ tmp_buf`), the
//! coursework's ring rotation (every rank passes its running sum to the next, P−1 times) and
//! tree (reduce to rank 0 pairing `r` with `r + i/2`, then broadcast), a binomial tree pairing
//! `r` with `r + mask`, and a 2-rank exchange.

use crate::common::{input, out, tmp};
use hypercuboid_core::schedule::verify::{verify, Problem, Report, Semantics, VerifyOptions};
use hypercuboid_core::schedule::{
    Combine, Dtype, Meta, Op, OpKind, Payload, Program, ReduceOp, Schedule, Slice, Slot,
    ANY_SOURCE, ANY_TAG,
};

const C: u64 = 4;

fn meta(name: &str) -> Meta {
    Meta::allreduce(C, Dtype::Float64, ReduceOp::Sum, name)
}

fn sched(name: &str, programs: Vec<Program>) -> Schedule {
    Schedule::from_programs(meta(name), programs).unwrap()
}

fn run(s: &Schedule) -> Report {
    verify(s, &VerifyOptions::default())
}

/// A program with the stage of every op (for the property tests: an op only depends, locally
/// and through messages, on ops of its stage or earlier ones).
#[derive(Clone, Debug)]
pub(crate) struct Staged {
    pub p: Program,
    pub stage: Vec<u32>,
}

impl Staged {
    /// A program that starts by copying its input to its output (stage 0), and that copy.
    fn started() -> (Staged, u32) {
        let mut st = Staged {
            p: Program::new(),
            stage: Vec::new(),
        };
        let c = st.at(0, |p| p.copy(input(C), out(C)));
        (st, c)
    }
    /// Adds the op that `add` pushes, in stage `stage`.
    fn at(&mut self, stage: u32, add: impl FnOnce(&mut Program) -> u32) -> u32 {
        let id = add(&mut self.p);
        self.stage.push(stage);
        assert_eq!(self.stage.len() as u32, id + 1);
        id
    }
}

/// Faults the builders can inject.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    None,
    /// Rank 3 drops its stage-0 reduce (its contribution of rank 2 is lost).
    SkipReduce,
    /// Rank 0 sends its stage-0 message to rank 2 instead of rank 1.
    WrongPeer,
    /// The reduce does not wait for the send of the same buffer.
    Race,
}

/// MPICH recursive doubling for a power of two; `noncommutative`: MPICH's order for a
/// non-commutative op (lower rank's data on the left), else its commutative order (incoming on
/// the left).
fn recursive_doubling(n: u32, noncommutative: bool, fault: Fault) -> Vec<Staged> {
    (0..n)
        .map(|r| {
            let (mut st, c) = Staged::started();
            let mut prev = vec![c];
            let mut k = 0;
            while 1 << k < n {
                let dst = r ^ (1 << k);
                let to = if fault == Fault::WrongPeer && r == 0 && k == 0 {
                    2
                } else {
                    dst
                };
                let s = st.at(k + 1, |p| p.send(to, k as i32, out(C)));
                let rv = st.at(k + 1, |p| p.recv(dst, k as i32, tmp(C)));
                st.p.requires_all(s, &prev);
                st.p.requires_all(rv, &prev);
                if fault == Fault::SkipReduce && r == 3 && k == 0 {
                    prev = vec![s, rv];
                } else {
                    let combine = if !noncommutative || dst < r {
                        Combine::Before
                    } else {
                        Combine::After
                    };
                    let red = st.at(k + 1, |p| p.reduce(tmp(C), out(C), combine));
                    st.p.requires(red, rv);
                    if fault != Fault::Race {
                        st.p.requires(red, s);
                    }
                    prev = vec![red];
                }
                k += 1;
            }
            st
        })
        .collect()
}

/// The coursework's ring rotation: P−1 rounds of "send my running sum to the next rank, receive
/// the previous rank's, add my input" (the received value is the left operand).
fn ring_rotate(n: u32) -> Vec<Staged> {
    (0..n)
        .map(|r| {
            let (mut st, mut prev) = Staged::started();
            for k in 0..n - 1 {
                let s = st.at(k + 1, |p| p.send((r + 1) % n, k as i32, out(C)));
                let rv = st.at(k + 1, |p| p.recv((r + n - 1) % n, k as i32, tmp(C)));
                let red = st.at(k + 1, |p| p.reduce(input(C), tmp(C), Combine::After));
                let cp = st.at(k + 1, |p| p.copy(tmp(C), out(C)));
                st.p.requires(s, prev);
                st.p.requires(rv, prev);
                st.p.requires(red, rv);
                st.p.requires_all(cp, &[red, s]);
                prev = cp;
            }
            st
        })
        .collect()
}

/// Reduce to rank 0, then broadcast. `coursework`: the coursework's pairing (`r` receives from
/// `r + i/2` for `i = n, n/2, …, 2`), else the binomial pairing (`r` receives from `r + mask`
/// for `mask = 1, 2, …`). Received data is the right operand.
fn tree(n: u32, coursework: bool) -> Vec<Staged> {
    let levels = n.trailing_zeros();
    (0..n)
        .map(|r| {
            let (mut st, mut prev) = Staged::started();
            for l in 0..levels {
                let (half, active) = if coursework {
                    let i = n >> l;
                    (i / 2, r < i)
                } else {
                    let mask = 1 << l;
                    (mask, r % mask == 0)
                };
                if !active {
                    continue;
                }
                let receiver = if coursework {
                    r < half
                } else {
                    r % (2 * half) == 0
                };
                if receiver {
                    let rv = st.at(l + 1, |p| p.recv(r + half, 0, tmp(C)));
                    let red = st.at(l + 1, |p| p.reduce(tmp(C), out(C), Combine::After));
                    st.p.requires(rv, prev);
                    st.p.requires(red, rv);
                    prev = red;
                } else {
                    let s = st.at(l + 1, |p| p.send(r - half, 0, out(C)));
                    st.p.requires(s, prev);
                    prev = s;
                }
            }
            let mut i = 1;
            let mut l = levels + 1;
            while i < n {
                if r < i {
                    let s = st.at(l, |p| p.send(r + i, 1, out(C)));
                    st.p.requires(s, prev);
                    prev = s;
                } else if r < 2 * i {
                    let rv = st.at(l, |p| p.recv(r - i, 1, out(C)));
                    st.p.requires(rv, prev);
                    prev = rv;
                }
                i *= 2;
                l += 1;
            }
            st
        })
        .collect()
}

/// Two ranks exchange their inputs and combine: `mpich`: lower rank's data on the left on both
/// ranks; else every rank puts its own data on the left.
fn exchange(mpich: bool) -> Vec<Program> {
    (0..2)
        .map(|r| {
            let mut p = Program::new();
            let c = p.copy(input(C), out(C));
            p.send(1 - r, 0, input(C));
            let combine = if mpich && r == 1 {
                Combine::Before
            } else {
                Combine::After
            };
            let rv = p.recv_reduce(1 - r, 0, out(C), combine);
            p.requires(rv, c);
            p
        })
        .collect()
}

/// Recursive doubling on 4 ranks (non-commutative order) with `fault`.
fn faulty_rd(fault: Fault) -> Schedule {
    sched("rd", programs(recursive_doubling(4, true, fault)))
}

/// Asserts that the report's text contains `text`.
fn assert_shows(rep: &Report, text: &str) {
    let shown = rep.to_string();
    assert!(shown.contains(text), "{text:?} not in {shown:?}");
}

fn programs(v: Vec<Staged>) -> Vec<Program> {
    v.into_iter().map(|s| s.p).collect()
}

fn flags(sem: &Semantics) -> [bool; 4] {
    [
        sem.correct,
        sem.same_order_commutative,
        sem.same_order_noncommutative,
        sem.canonical_order,
    ]
}

fn sound_flags(s: &Schedule) -> [bool; 4] {
    let rep = run(s);
    assert!(rep.is_sound(), "{rep}");
    assert!(rep.semantics.as_ref().unwrap().exact);
    flags(rep.semantics.as_ref().unwrap())
}

fn messages(rep: &Report) -> Vec<String> {
    rep.problems.iter().map(|p| p.to_string()).collect()
}

// ---------------------------------------------------------------------------------------------
// Correct schedules and their order flags: [correct, same order (commutative), same order
// (non-commutative), canonical order].

#[test]
fn recursive_doubling_mpich_noncommutative_order_is_canonical_everywhere() {
    for n in [2, 4, 8, 16, 64] {
        let s = sched("rd", programs(recursive_doubling(n, true, Fault::None)));
        assert_eq!(sound_flags(&s), [true, true, true, true], "n = {n}");
    }
}

#[test]
fn recursive_doubling_mpich_commutative_order_is_reproducible_only_for_commutative_ops() {
    let s = sched("rd", programs(recursive_doubling(4, false, Fault::None)));
    let rep = run(&s);
    assert!(rep.is_sound());
    let sem = rep.semantics.unwrap();
    assert_eq!(flags(&sem), [true, true, false, false]);
    // Rank 0 adds the incoming value on the left: (x3 + x2) + (x1 + x0).
    let d = sem.noncommutative_difference.unwrap();
    assert_eq!((d.a.rank, d.a.element), (0, 0));
    assert_eq!(d.a.expr, "(x3 + x2) + (x1 + x0)");
    assert_eq!((d.b.rank, d.b.expr.as_str()), (1, "(x2 + x3) + (x0 + x1)"));
    assert_eq!(sem.noncanonical.unwrap().expr, "(x3 + x2) + (x1 + x0)");
}

#[test]
fn ring_rotation_is_correct_but_order_differs_per_rank() {
    for n in [2, 3, 5, 8] {
        let s = sched("ring_rotate", programs(ring_rotate(n)));
        let expect = if n == 2 {
            // Rank 0: x1 + x0, rank 1: x0 + x1: one swap apart.
            [true, true, false, false]
        } else {
            [true, false, false, false]
        };
        assert_eq!(sound_flags(&s), expect, "n = {n}");
    }
    let rep = run(&sched("ring_rotate", programs(ring_rotate(4))));
    let sem = rep.semantics.unwrap();
    let d = sem.commutative_difference.unwrap();
    assert_eq!(d.a.expr, "((x1 + x2) + x3) + x0");
    assert_eq!(d.b.expr, "((x2 + x3) + x0) + x1");
}

#[test]
fn coursework_tree_is_reproducible_but_not_canonical() {
    for n in [2, 4, 8, 32] {
        let s = sched("tree", programs(tree(n, true)));
        let expect = [true, true, true, n == 2];
        assert_eq!(sound_flags(&s), expect, "n = {n}");
    }
    let rep = run(&sched("tree", programs(tree(4, true))));
    assert_eq!(
        rep.semantics.unwrap().noncanonical.unwrap().expr,
        "(x0 + x2) + (x1 + x3)"
    );
}

#[test]
fn binomial_tree_is_canonical() {
    for n in [2, 4, 8, 32] {
        let s = sched("binomial", programs(tree(n, false)));
        assert_eq!(sound_flags(&s), [true, true, true, true], "n = {n}");
    }
}

#[test]
fn two_rank_exchange() {
    assert_eq!(
        sound_flags(&sched("x", exchange(true))),
        [true, true, true, true]
    );
    assert_eq!(
        sound_flags(&sched("x", exchange(false))),
        [true, true, false, false]
    );
}

#[test]
fn sound_report_display() {
    let rep = run(&sched("allreduce exchange", exchange(true)));
    assert_eq!(
        rep.to_string(),
        "schedule 'allreduce exchange': 2 ranks, 6 ops, 2 messages (64 bytes)\n\
         SOUND: every message matched; no deadlock with eager delivery or with sends above 0 bytes synchronous\n\
         result: correct on every rank (every input element reduced exactly once)\n\
         same reduction order on every rank: commutative op yes, non-commutative op yes\n\
         canonical order x0 ⊕ x1 ⊕ … (right for a non-commutative op): yes\n"
    );
    assert_eq!(rep.stats.ranks, 2);
    assert_eq!(rep.stats.ops, 6);
    assert!(rep.notes.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Faulty schedules.

#[test]
fn missing_receive() {
    let mut progs = exchange(true);
    // Rank 1 drops its receive (op 2).
    progs[1] = {
        let mut p = Program::new();
        p.copy(input(C), out(C));
        p.send(0, 0, input(C));
        p
    };
    let rep = run(&sched("x", progs));
    assert!(!rep.is_sound());
    assert_eq!(
        messages(&rep),
        [
            "unmatched send: rank 0 op 1 (send in[0:4] to 1 tag 0, 32 bytes) is never received: \
          it is send 1 of channel 0→1 tag 0 which has 1 send and 0 receives"
        ]
    );
    assert_eq!(rep.semantics, None);
    assert_eq!(
        rep.notes,
        ["semantics not checked: the schedule does not run to completion with matched messages"]
    );
    assert_shows(&rep, "NOT SOUND: 1 problem\n  - unmatched send");
}

#[test]
fn send_to_wrong_peer() {
    let s = faulty_rd(Fault::WrongPeer);
    let rep = run(&s);
    assert_eq!(
        messages(&rep),
        [
            "unmatched send: rank 0 op 1 (send out[0:4] to 2 tag 0, 32 bytes) is never received: \
             it is send 1 of channel 0→2 tag 0 which has 1 send and 0 receives",
            "unmatched receive: rank 1 op 2 (recv scratch0[0:4] from 0 tag 0, 32 bytes) blocks \
             forever: it is receive 1 of channel 0→1 tag 0 which has 0 sends and 1 receive"
        ]
    );
}

#[test]
fn size_mismatch() {
    // Rank 1 receives 2 elements of the 4 rank 0 sends: truncation.
    let mut progs = exchange(true);
    progs[1] = {
        let mut p = Program::new();
        let c = p.copy(input(C), out(C));
        p.send(0, 0, input(C));
        let rv = p.recv_reduce(0, 0, Slice::new(Slot::Output, 0, 2), Combine::Before);
        p.requires(rv, c);
        p
    };
    let rep = run(&sched("x", progs));
    assert_eq!(
        messages(&rep),
        [
            "size mismatch: rank 0 op 1 (send in[0:4] to 1 tag 0) sends 32 bytes to rank 1 op 2 \
          (recv out[0:2] from 0 tag 0 reduce before) which receives 16 bytes: the message does \
          not fit (MPI_ERR_TRUNCATE)"
        ]
    );

    // A smaller message into a larger receive: legal MPI for sizes only, an error with data.
    let build = |m: Meta| {
        let mut a = Program::new();
        a.send(1, 0, Slice::new(Slot::Input, 0, 2));
        let mut b = Program::new();
        b.recv(0, 0, out(C));
        Schedule::from_programs(m, [a, b]).unwrap()
    };
    assert!(run(&build(Meta::sizes_only("sizes"))).is_sound());
    let rep = run(&build(meta("data")));
    assert_eq!(
        messages(&rep)[0],
        "size mismatch: rank 0 op 0 (send in[0:2] to 1 tag 0) sends 16 bytes to rank 1 op 0 \
         (recv out[0:4] from 0 tag 0) which receives 32 bytes: a data-semantic schedule needs \
         equal lengths"
    );
}

/// Each rank: `first` with the peer, then `second` with the peer, `second` requiring `first`.
fn pairwise(n: u32, recv_first: bool) -> Vec<Program> {
    (0..n)
        .map(|r| {
            let mut p = Program::new();
            let (to, from) = ((r + 1) % n, (r + n - 1) % n);
            if recv_first {
                let a = p.recv(from, 0, out(C));
                let b = p.send(to, 0, input(C));
                p.requires(b, a);
            } else {
                let a = p.send(to, 0, input(C));
                let b = p.recv(from, 0, out(C));
                p.requires(b, a);
            }
            p
        })
        .collect()
}

#[test]
fn head_to_head_receives_deadlock() {
    let s = Schedule::from_programs(Meta::sizes_only("h2h"), pairwise(2, true)).unwrap();
    let rep = run(&s);
    assert_eq!(
        messages(&rep),
        ["deadlock: cycle of 4 ops on ranks 0, 1: rank 0 op 0 (recv out[0:4] from 1 tag 0) waits \
          for the message of rank 1 op 1 (send in[0:4] to 0 tag 0), which waits for the \
          completion of rank 1 op 0 (recv out[0:4] from 0 tag 0), which waits for the message of \
          rank 0 op 1 (send in[0:4] to 1 tag 0), which waits for the completion of rank 0 op 0"]
    );
    match &rep.problems[0] {
        Problem::Deadlock {
            cycle,
            needs_rendezvous,
        } => {
            assert!(!needs_rendezvous);
            let ops: Vec<(u32, u32)> = cycle.iter().map(|s| (s.rank, s.op)).collect();
            assert_eq!(ops, [(0, 0), (1, 1), (1, 0), (0, 1)]);
        }
        p => panic!("{p}"),
    }
    assert_eq!(
        rep.notes,
        [
            "semantics not checked: the schedule has no collective (sizes only); matching and \
          deadlock were checked"
        ]
    );
}

#[test]
fn three_rank_cycle() {
    let s = Schedule::from_programs(Meta::sizes_only("ring"), pairwise(3, true)).unwrap();
    let rep = run(&s);
    assert_eq!(
        messages(&rep),
        [
            "deadlock: cycle of 6 ops on ranks 0, 1, 2: rank 0 op 0 (recv out[0:4] from 2 tag 0) \
          waits for the message of rank 2 op 1 (send in[0:4] to 0 tag 0), which waits for the \
          completion of rank 2 op 0 (recv out[0:4] from 1 tag 0), which waits for the message of \
          rank 1 op 1 (send in[0:4] to 2 tag 0), which waits for the completion of rank 1 op 0 \
          (recv out[0:4] from 0 tag 0), which waits for the message of rank 0 op 1 (send in[0:4] \
          to 1 tag 0), which waits for the completion of rank 0 op 0"
        ]
    );
}

#[test]
fn send_send_exchange_relies_on_buffering() {
    let s = Schedule::from_programs(Meta::sizes_only("ss"), pairwise(2, false)).unwrap();
    let rep = run(&s);
    assert_eq!(
        messages(&rep),
        ["unsafe: deadlocks when sends are synchronous (messages above the eager limit); relies \
          on MPI buffering. Cycle of 4 ops on ranks 0, 1: rank 0 op 0 (send in[0:4] to 1 tag 0) \
          waits for the receive to be posted by rank 1 op 1 (recv out[0:4] from 0 tag 0), which \
          waits for the completion of rank 1 op 0 (send in[0:4] to 0 tag 0), which waits for the \
          receive to be posted by rank 0 op 1 (recv out[0:4] from 1 tag 0), which waits for the \
          completion of rank 0 op 0"]
    );
    assert!(matches!(
        rep.problems[0],
        Problem::Deadlock {
            needs_rendezvous: true,
            ..
        }
    ));
    // With 32-byte messages delivered eagerly it runs, and the report says what it relies on.
    let opts = VerifyOptions {
        eager_limit: 32,
        ..VerifyOptions::default()
    };
    let rep = verify(&s, &opts);
    assert!(rep.is_sound());
    assert!(rep.notes[0].starts_with(
        "runs only because sends of at most 32 bytes are delivered eagerly; with every send \
         synchronous: unsafe: deadlocks"
    ));
    // The same pattern in an allreduce: semantics are still checked, under eager delivery.
    let progs: Vec<Program> = (0..2)
        .map(|r| {
            let mut p = Program::new();
            let c = p.copy(input(C), out(C));
            let s = p.send(1 - r, 0, input(C));
            let rv = p.recv_reduce(1 - r, 0, out(C), Combine::After);
            p.requires_all(rv, &[c, s]);
            p
        })
        .collect();
    let rep = run(&sched("ss", progs));
    assert_eq!(rep.problems.len(), 1, "{rep}");
    assert_eq!(rep.problems[0].kind(), "unsafe-deadlock");
    assert_eq!(flags(&rep.semantics.unwrap()), [true, true, false, false]);
}

#[test]
fn double_counted_contribution() {
    let mut progs = exchange(true);
    // Rank 0 adds its input once more after the exchange.
    let extra = progs[0].reduce(input(C), out(C), Combine::After);
    progs[0].requires(extra, 2);
    let rep = run(&sched("x", progs));
    assert_eq!(
        messages(&rep),
        ["wrong result: rank 0 out[0:4] holds (x0 + x1) + x0: x0 counted 2 times (4 elements of \
          the output wrong)"]
    );
    let sem = rep.semantics.unwrap();
    assert_eq!(flags(&sem), [false, false, false, false]);
}

#[test]
fn missing_contribution() {
    let s = faulty_rd(Fault::SkipReduce);
    let rep = run(&s);
    assert_eq!(
        messages(&rep),
        [
            "wrong result: rank 1 out[0:4] holds (x0 + x1) + x3: x2 missing (4 elements of the \
             output wrong)",
            "wrong result: rank 3 out[0:4] holds (x0 + x1) + x3: x2 missing (4 elements of the \
             output wrong)"
        ]
    );
}

#[test]
fn uninitialized_read() {
    let mut progs = exchange(true);
    // Rank 0 forgets to copy its input into the output before reducing into it.
    progs[0] = {
        let mut p = Program::new();
        p.send(1, 0, input(C));
        p.recv_reduce(1, 0, out(C), Combine::After);
        p
    };
    let rep = run(&sched("x", progs));
    assert_eq!(
        messages(&rep),
        [
            "uninitialized read: rank 0 op 1 (recv out[0:4] from 1 tag 0 reduce after) reads \
             out[0:4] before anything wrote it",
            "wrong result: rank 0 out[0:4] holds ? + x1: includes uninitialized data, x0 missing \
             (4 elements of the output wrong)"
        ]
    );
}

#[test]
fn race_reduce_while_send_in_flight() {
    let s = sched("rd", programs(recursive_doubling(2, false, Fault::Race)));
    let rep = run(&s);
    // The execution the verifier follows happens to reduce into rank 0's output before the send
    // reads it, so rank 1 gets rank 0's partial result: a consequence of the race.
    assert_eq!(
        messages(&rep),
        [
            "buffer race: rank 0 ops 1 (send out[0:4] to 1 tag 0) and 3 (reduce scratch0[0:4] \
             into out[0:4] before) both touch out[0:4], one of them writes, and neither completes \
             before the other starts (also on 1 other rank running the same program)",
            "wrong result: rank 1 out[0:4] holds (x1 + x0) + x1: x1 counted 2 times (4 elements \
             of the output wrong)"
        ]
    );
    assert_eq!(
        rep.notes,
        [
            "the schedule has buffer races: its results were computed in one execution order and \
          depend on timing"
        ]
    );
}

#[test]
fn ambiguous_matching() {
    let mut a = Program::new();
    a.send(1, 0, Slice::new(Slot::Input, 0, 2));
    a.send(1, 0, Slice::new(Slot::Input, 2, 2));
    let mut b = Program::new();
    let r0 = b.recv(0, 0, Slice::new(Slot::Output, 0, 2));
    let r1 = b.recv(0, 0, Slice::new(Slot::Output, 2, 2));
    b.requires(r1, r0);
    let s = Schedule::from_programs(Meta::sizes_only("amb"), [a.clone(), b.clone()]).unwrap();
    let rep = run(&s);
    assert_eq!(
        messages(&rep),
        [
            "ambiguous matching: rank 0 ops 0 (send in[0:2] to 1 tag 0) and 1 (send in[2:4] to 1 \
          tag 0) use channel 0→1 tag 0 but neither is ordered before the other, so which message \
          meets which receive depends on timing"
        ]
    );
    // Ordered sends are not ambiguous; neither are unordered identical ones.
    let mut a2 = a.clone();
    a2.requires(1, 0);
    let s = Schedule::from_programs(Meta::sizes_only("amb"), [a2, b.clone()]).unwrap();
    assert!(run(&s).is_sound());
    let mut a3 = Program::new();
    a3.send(1, 0, Slice::new(Slot::Input, 0, 2));
    a3.send(1, 0, Slice::new(Slot::Input, 0, 2));
    let s = Schedule::from_programs(Meta::sizes_only("amb"), [a3, b]).unwrap();
    assert!(run(&s).is_sound());
}

#[test]
fn consequences_of_a_deadlock_are_not_reported() {
    // Ranks 0 and 1 deadlock head to head; rank 2 waits for a message rank 0 sends after its
    // receive, and rank 0 would then wait for rank 2: only the root cycle is reported.
    let mut progs = pairwise(2, true);
    let s2 = progs[0].send(2, 1, input(C));
    progs[0].requires(s2, 1);
    let r2 = progs[0].recv(2, 1, out(C));
    progs[0].requires(r2, s2);
    let mut p2 = Program::new();
    let a = p2.recv(0, 1, out(C));
    let b = p2.send(0, 1, input(C));
    p2.requires(b, a);
    progs.push(p2);
    let s = Schedule::from_programs(Meta::sizes_only("h2h"), progs).unwrap();
    let rep = run(&s);
    assert_eq!(rep.problems.len(), 1, "{rep}");
    assert_eq!(rep.problems[0].kind(), "deadlock");
}

#[test]
fn ambiguous_receives() {
    let mut a = Program::new();
    let s0 = a.send(1, 0, Slice::new(Slot::Input, 0, 2));
    let s1 = a.send(1, 0, Slice::new(Slot::Input, 2, 2));
    a.requires(s1, s0);
    let mut b = Program::new();
    b.recv(0, 0, Slice::new(Slot::Output, 0, 2));
    b.recv_reduce(0, 0, Slice::new(Slot::Output, 0, 2), Combine::After);
    let s = Schedule::from_programs(Meta::sizes_only("amb"), [a, b]).unwrap();
    assert_eq!(
        messages(&run(&s)),
        [
            "ambiguous matching: rank 1 ops 0 (recv out[0:2] from 0 tag 0) and 1 (recv out[0:2] \
          from 0 tag 0 reduce after) use channel 0→1 tag 0 but neither is ordered before the \
          other, so which message meets which receive depends on timing"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// More checks.

#[test]
fn local_dependency_cycle() {
    let mut p = Program::new();
    let a = p.compute(10_000);
    let b = p.compute(10_000);
    p.requires(a, b);
    p.irequires(b, a);
    let s = Schedule::from_programs(Meta::sizes_only("loop"), [p]).unwrap();
    let rep = run(&s);
    assert_eq!(
        messages(&rep),
        [
            "deadlock: cycle of 2 ops on rank 0: rank 0 op 0 (compute 10 ns) waits for the \
          completion of rank 0 op 1 (compute 10 ns), which waits for the start of rank 0 op 0"
        ]
    );
}

#[test]
fn out_of_bounds_slice() {
    let mut progs = exchange(true);
    progs[0].ops[0] = Op::new(OpKind::Copy {
        src: Slice::new(Slot::Input, 0, C),
        dst: Slice::new(Slot::Output, 2, C),
    });
    let rep = run(&sched("x", progs));
    assert_eq!(
        messages(&rep)[0],
        "out of bounds: rank 0 op 0 (copy in[0:4] to out[2:6]) uses out[2:6] but the vectors \
         have 4 elements"
    );
}

fn bytes_op(kind: &str, peer: u32, tag: i32) -> Op {
    let data = Payload::Bytes(8);
    Op::new(match kind {
        "send" => OpKind::Send { peer, tag, data },
        _ => OpKind::Recv {
            peer,
            tag,
            data,
            combine: Combine::Assign,
            operand: None,
        },
    })
}

/// Rank 0 posts two ANY_SOURCE receives with the tags `recv_tags`, in order; ranks 1 and 2
/// send it one message each, with the tags `send_tags`.
fn wildcard_gather(recv_tags: [i32; 2], send_tags: [i32; 2]) -> Schedule {
    let mut root = Program::new();
    for t in recv_tags {
        root.push(bytes_op("recv", ANY_SOURCE, t));
    }
    let senders = send_tags.map(|t| {
        let mut p = Program::new();
        p.push(bytes_op("send", 0, t));
        p
    });
    let [a, b] = senders;
    Schedule::from_programs(Meta::sizes_only("goal"), [root, a, b]).unwrap()
}

#[test]
fn wildcard_receives_are_matched_canonically() {
    let rep = run(&wildcard_gather([5, 5], [5, 5]));
    assert!(rep.is_sound(), "{rep}");
    assert_eq!(rep.stats.messages, 2);
    assert_eq!(
        rep.notes[0],
        "1 rank posts wildcard receives (ANY_SOURCE / ANY_TAG); they were matched in one \
         canonical order (breadth-first execution, MPI's earliest-posted rule), other timings may \
         match differently"
    );

    // An ANY_TAG receive posted first takes whichever message arrives first. In the canonical
    // order rank 1's tag-5 message does, and the tag-5 receive is left with rank 2's tag 7:
    // a timing that really happens, so the schedule is reported.
    let rep = run(&wildcard_gather([ANY_TAG, 5], [5, 7]));
    assert_eq!(
        messages(&rep),
        [
            "unmatched receive: rank 0 op 1 (recv 8b from any tag 5, 8 bytes) blocks forever: no \
             message was left for it in the canonical matching of the wildcard receives",
            "unmatched send: rank 2 op 0 (send 8b to 0 tag 7, 8 bytes) is never received: no \
             receive took it in the canonical matching of the wildcard receives"
        ]
    );
}

#[test]
fn problems_are_truncated() {
    let s = Schedule::from_programs(Meta::sizes_only("ring"), pairwise(8, true)).unwrap();
    // One cycle through all 8 ranks.
    let rep = run(&s);
    assert_eq!(rep.problems.len(), 1);
    // 8 missing receives.
    let progs: Vec<Program> = (0..8)
        .map(|r| {
            let mut p = Program::new();
            p.send((r + 1) % 8, 0, input(C));
            p
        })
        .collect();
    let s = Schedule::from_programs(Meta::sizes_only("lost"), progs).unwrap();
    let opts = VerifyOptions {
        max_problems: 3,
        ..VerifyOptions::default()
    };
    let rep = verify(&s, &opts);
    assert_eq!(rep.problems.len(), 3);
    assert_eq!(rep.truncated, 5);
    assert_shows(
        &rep,
        "NOT SOUND: 8 problems\n  - unmatched send: rank 0 op 0",
    );
    assert_shows(&rep, "  … and 5 more (raise max_problems to list them)\n");
}

#[test]
fn semantics_can_be_disabled() {
    let s = faulty_rd(Fault::SkipReduce);
    let opts = VerifyOptions {
        semantics: false,
        ..VerifyOptions::default()
    };
    let rep = verify(&s, &opts);
    assert!(rep.is_sound());
    assert_eq!(rep.semantics, None);
    assert_eq!(rep.notes, ["semantics not checked: disabled"]);
}

// ---------------------------------------------------------------------------------------------
// Properties: renumbering a program's ops, or adding dependencies that respect the stages
// (an op may wait for any op of an earlier stage), keeps a correct schedule verified with the
// same semantics.

mod props {
    use super::*;
    use hypercuboid_core::schedule::Dep;
    use proptest::prelude::*;

    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Renumbers the ops of `st` by a random permutation and adds `extra` random stage-respecting
    /// `requires` dependencies.
    fn scramble(st: &Staged, seed: u64, extra: usize) -> Program {
        let n = st.p.ops.len();
        let mut rng = seed;
        let mut perm: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            perm.swap(i, (next(&mut rng) % (i as u64 + 1)) as usize);
        }
        let mut p = Program::new();
        p.ops = vec![st.p.ops[0]; n];
        for (old, &new) in perm.iter().enumerate() {
            p.ops[new as usize] = st.p.ops[old];
        }
        for &(a, d) in &st.p.deps {
            p.deps.push((
                perm[a as usize],
                Dep {
                    on: perm[d.on as usize],
                    kind: d.kind,
                },
            ));
        }
        for _ in 0..extra {
            let a = (next(&mut rng) % n as u64) as usize;
            let b = (next(&mut rng) % n as u64) as usize;
            if st.stage[b] < st.stage[a] {
                p.requires(perm[a], perm[b]);
            }
        }
        p
    }

    fn algorithm(which: u8, n: u32) -> Vec<Staged> {
        match which {
            0 => recursive_doubling(n, true, Fault::None),
            1 => recursive_doubling(n, false, Fault::None),
            2 => ring_rotate(n),
            3 => tree(n, true),
            _ => tree(n, false),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn scrambled_schedules_still_verify(
            which in 0u8..5,
            log_n in 1u32..4,
            seeds in prop::collection::vec(any::<u64>(), 8),
            extra in 0usize..12,
        ) {
            let n = 1 << log_n;
            let staged = algorithm(which, n);
            let base = run(&sched("base", staged.iter().map(|s| s.p.clone()).collect()));
            prop_assert!(base.is_sound(), "{}", base);
            let progs: Vec<Program> = staged
                .iter()
                .enumerate()
                .map(|(r, st)| scramble(st, seeds[r], extra))
                .collect();
            let rep = run(&sched("scrambled", progs));
            prop_assert!(rep.is_sound(), "{}", rep);
            prop_assert_eq!(&rep.semantics, &base.semantics);
            prop_assert_eq!(&rep.stats, &base.stats);
        }
    }
}
