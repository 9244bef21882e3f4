//! Traffic sources: what the endpoints send, behind one [`Source`] trait.
//!
//! An endpoint injects into its router's endpoint port at up to its link rate, subject to
//! credits; the source says when its next packet is ready and, when the endpoint takes it,
//! where it goes. Three sources:
//!
//! * [`SyntheticSource`] — a Bernoulli process with probability `load` per serialisation slot
//!   (unbounded source queue), destinations from a [`Pattern`]. Endpoint e draws its gaps from
//!   stream `2e` of the seed and its uniform destinations from stream `2e + 1`, one gap per
//!   generated packet and one destination per injected packet, so the offered traffic does not
//!   depend on the routing, the number of threads or how the run is stepped.
//! * [`ExchangeSource`] — the messages of an [`ExchangePlan`], sent back to back from time 0,
//!   one after the other or interleaved packet by packet.
//! * [`ExternalSource`] — messages the caller injects while the engine runs (a schedule
//!   simulator): each is `packets` packets from one endpoint to another, ready at a given time;
//!   an endpoint sends its messages back to back in the order of their start times (ties in
//!   the order they were injected), or ([`NicOrder::Interleave`]) one packet of each ready
//!   message in turn. The destination's part counts a message's packets as they
//!   are delivered and records when its last one arrived.
//!
//! A source keeps its per-endpoint state in the endpoint's NIC record (`Nic::ep`), next to
//! the NIC's own state, so that an injection touches one cache line; packets carry a `Tag` for
//! their source (the message of an external source, nothing otherwise), kept beside the packet
//! records so that those stay 32 bytes.
//!
//! Producing a report reads a source ([`Source::backlog`]) without changing it: the packets a
//! synthetic source generated before the end but did not inject are counted by replaying its
//! generation on a copy of the endpoint's random stream.

