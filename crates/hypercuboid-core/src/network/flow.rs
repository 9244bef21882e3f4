//! The flow-level engine: every message is a flow on its routed path, and the flows in the
//! network share link bandwidth max–min fairly, the shares recomputed whenever a flow starts
//! or ends.
//!
//! This is the bandwidth-sharing model of SimGrid's network models (Velho, Schnorr, Casanova
//! and Legrand, "On the validity of flow-level TCP network models for grid and cloud
//! simulations", ACM TOMACS 23(4), 2013; used by SMPI, Degomme et al., IEEE TPDS 28(8),
//! 2017), without their TCP correction factors: a message of `s` bytes that starts at `t`
//! on a path with links of latency `L_i` through `h + 1` routers is transferred at its fair
//! share of every link on the path and delivered at `t + T + Σ L_i + (h + 1)·S`, where `T` is
//! the time the transfer took (`s / B` alone on a path whose narrowest link has bandwidth
//! `B`). `S` is the switch latency of [`NetParams`]. Links are the directed router-to-router
//! links, each endpoint's injection link and each endpoint's ejection link; buffers, packets
//! and credits do not exist at this level. A message to a busy destination shares its
//! ejection link with the others instead of queuing behind them.
//!
//! Max–min fairness is computed by progressive filling (Bertsekas and Gallager, *Data
//! Networks*, section 6.5.2): the link with the smallest fair share fixes the rate of its
//! flows, which leave the other links, until every flow has a rate. The engine advances from
//! event to event (a flow starts, a flow's last byte leaves, a message is delivered), the
//! rates constant in between. Times are integer picoseconds, a transfer's end rounded up.
//!
//! Routing: with `min` a message splits evenly, at each router, over the minimal next hops
//! toward its destination (the average of the packet engine's random choice among them): a
//! flow loads each link of its minimal paths with its share, and max–min fairness is taken
//! with those weights (a link whose flows carry shares `w_f` is full when `Σ w_f·r_f` reaches
//! its capacity). `inr` goes so to a random intermediate router first (Valiant). Adaptive
//! routing needs queues, which this level does not have.

use super::error::{param, NetworkError};
use super::packet::{Delivery, Injection, NetParams, NicOrder};
use super::rng::SplitMix64;
use super::routing::{Algorithm, Routes};
use crate::topology::{SwitchModel, Topology};
use crate::units::Time;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const NEVER: Time = Time::MAX;

/// One flow.
#[derive(Clone, Debug)]
struct Flow {
    /// Bytes not yet sent, as of `FlowEngine::last`.
    left: f64,
    /// Bytes per ps.
    rate: f64,
    /// Its links: `path[start..end]`.
    start: u32,
    end: u32,
    /// Latency of the path (links and switches).
    latency: Time,
    token: u64,
    src: u32,
    dst: u32,
    /// A message to send back when this one is delivered: (bytes, token).
    then: Option<(u64, u64)>,
    /// Version of its projected end (stale heap entries are skipped).
    version: u32,
    /// An end is projected for its current rate.
    projected: bool,
    active: bool,
}

/// The flow-level engine on a topology with its routing tables (see the [module docs](self)).
#[derive(Debug)]
pub struct FlowEngine<'n> {
    topo: &'n Topology,
    routes: &'n Routes,
    params: NetParams,
    indirect: bool,
    /// Capacity of each link in bytes per ps: router ports by global port id, then each
    /// endpoint's injection link.
    capacity: Vec<f64>,
    /// Latency of each link.
    latency: Vec<Time>,
    flows: Vec<Flow>,
    free: Vec<u32>,
    /// Links of every flow with the share of it each carries (slices of it).
    path: Vec<(u32, f64)>,
    /// Entries of `path` that flows waiting to start or active use.
    live_links: usize,
    /// Flows waiting to start: (start, sequence, flow).
    starts: BinaryHeap<Reverse<(Time, u64, u32)>>,
    /// Projected ends of the active flows' transfers: (time, flow, version).
    ends: BinaryHeap<Reverse<(Time, u32, u32)>>,
    /// Messages delivered later: (time, token, flow).
    deliveries: BinaryHeap<Reverse<(Time, u64, u32)>>,
    active: Vec<u32>,
    seq: u64,
    /// The time the engine is at, and the time the flows' `left` refer to.
    now: Time,
    last: Time,
    rng: SplitMix64,
    /// Per link: bytes of the flows routed over it.
    link_bytes: Vec<f64>,
    /// Per link: bytes sent so far, when counted.
    sent: Option<Vec<f64>>,
    ready: Vec<Delivery>,
    /// Flows started, events handled, rate computations.
    pub flows_started: u64,
    pub events: u64,
    pub recomputes: u64,
    // Scratch of the rate computation.
    fill: MaxMin,
    old_rate: Vec<f64>,
    new_rate: Vec<f64>,
    /// [`NicOrder::Fifo`]: per endpoint, the flow it is sending (`IDLE` when none) and the
    /// flows started behind it, in start order. Empty with [`NicOrder::Interleave`].
    sending: Vec<u32>,
    queued: Vec<VecDeque<u32>>,
}

