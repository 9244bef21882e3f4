//! The node level: LogGOPS hosts whose ranks, grouped into nodes ([`NodeSpec`]), share their
//! node's memory bandwidth (and NIC) by flow-level max–min sharing.
//!
//! # What it models
//! A node holds R ranks (`node:ranks=R`, placed by `map`, see [`NodeSpec::node_of`]). Every
//! message is one of:
//! - **within a node** (two different ranks of one node), when the node has a bandwidth
//!   (`bw`): a memory copy, a *flow* that shares the node's bandwidth B with every other
//!   transfer in that node at the time;
//! - **between nodes**, when the nodes have a NIC bandwidth (`nic`): a flow that shares its
//!   source node's NIC (outbound, N) with the node's other outgoing transfers and its
//!   destination node's NIC (inbound, N) with that node's other incoming ones;
//! - **anything else** (a rank's message to itself, a message between nodes without `nic`,
//!   within a node without `bw`): exactly what LogGOPS says ([`LogGopsModel`]), `L` and `G`
//!   included.
//!
//! A flow also shares its sender's outgoing and its receiver's incoming per-rank limit, 1/G
//! (LogGOPS's `G`, per byte; none when G = 0), with the rank's other flows. The flows' rates
//! are max–min fair over those resources (progressive filling: the resource with the smallest
//! fair share fixes the rate of its flows, which leave the others, until every flow has a
//! rate), recomputed whenever a flow starts or ends, constant in between; so k equal transfers
//! alone on a node each move at min(B/k, 1/G), and n bytes take n / min(B/k, 1/G).
//!
//! # Host side (LogGOPS `o`, `O`, `g`, `L`, `S`, γ, δ)
//! For a flow message, as on a network ([`super::NetworkModel`]): a **send** of `s` bytes at
//! `t` occupies the CPU `o + (s−1)·O` and the NIC `g`; the flow starts at `t + o` and the
//! message arrives `L` after its last byte has moved (`L + R2` above `S2`). An **eager** send
//! (`s ≤ S`) completes at `t`. A **rendezvous** send (`s > S`) sends its request first
//! (arriving at `t + o + L + R`, `+ R2` above `S2`); when
//! the receiver matches it, the data flow starts `L` later (the clear-to-send) and the send
//! and the receive complete `L` after its last byte has moved. The **arrival** of a message
//! (or request) at `t` occupies the receiver's CPU `o + (s−1)·O` and NIC `g`; with LogGOPS's
//! `X`, the sender's receive path is held until `X` after its message (or request) arrived,
//! so that a message reaching a rank whose own message is arriving at the same time waits `X`. Local work,
//! reductions and finish times are LogGOPS's.
//!
//! # What it does not model
//! Caches and NUMA domains (one bandwidth per node), the memory traffic of inter-node
//! transfers (a NIC's DMA does not take from `bw`), a network between the nodes (a NIC
//! bandwidth at each end, LogGOPS's `L` between them; for a topology use `--network`), and
//! protocol switch points beyond LogGOPS's `S`, and a rank's limit shared between its flows
//! and the messages LogGOPS carries for it (those take LogGOPS's `G` on its NIC clocks, the
//! flows 1/G of their own). A transfer never starts before the time the
//! flows have reached (an op that LogGOPS dates in the past, on an idle second CPU, starts its
//! flow at that time). The cost of a flow's start or end grows with the flows active at once.

