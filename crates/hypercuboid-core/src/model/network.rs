//! The network cost model: a schedule's messages cross a simulated network (packet level or
//! flow level) with routing and contention, and its hosts cost what LogGOPS says.
//!
//! # Host side (LogGOPS `o`, `O`, `g`, `S`, γ, δ of the host model)
//! - **Send** of `s` bytes at `t`, when the rank's CPU and NIC are free: `cpu = t + o +
//!   (s−1)·O`, `nic = t + g`. Its message enters the network at `t + o`.
//! - **Eager** (`s ≤ S`): the send completes at `t`; the message reaches the receiver when its
//!   last byte arrives there.
//! - **Rendezvous** (`s > S`): a control message (request to send) goes first; the send
//!   completes when the receiver has matched it, sent a control message back (clear to send,
//!   from the moment of the match) and the data, sent by the sender's NIC the moment that
//!   arrives, has fully arrived; the receive completes then too.
//! - **Arrival** at `t` (the data of an eager message, a rendezvous request): when the
//!   receiver's CPU and NIC are free, `cpu = t + o + (s−1)·O`, `nic = t + g`, and it matches a
//!   posted receive or waits, as in LogGOPS.
//! - **Local** work, reductions (`s·γ + δ`) and a rank's finish time: as in LogGOPS.
//! - **Ranks of one endpoint** (`ranks_per_endpoint > 1`) exchange messages through memory:
//!   such a message never enters the network and costs what the LogGOPS host model says,
//!   its `L` and `G` included (`t + o + L` to arrive, `(s−1)·G` more at the receiver, and
//!   the sender's and the receiver's NIC busy `g + (s−1)·G`), so a schedule on one endpoint
//!   runs exactly as on LogGOPS alone.
//!   Between endpoints the network supplies the latency and bandwidth, and `L` and `G` are
//!   not used.
//! - Ops are never dated before the current time (LogGOPSim dates an op on an idle second
//!   CPU in the past; a network cannot go back).
//!
//! # Wire side
//! The messages are injected at their sender's endpoint ([`Mapping`] places ranks on
//! endpoints) into the packet engine ([`crate::network::packet`]) or the flow engine
//! ([`crate::network::flow`]), driven in lock-step with the schedule: before each of its
//! events the schedule engine asks the network to advance to it, stopping at the first
//! message delivered on the way ([`CostModel::advance`]). Both engines are deterministic, so
//! the run is.

use super::{
    Attempt, CostModel, LocalRun, LogGopsModel, LogGopsState, Message, Notice, OpSite,
    SendCompletion, SendIssue,
};
use crate::network::error::{param, refused};
use crate::network::rng::SplitMix64;
use crate::network::{Delivery, Engine, FlowEngine, Injection, Network, NetworkError, NicOrder};
use crate::schedule::Rank;
use crate::spec::{Choice, Choices};
use crate::units::{per_byte, Time};

/// Which engine carries the messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Level {
    /// The packet engine: packets, buffers, credits, virtual channels, adaptive routing.
    #[default]
    Packet,
    /// The flow engine: max–min fair sharing of link bandwidth.
    Flow,
}

/// The engines a network simulation runs on (`--level`), the default first.
pub const LEVELS: Choices<Level> = Choices::new(
    "level",
    &[
        Choice::new(
            "packet",
            Level::Packet,
            "packets, buffers, credits, virtual channels, adaptive routing",
        ),
        Choice::new(
            "flow",
            Level::Flow,
            "max-min fair sharing of link bandwidth",
        ),
    ],
);

impl Level {
    /// Its name (`packet`, `flow`).
    pub fn name(self) -> &'static str {
        LEVELS.name(self)
    }

    /// Parses a name of [`LEVELS`].
    pub fn parse(text: &str) -> Result<Level, NetworkError> {
        LEVELS.parse(text).map_err(refused)
    }
}

/// Where each rank runs: rank → endpoint.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Mapping {
    /// Ranks fill endpoints in order: rank r on endpoint ⌊r / K⌋ (K ranks per endpoint).
    #[default]
    Linear,
    /// Ranks go round the endpoints the job uses (⌈N / K⌉ of them): rank r on endpoint
    /// r mod ⌈N / K⌉.
    RoundRobin,
    /// A random placement: the N ranks take N of the E·K slots of the machine uniformly at
    /// random (a seeded shuffle).
    Random {
        /// Seed of the shuffle.
        seed: u64,
    },
    /// Rank r on endpoint `v[r]`.
    Explicit(Vec<u32>),
}

