//! The node level (`model/node.rs`): with one rank on each node and no NIC limit it is LogGOPS
//! exactly; k equal transfers sharing a node's bandwidth B each take n·k/B, or n·G where the
//! rank's own limit is tighter; a NIC bandwidth is shared by a node's inter-node transfers.

use hypercuboid_core::collectives::{allreduce, alltoall};
use hypercuboid_core::model::{parse_model, parse_node, ModelSpec, NodeModel};
use hypercuboid_core::schedule::{goal, Dtype, ReduceOp, Schedule};
use hypercuboid_core::sim::{simulate, simulate_with, SimOptions, SimResult};
use std::fmt::Write;

fn node_run(s: &Schedule, host: &str, node: &str) -> SimResult {
    let host = parse_model(host).unwrap();
    let node = parse_node(node).unwrap();
    let m = NodeModel::from_specs(&host, &node, s.nranks()).unwrap();
    simulate_with(s, &m, &SimOptions::default()).unwrap()
}

fn collectives(n: u32, count: u64) -> Vec<(String, Schedule)> {
    let mut out = Vec::new();
    for alg in ["recursive_doubling", "ring", "tree", "rabenseifner"] {
        let a = allreduce::Algorithm::parse(alg).unwrap();
        let spec = allreduce::AllreduceSpec::new(n, count, Dtype::Float64, ReduceOp::Sum);
        out.push((alg.to_string(), allreduce::generate(&a, &spec).unwrap()));
    }
    for alg in ["linear", "pairwise", "bruck"] {
        let a = alltoall::Algorithm::parse(alg).unwrap();
        let spec = alltoall::AlltoallSpec::new(n, count, Dtype::Float64);
        out.push((
            format!("alltoall {alg}"),
            alltoall::generate(&a, &spec).unwrap(),
        ));
    }
    out
}

const HOSTS: [&str; 4] = [
    "loggops:L=3000,o=1500,g=1000,G=6,order=gcc",
    "loggops:L=3us,o=1.5us,g=1us,G=6ns,S=4096,gamma=0.5ns,delta=200ns",
    "loggops:L=100ns,o=2us,g=3us,G=0.1ns,O=1ns",
    "loggops:L=0,o=0,g=0,G=0",
];

#[test]
fn one_rank_per_node_without_a_nic_limit_is_loggops_bit_for_bit() {
    let mut compared = 0;
    for host in HOSTS {
        let plain: ModelSpec = parse_model(host).unwrap();
        for n in [2, 5, 8, 16] {
            // 8 B and 64 KiB a rank: eager everywhere, and rendezvous above S where it is small.
            for count in [1, 8192] {
                for (alg, s) in collectives(n, count) {
                    let want = simulate(&s, &plain, &SimOptions::default()).unwrap();
                    for node in [
                        "node:ranks=1,bw=1GB/s",
                        "node:ranks=1,bw=5GB/s,map=round_robin",
                    ] {
                        let got = node_run(&s, host, node);
                        let what = format!("{alg} n={n} count={count} {host} {node}");
                        assert_eq!(got.completion, want.completion, "{what}");
                        assert_eq!(got.rank_finish, want.rank_finish, "{what}");
                        assert_eq!((got.ops, got.messages), (want.ops, want.messages), "{what}");
                        compared += 1;
                    }
                }
            }
        }
    }
    assert_eq!(compared, 4 * 4 * 2 * 7 * 2);
}

#[test]
fn ranks_sharing_a_node_are_slower_than_loggops_alone() {
    // The same schedules with 8 ranks a node at 1 GB/s: the node level does something.
    let s = &collectives(16, 8192)[1].1;
    let host = "loggops:L=1us,o=1us,g=1us,G=0.1ns";
    let plain = simulate(s, &parse_model(host).unwrap(), &SimOptions::default()).unwrap();
    let shared = node_run(s, host, "node:ranks=8,bw=1GB/s");
    assert!(
        shared.completion > 2 * plain.completion,
        "{shared:?} {plain:?}"
    );
}

/// Ranks 0..k send `n` bytes each to ranks k..2k at once (0 → k, 1 → k+1, ...).
fn pairs(k: u32, n: u64) -> Schedule {
    let mut g = format!("num_ranks {}\n\n", 2 * k);
    for r in 0..k {
        writeln!(g, "rank {r} {{\nl0: send {n}b to {} tag 0\n}}\n", r + k).unwrap();
    }
    for r in k..2 * k {
        writeln!(g, "rank {r} {{\nl0: recv {n}b from {} tag 0\n}}\n", r - k).unwrap();
    }
    goal::parse(&g, "pairs").unwrap()
}

const O: u64 = 2_000_000; // 2 us
const L: u64 = 1_000_000; // 1 us
const N: u64 = 1 << 20; // 1 MiB