use super::node_spec::{node_host, NodeSpec};
use super::{
    Attempt, CostModel, LocalRun, LogGopsModel, LogGopsState, Message, ModelError, ModelSpec,
    Notice, OpSite, SendCompletion, SendIssue, TieOrder,
};
use crate::network::flow::{first_time, pop_due, FlowClock, MaxMin};
use crate::network::NetworkError;
use crate::schedule::Rank;
use crate::units::{per_byte, Time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

const NEVER: Time = Time::MAX;

/// The node level's cost model: LogGOPS hosts on nodes that share bandwidth (see the
/// [module docs](self)).
#[derive(Clone, Debug)]
pub struct NodeModel {
    host: LogGopsModel,
    spec: NodeSpec,
    /// Rank → node.
    node: Vec<u32>,
    nodes: u32,
    /// Capacities (bytes per ps; infinite: no limit) of a node's memory, NIC out, NIC in, and
    /// of a rank's own limit (1/G).
    mem: f64,
    nic: f64,
    per_rank: f64,
}

impl NodeModel {
    /// The model of `nranks` ranks on the nodes `spec` describes, with `host`'s costs.
    pub fn new(host: LogGopsModel, spec: NodeSpec, nranks: u32) -> NodeModel {
        let rate = |gbps: Option<f64>| gbps.map_or(f64::INFINITY, |g| g / 8000.0);
        NodeModel {
            host,
            spec,
            node: (0..nranks).map(|r| spec.node_of(r, nranks)).collect(),
            nodes: spec.nodes(nranks),
            mem: rate(spec.bw),
            nic: rate(spec.nic),
            per_rank: if host.gap_per_byte > 0.0 {
                1.0 / host.gap_per_byte
            } else {
                f64::INFINITY
            },
        }
    }

    /// [`NodeModel::new`] with the host model a spec names, which must be LogGOPS
    /// ([`node_host`]).
    pub fn from_specs(
        host: &ModelSpec,
        spec: &NodeSpec,
        nranks: u32,
    ) -> Result<NodeModel, ModelError> {
        Ok(NodeModel::new(node_host(host)?, *spec, nranks))
    }

    /// The node of each rank.
    pub fn placement(&self) -> &[u32] {
        &self.node
    }

    /// The node spec.
    pub fn spec(&self) -> &NodeSpec {
        &self.spec
    }

    /// The resources a message from `src` to `dst` flows through, or `None` when LogGOPS
    /// carries it.
    fn path(&self, src: Rank, dst: Rank) -> Option<Path> {
        if src == dst {
            return None;
        }
        let (a, b) = (self.node[src as usize], self.node[dst as usize]);
        let n = self.nodes;
        let mut p = Path::default();
        if a == b {
            if self.mem.is_infinite() {
                return None;
            }
            p.push(a);
        } else {
            if self.nic.is_infinite() {
                return None;
            }
            p.push(n + a);
            p.push(2 * n + b);
        }
        if self.per_rank.is_finite() {
            let nr = self.node.len() as u32;
            p.push(3 * n + src);
            p.push(3 * n + nr + dst);
        }
        Some(p)
    }

    /// The capacity of every resource: each node's memory, NIC out and NIC in, then each
    /// rank's own limit out and in.
    fn capacities(&self) -> Vec<f64> {
        let (n, r) = (self.nodes as usize, self.node.len());
        let mut c = vec![self.mem; n];
        c.resize(3 * n, self.nic);
        c.resize(3 * n + 2 * r, self.per_rank);
        c
    }
}

/// The resources of a flow, each loaded with weight 1.
#[derive(Clone, Copy, Debug, Default)]
struct Path {
    res: [(u32, f64); 4],
    n: u8,
}

impl Path {
    fn push(&mut self, r: u32) {
        self.res[self.n as usize] = (r, 1.0);
        self.n += 1;
    }

    fn res(&self) -> &[(u32, f64)] {
        &self.res[..self.n as usize]
    }
}

/// Totals of a run on the node level.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeTotals {
    /// Flows within a node, and their bytes.
    pub intra: u64,
    pub intra_bytes: u64,
    /// Flows between nodes, and their bytes.
    pub inter: u64,
    pub inter_bytes: u64,
    /// Messages LogGOPS carried (a rank's to itself, or where no bandwidth is shared).
    pub direct: u64,
}

