//! A request to stop ([`hypercuboid_core::cancel::request`]) ends a long run with its
//! subsystem's `Interrupted` error. In a test binary of their own: the flag is global to the
//! process, and would stop the other tests' runs. The tests here take turns ([`TURN`]).

use hypercuboid_core::cancel;
use hypercuboid_core::collectives::allreduce;
use hypercuboid_core::model::parse_model;
use hypercuboid_core::schedule::verify::{try_verify, VerifyOptions};
use hypercuboid_core::schedule::{Dtype, ReduceOp, Schedule, ScheduleError};
use hypercuboid_core::sim::{simulate, SimError, SimOptions};
use std::sync::Mutex;
use std::time::Duration;

static TURN: Mutex<()> = Mutex::new(());

fn recursive_doubling(n: u32) -> Schedule {
    let a = allreduce::Algorithm::parse("recursive_doubling").unwrap();
    let spec = allreduce::AllreduceSpec::new(n, 1, Dtype::Float64, ReduceOp::Sum);
    allreduce::generate(&a, &spec).unwrap()
}

/// Runs `work` while another thread asks to stop after 20 ms; clears the flag after.
fn stopped<T>(work: impl FnOnce() -> T) -> T {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    cancel::clear();
    let out = std::thread::scope(|sc| {
        sc.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            cancel::request();
        });
        work()
    });
    cancel::clear();
    out
}

/// A run far longer than the 20 ms before the request: recursive doubling on 4096 ranks,
/// repeated 100,000 times (some 10^10 events).
fn long_run() -> Result<hypercuboid_core::sim::SimResult, SimError> {
    let s = recursive_doubling(4096);
    let m = parse_model("loggops:L=3000,o=1500,g=1000,G=6").unwrap();
    let opts = SimOptions {
        calls: 100_000,
        ..SimOptions::default()
    };
    stopped(|| simulate(&s, &m, &opts))
}

#[test]
fn a_simulation_on_one_thread_stops() {
    assert_eq!(long_run().unwrap_err(), SimError::Interrupted);
}

#[test]
fn a_simulation_on_lanes_stops() {
    // (A repeated run is not split across lanes; one on 2^18 ranks is.)
    let s = recursive_doubling(1 << 18);
    let m = parse_model("postal:alpha=1us").unwrap();
    let opts = SimOptions {
        threads: 2,
        ..SimOptions::default()
    };
    let r = stopped(|| {
        // Many runs back to back, so that the request comes during one of them.
        (0..10_000).try_for_each(|_| simulate(&s, &m, &opts).map(drop))
    });
    assert_eq!(r.unwrap_err(), SimError::Interrupted);
}

#[test]
fn a_verification_stops() {
    let s = recursive_doubling(1 << 16);
    let opts = VerifyOptions {
        threads: 2,
        ..VerifyOptions::default()
    };
    let r = stopped(|| (0..10_000).try_for_each(|_| try_verify(&s, &opts).map(drop)));
    assert_eq!(r.unwrap_err(), ScheduleError::Interrupted);
}

#[test]
fn a_run_after_a_cleared_request_finishes() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    cancel::request();
    cancel::clear();
    let s = recursive_doubling(64);
    let m = parse_model("postal:alpha=1us").unwrap();
    assert_eq!(
        simulate(&s, &m, &SimOptions::default()).unwrap().completion,
        6 * 1_000_000
    );
}
