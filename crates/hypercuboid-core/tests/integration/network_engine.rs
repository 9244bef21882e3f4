//! The packet engine: exact zero-load latencies, determinism, conservation, saturation under
//! the worst case, the deadlock watchdog, and parameter errors.

use crate::common::{t0, L, S, SIGMA, ZERO_LOAD_CASES};
use hypercuboid_core::network::{
    ExchangePlan, ExchangeSpec, NetParams, Network, NetworkError, Pattern, Report, RoutingSpec,
    Synthetic, TrafficSpec, Workload,
};
use hypercuboid_core::topology::{generate, Topology};
use hypercuboid_core::units::{ns, us, Time};

fn net<'t>(topo: &'t Topology, routing: &str) -> Network<'t> {
    Network::new(
        topo,
        &RoutingSpec::parse(routing).unwrap(),
        NetParams::default(),
    )
    .unwrap()
}

fn synthetic(
    topo: &Topology,
    n: &Network,
    traffic: &str,
    load: f64,
    dur_us: u64,
    drain: bool,
) -> Result<Report, NetworkError> {
    let pattern = TrafficSpec::parse(traffic)
        .unwrap()
        .resolve(topo, n.routes(), 7)?;
    let mut s = Synthetic::new(pattern, load);
    s.duration = us(dur_us);
    s.warmup = us(dur_us / 5);
    s.drain = drain;
    n.run(&Workload::Synthetic(s), traffic)
}

/// `count` packets from endpoint `src` to endpoint `dst`, nothing else.
fn one_message(topo: &Topology, src: usize, dst: usize, count: u32) -> ExchangePlan {
    let n = topo.num_endpoints();
    let mut off = vec![0u64; n + 1];
    for o in off.iter_mut().skip(src + 1) {
        *o = 1;
    }
    ExchangePlan {
        name: "one".into(),
        nodes: 1,
        dims: None,
        off,
        dest: vec![dst as u32],
        packets_per_message: count,
        interleave: false,
        message_bytes: count as u64 * 256,
    }
}

#[test]
fn zero_load_latency_is_the_closed_form() {
    assert_eq!(t0(2), ns(520) + 480);
    for (spec, src, dst, hops) in ZERO_LOAD_CASES {
        let (src, dst) = (src as usize, dst as usize);
        let topo = generate(spec).unwrap();
        for routing in ["min", "ugal", "ugal-th"] {
            let n = net(&topo, routing);
            let r = topo.endpoint_router(src);
            let d = topo.endpoint_router(dst);
            assert_eq!(n.routes().dist(r, d) as Time, hops, "{spec}");
            let plan = one_message(&topo, src, dst, 1);
            let rep = n.run(&Workload::Exchange(plan), "one").unwrap();
            assert_eq!(rep.completion, Some(t0(hops)), "{spec} {routing}");
            assert_eq!(n.zero_load_latency(hops as u32), t0(hops));
            assert_eq!(rep.latency.min(), t0(hops));
            assert_eq!(rep.hops[hops as usize], 1);
            // 30 packets back to back (one all-to-all message): the pipeline delivers one
            // packet per serialisation time after the first.
            let plan = one_message(&topo, src, dst, 30);
            let rep = n.run(&Workload::Exchange(plan), "one").unwrap();
            assert_eq!(
                rep.completion,
                Some(t0(hops) + 29 * SIGMA),
                "{spec} {routing}"
            );
            assert_eq!(rep.latency.max(), t0(hops), "no queueing at zero load");
        }
    }
    // Half the bandwidth doubles the serialisation.
    let topo = generate("mlfm:h=4,bw=50").unwrap();
    let rep = net(&topo, "min")
        .run(&Workload::Exchange(one_message(&topo, 0, 4, 1)), "one")
        .unwrap();
    assert_eq!(rep.completion, Some(4 * L + 3 * S + 2 * SIGMA));
}

