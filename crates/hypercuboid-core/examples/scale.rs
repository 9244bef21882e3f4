//! Generate + simulate one allreduce of 8 B at scale, printing times, peak memory and, under the
//! postal model, whether the completion time equals the algorithm's closed form (a measurement
//! tool for `docs/performance.md`, section "Scale"):
//! `cargo run --release -p hypercuboid-core --example scale -- ALGORITHM LOG2N [MODEL]`.
//! With `generate` for the model it only generates, `REPEAT` times (default 5), and prints each
//! generation's wall time and the least (for `perf stat -e task-clock`: generation alone):
//! `... --example scale -- tree 20 generate [REPEAT]`.

use hypercuboid_core::collectives::allreduce::{cost, generate, Algorithm, AllreduceSpec};
use hypercuboid_core::model::{parse_model, ModelSpec};
use hypercuboid_core::schedule::{Dtype, ReduceOp};
use hypercuboid_core::sim::{simulate, SimOptions};
use std::time::Instant;

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let alg = Algorithm::parse(args.get(1).map_or("recursive_doubling", |s| s)).unwrap();
    let log2n: u32 = args.get(2).map_or(20, |s| s.parse().unwrap());
    if args.get(3).map(String::as_str) == Some("generate") {
        let repeat: u32 = args.get(4).map_or(5, |s| s.parse().unwrap());
        let spec = AllreduceSpec::new(1 << log2n, 1, Dtype::Int64, ReduceOp::Sum);
        let mut times = Vec::new();
        let mut shapes = 0;
        for _ in 0..repeat {
            let t0 = Instant::now();
            let s = generate(&alg, &spec).unwrap();
            times.push(t0.elapsed().as_secs_f64());
            shapes = s.num_shapes();
        }
        let least = times.iter().copied().fold(f64::INFINITY, f64::min);
        let each: Vec<String> = times.iter().map(|t| format!("{t:.4}")).collect();
        println!(
            "{} 2^{log2n}: {shapes} shapes; generate {} s (least {least:.4} s); peak RSS {:.0} MB",
            alg.name(),
            each.join(", "),
            peak_rss_mb()
        );
        return;
    }
    let model = parse_model(
        args.get(3)
            .map_or("loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535", |s| s),
    )
    .unwrap();
    let spec = AllreduceSpec::new(1 << log2n, 1, Dtype::Int64, ReduceOp::Sum);
    let t0 = Instant::now();
    let s = generate(&alg, &spec).unwrap();
    let t1 = Instant::now();
    let threads = std::env::var("HC_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let opts = SimOptions {
        threads,
        ..SimOptions::default()
    };
    let r = simulate(&s, &model, &opts).unwrap();
    let t2 = Instant::now();
    let closed = match &model {
        ModelSpec::Postal(m) => match cost::allreduce(&alg, &spec, m) {
            Ok(t) => format!(
                "; closed form {t} ps ({})",
                if t == r.completion {
                    "equal"
                } else {
                    "DIFFERENT"
                }
            ),
            Err(e) => format!("; no closed form ({e})"),
        },
        _ => String::new(),
    };
    println!(
        "{} 2^{log2n}: {} ops, {} shapes, {} explicit peers, schedule {:.1} MB; generate {:.3} s, \
         simulate {:.3} s ({:.1} Mops/s); completion {} ps; peak RSS {:.0} MB{closed}",
        alg.name(),
        r.ops,
        s.num_shapes(),
        s.explicit_peers(),
        s.memory_bytes() as f64 / 1e6,
        (t1 - t0).as_secs_f64(),
        (t2 - t1).as_secs_f64(),
        r.ops as f64 / (t2 - t1).as_secs_f64() / 1e6,
        r.completion,
        peak_rss_mb()
    );
}
