//! The packet-level, event-driven engine, steppable.
//!
//! # Model
//! * **Packets, virtual cut-through.** A packet (256 B by default) is the unit of transfer and
//!   of buffer allocation: a packet moves to the next buffer only when that buffer has room for
//!   all of it (credits are counted in packets), and it may leave a buffer as soon as its head
//!   has arrived. With a packet of one unit there are no flits to simulate, which is what makes
//!   the engine fast; at the seed's sizes virtual cut-through at packet granularity and
//!   flit-level wormhole with packet-sized buffers behave alike.
//! * **Input-output buffered routers with VCs.** Every port of a router has an input buffer and
//!   an output buffer of `buffer_bytes` each (100 KB), split evenly over the routing's virtual
//!   channels (endpoint ports use one VC with the whole buffer). The head packet of an input VC
//!   takes `switch_latency` (100 ns) from its arrival to be routed and cross the switch, then
//!   moves into its output VC as soon as that has room; an input port moves one packet per
//!   serialisation time of its link, an output buffer accepts packets from every input at once
//!   (output queuing). The traversal is charged before the output buffer so that an output
//!   buffer holds exactly the packets waiting for their link: the occupancy UGAL reads. An
//!   output port sends one packet per serialisation time, choosing round-robin among VCs whose
//!   head holds a credit for the downstream input VC.
//! * **Credits.** Sending a packet takes a credit; the downstream input returns it when the
//!   packet's tail leaves that input buffer, and it arrives back one link latency later.
//! * **Endpoints.** A source endpoint injects into its router's endpoint port at up to its
//!   link rate, subject to credits; it generates packets (synthetic traffic: a Bernoulli
//!   process with probability `load` per serialisation slot, unbounded source queue), sends
//!   the messages of an exchange back to back, or sends the messages a caller injects
//!   ([`Network::external`]). Destinations sink packets at link rate.
//! * **Time.** Integer picoseconds. A packet sent at `t` on a link of latency L and
//!   serialisation σ has its head at the next input at `t + L` and its tail at `t + L + σ`;
//!   it is delivered when its tail reaches the destination endpoint.
//!
//! Zero-load latency of a path of h router-to-router hops with uniform links:
//! `(h + 2)·L + (h + 1)·S + σ` (h + 2 link traversals counting the two endpoint links, h + 1
//! switch traversals, one serialisation for the tail): 520.48 ns for h = 2 at the seed's
//! parameters ([`NetParams::zero_load_latency`]). A message of n packets sent back to back on
//! an idle path is delivered `(n − 1)·σ` later than its first packet.
//!
//! # Running and stepping
//! [`Network::run`] runs a [`Workload`] to its end and reports. [`Network::engine`] and
//! [`Network::external`] give an [`Engine`] that the caller advances to a time, repeatedly,
//! and asks for a report whenever it likes; an external engine also takes messages
//! ([`Engine::inject`]) and says when each one's last packet was delivered. The results do
//! not depend on how a run is stepped nor on the number of threads.
//!
//! # Rooms
//! * `engine.rs` — the steppable [`Engine`]: advancing one part or several, injections and
//!   deliveries;
//! * `part.rs` — one part of the network and its event loop (the three events);
//! * `ports.rs` — packets, input and output ports, VC queues, buffers, credits;
//! * `source.rs` — the traffic sources (synthetic, exchange, external) behind one trait;
//! * `parallel.rs` — the parallel runner: parts at their own pace within a lookahead, mailboxes, barriers;
//! * `partition.rs` — the parts: routers split by graph cuts, balanced by ports;
//! * `watchdog.rs` — deadlock detection;
//! * `report.rs` — the counters of a run and the [`Report`] built from them;
//! * `queue.rs` — the event queue, a timing wheel.

mod engine;
mod parallel;
mod part;
mod partition;
mod ports;
mod queue;
mod report;
mod source;
mod watchdog;

pub use engine::{Delivery, Engine, Injection};

