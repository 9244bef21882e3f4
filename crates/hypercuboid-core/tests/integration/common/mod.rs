//! Helpers shared by the integration tests (`use crate::common;` in a test module): schedules
//! built by hand with `Program` for the simulator tests (the real generators live elsewhere), a
//! minimal reader of GOAL text for the LogGOPSim golden files, the ops of a rank as text, the
//! packet engine's zero-load cases, and the lists the Python tests assert too.
#![allow(dead_code)]

use hypercuboid_core::network::Injection;
use hypercuboid_core::schedule::{
    Combine, Dtype, Meta, Op, OpKind, Payload, Program, Rank, ReduceOp, Schedule, ScheduleBuilder,
    Slice, Slot, ANY_SOURCE, ANY_TAG,
};
use hypercuboid_core::units::Time;

/// A list of `tests/data/expected.json`, the file of lists that the Python tests assert too.
pub(crate) fn expected(key: &str) -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/expected.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let list = json[key]
        .as_array()
        .unwrap_or_else(|| panic!("{path}: no list {key}"));
    list.iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The ops of one rank as text, e.g. `send in[0:3] to 4 tag 0`.
pub(crate) fn ops_text(s: &Schedule, rank: Rank) -> Vec<String> {
    let v = s.rank(rank);
    (0..v.len()).map(|i| v.op(i).to_string()).collect()
}

/// `(peer, tag)` of the sends of one rank, in program order.
pub(crate) fn sends(s: &Schedule, rank: Rank) -> Vec<(Rank, i32)> {
    peers_and_tags(s, rank, true)
}

/// `(peer, tag)` of the receives of one rank, in program order.
pub(crate) fn recvs(s: &Schedule, rank: Rank) -> Vec<(Rank, i32)> {
    peers_and_tags(s, rank, false)
}

fn peers_and_tags(s: &Schedule, rank: Rank, of_sends: bool) -> Vec<(Rank, i32)> {
    let v = s.rank(rank);
    (0..v.len())
        .filter_map(|i| match v.op(i).kind {
            OpKind::Send { peer, tag, .. } if of_sends => Some((peer, tag)),
            OpKind::Recv { peer, tag, .. } if !of_sends => Some((peer, tag)),
            _ => None,
        })
        .collect()
}

// The packet engine's defaults, the seed's section 4.1: links 100 Gb/s, 50 ns; switch 100 ns;
// 256 B packets (σ = 20.48 ns).
pub(crate) const L: Time = 50_000;
pub(crate) const S: Time = 100_000;
pub(crate) const SIGMA: Time = 20_480;

/// Zero-load latency of h router-to-router hops: h + 2 link latencies (two endpoint links),
/// h + 1 switch traversals, one serialisation (virtual cut-through: the tail follows the head
/// by σ at every hop, so only the last one counts).
pub(crate) fn t0(h: Time) -> Time {
    (h + 2) * L + (h + 1) * S + SIGMA
}

/// (topology, source endpoint, destination endpoint, router hops) of one message on an idle
/// network.
pub(crate) const ZERO_LOAD_CASES: [(&str, u32, u32, Time); 7] = [
    ("mlfm:h=4", 0, 1, 0),  // same local router
    ("mlfm:h=4", 0, 4, 2),  // LR (0,0) -> GR {0,1} -> LR (0,1)
    ("mlfm:h=4", 0, 20, 2), // LR (0,0) -> LR (1,0), same column
    ("oft:k=4", 0, 4, 2),   // L0 0 -> L1 -> L0 1
    ("slimfly:q=5", 0, 4, 1),
    ("slimfly:q=5", 0, 199, 2),
    ("fattree:k=4,levels=3", 0, 15, 4),
];

/// A message injected into a network engine at `at`.
pub(crate) fn msg(at: Time, src: u32, dst: u32, bytes: u64, token: u64) -> Injection {
    Injection {
        at,
        src,
        dst,
        bytes,
        token,
    }
}

