//! The parallel runner: parts of the network simulated side by side, one thread each.
//!
//! With `threads` > 1 the routers are split into parts with about as many ports each and few
//! links between them ([`Network::partition`](super::Network::partition)); a thread simulates
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
//! `h` once the progress of every part a link joins to it is past `h − lookahead` and it has
//! taken in their mail (a part hears from no other; a receiver locks only the mailboxes
//! marked full). A part may so run up to a lookahead ahead of its slowest neighbour (further
//! ahead of parts further away); one that finished a slice early goes on with the next,
//! rather than wait at a barrier for the slowest part of every window. Segments of many
//! lookaheads, each started at the earliest pending event of all parts (so that an idle
//! network is skipped over) and ended no later than where the run is asked to stop (its end, or the time a stepped engine advances to), are separated
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

/// A mailbox from one part to another, on cache lines of its own.
struct Mailbox<T> {
    /// Whether `mail` may hold messages: set by the sender after it added some, before it
    /// publishes its progress; cleared by the receiver when it takes them. A receiver reads
    /// it rather than lock a mailbox that is empty, as most are at any time.
    full: AtomicBool,
    mail: Mutex<Mail<T>>,
}

/// What the threads of a parallel run share.
struct Shared<T> {
    parts: usize,
    lookahead: Time,
    /// `mail[src · parts + dst]`: what part `src` has sent part `dst` and `dst` has not taken
    /// in yet.
    mail: Vec<Padded<Mailbox<T>>>,
    /// Per part, the parts a link joins it to, ascending: the only ones it hears from and
    /// waits for.
    near: Vec<Vec<usize>>,
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
    fn new(parts: usize, lookahead: Time, near: Vec<Vec<usize>>) -> Shared<T> {
        Shared {
            parts,
            lookahead,
            mail: (0..parts * parts)
                .map(|_| {
                    Padded(Mailbox {
                        full: AtomicBool::new(false),
                        mail: Mutex::new(Mail::default()),
                    })
                })
                .collect(),
            near,
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
    /// Hands what this part has sent to the others since its last call to their mailboxes,
    /// and marks them full.
    fn send_mail(&mut self, sh: &Shared<S::Tag>) {
        let me = self.part as usize;
        for d in 0..sh.parts {
            if d == me || (self.out_pkts[d].is_empty() && self.out_creds[d].is_empty()) {
                continue;
            }
            let b = &sh.mail[me * sh.parts + d].0;
            let mut m = b.mail.lock().expect("mailbox");
            b.full.store(true, Relaxed);
            #[cfg(test)]
            tests::sent(self.out_pkts[d].len() + self.out_creds[d].len());
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
    ///
    /// Only the mailboxes of the parts a link joins to this one can hold mail, and only those
    /// marked full are locked. A sender marks its mailbox before it publishes the progress
    /// (`Release`) that this part read (`Acquire`) before calling this, so the mark of every
    /// message sent before that progress is seen.
    fn receive(&mut self, sh: &Shared<S::Tag>, spare: &mut Mail<S::Tag>, done: Time) {
        let me = self.part as usize;
        #[cfg(test)]
        tests::looked(sh.parts - 1);
        for &src in &sh.near[me] {
            let b = &sh.mail[src * sh.parts + me].0;
            if !b.full.load(Relaxed) {
                continue;
            }
            {
                let mut m = b.mail.lock().expect("mailbox");
                b.full.store(false, Relaxed);
                #[cfg(test)]
                tests::taken(m.pkts.is_empty() && m.creds.is_empty());
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

    /// The earliest time the events of a part a link joins to this one stand at (its
    /// published progress, no earlier than `floor`, where every part stood when the segment
    /// began). Only those parts can send this one anything; each publishes progress that
    /// bounds all its future events, those its own neighbours' mail will cause included, so
    /// a part further away reaches this one through them, no sooner.
    fn others(&self, sh: &Shared<S::Tag>, floor: Time) -> Time {
        let me = self.part as usize;
        let mut t = NEVER;
        for &q in &sh.near[me] {
            t = t.min(sh.progress[q].0.load(Acquire));
        }
        t.max(floor)
    }

    /// One segment of a parallel run: the events before `end`, every part at its own pace.
    /// `start` is where every part stood when the segment began.
    ///
    /// A part may handle an event before time `h` once the progress of every part a link
    /// joins to it is past `h − lookahead` (nothing it does later can reach this part before
    /// `h`), and once it has taken in the mail those parts sent before publishing that
    /// progress. It handles
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
    let sh = Shared::new(n, lookahead, parts[0].net.near().to_vec());
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

    /// Mail counters: messages sent, mailboxes locked to send, mailboxes a receiver would
    /// lock without the marks (every other part's, at each look), mailboxes locked to
    /// receive, and those of them found empty.
    static ITEMS: AtomicU64 = AtomicU64::new(0);
    static SENDS: AtomicU64 = AtomicU64::new(0);
    static LOOKS: AtomicU64 = AtomicU64::new(0);
    static TAKES: AtomicU64 = AtomicU64::new(0);
    static EMPTY: AtomicU64 = AtomicU64::new(0);

    pub(super) fn sent(items: usize) {
        ITEMS.fetch_add(items as u64, Relaxed);
        SENDS.fetch_add(1, Relaxed);
    }

    pub(super) fn looked(others: usize) {
        LOOKS.fetch_add(others as u64, Relaxed);
    }

    pub(super) fn taken(empty: bool) {
        TAKES.fetch_add(1, Relaxed);
        EMPTY.fetch_add(empty as u64, Relaxed);
    }

    /// Called by part `me` after each slice, `lead` past the slowest other part.
    pub(super) fn pace(me: usize, lead: Time) {
        LEAD.fetch_max(lead, Relaxed);
        if SLOW.load(Relaxed) == me {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    /// [`super::super::uniform_run`] after 2 µs of warm-up, drained, with `events` and
    /// `threads` (which depend on the thread count) zeroed.
    fn uniform(spec: &str, routing: &str, load: f64, threads: usize) -> (Report, Time) {
        let (mut r, lookahead) =
            super::super::uniform_run(spec, routing, load, threads, us(2), true);
        (r.events, r.threads) = (0, 0);
        (r, lookahead)
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

    /// A receiver locks only mailboxes that hold mail: the mark a sender sets before it
    /// publishes its progress is seen, and only the receiver clears it.
    #[test]
    fn a_receiver_locks_no_empty_mailbox() {
        let _g = PACED.lock().unwrap_or_else(|e| e.into_inner());
        let before = (TAKES.load(Relaxed), EMPTY.load(Relaxed));
        let (one, _) = uniform("fattree:k=8,levels=3", "min", 0.9, 1);
        let (r, _) = uniform("fattree:k=8,levels=3", "min", 0.9, 4);
        assert_eq!(r, one);
        assert!(TAKES.load(Relaxed) > before.0);
        assert_eq!(EMPTY.load(Relaxed), before.1);
    }

    /// Mail per delivered packet at 2 to 16 parts (a measurement: run it alone,
    /// `cargo test -p hypercuboid-core --lib mail_per_packet -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn mail_per_packet() {
        let _g = PACED.lock().unwrap_or_else(|e| e.into_inner());
        for spec in ["slimfly:q=13", "fattree:k=16,levels=3", "dragonfly:p=4"] {
            for threads in [2, 4, 8, 16] {
                for c in [&ITEMS, &SENDS, &LOOKS, &TAKES, &EMPTY] {
                    c.store(0, Relaxed);
                }
                let topo = generate(spec).unwrap();
                let p = NetParams {
                    threads,
                    ..NetParams::default()
                };
                let n = Network::new(&topo, &RoutingSpec::parse("min").unwrap(), p).unwrap();
                let pattern = TrafficSpec::Uniform.resolve(&topo, n.routes(), 3).unwrap();
                let mut s = Synthetic::new(pattern, 0.3);
                s.duration = us(5);
                s.warmup = us(1);
                let r = n.run(&Workload::Synthetic(s), "uniform").unwrap();
                let d = r.delivered_total as f64;
                println!(
                    "{spec} {threads}: delivered {} mail/packet {:.3} send locks/packet {:.3} \
                     looks/packet {:.3} receive locks/packet {:.3} empty {}",
                    r.delivered_total,
                    ITEMS.load(Relaxed) as f64 / d,
                    SENDS.load(Relaxed) as f64 / d,
                    LOOKS.load(Relaxed) as f64 / d,
                    TAKES.load(Relaxed) as f64 / d,
                    EMPTY.load(Relaxed),
                );
            }
        }
    }
}
