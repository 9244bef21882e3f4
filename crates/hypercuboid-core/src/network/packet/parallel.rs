//! The parallel runner: parts of the network simulated side by side, one thread each.
//!
//! With `threads` > 1 the routers are split into parts, runs of consecutive routers with about
//! as many ports each ([`Network::partition`](super::Network::partition)); a thread simulates
//! each part (its ports, its endpoints, its packets). A part affects another only through a
//! link between them: a packet sent on it, which can cross the next switch no sooner than a
//! link latency and a switch traversal later (L + S), and a credit returned on it, which
//! arrives a serialisation and a latency after its packet started to leave the input
//! (σ + L). The smallest such reach of a link between parts, L + min(S, σ), is the
//! lookahead: nothing a part does at `t` reaches another before `t + lookahead`.
//!
//! The parts advance conservatively, each at its own pace (see `Part::segment`): a part
//! publishes its progress (every event it will still handle is at that time or later) after
//! each slice of its events, its mail to the others first, and may handle an event before
//! `h` once every other part's progress is past `h − lookahead` and it has taken in their
//! mail. A part may so run up to a lookahead ahead of the slowest other; one that finished
//! a slice early goes on with the next, rather than wait at a barrier for the slowest part
//! of every window. Segments of many lookaheads, each started at the earliest pending event
//! of all parts (so that an idle network is skipped over) and ended no later than where the
//! run is asked to stop (its end, or the time a stepped engine advances to), are separated
//! by two barriers, where the mail still in the mailboxes is taken in and the watchdog
//! looks. A part handles its own events in the same order as a single thread does (the order
//! depends only on what is queued, not on when), so the results — every packet's path and
//! time — do not depend on the number of threads, nor on the pace of the parts; `events`
//! alone may differ.

use super::part::Part;
use super::ports::Packet;
use super::source::Source;
use super::watchdog::{deadlock, period, stalled, wait_cycle};
use super::NEVER;
use crate::barrier::{Barrier, PoisonOnPanic, Waiter};
use crate::network::NetworkError;
use crate::units::Time;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};
use std::sync::Mutex;

/// What a thread of a parallel run found when it stopped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    /// No event is left.
    Drained,
    /// The next event is at or after the limit.
    Stopped,
    /// Nothing was delivered for a watchdog period at this time: look for a deadlock.
    Check(Time),
    /// A part saw a request to stop ([`crate::cancel`]).
    Interrupted,
}

/// Messages from one part to another, handed over after each slice of the sender's events
/// and taken in by the receiver before it handles an event they may precede.
struct Mail<T> {
    pkts: Vec<(u32, Packet, T)>,
    creds: Vec<(u32, Time)>,
}

impl<T> Default for Mail<T> {
    fn default() -> Self {
        Mail {
            pkts: Vec::new(),
            creds: Vec::new(),
        }
    }
}

/// What the threads of a parallel run share.
struct Shared<T> {
    parts: usize,
    lookahead: Time,
    /// `mail[src · parts + dst]`: what part `src` has sent part `dst` and `dst` has not taken
    /// in yet.
    mail: Vec<Mutex<Mail<T>>>,
    /// Per part, within a segment: every event it will handle from now on is at this time or
    /// later, and every message it sent before is in the mailboxes (stored with `Release`
    /// after the mail).
    progress: Vec<Padded<AtomicU64>>,
    /// Per part, between the two barriers that end a segment: its next event, its packets in
    /// flight and its last delivery.
    next: Vec<AtomicU64>,
    in_flight: Vec<AtomicI64>,
    last_delivery: Vec<AtomicU64>,
    /// Per part, between the same two barriers: whether it saw a request to stop.
    stop: Vec<AtomicBool>,
    /// Where parts wait for another part's progress.
    moved: Waiter,
    barrier: Barrier,
}

/// A value on a cache line of its own, so that a part publishing its progress does not
/// disturb the line another part's progress is read from.
#[repr(align(128))]
struct Padded<T>(T);