/// The first `count` bytes of the input buffer.
pub(crate) fn input(count: u64) -> Slice {
    Slice::new(Slot::Input, 0, count)
}

/// The first `count` bytes of the output buffer.
pub(crate) fn out(count: u64) -> Slice {
    Slice::new(Slot::Output, 0, count)
}

/// The first `count` bytes of scratch buffer 0.
pub(crate) fn tmp(count: u64) -> Slice {
    Slice::new(Slot::Scratch(0), 0, count)
}

/// Two ranks that each post a receive of 8 B from the other and a send of 8 B to it that
/// depends on the receive: `irequires` (the send starts with the receive; schedule
/// "irequires") or `requires` (it waits for the receive to complete: a deadlock; schedule
/// "requires").
pub(crate) fn send_after_recv(irequires: bool) -> Schedule {
    let mut progs = vec![Program::new(); 2];
    for r in 0..2u32 {
        let p = &mut progs[r as usize];
        let rv = recv(p, 1 - r, 0, 8, false);
        let sd = send(p, 1 - r, 0, 8);
        if irequires {
            p.irequires(sd, rv);
        } else {
            p.requires(sd, rv);
        }
    }
    schedule(if irequires { "irequires" } else { "requires" }, progs)
}

/// A sizes-only send.
pub(crate) fn send(p: &mut Program, peer: u32, tag: i32, bytes: u64) -> u32 {
    p.push(Op::new(OpKind::Send {
        peer,
        tag,
        data: Payload::Bytes(bytes),
    }))
}

/// A sizes-only receive; `fused` makes it a receive-reduce.
pub(crate) fn recv(p: &mut Program, peer: u32, tag: i32, bytes: u64, fused: bool) -> u32 {
    p.push(Op::new(OpKind::Recv {
        peer,
        tag,
        data: Payload::Bytes(bytes),
        combine: if fused {
            Combine::After
        } else {
            Combine::Assign
        },
        operand: None,
    }))
}

pub(crate) fn schedule(name: &str, programs: Vec<Program>) -> Schedule {
    let mut b = ScheduleBuilder::new(programs.len() as u64, Meta::sizes_only(name)).unwrap();
    for mut p in programs {
        b.push(&mut p).unwrap();
    }
    b.finish().unwrap()
}

/// Recursive doubling (N a power of two): each step a send and a fused receive-reduce from
/// `rank ^ 2^k`; both require the previous step's receive. Programs are streamed into the
/// builder (one reused `Program`), so 2^20 ranks take only the schedule's own memory.
pub(crate) fn recursive_doubling(n: u32, bytes: u64) -> Schedule {
    let steps = n.trailing_zeros();
    assert_eq!(1 << steps, n);
    let mut b = ScheduleBuilder::new(n as u64, Meta::sizes_only("recursive doubling")).unwrap();
    b.reserve_ops(n as usize * 2 * steps as usize);
    let mut p = Program::new();
    for r in 0..n {
        p.clear();
        let mut last = None;
        for k in 0..steps {
            let peer = r ^ (1 << k);
            let s = send(&mut p, peer, k as i32, bytes);
            let rv = recv(&mut p, peer, k as i32, bytes, true);
            if let Some(l) = last {
                p.requires(s, l);
                p.requires(rv, l);
            }
            last = Some(rv);
        }
        b.push(&mut p).unwrap();
    }
    b.finish().unwrap()
}