/// No flow (an endpoint's NIC is idle).
const IDLE: u32 = u32::MAX;

/// Max–min fair rates by progressive filling (Bertsekas and Gallager, *Data Networks*,
/// section 6.5.2), with its scratch sized to the links: the link with the smallest fair share
/// (its capacity left over the weights of its unfixed flows) fixes the rate of its flows, which
/// leave the other links, until every flow has a rate. The flow engine's, and the node level's
/// (`model/node.rs`).
#[derive(Clone, Debug)]
pub(crate) struct MaxMin {
    rem: Vec<f64>,
    wsum: Vec<f64>,
    by_link: Vec<Vec<u32>>,
    touched: Vec<u32>,
    fixed: Vec<bool>,
}

impl MaxMin {
    /// Scratch for `links` links.
    pub(crate) fn new(links: usize) -> MaxMin {
        MaxMin {
            rem: vec![0.0; links],
            wsum: vec![0.0; links],
            by_link: vec![Vec::new(); links],
            touched: Vec::new(),
            fixed: Vec::new(),
        }
    }

    /// Sets `rate[k]` (bytes per ps) of each of the `rate.len()` flows, flow k loading each
    /// link `l` of `links(k)` with weight `w` (a link is full when `Σ w·rate` reaches
    /// `capacity[l]`); a flow on no link of finite share keeps its `rate`.
    pub(crate) fn fill<'p>(
        &mut self,
        capacity: &[f64],
        links: impl Fn(usize) -> &'p [(u32, f64)],
        rate: &mut [f64],
    ) {
        let n = rate.len();
        for &l in &self.touched {
            self.by_link[l as usize].clear();
        }
        self.touched.clear();
        self.fixed.clear();
        self.fixed.resize(n, false);
        for k in 0..n {
            for &(l, w) in links(k) {
                let v = &mut self.by_link[l as usize];
                if v.is_empty() {
                    self.touched.push(l);
                    self.rem[l as usize] = capacity[l as usize];
                    self.wsum[l as usize] = 0.0;
                }
                v.push(k as u32);
                self.wsum[l as usize] += w;
            }
        }
        // Links by fair share (the rate at which the unfixed flows on it fill it), smallest
        // first; stale entries are skipped.
        let share_of = |rem: f64, w: f64| if w > 1e-12 { rem / w } else { f64::INFINITY };
        let mut heap: BinaryHeap<Reverse<(u64, u32)>> = self
            .touched
            .iter()
            .map(|&l| {
                let share = share_of(self.rem[l as usize], self.wsum[l as usize]);
                Reverse((share.to_bits(), l))
            })
            .collect();
        let mut left = n;
        while left > 0 {
            let Some(Reverse((bits, l))) = heap.pop() else {
                break;
            };
            let l = l as usize;
            let share = share_of(self.rem[l], self.wsum[l]);
            if share.is_infinite() || share.to_bits() != bits {
                continue;
            }
            let ks = std::mem::take(&mut self.by_link[l]);
            for &k in &ks {
                if self.fixed[k as usize] {
                    continue;
                }
                self.fixed[k as usize] = true;
                left -= 1;
                rate[k as usize] = share;
                for &(m, w) in links(k as usize) {
                    let m = m as usize;
                    self.rem[m] = (self.rem[m] - share * w).max(0.0);
                    self.wsum[m] -= w;
                    if m != l {
                        let sh = share_of(self.rem[m], self.wsum[m]);
                        if sh.is_finite() {
                            heap.push(Reverse((sh.to_bits(), m as u32)));
                        }
                    }
                }
            }
            self.wsum[l] = 0.0;
            self.by_link[l] = ks;
        }
    }
}