use super::error::{param, refused, NetworkError};
use super::routing::{Routes, RoutingSpec, NONE};
use super::stats::Report;
use super::traffic::{ExchangePlan, Pattern};
use crate::spec::{Choice, Choices};
use crate::topology::{Link, LinkParams, SwitchModel, Topology};
use crate::units::{self, Time};
use source::{ExchangeSource, ExternalSource, SyntheticSource};
use std::sync::OnceLock;

/// No time: an event that is not scheduled, a source with nothing to send.
const NEVER: Time = u64::MAX;

/// Router and packet parameters (defaults: the seed's section 4.1).
#[derive(Clone, Debug, PartialEq)]
pub struct NetParams {
    /// Packet size in bytes (256).
    pub packet_bytes: u32,
    /// Buffer per port per direction in bytes (100 KB = 102 400 B).
    pub buffer_bytes: u64,
    /// Switch traversal latency (100 ns).
    pub switch_latency: Time,
    /// Seed of every random choice (routing ties and detours, traffic destinations and
    /// injection times); default 1. The schedule simulator's noise seed
    /// ([`crate::sim::SimOptions::seed`]) defaults to 0. They are kept apart on purpose: they
    /// draw different things, and one default for both would change every recorded network
    /// result (or every noisy schedule result), which results must not. `--seed` on the CLI
    /// and `seed=` in Python take None as "this simulator's default".
    pub seed: u64,
    /// Simulated time without a delivery, with packets in flight, after which the watchdog
    /// looks for a deadlock (50 µs).
    pub watchdog: Time,
    /// Threads that simulate the network, each a part of its routers (0: as many as the
    /// machine has cores for a network of 4096 ports or more, else 1). The results do not
    /// depend on it.
    pub threads: usize,
}

impl Default for NetParams {
    fn default() -> Self {
        NetParams {
            packet_bytes: 256,
            buffer_bytes: 100 * 1024,
            switch_latency: units::ns(100),
            seed: 1,
            watchdog: units::us(50),
            threads: 0,
        }
    }
}

impl NetParams {
    /// Serialisation of one packet at `bandwidth_gbps` (ps, rounded up).
    pub fn serialisation(&self, bandwidth_gbps: f64) -> Time {
        (self.packet_bytes as f64 * 8000.0 / bandwidth_gbps).ceil() as Time
    }

    /// Zero-load latency of a path of `hops` router-to-router hops on `topo` when every link
    /// has the parameters of endpoint 0's link: `(hops + 2)·L + (hops + 1)·S + σ` with
    /// virtual cut-through, `(hops + 2)·L + (hops + 1)·(S + σ) + σ` with the store-and-forward
    /// switches of `switch=ethernet` (whose frames, buffers and latency replace these
    /// parameters, [`NetParams::for_topology`]). Refused for a topology without endpoints and
    /// for packets of 0 bytes.
    pub fn zero_load_latency(&self, topo: &Topology, hops: u32) -> Result<Time, NetworkError> {
        if topo.num_endpoints() == 0 {
            return Err(param(
                "topology",
                topo.name(),
                "it has no endpoints, and the zero-load latency is that of endpoint 0's link",
            ));
        }
        if self.packet_bytes == 0 {
            return Err(param(
                "packet size",
                "0 B",
                "a packet needs at least 1 byte",
            ));
        }
        let (p, sw) = self.for_topology(topo)?;
        Ok(p.zero_load_on(sw, topo.endpoint_link(0), hops))
    }

    /// [`NetParams::zero_load_latency`] on links `l` with switching `sw`.
    fn zero_load_on(&self, sw: Switching, l: LinkParams, hops: u32) -> Time {
        let h = hops as Time;
        let ser = sw.serialisation(self.packet_bytes, l.bandwidth_gbps);
        let per_switch = self.switch_latency + if sw.store_forward { ser } else { 0 };
        (h + 2) * l.latency + (h + 1) * per_switch + ser
    }

