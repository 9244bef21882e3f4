//! The packet-level, event-driven engine.
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
//!   process with probability `load` per serialisation slot, unbounded source queue) or sends
//!   the messages of an exchange back to back. Destinations sink packets at link rate.
//! * **Time.** Integer picoseconds. A packet sent at `t` on a link of latency L and
//!   serialisation σ has its head at the next input at `t + L` and its tail at `t + L + σ`;
//!   it is delivered when its tail reaches the destination endpoint.
//!
//! Zero-load latency of a path of h router-to-router hops with uniform links:
//! `(h + 2)·L + (h + 1)·S + σ` (h + 2 link traversals counting the two endpoint links, h + 1
//! switch traversals, one serialisation for the tail): 520.48 ns for h = 2 at the seed's
//! parameters.
//!
//! # Events
//! Three idempotent "try" events, each naming a port or endpoint: an output port tries to send,
//! an input port tries to move its head packets across the switch, an endpoint tries to inject.
//! Each is scheduled only when something can change (a packet may cross the switch, a
//! link frees, a credit returns to a port that waits for one), at most once per port and time.
//! An input VC whose head finds its output VC full registers as a waiter and is woken when a
//! slot frees. Credit returns are kept as per-VC queues of arrival times, consulted lazily.
//!
//! Events at one time are handled in the order of their codes (kind, then port), whenever
//! they were queued, and every random routing choice at router r is drawn from r's own stream.
//!
//! # Parallel runs
//! With `threads` > 1 the routers are split into parts, runs of consecutive routers with about
//! as many ports each; a thread simulates each part (its ports, its endpoints, its packets).
//! A part affects another only through a link between them: a packet sent on it, which can
//! be handled no sooner than one link latency later, and a credit returned on it, which
//! arrives one latency later too. The threads therefore advance in windows of the smallest
//! latency of a link between parts, each window starting at the earliest pending event of
//! all parts; what a window sends to another part is delivered to it before the next window
//! starts. A part handles its own events in the same order as a single thread does (the
//! order above depends only on what is queued), so the results — every packet's path and
//! time — do not depend on the number of threads; `events` alone may differ. The watchdog
//! looks at window boundaries.
//!
//! # Deadlock watchdog
//! If no packet is delivered for `watchdog` of simulated time while packets are in flight, or
//! the event queue runs dry with packets in flight, the engine looks for a cycle of input VCs
//! each of which is blocked on a full output VC that holds no credit for the next input VC of
//! the cycle, itself full. Such a cycle is a deadlock: the run stops with
//! [`NetworkError::Deadlock`] naming its channels.

use super::error::{param, NetworkError};
use super::queue::Wheel;
use super::rng::SplitMix64;
use super::routing::{Channel, Decider, RouteState, Routes, RoutingSpec, VcScheme, NONE};
use super::stats::{Histogram, Report};
use super::traffic::{ExchangePlan, Pattern};
use crate::topology::Topology;
use crate::units::{self, Time};
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::{Condvar, Mutex};

/// Router and packet parameters (defaults: the seed's section 4.1).
#[derive(Clone, Debug, PartialEq)]
pub struct NetParams {
    /// Packet size in bytes (256).
    pub packet_bytes: u32,
    /// Buffer per port per direction in bytes (100 KB = 102 400 B).
    pub buffer_bytes: u64,
    /// Switch traversal latency (100 ns).
    pub switch_latency: Time,
    /// Seed of every random choice.
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
            warmup: units::us(20),
            duration: units::us(200),
            drain: false,
        }
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
}

const NEVER: Time = u64::MAX;
const KIND_SHIFT: u32 = 30;
const ID_MASK: u32 = (1 << KIND_SHIFT) - 1;
const K_OUT: u32 = 0;
const K_IN: u32 = 1;
const K_NIC: u32 = 2;

const F_PASSED: u8 = 1;
const F_INDIRECT: u8 = 2;

impl<'t> Network<'t> {
    /// Builds the routing tables of `spec` on `topo` and checks `params`.
    pub fn new(
        topo: &'t Topology,
        spec: &RoutingSpec,
        params: NetParams,
    ) -> Result<Network<'t>, NetworkError> {
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
        if ports.max(nep) >= LOW24 as u64 || topo.num_routers() as u64 >= LOW24 as u64 {
            return Err(NetworkError::Unsupported {
                what: "the packet simulator".into(),
                topology: topo.name().into(),
                reason: format!(
                    "{ports} ports or {} routers exceed its limit of {LOW24}",
                    topo.num_routers()
                ),
            });
        }
        // Every port's serialisation must be a positive whole number of picoseconds that
        // fits in 32 bits, and so must the latencies.
        let ser = |bw: f64| (params.packet_bytes as f64 * 8000.0 / bw).ceil();
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

    /// The router parameters.
    pub fn params(&self) -> &NetParams {
        &self.params
    }

    /// Serialisation of one packet at `bandwidth_gbps` (ps, rounded up).
    pub fn serialisation(&self, bandwidth_gbps: f64) -> Time {
        (self.params.packet_bytes as f64 * 8000.0 / bandwidth_gbps).ceil() as Time
    }

    /// Zero-load latency of a path of `hops` router-to-router hops when every link has the
    /// parameters of endpoint 0's link: `(hops + 2)·L + (hops + 1)·S + σ`.
    pub fn zero_load_latency(&self, hops: u32) -> Time {
        let l = self.topo.endpoint_link(0);
        let h = hops as Time;
        (h + 2) * l.latency
            + (h + 1) * self.params.switch_latency
            + self.serialisation(l.bandwidth_gbps)
    }

    /// The parts the engine splits the routers into, one per thread (`owner[router]`), and
    /// the smallest latency of a link between two parts. Parts are runs of consecutive
    /// routers with about as many ports each. One part when one thread is asked for (or
    /// chosen: networks below 4096 ports) or when a link between parts has no latency.
    pub fn partition(&self) -> (Vec<u8>, Time) {
        let r = &self.routes;
        let routers = r.num_routers();
        let np = r.num_ports();
        let threads = match self.params.threads {
            0 if np >= 4096 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            0 => 1,
            t => t,
        };
        let parts = threads.clamp(1, 255).min(routers.max(1));
        let mut owner = vec![0u8; routers];
        if parts == 1 {
            return (owner, NEVER);
        }
        let mut before = 0usize;
        for (x, o) in owner.iter_mut().enumerate() {
            *o = (before * parts / np) as u8;
            before += r.port_base[x + 1] as usize - r.port_base[x] as usize;
        }
        let mut lookahead = NEVER;
        for p in 0..np {
            if let Some(l) = r.port_link(p) {
                let (a, b) = (r.port_router(p), r.port_router(r.port_peer[p] as usize));
                if owner[a as usize] != owner[b as usize] {
                    lookahead = lookahead.min(self.topo.links()[l as usize].latency);
                }
            }
        }
        if lookahead == 0 {
            return (vec![0u8; routers], NEVER);
        }
        (owner, lookahead)
    }