/// The finish times of `pairs(k, N)` when the shared part takes `shared` ps: the senders
/// finish after o, the receivers o + shared + L + o.
fn expect(k: u32, shared: u64) -> Vec<u64> {
    let mut v = vec![O; k as usize];
    v.extend(std::iter::repeat_n(O + shared + L + O, k as usize));
    v
}

#[test]
fn k_equal_transfers_on_a_node_share_its_bandwidth_exactly() {
    // B = 8 GB/s: 125 ps a byte; no per-rank limit (G = 0).
    let host = "loggops:L=1us,o=2us,g=500ns,G=0,O=0,S=2MiB";
    for k in [1u32, 2, 3, 8] {
        let r = node_run(
            &pairs(k, N),
            host,
            &format!("node:ranks={},bw=8GB/s", 2 * k),
        );
        let shared = N * k as u64 * 125;
        assert_eq!(r.rank_finish, expect(k, shared), "k={k}");
        assert_eq!(r.completion, O + shared + L + O, "k={k}");
    }
    // 12 GB/s (a rate with no exact binary form): 1 MiB three ways is 262144 ns exactly.
    let r = node_run(&pairs(3, N), host, "node:ranks=6,bw=12GB/s");
    assert_eq!(r.completion, O + 262_144_000 + L + O);
}

#[test]
fn the_per_rank_limit_governs_where_it_is_tighter_than_the_share() {
    // G = 1 ns a byte (1 GB/s a rank), B = 8 GB/s: B/k ≥ 1/G up to k = 8, then B/k governs.
    let host = "loggops:L=1us,o=2us,g=500ns,G=1ns,O=0,S=2MiB";
    for k in [1u32, 2, 3, 8, 16] {
        let r = node_run(
            &pairs(k, N),
            host,
            &format!("node:ranks={},bw=8GB/s", 2 * k),
        );
        let shared = (N * 1000).max(N * k as u64 * 125);
        assert_eq!(r.rank_finish, expect(k, shared), "k={k}");
    }
}

#[test]
fn a_nic_is_shared_by_its_nodes_transfers_to_other_nodes() {
    // Ranks 0..k on node 0, k..2k on node 1: k transfers share node 0's NIC out and node 1's
    // NIC in at 4 GB/s (250 ps a byte); within a node nothing is limited (no bw).
    let host = "loggops:L=1us,o=2us,g=500ns,G=0,O=0,S=2MiB";
    for k in [1u32, 2, 3, 8] {
        let r = node_run(&pairs(k, N), host, &format!("node:ranks={k},nic=4GB/s"));
        assert_eq!(r.rank_finish, expect(k, N * k as u64 * 250), "k={k}");
        // Round robin over 2 nodes puts the pairs' ends on one node when k is even (i and
        // i + k have one parity): the NIC is not used, the node's bandwidth is unlimited and
        // LogGOPS carries the messages (G = 0: o + L + o).
        if k % 2 == 0 {
            let rr = node_run(
                &pairs(k, N),
                host,
                &format!("node:ranks={k},nic=4GB/s,map=round_robin"),
            );
            assert_eq!(rr.completion, O + L + O, "k={k}");
        }
    }
}

#[test]
fn rendezvous_data_flows_after_the_match() {
    // S = 64 KiB: 1 MiB goes by rendezvous. The request arrives at o + L and matches the
    // posted receive then (its o is charged on the receiver's CPU meanwhile); the
    // clear-to-send takes L; the data shares the node (k·n·125 ps) and arrives L later,
    // completing the send and the receive.
    let host = "loggops:L=1us,o=2us,g=500ns,G=0,O=0,S=64KiB";
    for k in [1u32, 2, 3] {
        let r = node_run(
            &pairs(k, N),
            host,
            &format!("node:ranks={},bw=8GB/s", 2 * k),
        );
        let matched = O + L;
        let done = matched + L + N * k as u64 * 125 + L;
        // Every rank's last op (the send, the receive) completes then.
        assert_eq!(r.completion, done, "k={k}");
        assert_eq!(r.rank_finish, vec![done; 2 * k as usize], "k={k}");
    }
}

#[test]
fn a_partial_last_node_holds_the_remaining_ranks() {
    // 3 pairs with 4 ranks a node: ranks 0..4 on node 0, ranks 4 and 5 on node 1. Pairs 0→3
    // (node 0), 1→4 and 2→5 (node 0 to node 1: LogGOPS, no nic) .
    let host = "loggops:L=1us,o=2us,g=500ns,G=0,O=0,S=2MiB";
    let r = node_run(&pairs(3, N), host, "node:ranks=4,bw=8GB/s");
    let alone = O + N * 125 + L + O;
    assert_eq!(r.rank_finish, [O, O, O, alone, O + L + O, O + L + O]);
}