#[test]
fn valiant_latency_counts_four_hops() {
    // On an MLFM every indirect path has 4 hops: zero-load latency t0(4).
    let topo = generate("mlfm:h=4").unwrap();
    let n = net(&topo, "inr");
    for dst in [4, 20, 79] {
        let rep = n
            .run(&Workload::Exchange(one_message(&topo, 0, dst, 1)), "one")
            .unwrap();
        assert_eq!(rep.completion, Some(t0(4)), "0 -> {dst}");
        assert_eq!(rep.hops, vec![0, 0, 0, 0, 1]);
        assert_eq!(rep.indirect, 1);
    }
}

#[test]
fn hop_histograms_of_each_routing() {
    // Uniform traffic includes destinations on the source's own router (0 hops).
    for (spec, routing, hops) in [
        ("mlfm:h=4", "min", vec![0, 2]),
        ("mlfm:h=4", "inr", vec![0, 4]),
        ("oft:k=4", "inr", vec![0, 4]),
        ("slimfly:q=5", "min", vec![0, 1, 2]),
        ("slimfly:q=5", "inr", vec![0, 2, 3, 4]),
    ] {
        let topo = generate(spec).unwrap();
        let n = net(&topo, routing);
        let rep = synthetic(&topo, &n, "uniform", 0.2, 20, false).unwrap();
        let seen: Vec<usize> = (0..rep.hops.len()).filter(|&h| rep.hops[h] > 0).collect();
        assert_eq!(seen, hops, "{spec} {routing}: {:?}", rep.hops);
    }
}

fn strip(mut r: Report) -> Report {
    r.wall_seconds = 0.0;
    r
}

#[test]
fn runs_are_deterministic_for_a_seed() {
    for (spec, routing, traffic) in [
        ("slimfly:q=5", "ugal", "uniform"),
        ("mlfm:h=4", "ugal-th", "worst"),
        ("oft:k=4", "min:choice=lowest", "permutation"),
    ] {
        let topo = generate(spec).unwrap();
        let n = net(&topo, routing);
        let a = strip(synthetic(&topo, &n, traffic, 0.7, 20, false).unwrap());
        let b = strip(synthetic(&topo, &n, traffic, 0.7, 20, false).unwrap());
        assert!(a.delivered > 1000);
        assert_eq!(a, b, "{spec} {routing} {traffic}");
        let p = NetParams {
            seed: 2,
            ..NetParams::default()
        };
        let n2 = Network::new(&topo, &RoutingSpec::parse(routing).unwrap(), p).unwrap();
        let c = strip(synthetic(&topo, &n2, traffic, 0.7, 20, false).unwrap());
        assert_ne!(a.latency, c.latency, "{spec}: another seed, other draws");
    }
}

#[test]
fn every_packet_is_delivered_after_a_drain() {
    for (spec, routing, traffic, load) in [
        ("slimfly:q=5", "min", "uniform", 0.9),
        ("slimfly:q=5", "inr", "worst", 1.0),
        ("mlfm:h=4", "ugal", "worst", 1.0),
        ("oft:k=4", "ugal-th", "uniform", 1.0),
        ("fattree:k=4,levels=3", "inr", "permutation", 1.0),
        ("torus:dims=4x4,p=2", "ugal", "shift:3", 1.0),
        ("dragonfly:p=2", "min", "uniform", 0.8),
    ] {
        let topo = generate(spec).unwrap();
        let n = net(&topo, routing);
        let rep = synthetic(&topo, &n, traffic, load, 20, true).unwrap();
        assert!(rep.injected_total > 0);
        assert_eq!(rep.injected_total, rep.delivered_total, "{spec} {routing}");
        assert_eq!(
            (rep.in_flight, rep.source_queued),
            (0, 0),
            "{spec} {routing}"
        );
    }
}

#[test]
fn low_load_is_accepted_in_full() {
    for (spec, routing) in [
        ("slimfly:q=5", "ugal"),
        ("mlfm:h=4", "min"),
        ("oft:k=4", "inr"),
    ] {
        let topo = generate(spec).unwrap();
        let n = net(&topo, routing);
        let rep = synthetic(&topo, &n, "uniform", 0.3, 50, false).unwrap();
        // Accepted equals generated to within the packets in flight at the window's edges.
        assert!(
            (rep.accepted - rep.generated).abs() < 0.005,
            "{spec}: {} vs {}",
            rep.accepted,
            rep.generated
        );
        assert!((rep.generated - 0.3).abs() < 0.01);
    }
}