    /// Runs `workload`; `traffic` names it in the report.
    pub fn run(&self, workload: &Workload, traffic: &str) -> Result<Report, NetworkError> {
        if let Workload::Synthetic(s) = workload {
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
        }
        // The VC count is a compile-time constant of the engine, rounded up, so that a port's
        // state and its VC queues share cache lines.
        match self.routes.num_vcs() {
            1 => simulate::<1>(self, workload, traffic),
            2 => simulate::<2>(self, workload, traffic),
            3 | 4 => simulate::<4>(self, workload, traffic),
            5..=8 => simulate::<8>(self, workload, traffic),
            9..=16 => simulate::<16>(self, workload, traffic),
            _ => simulate::<32>(self, workload, traffic),
        }
    }
}

fn simulate<const V: usize>(
    net: &Network<'_>,
    workload: &Workload,
    traffic: &str,
) -> Result<Report, NetworkError> {
    let start = std::time::Instant::now();
    let (owner, lookahead) = net.partition();
    let parts = num_parts(&owner);
    if parts == 1 {
        let mut sim = Sim::<V>::new(net, workload, 0, &owner);
        sim.run()?;
        return Ok(sim.report(traffic, start.elapsed().as_secs_f64(), 1));
    }
    let mut sims: Vec<Sim<'_, '_, V>> = (0..parts)
        .map(|p| Sim::new(net, workload, p as u8, &owner))
        .collect();
    run_parts(&mut sims, lookahead)?;
    let mut rest = sims.into_iter();
    let mut sim = rest.next().expect("one part at least");
    for o in rest {
        sim.absorb(o);
    }
    Ok(sim.report(traffic, start.elapsed().as_secs_f64(), parts))
}

/// The number of parts of a partition `owner[router]`.
fn num_parts(owner: &[u8]) -> usize {
    owner.iter().copied().max().unwrap_or(0) as usize + 1
}

/// Asks the CPU to bring `r`'s cache line closer (a hint: no effect on results).
#[inline(always)]
fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults and has no architectural effect; the
    // pointer comes from a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            r as *const T as *const i8,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// Prefetches the first two cache lines of a port block (its state and first VCs).
#[inline(always)]
fn prefetch_block<T>(r: &T) {
    prefetch(r);
    if std::mem::size_of::<T>() > 64 {
        // The block is 64-byte aligned: its second line.
        let second = (r as *const T as *const u8).wrapping_add(64);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `prefetch`; the address lies within `*r`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                second as *const i8,
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = second;
    }
}

/// A packet: 32 bytes, two to a cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Packet {
    gen: Time,
    /// In a queue, the time of the packet behind it (valid when `next` is not `NONE`): when
    /// that packet's head may cross the switch (at an input) or be sent (at an output).
    /// Keeping it here rather than in the packet itself lets a queue learn its new head's
    /// time from the packet it pops, without loading the next one. In a message to another
    /// part: the packet's own time.
    t: Time,
    dst: u32,
    /// Next packet in the same queue.
    next: u32,
    /// Intermediate router (low 24 bits, `INTER_NONE` for none) and hops taken (high 8).
    inter_hops: u32,
    /// Output port chosen at the current router (low 24 bits, `OUT_NONE` before routing),
    /// its VC (bits 24..29) and flags (bits 29..32).
    out_vc: u32,
}

const LOW24: u32 = (1 << 24) - 1;
const INTER_NONE: u32 = LOW24;
const OUT_NONE: u32 = LOW24;

impl Packet {
    #[inline]
    fn inter(&self) -> u32 {
        self.inter_hops & LOW24
    }
    #[inline]
    fn hops(&self) -> u8 {
        (self.inter_hops >> 24) as u8
    }
    #[inline]
    fn add_hop(&mut self) {
        if self.inter_hops >> 24 < 255 {
            self.inter_hops += 1 << 24;
        }
    }
    #[inline]
    fn set_inter(&mut self, x: u32) {
        self.inter_hops = (self.inter_hops & !LOW24) | x;
    }
    #[inline]
    fn out(&self) -> u32 {
        self.out_vc & LOW24
    }
    #[inline]
    fn vc(&self) -> usize {
        ((self.out_vc >> 24) & 31) as usize
    }
    #[inline]
    fn flags(&self) -> u8 {
        (self.out_vc >> 29) as u8
    }
    #[inline]
    fn set_out(&mut self, out: u32, vc: u8) {
        self.out_vc = (self.out_vc & (7 << 29)) | out | ((vc as u32) << 24);
    }
    #[inline]
    fn clear_out(&mut self) {
        self.out_vc = (self.out_vc & (7 << 29)) | OUT_NONE;
    }
    #[inline]
    fn set_flag(&mut self, f: u8) {
        self.out_vc |= (f as u32) << 29;
    }
}

impl RouteState for Packet {
    #[inline]
    fn dst(&self) -> u32 {
        self.dst
    }
    #[inline]
    fn intermediate(&self) -> Option<u32> {
        let x = self.inter();
        (x != INTER_NONE).then_some(x)
    }
    #[inline]
    fn set_intermediate(&mut self, x: u32) {
        self.set_inter(x);
    }
    #[inline]
    fn hops(&self) -> u8 {
        Packet::hops(self)
    }
    #[inline]
    fn passed(&self) -> bool {
        self.flags() & F_PASSED != 0
    }
    #[inline]
    fn set_passed(&mut self) {
        self.set_flag(F_PASSED);
    }
    #[inline]
    fn set_indirect(&mut self) {
        self.set_flag(F_INDIRECT);
    }
}

/// An input VC: a FIFO of packets linked through `Packet::next`. 20 bytes (packed to 4-byte
/// alignment), so that a port with 4 VCs fits in two cache lines.
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
struct InQ {
    /// When the head packet may cross the switch.
    head_t: Time,
    head: u32,
    tail: u32,
    len: u32,
}

/// An output VC and the credits it holds for the downstream input VC.
#[derive(Clone, Copy)]
struct OutQ {
    /// When the head packet may be sent.
    head_t: Time,
    head: u32,
    tail: u32,
    len: u32,
    credits: u32,
}

/// The input side of a port and its VCs, together: what an input event touches.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct InPort<const V: usize> {
    busy: Time,
    sched: Time,
    /// Network port: the upstream port; endpoint port: the endpoint.
    peer: u32,
    router: u32,
    ser: u32,
    lat: u32,
    /// Credit returns pending from this input: ring in `cret[port * k ..]`.
    cret_head: u16,
    cret_len: u16,
    rr: u8,
    ep: bool,
    /// The upstream output is simulated by another part (credits go there as messages).
    up_remote: bool,
    /// That part.
    up_part: u8,
    /// Bit `vc`: the upstream output (or endpoint) waits for a credit of this VC.
    up_wait: u32,
    /// Bit `vc`: the head of this VC waits for room in its output VC (registered as a
    /// waiter there).
    blocked: u32,
    q: [InQ; V],
}

const _: () = assert!(std::mem::size_of::<InPort<4>>() == 128);
const _: () = assert!(std::mem::size_of::<OutPort<4>>() == 128);
const _: () = assert!(std::mem::size_of::<InPort<2>>() == 128);