impl<T> Shared<T> {
    fn new(parts: usize, lookahead: Time) -> Shared<T> {
        Shared {
            parts,
            lookahead,
            mail: (0..parts * parts)
                .map(|_| Mutex::new(Mail::default()))
                .collect(),
            progress: (0..parts).map(|_| Padded(AtomicU64::new(0))).collect(),
            next: (0..parts).map(|_| AtomicU64::new(NEVER)).collect(),
            in_flight: (0..parts).map(|_| AtomicI64::new(0)).collect(),
            last_delivery: (0..parts).map(|_| AtomicU64::new(0)).collect(),
            stop: (0..parts).map(|_| AtomicBool::new(false)).collect(),
            moved: Waiter::new(),
            barrier: Barrier::new(parts),
        }
    }
}

impl<const V: usize, S: Source> Part<'_, V, S> {
    /// Hands what this part has sent to the others since its last call to their mailboxes.
    fn send_mail(&mut self, sh: &Shared<S::Tag>) {
        let me = self.part as usize;
        for d in 0..sh.parts {
            if d == me || (self.out_pkts[d].is_empty() && self.out_creds[d].is_empty()) {
                continue;
            }
            let mut m = sh.mail[me * sh.parts + d].lock().expect("mailbox");
            if m.pkts.is_empty() {
                std::mem::swap(&mut m.pkts, &mut self.out_pkts[d]);
            } else {
                m.pkts.append(&mut self.out_pkts[d]);
            }
            if m.creds.is_empty() {
                std::mem::swap(&mut m.creds, &mut self.out_creds[d]);
            } else {
                m.creds.append(&mut self.out_creds[d]);
            }
        }
    }

    /// Takes in the packets and credits the other parts have sent this one. `spare` holds
    /// the buffers they are taken into (kept from one call to the next). Every message is
    /// for this part's future: no earlier than `done`, where its events stand.
    fn receive(&mut self, sh: &Shared<S::Tag>, spare: &mut Mail<S::Tag>, done: Time) {
        let me = self.part as usize;
        for src in 0..sh.parts {
            if src == me {
                continue;
            }
            {
                let mut m = sh.mail[src * sh.parts + me].lock().expect("mailbox");
                if m.pkts.is_empty() && m.creds.is_empty() {
                    continue;
                }
                std::mem::swap(&mut m.pkts, &mut spare.pkts);
                std::mem::swap(&mut m.creds, &mut spare.creds);
            }
            for &(pv, pkt, tag) in &spare.pkts {
                debug_assert!(pkt.t >= done, "a packet from part {src} in the past");
                let pid = self.alloc();
                self.pk[pid as usize] = pkt;
                self.set_tag(pid, tag);
                self.arrive((pv >> 5) as usize, (pv & 31) as usize, pid, pkt.t);
            }
            for &(pv, tc) in &spare.creds {
                debug_assert!(tc >= done, "a credit from part {src} in the past");
                self.credit_returns((pv >> 5) as usize, (pv & 31) as usize, tc);
            }
            spare.pkts.clear();
            spare.creds.clear();
        }
    }

    /// The earliest time any other part's events stand at (its published progress, no
    /// earlier than `floor`, where every part stood when the segment began).
    fn others(&self, sh: &Shared<S::Tag>, floor: Time) -> Time {
        let me = self.part as usize;
        let mut t = NEVER;
        for (q, p) in sh.progress.iter().enumerate() {
            if q != me {
                t = t.min(p.0.load(Acquire));
            }
        }
        t.max(floor)
    }

    /// One segment of a parallel run: the events before `end`, every part at its own pace.
    /// `start` is where every part stood when the segment began.
    ///
    /// A part may handle an event before time `h` once every other part's progress is past
    /// `h − lookahead` (nothing it does later can reach this part before `h`), and once it
    /// has taken in the mail those parts sent before publishing that progress. It handles
    /// its events in slices of a fraction of the lookahead, publishing its own progress
    /// after each (its mail first), so that a part that got ahead finds the others' next
    /// slice already done, rather than waiting at a barrier for the slower part of every
    /// window.
    fn segment(
        &mut self,
        sh: &Shared<S::Tag>,
        spare: &mut Mail<S::Tag>,
        start: Time,
        end: Time,
        limit: Time,
    ) {
        let me = self.part as usize;
        let la = sh.lookahead;
        let slice = (la / SLICES).max(1);
        let mut done = start;
        let mut seen = NEVER;
        while done < end {
            let others = self.others(sh, start);
            let h = others.saturating_add(la).min(end);
            if h <= done {
                // Wait for another part's progress (spinning, then asleep: `Waiter`).
                sh.moved.wait_until(
                    || self.others(sh, start).saturating_add(la).min(end) > done,
                    || sh.barrier.check(),
                );
                continue;
            }
            if others != seen {
                self.receive(sh, spare, done);
                seen = others;
            }
            let upto = h.min(done.saturating_add(slice));
            let _ = self.run_until(upto, limit, |_, _| Ok::<(), ()>(()));
            // No event of this part before its next one, nor before `h`: what the others
            // will send arrives from `h` on.
            let next = self.wheel.peek_time().unwrap_or(NEVER);
            done = next.min(h).max(upto);
            self.now = done;
            self.send_mail(sh);
            sh.progress[me].0.store(done, Release);
            sh.moved.wake();
            #[cfg(test)]
            tests::pace(me, done.saturating_sub(others));
        }
        self.now = end;
    }

    /// One thread of a parallel run: segments of [`SEGMENT`] lookaheads of simulated time,
    /// each started at the earliest pending event of all parts and ended by `limit` at the
    /// latest, until no event is left before `limit` or the watchdog must look. Returns why
    /// it stopped and when the watchdog looks next.
    ///
    /// Two barriers end a segment: after the first, every part's mail is in the mailboxes,
    /// and each takes its own in and publishes its next event; after the second, every part
    /// reads the same figures and, unless the run stops there, runs the next segment
    /// ([`Part::segment`]). Within a segment a part handles its events in the same order as
    /// a single thread does, whatever the pace of the others.
    fn work(&mut self, sh: &Shared<S::Tag>, mut next_check: Time, limit: Time) -> (Outcome, Time) {
        let me = self.part as usize;
        let watchdog = self.net.params.watchdog;
        let mut spare = Mail::default();
        loop {
            // Every slice hands its mail over: none is left when a segment ends (nor before
            // the first).
            debug_assert!(self.out_pkts.iter().all(Vec::is_empty));
            debug_assert!(self.out_creds.iter().all(Vec::is_empty));
            sh.barrier.wait();
            self.receive(sh, &mut spare, self.now);
            sh.next[me].store(self.wheel.peek_time().unwrap_or(NEVER), Relaxed);
            sh.in_flight[me].store(self.stats.in_flight, Relaxed);
            sh.last_delivery[me].store(self.stats.last_delivery, Relaxed);
            sh.stop[me].store(crate::cancel::requested(), Relaxed);
            sh.barrier.wait();
            if sh.stop.iter().any(|x| x.load(Relaxed)) {
                return (Outcome::Interrupted, next_check);
            }
            let t = sh
                .next
                .iter()
                .map(|x| x.load(Relaxed))
                .min()
                .unwrap_or(NEVER);
            let in_flight: i64 = sh.in_flight.iter().map(|x| x.load(Relaxed)).sum();
            if t == NEVER {
                return (Outcome::Drained, next_check);
            }
            if t >= limit {
                return (Outcome::Stopped, next_check);
            }
            if t >= next_check {
                next_check = t + period(watchdog);
                let last = sh.last_delivery.iter().map(|x| x.load(Relaxed)).max();
                if stalled(watchdog, t, in_flight, last.unwrap_or(0)) {
                    return (Outcome::Check(t), next_check);
                }
            }
            let end = t
                .saturating_add(sh.lookahead.saturating_mul(SEGMENT))
                .min(limit);
            self.segment(sh, &mut spare, t, end, limit);
        }
    }
}

