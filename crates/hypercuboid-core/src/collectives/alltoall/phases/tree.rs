//! The Faraj–Yuan phases of a switched tree (alltoall seed, section 4).
//!
//! # The construction as implemented
//! 1. **Root** (4.1): [`crate::topology::tree::analyze_tree`]'s root. Its subtrees with
//!    machines are t_0, …, t_{k−1}, most machines first (ties: a switch before a machine
//!    attached directly to the root, then adjacency order), |M_0| ≥ … ≥ |M_{k−1}|. The machines
//!    of a subtree are numbered t_{i,0}, t_{i,1}, … in ascending endpoint order.
//! 2. **Extended ring scheduling** (4.2): P = |M_0|·(|M| − |M_0|) phases; t_i → t_j occupies
//!    the |M_i|·|M_j| consecutive phases starting at |M_i|·Σ_{m=i+1}^{j−1}|M_m| when j > i and at
//!    P − |M_j|·Σ_{m=j+1}^{i}|M_m| when i > j.
//! 3. **Figure 4**, with p a phase and q = p − start the offset in its group:
//!    * Step 1, t_0 → t_j: receiver t_{j,(p−P) mod |M_j|}; senders by the rotate pattern with
//!      base sequence t_{0,0}, …, t_{0,|M_0|−1}: with ℓ = lcm(|M_0|, |M_j|), block b = ⌊q/ℓ⌋
//!      uses the base sequence rotated b times, sender t_{0,(q + b) mod |M_0|}.
//!    * Step 2, t_i → t_0: in round r = ⌊p/|M_0|⌋ the t_0 sender t_{0,x} of phase p maps to the
//!      receiver t_{0,(x + (r mod |M_0|) + 1) mod |M_0|} (Table 3); senders by the broadcast
//!      pattern t_{i,0}, t_{i,1}, … (each for |M_0| phases, one round).
//!    * Step 3, local messages of t_0 in phases 0 … |M_0|(|M_0|−1) − 1: t_{0,a} → t_{0,b} where
//!      t_{0,a} receives and t_{0,b} sends a global message.
//!    * Step 4, t_i → t_j for i > j ≥ 1: broadcast, sender t_{i,⌊q/|M_j|⌋}, receiver
//!      t_{j,q mod |M_j|} (= t_{j,(p−P) mod |M_j|}: the group ends at a phase ≡ P mod |M_j|).
//!    * Step 5, local messages of t_i, i ≥ 1, in the phases of t_i → t_{i−1}: the designated
//!      receiver of phase p is t_{i,(p−P) mod |M_i|}; sender t_{i,a} of t_i → t_{i−1} holds
//!      |M_{i−1}| ≥ |M_i| consecutive phases, and t_{i,d} → t_{i,a} (d ≠ a) goes to the first of
//!      them whose designated receiver is t_{i,d}.
//!    * Step 6, t_i → t_j for 1 ≤ i < j: broadcast, sender t_{i,⌊q/|M_j|⌋}, receiver
//!      t_{j,q mod |M_j|}.
//!
//! Where the seed leaves a choice (the numbering inside a subtree, the order of subtrees of
//! equal size, the phase of a local message of step 5 when several fit, broadcast rather than
//! rotate in step 6), the choice is the one above; the checks ([`super::check`]) prove every
//! table, and the tests prove them on 10,000 random trees. With these choices the table of the
//! seed's Figure 1 cluster is its Table 4, message for message.
//!
//! Within a phase, messages are listed as Table 4's columns: the global message sent by t_0,
//! t_1, …, then the local messages of t_0, t_1, ….

use super::{PhaseError, PhaseTable, MAX_MACHINES};
use crate::topology::tree::{analyze_tree, TreeAnalysis, TreeEdge};
use crate::topology::Topology;

/// The Faraj–Yuan phases of a tree with the analysis they rest on.
#[derive(Clone, Debug)]
pub struct TreePhases {
    /// The phases.
    pub table: PhaseTable,
    /// Loads, bottleneck and root (seed sections 3 and 4.1).
    pub analysis: TreeAnalysis,
    /// Machines of the root's subtrees: t_{i,j} is `subtrees[i][j]`.
    pub subtrees: Vec<Vec<u32>>,
}