/// The output side of a port and its VCs, together: what an output event touches.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct OutPort<const V: usize> {
    busy: Time,
    sched: Time,
    /// Network port: the downstream port; endpoint port: the endpoint.
    peer: u32,
    ser: u32,
    lat: u32,
    rr: u8,
    ep: bool,
    /// The downstream input is simulated by another part (packets go there as messages).
    remote: bool,
    /// That part.
    peer_part: u8,
    q: [OutQ; V],
}

#[derive(Clone)]
struct Nic {
    busy: Time,
    sched: Time,
    /// Synthetic: generation time of the next packet (NEVER: none). Exchange: 0 while
    /// packets remain.
    next: Time,
    /// Slot index of `next` (synthetic).
    slot: u64,
    sent: u64,
    total: u64,
    credits: u32,
    fixed: u32,
    gap_rng: SplitMix64,
    dst_rng: SplitMix64,
}

struct Sim<'n, 't, const V: usize> {
    net: &'n Network<'t>,
    r: &'n Routes,
    /// VCs in use (≤ V).
    v: usize,
    scheme: VcScheme,
    decide: Decider,
    switch: Time,
    /// Buffer per endpoint port (packets) and per VC of a network port.
    cap_ep: u32,
    cap_vc: u32,
    inp: Vec<InPort<V>>,
    outp: Vec<OutPort<V>>,
    /// Packets in the output buffer of every port (all VCs): what UGAL and lowest-cost
    /// choices read, dense so that comparing candidates touches few cache lines.
    occ: Vec<u32>,
    /// Inputs `(port · V + vc)` waiting for room in output VC `port · V + vc`.
    waiters: Vec<VecDeque<u32>>,
    /// Credit returns `(time << 5) | vc`, `k` slots per input port.
    cret: Vec<u64>,
    k: usize,
    ep_router: Vec<u32>,
    nics: Vec<Nic>,
    pk: Vec<Packet>,
    free: Vec<u32>,
    wheel: Wheel,
    /// Random choices of routing, one stream per router (so that they do not depend on the
    /// order in which routers are simulated).
    rngs: Vec<SplitMix64>,
    now: Time,
    /// This part of the network (routers `owner[r] == part`) and the messages it sends the
    /// others: packets `(input port << 5 | VC, packet)` and credit returns `(input port << 5
    /// | VC, arrival time)`, by destination part.
    part: u8,
    /// The part of every router.
    owner: Vec<u8>,
    out_pkts: Vec<Vec<(u32, Packet)>>,
    out_creds: Vec<Vec<(u32, Time)>>,
    /// Time of the last event processed (kept by parallel runs, whose `now` moves to window
    /// ends).
    last_t: Time,
    // workload
    synthetic: Option<&'n Synthetic>,
    exchange: Option<&'n ExchangePlan>,
    load: f64,
    ln_q: f64,
    stop: Time,
    w0: Time,
    w1: Time,
    // statistics
    events: u64,
    injected: u64,
    delivered_total: u64,
    /// Injected minus delivered by this part (negative in a part that delivers more
    /// packets than it injects).
    in_flight: i64,
    last_delivery: Time,
    delivered: u64,
    generated: u64,
    indirect: u64,
    latency: Histogram,
    hops: Vec<u64>,
    port_packets: Vec<u64>,
    completion: Time,
    /// Depth of inline event handling (an output tried from an input, an input woken by an
    /// output), bounded by `MAX_INLINE`.
    depth: u32,
}

/// Nesting of inline event handling before falling back to a zero-delay event.
const MAX_INLINE: u32 = 4;

const EMPTY_IN: InQ = InQ {
    head_t: 0,
    head: NONE,
    tail: NONE,
    len: 0,
};

impl<'n, 't, const V: usize> Sim<'n, 't, V> {
    /// The part `part` of the network: the routers `r` with `owner[r] == part` (all of them
    /// when `owner` is all zeros), their ports and their endpoints.
    fn new(net: &'n Network<'t>, workload: &'n Workload, part: u8, owner: &[u8]) -> Sim<'n, 't, V> {
        let r = &net.routes;
        let topo = net.topo;
        let v = r.num_vcs();
        assert!(v <= V, "{v} VCs in an engine built for {V}");
        let np = r.num_ports();
        let pkts = (net.params.buffer_bytes / net.params.packet_bytes as u64) as u32;
        let per_vc = pkts / v as u32;
        let mut inp = Vec::with_capacity(np);
        let mut outp = Vec::with_capacity(np);
        let mut k = 2usize;
        let parts = num_parts(owner);
        for p in 0..np {
            let mine = owner[r.port_router(p) as usize];
            // `other`: the part of the router at the other end of the port.
            let (ep, peer, lp, other) = match r.port_endpoint(p) {
                Some(e) => (true, e, topo.endpoint_link(e as usize), mine),
                None => {
                    let l = topo.links()[r.port_link(p).unwrap() as usize];
                    let peer = r.port_peer[p];
                    (
                        false,
                        peer,
                        l.params(),
                        owner[r.port_router(peer as usize) as usize],
                    )
                }
            };
            let remote = other != mine;
            let ser = net.serialisation(lp.bandwidth_gbps).max(1);
            // Pending credit returns of an input port: moves within the last σ + L.
            k = k.max(((ser + lp.latency) / ser) as usize + 3);
            inp.push(InPort {
                busy: 0,
                sched: NEVER,
                peer,
                router: r.port_router(p),
                ser: ser as u32,
                lat: lp.latency as u32,
                cret_head: 0,
                cret_len: 0,
                rr: 0,
                ep,
                up_remote: remote,
                up_part: other,
                up_wait: 0,
                blocked: 0,
                q: [EMPTY_IN; V],
            });
            outp.push(OutPort {
                busy: 0,
                sched: NEVER,
                peer,
                ser: ser as u32,
                lat: lp.latency as u32,
                rr: 0,
                ep,
                remote,
                peer_part: other,
                q: [OutQ {
                    head_t: 0,
                    head: NONE,
                    tail: NONE,
                    len: 0,
                    credits: if ep { 0 } else { per_vc },
                }; V],
            });
        }
        assert!(
            k < u16::MAX as usize,
            "link latency too large for the credit rings"
        );
        let ep_router: Vec<u32> = topo.endpoint_routers().to_vec();
        let nep = topo.num_endpoints();
        let seed = net.params.seed;
        let (synthetic, exchange) = match workload {
            Workload::Synthetic(s) => (Some(s), None),
            Workload::Exchange(x) => (None, Some(x)),
        };
        let mut nics = Vec::with_capacity(nep);
        for e in 0..nep {
            let mut nic = Nic {
                busy: 0,
                sched: NEVER,
                next: NEVER,
                slot: 0,
                sent: 0,
                total: 0,
                credits: pkts,
                fixed: NONE,
                gap_rng: SplitMix64::stream(seed, 2 * e as u64),
                dst_rng: SplitMix64::stream(seed, 2 * e as u64 + 1),
            };
            let mine = owner[topo.endpoint_routers()[e] as usize] == part;
            if let (Some(x), true) = (exchange, mine) {
                nic.total = (x.off[e + 1] - x.off[e]) * x.packets_per_message as u64;
                if nic.total > 0 {
                    nic.next = 0;
                }
            }
            nics.push(nic);
        }
        let (load, stop, w0, w1) = match synthetic {
            Some(s) => (
                s.load,
                if s.drain { NEVER } else { s.duration },
                s.warmup,
                s.duration,
            ),
            None => (1.0, NEVER, 0, NEVER),
        };
        let mut sim = Sim {
            net,
            r,
            v,
            scheme: r.scheme(),
            decide: Decider::new(r, pkts),
            switch: net.params.switch_latency,
            cap_ep: pkts,
            cap_vc: per_vc,
            inp,
            outp,
            occ: vec![0; np],
            waiters: (0..np * V).map(|_| VecDeque::new()).collect(),
            cret: vec![0; np * k],
            k,
            ep_router,
            nics,
            pk: Vec::new(),
            free: Vec::new(),
            wheel: Wheel::new(10, 10),
            rngs: (0..topo.num_routers())
                .map(|x| SplitMix64::stream(seed, u64::MAX - x as u64))
                .collect(),
            now: 0,
            part,
            owner: owner.to_vec(),
            out_pkts: vec![Vec::new(); parts],
            out_creds: vec![Vec::new(); parts],
            last_t: 0,
            synthetic,
            exchange,
            load,
            ln_q: (1.0 - load).ln(),
            stop,
            w0,
            w1,
            events: 0,
            injected: 0,
            delivered_total: 0,
            in_flight: 0,
            last_delivery: 0,
            delivered: 0,
            generated: 0,
            indirect: 0,
            latency: Histogram::new(),
            hops: Vec::new(),
            port_packets: vec![0; np],
            completion: 0,
            depth: 0,
        };
        if let Some(s) = synthetic {
            for e in 0..nep {
                let fixed = match &s.pattern {
                    Pattern::Uniform => e as u32, // unused
                    Pattern::Map(m) => m[e],
                };
                sim.nics[e].fixed = fixed;
                if matches!(s.pattern, Pattern::Map(_)) && (fixed == NONE || fixed as usize == e) {
                    continue;
                }
                if owner[sim.ep_router[e] as usize] != part {
                    continue;
                }
                let first = sim.gap(e, true);
                sim.nics[e].slot = first;
                let ser = sim.inp[sim.r.endpoint_port(e)].ser as Time;
                let t = first.saturating_mul(ser);
                sim.nics[e].next = if t < s.duration { t } else { NEVER };
            }
        }
        sim
    }