#[test]
fn worst_case_under_min_saturates_at_the_analytic_bound() {
    // Seed section 4.2: MLFM shift by h and OFT shift by k put h (k) flows on every link of
    // their single minimal paths: each node gets 1/h (1/k) of its link.
    for (spec, bound) in [
        ("mlfm:h=4", 0.25),
        ("oft:k=4", 0.25),
        ("oft:k=6", 1.0 / 6.0),
    ] {
        let topo = generate(spec).unwrap();
        let n = net(&topo, "min");
        let rep = synthetic(&topo, &n, "worst", 1.0, 40, false).unwrap();
        assert!(
            rep.accepted <= bound + 1e-3 && rep.accepted >= bound - 0.01,
            "{spec}: accepted {} vs 1/h = {bound}",
            rep.accepted
        );
        let top = rep.top_links(n.routes(), 1);
        assert!(
            top[0].utilisation > 0.99,
            "the bottleneck link is saturated"
        );
        // Below the bound everything gets through.
        let rep = synthetic(&topo, &n, "worst", bound * 0.8, 40, false).unwrap();
        assert!((rep.accepted - rep.generated).abs() < 0.005, "{spec}");
    }
    // Slim Fly: links on the greedy walks carry 2p flows: below 1/(2p) everything is
    // accepted, at full load the walks' nodes get 1/(2p) (a few leftover pairs get more).
    let topo = generate("slimfly:q=5").unwrap(); // p = 4
    let n = net(&topo, "min");
    let rep = synthetic(&topo, &n, "worst", 0.1, 40, false).unwrap();
    assert!((rep.accepted - rep.generated).abs() < 0.005);
    let rep = synthetic(&topo, &n, "worst", 1.0, 40, false).unwrap();
    assert!(
        rep.accepted > 0.125 && rep.accepted < 0.15,
        "{}",
        rep.accepted
    );
    // Valiant spreads the worst case: about half the bandwidth.
    let topo = generate("mlfm:h=4").unwrap();
    let n = net(&topo, "inr");
    let rep = synthetic(&topo, &n, "worst", 1.0, 40, false).unwrap();
    assert!(
        rep.accepted > 0.4 && rep.accepted <= 0.5,
        "{}",
        rep.accepted
    );
}

#[test]
fn watchdog_reports_the_cycle_of_a_forced_deadlock() {
    // A ring of 8 routers, minimal routing, every hop on one VC, buffers of 4 packets.
    let topo = generate("torus:dims=8").unwrap();
    for routing in ["min:vcs=none", "inr:vcs=none"] {
        let p = NetParams {
            buffer_bytes: 4 * 256,
            ..NetParams::default()
        };
        let n = Network::new(&topo, &RoutingSpec::parse(routing).unwrap(), p).unwrap();
        let err = synthetic(&topo, &n, "uniform", 1.0, 50, false).unwrap_err();
        let NetworkError::Deadlock {
            in_flight, cycle, ..
        } = &err
        else {
            panic!("{routing}: expected a deadlock, got {err}");
        };
        assert!(*in_flight > 0);
        assert!(cycle.len() >= 2, "{cycle:?}");
        for (i, c) in cycle.iter().enumerate() {
            let next = cycle[(i + 1) % cycle.len()];
            assert_eq!(c.to, next.from, "{routing}: {cycle:?}");
            assert_eq!(c.vc, 0);
        }
        let msg = err.to_string();
        assert!(msg.starts_with("deadlock at "), "{msg}");
        assert!(
            msg.contains(&format!("cycle of {} waiting channels: r", cycle.len())),
            "{msg}"
        );
        if routing == "min:vcs=none" {
            // Minimal routing on a ring can only wait all the way around it.
            assert_eq!(cycle.len(), 8);
        }
    }
    // The same traffic with the hop-index VCs runs to the end.
    let p = NetParams {
        buffer_bytes: 4 * 256,
        ..NetParams::default()
    };
    let n = Network::new(&topo, &RoutingSpec::parse("min").unwrap(), p).unwrap();
    let rep = synthetic(&topo, &n, "uniform", 1.0, 50, true).unwrap();
    assert_eq!(rep.injected_total, rep.delivered_total);
}

