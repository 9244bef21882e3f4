//! Packet engine throughput on the seed's Slim Fly (q = 13, p = 9, 3042 nodes) under uniform
//! traffic with minimal routing at 30 % and 90 % load: delivered packets per second. Criterion
//! runs 20 µs of simulated time (4 µs warm-up) per iteration, with one engine thread and with
//! every core; `benchmarks/netsim.py` measures the full 200 µs runs. A second group runs the
//! radix-64 Slim Fly (q = 29, p = 21: 35 322 nodes) at 30 % for 4 µs (1 µs warm-up): the
//! scale case of issue 17, whose full 100 µs run `benchmarks/netsim.py --topo
//! slimfly:q=29,p=21` measures.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use hypercuboid_core::network::{
    NetParams, Network, RoutingSpec, Synthetic, TrafficSpec, Workload,
};
use hypercuboid_core::topology::{generate, Topology};
use hypercuboid_core::units::{us, Time};

/// Benchmarks `routing` on `topo` with `threads` engine threads (0: every core) under
/// uniform traffic at each of `loads`, `warmup` and `duration` of simulated time an iteration.
fn uniform(
    g: &mut BenchmarkGroup<'_, WallTime>,
    topo: &Topology,
    routing: &str,
    threads: usize,
    loads: &[f64],
    (warmup, duration): (Time, Time),
) {
    let p = NetParams {
        threads,
        ..NetParams::default()
    };
    let net = Network::new(topo, &RoutingSpec::parse(routing).unwrap(), p).unwrap();
    let label = if threads == 0 {
        "all cores"
    } else {
        "1 thread"
    };
    let pattern = TrafficSpec::Uniform.resolve(topo, net.routes(), 1).unwrap();
    for &load in loads {
        let mut s = Synthetic::new(pattern.clone(), load);
        s.warmup = warmup;
        s.duration = duration;
        let w = Workload::Synthetic(s);
        let delivered = net.run(&w, "uniform").unwrap().delivered_total;
        g.throughput(Throughput::Elements(delivered));
        g.bench_function(format!("{routing} load {load} {label}"), |b| {
            b.iter(|| net.run(&w, "uniform").unwrap())
        });
    }
}

fn slim_fly(c: &mut Criterion) {
    let topo = generate("slimfly:q=13,p=9").unwrap();
    let mut g = c.benchmark_group("netsim slimfly:q=13,p=9 uniform 20us");
    g.sample_size(10);
    for (routing, threads) in [("min", 1), ("min", 0), ("ugal", 1), ("ugal", 0)] {
        uniform(
            &mut g,
            &topo,
            routing,
            threads,
            &[0.3, 0.9],
            (us(4), us(20)),
        );
    }
    g.finish();
}

fn slim_fly_radix_64(c: &mut Criterion) {
    let topo = generate("slimfly:q=29,p=21").unwrap();
    let mut g = c.benchmark_group("netsim slimfly:q=29,p=21 uniform 4us");
    g.sample_size(10);
    for threads in [1, 0] {
        uniform(&mut g, &topo, "min", threads, &[0.3], (us(1), us(4)));
    }
    g.finish();
}

criterion_group!(benches, slim_fly, slim_fly_radix_64);
criterion_main!(benches);
