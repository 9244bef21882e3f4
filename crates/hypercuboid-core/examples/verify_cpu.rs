//! The verifier's matching and deadlock check alone: generates one allreduce of one `float64`
//! a rank, verifies it without the symbolic check (`eager_limit = 0`: every send synchronous)
//! on `THREADS` threads and prints the wall time, the soundness and the message count. A
//! measurement tool for `docs/performance.md` ("The verifier on every core"), small enough to
//! run under `valgrind --tool=cachegrind` for instruction counts:
//! `cargo run --release -p hypercuboid-core --example verify_cpu -- [ALGORITHM] [LOG2N] [THREADS]`
//! (defaults: `recursive_doubling 20 1`).

use hypercuboid_core::collectives::allreduce::{generate, Algorithm, AllreduceSpec};
use hypercuboid_core::schedule::verify::{verify, VerifyOptions};
use hypercuboid_core::schedule::{Dtype, ReduceOp};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: verify_cpu [ALGORITHM] [LOG2N 1..=24] [THREADS >= 1]";
    let alg = match Algorithm::parse(args.get(1).map_or("recursive_doubling", |s| s)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}\n{usage}");
            std::process::exit(2);
        }
    };
    let log2n: u32 = match args.get(2).map_or(Ok(20), |s| s.parse()) {
        Ok(k) if (1..=24).contains(&k) => k,
        _ => {
            eprintln!("invalid LOG2N {:?}\n{usage}", args[2]);
            std::process::exit(2);
        }
    };
    let threads: usize = match args.get(3).map_or(Ok(1), |s| s.parse()) {
        Ok(t) if t >= 1 => t,
        _ => {
            eprintln!("invalid THREADS {:?}\n{usage}", args[3]);
            std::process::exit(2);
        }
    };
    let spec = AllreduceSpec::new(1 << log2n, 1, Dtype::Float64, ReduceOp::Sum);
    let s = match generate(&alg, &spec) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let opts = VerifyOptions {
        semantics: false,
        eager_limit: 0,
        threads,
        ..VerifyOptions::default()
    };
    let t = Instant::now();
    let r = verify(&s, &opts);
    println!(
        "{} 2^{log2n}: verify on {threads} thread(s) {:.3} s; sound {}; {} ops, {} messages",
        args.get(1).map_or("recursive_doubling", |s| s),
        t.elapsed().as_secs_f64(),
        r.is_sound(),
        r.stats.ops,
        r.stats.messages
    );
}