#[test]
fn all_to_all_reaches_the_seeds_throughputs() {
    // Seed Fig. 13: about 100 % effective throughput with minimal and adaptive routing, about
    // half with Valiant. 80 nodes, 30 packets per pair, packets interleaved over destinations.
    let topo = generate("mlfm:h=4").unwrap(); // N = 80
    let a2a = ExchangeSpec::parse("a2a").unwrap();
    for (routing, lo, hi) in [
        ("min", 0.97, 1.0),
        ("ugal", 0.93, 1.0),
        ("ugal-th", 0.97, 1.0),
        ("inr", 0.45, 0.5),
    ] {
        let n = net(&topo, routing);
        let plan = a2a.plan(&topo, 256, 1).unwrap();
        assert_eq!(plan.total_packets(), 80 * 79 * 30);
        let rep = n.run(&Workload::Exchange(plan), "a2a").unwrap();
        assert_eq!(rep.delivered_total, 80 * 79 * 30);
        let eff = rep.effective_throughput.unwrap();
        assert!(eff >= lo && eff <= hi, "{routing}: {eff}");
        // Effective throughput is data per node over completion time.
        let ideal = 79.0 * 30.0 * 20_480.0;
        assert!((eff - ideal / rep.completion.unwrap() as f64).abs() < 1e-9);
    }
    // Whole messages one after the other, in random order, pile up on destinations.
    let seq = ExchangeSpec::AllToAll {
        bytes: 7680,
        interleave: false,
    };
    let rep = net(&topo, "min")
        .run(&Workload::Exchange(seq.plan(&topo, 256, 1).unwrap()), "a2a")
        .unwrap();
    assert!(rep.effective_throughput.unwrap() < 0.9);
}

#[test]
fn nearest_neighbour_on_the_mlfm_torus() {
    // Seed section 4.4 at h = 8: 576 nodes as an 8x9x8 torus mapped contiguously: X inside a
    // router, Y along a layer, Z down a column. Minimal routing puts a router's 8 Y flows on
    // one path (8 flows against 6 messages a node), Valiant gets the X exchanges at full rate
    // and the others at half, UGAL routes Y indirectly and the rest minimally.
    let topo = generate("mlfm:h=8").unwrap();
    let spec = ExchangeSpec::NearestNeighbor {
        dims: Some([8, 9, 8]),
        bytes: 64 * 1024,
    };
    let mut eff = Vec::new();
    for routing in ["min", "inr", "ugal"] {
        let plan = spec.plan(&topo, 256, 1).unwrap();
        assert_eq!(plan.total_packets(), 576 * 6 * 256);
        let rep = net(&topo, routing)
            .run(&Workload::Exchange(plan), "nn")
            .unwrap();
        assert_eq!(rep.delivered_total, 576 * 6 * 256);
        assert_eq!(rep.dims, Some([8, 9, 8]));
        eff.push(rep.effective_throughput.unwrap());
    }
    assert!(
        eff[0] < 0.65 && eff[1] > 0.65 && eff[1] < 0.8 && eff[2] > 0.85,
        "{eff:?}"
    );
}