/// The node level's state: LogGOPS's clocks and the flows.
#[derive(Debug)]
pub struct NodeState {
    host: LogGopsState,
    flows: Flows,
    /// With LogGOPS's `X`: the sender (rank, NIC) of every eager flow not yet arrived.
    senders: HashMap<u64, (Rank, u16)>,
    /// What was carried how.
    pub totals: NodeTotals,
}

/// One flow: a message's bytes moving through its resources.
#[derive(Clone, Debug)]
struct Flow {
    /// Bytes not yet moved, as of `Flows::last`.
    left: f64,
    /// Bytes per ps.
    rate: f64,
    path: Path,
    /// When its last byte moves, at its current rate.
    end: Time,
    /// Delivered this long after its last byte moved.
    latency: Time,
    /// The message id, and whether it is a rendezvous transfer's data.
    id: u64,
    rdv: bool,
}

/// The flows of a run, max–min fair over the node level's resources.
#[derive(Debug)]
struct Flows {
    flows: Vec<Flow>,
    free: Vec<u32>,
    active: Vec<u32>,
    /// Flows waiting to start: (start, sequence, flow).
    starts: BinaryHeap<Reverse<(Time, u64, u32)>>,
    /// Messages delivered later: (time, sequence, flow).
    deliveries: BinaryHeap<Reverse<(Time, u64, u32)>>,
    seq: u64,
    /// The time reached, and the time the flows' `left` refer to.
    now: Time,
    last: Time,
    /// The earliest end of an active flow.
    next_end: Time,
    /// Each resource's capacity (bytes per ps).
    capacity: Vec<f64>,
    fill: MaxMin,
    rates: Vec<f64>,
    /// The messages the last advance delivered: (time, id, rendezvous).
    ready: Vec<(Time, u64, bool)>,
}

/// The whole picoseconds `left` bytes take at `rate`: rounded up, except that a quotient
/// within rounding error of a whole number is that number (so that 1 MiB shared three ways at
/// 8 GB/s takes exactly 3 · 131072 ns).
fn transfer_time(left: f64, rate: f64) -> Time {
    if left <= 0.0 {
        return 0;
    }
    if rate <= 0.0 {
        return NEVER;
    }
    let x = left / rate;
    let r = x.round();
    if (x - r).abs() <= 1e-12 * r.max(1.0) {
        r as Time
    } else {
        x.ceil() as Time
    }
}

impl Flows {
    fn new(capacity: Vec<f64>) -> Flows {
        Flows {
            flows: Vec::new(),
            free: Vec::new(),
            active: Vec::new(),
            starts: BinaryHeap::new(),
            deliveries: BinaryHeap::new(),
            seq: 0,
            now: 0,
            last: 0,
            next_end: NEVER,
            fill: MaxMin::new(capacity.len()),
            capacity,
            rates: Vec::new(),
            ready: Vec::new(),
        }
    }

    /// Queues a flow of `bytes` on `path` starting at `at` (or now, if later), delivered
    /// `latency` after its last byte moves.
    fn start(&mut self, at: Time, path: Path, bytes: u64, latency: Time, id: u64, rdv: bool) {
        let f = Flow {
            left: bytes as f64,
            rate: 0.0,
            path,
            end: NEVER,
            latency,
            id,
            rdv,
        };
        let k = match self.free.pop() {
            Some(k) => {
                self.flows[k as usize] = f;
                k
            }
            None => {
                self.flows.push(f);
                (self.flows.len() - 1) as u32
            }
        };
        self.seq += 1;
        self.starts.push(Reverse((at.max(self.now), self.seq, k)));
    }

    fn deliver_at(&mut self, t: Time, k: u32) {
        self.seq += 1;
        let when = t.saturating_add(self.flows[k as usize].latency);
        self.deliveries.push(Reverse((when, self.seq, k)));
    }

