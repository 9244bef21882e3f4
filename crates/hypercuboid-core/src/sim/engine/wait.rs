//! Local work waiting for a busy CPU, in O(log n) per op rather than O(n).
//!
//! A local op (a reduce, copy or compute, or the reduction of a fused receive) that finds its
//! CPU busy is told by the model to try again when the CPU is free ([`Attempt::Retry`]). With
//! `n` ops ready on one CPU, each retry moves all `n − 1` losers to the CPU's next free time,
//! where one of them runs and the rest retry again: `n²/2` events. Here the waiters of a CPU
//! wait together instead: one of them, the *head* (the smallest stamp), is queued at the time
//! the CPU said; the others are parked in stamp order. The answers are the same as if every
//! waiter were queued:
//!
//! - When the head is told to retry at `t2`, every parked waiter would have been tried at the
//!   same time after it (its stamp is larger) and told `t2` too: nothing can start on a CPU
//!   busy past the current time, so nothing changes its clock in between. They move with the
//!   head, which costs nothing.
//! - When the head starts, the CPU is busy until the time the model says
//!   ([`crate::model::LocalRun::busy_until`]). The next parked waiter becomes the head,
//!   queued with its own stamp at that time, where its try at the head's time would have
//!   sent it (the others move with it), or at the head's time when the CPU is free then (an
//!   op that costs nothing), where it would have been.
//! - A waiter told to retry at a time other than its CPU's group's, or with a stamp below the
//!   head's, is queued as before.
//!
//! Retrying changes nothing in a model (it only reads the CPU's clock), so skipping the retries
//! a parked waiter would have made changes no result. Only the engine's count of events
//! handled falls. Lanes ([`super::lanes`]) and models that announce arrivals requeue as before.

use super::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The local ops waiting for one CPU of one rank.
#[derive(Debug, Default)]
pub(super) struct Waiters {
    /// When the head is queued (the CPU's next free time when it was last told).
    time: Time,
    /// The head's stamp.
    head: u64,
    /// The other waiters by stamp: `(ts, what)`.
    parked: BinaryHeap<Reverse<(u64, u32)>>,
}