#[test]
fn bad_parameters_are_refused_with_their_value() {
    let topo = generate("mlfm:h=3").unwrap();
    let n = net(&topo, "min");
    for (load, text) in [(0.0, "0"), (1.5, "1.5"), (-0.1, "-0.1"), (f64::NAN, "NaN")] {
        let e = synthetic(&topo, &n, "uniform", load, 10, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "invalid load {text}: the offered load is a fraction of the injection \
                 bandwidth, in (0, 1]"
            )
        );
    }
    let mut s = Synthetic::new(Pattern::Uniform, 0.5);
    s.warmup = us(10);
    s.duration = us(10);
    assert_eq!(
        n.run(&Workload::Synthetic(s), "uniform")
            .unwrap_err()
            .to_string(),
        "invalid warm-up 10.000 us: the warm-up must be shorter than the simulated time \
         (10.000 us)"
    );
    let p = NetParams {
        buffer_bytes: 700,
        ..NetParams::default()
    };
    let e = Network::new(
        &generate("slimfly:q=5").unwrap(),
        &RoutingSpec::parse("inr").unwrap(),
        p,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid buffer 700 B: it holds 2 packets of 256 B, fewer than the 4 virtual channels \
         routing inr needs on slimfly:q=5,p=4 (one packet per VC at least)"
    );
}

#[test]
fn routings_a_topology_cannot_serve_are_refused() {
    // The error of building a network of `routing` on `topology`.
    let refused = |topology: &str, routing: &str| {
        let t = generate(topology).unwrap();
        let spec = RoutingSpec::parse(routing).unwrap();
        Network::new(&t, &spec, NetParams::default())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused("fullmesh:n=2", "inr"),
        "routing inr cannot run on fullmesh:n=2,p=1: it needs an intermediate router other \
         than the source and destination routers, and only 2 routers have endpoints"
    );
    assert_eq!(
        refused("torus:dims=40x40", "ugal"),
        "routing ugal cannot run on torus:dims=40x40,p=1: the hop-index VC assignment needs 80 \
         virtual channels (diameter 40, twice for indirect paths) and at most 32 are supported"
    );
    let t = generate("torus:dims=4x4").unwrap();
    let n = net(&t, "min");
    let e = TrafficSpec::Worst.resolve(&t, n.routes(), 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "traffic worst cannot run on torus:dims=4x4,p=1: a worst-case pattern is defined for \
         direct topologies of diameter 2 (slimfly, polarfly, 2-D hyperx), mlfm and oft, not \
         for torus of diameter 4; use shift:K or permutation"
    );
}

/// A report without what measures the engine rather than the network.
fn network_only(mut r: Report) -> Report {
    r.wall_seconds = 0.0;
    r.events = 0;
    r.threads = 0;
    r
}

fn with_threads<'t>(topo: &'t Topology, routing: &str, threads: usize) -> Network<'t> {
    let p = NetParams {
        threads,
        ..NetParams::default()
    };
    Network::new(topo, &RoutingSpec::parse(routing).unwrap(), p).unwrap()
}

#[test]
fn threads_do_not_change_the_results() {
    // Every packet, latency, hop count and link count is the same whichever number of parts
    // the routers are split into: synthetic traffic (with and without drain) and exchanges.
    for (spec, routing, traffic, load, drain) in [
        ("slimfly:q=5", "min", "uniform", 0.9, false),
        ("slimfly:q=5", "ugal", "worst", 1.0, true),
        ("mlfm:h=4", "inr", "uniform", 0.6, false),
        ("mlfm:h=4", "ugal-th", "worst", 1.0, false),
        ("oft:k=4", "min:choice=lowest", "permutation", 1.0, true),
        ("fattree:k=4,levels=3", "ugal", "uniform", 1.0, false),
        ("torus:dims=4x4,p=2", "inr", "shift:3", 1.0, true),
    ] {
        let topo = generate(spec).unwrap();
        let one = with_threads(&topo, routing, 1);
        assert_eq!(one.partition().0, vec![0u8; topo.num_routers()]);
        let a = network_only(synthetic(&topo, &one, traffic, load, 20, drain).unwrap());
        assert!(a.delivered > 1000, "{spec} {routing}");
        for threads in [2, 3] {
            let n = with_threads(&topo, routing, threads);
            let (owner, lookahead) = n.partition();
            assert_eq!(*owner.iter().max().unwrap() as usize, threads - 1);
            // A packet crosses the next switch L + S after it is sent, a credit is back
            // σ + L after the packet's head left: the smaller is L + σ at these parameters.
            assert_eq!(lookahead, L + SIGMA.min(S));
            assert_eq!(lookahead, 70_480);
            let b = network_only(synthetic(&topo, &n, traffic, load, 20, drain).unwrap());
            assert_eq!(a, b, "{spec} {routing} {traffic}: {threads} threads");
        }
    }
    let topo = generate("mlfm:h=4").unwrap();
    for (pattern, routing) in [("a2a", "ugal"), ("nn", "min")] {
        let plan = ExchangeSpec::parse(pattern)
            .unwrap()
            .plan(&topo, 256, 1)
            .unwrap();
        let runs: Vec<Report> = [1, 2, 4]
            .iter()
            .map(|&t| {
                let n = with_threads(&topo, routing, t);
                network_only(n.run(&Workload::Exchange(plan.clone()), pattern).unwrap())
            })
            .collect();
        assert!(runs[0].completion.unwrap() > 0);
        assert_eq!(runs[0], runs[1], "{pattern} {routing}: 2 threads");
        assert_eq!(runs[0], runs[2], "{pattern} {routing}: 4 threads");
    }
}

