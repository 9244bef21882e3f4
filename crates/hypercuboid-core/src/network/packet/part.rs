//! One part of the network and its event loop: the routers a thread simulates (all of them in
//! a run of one thread), their ports and endpoints, the packets among them.
//!
//! # Events
//! Three idempotent "try" events, each naming a port or endpoint: an output port tries to send,
//! an input port tries to move its head packets across the switch, an endpoint tries to inject.
//! Each is scheduled only when something can change (a packet may cross the switch, a
//! link frees, a credit returns to a port that waits for one), at most once per port and time.
//! An input VC whose head finds its output VC full registers as a waiter and is woken when a
//! slot frees. Credit returns are kept as per-input rings of arrival times, consulted lazily.
//! A NIC fed by synthetic traffic injects, at the event of one packet, the packets that follow
//! it within 150 ns while it holds credits, each at the time its own event would have
//! injected it (never past the end of the events being handled), so most of its packets need
//! no event of their own.
//!
//! Events at one time are handled in the order of their codes (kind, then port), whenever
//! they were queued, and every random routing choice at router r is drawn from r's own stream
//! ([`Decider`]).
//!
//! An input port's head packet is routed when it first may cross the switch; it moves into its
//! output VC as soon as that has room (virtual cut-through: the output may start sending once
//! the head is through the switch, but not finish before the tail has arrived). An output port
//! sends one packet per serialisation time, round-robin among VCs whose head holds a credit
//! for the downstream input VC; an endpoint port's output delivers the packet when its tail
//! reaches the endpoint.

use super::ports::{
    prefetch, prefetch_block, slot, slot_mut, InPort, Nic, OutPort, OutQ, Packet, EMPTY_IN,
    F_INDIRECT, INTER_NONE, OUT_NONE, RING,
};
use super::queue::Wheel;
use super::report::Stats;
use super::source::Source;
use super::{Network, NEVER};
use crate::network::rng::SplitMix64;
use crate::network::routing::{Decider, Routes, NONE};
use crate::units::Time;
use std::collections::VecDeque;

/// Nesting of inline event handling before falling back to a zero-delay event.
const MAX_INLINE: u32 = 4;

/// How far ahead of its event a NIC injects the packets that follow (150 ns: about two
/// packets at 30 % load on the seed's links, whose packets then enter the input queue at most
/// one flight of the endpoint link earlier than otherwise).
const AHEAD: Time = 150_000;

