//! The steppable engine: the public [`Engine`] (its docs say how stepping, injections and
//! deliveries behave) and the runner behind it, which advances one part of the network, or
//! several with the parallel runner, and keeps the messages in flight and the deliveries not
//! returned yet.

use super::parallel::advance_parts;
use super::part::Part;
use super::report;
use super::source::{Chained, Source};
use super::watchdog::{deadlock, period, stalled, wait_cycle};
use super::{num_parts, Network, NEVER};
use crate::network::error::param;
use crate::network::stats::Report;
use crate::network::NetworkError;
use crate::units::{format_time, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// A message for an external engine ([`Network::external`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Injection {
    /// When its first packet may be injected (ps), not before the engine's time.
    pub at: Time,
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint (another endpoint than `src`).
    pub dst: u32,
    /// Payload in bytes: `⌈bytes / packet_bytes⌉` packets, one at least.
    pub bytes: u64,
    /// The caller's name for it, handed back in its [`Delivery`].
    pub token: u64,
}

impl Injection {
    /// Refuses a message that an engine of `endpoints` endpoints, advanced to `now`, cannot
    /// take: an endpoint out of range, a message to its own source, a start before `now`.
    pub(crate) fn check(&self, endpoints: usize, now: Time) -> Result<(), NetworkError> {
        for (name, e) in [
            ("message source", self.src),
            ("message destination", self.dst),
        ] {
            if e as usize >= endpoints {
                return Err(param(
                    name,
                    e,
                    format!(
                        "the network has endpoints 0 to {}",
                        endpoints.saturating_sub(1)
                    ),
                ));
            }
        }
        if self.src == self.dst {
            return Err(param(
                "message destination",
                self.dst,
                "a message goes to another endpoint than its source",
            ));
        }
        if self.at < now {
            return Err(param(
                "message start",
                format_time(self.at),
                format!(
                    "the engine has advanced to {}; a message starts at or after it",
                    format_time(now)
                ),
            ));
        }
        Ok(())
    }
}

/// A message whose last packet was delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Delivery {
    /// When the tail of its last packet reached the destination endpoint (ps).
    pub time: Time,
    /// The token it was injected with.
    pub token: u64,
}

/// A run of the packet engine that the caller advances. Made by [`Network::engine`] (a
/// workload) or [`Network::external`] (messages the caller injects).
///
/// # Stepping
/// [`Engine::advance_to`]`(t)` handles every event before `t` (across all parts, with the
/// parallel runner's segments ending at `t` at the latest) and returns the messages whose last
/// packet was delivered before `t`, by delivery time, then token. A delivery is known as soon
/// as the packet leaves the last router, a little before its time: it is held back until the
/// engine has advanced past that time, so that what a call returns depends only on `t`, not on
/// the calls before it. Advancing in many small steps therefore gives exactly the deliveries,
/// and the report, of one large step (only `events` and `wall_seconds` may differ, as they do
/// between thread counts), and so does injecting each message only when the engine has
/// reached its start. [`Engine::next_time`] says how far the caller may advance without
/// anything happening. The report's `end_time` is the time advanced to.
///
/// # Messages
/// [`Engine::inject`] queues a message at its source endpoint, ready at a time not before
/// the engine's; it becomes `⌈bytes / packet_bytes⌉` packets (one for an empty message: its
/// envelope), which the endpoint sends back to back after the messages it holds that start
/// no later (in the order they were injected when they start together). A message is
/// delivered when the tail of its last packet reaches the destination. On an idle network a
/// message of n packets over h router hops is delivered `(h + 2)·L + (h + 1)·S + σ + (n − 1)·σ`
/// after it starts.
///
/// This is the interface a schedule simulator drives in lock-step: a send injects a message,
/// and a network model whose timing depends on global state answers
/// [`Attempt::Retry`](crate::model::Attempt::Retry) until the engine, advanced to the time
/// asked about, has delivered it.
///
/// ```
/// use hypercuboid_core::network::{Delivery, Injection, NetParams, Network, RoutingSpec};
/// use hypercuboid_core::topology::generate;
/// use hypercuboid_core::units::us;
///
/// let topo = generate("mlfm:h=4").unwrap();
/// let net = Network::new(&topo, &RoutingSpec::parse("min").unwrap(), NetParams::default())
///     .unwrap();
/// let mut engine = net.external();
/// // 1 KB (4 packets of 256 B) from endpoint 0 to endpoint 4, two router hops away.
/// engine
///     .inject(&Injection { at: us(1), src: 0, dst: 4, bytes: 1024, token: 7 })
///     .unwrap();
/// assert!(engine.advance_to(us(1)).unwrap().is_empty());
/// let done = us(1) + net.zero_load_latency(2) + 3 * net.serialisation(100.0);
/// assert_eq!(engine.advance_to(us(2)).unwrap(), [Delivery { time: done, token: 7 }]);
/// assert_eq!(engine.report().delivered_total, 4);
/// ```
pub struct Engine<'n> {
    run: Box<dyn Step + Send + 'n>,
    traffic: String,
    /// Wall-clock time spent building and advancing it.
    wall: Duration,
}