use super::ports::Nic;
use super::{NicOrder, NEVER};
use crate::network::rng::SplitMix64;
use crate::network::routing::NONE;
use crate::network::traffic::{ExchangePlan, Pattern};
use crate::network::Synthetic;
use crate::units::Time;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// What fed a run, as the report describes it.
#[derive(Clone, Copy, Debug)]
pub(super) enum Feed<'a> {
    /// Synthetic traffic.
    Synthetic(&'a Synthetic),
    /// An exchange.
    Exchange(&'a ExchangePlan),
    /// Messages injected by the caller.
    External,
}

/// A traffic source: the state behind the endpoints of one part of the network (see the
/// [module docs](self)).
pub(super) trait Source: Send {
    /// What a packet carries for its source.
    type Tag: Copy + Default + Send;
    /// What the source keeps per endpoint.
    type Endpoint: Clone + Send;

    /// The times of an endpoint's packets are fixed in advance (they depend on its own
    /// stream only, never on a message posted later), so that a NIC may inject the packets
    /// that follow one it injects, while it holds credits, without an event of their own.
    const AHEAD: bool = false;

    /// What fed the run.
    fn feed(&self) -> Feed<'_>;

    /// The run ends at the first event at or after this time (`NEVER`: when no event is left).
    fn stop(&self) -> Time;

    /// The measurement window `[start, end)` while the run goes: packets generated, delivered
    /// and sent on links in it are counted.
    fn window(&self) -> (Time, Time);

    /// The state of endpoint `e`, whose injection link serialises a packet in `ser`, and when
    /// its first packet is ready (`NEVER`: none); `mine` when this part simulates it (the
    /// others' state is never read).
    fn endpoint(&self, e: usize, ser: Time, mine: bool) -> (Self::Endpoint, Time);

    /// Endpoint `e` takes its next packet at `now` (at or after `nic.next`): its destination,
    /// generation time and tag. Sets `nic.next` to when the packet after it is ready.
    fn take(
        &mut self,
        e: usize,
        nic: &mut Nic<Self::Endpoint>,
        now: Time,
        ser: Time,
    ) -> (u32, Time, Self::Tag);

    /// A packet carrying `tag` was delivered: its tail reached its destination at `done`.
    #[inline]
    fn delivered(&mut self, tag: Self::Tag, done: Time) {
        let _ = (tag, done);
    }

    /// True when endpoint `e` sends at all (its link counts toward the injection capacity).
    fn sends(&self, e: usize, ep: &Self::Endpoint) -> bool;

    /// `(queued, generated)` of an endpoint whose next packet is ready at `next`, by `end`:
    /// packets generated (or posted) before `end` but not injected, and how many of those
    /// were generated in the window. Reads the state without changing it.
    fn backlog(&self, ep: &Self::Endpoint, next: Time, end: Time, ser: Time) -> (u64, u64);

    /// Queues message `msg` of `packets` packets to endpoint `dst`, ready at `at` (not before
    /// the current time), at endpoint `nic`; its last packet carries `last` bytes of payload.
    /// `Some(true)` when it became the endpoint's next message (the NIC must be woken at
    /// `at`), `Some(false)` when it queued behind others, `None` when the source takes no
    /// messages of the caller.
    fn post(
        &mut self,
        nic: &mut Nic<Self::Endpoint>,
        at: Time,
        dst: u32,
        (packets, last): (u32, u32),
        msg: u32,
    ) -> Option<bool> {
        let _ = (nic, at, dst, packets, last, msg);
        None
    }

    /// The payload bytes of the packet tagged `tag`; [`FULL`] for a packet of the engine's
    /// size (every packet of the synthetic and exchange sources).
    #[inline(always)]
    fn payload(tag: Self::Tag) -> u32 {
        let _ = tag;
        FULL
    }

    /// Moves the messages whose last packet was delivered since the last call to `out`, as
    /// `(delivery time, message)`.
    fn completed(&mut self, out: &mut Vec<(Time, u32)>) {
        let _ = out;
    }

    /// Holds message `then` until message `after` has been delivered at its destination
    /// endpoint (this part's): it is then posted there, ready at that time. False when the
    /// source takes no messages of the caller.
    fn chain(&mut self, after: u32, then: Chained) -> bool {
        let _ = (after, then);
        false
    }

    /// The earliest delivery time among the messages complete since the last
    /// [`Source::completed`] (`NEVER`: none).
    fn earliest_done(&self) -> Time {
        NEVER
    }

    /// A message that a delivery released ([`Source::chain`]), to post now.
    fn released(&mut self) -> Option<(Time, Chained)> {
        None
    }
}

/// The payload of a packet of the engine's size ([`Source::payload`]).
pub(super) const FULL: u32 = u32::MAX;

/// A message held until another is delivered ([`Source::chain`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Chained {
    /// Its source endpoint (the destination of the message it waits for).
    pub src: u32,
    /// Its destination endpoint.
    pub dst: u32,
    /// Its packets.
    pub packets: u32,
    /// The payload bytes of its last packet.
    pub last: u32,
    /// Its slot in the engine's table.
    pub msg: u32,
}

// -- synthetic ---------------------------------------------------------------------------------

/// Synthetic traffic at an offered load (see the [module docs](self)).
#[derive(Clone, Debug)]
pub(super) struct SyntheticSource<'a> {
    s: &'a Synthetic,
    seed: u64,
    /// Endpoints.
    n: u64,
    /// ln(1 − load), for the geometric gaps.
    ln_q: f64,
    /// Where the gap's value changes, as draws of [`SplitMix64::unit_index`]: entry j − 1
    /// brackets the m at which ⌊ln(m · 2^-53) / ln(1 − load)⌋ reaches j (see [`gap_bounds`]).
    /// Empty when the gaps are long enough for the logarithm to be cheaper.
    bounds: Vec<(u64, u64)>,
}

