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
//! next window starts. A part handles its own events in the same order as a single thread does
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
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::{Condvar, Mutex};

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

/// What the threads of a parallel run share.
struct Shared<T> {
    parts: usize,
    lookahead: Time,
    /// `mail[src · parts + dst]`.
    mail: Vec<Mutex<Mail<T>>>,
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

impl<const V: usize, S: Source> Part<'_, V, S> {
    /// Hands the messages of the window to the parts they are for.
    fn send_mail(&mut self, sh: &Shared<S::Tag>) {
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
    fn receive(&mut self, sh: &Shared<S::Tag>) {
        let me = self.part as usize;
        for src in 0..sh.parts {
            if src == me {
                continue;
            }
            let mut m = sh.mail[src * sh.parts + me].lock().expect("mailbox");
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
    fn work(&mut self, sh: &Shared<S::Tag>, mut next_check: Time, limit: Time) -> (Outcome, Time) {
        let me = self.part as usize;
        let watchdog = self.net.params.watchdog;
        loop {
            sh.next[me].store(self.wheel.peek_time().unwrap_or(NEVER), Relaxed);
            sh.in_flight[me].store(self.stats.in_flight, Relaxed);
            sh.last_delivery[me].store(self.stats.last_delivery, Relaxed);
            sh.barrier.wait();
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
            let end = t.saturating_add(sh.lookahead).min(limit);
            let _ = self.run_until(end, |_, _| Ok::<(), ()>(()));
            self.send_mail(sh);
            sh.barrier.wait();
            self.now = end;
            self.receive(sh);
        }
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
    let sh = Shared {
        parts: n,
        lookahead,
        mail: (0..n * n).map(|_| Mutex::new(Mail::default())).collect(),
        next: (0..n).map(|_| AtomicU64::new(NEVER)).collect(),
        in_flight: (0..n).map(|_| AtomicI64::new(0)).collect(),
        last_delivery: (0..n).map(|_| AtomicU64::new(0)).collect(),
        barrier: Barrier::new(n),
    };
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
