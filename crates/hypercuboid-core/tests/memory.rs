//! Memory refused before it is allocated ([`hypercuboid_core::resources`]): each request whose
//! estimate exceeds the limit gives the one-line `Memory` error instead of an allocation abort.
//! In a test binary of its own: the limit is global to the process. The tests take turns.

use hypercuboid_core::collectives::{allreduce, alltoall};
use hypercuboid_core::model::parse_model;
use hypercuboid_core::resources::{
    set_memory_limit, TooLarge, SCHEDULE_BYTES_PER_OP, SCHEDULE_BYTES_PER_RANK,
};
use hypercuboid_core::schedule::goal;
use hypercuboid_core::schedule::verify::{try_verify, VerifyOptions, VERIFY_BYTES_PER_OP};
use hypercuboid_core::schedule::{Dtype, ReduceOp, ScheduleError};
use hypercuboid_core::sim::{simulate, SimError, SimOptions, SIM_BYTES_PER_RANK};
use std::sync::Mutex;

static TURN: Mutex<()> = Mutex::new(());

/// Runs `f` under a memory limit of `limit` bytes, then lifts it.
fn limited<T>(limit: u64, f: impl FnOnce() -> T) -> T {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    set_memory_limit(Some(limit));
    let out = f();
    set_memory_limit(None);
    out
}

fn too_large(e: ScheduleError) -> TooLarge {
    match e {
        ScheduleError::Memory(t) => t,
        e => panic!("not a memory error: {e}"),
    }
}

const GB: u64 = 1_000_000_000;

#[test]
fn a_ring_on_2_pow_32_ranks_is_refused() {
    let a = allreduce::Algorithm::parse("ring").unwrap();
    let spec = allreduce::AllreduceSpec::new(4_294_967_294, 1, Dtype::Float64, ReduceOp::Sum);
    let e = too_large(limited(8 * GB, || allreduce::generate(&a, &spec)).unwrap_err());
    assert_eq!(e.what, "the allreduce ring on 4294967294 ranks");
    assert_eq!(e.estimate, 4_294_967_294 * SCHEDULE_BYTES_PER_RANK);
    assert_eq!(e.limit, 8 * GB);
}

#[test]
fn alltoall_linear_on_200000_ranks_is_refused() {
    let a = alltoall::Algorithm::parse("linear").unwrap();
    let spec = alltoall::AlltoallSpec::new(200_000, 1, Dtype::Float64);
    let e = too_large(limited(8 * GB, || alltoall::generate(&a, &spec)).unwrap_err());
    assert_eq!(e.what, "the alltoall linear on 200000 ranks");
    // Rank 0 sends to and receives from every other rank, and copies its own block.
    assert_eq!(
        e.estimate,
        200_000 * ((2 * 199_999 + 1) * SCHEDULE_BYTES_PER_OP + SCHEDULE_BYTES_PER_RANK)
    );
}

#[test]
fn a_goal_file_of_2_pow_32_ranks_is_refused() {
    let text = "num_ranks 4294967294\nrank 0 {\nl0: calc 1\n}\n";
    let e = limited(8 * GB, || goal::parse(text, "big")).unwrap_err();
    assert_eq!(e.to_string().lines().count(), 1, "a one-line error: {e}");
    let e = too_large(e);
    assert_eq!(e.what, "a GOAL schedule of 4294967294 ranks");
    assert_eq!(e.estimate, 4_294_967_294 * SCHEDULE_BYTES_PER_RANK);
}

#[test]
fn recursive_doubling_under_a_small_limit_is_refused() {
    let a = allreduce::Algorithm::parse("recursive_doubling").unwrap();
    let spec = allreduce::AllreduceSpec::new(1 << 24, 1, Dtype::Float64, ReduceOp::Sum);
    let e = too_large(limited(100_000_000, || allreduce::generate(&a, &spec)).unwrap_err());
    assert_eq!(e.estimate, (1 << 24) * SCHEDULE_BYTES_PER_RANK);
    // Its simulation and verification on 2^16 ranks, under a limit below their estimates.
    let spec = allreduce::AllreduceSpec::new(1 << 16, 1, Dtype::Float64, ReduceOp::Sum);
    let s = allreduce::generate(&a, &spec).unwrap();
    let m = parse_model("postal:alpha=1us").unwrap();
    match limited(1_000_000, || simulate(&s, &m, &SimOptions::default())) {
        Err(SimError::Memory(e)) => {
            assert_eq!(
                e.what,
                format!("simulating {} ops on 65536 ranks", s.total_ops())
            );
            assert!(
                e.estimate >= (1 << 16) * SIM_BYTES_PER_RANK,
                "{}",
                e.estimate
            );
        }
        r => panic!("not refused: {:?}", r.map(|r| r.completion)),
    }
    let e =
        too_large(limited(1_000_000, || try_verify(&s, &VerifyOptions::default())).unwrap_err());
    assert_eq!(
        e.what,
        format!("verifying {} ops on 65536 ranks", s.total_ops())
    );
    assert!(e.estimate >= s.total_ops() * VERIFY_BYTES_PER_OP);
    // Without the limit both run.
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(
        simulate(&s, &m, &SimOptions::default()).unwrap().completion,
        16 * 1_000_000
    );
    assert!(try_verify(&s, &VerifyOptions::default())
        .unwrap()
        .is_sound());
}