impl std::fmt::Debug for Engine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("traffic", &self.traffic)
            .field("now", &self.run.now())
            .finish_non_exhaustive()
    }
}

impl<'n> Engine<'n> {
    /// An engine on `net` fed by `source`, its parts built and their first injections queued.
    pub(super) fn new<S: Source + Clone + 'n>(
        net: &'n Network<'_>,
        source: S,
        traffic: &str,
    ) -> Engine<'n> {
        let start = Instant::now();
        // The VC count is a compile-time constant of the engine, rounded up, so that a port's
        // state and its VC queues share cache lines.
        let run: Box<dyn Step + Send + 'n> = match net.routes.num_vcs() {
            1 => Box::new(Runner::<1, S>::new(net, source)),
            2 => Box::new(Runner::<2, S>::new(net, source)),
            3 | 4 => Box::new(Runner::<4, S>::new(net, source)),
            5..=8 => Box::new(Runner::<8, S>::new(net, source)),
            9..=16 => Box::new(Runner::<16, S>::new(net, source)),
            _ => Box::new(Runner::<32, S>::new(net, source)),
        };
        Engine {
            run,
            traffic: traffic.to_string(),
            wall: start.elapsed(),
        }
    }

    /// The time the engine has advanced to: every event before it has been handled. Starts
    /// at 0; a workload that stops at its duration stops there.
    pub fn now(&self) -> Time {
        self.run.now()
    }

    /// The earliest time at which something is pending (an event, or a delivery not returned
    /// yet), `None` when nothing is: advancing to any time at or before it handles nothing
    /// and returns no delivery.
    pub fn next_time(&mut self) -> Option<Time> {
        self.run.next_time()
    }

    /// Queues message `m` at its source endpoint. Refused (and nothing queued) unless the
    /// engine is external, the endpoints exist and differ, `m.at` is not before
    /// [`Engine::now`] and the message has fewer than 2^32 packets.
    pub fn inject(&mut self, m: &Injection) -> Result<(), NetworkError> {
        // Not timed (a caller in lock-step injects once per message; reading the clock would
        // cost as much as the injection).
        self.run.inject(m)
    }

    /// Queues message `first` like [`Engine::inject`], and message `then` to be sent back
    /// when `first` has been delivered: `then` goes from `first`'s destination to its source,
    /// ready the moment `first`'s last packet arrives (`then.at`, `then.src` and `then.dst`
    /// are not read). This is a rendezvous handshake's clear-to-send and its data, without a
    /// round trip through the caller. Both are delivered like other messages.
    pub fn inject_chained(
        &mut self,
        first: &Injection,
        then_bytes: u64,
        then_token: u64,
    ) -> Result<(), NetworkError> {
        self.run.inject_chained(first, then_bytes, then_token)
    }

    /// Handles every event before `t` and returns the messages whose last packet was
    /// delivered before `t` and not returned yet, by time then token. Nothing happens when
    /// `t` is not after [`Engine::now`]. A deadlock (or an earlier one) is an error.
    pub fn advance_to(&mut self, t: Time) -> Result<&[Delivery], NetworkError> {
        self.advance_timed(t, false)
    }

    /// Advances to the first delivery of a message, or to `t` if none comes at or before it,
    /// and returns the messages delivered then (several when they arrive together); returns
    /// the time reached too. `None` advances to the first delivery, wherever it is (or to the
    /// end when none is left). Messages injected at the time reached afterwards are in time.
    /// This is how a caller in lock-step with the engine moves: nothing it would react to is
    /// passed.
    pub fn advance_to_delivery(
        &mut self,
        t: Option<Time>,
    ) -> Result<(Time, &[Delivery]), NetworkError> {
        // Not timed: a caller in lock-step calls this once per event of its own, and reading
        // the clock would cost more than the call (the report's wall time leaves it out).
        let reached = self.run.advance_first(t.unwrap_or(NEVER))?;
        Ok((reached, self.run.deliveries()))
    }

    /// [`Engine::advance_to`], returning also the messages delivered at `t` itself: a
    /// delivery is known a serialisation time before it happens, so those are known once
    /// every event before `t` has been handled. Messages injected at `t` afterwards are in
    /// time.
    pub fn advance_through(&mut self, t: Time) -> Result<&[Delivery], NetworkError> {
        self.advance_timed(t, true)
    }

    /// Runs to the end: until the workload's duration (synthetic traffic without drain), or
    /// until no event is left (every packet delivered); returns the messages delivered and not
    /// returned yet. [`Engine::now`] is then the duration, or the time of the last event if
    /// that is later than where the engine was.
    pub fn finish(&mut self) -> Result<&[Delivery], NetworkError> {
        self.advance_timed(NEVER, false)
    }

    /// Handles the events before `t` (and at `t` when `inclusive`), adding the wall time it
    /// took to the report's, and returns the messages delivered and not returned yet.
    fn advance_timed(&mut self, t: Time, inclusive: bool) -> Result<&[Delivery], NetworkError> {
        let start = Instant::now();
        let r = self.run.advance(t, inclusive);
        self.wall += start.elapsed();
        r?;
        Ok(self.run.deliveries())
    }

    /// The report of the run so far. Producing it changes nothing: the run goes on as if it
    /// had not been asked for.
    pub fn report(&self) -> Report {
        self.run.report(&self.traffic, self.wall.as_secs_f64())
    }

    /// Packets every port (output side, by global port id) has sent in the measurement window
    /// so far, into `out` (resized to the number of ports): the report's `port_packets`
    /// without the rest of the report.
    pub fn port_packets(&self, out: &mut Vec<u64>) {
        self.run.port_packets(out)
    }
}