/// The brackets `(lo, hi)` of the first gaps of a Bernoulli process of parameter `1 − e^ln_q`
/// drawn as ⌊ln u / ln_q⌋ with u = m · 2^-53: a draw m > hi gives a gap below j, a draw
/// m < lo a gap of j or more, and a draw in between is computed with the logarithm. The
/// boundary is m = e^(j · ln_q) · 2^53; the brackets lie 2^-30 of it on either side, far beyond
/// the rounding of the logarithm and the division (under 2^-50 · j relative, for j ≤ 64), so
/// that every draw outside them gives the logarithm's gap: the same draws, bit for bit.
/// Empty when more than 64 brackets would be needed for gaps of probability 0.999 (a load
/// below about 10 %): a walk through them would cost more than the logarithm.
fn gap_bounds(ln_q: f64) -> Vec<(u64, u64)> {
    const MAX: usize = 64;
    let scale = (1u64 << 53) as f64;
    let guard = (-30f64).exp2();
    let needed = (0.001f64.ln() / ln_q).ceil();
    if !(1.0..=MAX as f64).contains(&needed) {
        return Vec::new();
    }
    (1..=needed as u64)
        .map(|j| {
            let m = (j as f64 * ln_q).exp() * scale;
            (
                (m * (1.0 - guard)).floor() as u64,
                (m * (1.0 + guard)).ceil() as u64,
            )
        })
        .collect()
}

/// A synthetic endpoint: the slot of its next packet, its fixed destination (maps) and its
/// random streams.
#[derive(Clone, Debug)]
pub(super) struct SyntheticEndpoint {
    /// Slot index of the next packet.
    slot: u64,
    fixed: u32,
    gap_rng: SplitMix64,
    dst_rng: SplitMix64,
}

impl<'a> SyntheticSource<'a> {
    /// The source of `s` on `n` endpoints, drawing from `seed`'s streams.
    pub(super) fn new(s: &'a Synthetic, seed: u64, n: usize) -> SyntheticSource<'a> {
        let ln_q = (1.0 - s.load).ln();
        SyntheticSource {
            s,
            seed,
            n: n as u64,
            ln_q,
            bounds: if s.load < 1.0 {
                gap_bounds(ln_q)
            } else {
                Vec::new()
            },
        }
    }

    /// Slots to the next generated packet (Bernoulli per slot): from slot 0 when `first`.
    /// The gap is ⌊ln u / ln(1 − load)⌋ of a uniform u in (0, 1]; most draws are placed by a
    /// few comparisons with [`SyntheticSource::bounds`] instead (the same value).
    #[inline]
    fn gap(&self, rng: &mut SplitMix64, first: bool) -> u64 {
        let base = if first { 0 } else { 1 };
        if self.s.load >= 1.0 {
            return base;
        }
        let m = rng.unit_index();
        match self.gap_bracketed(m) {
            Some(k) => base + k,
            None => self.gap_log(m, base),
        }
    }

    /// ⌊ln(m · 2^-53) / ln(1 − load)⌋ of draw `m` when [`SyntheticSource::bounds`] place it
    /// outside every bracket; `None` when the logarithm must decide.
    #[inline]
    fn gap_bracketed(&self, m: u64) -> Option<u64> {
        for (j, &(lo, hi)) in self.bounds.iter().enumerate() {
            if m > hi {
                return Some(j as u64);
            }
            if m >= lo {
                break;
            }
        }
        None
    }

    /// [`SyntheticSource::gap`] of draw `m` by the logarithm.
    #[inline(never)]
    fn gap_log(&self, m: u64, base: u64) -> u64 {
        let u = SplitMix64::unit_of(m);
        let k = (u.ln() / self.ln_q).floor();
        if k >= 1e15 {
            return u64::MAX / 4;
        }
        base + k as u64
    }
}

impl Source for SyntheticSource<'_> {
    type Tag = ();
    type Endpoint = SyntheticEndpoint;
    const AHEAD: bool = true;