    /// The parameters the engine runs `topo` with, and how its switches forward: these
    /// parameters under virtual cut-through (`switch=vct`, the default); under
    /// `switch=ethernet` the switch model's frames (packets of MTU − 40 bytes of message,
    /// MTU + 38 on the wire), buffers (its frames per port) and forwarding delay. Refused
    /// when an Ethernet topology is given a packet size, buffer or switch latency other than
    /// the defaults: its switch model sets them (topology keys `mtu`, `buffer`, `delay`).
    pub fn for_topology(&self, topo: &Topology) -> Result<(NetParams, Switching), NetworkError> {
        let SwitchModel::Ethernet(e) = topo.switch() else {
            return Ok((self.clone(), Switching::VCT));
        };
        let d = NetParams::default();
        let own = |name: &'static str, value: String, key: &str| {
            Err(param(
                name,
                value,
                format!(
                    "the switch model of {} sets it (topology key {key}); leave the \
                     simulator's default",
                    topo.name()
                ),
            ))
        };
        if self.packet_bytes != d.packet_bytes {
            return own("packet size", format!("{} B", self.packet_bytes), "mtu");
        }
        if self.buffer_bytes != d.buffer_bytes {
            return own("buffer", format!("{} B", self.buffer_bytes), "buffer");
        }
        if self.switch_latency != d.switch_latency {
            return own(
                "switch latency",
                units::format_time(self.switch_latency),
                "delay",
            );
        }
        let p = NetParams {
            packet_bytes: e.payload(),
            buffer_bytes: e.buffer_frames as u64 * e.payload() as u64,
            switch_latency: e.latency,
            ..self.clone()
        };
        let sw = Switching {
            store_forward: true,
            overhead: e.overhead(),
            pause_bytes: e.pause_bytes(),
            min_wire: e.min_wire_bytes(),
        };
        Ok((p, sw))
    }
}

/// How the engine's switches forward packets: what a topology's switch model
/// ([`SwitchModel`]) asks of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switching {
    /// A packet leaves a switch only once its tail has arrived (else virtual cut-through).
    pub store_forward: bool,
    /// Bytes a packet takes on the wire besides its payload (headers, framing, gap).
    pub overhead: u32,
    /// Byte times (at the link's rate) a freed buffer slot takes to reach the upstream
    /// besides the link latency: PAUSE's reaction (0 for credits).
    pub pause_bytes: u32,
    /// Wire bytes of the shortest frame: a message's last packet, when shorter than the
    /// others, takes the time of its payload and overhead, at least this (0: every packet
    /// takes a full packet's time).
    pub min_wire: u32,
}

impl Switching {
    /// Virtual cut-through with credits: the engine's own model.
    pub const VCT: Switching = Switching {
        store_forward: false,
        overhead: 0,
        pause_bytes: 0,
        min_wire: 0,
    };

    /// Serialisation of a packet of `payload` bytes at `bandwidth_gbps` (ps, rounded up).
    pub fn serialisation(&self, payload: u32, bandwidth_gbps: f64) -> Time {
        ((payload as u64 + self.overhead as u64) as f64 * 8000.0 / bandwidth_gbps).ceil() as Time
    }

    /// Serialisation of a packet carrying `payload` bytes on a link whose full packets of
    /// `packet_bytes` take `ser`: `ser` unless the model has short frames and the packet is
    /// shorter, then `ser · max(payload + overhead, min_wire) / (packet_bytes + overhead)`,
    /// rounded up.
    pub fn packet_serialisation(&self, ser: Time, payload: u64, packet_bytes: u32) -> Time {
        if self.min_wire == 0 {
            return ser;
        }
        let p = u32::try_from(payload).unwrap_or(u32::MAX);
        Switching::short(
            ser,
            p,
            self.overhead as u64,
            self.min_wire as u64,
            packet_bytes as u64 + self.overhead as u64,
        )
    }