/// A run of some VC count and source, behind one interface.
trait Step {
    fn now(&self) -> Time;
    fn next_time(&mut self) -> Option<Time>;
    fn inject(&mut self, m: &Injection) -> Result<(), NetworkError>;
    fn inject_chained(
        &mut self,
        first: &Injection,
        bytes: u64,
        token: u64,
    ) -> Result<(), NetworkError>;
    /// Advances to `t` (to the end when `NEVER`), leaving the deliveries to return (those at
    /// `t` too when `inclusive`).
    fn advance(&mut self, t: Time, inclusive: bool) -> Result<(), NetworkError>;
    /// Advances to the first delivery of a message if there is one before `t` (inclusive),
    /// else to `t`, leaving the deliveries at that time to return; returns the time reached.
    fn advance_first(&mut self, t: Time) -> Result<Time, NetworkError>;
    /// The deliveries of the last advance.
    fn deliveries(&self) -> &[Delivery];
    fn report(&self, traffic: &str, wall: f64) -> Report;
    fn port_packets(&self, out: &mut Vec<u64>);
}

/// The parts of one run and what the engine keeps between calls.
struct Runner<'n, const V: usize, S: Source> {
    parts: Vec<Part<'n, V, S>>,
    lookahead: Time,
    /// When the watchdog looks next.
    next_check: Time,
    /// The time advanced to.
    clock: Time,
    /// The source's end (`NEVER`: none).
    stop: Time,
    /// The error that stopped the run, returned again by every later call.
    failed: Option<NetworkError>,
    packet_bytes: u64,
    /// Tokens of the messages in flight, by message slot, and the free slots.
    tokens: Vec<u64>,
    free: Vec<u32>,
    /// Deliveries known but not returned: `(time, token, slot)`.
    held: BinaryHeap<Reverse<(Time, u64, u32)>>,
    /// The deliveries of the last advance.
    ready: Vec<Delivery>,
    scratch: Vec<(Time, u32)>,
    /// The slot of the last message admitted.
    last_slot: u32,
}

impl<'n, const V: usize, S: Source + Clone> Runner<'n, V, S> {
    fn new(net: &'n Network<'_>, source: S) -> Runner<'n, V, S> {
        // `Network<'t>` is covariant in `'t`: seen as a network of the shorter lifetime.
        let net: &'n Network<'n> = net;
        let (owner, lookahead) = net.partition();
        let parts = (0..num_parts(&owner))
            .map(|p| Part::new(net, source.clone(), p as u8, &owner))
            .collect();
        Runner {
            parts,
            lookahead,
            next_check: net.params.watchdog,
            clock: 0,
            stop: source.stop(),
            failed: None,
            packet_bytes: net.params.packet_bytes as u64,
            tokens: Vec::new(),
            free: Vec::new(),
            held: BinaryHeap::new(),
            ready: Vec::new(),
            scratch: Vec::new(),
            last_slot: 0,
        }
    }
}