/// The kinds of [`Mapping`] a user names, before their arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MappingForm {
    /// [`Mapping::Linear`].
    Linear,
    /// [`Mapping::RoundRobin`].
    RoundRobin,
    /// [`Mapping::Random`], `random[:seed=K]`.
    Random,
    /// [`Mapping::Explicit`] read from a file, `file:PATH`.
    File,
}

impl MappingForm {
    /// What follows the name where the form takes an argument.
    pub fn argument(self) -> &'static str {
        match self {
            MappingForm::Linear | MappingForm::RoundRobin => "",
            MappingForm::Random => "[:seed=K]",
            MappingForm::File => ":PATH",
        }
    }
}

/// The mappings (`--mapping`), the default first.
pub const MAPPINGS: Choices<MappingForm> = Choices::new(
    "mapping",
    &[
        Choice::new(
            "linear",
            MappingForm::Linear,
            "rank r on endpoint floor(r / K), K ranks per endpoint",
        ),
        Choice::aka(
            "round_robin",
            &["round-robin"],
            MappingForm::RoundRobin,
            "rank r on endpoint r mod ceil(N / K)",
        ),
        Choice::new(
            "random",
            MappingForm::Random,
            "random[:seed=K]: N of the E*K slots, a seeded shuffle (seed 1 unless given)",
        ),
        Choice::new(
            "file",
            MappingForm::File,
            "file:PATH: one endpoint per rank, a line each (# comments)",
        ),
    ],
);