    /// [`Switching::packet_serialisation`] with the wire bytes of a full packet `wire`.
    #[inline(always)]
    pub(super) fn short(ser: Time, payload: u32, overhead: u64, min_wire: u64, wire: u64) -> Time {
        let w = payload as u64 + overhead;
        if w >= wire {
            return ser;
        }
        (ser * w.max(min_wire)).div_ceil(wire)
    }
}

/// Start of the measurement window of synthetic traffic by default (the seed's 20 µs).
pub const DEFAULT_WARMUP: Time = units::us(20);
/// Simulated time of synthetic traffic by default (the seed's 200 µs).
pub const DEFAULT_DURATION: Time = units::us(200);
/// How many of the busiest links a report lists by default.
pub const DEFAULT_TOP_LINKS: usize = 10;

/// Synthetic traffic at an offered load.
#[derive(Clone, Debug, PartialEq)]
pub struct Synthetic {
    /// Destinations.
    pub pattern: Pattern,
    /// Offered load, a fraction of the injection bandwidth in (0, 1].
    pub load: f64,
    /// Start of the measurement window (20 µs).
    pub warmup: Time,
    /// End of generation and of the measurement window (200 µs).
    pub duration: Time,
    /// After `duration`, keep simulating until every generated packet is delivered.
    pub drain: bool,
}

impl Synthetic {
    /// The seed's windows: 20 µs warm-up, 200 µs in total, no drain.
    pub fn new(pattern: Pattern, load: f64) -> Synthetic {
        Synthetic {
            pattern,
            load,
            warmup: DEFAULT_WARMUP,
            duration: DEFAULT_DURATION,
            drain: false,
        }
    }
}

/// In which order an endpoint's NIC sends the packets of the messages it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum NicOrder {
    /// Whole messages one after the other in the order they were started, as LogGOPS's NIC
    /// (the default).
    #[default]
    Fifo,
    /// One packet of each message ready to go in turn (round robin): the NIC shares its link
    /// among the messages, as TCP does among a rank's connections and an InfiniBand HCA among
    /// its send queues (at flow level: max–min sharing of the injection link).
    Interleave,
}

/// The orders an endpoint's NIC sends in (`--nic`), the default first.
pub const NIC_ORDERS: Choices<NicOrder> = Choices::new(
    "nic",
    &[
        Choice::new(
            "fifo",
            NicOrder::Fifo,
            "a NIC sends whole messages in the order they were started",
        ),
        Choice::new(
            "interleave",
            NicOrder::Interleave,
            "a NIC shares its link among its messages, one packet of each in turn",
        ),
    ],
);

impl NicOrder {
    /// Its name (`fifo`, `interleave`).
    pub fn name(self) -> &'static str {
        NIC_ORDERS.name(self)
    }

    /// Parses a name of [`NIC_ORDERS`].
    pub fn parse(text: &str) -> Result<NicOrder, NetworkError> {
        NIC_ORDERS.parse(text).map_err(refused)
    }
}

/// What the endpoints send.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// Synthetic traffic.
    Synthetic(Synthetic),
    /// An exchange of fixed size.
    Exchange(ExchangePlan),
}

/// A topology with routing tables and router parameters, ready to run workloads.
#[derive(Clone, Debug)]
pub struct Network<'t> {
    topo: &'t Topology,
    routes: Routes,
    params: NetParams,
    switching: Switching,
    /// The parts, found once, on the first run that asks for them.
    parts: OnceLock<Parts>,
}

/// The parts of a network ([`Network::partition`]) and who borders whom.
#[derive(Clone, Debug)]
struct Parts {
    owner: Vec<u8>,
    lookahead: Time,
    /// Per part, the other parts a link joins it to, ascending.
    near: Vec<Vec<usize>>,
}