/// One part of the network: the routers `r` with `owner[r] == part` (all of them when `owner`
/// is all zeros), their ports and their endpoints, and the source that feeds the endpoints.
///
/// Aligned to 128 bytes (two cache lines, the pair the adjacent-line prefetcher fetches): the
/// runner keeps its parts side by side in one vector and each thread writes its part's fields
/// (the time, the free list's length, the wheel's cursor, the counters) at every event, so a
/// part that shared a line with the next would have the two threads take that line from each
/// other all run long (false sharing: 21 % more CPU time with two threads on the seed's Slim
/// Fly, docs/performance.md).
#[repr(align(128))]
pub(super) struct Part<'n, const V: usize, S: Source> {
    pub(super) net: &'n Network<'n>,
    pub(super) r: &'n Routes,
    /// VCs in use (≤ V).
    pub(super) v: usize,
    pub(super) decide: Decider,
    pub(super) switch: Time,
    /// Store-and-forward switches: a packet moves on only once its tail has arrived.
    pub(super) saf: bool,
    /// A freed input slot reaches the upstream `ser · pause_bytes / wire_bytes` after the
    /// link latency (PAUSE's reaction; 0 for credits).
    pub(super) pause_bytes: u64,
    /// Wire bytes of a full packet, of the framing, and of the shortest frame (0: every
    /// packet takes a full packet's time, as under virtual cut-through).
    pub(super) wire_bytes: u64,
    pub(super) overhead: u64,
    pub(super) min_wire: u64,
    /// Buffer per endpoint port (packets) and per VC of a network port.
    pub(super) cap_ep: u32,
    pub(super) cap_vc: u32,
    pub(super) inp: Vec<InPort<V>>,
    pub(super) outp: Vec<OutPort<V>>,
    /// Packets in the output buffer of every port (all VCs): what UGAL and lowest-cost
    /// choices read, dense so that comparing candidates touches few cache lines.
    pub(super) occ: Vec<u32>,
    /// Inputs `(port · V + vc)` waiting for room in output VC `port · V + vc`.
    pub(super) waiters: Vec<VecDeque<u32>>,
    /// Bit `vc` of `waiting[port]`: `waiters[port · V + vc]` is not empty. Dense, so that an
    /// output that sends a packet learns whether anyone waits without loading the queue.
    pub(super) waiting: Vec<u32>,
    /// Credit returns `(time << 5) | vc`, `k` slots per input port: in each input's block
    /// (`ring_inline`, `k` = [`RING`]) when that many are enough for every input of the part,
    /// else in `cret`.
    pub(super) cret: Vec<u64>,
    pub(super) k: usize,
    pub(super) ring_inline: bool,
    pub(super) ep_router: Vec<u32>,
    pub(super) nics: Vec<Nic<S::Endpoint>>,
    pub(super) pk: Vec<Packet>,
    /// What every packet carries for its source, beside `pk` (empty when the tag holds
    /// nothing).
    pub(super) tags: Vec<S::Tag>,
    pub(super) free: Vec<u32>,
    pub(super) wheel: Wheel,
    /// Random choices of routing, one stream per router (so that they do not depend on the
    /// order in which routers are simulated).
    pub(super) rngs: Vec<SplitMix64>,
    /// The time of the event being handled; between calls, the time the part has advanced
    /// to (every event before it handled).
    pub(super) now: Time,
    /// This part of the network (routers `owner[r] == part`) and the messages it sends the
    /// others: packets `(input port << 5 | VC, packet, tag)` and credit returns `(input port
    /// << 5 | VC, arrival time)`, by destination part.
    pub(super) part: u8,
    /// The part of every router.
    pub(super) owner: Vec<u8>,
    pub(super) out_pkts: Vec<Vec<(u32, Packet, S::Tag)>>,
    pub(super) out_creds: Vec<Vec<(u32, Time)>>,
    /// Time of the last event handled.
    pub(super) last_t: Time,
    pub(super) source: S,
    /// Measurement window.
    pub(super) w0: Time,
    pub(super) w1: Time,
    pub(super) stats: Stats,
    /// The end of the run the events being handled belong to (the `until` of
    /// [`Part::run_until`], the `end` of [`Part::run_until_first`]): nothing outside the part
    /// sees its state before then, so a NIC injects ahead up to there at most.
    until: Time,
    /// Depth of inline event handling (an output tried from an input, an input woken by an
    /// output), bounded by `MAX_INLINE`.
    pub(super) depth: u32,
    /// The input port at the other end of every output port, `NONE` for an endpoint port
    /// or an input simulated by another part. Dense (4 bytes a port), so that the input a
    /// packet will enter next can be prefetched as soon as its output port is known, without
    /// loading the output's block first.
    down: Vec<u32>,
    /// The first event code of an input port and of an endpoint: events are numbered outputs
    /// first (code = port), then inputs (`in_code` + port), then endpoints (`nic_code` +
    /// endpoint), so that events at one time go kind by kind, port by port.
    in_code: u32,
    nic_code: u32,
}

/// How much later than a credit a freed input slot reaches the upstream under PAUSE, on a
/// link whose full packets take `ser`: the time of `pause_bytes` of its `wire_bytes` (0 for
/// credits, `pause_bytes` 0).
#[inline(always)]
fn pause_reaction(ser: Time, pause_bytes: u64, wire_bytes: u64) -> Time {
    (ser * pause_bytes).div_ceil(wire_bytes)
}

/// Entry `o` of a column with one entry per port (`outp`, `occ`, `down`), without a bounds
/// check: for the output port a packet was routed to (`o < num_ports`: routing returns ports
/// of [`Routes`], and those columns have an entry for each).
#[inline(always)]
fn port_at<T>(col: &[T], o: usize) -> &T {
    debug_assert!(o < col.len(), "port {o} of {}", col.len());
    // SAFETY: `o < col.len()` by the invariant above (checked in debug builds).
    unsafe { col.get_unchecked(o) }
}