impl Mapping {
    /// The accepted mapping forms with their arguments, for messages:
    /// `linear, round_robin, random[:seed=K], file:PATH`.
    pub fn accepted() -> String {
        MAPPINGS
            .entries
            .iter()
            .map(|e| format!("{}{}", e.name, e.value.argument()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Parses `linear`, `round_robin`, `random[:seed=K]` (names of [`MAPPINGS`]); `file:PATH`
    /// is read by the caller (see [`Mapping::from_lines`]).
    pub fn parse(text: &str) -> Result<Mapping, NetworkError> {
        let t = text.trim();
        let (name, rest) = match t.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (t, None),
        };
        match (MAPPINGS.find(name).map(|e| e.value), rest) {
            (Some(MappingForm::Linear), None) => Ok(Mapping::Linear),
            (Some(MappingForm::RoundRobin), None) => Ok(Mapping::RoundRobin),
            (Some(MappingForm::Random), None) => Ok(Mapping::Random { seed: 1 }),
            (Some(MappingForm::Random), Some(rest)) => match rest.strip_prefix("seed=") {
                Some(v) => v
                    .trim()
                    .parse::<u64>()
                    .map(|seed| Mapping::Random { seed })
                    .map_err(|_| {
                        param(
                            "mapping seed",
                            format!("'{v}'"),
                            "a non-negative integer (random:seed=7)",
                        )
                    }),
                None => Err(param(
                    "mapping",
                    format!("'{t}'"),
                    "random takes one key, seed (random:seed=7)",
                )),
            },
            _ => Err(param(
                "mapping",
                format!("'{t}'"),
                format!("accepted: {}", Mapping::accepted()),
            )),
        }
    }

    /// A mapping file's text: one endpoint index per line (blank lines and `#` comments
    /// skipped); `what` names the file in errors.
    pub fn from_lines(text: &str, what: &str) -> Result<Mapping, NetworkError> {
        let mut v = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let l = line.split('#').next().unwrap_or("").trim();
            if l.is_empty() {
                continue;
            }
            match l.parse::<u32>() {
                Ok(e) => v.push(e),
                Err(_) => {
                    return Err(param(
                        "mapping file",
                        format!("{what} line {}: '{l}'", i + 1),
                        "one endpoint index (a non-negative integer) per line",
                    ))
                }
            }
        }
        Ok(Mapping::Explicit(v))
    }

    /// The endpoint of every one of `nranks` ranks on a network of `endpoints` endpoints
    /// with `per` ranks per endpoint.
    pub fn place(&self, nranks: u32, endpoints: u32, per: u32) -> Result<Vec<u32>, NetworkError> {
        if per == 0 {
            return Err(param("ranks per endpoint", 0, "at least 1"));
        }
        let slots = endpoints as u64 * per as u64;
        if nranks as u64 > slots {
            return Err(param(
                "rank count",
                nranks,
                format!(
                    "the network has {endpoints} endpoints × {per} rank{} per endpoint = {slots} \
                     slots (raise --ranks-per-endpoint or take a larger topology)",
                    if per == 1 { "" } else { "s" }
                ),
            ));
        }
        Ok(match self {
            Mapping::Linear => (0..nranks).map(|r| r / per).collect(),
            Mapping::RoundRobin => {
                let used = nranks.div_ceil(per).max(1);
                (0..nranks).map(|r| r % used).collect()
            }
            Mapping::Random { seed } => {
                // A seeded Fisher–Yates shuffle of the slots; the first N are taken.
                let mut s: Vec<u64> = (0..slots).collect();
                let mut rng = SplitMix64::new(*seed);
                for i in 0..(nranks as usize).min(s.len()) {
                    let j = i + rng.below((s.len() - i) as u64) as usize;
                    s.swap(i, j);
                }
                s[..nranks as usize]
                    .iter()
                    .map(|&x| (x / per as u64) as u32)
                    .collect()
            }
            Mapping::Explicit(v) => {
                if v.len() != nranks as usize {
                    return Err(param(
                        "mapping file",
                        format!("of {} line{}", v.len(), if v.len() == 1 { "" } else { "s" }),
                        format!("it needs one endpoint per rank: {nranks} lines"),
                    ));
                }
                let mut used = vec![0u32; endpoints as usize];
                for (r, &e) in v.iter().enumerate() {
                    if e >= endpoints {
                        return Err(param(
                            "mapping file",
                            format!("line {}: endpoint {e}", r + 1),
                            format!("the network has endpoints 0 to {}", endpoints - 1),
                        ));
                    }
                    used[e as usize] += 1;
                    if used[e as usize] > per {
                        return Err(param(
                            "mapping file",
                            format!("line {}: endpoint {e}", r + 1),
                            format!(
                                "endpoint {e} appears more than {per} time{} (the ranks per \
                                 endpoint); duplicates are refused",
                                if per == 1 { "" } else { "s" }
                            ),
                        ));
                    }
                }
                v.clone()
            }
        })
    }
}

/// The network model: a [`Network`] (topology, routing, router parameters), the level that
/// carries the messages, the host model and where the ranks run. The host side and the
/// protocols are described at the top of `model/network.rs`.
#[derive(Debug)]
pub struct NetworkModel<'n> {
    net: &'n Network<'n>,
    level: Level,
    host: LogGopsModel,
    place: Vec<u32>,
    /// Bytes of a control message (rendezvous request and clear-to-send).
    control_bytes: u64,
    record: bool,
    sample: bool,
    nic: NicOrder,
}

