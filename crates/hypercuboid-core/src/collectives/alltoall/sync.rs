//! Keeping the phases of a `scheduled` alltoall apart (alltoall seed, section 5).
//!
//! The messages of a phase table are contention-free within a phase, but nothing stops a fast
//! rank from starting phase `q` while a slow one is still in phase `p < q`: two messages that
//! share a directed link would then contend. The seed keeps the phases apart with **pairwise
//! synchronisation**: whenever `a → b` in phase `p` and `c → d` in phase `q > p` share a link,
//! a zero-byte message `a → c` is sent after `a → b`, and `c → d` starts only once it has
//! arrived. Some of these are implied by others ("redundant synchronisations"); removing them
//! is a transitive reduction of the dependence graph.
//!
//! # The dependence graph
//! Its nodes are the messages; an edge `m1 → m2` says `m2` may start only after `m1`'s send
//! has completed. Each rank runs its phases in order (its phase-`q` ops require its ops of its
//! previous phase), so two messages of one sender are ordered for free: those edges cost no
//! message. [`Sync::Pairwise`] sends one synchronisation message per pair of contending
//! messages with different senders. [`Sync::PairwiseReduced`] sends one per edge of the
//! transitive reduction whose two messages have different senders.
//!
//! The reduction is computed without listing every contending pair: on a directed link the
//! messages are totally ordered by phase, so the edges between consecutive messages of each
//! link (the *chains*) have the same transitive closure as all contending pairs, and a DAG's
//! transitive reduction depends only on its closure.
//!
//! # Happens-before
//! [`enforces_phases`] checks a built schedule: for every pair of contending messages in
//! phases `p < q`, the completion of the first one's send happens before the start of the
//! second one's send in every execution, through the schedule's dependencies and its matched
//! messages with synchronous sends (a send completes only after its receive has started).

use super::phases::{LinkRoutes, PhaseTable};
use crate::schedule::{DepKind, OpKind, Rank, Schedule};
use crate::spec::{Choice, Choices};
use std::collections::HashMap;

/// How the phases are kept apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sync {
    /// A zero-byte message `a → c` after `a → b` for every contending pair (seed, section 5).
    Pairwise,
    /// [`Sync::Pairwise`] without the redundant synchronisations (the seed's implementation).
    PairwiseReduced,
    /// A barrier (dissemination, zero-byte messages) between consecutive phases.
    Barrier,
    /// Each rank runs its phases in order; nothing more.
    None,
}

/// The names of [`Sync`] (the `sync` key of `scheduled`), the default first.
pub const SYNCS: Choices<Sync> = Choices::new(
    "sync",
    &[
        Choice::new(
            "pairwise-reduced",
            Sync::PairwiseReduced,
            "pairwise without the redundant synchronisations (a transitive reduction; the \
             seed's implementation)",
        ),
        Choice::new(
            "pairwise",
            Sync::Pairwise,
            "a zero-byte message a -> c after a -> b for every two messages of different \
             senders that share a link (seed, section 5)",
        ),
        Choice::new(
            "barrier",
            Sync::Barrier,
            "a dissemination barrier between consecutive phases",
        ),
        Choice::new(
            "none",
            Sync::None,
            "each rank runs its phases in order; nothing more",
        ),
    ],
);

impl Sync {
    /// The name users type.
    pub fn name(self) -> &'static str {
        SYNCS.name(self)
    }
}

/// Most synchronisation messages [`Sync::Pairwise`] builds a schedule with.
pub const MAX_PAIRWISE_SYNCS: u64 = 20_000_000;

/// One message of the exchange, in phase order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Its phase.
    pub phase: u32,
    /// Sending machine.
    pub src: u32,
    /// Receiving machine.
    pub dst: u32,
}

/// The messages of `table` between machines that carry a rank (`used[m]`), in phase order.
pub fn messages(table: &PhaseTable, used: &[bool]) -> Vec<Message> {
    let mut out = Vec::new();
    for (p, ms) in table.iter().enumerate() {
        for &(s, d) in ms {
            if used[s as usize] && used[d as usize] {
                out.push(Message {
                    phase: p as u32,
                    src: s,
                    dst: d,
                });
            }
        }
    }
    out
}

/// For every directed link, the messages (indices into `msgs`) that use it, in phase order.
fn link_lists(msgs: &[Message], routes: &LinkRoutes) -> Vec<Vec<u32>> {
    let mut lists = vec![Vec::new(); routes.num_directed_links()];
    let mut path = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        routes.route_into(m.src, m.dst, &mut path);
        for &l in &path {
            lists[l as usize].push(i as u32);
        }
    }
    lists
}