    fn feed(&self) -> Feed<'_> {
        Feed::Synthetic(self.s)
    }

    fn stop(&self) -> Time {
        if self.s.drain {
            NEVER
        } else {
            self.s.duration
        }
    }

    fn window(&self) -> (Time, Time) {
        (self.s.warmup, self.s.duration)
    }

    fn endpoint(&self, e: usize, ser: Time, mine: bool) -> (SyntheticEndpoint, Time) {
        let fixed = match &self.s.pattern {
            Pattern::Uniform => e as u32, // unused
            Pattern::Map(m) => m[e],
        };
        let mut ep = SyntheticEndpoint {
            slot: 0,
            fixed,
            gap_rng: SplitMix64::stream(self.seed, 2 * e as u64),
            dst_rng: SplitMix64::stream(self.seed, 2 * e as u64 + 1),
        };
        if !self.sends(e, &ep) || !mine {
            return (ep, NEVER);
        }
        let first = self.gap(&mut ep.gap_rng, true);
        ep.slot = first;
        let t = first.saturating_mul(ser);
        (ep, if t < self.s.duration { t } else { NEVER })
    }

    #[inline]
    fn take(
        &mut self,
        e: usize,
        nic: &mut Nic<SyntheticEndpoint>,
        _now: Time,
        ser: Time,
    ) -> (u32, Time, ()) {
        let dst = match self.s.pattern {
            Pattern::Uniform => {
                let d = nic.ep.dst_rng.below(self.n - 1);
                (if d >= e as u64 { d + 1 } else { d }) as u32
            }
            Pattern::Map(_) => nic.ep.fixed,
        };
        let gen = nic.next;
        let g = self.gap(&mut nic.ep.gap_rng, false);
        let ep = &mut nic.ep;
        ep.slot = ep.slot.saturating_add(g);
        let t = ep.slot.saturating_mul(ser);
        nic.next = if t < self.s.duration { t } else { NEVER };
        (dst, gen, ())
    }

    fn sends(&self, e: usize, _ep: &SyntheticEndpoint) -> bool {
        match &self.s.pattern {
            Pattern::Uniform => true,
            Pattern::Map(m) => m[e] != NONE && m[e] as usize != e,
        }
    }

    fn backlog(&self, ep: &SyntheticEndpoint, next: Time, end: Time, ser: Time) -> (u64, u64) {
        if next == NEVER {
            return (0, 0);
        }
        let (w0, w1) = self.window();
        let mut rng = ep.gap_rng.clone();
        let mut slot = ep.slot;
        let (mut queued, mut generated) = (0, 0);
        loop {
            let t = slot.saturating_mul(ser);
            if t >= self.s.duration || t >= end {
                break;
            }
            queued += 1;
            if t >= w0 && t < w1 {
                generated += 1;
            }
            let g = self.gap(&mut rng, false);
            slot = slot.saturating_add(g);
        }
        (queued, generated)
    }
}

// -- exchange ----------------------------------------------------------------------------------

/// The messages of an exchange (see the [module docs](self)).
#[derive(Clone, Debug)]
pub(super) struct ExchangeSource<'a> {
    x: &'a ExchangePlan,
}

/// An exchange endpoint: packets sent and in all.
#[derive(Clone, Debug)]
pub(super) struct ExchangeEndpoint {
    sent: u64,
    total: u64,
}

impl<'a> ExchangeSource<'a> {
    /// The source of plan `x`.
    pub(super) fn new(x: &'a ExchangePlan) -> ExchangeSource<'a> {
        ExchangeSource { x }
    }
}

impl Source for ExchangeSource<'_> {
    type Tag = ();
    type Endpoint = ExchangeEndpoint;

    fn feed(&self) -> Feed<'_> {
        Feed::Exchange(self.x)
    }

    fn stop(&self) -> Time {
        NEVER
    }

    fn window(&self) -> (Time, Time) {
        (0, NEVER)
    }

    fn endpoint(&self, e: usize, _ser: Time, mine: bool) -> (ExchangeEndpoint, Time) {
        let x = self.x;
        let total = if mine {
            (x.off[e + 1] - x.off[e]) * x.packets_per_message as u64
        } else {
            0
        };
        let next = if total > 0 { 0 } else { NEVER };
        (ExchangeEndpoint { sent: 0, total }, next)
    }

    #[inline]
    fn take(
        &mut self,
        e: usize,
        nic: &mut Nic<ExchangeEndpoint>,
        now: Time,
        _ser: Time,
    ) -> (u32, Time, ()) {
        let x = self.x;
        let ep = &mut nic.ep;
        let k = ep.sent;
        let per = x.packets_per_message as u64;
        let m = x.off[e + 1] - x.off[e];
        let idx = if x.interleave { k % m } else { k / per };
        ep.sent += 1;
        nic.next = if ep.sent < ep.total { 0 } else { NEVER };
        (x.dest[(x.off[e] + idx) as usize], now, ())
    }

    fn sends(&self, e: usize, _ep: &ExchangeEndpoint) -> bool {
        self.x.off[e + 1] > self.x.off[e]
    }

    fn backlog(&self, ep: &ExchangeEndpoint, _next: Time, _end: Time, _ser: Time) -> (u64, u64) {
        (ep.total - ep.sent, 0)
    }
}

