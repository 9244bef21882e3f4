//! Threads working together: how many a run takes ([`threads`]), a waiter that spins, then
//! sleeps, and a barrier built on it that a failed thread opens for good (used by the packet
//! engine's parts and the schedule engine's lanes).

use std::sync::atomic::fence;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// The threads a run takes when `asked` for (an engine's `threads` option): `asked` unless it
/// is 0; for 0, every core this process may run on when the run is `large` (the engine's own
/// threshold), else one.
pub(crate) fn threads(asked: usize, large: bool) -> usize {
    match asked {
        0 if large => std::thread::available_parallelism().map_or(1, |n| n.get()),
        0 => 1,
        n => n,
    }
}

/// Where threads wait for a condition that another thread makes true: a waiter first spins,
/// then sleeps on a condition variable until the thread that changes the condition calls
/// [`Waiter::wake`].
///
/// On an otherwise idle machine the awaited change usually comes within microseconds, so a
/// waiter spins first: sleeping at once costs two futex calls and the wake-up of a sleeping
/// core. Spinning for long burns a core that the awaited thread needs when the machine runs
/// other work. So the spin adapts: a waiter released while it spins lets the next ones spin
/// up to twice its wait (at most [`Waiter::SPIN_MAX`]), one that had to sleep halves the spin
/// (down to [`Waiter::SPIN_MIN`]). Only timing depends on it, never a result.
pub(crate) struct Waiter {
    /// How long a waiter spins before it sleeps (ns).
    spin: AtomicU64,
    /// Waiters asleep, or about to sleep.
    sleepers: AtomicUsize,
    sleep: Mutex<()>,
    cv: Condvar,
}

impl Waiter {
    /// The bounds of the spin (ns).
    const SPIN_MIN: u64 = 2_000;
    const SPIN_MAX: u64 = 200_000;
    /// How long a sleeper sleeps at most before it looks again (and checks for a failed
    /// thread).
    const NAP: std::time::Duration = std::time::Duration::from_millis(1);

    pub(crate) fn new() -> Waiter {
        Waiter {
            spin: AtomicU64::new(Self::SPIN_MIN * 8),
            sleepers: AtomicUsize::new(0),
            sleep: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Returns once `ready()`; calls `check` (which may panic) while it waits. What the thread
    /// that made `ready()` true wrote before its [`Waiter::wake`] is visible on return if
    /// `ready` reads with `Acquire` what that thread stored with `Release`.
    pub(crate) fn wait_until(&self, ready: impl Fn() -> bool, check: impl Fn()) {
        if ready() {
            return;
        }
        let start = Instant::now();
        let limit = self.spin.load(Relaxed);
        let mut spins = 0u32;
        while !ready() {
            check();
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(64) || (start.elapsed().as_nanos() as u64) < limit {
                continue;
            }
            self.spin.store((limit / 2).max(Self::SPIN_MIN), Relaxed);
            let mut g = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
            self.sleepers.fetch_add(1, Relaxed);
            // Either this look sees the change, or the waker sees this sleeper (and takes the
            // lock, which this thread holds until it sleeps, to notify it).
            fence(SeqCst);
            while !ready() {
                check();
                g = self
                    .cv
                    .wait_timeout(g, Self::NAP)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            self.sleepers.fetch_sub(1, Relaxed);
            return;
        }
        let waited = start.elapsed().as_nanos() as u64;
        if 2 * waited > limit {
            self.spin.store((2 * waited).min(Self::SPIN_MAX), Relaxed);
        }
    }

    /// Wakes the sleepers, after a change that may make their condition true (made before
    /// this call). A fence and a load when nobody sleeps.
    pub(crate) fn wake(&self) {
        fence(SeqCst);
        if self.sleepers.load(Relaxed) > 0 {
            self.wake_all();
        }
    }

    /// Wakes every sleeper.
    pub(crate) fn wake_all(&self) {
        drop(self.sleep.lock().unwrap_or_else(|e| e.into_inner()));
        self.cv.notify_all();
    }
}

/// A barrier that a thread leaving by a panic opens for good, so that the others panic too
/// instead of waiting forever. Its waiters spin, then sleep ([`Waiter`]).
pub(crate) struct Barrier {
    n: usize,
    /// Threads arrived in the current generation.
    arrived: AtomicUsize,
    /// Completed generations.
    generation: AtomicU64,
    /// Set for good when a thread failed.
    poisoned: AtomicBool,
    waiter: Waiter,
}

impl Barrier {
    pub(crate) fn new(n: usize) -> Barrier {
        Barrier {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicU64::new(0),
            poisoned: AtomicBool::new(false),
            waiter: Waiter::new(),
        }
    }

    /// Waits until all `n` threads have arrived. What a thread wrote before its `wait` is
    /// visible to every thread after theirs.
    pub(crate) fn wait(&self) {
        let generation = self.generation.load(Acquire);
        self.check();
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.n {
            self.arrived.store(0, Relaxed);
            self.generation.store(generation + 1, Release);
            self.waiter.wake();
            return;
        }
        self.waiter.wait_until(
            || self.generation.load(Acquire) != generation,
            || self.check(),
        );
    }

    /// Panics if another thread failed.
    pub(crate) fn check(&self) {
        assert!(
            !self.poisoned.load(Relaxed),
            "another simulation thread failed"
        );
    }

    /// Opens the barrier for good (a thread failed).
    pub(crate) fn poison(&self) {
        self.poisoned.store(true, Relaxed);
        self.waiter.wake_all();
    }
}

/// Poisons the barrier if its thread unwinds.
pub(crate) struct PoisonOnPanic<'a>(pub(crate) &'a Barrier);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poison();
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
                        let spin = b.waiter.spin.load(Relaxed);
                        assert!((Waiter::SPIN_MIN..=Waiter::SPIN_MAX).contains(&spin));
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