#[cfg(test)]
thread_local! {
    /// Off: every waiter is queued again, as without [`Waiters`] (what the tests compare with).
    pub(super) static PARK: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Whether waiters park ([`PARK`] in tests).
#[inline(always)]
fn parks() -> bool {
    #[cfg(test)]
    return PARK.with(|p| p.get());
    #[cfg(not(test))]
    true
}

/// The key of `rank`'s CPU `cpu` in [`Engine::waits`].
#[inline]
fn key(rank: Rank, cpu: u16) -> u64 {
    (rank as u64) << 16 | cpu as u64
}

impl<M: CostModel, const P: bool> Engine<'_, M, P> {
    /// Local op event `e` on `cpu` was told to retry at `t`: queued again, or parked behind
    /// its CPU's head.
    #[inline]
    pub(super) fn wait_cpu(&mut self, e: Event, cpu: u16, t: Time) {
        if P || M::ANNOUNCES || !parks() {
            self.requeue(e, t);
            return;
        }
        let t = t.max(e.time.saturating_add(1));
        match self.waits.get_mut(&key(e.rank, cpu)) {
            None => {
                self.waits.insert(
                    key(e.rank, cpu),
                    Waiters {
                        time: t,
                        head: e.ts,
                        parked: BinaryHeap::new(),
                    },
                );
            }
            // The head: the parked waiters move with it.
            Some(w) if w.head == e.ts => w.time = t,
            Some(w) if w.time == t && e.ts > w.head => {
                w.parked.push(Reverse((e.ts, e.what)));
                return;
            }
            Some(_) => {}
        }
        self.requeue(e, t);
    }

    /// Local op event `e` on `cpu` started, its CPU busy until `busy_until`: when it was its
    /// CPU's head, the next waiter becomes the head, queued with its own stamp when the CPU
    /// is free (at `e`'s time, or where its try at `e`'s time would send it).
    #[inline]
    pub(super) fn went_cpu(&mut self, e: &Event, cpu: u16, busy_until: Time) {
        if P || M::ANNOUNCES || self.waits.is_empty() {
            return;
        }
        let k = key(e.rank, cpu);
        let Some(w) = self.waits.get_mut(&k) else {
            return;
        };
        if w.head != e.ts {
            return;
        }
        match w.parked.pop() {
            Some(Reverse((ts, what))) => {
                w.head = ts;
                w.time = w.time.max(busy_until);
                let next = Event {
                    time: w.time,
                    ts,
                    rank: e.rank,
                    what,
                };
                self.q.push(next);
            }
            None => {
                self.waits.remove(&k);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{random_schedule, traced_and_noisy, xorshift, MODELS};
    use super::*;
    use crate::model::parse_model;
    use crate::schedule::{Meta, Op, OpKind, Program, ScheduleBuilder};

    fn simulate(
        s: &Schedule,
        model: &str,
        opts: &SimOptions,
        park: bool,
    ) -> Result<SimResult, SimError> {
        PARK.with(|p| p.set(park));
        let r = crate::sim::simulate(s, &parse_model(model).unwrap(), opts);
        PARK.with(|p| p.set(true));
        r
    }

    /// Programs of mostly local work on `n` ranks and two CPUs: computes of 0 to 3 us (many
    /// ready at once), some with dependencies on earlier ops, and a few messages.
    fn busy_schedule(seed: u64, n: u32) -> Schedule {
        let mut rnd = xorshift(seed);
        let mut programs: Vec<Program> = (0..n).map(|_| Program::new()).collect();
        for k in 0..40 * n {
            let r = rnd(n as u64) as usize;
            let kind = if n > 1 && k % 7 == 0 {
                let dst = (r as u32 + 1) % n;
                let tag = rnd(2) as i32;
                let mut recv = Op::new(OpKind::Recv {
                    peer: r as u32,
                    tag,
                    data: crate::schedule::Payload::Bytes(64),
                    combine: crate::schedule::Combine::Assign,
                    operand: None,
                });
                recv.cpu = rnd(2) as u16;
                programs[dst as usize].push(recv);
                OpKind::Send {
                    peer: dst,
                    tag,
                    data: crate::schedule::Payload::Bytes(64),
                }
            } else {
                OpKind::Compute {
                    time: rnd(4) * 1_000_000,
                }
            };
            let mut op = Op::new(kind);
            op.cpu = rnd(2) as u16;
            let p = &mut programs[r];
            let id = p.push(op);
            if id > 0 && rnd(4) == 0 {
                p.requires(id, rnd(id as u64) as u32);
            }
        }
        Schedule::from_programs(Meta::sizes_only("busy"), programs).unwrap()
    }

    #[test]
    fn parked_waiters_change_nothing() {
        let mut compared = 0;
        for seed in 0..120 {
            for s in [
                busy_schedule(seed, 1 + seed as u32 % 4),
                random_schedule(seed, 2 + seed as u32 % 5),
            ] {
                for model in MODELS {
                    for opts in traced_and_noisy(seed) {
                        let a = simulate(&s, model, &opts, false);
                        let b = simulate(&s, model, &opts, true);
                        assert_eq!(a, b, "seed {seed}, {model}");
                        compared += 1;
                    }
                }
            }
        }
        assert_eq!(compared, 120 * 2 * MODELS.len() * 2);
    }

    /// `n` computes of 1 us on one rank: independent, freed by one (fan-out), or all required
    /// by one (fan-in).
    fn one_rank(shape: &str, n: u32) -> Schedule {
        let us = 1_000_000;
        let mut p = Program::new();
        let compute = || Op::new(OpKind::Compute { time: us });
        match shape {
            "independent" => {
                for _ in 0..n {
                    p.push(compute());
                }
            }
            "fan-out" => {
                let root = p.push(compute());
                for _ in 0..n {
                    let id = p.push(compute());
                    p.requires(id, root);
                }
            }
            _ => {
                let ids: Vec<u32> = (0..n).map(|_| p.push(compute())).collect();
                let last = p.push(compute());
                for id in ids {
                    p.requires(last, id);
                }
            }
        }
        let mut b = ScheduleBuilder::new(1, Meta::sizes_only(shape)).unwrap();
        b.push(&mut p).unwrap();
        b.finish().unwrap()
    }

    /// 10^5 computes of 1 us ready at once on one CPU run one after the other: the rank
    /// finishes after n us, or n + 1 us with the op that frees them or that they free (the
    /// closed form of a CPU that runs one op at a time, under every model).
    #[test]
    fn many_ready_ops_run_one_after_the_other() {
        let n = 100_000u64;
        for model in ["postal:alpha=1us", "loggops:L=3us,o=1us,g=1us,G=0"] {
            for (shape, ops) in [("independent", n), ("fan-out", n + 1), ("fan-in", n + 1)] {
                let s = one_rank(shape, n as u32);
                let r =
                    crate::sim::simulate(&s, &parse_model(model).unwrap(), &SimOptions::default())
                        .unwrap();
                assert_eq!(r.completion, ops * 1_000_000, "{shape} under {model}");
                assert_eq!(r.ops, ops);
            }
        }
        // Three events an op, not n: tried in the first batch (and parked), started as the
        // head, finished (under the postal model an op completes at its end); the first op
        // starts in the first batch.
        let s = one_rank("independent", n as u32);
        let m = crate::model::PostalModel::postal(1_000_000, 0.0, 0.0, 0);
        let mut events = 0;
        run_with(&s, &m, &SimOptions::default(), true, &mut events).unwrap();
        assert_eq!(events, 3 * n - 1);
    }
}