    /// Max–min fair rates of the active flows ([`MaxMin`]), and their ends.
    fn recompute(&mut self) {
        // (Sorted, so that the rates do not depend on the order flows ended in.)
        self.active.sort_unstable();
        self.rates.clear();
        self.rates.resize(self.active.len(), 0.0);
        let (flows, active) = (&self.flows, &self.active);
        self.fill.fill(
            &self.capacity,
            |i| flows[active[i] as usize].path.res(),
            &mut self.rates,
        );
        for (i, &k) in self.active.iter().enumerate() {
            self.flows[k as usize].rate = self.rates[i];
        }
        let now = self.last;
        self.next_end = NEVER;
        for &k in &self.active {
            let f = &mut self.flows[k as usize];
            f.end = now.saturating_add(transfer_time(f.left, f.rate));
            self.next_end = self.next_end.min(f.end);
        }
    }
}

impl FlowClock for Flows {
    fn next_delivery(&self) -> Time {
        first_time(&self.deliveries)
    }

    fn next_change(&mut self) -> Time {
        first_time(&self.starts).min(self.next_end)
    }

    fn drain(&mut self, dt: f64) {
        for &k in &self.active {
            let f = &mut self.flows[k as usize];
            f.left = (f.left - f.rate * dt).max(0.0);
        }
    }

    /// Handles the starts and ends at `t`, then recomputes the rates.
    fn change_at(&mut self, t: Time) {
        self.drain_to(t);
        let mut changed = false;
        while let Some((_, k)) = pop_due(&mut self.starts, t) {
            if self.flows[k as usize].left <= 0.0 {
                // An empty message: only its latency.
                self.deliver_at(t, k);
                continue;
            }
            self.active.push(k);
            changed = true;
        }
        if self.next_end == t {
            let mut i = 0;
            while i < self.active.len() {
                let k = self.active[i];
                if self.flows[k as usize].end == t {
                    self.flows[k as usize].left = 0.0;
                    self.active.swap_remove(i);
                    self.deliver_at(t, k);
                    changed = true;
                } else {
                    i += 1;
                }
            }
        }
        if changed {
            self.recompute();
        }
    }

    /// Appends the messages delivered at `d` to `ready`: (time, id, rendezvous).
    fn deliver(&mut self, d: Time) {
        while let Some((_, k)) = pop_due(&mut self.deliveries, d) {
            let f = &self.flows[k as usize];
            self.ready.push((d, f.id, f.rdv));
            self.free.push(k);
        }
    }

    fn now_mut(&mut self) -> &mut Time {
        &mut self.now
    }

    fn last_mut(&mut self) -> &mut Time {
        &mut self.last
    }
}

impl NodeModel {
    fn count(&self, st: &mut NodeState, m: &Message) {
        let t = &mut st.totals;
        if self.node[m.src as usize] == self.node[m.dst as usize] {
            t.intra += 1;
            t.intra_bytes += m.bytes;
        } else {
            t.inter += 1;
            t.inter_bytes += m.bytes;
        }
    }
}

impl CostModel for NodeModel {
    type State = NodeState;

    const ANNOUNCES: bool = true;

    fn new_state(&self, nranks: u32, ncpus: u16, nnics: u16) -> NodeState {
        NodeState {
            host: self.host.new_state(nranks, ncpus, nnics),
            flows: Flows::new(self.capacities()),
            senders: HashMap::new(),
            totals: NodeTotals::default(),
        }
    }

    #[inline]
    fn ready_time(&self, st: &NodeState, now: Time, op: OpSite) -> Time {
        self.host.ready_time(&st.host, now, op)
    }