/// MPICH recursive doubling with the non-power-of-two fix (Ruefenacht et al. 2017,
/// Algorithm 1): the first `2·rem` ranks pair up (even sends to odd), the `p` survivors run
/// recursive doubling, odd ranks send the result back. Every op requires the previous
/// receive (blocking MPI calls).
pub(crate) fn mpich_recursive_doubling(n: u32, bytes: u64) -> Schedule {
    let pof2 = 1u32 << (31 - n.leading_zeros());
    let rem = n - pof2;
    let progs = (0..n)
        .map(|r| {
            let mut p = Program::new();
            let mut last: Option<u32> = None;
            let dep = |p: &mut Program, op: u32, last: Option<u32>| {
                if let Some(l) = last {
                    p.requires(op, l);
                }
            };
            let myrank = if r < 2 * rem {
                if r % 2 == 0 {
                    let s = send(&mut p, r + 1, 1000, bytes);
                    last = Some(s);
                    None
                } else {
                    last = Some(recv(&mut p, r - 1, 1000, bytes, true));
                    Some(r / 2)
                }
            } else {
                Some(r - rem)
            };
            if let Some(me) = myrank {
                let mut mask = 1;
                let mut k = 0;
                while mask < pof2 {
                    let nd = me ^ mask;
                    let dst = if nd < rem { nd * 2 + 1 } else { nd + rem };
                    let s = send(&mut p, dst, k, bytes);
                    dep(&mut p, s, last);
                    let rv = recv(&mut p, dst, k, bytes, true);
                    dep(&mut p, rv, last);
                    last = Some(rv);
                    mask <<= 1;
                    k += 1;
                }
            }
            if r < 2 * rem {
                if r % 2 == 1 {
                    let s = send(&mut p, r - 1, 2000, bytes);
                    dep(&mut p, s, last);
                } else {
                    let rv = recv(&mut p, r + 1, 2000, bytes, false);
                    dep(&mut p, rv, last);
                }
            }
            p
        })
        .collect();
    schedule("mpich recursive doubling", progs)
}

/// Ring rotation (P−1 steps): each step sends to the right neighbour what arrived from the left
/// in the previous step and receives (and reduces) from the left.
pub(crate) fn ring_rotation(np: u32, bytes: u64) -> Schedule {
    let progs = (0..np)
        .map(|r| {
            let mut p = Program::new();
            let mut last = None;
            for k in 0..np - 1 {
                let s = send(&mut p, (r + 1) % np, k as i32, bytes);
                let rv = recv(&mut p, (r + np - 1) % np, k as i32, bytes, true);
                if let Some(l) = last {
                    p.requires(s, l);
                    p.requires(rv, l);
                }
                last = Some(rv);
            }
            p
        })
        .collect();
    schedule("ring rotation", progs)
}

/// Binomial-tree reduce to rank 0 then binomial broadcast from rank 0 (P a power of two),
/// every op requiring the one before it (blocking calls).
pub(crate) fn binomial_reduce_bcast(np: u32, bytes: u64) -> Schedule {
    assert!(np.is_power_of_two());
    let progs = (0..np)
        .map(|r| {
            let mut p = Program::new();
            let mut ops = Vec::new();
            let mut mask = 1;
            while mask < np {
                if r & mask != 0 {
                    ops.push(send(&mut p, r - mask, 1, bytes));
                    break;
                }
                if r + mask < np {
                    ops.push(recv(&mut p, r + mask, 1, bytes, true));
                }
                mask <<= 1;
            }
            let low = if r == 0 { np } else { r & r.wrapping_neg() };
            if r != 0 {
                ops.push(recv(&mut p, r - low, 2, bytes, false));
            }
            let mut m = low >> 1;
            while m > 0 {
                if r + m < np {
                    ops.push(send(&mut p, r + m, 2, bytes));
                }
                m >>= 1;
            }
            for w in ops.windows(2) {
                p.requires(w[1], w[0]);
            }
            p
        })
        .collect();
    schedule("binomial reduce + bcast", progs)
}