    /// Slots to the next generated packet (Bernoulli per slot): from slot 0 when `first`.
    #[inline]
    fn gap(&mut self, e: usize, first: bool) -> u64 {
        let base = if first { 0 } else { 1 };
        if self.load >= 1.0 {
            return base;
        }
        let u = self.nics[e].gap_rng.unit();
        let k = (u.ln() / self.ln_q).floor();
        if k >= 1e15 {
            return u64::MAX / 4;
        }
        base + k as u64
    }

    // -- intrusive queues ----------------------------------------------------------------

    #[inline]
    fn in_push(&mut self, i: usize, vc: usize, pid: u32, t: Time) {
        self.pk[pid as usize].next = NONE;
        let iq = &mut self.inp[i].q[vc];
        if iq.len == 0 {
            iq.head = pid;
            iq.head_t = t;
        } else {
            let tail = iq.tail;
            let p = &mut self.pk[tail as usize];
            p.next = pid;
            p.t = t;
        }
        let iq = &mut self.inp[i].q[vc];
        iq.tail = pid;
        iq.len += 1;
    }

    #[inline]
    fn in_pop(&mut self, i: usize, vc: usize) {
        let h = self.inp[i].q[vc].head;
        let (n, nt) = (self.pk[h as usize].next, self.pk[h as usize].t);
        let iq = &mut self.inp[i].q[vc];
        iq.head = n;
        iq.len -= 1;
        if iq.len > 0 {
            iq.head_t = nt;
        }
    }

    #[inline]
    fn out_push(&mut self, o: usize, vc: usize, pid: u32, t: Time) {
        self.pk[pid as usize].next = NONE;
        let oq = &mut self.outp[o].q[vc];
        if oq.len == 0 {
            oq.head = pid;
            oq.head_t = t;
        } else {
            let tail = oq.tail;
            let p = &mut self.pk[tail as usize];
            p.next = pid;
            p.t = t;
        }
        let oq = &mut self.outp[o].q[vc];
        oq.tail = pid;
        oq.len += 1;
    }

    #[inline]
    fn out_pop(&mut self, o: usize, vc: usize) {
        let h = self.outp[o].q[vc].head;
        let (n, nt) = (self.pk[h as usize].next, self.pk[h as usize].t);
        let oq = &mut self.outp[o].q[vc];
        oq.head = n;
        oq.len -= 1;
        if oq.len > 0 {
            oq.head_t = nt;
        }
    }

    // -- credits ---------------------------------------------------------------------------

    /// Credits the upstream of input port `i` (its NIC or the peer output port) for VC `vc`.
    #[inline]
    fn credit(&mut self, i: usize, vc: usize) {
        let (ep, peer) = (self.inp[i].ep, self.inp[i].peer as usize);
        if ep {
            self.nics[peer].credits += 1;
        } else {
            self.outp[peer].q[vc].credits += 1;
        }
    }

    /// Applies the credit returns of input port `i` that have arrived by now.
    #[inline]
    fn cret_refresh(&mut self, i: usize) {
        let now = self.now;
        let k = self.k;
        loop {
            let ip = &self.inp[i];
            if ip.cret_len == 0 {
                return;
            }
            let w = self.cret[i * k + ip.cret_head as usize];
            if (w >> 5) > now {
                return;
            }
            let ip = &mut self.inp[i];
            ip.cret_head = if ip.cret_head as usize + 1 == k {
                0
            } else {
                ip.cret_head + 1
            };
            ip.cret_len -= 1;
            self.credit(i, (w & 31) as usize);
        }
    }

    /// Time of the next pending credit return of input port `i`.
    #[inline]
    fn cret_front(&self, i: usize) -> Option<Time> {
        let ip = &self.inp[i];
        (ip.cret_len > 0).then(|| self.cret[i * self.k + ip.cret_head as usize] >> 5)
    }

    /// Queues a credit return of input port `i`, VC `vc`, arriving at `t`.
    #[inline]
    fn cret_push(&mut self, i: usize, vc: usize, t: Time) {
        if self.inp[i].cret_len as usize == self.k {
            self.cret_refresh(i);
        }
        let k = self.k;
        let ip = &mut self.inp[i];
        debug_assert!((ip.cret_len as usize) < k, "credit ring overflow");
        let mut slot = ip.cret_head as usize + ip.cret_len as usize;
        if slot >= k {
            slot -= k;
        }
        ip.cret_len += 1;
        self.cret[i * k + slot] = (t << 5) | vc as u64;
    }

    /// Packet `pid` enters input `i`, VC `vc`; its head may cross the switch at `t`.
    #[inline]
    fn arrive(&mut self, i: usize, vc: usize, pid: u32, t: Time) {
        let was_empty = self.inp[i].q[vc].len == 0;
        self.in_push(i, vc, pid, t);
        if was_empty {
            self.sched_in(i, t);
        }
    }