/// Lookaheads in a segment of a parallel run (between two barriers).
const SEGMENT: Time = 256;
/// Slices a part handles its events in per lookahead, publishing its progress after each.
const SLICES: Time = 8;

/// Advances the parts of a network, one thread each, `lookahead` (the smallest reach of a
/// link between two parts: nothing one part does can affect another sooner) being the most
/// one part may run ahead of another (see the module's documentation),
/// handling every event before `limit` (all of them when `limit` is `NEVER`). `next_check` is
/// when the watchdog looks next, kept from one call to the next. On return every part's `now`
/// is `limit`, or when no event is left before `NEVER`, the time of the last event.
pub(super) fn advance_parts<const V: usize, S: Source>(
    parts: &mut [Part<'_, V, S>],
    lookahead: Time,
    limit: Time,
    next_check: &mut Time,
) -> Result<(), NetworkError> {
    let n = parts.len();
    let watchdog = parts[0].net.params.watchdog;
    let sh = Shared::new(n, lookahead);
    loop {
        let check = *next_check;
        let (outcome, nc) = std::thread::scope(|sc| {
            let handles: Vec<_> = parts
                .iter_mut()
                .map(|s| {
                    let sh = &sh;
                    sc.spawn(move || {
                        let _guard = PoisonOnPanic(&sh.barrier);
                        s.work(sh, check, limit)
                    })
                })
                .collect();
            let outs: Vec<(Outcome, Time)> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect();
            debug_assert!(outs.iter().all(|&o| o == outs[0]));
            outs[0]
        });
        *next_check = nc;
        let in_flight: i64 = parts.iter().map(|s| s.stats.in_flight).sum();
        match outcome {
            Outcome::Stopped => {
                for s in parts.iter_mut() {
                    s.now = limit;
                }
                return Ok(());
            }
            Outcome::Drained => {
                let last = parts.iter().map(|s| s.last_t).max().unwrap_or(0);
                for s in parts.iter_mut() {
                    s.now = last;
                }
                if in_flight > 0 {
                    let cycle = wait_cycle(parts).unwrap_or_default();
                    return Err(deadlock(last, in_flight, cycle));
                }
                if limit != NEVER {
                    for s in parts.iter_mut() {
                        s.now = limit;
                    }
                }
                return Ok(());
            }
            Outcome::Interrupted => return Err(NetworkError::Interrupted),
            Outcome::Check(t) => {
                for s in parts.iter_mut() {
                    s.now = t;
                }
                if let Some(cycle) = wait_cycle(parts) {
                    return Err(deadlock(t, in_flight, cycle));
                }
                *next_check = t + period(watchdog);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::Workload;
    use crate::network::{NetParams, Network, Report, RoutingSpec, Synthetic, TrafficSpec};
    use crate::topology::generate;
    use crate::units::us;
    use std::sync::atomic::AtomicUsize;

    /// The part that sleeps after each slice of its segments (`usize::MAX`: none), and the
    /// furthest a part's progress got past the slowest other part's.
    static SLOW: AtomicUsize = AtomicUsize::new(usize::MAX);
    static LEAD: AtomicU64 = AtomicU64::new(0);
    /// Serialises the tests that set [`SLOW`].
    static PACED: Mutex<()> = Mutex::new(());

    /// Called by part `me` after each slice, `lead` past the slowest other part.
    pub(super) fn pace(me: usize, lead: Time) {
        LEAD.fetch_max(lead, Relaxed);
        if SLOW.load(Relaxed) == me {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    fn uniform(spec: &str, routing: &str, load: f64, threads: usize) -> (Report, Time) {
        let topo = generate(spec).unwrap();
        let p = NetParams {
            threads,
            ..NetParams::default()
        };
        let n = Network::new(&topo, &RoutingSpec::parse(routing).unwrap(), p).unwrap();
        let pattern = TrafficSpec::Uniform.resolve(&topo, n.routes(), 3).unwrap();
        let mut s = Synthetic::new(pattern, load);
        s.duration = us(10);
        s.warmup = us(2);
        s.drain = true;
        let mut r = n.run(&Workload::Synthetic(s), "uniform").unwrap();
        (r.wall_seconds, r.events, r.threads) = (0.0, 0, 0);
        (r, n.partition().1)
    }

    /// A part kept slow (it sleeps after each slice) lets the others run a whole lookahead
    /// ahead of it, no further, and every packet's path and time stay those of one thread,
    /// whichever part is slow and however many there are.
    #[test]
    fn a_slow_part_changes_no_result() {
        let _g = PACED.lock().unwrap_or_else(|e| e.into_inner());
        for (routing, load) in [("min", 0.9), ("ugal", 0.6)] {
            let (one, _) = uniform("slimfly:q=5", routing, load, 1);
            assert!(one.delivered > 1000, "{routing}");
            for (threads, slow) in [(2, 0), (2, 1), (3, 1), (3, 2)] {
                SLOW.store(slow, Relaxed);
                LEAD.store(0, Relaxed);
                let (r, la) = uniform("slimfly:q=5", routing, load, threads);
                SLOW.store(usize::MAX, Relaxed);
                assert_eq!(r, one, "{routing}: {threads} threads, part {slow} slow");
                assert_eq!(
                    LEAD.load(Relaxed),
                    la,
                    "{routing}: {threads} threads, part {slow} slow"
                );
            }
        }
    }
}