impl<const V: usize, S: Source> Runner<'_, V, S> {
    /// Handles every event before `limit` in a run of one part, the watchdog looking after
    /// every event.
    fn advance_alone(&mut self, limit: Time) -> Result<(), NetworkError> {
        self.advance_alone_first(limit, false).map(|_| ())
    }

    /// [`Runner::advance_alone`]; with `first`, stops at the first delivery of a message if
    /// that comes before `limit`; returns where it stopped.
    fn advance_alone_first(&mut self, limit: Time, first: bool) -> Result<Time, NetworkError> {
        let p = &mut self.parts[0];
        let watchdog = p.net.params.watchdog;
        let mut nc = self.next_check;
        let mut events = 0u64;
        let r = p.run_until_first(limit, first, |p, t| {
            events += 1;
            if events.is_multiple_of(crate::cancel::EVERY) {
                crate::cancel::check()?;
            }
            if t >= nc {
                nc = t + period(watchdog);
                if stalled(watchdog, t, p.stats.in_flight, p.stats.last_delivery) {
                    if let Some(cycle) = wait_cycle(std::slice::from_mut(p)) {
                        return Err(deadlock(t, p.stats.in_flight, cycle));
                    }
                }
            }
            Ok(())
        });
        self.next_check = nc;
        let limit = r?;
        if p.wheel.peek_time().is_some() {
            p.now = limit;
            return Ok(limit);
        }
        // No event left.
        if p.stats.in_flight > 0 {
            p.now = p.last_t;
            let cycle = wait_cycle(std::slice::from_mut(p)).unwrap_or_default();
            return Err(deadlock(p.last_t, p.stats.in_flight, cycle));
        }
        p.now = if limit != NEVER { limit } else { p.last_t };
        Ok(limit)
    }

    /// Moves the held deliveries at or before `t` to `ready`.
    fn release_through(&mut self, t: Time) {
        while let Some(&Reverse((time, token, slot))) = self.held.peek() {
            if time > t {
                break;
            }
            self.held.pop();
            self.free.push(slot);
            self.ready.push(Delivery { time, token });
        }
    }

    /// Moves the messages completed in every part to `held`.
    fn collect(&mut self) {
        for p in &mut self.parts {
            p.source.completed(&mut self.scratch);
        }
        for &(t, slot) in &self.scratch {
            self.held
                .push(Reverse((t, self.tokens[slot as usize], slot)));
        }
        self.scratch.clear();
    }
}

impl<const V: usize, S: Source> Step for Runner<'_, V, S> {
    fn now(&self) -> Time {
        self.clock
    }

    fn next_time(&mut self) -> Option<Time> {
        let events = self
            .parts
            .iter_mut()
            .filter_map(|p| p.wheel.peek_time())
            .min()
            .filter(|&t| t < self.stop);
        let held = self.held.peek().map(|r| r.0 .0);
        match (events, held) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn inject(&mut self, m: &Injection) -> Result<(), NetworkError> {
        let (packets, slot) = self.admit(m)?;
        let last = self.last_payload(m.bytes, packets);
        let p0 = &self.parts[0];
        let part = p0.owner[p0.ep_router[m.src as usize] as usize] as usize;
        let posted = self.parts[part].post(m.src as usize, m.at, m.dst, (packets, last), slot);
        debug_assert!(posted, "an external source takes every message");
        Ok(())
    }

    fn inject_chained(
        &mut self,
        first: &Injection,
        bytes: u64,
        token: u64,
    ) -> Result<(), NetworkError> {
        let back = Injection {
            at: first.at,
            src: first.dst,
            dst: first.src,
            bytes,
            token,
        };
        // Checked (and its slot taken) first, so that a refusal queues nothing.
        let (packets, slot) = self.admit(&back)?;
        let last = self.last_payload(bytes, packets);
        if let Err(e) = self.inject(first) {
            self.free.push(slot);
            return Err(e);
        }
        let first_slot = self.last_slot;
        let p0 = &self.parts[0];
        let part = p0.owner[p0.ep_router[first.dst as usize] as usize] as usize;
        let held = self.parts[part].source.chain(
            first_slot,
            Chained {
                src: first.dst,
                dst: first.src,
                packets,
                last,
                msg: slot,
            },
        );
        debug_assert!(held, "an external source takes every message");
        Ok(())
    }

    fn advance(&mut self, t: Time, inclusive: bool) -> Result<(), NetworkError> {
        self.advance_impl(t, inclusive)
    }

    fn advance_first(&mut self, t: Time) -> Result<Time, NetworkError> {
        self.ready.clear();
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        loop {
            // The earliest delivery known and not returned bounds how far to go.
            let held = self.held.peek().map_or(NEVER, |r| r.0 .0);
            let limit = t.min(self.stop).min(held);
            if limit != NEVER && limit < self.clock {
                return Ok(self.clock);
            }
            if self.parts.len() == 1 {
                let r = self.advance_alone_first(limit, true);
                let reached = match r {
                    Ok(x) => x,
                    Err(e) => {
                        self.failed = Some(e.clone());
                        return Err(e);
                    }
                };
                let reached = if reached == NEVER {
                    self.parts[0].last_t.max(self.clock)
                } else {
                    reached
                };
                self.clock = reached;
                self.collect();
                self.release_through(reached);
                return Ok(reached);
            }
            // Several parts: one event time at a time (a segment of the parallel runner could
            // pass a delivery).
            let next = self
                .parts
                .iter_mut()
                .filter_map(|p| p.wheel.peek_time())
                .min()
                .unwrap_or(NEVER);
            if next >= limit {
                self.advance_impl(limit, true)?;
                if limit == NEVER {
                    return Ok(self.clock);
                }
                return Ok(limit);
            }
            self.advance_impl(next + 1, false)?;
            if !self.ready.is_empty() {
                return Ok(self.clock);
            }
        }
    }

    fn deliveries(&self) -> &[Delivery] {
        &self.ready
    }

    fn report(&self, traffic: &str, wall: f64) -> Report {
        report::build(&self.parts, traffic, self.clock, wall)
    }

    fn port_packets(&self, out: &mut Vec<u64>) {
        report::port_packets(&self.parts, out)
    }
}