/// The time of the earliest entry of an event heap ([`Time::MAX`] for none).
pub(crate) fn first_time<A: Ord, B: Ord>(heap: &BinaryHeap<Reverse<(Time, A, B)>>) -> Time {
    heap.peek().map_or(NEVER, |r| r.0 .0)
}

/// Pops the earliest entry of an event heap if it is due at `t`.
pub(crate) fn pop_due<A: Ord + Copy, B: Ord + Copy>(
    heap: &mut BinaryHeap<Reverse<(Time, A, B)>>,
    t: Time,
) -> Option<(A, B)> {
    match heap.peek() {
        Some(&Reverse((at, a, b))) if at == t => {
            heap.pop();
            Some((a, b))
        }
        _ => None,
    }
}

/// The event loop of a flow level, which the flow engine and the node level's flows
/// (`model/node.rs`) share: deliveries first, then the starts and ends of transfers, the rates
/// constant in between, until a delivery or a time limit.
pub(crate) trait FlowClock {
    /// The earliest pending delivery ([`Time::MAX`] for none).
    fn next_delivery(&self) -> Time;
    /// The earliest pending start or end of a transfer ([`Time::MAX`] for none).
    fn next_change(&mut self) -> Time;
    /// Moves the active flows' bytes on by `dt` picoseconds.
    fn drain(&mut self, dt: f64);
    /// Handles the starts and ends at `t`, then recomputes the rates.
    fn change_at(&mut self, t: Time);
    /// Takes the messages delivered at `d` (the earliest pending delivery).
    fn deliver(&mut self, d: Time);
    /// The time reached.
    fn now_mut(&mut self) -> &mut Time;
    /// The time the flows' bytes left refer to.
    fn last_mut(&mut self) -> &mut Time;

    /// Moves the active flows' bytes on to `t` ([`FlowClock::drain`]) where `t` is later than
    /// the time they refer to.
    fn drain_to(&mut self, t: Time) {
        let last = self.last_mut();
        if t <= *last {
            return;
        }
        let dt = (t - *last) as f64;
        *last = t;
        self.drain(dt);
    }

    /// Advances to the first delivery at or before `limit` ([`Time::MAX`]: wherever it is)
    /// and takes the messages delivered then ([`FlowClock::deliver`]), or advances to
    /// `limit`. Stops with [`crate::cancel::Interrupted`] on a request to stop.
    fn advance(&mut self, limit: Time) -> Result<(), crate::cancel::Interrupted> {
        let mut changes = 0u64;
        loop {
            changes += 1;
            if changes.is_multiple_of(crate::cancel::EVERY) {
                crate::cancel::check()?;
            }
            let d = self.next_delivery();
            let c = self.next_change();
            if d <= c && d <= limit && d != NEVER {
                self.drain_to(d);
                *self.now_mut() = d;
                self.deliver(d);
                return Ok(());
            }
            if c == NEVER || c > limit {
                if limit != NEVER {
                    self.drain_to(limit);
                    let now = self.now_mut();
                    *now = (*now).max(limit);
                }
                return Ok(());
            }
            *self.now_mut() = c;
            self.change_at(c);
        }
    }
}