/// [`port_at`], mutable.
#[inline(always)]
fn port_at_mut<T>(col: &mut [T], o: usize) -> &mut T {
    debug_assert!(o < col.len(), "port {o} of {}", col.len());
    // SAFETY: `o < col.len()` by the invariant of `port_at` (checked in debug builds).
    unsafe { col.get_unchecked_mut(o) }
}

/// Whether an element (output port, input port, NIC) whose pending wake-up is `*sched` needs
/// one at `t`: not when one is pending from `now` to `t`. When it does, `*sched` becomes `t`
/// and the caller queues the event.
#[inline(always)]
fn rearm(sched: &mut Time, now: Time, t: Time) -> bool {
    let s = *sched;
    if s != NEVER && s >= now && s <= t {
        return false;
    }
    *sched = t;
    true
}

/// The start of an element's turn at `now`: its pending wake-up, if it is this one, is spent;
/// `Some(busy)` when it is busy until a later time `busy`.
#[inline(always)]
fn busy_after_turn(sched: &mut Time, busy: Time, now: Time) -> Option<Time> {
    if *sched == now {
        *sched = NEVER;
    }
    (busy > now).then_some(busy)
}

impl<'n, const V: usize, S: Source> Part<'n, V, S> {
    /// The part `part` of the network (see [`Part`]), fed by `source`, its first injections
    /// scheduled.
    pub(super) fn new(net: &'n Network<'n>, source: S, part: u8, owner: &[u8]) -> Part<'n, V, S> {
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
        // Whether every input's credit returns fit the ring in its block: an input whose
        // upstream is in this part and whose packets all take a full serialisation (no short
        // frames) crosses one packet per `ser` at most, and its credit arrives `reach` after
        // the crossing, so once the arrived ones are applied at most ⌈reach / ser⌉ − 1 are on
        // their way when it queues the next (one more slot is kept spare).
        let mut fits = net.switching.min_wire == 0;
        let parts = super::num_parts(owner);
        let pause_bytes = net.switching.pause_bytes as u64;
        let wire_bytes = net.params.packet_bytes as u64 + net.switching.overhead as u64;
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
            // Pending credit returns of an input port: moves within the last σ + L (and a
            // PAUSE's reaction). A part may take in a credit from another part up to a
            // lookahead (≤ σ + L) before the time it stands at.
            let reach = ser + lp.latency + pause_reaction(ser, pause_bytes, wire_bytes);
            let span = if remote { 2 * reach } else { reach };
            k = k.max((span / ser) as usize + 3);
            fits &= !remote && (reach.div_ceil(ser) as usize) < RING;
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
                // What its upstream may send into it: a NIC the whole buffer on VC 0, a
                // router's output one VC's share on each.
                credits: std::array::from_fn(|vc| match (ep, vc) {
                    (true, 0) => pkts,
                    (true, _) => 0,
                    (false, _) => per_vc,
                }),
                ring: [0; RING],
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
                }; V],
                sent: 0,
            });
        }
        assert!(
            k < u16::MAX as usize,
            "link latency too large for the credit rings"
        );
        #[cfg(test)]
        {
            fits &= !tests::EXTERNAL_RING.get();
            tests::INLINE_RING.set(fits);
        }
        if fits {
            k = RING;
        }
        let ep_router: Vec<u32> = topo.endpoint_routers().to_vec();
        let nep = topo.num_endpoints();
        let mut nics = Vec::with_capacity(nep);
        for e in 0..nep {
            let mine = owner[ep_router[e] as usize] == part;
            let ser = inp[r.endpoint_port(e)].ser as Time;
            let (state, next) = source.endpoint(e, ser, mine);
            nics.push(Nic {
                busy: 0,
                sched: NEVER,
                next,
                ep: state,
            });
        }
        let down = outp
            .iter()
            .map(|o: &OutPort<V>| if o.ep || o.remote { NONE } else { o.peer })
            .collect();
        let seed = net.params.seed;
        let (w0, w1) = source.window();
        let mut part = Part {
            net,
            r,
            v,
            decide: Decider::new(r, pkts),
            switch: net.params.switch_latency,
            saf: net.switching.store_forward,
            pause_bytes,
            wire_bytes,
            overhead: net.switching.overhead as u64,
            min_wire: net.switching.min_wire as u64,
            cap_ep: pkts,
            cap_vc: per_vc,
            inp,
            outp,
            occ: vec![0; np],
            waiters: (0..np * V).map(|_| VecDeque::new()).collect(),
            waiting: vec![0; np],
            cret: if fits { Vec::new() } else { vec![0; np * k] },
            k,
            ring_inline: fits,
            ep_router,
            nics,
            pk: Vec::new(),
            tags: Vec::new(),
            free: Vec::new(),
            // Buckets of 256 ps, 1024 of them (262 ns ahead, past a hop's L + S + σ at the
            // seed's parameters): a bucket then holds the events of one time (5 % less CPU
            // time than 1024 ps buckets, docs/performance.md), which the wheel records in a
            // bitmap over the codes of the three kinds.
            wheel: Wheel::new(8, 10, 2 * np + nep),
            rngs: (0..topo.num_routers())
                .map(|x| SplitMix64::stream(seed, u64::MAX - x as u64))
                .collect(),
            now: 0,
            part,
            owner: owner.to_vec(),
            out_pkts: vec![Vec::new(); parts],
            out_creds: vec![Vec::new(); parts],
            last_t: 0,
            w0,
            w1,
            source,
            stats: Stats::new(),
            until: 0,
            depth: 0,
            down,
            in_code: np as u32,
            nic_code: 2 * np as u32,
        };
        part.start();
        part
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

    /// Queues message `msg` (`packets.0` packets to endpoint `dst`, the last of `packets.1`
    /// bytes, ready at `at`, not before the part's current time) at endpoint `e` of this part. False when the source takes no
    /// messages of the caller.
    pub(super) fn post(
        &mut self,
        e: usize,
        at: Time,
        dst: u32,
        packets: (u32, u32),
        msg: u32,
    ) -> bool {
        match self.source.post(&mut self.nics[e], at, dst, packets, msg) {
            None => false,
            Some(head) => {
                if head {
                    self.sched_nic(e, at);
                }
                true
            }
        }
    }

    // -- events ----------------------------------------------------------------------------

    #[inline]
    pub(super) fn sched_out(&mut self, o: usize, t: Time) {
        if rearm(&mut self.outp[o].sched, self.now, t) {
            self.wheel.push(t, o as u32);
        }
    }

    #[inline]
    pub(super) fn sched_in(&mut self, i: usize, t: Time) {
        if rearm(&mut self.inp[i].sched, self.now, t) {
            self.wheel.push(t, self.in_code + i as u32);
        }
    }

    #[inline]
    pub(super) fn sched_nic(&mut self, e: usize, t: Time) {
        if rearm(&mut self.nics[e].sched, self.now, t) {
            self.wheel.push(t, self.nic_code + e as u32);
        }
    }

    /// Handles event `code` at `t`.
    #[inline(always)]
    pub(super) fn dispatch(&mut self, t: Time, code: u32) {
        self.now = t;
        self.prefetch_ahead();
        if code < self.in_code {
            self.out_try(code as usize)
        } else if code < self.nic_code {
            self.in_try((code - self.in_code) as usize)
        } else {
            self.nic_try((code - self.nic_code) as usize)
        }
    }

    /// Handles the events before `end`, one after the other, as a slice of a run that
    /// handles every event before `until` (≥ `end`): nothing outside this part sees its
    /// state before `until`, so a NIC may inject ahead up to there. After each event,
    /// `each(self, t)` (the watchdog's look) may stop the loop with an error.
    #[inline]
    pub(super) fn run_until<E>(
        &mut self,
        end: Time,
        until: Time,
        each: impl FnMut(&mut Self, Time) -> Result<(), E>,
    ) -> Result<(), E> {
        debug_assert!(until >= end);
        self.until = until;
        self.run_events(end, false, each).map(|_| ())
    }

    /// [`Part::run_until`]; with `first`, stops early at the first delivery of a message:
    /// handles the events before it and returns its time (else `end`). A delivery is known
    /// before its time, so no other message can be delivered earlier.
    pub(super) fn run_until_first<E>(
        &mut self,
        end: Time,
        first: bool,
        each: impl FnMut(&mut Self, Time) -> Result<(), E>,
    ) -> Result<Time, E> {
        self.until = end;
        self.run_events(end, first, each)
    }

    /// [`Part::run_until_first`] with the horizon of injections ahead (`self.until`) set.
    #[inline]
    fn run_events<E>(
        &mut self,
        mut end: Time,
        first: bool,
        mut each: impl FnMut(&mut Self, Time) -> Result<(), E>,
    ) -> Result<Time, E> {
        // Events handled, added to `stats.events` on the way out (a register, not a store
        // an event).
        let mut n = 0u64;
        if first {
            end = end.min(self.source.earliest_done());
            self.until = self.until.min(end);
        }
        while let Some((t, code)) = self.wheel.pop_before(end) {
            self.dispatch(t, code);
            n += 1;
            if let Err(e) = each(self, t) {
                self.stats.events += n;
                self.last_t = t;
                return Err(e);
            }
            if first {
                end = end.min(self.source.earliest_done());
            }
        }
        if n > 0 {
            self.stats.events += n;
            self.last_t = self.now;
        }
        Ok(end)
    }

    /// Starts loading what the events a few places ahead will touch: their port block (or
    /// endpoint) far ahead, the head packet of their first VC nearer, and for a crossing
    /// nearer still the output block its head packet was routed to. The engine's working
    /// set lives in the last-level cache and every event touches a few scattered lines of it,
    /// so overlapping those loads pays.
    #[inline(always)]
    fn prefetch_ahead(&self) {
        const FAR: usize = 12;
        const NEAR: usize = 6;
        const MID: usize = 3;
        // One bound check for the three look-aheads but in a batch's last `FAR` events.
        let ahead = self.wheel.ahead();
        if let Some(&w) = ahead.get(FAR) {
            self.prefetch_far(w as u32);
            self.prefetch_near(ahead[NEAR] as u32);
            self.prefetch_routed(ahead[MID] as u32);
        } else if let Some(&w) = ahead.get(NEAR) {
            self.prefetch_near(w as u32);
            self.prefetch_routed(ahead[MID] as u32);
        } else if let Some(&w) = ahead.get(MID) {
            self.prefetch_routed(w as u32);
        }
    }

    /// [`Part::prefetch_ahead`] of a crossing `c` a few events ahead: the output block its
    /// head packet was routed to when it entered the input (`route_ahead`), which the
    /// crossing reads next (its head packet was prefetched at `NEAR`).
    #[inline(always)]
    fn prefetch_routed(&self, c: u32) {
        if c < self.in_code || c >= self.nic_code {
            return;
        }
        let ip = &self.inp[(c - self.in_code) as usize];
        if let Some(q) = ip.q.iter().find(|q| q.head != NONE) {
            let out = self.pk[q.head as usize].out();
            if out != OUT_NONE {
                prefetch_block(&self.outp[out as usize]);
            }
        }
    }

    /// [`Part::prefetch_ahead`] of event `c` far ahead: its port block (or endpoint).
    #[inline(always)]
    fn prefetch_far(&self, c: u32) {
        if c < self.in_code {
            prefetch_block(&self.outp[c as usize]);
        } else if c < self.nic_code {
            prefetch_block(&self.inp[(c - self.in_code) as usize]);
        } else {
            // An injection reads the endpoint link's parameters from the input block of
            // its port, then queues the packet there.
            let e = (c - self.nic_code) as usize;
            prefetch(&self.nics[e]);
            prefetch_block(&self.inp[self.r.endpoint_port(e)]);
        }
    }

    /// [`Part::prefetch_ahead`] of event `c` nearer: the head packet of its first VC.
    #[inline(always)]
    fn prefetch_near(&self, c: u32) {
        let head = if c < self.in_code {
            self.outp[c as usize].q[0].head
        } else if c < self.nic_code {
            self.inp[(c - self.in_code) as usize].q[0].head
        } else {
            NONE
        };
        if head != NONE {
            prefetch(&self.pk[head as usize]);
        }
    }

    fn nic_try(&mut self, e: usize) {
        let now = self.now;
        let nic = &mut self.nics[e];
        if let Some(b) = busy_after_turn(&mut nic.sched, nic.busy, now) {
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
        if self.inp[port].credits[0] == 0 {
            self.cret_refresh(port);
            if self.inp[port].credits[0] == 0 {
                match self.cret_front(port) {
                    Some(tc) => self.sched_nic(e, tc),
                    None => self.inp[port].up_wait |= 1,
                }
                return;
            }
        }
        // Inject at `now`, then, for a source whose packets' times are fixed in advance
        // ([`Source::AHEAD`]), the packets that follow while the NIC holds a credit, up to
        // `AHEAD` later (and before `until`): each at the time its
        // own event would have found the link free, the packet ready and a credit, so with
        // the same draws, the same arrival and the same counts at the end, one event for
        // several packets.
        let horizon = if S::AHEAD {
            self.until.min(now.saturating_add(AHEAD))
        } else {
            now
        };
        let ip = &self.inp[port];
        let (lat, ser_full, router) = (ip.lat as Time, ip.ser as Time, ip.router as usize);
        let mut at = now;
        loop {
            self.inp[port].credits[0] -= 1;
            // The packet.
            let (dst, gen, tag) = self.source.take(e, &mut self.nics[e], at, ser_full);
            if gen >= self.w0 && gen < self.w1 {
                self.stats.generated += 1;
            }
            let pid = self.alloc();
            self.set_tag(pid, tag);
            let ser = self.ser_of(pid, ser_full);
            // Store and forward: the switch starts on the packet once its tail is in.
            let arrive = at + lat + self.switch + if self.saf { ser } else { 0 };
            let mut p = Packet {
                gen,
                t: arrive,
                dst,
                next: NONE,
                inter_hops: INTER_NONE,
                out_vc: OUT_NONE,
            };
            self.route_ahead(&mut p, router, true);
            self.pk[pid as usize] = p;
            self.stats.injected += 1;
            self.stats.in_flight += 1;
            self.arrive_linked(port, 0, pid, arrive);
            let nic = &mut self.nics[e];
            let busy = at + ser;
            nic.busy = busy;
            if nic.next == NEVER {
                return;
            }
            let t = busy.max(nic.next);
            if t < horizon && self.inp[port].credits[0] > 0 {
                at = t;
                continue;
            }
            self.sched_nic(e, t);
            return;
        }
    }

    fn out_try(&mut self, o: usize) {
        let now = self.now;
        let op = &mut self.outp[o];
        if let Some(b) = busy_after_turn(&mut op.sched, op.busy, now) {
            self.sched_out(o, b);
            return;
        }
        if self.occ[o] == 0 {
            return;
        }
        let op = &self.outp[o];
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
            let oq = &self.outp[o].q[vc];
            if oq.len == 0 {
                continue;
            }
            if oq.head_t > now {
                wake = wake.min(oq.head_t);
                continue;
            }
            let head = oq.head;
            // The credits toward VC `vc` of the input downstream (an endpoint takes every
            // packet).
            if !ep && self.inp[peer].credits[vc] == 0 {
                if !refreshed {
                    self.cret_refresh(peer);
                    refreshed = true;
                }
                if self.inp[peer].credits[vc] == 0 {
                    match self.cret_front(peer) {
                        Some(tc) => wake = wake.min(tc),
                        None => self.inp[peer].up_wait |= 1 << vc,
                    }
                    continue;
                }
            }
            chosen = Some((vc, head));
            break;
        }
        let Some((vc, pid)) = chosen else {
            if wake != NEVER {
                self.sched_out(o, wake);
            }
            return;
        };
        let ser = self.ser_of(pid, ser);
        // The packet leaves output VC (o, vc): one borrow of each column for the pop, the
        // link and the credit.
        let mut p = *slot(&self.pk, pid);
        let (remote, peer_part) = {
            let op = &mut self.outp[o];
            let oq = &mut op.q[vc];
            oq.head = p.next;
            oq.len -= 1;
            if oq.len > 0 {
                oq.head_t = p.t;
            }
            op.rr = (vc + 1) as u8;
            op.busy = now + ser;
            if now >= self.w0 && now < self.w1 {
                op.sent += 1;
            }
            (op.remote, op.peer_part)
        };
        if !ep {
            self.inp[peer].credits[vc] -= 1;
        }
        if ep {
            self.deliver(pid, now + lat + ser);
        } else {
            let movable = now + lat + self.switch + if self.saf { ser } else { 0 };
            p.t = movable;
            p.add_hop();
            p.clear_out();
            if remote {
                let tag = self.tag(pid);
                self.out_pkts[peer_part as usize].push((((peer as u32) << 5) | vc as u32, p, tag));
                self.free.push(pid);
            } else {
                p.next = NONE;
                let r = self.inp[peer].router as usize;
                self.route_ahead(&mut p, r, false);
                *slot_mut(&mut self.pk, pid) = p;
                self.arrive_linked(peer, vc, pid, movable);
            }
        }
        let occ = &mut self.occ[o];
        *occ -= 1;
        if *occ > 0 {
            self.sched_out(o, now + ser);
        }
        // A slot of (o, vc) freed: wake the first input waiting for it.
        if self.waiting[o] & (1 << vc) != 0 {
            let q = &mut self.waiters[o * V + vc];
            let w = q
                .pop_front()
                .expect("a waiter where the waiting bit is set");
            if q.is_empty() {
                self.waiting[o] &= !(1 << vc);
            }
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
        let st = &mut self.stats;
        st.in_flight -= 1;
        st.delivered_total += 1;
        st.last_delivery = self.now;
        if done >= self.w0 && done < self.w1 {
            st.delivered += 1;
            st.latency.add(done - p.gen);
            let h = p.hops() as usize;
            if st.hops.len() <= h {
                st.hops.resize(h + 1, 0);
            }
            st.hops[h] += 1;
            if p.flags() & F_INDIRECT != 0 {
                st.indirect += 1;
            }
        }
        st.completion = st.completion.max(done);
        let tag = self.tag(pid);
        self.source.delivered(tag, done);
        self.free.push(pid);
        while let Some((at, c)) = self.source.released() {
            self.post(c.src as usize, at, c.dst, (c.packets, c.last), c.msg);
        }
    }

    fn in_try(&mut self, i: usize) {
        let now = self.now;
        let ip = &mut self.inp[i];
        if let Some(b) = busy_after_turn(&mut ip.sched, ip.busy, now) {
            self.sched_in(i, b);
            return;
        }
        let (ep, router, ser_full, lat) = (ip.ep, ip.router as usize, ip.ser as Time, ip.lat);
        let nv = if ep { 1 } else { self.v };
        let start = ip.rr as usize;
        let mut wake = NEVER;
        for k in 0..nv {
            let mut vc = start + k;
            if vc >= nv {
                vc -= nv;
            }
            let ip = &self.inp[i];
            let iq = &ip.q[vc];
            if ip.blocked & (1 << vc) != 0 || iq.head == NONE {
                continue;
            }
            let (pid, arrived) = (iq.head, iq.head_t);
            if arrived > now {
                wake = wake.min(arrived);
                continue;
            }
            let mut p = *slot(&self.pk, pid);
            if p.out() == OUT_NONE {
                self.route(&mut p, router, ep);
                *slot_mut(&mut self.pk, pid) = p;
            }
            // `% V`: the VC is below V (a mask, as V is a power of two: no bounds check).
            let (o, ovc) = (p.out() as usize, p.vc() % V);
            debug_assert_eq!(ovc, p.vc());
            // The input this packet enters next, when its output is idle and it goes on at
            // once: loaded alongside the output's block rather than after it.
            let d = *port_at(&self.down, o);
            if d != NONE {
                prefetch_block(&self.inp[d as usize]);
            }
            let op = port_at(&self.outp, o);
            let cap = if op.ep { self.cap_ep } else { self.cap_vc };
            if op.q[ovc].len >= cap {
                self.inp[i].blocked |= 1 << vc;
                self.waiters[o * V + ovc].push_back((i * V + vc) as u32);
                self.waiting[o] |= 1 << ovc;
                continue;
            }
            let (ser_out, out_busy) = (op.ser as Time, op.busy);
            let ser_in = self.ser_of(pid, ser_full);
            // Virtual cut-through: the output may start once the head is through the
            // switch, but not finish before the tail has arrived (links of unequal speed).
            // Store and forward: the tail is in already.
            let ready = if self.saf {
                now
            } else {
                now.max((arrived + ser_in).saturating_sub(self.switch + ser_out))
            };
            // Cross the switch: pop (i, vc), push (o, ovc), one borrow of each column.
            let (up_remote, up_part) = {
                let Part {
                    inp, outp, pk, occ, ..
                } = self;
                let ip = &mut inp[i];
                let iq = &mut ip.q[vc];
                iq.head = p.next;
                if p.next != NONE {
                    iq.head_t = p.t;
                }
                ip.busy = now + ser_in;
                ip.rr = (vc + 1) as u8;
                let (up_remote, up_part) = (ip.up_remote, ip.up_part);
                slot_mut(pk, pid).next = NONE;
                let oq = &mut port_at_mut(outp, o).q[ovc];
                if oq.len == 0 {
                    oq.head = pid;
                    oq.head_t = ready;
                } else {
                    let t = slot_mut(pk, oq.tail);
                    t.next = pid;
                    t.t = ready;
                }
                oq.tail = pid;
                oq.len += 1;
                *port_at_mut(occ, o) += 1;
                (up_remote, up_part)
            };
            // The slot frees when the tail has left; the credit arrives a latency later (and
            // a PAUSE's reaction later under PAUSE).
            let mut tc = now + ser_in + lat as Time;
            if self.pause_bytes != 0 {
                tc += pause_reaction(ser_full, self.pause_bytes, self.wire_bytes);
            }
            if up_remote {
                self.out_creds[up_part as usize].push((((i as u32) << 5) | vc as u32, tc));
            } else {
                self.credit_returns(i, vc, tc);
            }
            // When the output link frees, if it is busy now; at once (inline, a few calls
            // deep at most) if it is idle.
            let t = ready.max(out_busy);
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
                if ip.blocked & (1 << vc2) == 0 && iq.head != NONE {
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

    /// The serialisation of packet `pid` on a link whose full packets take `ser`: `ser` but
    /// for a short last packet of a message under a switch model with short frames
    /// ([`Switching::packet_serialisation`](super::Switching::packet_serialisation)).
    #[inline(always)]
    fn ser_of(&self, pid: u32, ser: Time) -> Time {
        if self.min_wire == 0 {
            return ser;
        }
        super::Switching::short(
            ser,
            S::payload(self.tag(pid)),
            self.overhead,
            self.min_wire,
            self.wire_bytes,
        )
    }

    /// Routes packet `p`, which enters an input of router `r` (`source`: it has just been
    /// injected), if the decision there draws nothing and reads no buffer
    /// ([`Decider::route_fixed`]): the same decision as at its crossing, taken before it, so
    /// that the crossing finds the output port in the packet and loads the output's block
    /// without first walking the routing tables (whose misses here are not on the path of the
    /// crossing's loads). Otherwise `p` stays unrouted (`OUT_NONE`) and is routed at its
    /// crossing ([`Part::route`]).
    #[inline(always)]
    pub(super) fn route_ahead(&self, p: &mut Packet, r: usize, source: bool) {
        debug_assert_eq!(p.out(), OUT_NONE);
        let dr = self.ep_router[p.dst as usize] as usize;
        if let Some((out, vc)) = self.decide.route_fixed(self.r, r, dr, source, p) {
            p.set_out(out, vc);
        }
    }

    /// Sets the output port and VC of packet `p`, whose head is at router `r`; `source`
    /// when it has just been injected (the routing's decision, [`Decider::route`]).
    #[inline]
    fn route(&mut self, p: &mut Packet, r: usize, source: bool) {
        let dr = self.ep_router[p.dst as usize] as usize;
        let (out, vc) = self
            .decide
            .route(self.r, &self.occ, &mut self.rngs[r], r, dr, source, p);
        p.set_out(out, vc);
    }
}

#[cfg(test)]
#[path = "part_tests.rs"]
mod tests;