impl<'n> NetworkModel<'n> {
    /// The model for `nranks` ranks placed by `mapping`, `per` ranks per endpoint.
    pub fn new(
        net: &'n Network<'n>,
        level: Level,
        host: LogGopsModel,
        mapping: &Mapping,
        per: u32,
        nranks: u32,
    ) -> Result<NetworkModel<'n>, NetworkError> {
        let place = mapping.place(nranks, net.topology().num_endpoints() as u32, per)?;
        if level == Level::Flow {
            // Refuses adaptive routing with its message.
            FlowEngine::new(net.topology(), net.routes(), net.params().clone())?;
        }
        Ok(NetworkModel {
            net,
            level,
            host,
            place,
            control_bytes: 0,
            record: false,
            sample: false,
            nic: NicOrder::default(),
        })
    }

    /// How each endpoint's NIC orders its messages: one after another
    /// ([`NicOrder::Fifo`]) or sharing its link ([`NicOrder::Interleave`]), at either level.
    pub fn nic_order(mut self, order: NicOrder) -> Self {
        self.nic = order;
        self
    }

    /// Keeps one record per network message ([`NetState::records`]).
    pub fn record_messages(mut self, on: bool) -> Self {
        self.record = on;
        self
    }

    /// Samples every link's traffic as the run goes ([`NetState::samples`]).
    pub fn sample_links(mut self, on: bool) -> Self {
        self.sample = on;
        self
    }

    /// The endpoint of each rank.
    pub fn placement(&self) -> &[u32] {
        &self.place
    }

    /// The level.
    pub fn level(&self) -> Level {
        self.level
    }

    /// The network.
    pub fn network(&self) -> &'n Network<'n> {
        self.net
    }

    /// The time a message of `bytes` from endpoint `a` to `b` takes on an idle network (its
    /// last byte's arrival after injection), on a minimal path whose links are like `a`'s:
    /// `(h+2)·L + (h+1)·S + n·σ` at packet level (n packets of serialisation σ; with
    /// store-and-forward switches and a last frame of serialisation σ', `(h+2)·L + (h+1)·(S +
    /// σ') + σ'` for one frame and `(h+2)·L + (h+1)·(S + σ) + (n−1)·σ + σ'` for more),
    /// `(h+2)·L + (h+1)·S + bytes / B` at flow level. Exact on topologies whose links are all
    /// alike.
    pub fn zero_load(&self, a: u32, b: u32, bytes: u64) -> Time {
        let topo = self.net.topology();
        let l = topo.endpoint_link(a as usize);
        let p = self.net.params();
        let h = self.net.routes().dist(
            topo.endpoint_router(a as usize),
            topo.endpoint_router(b as usize),
        ) as Time;
        let fixed = (h + 2) * l.latency + (h + 1) * p.switch_latency;
        match self.level {
            Level::Packet => {
                let n = bytes.div_ceil(p.packet_bytes as u64).max(1);
                let ser = self.net.serialisation(l.bandwidth_gbps);
                let sw = self.net.switching();
                if !sw.store_forward {
                    return fixed + n * ser;
                }
                // The last frame may be short; each switch holds it until the frame ahead
                // of it has left.
                let last = bytes - (n - 1) * p.packet_bytes as u64;
                let ser_last = sw.packet_serialisation(ser, last, p.packet_bytes);
                if n == 1 {
                    fixed + (h + 1) * ser_last + ser_last
                } else {
                    fixed + (h + 1) * ser + (n - 1) * ser + ser_last
                }
            }
            Level::Flow => fixed + (bytes as f64 / (l.bandwidth_gbps / 8000.0)).ceil() as Time,
        }
    }
}

/// The engine that carries the messages.
enum Wire<'n> {
    Packet(Box<Engine<'n>>),
    Flow(Box<FlowEngine<'n>>),
}

impl std::fmt::Debug for Wire<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Wire::Packet(_) => f.write_str("Wire::Packet"),
            Wire::Flow(_) => f.write_str("Wire::Flow"),
        }
    }
}

/// What a message in the network is to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Data of an eager message: its arrival is the message's.
    Eager,
    /// A rendezvous request: its arrival is the message's.
    Request,
    /// A clear-to-send (the data follows by itself).
    Clear,
    /// The data of a rendezvous message: the transfer is done.
    Data,
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    id: u64,
    kind: Kind,
    /// When it entered the network.
    at: Time,
    bytes: u64,
    src: u32,
    dst: u32,
    /// The receiving rank.
    to: Rank,
}

/// One message that crossed the network (its data: eager, or a rendezvous transfer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageRecord {
    /// Sending and receiving rank.
    pub src: Rank,
    pub dst: Rank,
    /// Payload in bytes.
    pub bytes: u64,
    /// When it entered the network (ps).
    pub injected: Time,
    /// When its last byte arrived (ps).
    pub delivered: Time,
    /// Its zero-load time ([`NetworkModel::zero_load`]).
    pub transfer: Time,
}

impl MessageRecord {
    /// Time beyond its zero-load time: waiting at the NIC behind other messages, in buffers,
    /// for a share of a link, on a longer path.
    pub fn queued(&self) -> Time {
        (self.delivered - self.injected).saturating_sub(self.transfer)
    }
}

/// Totals over the messages that crossed the network.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageTotals {
    /// Messages (data: eager, or rendezvous transfers) that crossed the network.
    pub network: u64,
    /// Control messages (rendezvous requests and clear-to-send).
    pub control: u64,
    /// Messages between ranks of one endpoint (through memory).
    pub local: u64,
    /// Payload bytes that crossed the network.
    pub bytes: u64,
    /// Sum over network messages of their zero-load time and of the time beyond it.
    pub transfer_sum: u128,
    pub queued_sum: u128,
    /// The message that waited longest.
    pub worst: Option<MessageRecord>,
}

