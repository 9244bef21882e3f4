//! The schedule simulator's CPU time alone, on a shared machine: generates one allreduce of 8 B
//! once, simulates it `REPS` times and prints each run's CPU time (the thread's, so other
//! processes on the machine do not count), the minimum and median, the first run's wall time
//! and minor page faults (the first run of a fresh process touches fresh memory: what a
//! one-shot simulation pays), the completion time and a hash of every rank's finish time (two
//! binaries that print the same hash computed the same per-rank results). A measurement tool
//! for `docs/performance.md`, section "Where the time goes":
//! `cargo run --release -p hypercuboid-core --example sim_cpu -- ALGORITHM LOG2N [MODEL] [REPS]
//! [THREADS]` (THREADS: 1 by default, 0 to let the engine choose; the wall times then count
//! every thread's work, the CPU times the main thread's alone).

use hypercuboid_core::collectives::allreduce::{generate, Algorithm, AllreduceSpec};
use hypercuboid_core::model::parse_model;
use hypercuboid_core::schedule::{Dtype, ReduceOp};
use hypercuboid_core::sim::{simulate, SimOptions};

/// Nanoseconds this thread has run on a CPU (`CLOCK_THREAD_CPUTIME_ID`, exact; other processes
/// on the machine do not count).
#[cfg(target_os = "linux")]
fn thread_cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid `struct timespec` (two 64-bit fields on 64-bit Linux) that the
    // call writes.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Minor page faults of the process so far (`getrusage`).
#[cfg(target_os = "linux")]
fn minor_faults() -> u64 {
    // `struct rusage` on 64-bit Linux: two `timeval`s (16 bytes each), then 14 longs, of which
    // `ru_minflt` is the fifth.
    #[repr(C)]
    struct Rusage {
        times: [i64; 4],
        longs: [i64; 14],
    }
    extern "C" {
        fn getrusage(who: i32, usage: *mut Rusage) -> i32;
    }
    const RUSAGE_SELF: i32 = 0;
    let mut r = Rusage {
        times: [0; 4],
        longs: [0; 14],
    };
    // SAFETY: `r` has the size and layout of `struct rusage` on 64-bit Linux; the call writes it.
    let rc = unsafe { getrusage(RUSAGE_SELF, &mut r) };
    assert_eq!(rc, 0, "getrusage failed");
    r.longs[4] as u64
}

#[cfg(not(target_os = "linux"))]
fn minor_faults() -> u64 {
    0
}

/// Elsewhere: wall-clock nanoseconds since the first call (other processes count).
#[cfg(not(target_os = "linux"))]
fn thread_cpu_ns() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let alg = Algorithm::parse(args.get(1).map_or("recursive_doubling", |s| s)).unwrap();
    let log2n: u32 = args.get(2).map_or(20, |s| s.parse().unwrap());
    let model = parse_model(
        args.get(3)
            .map_or("loggops:L=3000,o=1500,g=1000,G=6,order=gcc", |s| s),
    )
    .unwrap();
    let reps: usize = args.get(4).map_or(3, |s| s.parse().unwrap());
    let threads: usize = args.get(5).map_or(1, |s| s.parse().unwrap());
    let opts = SimOptions {
        threads,
        ..SimOptions::default()
    };
    let spec = AllreduceSpec::new(1 << log2n, 1, Dtype::Int64, ReduceOp::Sum);
    let s = generate(&alg, &spec).unwrap();
    let mut cpu = Vec::new();
    let mut wall = Vec::new();
    let mut first = None;
    let mut last = None;
    for _ in 0..reps {
        let (f0, w0, c0) = (minor_faults(), std::time::Instant::now(), thread_cpu_ns());
        let r = simulate(&s, &model, &opts).unwrap();
        cpu.push((thread_cpu_ns() - c0) as f64 / 1e9);
        wall.push(w0.elapsed().as_secs_f64());
        first.get_or_insert((w0.elapsed().as_secs_f64(), minor_faults() - f0));
        // FNV-1a over the per-rank finish times.
        let hash = r
            .rank_finish
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, &t| {
                (h ^ t).wrapping_mul(0x0000_0100_0000_01b3)
            });
        last = Some((r.completion, r.ops, r.messages, hash));
    }
    let (completion, ops, messages, hash) = last.unwrap();
    let (first_wall, first_faults) = first.unwrap();
    let runs: Vec<String> = cpu.iter().map(|c| format!("{c:.3}")).collect();
    cpu.sort_by(f64::total_cmp);
    wall.sort_by(f64::total_cmp);
    println!(
        "{} 2^{log2n}, {threads} thread(s): simulate wall s min {:.3} median {:.3}; main \
         thread's CPU s min {:.3} median {:.3} (runs {}); first run wall \
         {first_wall:.4} s, {first_faults} minor faults; {ops} ops, {messages} messages; \
         completion {completion} ps; rank_finish hash {hash:016x}",
        alg.name(),
        wall[0],
        wall[wall.len() / 2],
        cpu[0],
        cpu[cpu.len() / 2],
        runs.join(" "),
    );
}