/// The tree analysis of `topo` if it is a tree with at least two machines.
pub fn tree_analysis(topo: &Topology) -> Option<TreeAnalysis> {
    analyze_tree(topo)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The machines of each of the root's subtrees, in the analysis's order, ascending.
fn subtree_machines(topo: &Topology, a: &TreeAnalysis) -> Vec<Vec<u32>> {
    let root = a.root;
    a.subtrees
        .iter()
        .map(|s| match s.edge {
            TreeEdge::Endpoint(e) => vec![e as u32],
            TreeEdge::Link(l) => {
                let top = topo.links()[l].other(root as u32) as usize;
                let mut seen = vec![false; topo.num_routers()];
                seen[root] = true;
                seen[top] = true;
                let mut stack = vec![top];
                let mut ms = Vec::new();
                while let Some(x) = stack.pop() {
                    ms.extend_from_slice(topo.router_endpoints(x));
                    for &y in topo.neighbors(x) {
                        if !seen[y as usize] {
                            seen[y as usize] = true;
                            stack.push(y as usize);
                        }
                    }
                }
                ms.sort_unstable();
                ms
            }
        })
        .collect()
}

/// The Faraj–Yuan phases of `topo`, which must be a tree of switches with machines as leaves
/// (every [`Topology`] has its machines as leaves) and at least two machines.
pub fn faraj_yuan(topo: &Topology) -> Result<TreePhases, PhaseError> {
    let n = topo.num_endpoints();
    let name = topo.name().to_string();
    if n < 2 {
        return Err(PhaseError::TooFewMachines {
            topology: name,
            machines: n,
        });
    }
    if n > MAX_MACHINES {
        return Err(PhaseError::TooManyMachines {
            topology: name,
            machines: n,
            limit: MAX_MACHINES,
            method: "faraj-yuan",
        });
    }
    let analysis = analyze_tree(topo).ok_or_else(|| PhaseError::NotATree {
        topology: name.clone(),
        reason: not_a_tree_reason(topo),
    })?;
    let subtrees = subtree_machines(topo, &analysis);
    let table = assign(n as u32, &subtrees);
    Ok(TreePhases {
        table,
        analysis,
        subtrees,
    })
}

/// Why the router graph of `topo` is not a tree.
fn not_a_tree_reason(topo: &Topology) -> String {
    let (r, l) = (topo.num_routers(), topo.num_links());
    if l + 1 != r {
        format!("it has {r} routers and {l} links, and a tree has routers - 1 links")
    } else {
        format!("its {r} routers and {l} links are not connected")
    }
}

/// The first phase of the messages t_i → t_j (`i != j`) in the extended ring scheduling of
/// section 4.2, `sizes` the machines of t_0, t_1, … (largest first).
pub fn group_start(sizes: &[u64], i: usize, j: usize) -> u64 {
    let sum = |a: usize, b: usize| -> u64 { sizes[a..b].iter().sum() };
    if j > i {
        sizes[i] * sum(i + 1, j)
    } else {
        let total: u64 = sizes.iter().sum();
        sizes[0] * (total - sizes[0]) - sizes[j] * sum(j + 1, i + 1)
    }
}

/// The sender (index in its subtree of `mi` machines) at offset `q` of a rotate pattern whose
/// base sequence t_{i,0}, …, t_{i,mi−1} is repeated for `lcm` = lcm(|M_i|, |M_j|) phases and
/// then rotated once (section 4.3, Table 2).
pub fn rotate_sender(q: u64, mi: u64, lcm: u64) -> u64 {
    (q % mi + q / lcm) % mi
}

/// Figure 4 on subtrees of the given machines (sorted by size, largest first): the phases.
pub fn assign(machines: u32, subtrees: &[Vec<u32>]) -> PhaseTable {
    let k = subtrees.len();
    let m: Vec<u64> = subtrees.iter().map(|s| s.len() as u64).collect();
    debug_assert!(m.windows(2).all(|w| w[0] >= w[1]));
    let total: u64 = m.iter().sum();
    let p_all = m[0] * (total - m[0]);
    let start = |i: usize, j: usize| group_start(&m, i, j);
    // (p - P) mod x, the seed's receiver alignment.
    let aligned = |p: u64, x: u64| (p % x + x - p_all % x) % x;
    let t = |i: usize, j: u64| subtrees[i][j as usize];
    let kk = k as u32;
    // (phase, column, src, dst): column i for the global message sent by t_i, k + i for the
    // local message of t_i.
    let mut out: Vec<(u32, u32, u32, u32)> = Vec::with_capacity((total * (total - 1)) as usize);
    let mut push = |p: u64, col: u32, s: u32, d: u32| out.push((p as u32, col, s, d));

    // Step 1: t_0 -> t_j, rotate pattern; remember t_0's sender in every phase.
    let m0 = m[0];
    let mut sender0 = vec![0u64; p_all as usize];
    for (j, &mj) in m.iter().enumerate().skip(1) {
        let s = start(0, j);
        let lcm = m0 / gcd(m0, mj) * mj;
        for q in 0..m0 * mj {
            let p = s + q;
            let x = rotate_sender(q, m0, lcm);
            sender0[p as usize] = x;
            push(p, 0, t(0, x), t(j, aligned(p, mj)));
        }
    }
    // Step 2: t_i -> t_0, receivers by Table 3, senders by the broadcast pattern.
    let recv0 = |p: u64| (sender0[p as usize] + (p / m0) % m0 + 1) % m0;
    for (i, &mi) in m.iter().enumerate().skip(1) {
        let s = start(i, 0);
        for q in 0..mi * m0 {
            let p = s + q;
            push(p, i as u32, t(i, q / m0), t(0, recv0(p)));
        }
    }
    // Step 3: local messages of t_0: receiver of a global message -> sender of one.
    for p in 0..m0 * (m0 - 1) {
        push(p, kk, t(0, recv0(p)), t(0, sender0[p as usize]));
    }
    // Steps 4 and 6: t_i -> t_j, i != j, both >= 1, broadcast pattern.
    for i in 1..k {
        for j in 1..k {
            if i == j {
                continue;
            }
            let s = start(i, j);
            for q in 0..m[i] * m[j] {
                push(s + q, i as u32, t(i, q / m[j]), t(j, q % m[j]));
            }
        }
    }
    // Step 5: local messages of t_i, i >= 1, in the phases of t_i -> t_{i-1}.
    for i in 1..k {
        let s = start(i, i - 1);
        for a in 0..m[i] {
            for q in 0..m[i] {
                let p = s + a * m[i - 1] + q;
                let d = aligned(p, m[i]);
                if d != a {
                    push(p, kk + i as u32, t(i, d), t(i, a));
                }
            }
        }
    }
    out.sort_unstable_by_key(|&(p, c, _, _)| (p, c));
    PhaseTable::from_sorted(
        machines,
        p_all as usize,
        out.into_iter().map(|(p, _, s, d)| (p, s, d)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's Figure 3 (global message scheduling for Figure 1: |M_0| = 3, |M_1| = 2,
    /// |M_2| = 1): t_1 → t_2 from phase 0, t_0 → t_2 from 6, t_2 → t_0 from 0; and Table 4's
    /// groups t_0 → t_1 from 0, t_1 → t_0 from 3, t_2 → t_1 from 7.
    #[test]
    fn figure_3_start_phases() {
        let m = [3, 2, 1];
        let starts: Vec<u64> = [(1, 2), (0, 2), (2, 0), (0, 1), (1, 0), (2, 1)]
            .iter()
            .map(|&(i, j)| group_start(&m, i, j))
            .collect();
        assert_eq!(starts, [0, 6, 0, 0, 3, 7]);
    }

    /// The seed's Table 2: the rotate pattern for |M_i| = 6, |M_j| = 4 (a = 3, b = 2, D = 2):
    /// senders t_{i,0..5} twice, then rotated once (t_{i,1}, …, t_{i,5}, t_{i,0}) twice;
    /// receivers t_{j,0..3} repeated; every pair exactly once.
    #[test]
    fn table_2_rotate_pattern() {
        let (mi, mj) = (6u64, 4u64);
        let lcm = mi / gcd(mi, mj) * mj;
        assert_eq!(lcm, 12);
        let pattern: Vec<(u64, u64)> = (0..mi * mj)
            .map(|q| (rotate_sender(q, mi, lcm), q % mj))
            .collect();
        // Columns of Table 2 (phases 0-5, 6-11, 12-17, 18-23): (sender i, receiver j).
        #[rustfmt::skip]
        let table_2: Vec<(u64, u64)> = vec![
            (0, 0), (1, 1), (2, 2), (3, 3), (4, 0), (5, 1),
            (0, 2), (1, 3), (2, 0), (3, 1), (4, 2), (5, 3),
            (1, 0), (2, 1), (3, 2), (4, 3), (5, 0), (0, 1),
            (1, 2), (2, 3), (3, 0), (4, 1), (5, 2), (0, 3),
        ];
        assert_eq!(pattern, table_2);
        let mut seen = pattern.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 24);
    }

    /// Figure 4 on a star of single machines is the ring schedule of Table 1: t_i → t_j in
    /// phase j − i − 1 if j > i, (k − 1) − (i − j) otherwise.
    #[test]
    fn single_machines_get_the_ring_schedule() {
        let k = 5u32;
        let subtrees: Vec<Vec<u32>> = (0..k).map(|i| vec![i]).collect();
        let table = assign(k, &subtrees);
        assert_eq!(table.num_phases(), 4);
        for (p, ms) in table.iter().enumerate() {
            for &(i, j) in ms {
                let want = if j > i { j - i - 1 } else { (k - 1) - (i - j) };
                assert_eq!(p as u32, want, "{i}->{j}");
            }
            assert_eq!(ms.len(), 5);
        }
    }
}