/// Samples of every link's cumulative traffic: at packet level the packets each router port
/// has sent, at flow level the bytes each link has sent (router ports, then injection links).
/// At most [`Samples::MAX`] samples are kept: when more would be, every other one is dropped
/// and the interval doubles.
#[derive(Clone, Debug, PartialEq)]
pub struct Samples {
    /// Sampling interval (ps).
    pub every: Time,
    /// When each sample was taken.
    pub times: Vec<Time>,
    /// The counters at each sample.
    pub counts: Vec<Vec<f64>>,
    next: Time,
}

impl Samples {
    /// Most samples kept.
    pub const MAX: usize = 512;

    fn new() -> Samples {
        Samples {
            every: 100_000,
            times: Vec::new(),
            counts: Vec::new(),
            next: 0,
        }
    }

    fn take(&mut self, now: Time, counts: Vec<f64>) {
        self.times.push(now);
        self.counts.push(counts);
        self.next = now.saturating_add(self.every);
        if self.times.len() > Self::MAX {
            fn every_other<T>(v: &mut Vec<T>) {
                let mut i = 0;
                v.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
            }
            every_other(&mut self.times);
            every_other(&mut self.counts);
            self.every *= 2;
            self.next = self
                .times
                .last()
                .map_or(0, |&t| t.saturating_add(self.every));
        }
    }
}

/// The network model's state: host clocks, the wire engine and what crossed it.
#[derive(Debug)]
pub struct NetState<'n> {
    /// The hosts' clocks, LogGOPS's.
    host: LogGopsState,
    wire: Wire<'n>,
    flight: Vec<InFlight>,
    free: Vec<u32>,
    /// Packets each endpoint injected (packet level).
    inj_packets: Vec<u64>,
    /// Per network message, when recording.
    pub records: Vec<MessageRecord>,
    /// Totals.
    pub totals: MessageTotals,
    /// Link traffic over time, when sampling.
    pub samples: Option<Samples>,
    scratch: Vec<u64>,
}

impl<'n> NetState<'n> {
    /// The packet engine, at packet level.
    pub fn packet_engine(&self) -> Option<&Engine<'n>> {
        match &self.wire {
            Wire::Packet(e) => Some(e),
            Wire::Flow(_) => None,
        }
    }

    /// The flow engine, at flow level.
    pub fn flow_engine(&self) -> Option<&FlowEngine<'n>> {
        match &self.wire {
            Wire::Flow(e) => Some(e),
            Wire::Packet(_) => None,
        }
    }

    /// The time the wire engine has reached.
    pub fn wire_now(&self) -> Time {
        match &self.wire {
            Wire::Packet(e) => e.now(),
            Wire::Flow(e) => e.now(),
        }
    }

    /// Takes a sample of the links' traffic if one is due (or `force`).
    pub fn sample(&mut self, force: bool) {
        let now = self.wire_now();
        let Some(smp) = &mut self.samples else {
            return;
        };
        if now == 0 || (!force && now < smp.next) {
            return;
        }
        if smp.times.last() == Some(&now) {
            return;
        }
        let counts = match &self.wire {
            Wire::Packet(e) => {
                e.port_packets(&mut self.scratch);
                self.scratch.iter().map(|&x| x as f64).collect()
            }
            Wire::Flow(e) => e.sent_bytes().map(<[f64]>::to_vec).unwrap_or_default(),
        };
        smp.take(now, counts);
    }

    /// Packets each endpoint injected (packet level; empty at flow level).
    pub fn injected_packets(&self) -> &[u64] {
        &self.inj_packets
    }

    fn slot(&mut self, f: InFlight) -> u64 {
        match self.free.pop() {
            Some(s) => {
                self.flight[s as usize] = f;
                s as u64
            }
            None => {
                self.flight.push(f);
                (self.flight.len() - 1) as u64
            }
        }
    }
}

