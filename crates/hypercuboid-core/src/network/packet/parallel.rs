//! The parallel runner: parts of the network simulated side by side, one thread each.
//!
//! With `threads` > 1 the routers are split into parts, runs of consecutive routers with about
//! as many ports each ([`Network::partition`](super::Network::partition)); a thread simulates
//! each part (its ports, its endpoints, its packets). A part affects another only through a
//! link between them: a packet sent on it, which can cross the next switch no sooner than a
//! link latency and a switch traversal later (L + S), and a credit returned on it, which
//! arrives a serialisation and a latency after its packet started to leave the input
//! (σ + L). The threads therefore advance in windows of the smallest such reach,
//! L + min(S, σ), of a link between parts (the lookahead), each
//! window starting at the earliest pending event of all parts and ending no later than where
//! the run is asked to stop (its end, or the time a stepped engine advances to); what a window
//! sends to another part is delivered to it (through a mailbox per pair of parts) before the
//! next window starts, with one barrier per window (see `Part::work`). A part handles its own
//! events in the same order as a single thread does
//! (the order depends only on what is queued, not on when), so the results — every packet's
//! path and time — do not depend on the number of threads, nor on where windows end; `events`
//! alone may differ. The watchdog looks at window boundaries.

use super::part::Part;
use super::ports::Packet;
use super::source::Source;
use super::watchdog::{deadlock, period, stalled, wait_cycle};
use super::NEVER;
use crate::network::NetworkError;
use crate::units::Time;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// What a thread of a parallel run found when it stopped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    /// No event is left.
    Drained,
    /// The next event is at or after the limit.
    Stopped,
    /// Nothing was delivered for a watchdog period at this time: look for a deadlock.
    Check(Time),
}

/// Messages from one part to another, sent in one window and taken in before the next.
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

/// What the threads of a parallel run share. Everything a window writes for the others is
/// kept twice, by the parity of the window, so that one barrier per window suffices: a part
/// that starts window w + 1 while another still reads what window w published writes the
/// other copy.
struct Shared<T> {
    parts: usize,
    lookahead: Time,
    /// `mail[parity][src · parts + dst]`: what part `src` sent part `dst` in the last window
    /// of that parity.
    mail: [Vec<Mutex<Mail<T>>>; 2],
    /// Per part, by parity: the earliest of its next event and of the mail it has just sent,
    /// its packets in flight, and its last delivery.
    next: [Vec<AtomicU64>; 2],
    in_flight: [Vec<AtomicI64>; 2],
    last_delivery: [Vec<AtomicU64>; 2],
    barrier: Barrier,
}

impl<T> Shared<T> {
    fn new(parts: usize, lookahead: Time) -> Shared<T> {
        Shared {
            parts,
            lookahead,
            mail: std::array::from_fn(|_| {
                (0..parts * parts)
                    .map(|_| Mutex::new(Mail::default()))
                    .collect()
            }),
            next: std::array::from_fn(|_| (0..parts).map(|_| AtomicU64::new(NEVER)).collect()),
            in_flight: std::array::from_fn(|_| (0..parts).map(|_| AtomicI64::new(0)).collect()),
            last_delivery: std::array::from_fn(|_| (0..parts).map(|_| AtomicU64::new(0)).collect()),
            barrier: Barrier::new(parts),
        }
    }
}

/// A barrier that a thread leaving by a panic opens for good, so that the others panic too
/// instead of waiting forever.
///
/// A window is short (a few hundred microseconds of work per thread on the seed's network,
/// thousands of windows a run), and on an otherwise idle machine the threads arrive within
/// microseconds of each other, so a waiter first spins on the generation, then sleeps on a
/// condition variable. Sleeping at once costs each window two futex calls and the wake-up of
/// a sleeping core; spinning for long burns a core that the awaited thread needs when the
/// machine runs other work. So the spin adapts: a waiter released while it spins lets the
/// next ones spin up to twice its wait (at most [`Barrier::SPIN_MAX`]), one that had to sleep
/// halves the spin (down to [`Barrier::SPIN_MIN`]). Only timing depends on it, never a result.
struct Barrier {
    n: usize,
    /// Threads arrived in the current generation.
    arrived: AtomicUsize,
    /// Completed generations.
    generation: AtomicU64,
    /// Set for good when a thread failed.
    poisoned: AtomicBool,
    /// How long a waiter spins before it sleeps (ns).
    spin: AtomicU64,
    /// Where waiters sleep once their spin is over.
    sleep: Mutex<()>,
    cv: Condvar,
}