impl<'t> Network<'t> {
    /// Builds the routing tables of `spec` on `topo` and checks `params`; the topology's
    /// switch model may replace some of them ([`NetParams::for_topology`]).
    pub fn new(
        topo: &'t Topology,
        spec: &RoutingSpec,
        params: NetParams,
    ) -> Result<Network<'t>, NetworkError> {
        let (params, switching) = params.for_topology(topo)?;
        if params.packet_bytes == 0 {
            return Err(param(
                "packet size",
                "0 B",
                "a packet needs at least 1 byte",
            ));
        }
        let routes = Routes::new(topo, spec)?;
        let pkts = params.buffer_bytes / params.packet_bytes as u64;
        let v = routes.num_vcs() as u64;
        if pkts < v {
            return Err(param(
                "buffer",
                format!("{} B", params.buffer_bytes),
                format!(
                    "it holds {pkts} packets of {} B, fewer than the {v} virtual channels \
                     routing {} needs on {} (one packet per VC at least)",
                    params.packet_bytes,
                    spec.algorithm.name(),
                    topo.name()
                ),
            ));
        }
        if pkts > u32::MAX as u64 / 2 {
            return Err(param(
                "buffer",
                format!("{} B", params.buffer_bytes),
                "more than 2^31 packets per buffer",
            ));
        }
        if params.watchdog == 0 {
            return Err(param("watchdog", "0", "must be > 0"));
        }
        let ports = routes.num_ports() as u64;
        let nep = topo.num_endpoints() as u64;
        if ports.max(nep) >= ports::LOW24 as u64 || topo.num_routers() as u64 >= ports::LOW24 as u64
        {
            return Err(NetworkError::Unsupported {
                what: "the packet simulator".into(),
                topology: topo.name().into(),
                reason: format!(
                    "{ports} ports or {} routers exceed its limit of {}",
                    topo.num_routers(),
                    ports::LOW24
                ),
            });
        }
        // Every port's serialisation must be a positive whole number of picoseconds that
        // fits in 32 bits, and so must the latencies.
        let ser = |bw: f64| switching.serialisation(params.packet_bytes, bw) as f64;
        for l in topo.links() {
            if ser(l.bandwidth_gbps) > u32::MAX as f64 || l.latency > u32::MAX as u64 {
                return Err(param(
                    "link",
                    format!("{} Gb/s, {} ps", l.bandwidth_gbps, l.latency),
                    "a packet's serialisation and the latency must be below 4.29 ms",
                ));
            }
        }
        for e in 0..topo.num_endpoints() {
            let l = topo.endpoint_link(e);
            if ser(l.bandwidth_gbps) > u32::MAX as f64 || l.latency > u32::MAX as u64 {
                return Err(param(
                    "endpoint link",
                    format!("{} Gb/s, {} ps", l.bandwidth_gbps, l.latency),
                    "a packet's serialisation and the latency must be below 4.29 ms",
                ));
            }
        }
        Ok(Network {
            topo,
            routes,
            params,
            switching,
            parts: OnceLock::new(),
        })
    }

    /// The routing tables.
    pub fn routes(&self) -> &Routes {
        &self.routes
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        self.topo
    }

    /// The router parameters (those of the topology's switch model where it sets them).
    pub fn params(&self) -> &NetParams {
        &self.params
    }

    /// How the switches forward packets (the topology's switch model).
    pub fn switching(&self) -> Switching {
        self.switching
    }

    /// Serialisation of one packet at `bandwidth_gbps` (ps, rounded up), its wire overhead
    /// included.
    pub fn serialisation(&self, bandwidth_gbps: f64) -> Time {
        self.switching
            .serialisation(self.params.packet_bytes, bandwidth_gbps)
    }

    /// Zero-load latency of a path of `hops` router-to-router hops when every link has the
    /// parameters of endpoint 0's link: `(hops + 2)·L + (hops + 1)·S + σ`, or `(hops + 2)·L +
    /// (hops + 1)·(S + σ) + σ` with store-and-forward switches
    /// ([`NetParams::zero_load_latency`]).
    pub fn zero_load_latency(&self, hops: u32) -> Time {
        // A network has endpoints (the routing tables need them) and packets of 1 byte at
        // least.
        self.params
            .zero_load_on(self.switching, self.topo.endpoint_link(0), hops)
    }

    /// The parts the engine splits the routers into, one per thread (`owner[router]`), and
    /// the lookahead: the smallest reach of a link between two parts, its latency plus the
    /// smaller of the switch latency and its shortest serialisation (nothing a part does can
    /// affect another sooner). Parts have about as many ports each and as few links between
    /// them as the partitioner finds (`partition.rs`: recursive bisection refined by
    /// Fiduccia–Mattheyses passes; deterministic), found once per network: every engine of
    /// it (a sweep's points, a stepped run's advances) uses the same. One part when one thread
    /// is asked for (or chosen: networks below 4096 ports) or when the lookahead is 0.
    pub fn partition(&self) -> (Vec<u8>, Time) {
        let p = self.parts();
        (p.owner.clone(), p.lookahead)
    }

    /// Per part of [`Network::partition`], the other parts a link joins it to, ascending.
    fn near(&self) -> &[Vec<usize>] {
        &self.parts().near
    }

    /// The parts, found on the first call.
    fn parts(&self) -> &Parts {
        self.parts.get_or_init(|| {
            let (owner, lookahead) = self.find_parts();
            let n = num_parts(&owner);
            let r = &self.routes;
            let mut joined = vec![false; n * n];
            for port in 0..r.num_ports() {
                if let Some((a, b)) = r.port_ends(port) {
                    let (a, b) = (owner[a as usize] as usize, owner[b as usize] as usize);
                    joined[a * n + b] |= a != b;
                }
            }
            let near = (0..n)
                .map(|a| (0..n).filter(|&b| joined[a * n + b]).collect())
                .collect();
            Parts {
                owner,
                lookahead,
                near,
            }
        })
    }

    /// [`Network::partition`], computed.
    fn find_parts(&self) -> (Vec<u8>, Time) {
        let r = &self.routes;
        let routers = r.num_routers();
        let np = r.num_ports();
        let threads = crate::barrier::threads(self.params.threads, np >= 4096);
        let parts = threads.clamp(1, 255).min(routers.max(1));
        if parts == 1 {
            return (vec![0u8; routers], NEVER);
        }
        let owner = self.split(parts);
        let mut lookahead = NEVER;
        for p in 0..np {
            if let Some(l) = r.port_link(p) {
                let (a, b) = (r.port_router(p), r.port_router(r.port_peer[p] as usize));
                if owner[a as usize] != owner[b as usize] {
                    lookahead = lookahead.min(self.reach(&self.topo.links()[l as usize]));
                }
            }
        }
        if lookahead == 0 {
            return (vec![0u8; routers], NEVER);
        }
        (owner, lookahead)
    }

    /// The routers split into `parts` by [`partition::split`], weighed by their ports, on
    /// the topology's links.
    fn split(&self, parts: usize) -> Vec<u8> {
        let r = &self.routes;
        let weight: Vec<u64> = r
            .port_base
            .windows(2)
            .map(|w| (w[1] - w[0]) as u64)
            .collect();
        let (off, adj) = crate::csr::flatten((0..weight.len()).map(|x| self.topo.neighbors(x)));
        let g = partition::Graph {
            off: &off,
            adj: &adj,
            weight: &weight,
        };
        partition::split(&g, parts)
    }

    /// The soonest that an event at one end of link `l` can make an event happen at the other
    /// end: a packet sent at `t` may cross the next switch from `t + L + S` on, and a credit
    /// returned at `t` (when a packet's tail leaves the input, a serialisation after its
    /// head started) arrives at `t + σ + L` at the earliest, σ that of the shortest frame.
    fn reach(&self, l: &Link) -> Time {
        let ser = self.serialisation(l.bandwidth_gbps);
        let shortest = self
            .switching
            .packet_serialisation(ser, 0, self.params.packet_bytes);
        l.latency + self.params.switch_latency.min(shortest)
    }

    /// Runs `workload` to its end (synthetic traffic: its duration, or until every packet is
    /// delivered with `drain`; an exchange: until its last packet is delivered); `traffic`
    /// names it in the report.
    pub fn run(&self, workload: &Workload, traffic: &str) -> Result<Report, NetworkError> {
        let mut engine = self.engine(workload, traffic)?;
        engine.finish()?;
        Ok(engine.report())
    }

    /// An engine that runs `workload` when advanced (see [`Engine`]); `traffic` names it in
    /// the report.
    pub fn engine<'n>(
        &'n self,
        workload: &'n Workload,
        traffic: &str,
    ) -> Result<Engine<'n>, NetworkError> {
        match workload {
            Workload::Synthetic(s) => {
                self.check(s)?;
                let source = SyntheticSource::new(s, self.params.seed, self.topo.num_endpoints());
                Ok(Engine::new(self, source, traffic))
            }
            Workload::Exchange(x) => Ok(Engine::new(self, ExchangeSource::new(x), traffic)),
        }
    }

    /// An engine whose endpoints send the messages the caller injects ([`Engine::inject`])
    /// and nothing else; its report names the traffic `external`.
    pub fn external(&self) -> Engine<'_> {
        self.external_with(NicOrder::default())
    }

    /// [`Network::external`] whose endpoints order their messages' packets as `order` says.
    pub fn external_with(&self, order: NicOrder) -> Engine<'_> {
        Engine::new(self, ExternalSource::new(order), "external")
    }

    /// Checks synthetic traffic's load, windows and destinations.
    fn check(&self, s: &Synthetic) -> Result<(), NetworkError> {
        if !(s.load > 0.0 && s.load <= 1.0) {
            return Err(param(
                "load",
                s.load,
                "the offered load is a fraction of the injection bandwidth, in (0, 1]",
            ));
        }
        if s.duration == 0 || s.warmup >= s.duration {
            return Err(param(
                "warm-up",
                units::format_time(s.warmup),
                format!(
                    "the warm-up must be shorter than the simulated time ({})",
                    units::format_time(s.duration)
                ),
            ));
        }
        if let Pattern::Map(m) = &s.pattern {
            if m.len() != self.topo.num_endpoints()
                || m.iter()
                    .any(|&d| d != NONE && d as usize >= self.topo.num_endpoints())
            {
                return Err(param(
                    "traffic map",
                    format!("of {} entries", m.len()),
                    format!(
                        "it needs one destination per endpoint, each below {}",
                        self.topo.num_endpoints()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The number of parts of a partition `owner[router]`.
fn num_parts(owner: &[u8]) -> usize {
    owner.iter().copied().max().unwrap_or(0) as usize + 1
}

/// A run of 10 µs of uniform traffic (its pattern drawn with seed 3) on `spec`, routed by
/// `routing`, on `threads` threads after `warmup`, drained or not: its report, the wall time
/// zeroed, and the lookahead of the network's parts. The tests of the parts and of the
/// parallel runner share it.
#[cfg(test)]
fn uniform_run(
    spec: &str,
    routing: &str,
    load: f64,
    threads: usize,
    warmup: Time,
    drain: bool,
) -> (Report, Time) {
    use super::{NetParams, Synthetic, TrafficSpec, Workload};
    let topo = crate::topology::generate(spec).unwrap();
    let p = NetParams {
        threads,
        ..NetParams::default()
    };
    let n = Network::new(&topo, &RoutingSpec::parse(routing).unwrap(), p).unwrap();
    let pattern = TrafficSpec::Uniform.resolve(&topo, n.routes(), 3).unwrap();
    let mut s = Synthetic::new(pattern, load);
    s.duration = units::us(10);
    s.warmup = warmup;
    s.drain = drain;
    let mut r = n.run(&Workload::Synthetic(s), "uniform").unwrap();
    r.wall_seconds = 0.0;
    (r, n.partition().1)
}