// -- external ----------------------------------------------------------------------------------

/// The message a packet of an external source belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct MessageTag {
    /// The message's slot in the engine's table.
    msg: u32,
    /// Its packets.
    packets: u32,
    /// This packet's payload bytes ([`FULL`] but for a message's last packet).
    bytes: u32,
}

/// A message waiting at its source endpoint (or being sent).
#[derive(Clone, Copy, Debug)]
struct Outgoing {
    /// When its packets may be injected.
    at: Time,
    dst: u32,
    /// Packets not injected yet.
    left: u32,
    /// The payload bytes of its last packet.
    last: u32,
    tag: MessageTag,
}

/// An external endpoint: the messages it has to send, in the order it sends them.
#[derive(Clone, Debug, Default)]
pub(super) struct ExternalEndpoint {
    queue: VecDeque<Outgoing>,
    /// Some message was ever posted here.
    sends: bool,
}

/// Messages injected by the caller (see the [module docs](self)).
#[derive(Clone, Debug)]
pub(super) struct ExternalSource {
    /// Packets delivered so far of the messages to this part's endpoints, by message slot
    /// (messages of one packet complete at once and never enter).
    arrived: Vec<u32>,
    /// Messages complete since the last `completed`.
    done: Vec<(Time, u32)>,
    /// Messages held until the message of the key (to one of this part's endpoints) is
    /// delivered.
    chains: FxHashMap<u32, Chained>,
    /// Messages released by deliveries and not posted yet.
    release: Vec<(Time, Chained)>,
    /// The earliest time in `done` (`NEVER` when empty).
    earliest: Time,
    /// An endpoint sends the packets of its ready messages in turn ([`NicOrder::Interleave`]),
    /// not one message after the other.
    interleave: bool,
}

impl ExternalSource {
    /// A source whose endpoints order their messages' packets as `order` says.
    pub(super) fn new(order: NicOrder) -> ExternalSource {
        ExternalSource {
            interleave: order == NicOrder::Interleave,
            ..ExternalSource::default()
        }
    }
}

impl Default for ExternalSource {
    fn default() -> Self {
        ExternalSource {
            arrived: Vec::new(),
            done: Vec::new(),
            chains: FxHashMap::default(),
            release: Vec::new(),
            earliest: NEVER,
            interleave: false,
        }
    }
}

impl Source for ExternalSource {
    type Tag = MessageTag;
    type Endpoint = ExternalEndpoint;