impl Barrier {
    /// The bounds of the spin (ns).
    const SPIN_MIN: u64 = 2_000;
    const SPIN_MAX: u64 = 200_000;

    fn new(n: usize) -> Barrier {
        Barrier {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicU64::new(0),
            poisoned: AtomicBool::new(false),
            spin: AtomicU64::new(Self::SPIN_MIN * 8),
            sleep: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Waits until all `n` threads have arrived. What a thread wrote before its `wait` is
    /// visible to every thread after theirs.
    fn wait(&self) {
        let generation = self.generation.load(Acquire);
        self.check();
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.n {
            self.arrived.store(0, Relaxed);
            self.generation.store(generation + 1, Release);
            // Wakes the sleepers; one that checked the generation before the store above
            // holds the lock until it sleeps, so it is woken.
            drop(self.sleep.lock().unwrap_or_else(|e| e.into_inner()));
            self.cv.notify_all();
            return;
        }
        let start = Instant::now();
        let limit = self.spin.load(Relaxed);
        let mut spins = 0u32;
        while self.generation.load(Acquire) == generation {
            self.check();
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(64) {
                continue;
            }
            let waited = start.elapsed().as_nanos() as u64;
            if waited < limit {
                continue;
            }
            self.spin.store((limit / 2).max(Self::SPIN_MIN), Relaxed);
            let mut g = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
            while self.generation.load(Acquire) == generation {
                self.check();
                g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
            }
            return;
        }
        let waited = start.elapsed().as_nanos() as u64;
        if 2 * waited > limit {
            self.spin.store((2 * waited).min(Self::SPIN_MAX), Relaxed);
        }
    }

    /// Panics if another thread failed.
    fn check(&self) {
        assert!(
            !self.poisoned.load(Relaxed),
            "another simulation thread failed"
        );
    }

    /// Opens the barrier for good (a thread failed).
    fn poison(&self) {
        self.poisoned.store(true, Relaxed);
        drop(self.sleep.lock().unwrap_or_else(|e| e.into_inner()));
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

impl<const V: usize, S: Source> Part<'_, V, S> {
    /// Hands the messages of the window to the parts they are for (the mailboxes of
    /// `parity`); returns the earliest time among them (`NEVER`: none), a bound on the
    /// events they will cause.
    fn send_mail(&mut self, sh: &Shared<S::Tag>, parity: usize) -> Time {
        let me = self.part as usize;
        let mut first = NEVER;
        for d in 0..sh.parts {
            if d != me && !(self.out_pkts[d].is_empty() && self.out_creds[d].is_empty()) {
                for (_, p, _) in &self.out_pkts[d] {
                    first = first.min(p.t);
                }
                for &(_, tc) in &self.out_creds[d] {
                    first = first.min(tc);
                }
                let mut m = sh.mail[parity][me * sh.parts + d].lock().expect("mailbox");
                debug_assert!(m.pkts.is_empty() && m.creds.is_empty());
                std::mem::swap(&mut m.pkts, &mut self.out_pkts[d]);
                std::mem::swap(&mut m.creds, &mut self.out_creds[d]);
            }
        }
        first
    }

    /// Takes in the packets and credits the other parts sent in the last window (the
    /// mailboxes of `parity`).
    fn receive(&mut self, sh: &Shared<S::Tag>, parity: usize) {
        let me = self.part as usize;
        for src in 0..sh.parts {
            if src == me {
                continue;
            }
            let mut m = sh.mail[parity][src * sh.parts + me]
                .lock()
                .expect("mailbox");
            for &(pv, pkt, tag) in &m.pkts {
                let pid = self.alloc();
                self.pk[pid as usize] = pkt;
                self.set_tag(pid, tag);
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
    /// the earliest pending event of all parts and ended by `limit` at the latest, until no
    /// event is left before `limit` or the watchdog must look. Returns why it stopped and
    /// when the watchdog looks next.
    ///
    /// One barrier per window: before it, a part publishes the earliest of its next event and
    /// of the mail it sent in its last window (which causes no event before its own time);
    /// after it, every part reads the same figures, takes in that mail and, unless the run
    /// stops there, runs the window. The mail of window w is taken in before window w + 1
    /// starts, as with a barrier on each side of the exchange, so the events and their order
    /// are those of two barriers.
    fn work(&mut self, sh: &Shared<S::Tag>, mut next_check: Time, limit: Time) -> (Outcome, Time) {
        let me = self.part as usize;
        let watchdog = self.net.params.watchdog;
        let mut sent = NEVER;
        for round in 0usize.. {
            let (cur, last) = (round & 1, (round + 1) & 1);
            let next = self.wheel.peek_time().unwrap_or(NEVER).min(sent);
            sh.next[cur][me].store(next, Relaxed);
            sh.in_flight[cur][me].store(self.stats.in_flight, Relaxed);
            sh.last_delivery[cur][me].store(self.stats.last_delivery, Relaxed);
            sh.barrier.wait();
            let t = sh.next[cur]
                .iter()
                .map(|x| x.load(Relaxed))
                .min()
                .unwrap_or(NEVER);
            let in_flight: i64 = sh.in_flight[cur].iter().map(|x| x.load(Relaxed)).sum();
            // The mail of the last window, whether or not another starts.
            self.receive(sh, last);
            if t == NEVER {
                return (Outcome::Drained, next_check);
            }
            if t >= limit {
                return (Outcome::Stopped, next_check);
            }
            if t >= next_check {
                next_check = t + period(watchdog);
                let last = sh.last_delivery[cur].iter().map(|x| x.load(Relaxed)).max();
                if stalled(watchdog, t, in_flight, last.unwrap_or(0)) {
                    return (Outcome::Check(t), next_check);
                }
            }
            let end = t.saturating_add(sh.lookahead).min(limit);
            let _ = self.run_until(end, limit, |_, _| Ok::<(), ()>(()));
            self.now = end;
            sent = self.send_mail(sh, cur);
        }
        unreachable!("the rounds of a parallel run are not bounded")
    }
}

/// Advances the parts of a network, one thread each, in windows of `lookahead` (the smallest
/// reach of a link between two parts: nothing one part does can affect another sooner),
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

    /// Every thread sees what every other wrote before the barrier of a generation, over
    /// generations where the threads arrive together (released while spinning) and where one
    /// is late by a millisecond (the others sleep); the spin stays within its bounds.
    #[test]
    fn the_barrier_shows_each_generation_to_every_thread() {
        const N: usize = 3;
        const ROUNDS: usize = 400;
        let b = Barrier::new(N);
        let slots: [Vec<AtomicUsize>; 2] =
            std::array::from_fn(|_| (0..N).map(|_| AtomicUsize::new(usize::MAX)).collect());
        std::thread::scope(|sc| {
            for me in 0..N {
                let (b, slots) = (&b, &slots);
                sc.spawn(move || {
                    for round in 0..ROUNDS {
                        if round % 50 == me {
                            std::thread::sleep(std::time::Duration::from_millis(1));
                        }
                        slots[round & 1][me].store(round, Relaxed);
                        b.wait();
                        for s in &slots[round & 1] {
                            assert_eq!(s.load(Relaxed), round, "thread {me}, round {round}");
                        }
                        let spin = b.spin.load(Relaxed);
                        assert!((Barrier::SPIN_MIN..=Barrier::SPIN_MAX).contains(&spin));
                    }
                });
            }
        });
        assert_eq!(b.generation.load(Relaxed), ROUNDS as u64);
        assert_eq!(b.arrived.load(Relaxed), 0);
    }

    /// A thread asleep in the barrier is woken when another fails, and fails too; a poisoned
    /// barrier lets no thread through.
    #[test]
    fn a_poisoned_barrier_wakes_its_sleepers() {
        let b = Barrier::new(2);
        let err = std::thread::scope(|sc| {
            let waiter = sc.spawn(|| b.wait());
            // Past the longest spin: the waiter sleeps on the condition variable.
            std::thread::sleep(std::time::Duration::from_millis(20));
            b.poison();
            waiter.join().expect_err("the waiter fails")
        });
        let msg = err
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| err.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        assert_eq!(msg, "another simulation thread failed");
        let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.wait()));
        assert!(again.is_err(), "a poisoned barrier lets no thread through");
    }
}
