//! Packet engine throughput on the seed's Slim Fly (q = 13, p = 9, 3042 nodes) under uniform
//! traffic with minimal routing at 30 % and 90 % load: delivered packets per second. Criterion
//! runs 20 µs of simulated time (4 µs warm-up) per iteration, with one engine thread and with
//! every core; `benchmarks/netsim.py` measures the full 200 µs runs. A second group runs the
//! radix-64 Slim Fly (q = 29, p = 21: 35 322 nodes) at 30 % for 4 µs (1 µs warm-up): the
//! scale case of issue 17, whose full 100 µs run `benchmarks/netsim.py --topo
//! slimfly:q=29,p=21` measures.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hypercuboid_core::network::{
    NetParams, Network, RoutingSpec, Synthetic, TrafficSpec, Workload,
};
use hypercuboid_core::topology::generate;
use hypercuboid_core::units::us;

fn slim_fly(c: &mut Criterion) {
    let topo = generate("slimfly:q=13,p=9").unwrap();
    let mut g = c.benchmark_group("netsim slimfly:q=13,p=9 uniform 20us");
    g.sample_size(10);
    for (routing, threads) in [("min", 1), ("min", 0), ("ugal", 1), ("ugal", 0)] {
        let p = NetParams {
            threads,
            ..NetParams::default()
        };
        let net = Network::new(&topo, &RoutingSpec::parse(routing).unwrap(), p).unwrap();
        let label = if threads == 0 {
            "all cores"
        } else {
            "1 thread"
        };
        let pattern = TrafficSpec::Uniform
            .resolve(&topo, net.routes(), 1)
            .unwrap();
        for load in [0.3, 0.9] {
            let mut s = Synthetic::new(pattern.clone(), load);
            s.warmup = us(4);
            s.duration = us(20);
            let w = Workload::Synthetic(s);
            let delivered = net.run(&w, "uniform").unwrap().delivered_total;
            g.throughput(Throughput::Elements(delivered));
            g.bench_function(format!("{routing} load {load} {label}"), |b| {
                b.iter(|| net.run(&w, "uniform").unwrap())
            });
        }
    }
    g.finish();
}

fn slim_fly_radix_64(c: &mut Criterion) {
    let topo = generate("slimfly:q=29,p=21").unwrap();
    let mut g = c.benchmark_group("netsim slimfly:q=29,p=21 uniform 4us");
    g.sample_size(10);
    for threads in [1, 0] {
        let p = NetParams {
            threads,
            ..NetParams::default()
        };
        let net = Network::new(&topo, &RoutingSpec::parse("min").unwrap(), p).unwrap();
        let label = if threads == 0 {
            "all cores"
        } else {
            "1 thread"
        };
        let pattern = TrafficSpec::Uniform
            .resolve(&topo, net.routes(), 1)
            .unwrap();
        let mut s = Synthetic::new(pattern, 0.3);
        s.warmup = us(1);
        s.duration = us(4);
        let w = Workload::Synthetic(s);
        let delivered = net.run(&w, "uniform").unwrap().delivered_total;
        g.throughput(Throughput::Elements(delivered));
        g.bench_function(format!("min load 0.3 {label}"), |b| {
            b.iter(|| net.run(&w, "uniform").unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, slim_fly, slim_fly_radix_64);
criterion_main!(benches);