/// One stage of a `b`-way exchange among `b + 1` ranks: every rank sends to and receives from
/// every other rank, all ops independent.
pub(crate) fn multi_send_stage(b: u32, bytes: u64) -> Schedule {
    let n = b + 1;
    let progs = (0..n)
        .map(|r| {
            let mut p = Program::new();
            for k in 1..n {
                send(&mut p, (r + k) % n, 0, bytes);
            }
            for k in 1..n {
                recv(&mut p, (r + n - k) % n, 0, bytes, true);
            }
            p
        })
        .collect();
    schedule("b-way stage", progs)
}

/// Reads a golden GOAL file with the library's own parser (`calc n` is `n` ns, as in
/// LogGOPSim), so these goldens check the parser too.
pub(crate) fn read_goal(text: &str) -> Schedule {
    hypercuboid_core::schedule::goal::parse(text, "golden").unwrap()
}

/// Whose every-op-kind schedule [`all_kinds`] builds: the GOAL export's or the text form's.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum AllKinds {
    Export,
    Text,
}

/// Every op kind on two ranks: cpu/nic, both dependency kinds, a fused receive-reduce with a
/// `requires` and an `irequires` dependent, and a wildcard receive of 3 bytes.
///
/// The two differ in rank 0's fused receive-reduce (on cpu 1 for the export), where its reduce
/// of 4 elements lands (`out[0:4]` or `out[4:8]`), its compute's NIC (4 for the text form) and
/// its wildcard receive's combine; the scratch buffer rank 1 receives into; a third, idle rank
/// (the text form's); and the metadata.
pub(crate) fn all_kinds(which: AllKinds) -> Schedule {
    let text = which == AllKinds::Text;
    let (fused_cpu, reduce_at, compute_nic) = if text { (0, 4, 4) } else { (1, 0, 0) };
    let (wildcard, scratch, idle_ranks) = if text {
        (Combine::Before, 12, 1)
    } else {
        (Combine::Assign, 0, 0)
    };
    let meta = if text {
        Meta::allreduce(8, Dtype::Float64, ReduceOp::Max, "allreduce \"all\" kinds")
    } else {
        Meta::allreduce(8, Dtype::Float64, ReduceOp::Sum, "all kinds")
    };
    let v = |slot, a, b| Slice::new(slot, a, b - a);
    let mut p0 = Program::new();
    let copy = p0.copy(v(Slot::Input, 0, 8), v(Slot::Output, 0, 8));
    let s = p0.send(1, 5, v(Slot::Input, 0, 8));
    p0.ops[s as usize].cpu = 1;
    p0.ops[s as usize].nic = 2;
    let rr = p0.recv_reduce(1, 5, v(Slot::Output, 0, 8), Combine::After);
    p0.ops[rr as usize].cpu = fused_cpu;
    let red = p0.reduce(
        v(Slot::Scratch(0), 0, 4),
        v(Slot::Output, reduce_at, reduce_at + 4),
        Combine::Before,
    );
    let sl = p0.sleep(1500);
    let comp = p0.compute(10_000);
    p0.ops[comp as usize].cpu = 3;
    p0.ops[comp as usize].nic = compute_nic;
    p0.push(Op::new(OpKind::Recv {
        peer: ANY_SOURCE,
        tag: ANY_TAG,
        data: Payload::Bytes(3),
        combine: wildcard,
        operand: None,
    }));
    p0.irequires(s, copy);
    p0.requires(rr, copy);
    p0.requires(red, rr);
    p0.irequires(sl, rr);
    p0.requires(comp, red);
    p0.requires(comp, sl);
    let mut p1 = Program::new();
    p1.send(0, 5, v(Slot::Input, 0, 8));
    let r = p1.recv(0, 5, v(Slot::Scratch(scratch), 0, 8));
    let red = p1.reduce(
        v(Slot::Scratch(scratch), 0, 8),
        v(Slot::Output, 0, 8),
        Combine::After,
    );
    p1.requires(red, r);
    let idle = std::iter::repeat_with(Program::new).take(idle_ranks);
    Schedule::from_programs(meta, [p0, p1].into_iter().chain(idle)).unwrap()
}
