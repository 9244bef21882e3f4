//! The two boundaries every entry from Python crosses.
//!
//! - [`call`]: a Rust panic inside an entry becomes the structured error of that call (its
//!   `hypercuboid.errors` class, the message naming what was asked and "internal error: <the
//!   panic's message>; please report"), never an abort or a `PanicException` traceback.
//! - [`detach`]: a long call runs with the GIL released and, on the main thread, a SIGINT
//!   handler that asks the core to stop ([`cancel::request`]); the core's loops poll
//!   [`cancel::check`] and return their `Interrupted` error, which raises `KeyboardInterrupt`.
//!   The previous handler (Python's) is restored afterwards. A Ctrl-C that arrived during a
//!   call that finished anyway still raises `KeyboardInterrupt` when the call returns, as
//!   Python's own handler would have.

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

use hypercuboid_core::cancel;
use pyo3::marker::Ungil;
use pyo3::prelude::*;

use crate::errors::{interrupted, Class};

thread_local! {
    /// Entries of [`call`] running on this thread (the panic hook stays quiet inside one).
    static GUARDED: Cell<u32> = const { Cell::new(0) };
    /// A SIGINT arrived during a [`detach`] of the current [`call`].
    static SIGINT_SEEN: Cell<bool> = const { Cell::new(false) };
}

static HOOK: Once = Once::new();

/// Entries of [`call`] running in the process (on any thread).
static CALLS: AtomicUsize = AtomicUsize::new(0);

/// The first panic of a thread the core started (a worker) during a [`call`]: the worker's
/// message, which the call's own panic ("a scoped thread panicked") would otherwise hide.
static WORKER_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Installs (once) a panic hook that prints nothing while a [`call`] runs: a panic on the
/// call's thread becomes its Python error, one on a worker thread is kept for it
/// ([`WORKER_PANIC`]). With no call running it defers to the previous hook.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CALLS.load(Ordering::SeqCst) == 0 {
                previous(info);
            } else if GUARDED.with(Cell::get) == 0 {
                let mut w = WORKER_PANIC.lock().unwrap_or_else(|e| e.into_inner());
                w.get_or_insert_with(|| panic_message(info.payload()));
            }
        }));
    });
}

/// The message of a panic's payload.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Runs the body of the entry `what` (its Python name): a panic becomes an exception of
/// `class` whose message names `what` ("`what`: internal error: <message>; please report").
pub(crate) fn call<T>(class: Class, what: &str, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    install_hook();
    let worker = || {
        WORKER_PANIC
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    };
    if GUARDED.with(Cell::get) == 0 {
        worker();
    }
    CALLS.fetch_add(1, Ordering::SeqCst);
    GUARDED.with(|g| g.set(g.get() + 1));
    let outer = SIGINT_SEEN.with(|s| s.replace(false));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    CALLS.fetch_sub(1, Ordering::SeqCst);
    let seen = SIGINT_SEEN.with(|s| s.replace(outer));
    match result {
        Ok(Ok(_)) if seen => Err(interrupted()),
        Ok(r) => r,
        Err(payload) => {
            let message = worker().unwrap_or_else(|| panic_message(payload.as_ref()));
            Err(class.err(format!("{what}: internal error: {message}; please report")))
        }
    }
}

/// Runs `f` (a long call into the core) with the GIL released and Ctrl-C wired to
/// [`cancel::request`] (see the module's docs).
pub(crate) fn detach<T: Ungil, F: Ungil + FnOnce() -> T>(py: Python<'_>, f: F) -> T {
    let _sigint = Sigint::install(py);
    py.detach(f)
}

extern "C" fn on_sigint(_: libc::c_int) {
    cancel::request();
}

/// SIGINT handled by [`on_sigint`] while it lives; the previous handler restored on drop.
struct Sigint {
    previous: Option<libc::sigaction>,
}

impl Sigint {
    /// Installs the handler on the main thread (where Python handles signals), unless SIGINT
    /// is ignored there; elsewhere nothing changes.
    fn install(py: Python<'_>) -> Sigint {
        if !is_main_thread(py) {
            return Sigint { previous: None };
        }
        cancel::clear();
        // SAFETY: sigaction with a zeroed struct, a valid handler and its own signal mask; the
        // previous action is written to `previous` and restored as it was.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigint as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGINT, &action, &mut previous) != 0 {
                return Sigint { previous: None };
            }
            if previous.sa_sigaction == libc::SIG_IGN {
                libc::sigaction(libc::SIGINT, &previous, std::ptr::null_mut());
                return Sigint { previous: None };
            }
            Sigint {
                previous: Some(previous),
            }
        }
    }
}

impl Drop for Sigint {
    fn drop(&mut self) {
        let Some(previous) = self.previous.take() else {
            return;
        };
        // SAFETY: restores the action saved by `install`.
        unsafe {
            libc::sigaction(libc::SIGINT, &previous, std::ptr::null_mut());
        }
        if cancel::requested() {
            SIGINT_SEEN.with(|s| s.set(true));
        }
        cancel::clear();
    }
}

/// Whether this is Python's main thread (the one that handles signals).
fn is_main_thread(py: Python<'_>) -> bool {
    (|| -> PyResult<bool> {
        let threading = py.import("threading")?;
        let current = threading.call_method0("current_thread")?;
        let main = threading.call_method0("main_thread")?;
        Ok(current.is(&main))
    })()
    .unwrap_or(false)
}

/// Raises a Rust panic with `message` inside [`call`] (what the tests inject); with `worker`,
/// in a thread the call starts, as the core's parallel engines do.
#[pyfunction(name = "_panic_for_test")]
#[pyo3(signature = (message, worker = false))]
fn panic_for_test(message: &str, worker: bool) -> PyResult<()> {
    call(Class::Schedule, "_panic_for_test", || {
        if worker {
            std::thread::scope(|s| {
                s.spawn(|| panic!("{message}"));
            });
        }
        panic!("{message}");
    })
}

/// Polls [`cancel::check`] every millisecond for up to `seconds` with the GIL released, as a
/// long core loop does (what the Ctrl-C test interrupts); returns the polls made.
#[pyfunction(name = "_wait_for_test")]
fn wait_for_test(py: Python<'_>, seconds: f64) -> PyResult<u64> {
    call(Class::Simulation, "_wait_for_test", || {
        let polls = detach(py, || {
            let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds);
            let mut polls = 0u64;
            while std::time::Instant::now() < end {
                cancel::check()?;
                polls += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Ok::<_, cancel::Interrupted>(polls)
        });
        polls.map_err(|_| interrupted())
    })
}

/// Adds the hidden test entries.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add!(m, [], [panic_for_test, wait_for_test]);
    Ok(())
}