impl<'n> FlowEngine<'n> {
    /// An engine on `topo` with `routes` (its routing must be `min` or `inr`).
    pub fn new(
        topo: &'n Topology,
        routes: &'n Routes,
        params: NetParams,
    ) -> Result<FlowEngine<'n>, NetworkError> {
        if let SwitchModel::Ethernet(_) = topo.switch() {
            return Err(NetworkError::Unsupported {
                what: "the flow level".into(),
                topology: topo.name().into(),
                reason: "its switch model is ethernet (store-and-forward frames, PAUSE \
                         back-pressure), which flows do not have: use the packet level"
                    .into(),
            });
        }
        let indirect = match routes.spec().algorithm {
            Algorithm::Min => false,
            Algorithm::Inr => true,
            other => {
                return Err(param(
                    "routing",
                    other.name(),
                    "the flow level routes min or inr (adaptive routing reads queues, which \
                     flows do not have: use the packet level)",
                ))
            }
        };
        let np = routes.num_ports();
        let ne = topo.num_endpoints();
        let mut capacity = Vec::with_capacity(np + ne);
        let mut latency = Vec::with_capacity(np + ne);
        for p in 0..np {
            let l = match routes.port_link(p) {
                Some(l) => {
                    let k = &topo.links()[l as usize];
                    (k.bandwidth_gbps, k.latency)
                }
                None => {
                    let e = routes
                        .port_endpoint(p)
                        .expect("a port is a link or an endpoint's");
                    let k = topo.endpoint_link(e as usize);
                    (k.bandwidth_gbps, k.latency)
                }
            };
            capacity.push(l.0 / 8000.0);
            latency.push(l.1);
        }
        for e in 0..ne {
            let k = topo.endpoint_link(e);
            capacity.push(k.bandwidth_gbps / 8000.0);
            latency.push(k.latency);
        }
        let n = capacity.len();
        let mut engine = FlowEngine {
            topo,
            routes,
            indirect,
            capacity,
            latency,
            flows: Vec::new(),
            free: Vec::new(),
            path: Vec::new(),
            live_links: 0,
            starts: BinaryHeap::new(),
            ends: BinaryHeap::new(),
            deliveries: BinaryHeap::new(),
            active: Vec::new(),
            seq: 0,
            now: 0,
            last: 0,
            rng: SplitMix64::new(params.seed),
            link_bytes: vec![0.0; n],
            sent: None,
            ready: Vec::new(),
            flows_started: 0,
            events: 0,
            recomputes: 0,
            fill: MaxMin::new(n),
            old_rate: Vec::new(),
            new_rate: Vec::new(),
            sending: Vec::new(),
            queued: Vec::new(),
            params,
        };
        engine.nic_order(NicOrder::default());
        Ok(engine)
    }

    /// How each endpoint orders its messages: [`NicOrder::Fifo`] (the default, as at packet
    /// level) sends them one after another in the order they started, as LogGOPS's NIC does;
    /// [`NicOrder::Interleave`] shares its link among them max–min fairly.
    pub fn nic_order(&mut self, order: NicOrder) {
        let ne = self.topo.num_endpoints();
        match order {
            NicOrder::Interleave => {
                self.sending.clear();
                self.queued.clear();
            }
            NicOrder::Fifo => {
                self.sending = vec![IDLE; ne];
                self.queued = vec![VecDeque::new(); ne];
            }
        }
    }

    /// The time the engine has advanced to.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Number of links: the routing's ports (by global port id), then one injection link per
    /// endpoint.
    pub fn num_links(&self) -> usize {
        self.capacity.len()
    }

    /// Bytes sent on each link so far ([`FlowEngine::num_links`] entries).
    pub fn link_bytes(&self) -> &[f64] {
        &self.link_bytes
    }

    /// Capacity of each link in bytes per ps.
    pub fn capacity(&self) -> &[f64] {
        &self.capacity
    }

    /// The links from endpoint `a` to endpoint `b` with the share of the message each
    /// carries, appended to `out`: at every router the message splits evenly over the
    /// minimal next hops toward the goal (what the packet engine's random choice among them
    /// gives on average); with `inr` it goes so to a random intermediate router first.
    /// Returns the latency of the path along the first minimal next hops, switches included.
    fn route(&mut self, a: u32, b: u32, out: &mut Vec<(u32, f64)>) -> Time {
        let r = self.routes;
        let np = r.num_ports();
        let (ra, rb) = (
            self.topo.endpoint_router(a as usize),
            self.topo.endpoint_router(b as usize),
        );
        out.push(((np + a as usize) as u32, 1.0));
        let mut lat = self.latency[np + a as usize];
        let mut routers = 1u64;
        let mut legs = [rb, rb];
        let mut nlegs = 1;
        if self.indirect && r.targets().len() > 2 && ra != rb {
            let i = super::routing::Decider::intermediate(r, &mut self.rng, ra, rb);
            legs = [i, rb];
            nlegs = 2;
        }
        let mut start = ra;
        for &goal in &legs[..nlegs] {
            // Latency along the first minimal next hops.
            let mut here = start;
            while here != goal {
                let p = r.port(here, r.min_ports(here, goal)[0] as usize);
                lat += self.latency[p];
                routers += 1;
                here = r.port_ends(p).expect("a minimal next hop is a link").1 as usize;
            }
            // Shares, layer by layer (every minimal next hop is one closer to the goal).
            let mut front: Vec<(usize, f64)> = vec![(start, 1.0)];
            while front.iter().any(|&(x, _)| x != goal) {
                let mut next: Vec<(usize, f64)> = Vec::with_capacity(front.len() * 2);
                for &(x, w) in &front {
                    if x == goal {
                        next.push((x, w));
                        continue;
                    }
                    let ports = r.min_ports(x, goal);
                    let share = w / ports.len() as f64;
                    for &j in ports {
                        let p = r.port(x, j as usize);
                        out.push((p as u32, share));
                        let y = r.port_ends(p).expect("a minimal next hop is a link").1 as usize;
                        match next.iter_mut().find(|(z, _)| *z == y) {
                            Some(e) => e.1 += share,
                            None => next.push((y, share)),
                        }
                    }
                }
                front = next;
            }
            start = goal;
        }
        let ej = r.endpoint_port(b as usize);
        out.push((ej as u32, 1.0));
        lat += self.latency[ej];
        lat + routers * self.params.switch_latency
    }

    /// Queues message `m` (see [`super::Engine::inject`]).
    pub fn inject(&mut self, m: &Injection) -> Result<(), NetworkError> {
        m.check(self.topo.num_endpoints(), self.now)?;
        self.add(m, None);
        Ok(())
    }

    /// Queues `first`, and a message of `bytes` back from its destination to its source
    /// when it is delivered (see [`super::Engine::inject_chained`]).
    pub fn inject_chained(
        &mut self,
        first: &Injection,
        bytes: u64,
        token: u64,
    ) -> Result<(), NetworkError> {
        first.check(self.topo.num_endpoints(), self.now)?;
        self.add(first, Some((bytes, token)));
        Ok(())
    }

    fn add(&mut self, m: &Injection, then: Option<(u64, u64)>) {
        if self.path.len() > 4096 && self.path.len() > 4 * self.live_links {
            self.compact();
        }
        let mut links = std::mem::take(&mut self.path);
        let start = links.len() as u32;
        let latency = self.route(m.src, m.dst, &mut links);
        let end = links.len() as u32;
        for &(l, w) in &links[start as usize..end as usize] {
            self.link_bytes[l as usize] += m.bytes as f64 * w;
        }
        self.path = links;
        self.live_links += (end - start) as usize;
        let f = Flow {
            left: m.bytes as f64,
            rate: 0.0,
            start,
            end,
            latency,
            token: m.token,
            src: m.src,
            dst: m.dst,
            then,
            version: 0,
            projected: false,
            active: false,
        };
        let id = match self.free.pop() {
            Some(i) => {
                // Versions go on across the flows of a slot, so that the ends projected for
                // an earlier one are stale for this one.
                let version = self.flows[i as usize].version.wrapping_add(1);
                self.flows[i as usize] = Flow { version, ..f };
                i
            }
            None => {
                self.flows.push(f);
                (self.flows.len() - 1) as u32
            }
        };
        self.seq += 1;
        self.starts.push(Reverse((m.at, self.seq, id)));
        self.flows_started += 1;
    }

    /// Rebuilds the pool of paths with only those of flows that will be read again (waiting
    /// to start or active).
    fn compact(&mut self) {
        let mut pool = Vec::with_capacity(2 * self.live_links);
        let mut live: Vec<u32> = self.starts.iter().map(|r| r.0 .2).collect();
        live.extend_from_slice(&self.active);
        for q in &self.queued {
            live.extend(q.iter().copied());
        }
        live.sort_unstable();
        for f in live {
            let fl = &mut self.flows[f as usize];
            let (a, b) = (fl.start as usize, fl.end as usize);
            fl.start = pool.len() as u32;
            pool.extend_from_slice(&self.path[a..b]);
            fl.end = pool.len() as u32;
        }
        self.live_links = pool.len();
        self.path = pool;
    }

    /// Counts the bytes each link has sent as time goes ([`FlowEngine::sent_bytes`]).
    pub fn count_sent(&mut self) {
        if self.sent.is_none() {
            self.sent = Some(vec![0.0; self.capacity.len()]);
        }
    }

    /// Bytes each link has sent up to [`FlowEngine::now`] (with [`FlowEngine::count_sent`]).
    pub fn sent_bytes(&self) -> Option<&[f64]> {
        self.sent.as_deref()
    }

    /// Max–min fair rates of the active flows by progressive filling, and their projected
    /// ends.
    fn recompute(&mut self) {
        self.recomputes += 1;
        let now = self.last;
        self.old_rate.clear();
        let flows = &self.flows;
        self.old_rate
            .extend(self.active.iter().map(|&f| flows[f as usize].rate));
        self.new_rate.clear();
        self.new_rate.extend_from_slice(&self.old_rate);
        let (active, path) = (&self.active, &self.path);
        self.fill.fill(
            &self.capacity,
            |k| {
                let fl = &flows[active[k] as usize];
                &path[fl.start as usize..fl.end as usize]
            },
            &mut self.new_rate,
        );
        for (k, &f) in self.active.iter().enumerate() {
            self.flows[f as usize].rate = self.new_rate[k];
        }
        for (k, &f) in self.active.iter().enumerate() {
            let fl = &mut self.flows[f as usize];
            if fl.rate == self.old_rate[k] && fl.projected {
                // Same rate: the end projected before still holds.
                continue;
            }
            fl.projected = true;
            fl.version = fl.version.wrapping_add(1);
            let end = if fl.left <= 0.0 {
                now
            } else if fl.rate > 0.0 {
                now.saturating_add((fl.left / fl.rate).ceil() as Time)
            } else {
                NEVER
            };
            self.ends.push(Reverse((end, f, fl.version)));
        }
    }

    /// Advances to the first delivery at or before `t` (or to `t`; `None`: to the first
    /// delivery wherever it is) and returns the time reached and the messages delivered then
    /// (see [`super::Engine::advance_to_delivery`]).
    /// Stops with [`NetworkError::Interrupted`] on a request to stop ([`crate::cancel`]).
    pub fn advance_to_delivery(
        &mut self,
        t: Option<Time>,
    ) -> Result<(Time, &[Delivery]), NetworkError> {
        self.ready.clear();
        self.advance(t.unwrap_or(NEVER))?;
        Ok((self.now, &self.ready))
    }
}