#[test]
fn the_lookahead_is_the_soonest_effect_across_a_link_and_keeps_the_results() {
    // With a switch faster than a serialisation, a packet sent across parts is handled
    // L + S later, sooner than the credit it frees (σ + L): the windows are L + S long. The
    // results still do not depend on the thread count, at every load.
    let topo = generate("slimfly:q=5").unwrap();
    let fast = |threads: usize| NetParams {
        threads,
        switch_latency: ns(5),
        ..NetParams::default()
    };
    let spec = RoutingSpec::parse("ugal").unwrap();
    let one = Network::new(&topo, &spec, fast(1)).unwrap();
    for load in [0.3, 1.0] {
        let a = network_only(synthetic(&topo, &one, "uniform", load, 20, true).unwrap());
        assert!(a.delivered > 1000, "load {load}");
        for threads in [2, 4] {
            let n = Network::new(&topo, &spec, fast(threads)).unwrap();
            assert_eq!(n.partition().1, L + ns(5));
            let b = network_only(synthetic(&topo, &n, "uniform", load, 20, true).unwrap());
            assert_eq!(a, b, "load {load}: {threads} threads");
        }
    }
}

#[test]
fn the_watchdog_finds_a_deadlock_across_threads() {
    let topo = generate("torus:dims=8").unwrap();
    let p = NetParams {
        buffer_bytes: 4 * 256,
        threads: 2,
        ..NetParams::default()
    };
    let n = Network::new(&topo, &RoutingSpec::parse("min:vcs=none").unwrap(), p).unwrap();
    // Two arcs of four routers: two links cut.
    assert_eq!(n.partition().0, vec![0, 1, 1, 1, 1, 0, 0, 0]);
    let err = synthetic(&topo, &n, "uniform", 1.0, 50, false).unwrap_err();
    let NetworkError::Deadlock { cycle, .. } = &err else {
        panic!("expected a deadlock, got {err}");
    };
    assert_eq!(cycle.len(), 8, "{cycle:?}");
}

#[test]
fn utilisation_sums_up_the_links() {
    // Worst case under MIN on an MLFM: the walks' links are saturated, the others idle.
    let topo = generate("mlfm:h=4").unwrap();
    let n = net(&topo, "min");
    let rep = synthetic(&topo, &n, "worst", 1.0, 40, false).unwrap();
    let uses = rep.link_uses(n.routes());
    let u = rep.utilisation(n.routes());
    let sum: f64 = uses.iter().map(|x| x.utilisation).sum();
    assert_eq!(u.mean, sum / uses.len() as f64);
    assert_eq!(u.max, rep.top_links(n.routes(), 1)[0].utilisation);
    assert!(u.max > 0.99 && u.mean < 0.5, "{u:?}");
    assert_eq!(u.endpoint_mean, rep.endpoint_utilisation(n.routes()));
    assert_eq!(
        rep.packets_per_second(),
        rep.delivered_total as f64 / rep.wall_seconds
    );
    let mut idle = rep.clone();
    idle.wall_seconds = 0.0;
    assert_eq!(idle.packets_per_second(), 0.0);
}