/// The successors of each of `n` nodes, as `(start, succ)` (node `a`'s are
/// `succ[start[a]..start[a + 1]]`, ascending), from edges `(a, b)` (sorted and deduplicated
/// here).
fn successors(edges: &mut Vec<(u32, u32)>, n: usize) -> (Vec<u32>, Vec<u32>) {
    edges.sort_unstable();
    edges.dedup();
    let mut start = vec![0u32; n + 1];
    for &(a, _) in edges.iter() {
        start[a as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    (start, edges.iter().map(|&(_, b)| b).collect())
}

/// The synchronisation edges `(m1, m2)` (indices into `msgs`, `m1` in an earlier phase, the
/// senders different) of the transitive reduction of the dependence graph, sorted.
pub fn reduced_edges(msgs: &[Message], routes: &LinkRoutes) -> Vec<(u32, u32)> {
    let n = msgs.len();
    let mut chain: Vec<(u32, u32)> = Vec::new();
    for list in link_lists(msgs, routes) {
        for w in list.windows(2) {
            if msgs[w[0] as usize].phase < msgs[w[1] as usize].phase {
                chain.push((w[0], w[1]));
            }
        }
    }
    // Successors; indices are in phase order, so every edge goes up.
    let (start, succ) = successors(&mut chain, n);
    let mut mark = vec![u32::MAX; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut kept = Vec::new();
    for u in 0..n {
        let out = &succ[start[u] as usize..start[u + 1] as usize];
        let Some(&hi) = out.last() else { continue };
        // Successors in increasing order: one reached from an earlier successor is redundant.
        for &v in out {
            if mark[v as usize] == u as u32 {
                continue;
            }
            if msgs[u].src != msgs[v as usize].src {
                kept.push((u as u32, v));
            }
            mark[v as usize] = u as u32;
            stack.push(v);
            while let Some(x) = stack.pop() {
                for &y in &succ[start[x as usize] as usize..start[x as usize + 1] as usize] {
                    if y <= hi && mark[y as usize] != u as u32 {
                        mark[y as usize] = u as u32;
                        stack.push(y);
                    }
                }
            }
        }
    }
    kept
}

/// Every pair `(m1, m2)` of messages that share a directed link, `m1` in an earlier phase,
/// with different senders (the synchronisations of [`Sync::Pairwise`]), sorted; `None` when
/// there are more than `limit`.
pub fn pairwise_edges(
    msgs: &[Message],
    routes: &LinkRoutes,
    limit: u64,
) -> Option<Vec<(u32, u32)>> {
    let mut out = Vec::new();
    let all = for_each_pairwise(msgs, routes, |i, j| {
        out.push((i, j));
        out.len() as u64 <= limit
    });
    all.then(|| {
        out.sort_unstable();
        out
    })
}

/// Calls `visit(m1, m2)` once for every pair of [`pairwise_edges`], in no particular order,
/// until it returns false; true when every pair was visited.
fn for_each_pairwise(
    msgs: &[Message],
    routes: &LinkRoutes,
    mut visit: impl FnMut(u32, u32) -> bool,
) -> bool {
    let lists = link_lists(msgs, routes);
    let mut seen = vec![u32::MAX; msgs.len()];
    let mut path = Vec::new();
    for (j, m) in msgs.iter().enumerate() {
        routes.route_into(m.src, m.dst, &mut path);
        for &l in &path {
            for &i in &lists[l as usize] {
                let mi = msgs[i as usize];
                if mi.phase >= m.phase {
                    break;
                }
                if mi.src != m.src && seen[i as usize] != j as u32 {
                    seen[i as usize] = j as u32;
                    if !visit(i, j as u32) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// The most pairs of messages on a shared link [`pairwise_count`] may visit (some seconds of
/// work): a star of 2,000 machines needs 1.6·10^10.
pub const MAX_PAIRWISE_WORK: u64 = 2_000_000_000;

/// The pairs of messages on a shared link [`pairwise_count`] visits: each message's links,
/// each with every message routed over it.
pub fn pairwise_work(msgs: &[Message], routes: &LinkRoutes) -> u64 {
    let mut per_link = vec![0u64; routes.num_directed_links()];
    let mut path = Vec::new();
    for m in msgs {
        routes.route_into(m.src, m.dst, &mut path);
        for &l in &path {
            per_link[l as usize] += 1;
        }
    }
    per_link
        .iter()
        .map(|&k| k.saturating_mul(k))
        .fold(0, u64::saturating_add)
}

/// The number of [`Sync::Pairwise`] synchronisations (pairs of contending messages with
/// different senders), counted without listing them.
pub fn pairwise_count(msgs: &[Message], routes: &LinkRoutes) -> u64 {
    let mut count = 0u64;
    for_each_pairwise(msgs, routes, |_, _| {
        count += 1;
        true
    });
    count
}

/// The outcome of [`enforces_phases`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enforcement {
    /// Pairs of contending messages in different phases checked.
    pub pairs: u64,
    /// Pairs whose order the schedule does not enforce.
    pub violated: u64,
    /// The first pair `(m1, m2)` whose order the schedule does not enforce: machines
    /// `(phase, src, dst)` of each.
    pub violation: Option<(Message, Message)>,
}

impl Enforcement {
    /// True when every pair is enforced.
    pub fn ok(&self) -> bool {
        self.violation.is_none()
    }
}

/// Why [`enforces_phases`] could not run on a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnforcementError(pub String);

impl std::fmt::Display for EnforcementError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EnforcementError {}

/// The happens-before check: in `s`, whose rank `r` runs on machine `machine_of[r]`, every
/// pair of messages of `msgs` that share a directed link under `routes`, in phases `p < q`,
/// is ordered: the completion of the first one's send happens before the start of the second
/// one's send, through dependencies (`requires`: completion → start; `irequires`: start →
/// start) and matched messages (a send's start happens before its receive's completion, and,
/// with synchronous sends, the receive's start before the send's completion). The data
/// message `src → dst` of the table is the schedule's non-empty send from the rank on `src`
/// to the rank on `dst`.
pub fn enforces_phases(
    s: &Schedule,
    machine_of: &[u32],
    msgs: &[Message],
    routes: &LinkRoutes,
) -> Result<Enforcement, EnforcementError> {
    let n = s.nranks() as usize;
    if machine_of.len() != n {
        return Err(EnforcementError(format!(
            "the schedule has {n} ranks and the mapping {}",
            machine_of.len()
        )));
    }
    let elem = s.elem_size();
    // Events: 2 per op (start, end), numbered from each rank's offset.
    let mut base = vec![0usize; n + 1];
    for r in 0..n {
        base[r + 1] = base[r] + 2 * s.rank(r as Rank).len();
    }
    let events = base[n];
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut sends: HashMap<(Rank, Rank, i32), Vec<u32>> = HashMap::new();
    let mut recvs: HashMap<(Rank, Rank, i32), Vec<u32>> = HashMap::new();
    let mut data_send: HashMap<(u32, u32), u32> = HashMap::new();
    for r in 0..n {
        let v = s.rank(r as Rank);
        for i in 0..v.len() {
            let (st, en) = ((base[r] + 2 * i) as u32, (base[r] + 2 * i + 1) as u32);
            edges.push((st, en));
            for d in v.deps(i) {
                let dst = (base[r] + 2 * d.on as usize) as u32;
                match d.kind {
                    DepKind::Requires => edges.push((dst + 1, st)),
                    DepKind::IRequires => edges.push((dst, st)),
                }
            }
            match v.op(i).kind {
                OpKind::Send { peer, tag, data } => {
                    sends
                        .entry((r as Rank, peer, tag))
                        .or_default()
                        .push(i as u32);
                    if data.bytes(elem) > 0 {
                        data_send.insert((machine_of[r], machine_of[peer as usize]), st);
                    }
                }
                OpKind::Recv { peer, tag, .. } => {
                    recvs
                        .entry((peer, r as Rank, tag))
                        .or_default()
                        .push(i as u32);
                }
                _ => {}
            }
        }
    }
    for (key, ss) in &sends {
        let rs = recvs.get(key).map(Vec::as_slice).unwrap_or(&[]);
        if rs.len() != ss.len() {
            return Err(EnforcementError(format!(
                "rank {} sends {} messages with tag {} to rank {}, which receives {}",
                key.0,
                ss.len(),
                key.2,
                key.1,
                rs.len()
            )));
        }
        for (a, b) in ss.iter().zip(rs) {
            let se = (base[key.0 as usize] + 2 * *a as usize) as u32;
            let re = (base[key.1 as usize] + 2 * *b as usize) as u32;
            edges.push((se, re + 1));
            edges.push((re, se + 1));
        }
    }
    let (start, succ) = successors(&mut edges, events);
    let lists = link_lists(msgs, routes);
    let mut path = Vec::new();
    let mut reached = vec![u32::MAX; events];
    let mut stack = Vec::new();
    let mut pairs = 0u64;
    let mut violated = 0u64;
    let mut violation = None;
    let find = |m: &Message| -> Result<u32, EnforcementError> {
        data_send.get(&(m.src, m.dst)).copied().ok_or_else(|| {
            EnforcementError(format!(
                "the schedule has no data message from machine {} to machine {}",
                m.src, m.dst
            ))
        })
    };
    for (i, m1) in msgs.iter().enumerate() {
        let from = find(m1)? + 1;
        reached[from as usize] = i as u32;
        stack.push(from);
        while let Some(x) = stack.pop() {
            for &y in &succ[start[x as usize] as usize..start[x as usize + 1] as usize] {
                if reached[y as usize] != i as u32 {
                    reached[y as usize] = i as u32;
                    stack.push(y);
                }
            }
        }
        routes.route_into(m1.src, m1.dst, &mut path);
        let mut checked: Vec<u32> = Vec::new();
        for &l in &path {
            for &j in &lists[l as usize] {
                let m2 = &msgs[j as usize];
                if m2.phase <= m1.phase || checked.contains(&j) {
                    continue;
                }
                checked.push(j);
                pairs += 1;
                if reached[find(m2)? as usize] != i as u32 {
                    violated += 1;
                    if violation.is_none() {
                        violation = Some((*m1, *m2));
                    }
                }
            }
        }
    }
    Ok(Enforcement {
        pairs,
        violated,
        violation,
    })
}