    /// A credit of input `i`, VC `vc`, is on its way back to the upstream output (or
    /// endpoint) and arrives at `tc`.
    #[inline]
    fn credit_returns(&mut self, i: usize, vc: usize, tc: Time) {
        self.cret_push(i, vc, tc);
        if self.inp[i].up_wait & (1 << vc) != 0 {
            self.inp[i].up_wait &= !(1 << vc);
            let up = self.inp[i].peer as usize;
            if self.inp[i].ep {
                self.sched_nic(up, tc);
            } else {
                self.sched_out(up, tc);
            }
        }
    }

    // -- events ----------------------------------------------------------------------------

    #[inline]
    fn push_event(&mut self, t: Time, kind: u32, id: usize) {
        self.wheel.push(t, (kind << KIND_SHIFT) | id as u32);
    }

    #[inline]
    fn sched_out(&mut self, o: usize, t: Time) {
        let s = self.outp[o].sched;
        if s != NEVER && s >= self.now && s <= t {
            return;
        }
        self.outp[o].sched = t;
        self.push_event(t, K_OUT, o);
    }

    #[inline]
    fn sched_in(&mut self, i: usize, t: Time) {
        let s = self.inp[i].sched;
        if s != NEVER && s >= self.now && s <= t {
            return;
        }
        self.inp[i].sched = t;
        self.push_event(t, K_IN, i);
    }

    #[inline]
    fn sched_nic(&mut self, e: usize, t: Time) {
        let s = self.nics[e].sched;
        if s != NEVER && s >= self.now && s <= t {
            return;
        }
        self.nics[e].sched = t;
        self.push_event(t, K_NIC, e);
    }