impl<const V: usize, S: Source> Runner<'_, V, S> {
    /// The payload bytes of the last of the `packets` packets of a message of `bytes`.
    fn last_payload(&self, bytes: u64, packets: u32) -> u32 {
        (bytes - (packets as u64 - 1) * self.packet_bytes) as u32
    }

    /// Checks message `m` and takes a slot for it: its packets and slot.
    fn admit(&mut self, m: &Injection) -> Result<(u32, u32), NetworkError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let p0 = &self.parts[0];
        let n = p0.nics.len();
        if !matches!(p0.source.feed(), super::source::Feed::External) {
            return Err(param(
                "injection",
                format!("of message {}", m.token),
                "only an engine made by Network::external takes messages; this one runs a \
                 workload",
            ));
        }
        m.check(n, self.clock)?;
        let packets = u32::try_from(m.bytes.div_ceil(self.packet_bytes).max(1)).map_err(|_| {
            param(
                "message size",
                m.bytes,
                "more than 2^32 packets in one message",
            )
        })?;
        let slot = match self.free.pop() {
            Some(s) => {
                self.tokens[s as usize] = m.token;
                s
            }
            None => {
                let s = u32::try_from(self.tokens.len()).map_err(|_| {
                    param(
                        "messages in flight",
                        self.tokens.len(),
                        "at most 2^32 messages at once",
                    )
                })?;
                self.tokens.push(m.token);
                s
            }
        };
        self.last_slot = slot;
        Ok((packets, slot))
    }

    fn advance_impl(&mut self, t: Time, inclusive: bool) -> Result<(), NetworkError> {
        self.ready.clear();
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let limit = t.min(self.stop);
        if limit != NEVER && limit <= self.clock {
            if inclusive && limit == self.clock {
                self.release_through(limit);
            }
            return Ok(());
        }
        let r = if self.parts.len() == 1 {
            self.advance_alone(limit)
        } else {
            advance_parts(&mut self.parts, self.lookahead, limit, &mut self.next_check)
        };
        if let Err(e) = r {
            self.failed = Some(e.clone());
            return Err(e);
        }
        // At the end of a run without a stop time, the engine is where its last event was
        // (or where it had been advanced to, if later).
        self.clock = if limit != NEVER {
            limit
        } else {
            let last = self.parts.iter().map(|p| p.last_t).max().unwrap_or(0);
            self.clock.max(last)
        };
        self.collect();
        // Deliveries before the time advanced to; all of them at the end of the run.
        if limit == NEVER {
            self.release_through(NEVER);
        } else if inclusive {
            self.release_through(limit);
        } else {
            self.release_through(limit - 1);
        }
        Ok(())
    }
}