impl FlowClock for FlowEngine<'_> {
    fn next_delivery(&self) -> Time {
        first_time(&self.deliveries)
    }

    /// The earliest pending start or end of a transfer.
    fn next_change(&mut self) -> Time {
        while let Some(&Reverse((_, f, v))) = self.ends.peek() {
            let fl = &self.flows[f as usize];
            if fl.active && fl.version == v {
                break;
            }
            self.ends.pop();
        }
        let s = first_time(&self.starts);
        let e = first_time(&self.ends);
        s.min(e)
    }

    /// Moves the flows' bytes on by `dt` (and, when sent bytes are counted, the links').
    fn drain(&mut self, dt: f64) {
        for &f in &self.active {
            let fl = &mut self.flows[f as usize];
            let sent = (fl.rate * dt).min(fl.left);
            fl.left = (fl.left - fl.rate * dt).max(0.0);
            if let Some(c) = &mut self.sent {
                for &(l, w) in &self.path[fl.start as usize..fl.end as usize] {
                    c[l as usize] += sent * w;
                }
            }
        }
    }

    /// Handles the starts and transfer ends at `t`, then recomputes the rates.
    fn change_at(&mut self, t: Time) {
        self.drain_to(t);
        let mut changed = false;
        while let Some((_, f)) = pop_due(&mut self.starts, t) {
            self.events += 1;
            let fl = &mut self.flows[f as usize];
            if fl.left <= 0.0 {
                // An empty message: only its latency.
                self.live_links -= (fl.end - fl.start) as usize;
                let when = t.saturating_add(fl.latency);
                self.deliveries.push(Reverse((when, fl.token, f)));
                continue;
            }
            if !self.sending.is_empty() {
                // A FIFO NIC: behind the message it is sending.
                let src = fl.src as usize;
                if self.sending[src] != IDLE {
                    self.queued[src].push_back(f);
                    continue;
                }
                self.sending[src] = f;
            }
            fl.active = true;
            self.active.push(f);
            changed = true;
        }
        while let Some((f, v)) = pop_due(&mut self.ends, t) {
            let fl = &mut self.flows[f as usize];
            if !fl.active || fl.version != v {
                continue;
            }
            self.events += 1;
            fl.active = false;
            fl.left = 0.0;
            self.live_links -= (fl.end - fl.start) as usize;
            let when = t.saturating_add(fl.latency);
            self.deliveries.push(Reverse((when, fl.token, f)));
            changed = true;
            if !self.sending.is_empty() {
                // The NIC goes on with the next message started behind this one.
                let src = fl.src as usize;
                self.sending[src] = IDLE;
                if let Some(g) = self.queued[src].pop_front() {
                    self.sending[src] = g;
                    self.flows[g as usize].active = true;
                    self.active.push(g);
                }
            }
        }
        if changed {
            let flows = &self.flows;
            self.active.retain(|&f| flows[f as usize].active);
            self.recompute();
        }
    }

    /// Delivers the messages due at `d` (changes at `d` come after them, as in the packet
    /// engine where a message delivered at `d` is known before `d`), and starts the replies
    /// of chained ones.
    fn deliver(&mut self, d: Time) {
        while let Some((token, f)) = pop_due(&mut self.deliveries, d) {
            self.events += 1;
            self.ready.push(Delivery { time: d, token });
            let fl = &self.flows[f as usize];
            if let Some((bytes, tok)) = fl.then {
                let back = Injection {
                    at: d,
                    src: fl.dst,
                    dst: fl.src,
                    bytes,
                    token: tok,
                };
                self.add(&back, None);
            }
            self.free.push(f);
        }
    }

    fn now_mut(&mut self) -> &mut Time {
        &mut self.now
    }

    fn last_mut(&mut self) -> &mut Time {
        &mut self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::RoutingSpec;
    use crate::topology::generate;

    fn engine_on<'a>(topo: &'a Topology, routes: &'a Routes) -> FlowEngine<'a> {
        let mut e = FlowEngine::new(topo, routes, NetParams::default()).unwrap();
        e.nic_order(NicOrder::Interleave);
        e
    }

    #[test]
    fn one_message_alone_takes_latency_plus_size_over_bandwidth() {
        let topo = generate("mlfm:h=4").unwrap();
        let routes = Routes::new(&topo, &RoutingSpec::parse("min").unwrap()).unwrap();
        let mut e = engine_on(&topo, &routes);
        // 0 and 4 are two router hops apart; links 100 Gb/s (12.5 B/ns), 50 ns latency.
        e.inject(&Injection {
            at: 1_000_000,
            src: 0,
            dst: 4,
            bytes: 1 << 20,
            token: 9,
        })
        .unwrap();
        let l = topo.endpoint_link(0);
        let lat = 4 * l.latency + 3 * NetParams::default().switch_latency;
        let transfer = ((1u64 << 20) as f64 / (l.bandwidth_gbps / 8000.0)).ceil() as Time;
        let (t, d) = e.advance_to_delivery(None).unwrap();
        assert_eq!(
            d,
            [Delivery {
                time: 1_000_000 + transfer + lat,
                token: 9
            }]
        );
        assert_eq!(t, 1_000_000 + transfer + lat);
    }

    #[test]
    fn two_flows_on_one_link_share_it_equally_then_the_survivor_speeds_up() {
        let topo = generate("mlfm:h=4").unwrap();
        let routes = Routes::new(&topo, &RoutingSpec::parse("min").unwrap()).unwrap();
        let mut e = engine_on(&topo, &routes);
        let bw = topo.endpoint_link(0).bandwidth_gbps / 8000.0;
        // Both from endpoint 0: they share its injection link.
        for (bytes, token) in [(1000u64, 1u64), (3000, 2)] {
            e.inject(&Injection {
                at: 0,
                src: 0,
                dst: 4,
                bytes,
                token,
            })
            .unwrap();
        }
        let lat = 4 * topo.endpoint_link(0).latency + 3 * NetParams::default().switch_latency;
        // Each at bw/2 until the first has sent 1000 B (2000 B of the link's time), then the
        // second alone sends its last 2000 B.
        let t1 = (1000.0 / (bw / 2.0)).ceil() as Time;
        let (_, d) = e.advance_to_delivery(None).unwrap();
        assert_eq!(
            d,
            [Delivery {
                time: t1 + lat,
                token: 1
            }]
        );
        let (_, d) = e.advance_to_delivery(None).unwrap();
        let t2 = t1 + (2000.0 / bw).ceil() as Time;
        assert_eq!(d.len(), 1);
        assert!((d[0].time as i64 - (t2 + lat) as i64).abs() <= 1, "{d:?}");
    }

    #[test]
    fn a_fifo_nic_sends_its_flows_one_after_another_in_start_order() {
        let topo = generate("mlfm:h=4").unwrap();
        let routes = Routes::new(&topo, &RoutingSpec::parse("min").unwrap()).unwrap();
        // Set explicitly, and a new engine's default (the packet level's too).
        assert_eq!(NicOrder::default(), NicOrder::Fifo);
        let mut explicit = engine_on(&topo, &routes);
        explicit.nic_order(NicOrder::Fifo);
        let fresh = FlowEngine::new(&topo, &routes, NetParams::default()).unwrap();
        for e in [explicit, fresh] {
            fifo_case(&topo, e);
        }
    }

    fn fifo_case(topo: &Topology, mut e: FlowEngine<'_>) {
        let bw = topo.endpoint_link(0).bandwidth_gbps / 8000.0;
        // From endpoint 0: 3000 B to 4 starting at 0, 1000 B to 5 starting at 0 (behind it),
        // and from endpoint 1 (another NIC, same router) 1000 B to 0 at 0, which goes at once.
        for (at, src, dst, bytes, token) in [(0, 0, 4, 3000u64, 1u64), (0, 0, 5, 1000, 2)] {
            e.inject(&Injection {
                at,
                src,
                dst,
                bytes,
                token,
            })
            .unwrap();
        }
        e.inject(&Injection {
            at: 0,
            src: 1,
            dst: 0,
            bytes: 1000,
            token: 3,
        })
        .unwrap();
        let (l, sw) = (
            topo.endpoint_link(0).latency,
            NetParams::default().switch_latency,
        );
        let lat = 4 * l + 3 * sw;
        let t = |b: f64| (b / bw).ceil() as Time;
        let mut got = Vec::new();
        for _ in 0..3 {
            let (_, d) = e.advance_to_delivery(None).unwrap();
            got.extend_from_slice(d);
        }
        assert_eq!(
            got,
            [
                Delivery {
                    time: t(1000.0) + 2 * l + sw,
                    token: 3
                },
                Delivery {
                    time: t(3000.0) + lat,
                    token: 1
                },
                Delivery {
                    time: t(3000.0) + t(1000.0) + lat,
                    token: 2
                },
            ]
        );
    }

    #[test]
    fn adaptive_routing_is_refused_with_the_accepted_values() {
        let topo = generate("mlfm:h=4").unwrap();
        let routes = Routes::new(&topo, &RoutingSpec::parse("ugal").unwrap()).unwrap();
        let err = FlowEngine::new(&topo, &routes, NetParams::default()).unwrap_err();
        assert!(
            err.to_string().contains("the flow level routes min or inr"),
            "{err}"
        );
    }
}