    /// A packet slot.
    #[inline]
    fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(p) => p,
            None => {
                self.pk.push(Packet::default());
                (self.pk.len() - 1) as u32
            }
        }
    }

    /// Schedules the first injection of every endpoint of this part.
    fn start(&mut self) {
        for e in 0..self.nics.len() {
            let t = self.nics[e].next;
            if t != NEVER {
                self.sched_nic(e, t);
            }
        }
    }

    /// Handles event `code` at `t`.
    #[inline(always)]
    fn dispatch(&mut self, t: Time, code: u32) {
        self.now = t;
        self.events += 1;
        self.prefetch_ahead();
        let id = (code & ID_MASK) as usize;
        match code >> KIND_SHIFT {
            K_OUT => self.out_try(id),
            K_IN => self.in_try(id),
            _ => self.nic_try(id),
        }
    }

    /// Handles the events before `end` (one window of a parallel run).
    fn run_window(&mut self, end: Time) {
        let mut any = false;
        while let Some((t, code)) = self.wheel.pop_before(end) {
            self.dispatch(t, code);
            any = true;
        }
        if any {
            self.last_t = self.now;
        }
    }

    /// Hands the messages of the window to the parts they are for.
    fn post(&mut self, sh: &Shared) {
        let me = self.part as usize;
        for d in 0..sh.parts {
            if d != me && !(self.out_pkts[d].is_empty() && self.out_creds[d].is_empty()) {
                let mut m = sh.mail[me * sh.parts + d].lock().expect("mailbox");
                std::mem::swap(&mut m.pkts, &mut self.out_pkts[d]);
                std::mem::swap(&mut m.creds, &mut self.out_creds[d]);
            }
        }
    }

    /// Takes in the packets and credits the other parts sent in the last window.
    fn receive(&mut self, sh: &Shared) {
        let me = self.part as usize;
        for src in 0..sh.parts {
            if src == me {
                continue;
            }
            let mut m = sh.mail[src * sh.parts + me].lock().expect("mailbox");
            for &(pv, pkt) in &m.pkts {
                let pid = self.alloc();
                self.pk[pid as usize] = pkt;
                self.arrive((pv >> 5) as usize, (pv & 31) as usize, pid, pkt.t);
            }
            for &(pv, tc) in &m.creds {
                self.credit_returns((pv >> 5) as usize, (pv & 31) as usize, tc);
            }
            m.pkts.clear();
            m.creds.clear();
        }
    }

    /// One thread of a parallel run: windows of `lookahead` simulated time, each started at
    /// the earliest pending event of all parts, until the run ends or the watchdog must look.
    fn work(&mut self, sh: &Shared, mut next_check: Time) -> Outcome {
        let me = self.part as usize;
        let watchdog = self.net.params.watchdog;
        loop {
            sh.next[me].store(self.wheel.peek_time().unwrap_or(NEVER), Relaxed);
            sh.in_flight[me].store(self.in_flight, Relaxed);
            sh.last_delivery[me].store(self.last_delivery, Relaxed);
            sh.barrier.wait();
            let t = sh
                .next
                .iter()
                .map(|x| x.load(Relaxed))
                .min()
                .unwrap_or(NEVER);
            let in_flight: i64 = sh.in_flight.iter().map(|x| x.load(Relaxed)).sum();
            if t == NEVER {
                return Outcome::Drained;
            }
            if t >= self.stop {
                return Outcome::Stopped;
            }
            if t >= next_check {
                next_check = t + watchdog / 4;
                let last = sh.last_delivery.iter().map(|x| x.load(Relaxed)).max();
                if in_flight > 0 && t - last.unwrap_or(0) >= watchdog {
                    return Outcome::Check(t);
                }
            }
            let end = t.saturating_add(sh.lookahead).min(self.stop);
            self.run_window(end);
            self.post(sh);
            sh.barrier.wait();
            self.now = end;
            self.receive(sh);
        }
    }

    fn run(&mut self) -> Result<(), NetworkError> {
        self.start();
        let watchdog = self.net.params.watchdog;
        let mut next_check = watchdog;
        let mut stopped = false;
        while let Some((t, code)) = self.wheel.pop() {
            if t >= self.stop {
                stopped = true;
                break;
            }
            self.dispatch(t, code);
            if t >= next_check {
                next_check = t + watchdog / 4;
                if self.in_flight > 0 && t - self.last_delivery >= watchdog {
                    if let Some(cycle) = wait_cycle(std::slice::from_mut(self)) {
                        return Err(NetworkError::Deadlock {
                            time: t,
                            in_flight: self.in_flight as u64,
                            cycle,
                        });
                    }
                }
            }
        }
        if stopped {
            self.now = self.stop;
        } else if self.in_flight > 0 {
            let cycle = wait_cycle(std::slice::from_mut(self)).unwrap_or_default();
            return Err(NetworkError::Deadlock {
                time: self.now,
                in_flight: self.in_flight as u64,
                cycle,
            });
        }
        Ok(())
    }

    /// Adds the statistics and endpoint states of another part of the same run.
    fn absorb(&mut self, o: Sim<'n, 't, V>) {
        self.events += o.events;
        self.injected += o.injected;
        self.delivered_total += o.delivered_total;
        self.in_flight += o.in_flight;
        self.delivered += o.delivered;
        self.generated += o.generated;
        self.indirect += o.indirect;
        self.latency.merge(&o.latency);
        if self.hops.len() < o.hops.len() {
            self.hops.resize(o.hops.len(), 0);
        }
        for (a, b) in self.hops.iter_mut().zip(&o.hops) {
            *a += b;
        }
        for (a, b) in self.port_packets.iter_mut().zip(&o.port_packets) {
            *a += b;
        }
        self.completion = self.completion.max(o.completion);
        self.last_delivery = self.last_delivery.max(o.last_delivery);
        self.now = self.now.max(o.now);
        for (e, nic) in o.nics.into_iter().enumerate() {
            if self.owner[self.ep_router[e] as usize] == o.part {
                self.nics[e] = nic;
            }
        }
    }

    /// Starts loading what the events a few places ahead will touch: their port block (or
    /// endpoint) far ahead, the head packet of their first VC nearer. The engine's working
    /// set lives in the last-level cache and every event touches a few scattered lines of it,
    /// so overlapping those loads pays.
    #[inline]
    fn prefetch_ahead(&self) {
        const FAR: usize = 12;
        const NEAR: usize = 6;
        if let Some(c) = self.wheel.peek_code(FAR) {
            let id = (c & ID_MASK) as usize;
            match c >> KIND_SHIFT {
                K_OUT => prefetch_block(&self.outp[id]),
                K_IN => prefetch_block(&self.inp[id]),
                _ => prefetch(&self.nics[id]),
            }
        }
        if let Some(c) = self.wheel.peek_code(NEAR) {
            let id = (c & ID_MASK) as usize;
            let head = match c >> KIND_SHIFT {
                K_OUT => self.outp[id].q[0].head,
                K_IN => self.inp[id].q[0].head,
                _ => NONE,
            };
            if head != NONE {
                prefetch(&self.pk[head as usize]);
            }
        }
    }

    fn nic_try(&mut self, e: usize) {
        let now = self.now;
        if self.nics[e].sched == now {
            self.nics[e].sched = NEVER;
        }
        if self.nics[e].busy > now {
            let b = self.nics[e].busy;
            self.sched_nic(e, b);
            return;
        }
        let avail = self.nics[e].next;
        if avail == NEVER {
            return;
        }
        if avail > now {
            self.sched_nic(e, avail);
            return;
        }
        let port = self.r.endpoint_port(e);
        if self.nics[e].credits == 0 {
            self.cret_refresh(port);
            if self.nics[e].credits == 0 {
                match self.cret_front(port) {
                    Some(tc) => self.sched_nic(e, tc),
                    None => self.inp[port].up_wait |= 1,
                }
                return;
            }
        }
        self.nics[e].credits -= 1;
        // The packet.
        let (dst, gen) = if let Some(x) = self.exchange {
            let nic = &mut self.nics[e];
            let k = nic.sent;
            let per = x.packets_per_message as u64;
            let m = x.off[e + 1] - x.off[e];
            let idx = if x.interleave { k % m } else { k / per };
            nic.sent += 1;
            nic.next = if nic.sent < nic.total { 0 } else { NEVER };
            (x.dest[(x.off[e] + idx) as usize], now)
        } else {
            let s = self.synthetic.unwrap();
            let n = self.ep_router.len() as u64;
            let dst = match s.pattern {
                Pattern::Uniform => {
                    let d = self.nics[e].dst_rng.below(n - 1);
                    (if d >= e as u64 { d + 1 } else { d }) as u32
                }
                Pattern::Map(_) => self.nics[e].fixed,
            };
            let gen = avail;
            if gen >= self.w0 && gen < self.w1 {
                self.generated += 1;
            }
            let g = self.gap(e, false);
            let ser = self.inp[port].ser as Time;
            let nic = &mut self.nics[e];
            nic.slot = nic.slot.saturating_add(g);
            let t = nic.slot.saturating_mul(ser);
            nic.next = if t < s.duration { t } else { NEVER };
            nic.sent += 1;
            (dst, gen)
        };
        let pid = self.alloc();
        let (lat, ser) = (self.inp[port].lat as Time, self.inp[port].ser as Time);
        let arrive = now + lat + self.switch;
        self.pk[pid as usize] = Packet {
            gen,
            t: arrive,
            dst,
            next: NONE,
            inter_hops: INTER_NONE,
            out_vc: OUT_NONE,
        };
        self.injected += 1;
        self.in_flight += 1;
        self.arrive(port, 0, pid, arrive);
        let busy = now + ser;
        self.nics[e].busy = busy;
        let next = self.nics[e].next;
        if next != NEVER {
            self.sched_nic(e, busy.max(next));
        }
    }

    fn out_try(&mut self, o: usize) {
        let now = self.now;
        let op = &self.outp[o];
        if op.sched == now {
            self.outp[o].sched = NEVER;
        }
        let op = &self.outp[o];
        if op.busy > now {
            let b = op.busy;
            self.sched_out(o, b);
            return;
        }
        if self.occ[o] == 0 {
            return;
        }
        let (ep, peer, ser, lat) = (op.ep, op.peer as usize, op.ser as Time, op.lat as Time);
        let nv = if ep { 1 } else { self.v };
        let start = op.rr as usize;
        let mut wake = NEVER;
        let mut chosen = None;
        let mut refreshed = false;
        for k in 0..nv {
            let mut vc = start + k;
            if vc >= nv {
                vc -= nv;
            }
            let oq = self.outp[o].q[vc];
            if oq.len == 0 {
                continue;
            }
            if oq.head_t > now {
                wake = wake.min(oq.head_t);
                continue;
            }
            if !ep && oq.credits == 0 {
                if !refreshed {
                    self.cret_refresh(peer);
                    refreshed = true;
                }
                if self.outp[o].q[vc].credits == 0 {
                    match self.cret_front(peer) {
                        Some(tc) => wake = wake.min(tc),
                        None => self.inp[peer].up_wait |= 1 << vc,
                    }
                    continue;
                }
            }
            chosen = Some((vc, oq.head));
            break;
        }
        let Some((vc, pid)) = chosen else {
            if wake != NEVER {
                self.sched_out(o, wake);
            }
            return;
        };
        self.out_pop(o, vc);
        {
            let op = &mut self.outp[o];
            op.rr = (vc + 1) as u8;
            op.busy = now + ser;
        }
        if now >= self.w0 && now < self.w1 {
            self.port_packets[o] += 1;
        }
        if ep {
            self.deliver(pid, now + lat + ser);
        } else {
            self.outp[o].q[vc].credits -= 1;
            let movable = now + lat + self.switch;
            let p = &mut self.pk[pid as usize];
            p.t = movable;
            p.add_hop();
            p.clear_out();
            let op = &self.outp[o];
            if op.remote {
                let part = op.peer_part as usize;
                self.out_pkts[part].push((((peer as u32) << 5) | vc as u32, *p));
                self.free.push(pid);
            } else {
                self.arrive(peer, vc, pid, movable);
            }
        }
        self.occ[o] -= 1;
        if self.occ[o] > 0 {
            self.sched_out(o, now + ser);
        }
        // A slot of (o, vc) freed: wake the first input waiting for it.
        if let Some(w) = self.waiters[o * V + vc].pop_front() {
            let (i, ivc) = (w as usize / V, w as usize % V);
            self.inp[i].blocked &= !(1 << ivc);
            if self.depth < MAX_INLINE {
                self.depth += 1;
                self.in_try(i);
                self.depth -= 1;
            } else {
                self.sched_in(i, now);
            }
        }
    }

    fn deliver(&mut self, pid: u32, done: Time) {
        let p = self.pk[pid as usize];
        self.in_flight -= 1;
        self.delivered_total += 1;
        self.last_delivery = self.now;
        if done >= self.w0 && done < self.w1 {
            self.delivered += 1;
            self.latency.add(done - p.gen);
            let h = p.hops() as usize;
            if self.hops.len() <= h {
                self.hops.resize(h + 1, 0);
            }
            self.hops[h] += 1;
            if p.flags() & F_INDIRECT != 0 {
                self.indirect += 1;
            }
        }
        self.completion = self.completion.max(done);
        self.free.push(pid);
    }

    fn in_try(&mut self, i: usize) {
        let now = self.now;
        let ip = &self.inp[i];
        if ip.sched == now {
            self.inp[i].sched = NEVER;
        }
        let ip = &self.inp[i];
        if ip.busy > now {
            let b = ip.busy;
            self.sched_in(i, b);
            return;
        }
        let (ep, router, ser_in, lat) = (ip.ep, ip.router as usize, ip.ser as Time, ip.lat);
        let nv = if ep { 1 } else { self.v };
        let start = ip.rr as usize;
        let mut wake = NEVER;
        for k in 0..nv {
            let mut vc = start + k;
            if vc >= nv {
                vc -= nv;
            }
            let iq = self.inp[i].q[vc];
            if self.inp[i].blocked & (1 << vc) != 0 || iq.len == 0 {
                continue;
            }
            let pid = iq.head;
            let arrived = iq.head_t;
            if arrived > now {
                wake = wake.min(arrived);
                continue;
            }
            if self.pk[pid as usize].out() == OUT_NONE {
                self.route(pid as usize, router, ep);
            }
            let p = self.pk[pid as usize];
            let (o, ovc) = (p.out() as usize, p.vc());
            let cap = if self.outp[o].ep {
                self.cap_ep
            } else {
                self.cap_vc
            };
            if self.outp[o].q[ovc].len >= cap {
                self.inp[i].blocked |= 1 << vc;
                self.waiters[o * V + ovc].push_back((i * V + vc) as u32);
                continue;
            }
            // Cross the switch.
            self.in_pop(i, vc);
            let ser_out = self.outp[o].ser as Time;
            // Virtual cut-through: the output may start once the head is through the
            // switch, but not finish before the tail has arrived (links of unequal speed).
            let ready = now.max((arrived + ser_in).saturating_sub(self.switch + ser_out));
            self.out_push(o, ovc, pid, ready);
            self.occ[o] += 1;
            {
                let ip = &mut self.inp[i];
                ip.busy = now + ser_in;
                ip.rr = (vc + 1) as u8;
            }
            // The slot frees when the tail has left; the credit arrives a latency later.
            let tc = now + ser_in + lat as Time;
            let ip = &self.inp[i];
            if ip.up_remote {
                let part = ip.up_part as usize;
                self.out_creds[part].push((((i as u32) << 5) | vc as u32, tc));
            } else {
                self.credit_returns(i, vc, tc);
            }
            // When the output link frees, if it is busy now; at once (inline, a few calls
            // deep at most) if it is idle.
            let t = ready.max(self.outp[o].busy);
            if t == now && self.depth < MAX_INLINE {
                self.depth += 1;
                self.out_try(o);
                self.depth -= 1;
            } else {
                self.sched_out(o, t);
            }
            // More to move from this input?
            let mut next = NEVER;
            let ip = &self.inp[i];
            for vc2 in 0..nv {
                let iq = &ip.q[vc2];
                if ip.blocked & (1 << vc2) == 0 && iq.len > 0 {
                    next = next.min(iq.head_t);
                }
            }
            if next != NEVER {
                self.sched_in(i, next.max(now + ser_in));
            }
            return;
        }
        if wake != NEVER {
            self.sched_in(i, wake);
        }
    }

    /// Sets the output port and VC of packet `pid`, whose head is at router `r`; `source`
    /// when it has just been injected (the routing's decision, [`Decider::route`]).
    #[inline]
    fn route(&mut self, pid: usize, r: usize, source: bool) {
        let mut p = self.pk[pid];
        let dr = self.ep_router[p.dst as usize] as usize;
        let (out, vc) =
            self.decide
                .route(self.r, &self.occ, &mut self.rngs[r], r, dr, source, &mut p);
        p.set_out(out, vc);
        self.pk[pid] = p;
    }

    fn report(&mut self, traffic: &str, wall: f64, threads: usize) -> Report {
        let topo = self.net.topo;
        let r = self.r;
        let end = if self.stop != NEVER {
            self.stop
        } else {
            self.now
        };
        let (w0, w1) = match self.synthetic {
            Some(_) => (self.w0, self.w1),
            None => (0, self.completion.max(1)),
        };
        // Source queues: packets generated before the end but not yet injected, and the
        // generated count of the window (replaying the generation times).
        let mut source_queued = 0u64;
        if let Some(s) = self.synthetic {
            for e in 0..self.nics.len() {
                if self.nics[e].next == NEVER {
                    continue;
                }
                let ser = self.inp[r.endpoint_port(e)].ser as Time;
                let mut slot = self.nics[e].slot;
                loop {
                    let t = slot.saturating_mul(ser);
                    if t >= s.duration || t >= end {
                        break;
                    }
                    source_queued += 1;
                    if t >= self.w0 && t < self.w1 {
                        self.generated += 1;
                    }
                    let g = self.gap(e, false);
                    slot = slot.saturating_add(g);
                }
            }
        }
        // Injection capacity of the active endpoints over the window, in packets.
        let window = (w1 - w0) as f64;
        let mut capacity = 0.0;
        for e in 0..self.nics.len() {
            let active = match (self.synthetic, self.exchange) {
                (Some(s), _) => match &s.pattern {
                    Pattern::Uniform => true,
                    Pattern::Map(m) => m[e] != NONE && m[e] as usize != e,
                },
                (_, Some(x)) => x.off[e + 1] > x.off[e],
                _ => false,
            };
            if active {
                capacity += window / self.inp[r.endpoint_port(e)].ser as f64;
            }
        }
        let frac = |x: u64| {
            if capacity > 0.0 {
                x as f64 / capacity
            } else {
                0.0
            }
        };
        let (completion, eff) = match self.exchange {
            Some(x) => {
                let per_node = x.total_bytes() as f64 / x.nodes.max(1) as f64;
                let bw = topo.endpoint_link(0).bandwidth_gbps / 8000.0; // bytes per ps
                let t = self.completion.max(1) as f64;
                (Some(self.completion), Some(per_node / t / bw))
            }
            None => (None, None),
        };
        let spec = r.spec();
        Report {
            routing: spec.to_string(),
            vc_scheme: self.scheme.name(),
            vcs: self.v,
            traffic: traffic.to_string(),
            offered: self.load,
            generated: if self.exchange.is_some() {
                frac(self.injected)
            } else {
                frac(self.generated)
            },
            accepted: frac(self.delivered),
            latency: std::mem::take(&mut self.latency),
            hops: std::mem::take(&mut self.hops),
            indirect: self.indirect,
            delivered: self.delivered,
            generated_packets: if self.exchange.is_some() {
                self.injected
            } else {
                self.generated
            },
            injected_total: self.injected,
            delivered_total: self.delivered_total,
            in_flight: self.in_flight.max(0) as u64,
            source_queued,
            window: (w0, w1),
            end_time: end,
            events: self.events,
            wall_seconds: wall,
            threads,
            port_packets: std::mem::take(&mut self.port_packets),
            port_ser: self.outp.iter().map(|p| p.ser as Time).collect(),
            completion,
            effective_throughput: eff,
            dims: self.exchange.and_then(|x| x.dims),
        }
    }
}