impl NetworkModel<'_> {
    fn per_extra_byte(bytes: u64, rate: f64) -> Time {
        per_byte(bytes.saturating_sub(1), rate)
    }

    fn packets(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.net.params().packet_bytes as u64).max(1)
    }

    fn inject(&self, st: &mut NetState<'_>, m: &Injection) -> Result<(), NetworkError> {
        if let Some(n) = st.inj_packets.get_mut(m.src as usize) {
            *n += self.packets(m.bytes);
        }
        match &mut st.wire {
            Wire::Packet(e) => e.inject(m),
            Wire::Flow(e) => e.inject(m),
        }
    }

    fn delivered(&self, st: &mut NetState<'_>, d: Delivery, out: &mut Vec<Notice>) {
        let f = st.flight[d.token as usize];
        st.free.push(d.token as u32);
        match f.kind {
            Kind::Eager | Kind::Data => {
                let rec = MessageRecord {
                    src: Message::send_of(f.id).0,
                    dst: f.to,
                    bytes: f.bytes,
                    injected: f.at,
                    delivered: d.time,
                    transfer: self.zero_load(f.src, f.dst, f.bytes),
                };
                let t = &mut st.totals;
                t.network += 1;
                t.bytes += f.bytes;
                let q = rec.queued();
                t.transfer_sum += (d.time - f.at - q) as u128;
                t.queued_sum += q as u128;
                if t.worst.is_none_or(|w| q > w.queued()) {
                    t.worst = Some(rec);
                }
                if self.record {
                    st.records.push(rec);
                }
                out.push(if f.kind == Kind::Eager {
                    Notice::Arrival {
                        time: d.time,
                        id: f.id,
                    }
                } else {
                    Notice::RendezvousDone {
                        time: d.time,
                        id: f.id,
                    }
                });
            }
            Kind::Request => {
                st.totals.control += 1;
                out.push(Notice::Arrival {
                    time: d.time,
                    id: f.id,
                });
            }
            Kind::Clear => st.totals.control += 1,
        }
    }
}

impl<'n> CostModel for NetworkModel<'n> {
    type State = NetState<'n>;

    const ANNOUNCES: bool = true;