    fn feed(&self) -> Feed<'_> {
        Feed::External
    }

    fn stop(&self) -> Time {
        NEVER
    }

    fn window(&self) -> (Time, Time) {
        (0, NEVER)
    }

    fn endpoint(&self, _e: usize, _ser: Time, _mine: bool) -> (ExternalEndpoint, Time) {
        (ExternalEndpoint::default(), NEVER)
    }

    #[inline]
    fn take(
        &mut self,
        _e: usize,
        nic: &mut Nic<ExternalEndpoint>,
        now: Time,
        _ser: Time,
    ) -> (u32, Time, MessageTag) {
        let q = &mut nic.ep.queue;
        let head = q
            .front_mut()
            .expect("an endpoint takes a packet only when one is ready");
        let (dst, mut tag) = (head.dst, head.tag);
        if head.left == 1 {
            tag.bytes = head.last;
        }
        head.left -= 1;
        if head.left == 0 {
            q.pop_front();
        } else if self.interleave && q.len() > 1 {
            // Round robin over the messages ready now: the head goes behind the last of them
            // (the queue stays partitioned into ready and later messages, the later sorted).
            let m = q.pop_front().expect("the head exists");
            let k = q.partition_point(|o| o.at <= now);
            q.insert(k, m);
        }
        nic.next = q.front().map_or(NEVER, |m| m.at);
        (dst, now, tag)
    }

    #[inline]
    fn delivered(&mut self, tag: MessageTag, done: Time) {
        if tag.packets != 1 {
            let i = tag.msg as usize;
            if i >= self.arrived.len() {
                self.arrived.resize(i + 1, 0);
            }
            let n = &mut self.arrived[i];
            *n += 1;
            if *n < tag.packets {
                return;
            }
            *n = 0;
        }
        self.done.push((done, tag.msg));
        self.earliest = self.earliest.min(done);
        if !self.chains.is_empty() {
            if let Some(c) = self.chains.remove(&tag.msg) {
                self.release.push((done, c));
            }
        }
    }

    fn chain(&mut self, after: u32, then: Chained) -> bool {
        self.chains.insert(after, then);
        true
    }

    #[inline(always)]
    fn payload(tag: MessageTag) -> u32 {
        tag.bytes
    }

    #[inline]
    fn released(&mut self) -> Option<(Time, Chained)> {
        self.release.pop()
    }

    fn sends(&self, _e: usize, ep: &ExternalEndpoint) -> bool {
        ep.sends
    }

    fn backlog(&self, ep: &ExternalEndpoint, _next: Time, end: Time, _ser: Time) -> (u64, u64) {
        let queued = ep
            .queue
            .iter()
            .filter(|m| m.at < end)
            .map(|m| m.left as u64)
            .sum();
        (queued, 0)
    }

    fn post(
        &mut self,
        nic: &mut Nic<ExternalEndpoint>,
        at: Time,
        dst: u32,
        (packets, last): (u32, u32),
        msg: u32,
    ) -> Option<bool> {
        let ep = &mut nic.ep;
        ep.sends = true;
        // After every message that starts at or before `at`: a message being sent started
        // before the current time, so it stays ahead.
        let k = ep.queue.partition_point(|m| m.at <= at);
        ep.queue.insert(
            k,
            Outgoing {
                at,
                dst,
                left: packets,
                last,
                tag: MessageTag {
                    msg,
                    packets,
                    bytes: FULL,
                },
            },
        );
        nic.next = ep.queue.front().map_or(NEVER, |m| m.at);
        Some(k == 0)
    }

    fn completed(&mut self, out: &mut Vec<(Time, u32)>) {
        out.append(&mut self.done);
        self.earliest = NEVER;
    }

    #[inline]
    fn earliest_done(&self) -> Time {
        self.earliest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gaps placed through the brackets are the logarithm's, for random draws and for
    /// the draws at and next to every bracket's ends, at loads with and without brackets.
    #[test]
    fn bracketed_gaps_are_the_logarithms() {
        for load in [0.05, 0.11, 0.3, 0.5, 0.9, 0.999] {
            let s = Synthetic::new(Pattern::Uniform, load);
            let src = SyntheticSource::new(&s, 1, 16);
            let ln_q = (1.0f64 - load).ln();
            assert_eq!(src.bounds.is_empty(), load < 0.11, "load {load}");
            let by_log = |m: u64| {
                let k = (SplitMix64::unit_of(m).ln() / ln_q).floor();
                1 + k as u64
            };
            let mut draws: Vec<u64> = vec![1, 2, 1 << 52, (1 << 53) - 1, 1 << 53];
            for &(lo, hi) in &src.bounds {
                assert!(lo < hi, "load {load}: bracket {lo}..{hi}");
                for m in [lo - 1, lo, lo + 1, hi - 1, hi, hi + 1] {
                    draws.push(m);
                }
            }
            let mut rng = SplitMix64::stream(9, 3);
            draws.extend((0..100_000).map(|_| rng.unit_index()));
            for m in draws {
                // A generator whose next `unit_index` is `m` cannot be built; the bracket
                // walk is checked on the draw itself.
                let want = by_log(m);
                assert_eq!(src.gap_log(m, 1), want, "load {load}, draw {m}");
                if let Some(k) = src.gap_bracketed(m) {
                    assert_eq!(1 + k, want, "load {load}, draw {m}");
                }
            }
            // Through the generator: the same sequence of gaps as the logarithm's.
            let (mut a, mut b) = (SplitMix64::stream(5, 8), SplitMix64::stream(5, 8));
            for _ in 0..10_000 {
                assert_eq!(
                    src.gap(&mut a, false),
                    by_log(b.unit_index()),
                    "load {load}"
                );
            }
        }
    }
}