/// A cycle of input VCs, each full and blocked on a full output VC without credit toward
/// the next: a deadlock. `sims` are the parts of one run, between events.
fn wait_cycle<const V: usize>(sims: &mut [Sim<'_, '_, V>]) -> Option<Vec<Channel>> {
    for s in sims.iter_mut() {
        for i in 0..s.inp.len() {
            s.cret_refresh(i);
        }
    }
    let s0 = &sims[0];
    let np = s0.inp.len();
    let n = np * V;
    // The part that simulates input port `i`, its router's outputs, and the credit returns
    // toward those outputs.
    let part =
        |i: usize| -> &Sim<'_, '_, V> { &sims[s0.owner[s0.inp[i].router as usize] as usize] };
    // Nodes are input VCs `port · V + vc`.
    let succ = |q: usize| -> Option<usize> {
        let (i, vc) = (q / V, q % V);
        let s = part(i);
        let ip = &s.inp[i];
        if vc >= s.v || ip.ep || ip.blocked & (1 << vc) == 0 || ip.q[vc].len < s.cap_vc {
            return None;
        }
        let p = s.pk[ip.q[vc].head as usize];
        let (o, ovc) = (p.out() as usize, p.vc());
        let op = &s.outp[o];
        let d = op.peer as usize;
        // Full, no credit, none on its way back.
        if op.ep || op.q[ovc].len < s.cap_vc || op.q[ovc].credits != 0 || s.inp[d].cret_len != 0 {
            return None;
        }
        Some(d * V + ovc)
    };
    let mut state = vec![0u8; n];
    let mut path = Vec::new();
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        path.clear();
        let mut q = start;
        loop {
            if state[q] == 1 {
                let at = path.iter().position(|&x| x == q).unwrap();
                return Some(
                    path[at..]
                        .iter()
                        .map(|&x: &usize| {
                            let i = x / V;
                            Channel {
                                from: s0.inp[s0.inp[i].peer as usize].router,
                                to: s0.inp[i].router,
                                vc: (x % V) as u8,
                            }
                        })
                        .collect(),
                );
            }
            if state[q] == 2 {
                break;
            }
            state[q] = 1;
            path.push(q);
            match succ(q) {
                Some(nq) => q = nq,
                None => break,
            }
        }
        for &x in &path {
            state[x] = 2;
        }
    }
    None
}