    fn new_state(&self, nranks: u32, ncpus: u16, nnics: u16) -> NetState<'n> {
        let wire = match self.level {
            Level::Packet => Wire::Packet(Box::new(self.net.external_with(self.nic))),
            Level::Flow => {
                let mut e = FlowEngine::new(
                    self.net.topology(),
                    self.net.routes(),
                    self.net.params().clone(),
                )
                .expect("the routing was checked when the model was made");
                e.nic_order(self.nic);
                if self.sample {
                    e.count_sent();
                }
                Wire::Flow(Box::new(e))
            }
        };
        NetState {
            host: self.host.new_state(nranks, ncpus, nnics),
            wire,
            flight: Vec::new(),
            free: Vec::new(),
            inj_packets: match self.level {
                Level::Packet => vec![0; self.net.topology().num_endpoints()],
                Level::Flow => Vec::new(),
            },
            records: Vec::new(),
            totals: MessageTotals::default(),
            samples: self.sample.then(Samples::new),
            scratch: Vec::new(),
        }
    }

    #[inline]
    fn ready_time(&self, st: &NetState<'n>, now: Time, op: OpSite) -> Time {
        // LogGOPS's, never in the past.
        self.host.ready_time(&st.host, now, op).max(now)
    }

    fn send(&self, st: &mut NetState<'n>, t: Time, m: &Message) -> Attempt<SendIssue> {
        let h = &self.host;
        let cpu_end = match h.charge_send(&mut st.host, t, m) {
            Attempt::Go(end) => end,
            Attempt::Retry(busy) => return Attempt::Retry(busy),
        };
        let n = st.host.ns(m.src, m.nic);
        let eager = m.bytes <= h.eager_limit;
        let completion = if eager {
            SendCompletion::At(t)
        } else {
            SendCompletion::OnMatch
        };
        let (a, b) = (self.place[m.src as usize], self.place[m.dst as usize]);
        if a == b {
            // Through memory: LogGOPS's L, and its G at the sender as in LogGOPS (the rank's
            // next send waits (s−1)·G longer); off the node the wire serialises the bytes.
            st.host.clk[n] =
                st.host.clk[n].saturating_add(Self::per_extra_byte(m.bytes, h.gap_per_byte));
            st.totals.local += 1;
            return Attempt::Go(SendIssue {
                arrival: Some(t.saturating_add(h.overhead).saturating_add(h.latency)),
                completion,
                busy_until: cpu_end,
            });
        }
        let at = t.saturating_add(h.overhead);
        let (kind, bytes) = if eager {
            (Kind::Eager, m.bytes)
        } else {
            (Kind::Request, self.control_bytes)
        };
        let token = st.slot(InFlight {
            id: m.id,
            kind,
            at,
            bytes,
            src: a,
            dst: b,
            to: m.dst,
        });
        let inj = Injection {
            at,
            src: a,
            dst: b,
            bytes,
            token,
        };
        self.inject(st, &inj)
            .expect("a message between two endpoints of the network, not before its time");
        Attempt::Go(SendIssue {
            arrival: None,
            completion,
            busy_until: cpu_end,
        })
    }

    fn deliver(&self, st: &mut NetState<'n>, t: Time, m: &Message) -> Attempt<Time> {
        let h = &self.host;
        let by_o = Self::per_extra_byte(m.bytes, h.overhead_per_byte);
        let local = self.place[m.src as usize] == self.place[m.dst as usize];
        let extra = if local {
            by_o.max(Self::per_extra_byte(m.bytes, h.gap_per_byte))
        } else {
            by_o
        };
        // Through memory the receiving NIC is busy g + (s−1)·G, as in LogGOPS.
        let nic_extra = if local {
            Self::per_extra_byte(m.bytes, h.gap_per_byte)
        } else {
            0
        };
        h.charge_arrival(&mut st.host, t, m, extra, nic_extra)
    }

    fn rendezvous_matched(
        &self,
        st: &mut NetState<'n>,
        t: Time,
        m: &Message,
        recv_site: Option<OpSite>,
    ) -> bool {
        let (a, b) = (self.place[m.src as usize], self.place[m.dst as usize]);
        if a == b {
            // Through memory: as LogGOPS (the sender's clocks move up to the match).
            return self.host.rendezvous_matched(&mut st.host, t, m, recv_site);
        }
        // Clear-to-send from the receiver now, the data back the moment it arrives.
        let clear = st.slot(InFlight {
            id: m.id,
            kind: Kind::Clear,
            at: t,
            bytes: self.control_bytes,
            src: b,
            dst: a,
            to: m.src,
        });
        let data = st.slot(InFlight {
            id: m.id,
            kind: Kind::Data,
            at: t,
            bytes: m.bytes,
            src: a,
            dst: b,
            to: m.dst,
        });
        let first = Injection {
            at: t,
            src: b,
            dst: a,
            bytes: self.control_bytes,
            token: clear,
        };
        if !st.inj_packets.is_empty() {
            st.inj_packets[b as usize] += self.packets(self.control_bytes);
            st.inj_packets[a as usize] += self.packets(m.bytes);
        }
        let r = match &mut st.wire {
            Wire::Packet(e) => e.inject_chained(&first, m.bytes, data),
            Wire::Flow(e) => e.inject_chained(&first, m.bytes, data),
        };
        r.expect("a message between two endpoints of the network, not before its time");
        false
    }

    fn local(&self, st: &mut NetState<'n>, t: Time, site: OpSite, cost: Time) -> Attempt<LocalRun> {
        let c = st.host.c(site.rank, site.cpu);
        LocalRun::on_cpu(&mut st.host.clk[c], t, cost, true)
    }

    fn reduce_cost(&self, bytes: u64) -> Time {
        self.host.reduce_cost(bytes)
    }

    fn copy_cost(&self, bytes: u64) -> Time {
        self.host.copy_cost(bytes)
    }

    fn rank_finish(&self, st: &NetState<'n>, rank: Rank, last_done: Time) -> Time {
        super::loggops::finish_of(&st.host, rank, last_done)
    }

    fn advance(
        &self,
        st: &mut NetState<'n>,
        until: Option<Time>,
        out: &mut Vec<Notice>,
    ) -> Result<(), NetworkError> {
        st.sample(false);
        // Until a delivery the schedule hears of (control messages only move the protocol
        // on), or `until`.
        let mut got: Vec<Delivery> = Vec::new();
        loop {
            got.clear();
            match &mut st.wire {
                Wire::Packet(e) => got.extend_from_slice(e.advance_to_delivery(until)?.1),
                Wire::Flow(e) => got.extend_from_slice(e.advance_to_delivery(until)?.1),
            }
            if got.is_empty() {
                return Ok(());
            }
            for &d in &got {
                self.delivered(st, d, out);
            }
            if !out.is_empty() {
                return Ok(());
            }
        }
    }
}