    fn send(&self, st: &mut NodeState, t: Time, m: &Message) -> Attempt<SendIssue> {
        let Some(path) = self.path(m.src, m.dst) else {
            st.totals.direct += 1;
            return self.host.send(&mut st.host, t, m);
        };
        let h = &self.host;
        let cpu_end = match h.charge_send(&mut st.host, t, m) {
            Attempt::Go(end) => end,
            Attempt::Retry(busy) => return Attempt::Retry(busy),
        };
        let at = t.saturating_add(h.overhead);
        if m.bytes <= h.eager_limit {
            self.count(st, m);
            if h.crossing > 0 {
                // X: the sender's receive path is held from its flow's arrival on
                st.senders.insert(m.id, (m.src, m.nic));
            }
            let latency = h.latency.saturating_add(h.switch_latency(m.bytes));
            st.flows.start(at, path, m.bytes, latency, m.id, false);
            Attempt::Go(SendIssue {
                arrival: None,
                completion: SendCompletion::At(t),
                busy_until: cpu_end,
            })
        } else {
            // The request to send (and the handshake's measured cost, R); the data flows once
            // it is matched. X holds the receive path from the request's arrival, as LogGOPS.
            let arrival = at
                .saturating_add(h.latency)
                .saturating_add(h.switch_latency(m.bytes));
            h.hold_receive(&mut st.host, m.src, m.nic, arrival);
            Attempt::Go(SendIssue {
                arrival: Some(arrival),
                completion: SendCompletion::OnMatch,
                busy_until: cpu_end,
            })
        }
    }

    fn deliver(&self, st: &mut NodeState, t: Time, m: &Message) -> Attempt<Time> {
        if self.path(m.src, m.dst).is_none() {
            return self.host.deliver(&mut st.host, t, m);
        }
        let h = &self.host;
        let bytes = per_byte(m.bytes.saturating_sub(1), h.overhead_per_byte);
        h.charge_arrival(&mut st.host, t, m, bytes, 0)
    }

    fn rendezvous_matched(
        &self,
        st: &mut NodeState,
        t: Time,
        m: &Message,
        recv_site: Option<OpSite>,
    ) -> bool {
        let Some(path) = self.path(m.src, m.dst) else {
            return self.host.rendezvous_matched(&mut st.host, t, m, recv_site);
        };
        // Clear-to-send back (L), then the data.
        self.count(st, m);
        let h = &self.host;
        st.flows.start(
            t.saturating_add(h.latency),
            path,
            m.bytes,
            h.latency,
            m.id,
            true,
        );
        false
    }

    fn local(&self, st: &mut NodeState, t: Time, site: OpSite, cost: Time) -> Attempt<LocalRun> {
        self.host.local(&mut st.host, t, site, cost)
    }

    fn reduce_cost(&self, bytes: u64) -> Time {
        self.host.reduce_cost(bytes)
    }

    fn copy_cost(&self, bytes: u64) -> Time {
        self.host.copy_cost(bytes)
    }

    fn rank_finish(&self, st: &NodeState, rank: Rank, last_done: Time) -> Time {
        self.host.rank_finish(&st.host, rank, last_done)
    }

    #[inline]
    fn prefetch(&self, st: &NodeState, rank: Rank) {
        self.host.prefetch(&st.host, rank);
    }

    fn tie_order(&self) -> TieOrder {
        self.host.order
    }

    fn advance(
        &self,
        st: &mut NodeState,
        until: Option<Time>,
        out: &mut Vec<Notice>,
    ) -> Result<(), NetworkError> {
        st.flows.ready.clear();
        st.flows.advance(until.unwrap_or(NEVER))?;
        // X: every sender of an eager message that arrives now holds its receive path (before
        // any of these arrivals is delivered, so that two crossing messages wait alike); only
        // eager sends are in `senders`, and only with X > 0
        if self.host.crossing > 0 {
            for &(time, id, _) in &st.flows.ready {
                if let Some((rank, nic)) = st.senders.remove(&id) {
                    self.host.hold_receive(&mut st.host, rank, nic, time);
                }
            }
        }
        out.extend(st.flows.ready.drain(..).map(|(time, id, rdv)| {
            if rdv {
                Notice::RendezvousDone { time, id }
            } else {
                Notice::Arrival { time, id }
            }
        }));
        Ok(())
    }
}