/// What a thread of a parallel run found when it stopped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    /// No event is left.
    Drained,
    /// The next event is at or after the end of the run.
    Stopped,
    /// Nothing was delivered for a watchdog period at this time: look for a deadlock.
    Check(Time),
}

/// Messages from one part to another, sent in one window and taken in before the next.
#[derive(Default)]
struct Mail {
    pkts: Vec<(u32, Packet)>,
    creds: Vec<(u32, Time)>,
}

/// What the threads of a parallel run share.
struct Shared {
    parts: usize,
    lookahead: Time,
    /// `mail[src · parts + dst]`.
    mail: Vec<Mutex<Mail>>,
    next: Vec<AtomicU64>,
    in_flight: Vec<AtomicI64>,
    last_delivery: Vec<AtomicU64>,
    barrier: Barrier,
}

/// A barrier that a thread leaving by a panic opens for good, so that the others panic too
/// instead of waiting forever.
struct Barrier {
    n: usize,
    state: Mutex<(usize, u64, bool)>,
    cv: Condvar,
}

impl Barrier {
    fn new(n: usize) -> Barrier {
        Barrier {
            n,
            state: Mutex::new((0, 0, false)),
            cv: Condvar::new(),
        }
    }

    /// Waits until all `n` threads have arrived.
    fn wait(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        assert!(!st.2, "another simulation thread failed");
        st.0 += 1;
        if st.0 == self.n {
            st.0 = 0;
            st.1 += 1;
            self.cv.notify_all();
            return;
        }
        let generation = st.1;
        while st.1 == generation && !st.2 {
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        assert!(!st.2, "another simulation thread failed");
    }

    /// Opens the barrier for good (a thread failed).
    fn poison(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.2 = true;
        self.cv.notify_all();
    }
}

/// Poisons the barrier if its thread unwinds.
struct PoisonOnPanic<'a>(&'a Barrier);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poison();
        }
    }
}

/// Runs the parts of a network, one thread each, in windows of `lookahead` (the smallest
/// latency of a link between two parts: nothing one part does can reach another sooner).
fn run_parts<const V: usize>(
    sims: &mut [Sim<'_, '_, V>],
    lookahead: Time,
) -> Result<(), NetworkError> {
    let parts = sims.len();
    let watchdog = sims[0].net.params.watchdog;
    let stop = sims[0].stop;
    let sh = Shared {
        parts,
        lookahead,
        mail: (0..parts * parts)
            .map(|_| Mutex::new(Mail::default()))
            .collect(),
        next: (0..parts).map(|_| AtomicU64::new(NEVER)).collect(),
        in_flight: (0..parts).map(|_| AtomicI64::new(0)).collect(),
        last_delivery: (0..parts).map(|_| AtomicU64::new(0)).collect(),
        barrier: Barrier::new(parts),
    };
    for s in sims.iter_mut() {
        s.start();
    }
    let mut next_check = watchdog;
    loop {
        let outcome = std::thread::scope(|sc| {
            let handles: Vec<_> = sims
                .iter_mut()
                .map(|s| {
                    let sh = &sh;
                    sc.spawn(move || {
                        let _guard = PoisonOnPanic(&sh.barrier);
                        s.work(sh, next_check)
                    })
                })
                .collect();
            let outs: Vec<Outcome> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect();
            debug_assert!(outs.iter().all(|&o| o == outs[0]));
            outs[0]
        });
        let in_flight: i64 = sims.iter().map(|s| s.in_flight).sum();
        match outcome {
            Outcome::Stopped => {
                for s in sims.iter_mut() {
                    s.now = stop;
                }
                return Ok(());
            }
            Outcome::Drained => {
                let last = sims.iter().map(|s| s.last_t).max().unwrap_or(0);
                for s in sims.iter_mut() {
                    s.now = last;
                }
                if in_flight > 0 {
                    let cycle = wait_cycle(sims).unwrap_or_default();
                    return Err(NetworkError::Deadlock {
                        time: last,
                        in_flight: in_flight as u64,
                        cycle,
                    });
                }
                return Ok(());
            }
            Outcome::Check(t) => {
                for s in sims.iter_mut() {
                    s.now = t;
                }
                if let Some(cycle) = wait_cycle(sims) {
                    return Err(NetworkError::Deadlock {
                        time: t,
                        in_flight: in_flight as u64,
                        cycle,
                    });
                }
                next_check = t + watchdog / 4;
            }
        }
    }
}
