//! Schedules on networks: the network cost model at packet and flow level, exact against the
//! zero-load formulas on an idle network, deterministic, and its bad input.

use crate::common;

use common::*;
use hypercuboid_core::model::{Level, LogGopsModel, Mapping};
use hypercuboid_core::network::{NetParams, Network, RoutingSpec};
use hypercuboid_core::schedule::Schedule;
use hypercuboid_core::sim::{simulate_on_network, NetworkRun, NetworkSetup, SimError, SimOptions};
use hypercuboid_core::topology::{generate, Topology};
use hypercuboid_core::units::{ns, Time};

fn host(o: Time, s: u64) -> LogGopsModel {
    LogGopsModel {
        overhead: o,
        gap: ns(10),
        eager_limit: s,
        ..LogGopsModel::default()
    }
}

fn net<'t>(topo: &'t Topology, routing: &str, threads: usize) -> Network<'t> {
    let params = NetParams {
        threads,
        ..NetParams::default()
    };
    Network::new(topo, &RoutingSpec::parse(routing).unwrap(), params).unwrap()
}

fn one_message(bytes: u64) -> String {
    format!(
        "num_ranks 5\nrank 0 {{\nl0: send {bytes}b to 4 tag 3\n}}\nrank 4 {{\nl0: recv {bytes}b from 0 tag 3\n}}\n"
    )
}

fn setup(level: Level, host: LogGopsModel) -> NetworkSetup {
    NetworkSetup {
        level,
        host,
        ..NetworkSetup::default()
    }
}

/// `s` on `n` at `level` with the host model `host`, the other options at their defaults.
fn run(s: &Schedule, n: &Network<'_>, level: Level, host: LogGopsModel) -> NetworkRun {
    simulate_on_network(s, n, &setup(level, host), &SimOptions::default()).unwrap()
}

/// mlfm:h=4: endpoints 0 and 4 are two router hops apart; every link 100 Gb/s, 50 ns
/// (checked here, since the formulas below assume it).
fn mlfm() -> Topology {
    let topo = generate("mlfm:h=4").unwrap();
    let l = topo.endpoint_link(0);
    assert_eq!((l.bandwidth_gbps, l.latency), (100.0, ns(50)));
    topo
}

/// The zero-load path from endpoint 0 to 4 of [`mlfm`] without the serialisation:
/// (h+2)L + (h+1)S for h = 2 router hops.
fn mlfm_path() -> Time {
    4 * ns(50) + 3 * NetParams::default().switch_latency
}

#[test]
fn one_eager_message_on_an_idle_network_is_exact_at_packet_and_flow_level() {
    let topo = mlfm();
    let n = net(&topo, "min", 1);
    let (o, sigma) = (ns(700), NetParams::default().serialisation(100.0));
    for bytes in [8u64, 256, 1000, 65_536] {
        let s = read_goal(&one_message(bytes));
        // Packet: o at the sender, (h+2)L + (h+1)S + n·σ on the wire, o at the receiver.
        let wire = mlfm_path() + bytes.div_ceil(256) * sigma;
        let r = run(&s, &n, Level::Packet, host(o, 1 << 20));
        assert_eq!(r.result.completion, o + wire + o, "packet, {bytes} B");
        assert_eq!(r.result.rank_finish[4], o + wire + o);
        assert_eq!(r.result.rank_finish[0], o);
        assert_eq!(r.messages.network, 1);
        assert_eq!(r.messages.queued_sum, 0);
        assert_eq!(r.messages.transfer_sum, wire as u128);
        // Flow: the same with bytes / bandwidth for the packets.
        let wire = mlfm_path() + (bytes as f64 / 0.0125).ceil() as Time;
        let r = run(&s, &n, Level::Flow, host(o, 1 << 20));
        assert_eq!(r.result.completion, o + wire + o, "flow, {bytes} B");
        assert_eq!(r.messages.queued_sum, 0);
    }
}

#[test]
fn one_rendezvous_message_takes_a_request_a_clear_to_send_and_the_data() {
    let topo = mlfm();
    let n = net(&topo, "min", 1);
    let (o, bytes) = (ns(700), 100_000u64);
    let s = read_goal(&one_message(bytes));
    let (path, sigma) = (mlfm_path(), NetParams::default().serialisation(100.0));
    // The request (one packet) arrives at o + path + σ; the receive is posted, so it
    // matches then, after which the clear-to-send (one packet) goes back and the data
    // (⌈bytes/256⌉ packets) comes: both complete when it has arrived.
    let matched = o + path + sigma;
    let done = matched + (path + sigma) + (path + bytes.div_ceil(256) * sigma);
    let r = run(&s, &n, Level::Packet, host(o, 1000));
    assert_eq!(r.result.rank_finish, vec![done, 0, 0, 0, done]);
    assert_eq!((r.messages.network, r.messages.control), (1, 2));
    // Flow level: the same protocol with empty control messages (latency only).
    let data = (bytes as f64 / 0.0125).ceil() as Time;
    let done = (o + path) + path + (path + data);
    let r = run(&s, &n, Level::Flow, host(o, 1000));
    assert_eq!(r.result.rank_finish, vec![done, 0, 0, 0, done]);
}

/// The host model of the tests of ranks that share an endpoint: L = 300 ns, o = 100 ns,
/// G = 1 ns/B and the gap `gap`.
fn memory_host(gap: Time) -> LogGopsModel {
    LogGopsModel {
        latency: ns(300),
        overhead: ns(100),
        gap,
        gap_per_byte: 1000.0,
        ..LogGopsModel::default()
    }
}

/// `s` on [`mlfm`] (minimal routing, one thread) at `level` with the host model `host`, 8
/// ranks per endpoint.
fn on_one_endpoint(s: &Schedule, level: Level, host: LogGopsModel) -> NetworkRun {
    let topo = mlfm();
    let mut st = setup(level, host);
    st.ranks_per_endpoint = 8;
    simulate_on_network(s, &net(&topo, "min", 1), &st, &SimOptions::default()).unwrap()
}

#[test]
fn ranks_of_one_endpoint_exchange_through_memory_with_the_host_models_l_and_g() {
    let h = memory_host(LogGopsModel::default().gap);
    let r = on_one_endpoint(&read_goal(&one_message(1001)), Level::Packet, h);
    // Ranks 0 and 4 share endpoint 0: o + L, then o + (s−1)·G at the receiver.
    assert_eq!(
        r.result.rank_finish[4],
        ns(100) + ns(300) + ns(100) + ns(1000)
    );
    assert_eq!((r.messages.local, r.messages.network), (1, 0));
    assert!(r.links.is_empty());
    assert_eq!(r.placement, vec![0, 0, 0, 0, 0]);
}

#[test]
fn sends_between_ranks_of_one_endpoint_wait_for_the_senders_nic_as_in_loggops() {
    // Rank 0 sends two 1,001-byte messages to rank 4, both ranks on endpoint 0: as in LogGOPS
    // the sender's NIC is busy g + (s−1)·G after the first, so the second leaves at 1,000 ns
    // (g = 0, G = 1 ns/B), and rank 0 finishes at 1,000 + o = 1,100 ns. The receiver is busy
    // o + (s−1)·G a message from o + L = 400 ns: 400 + 2·1,100 = 2,600 ns.
    let h = memory_host(0);
    let s = read_goal(
        "num_ranks 5\nrank 0 {\nl0: send 1001b to 4 tag 1\nl1: send 1001b to 4 tag 2\n}\n\
         rank 4 {\nl0: recv 1001b from 0 tag 1\nl1: recv 1001b from 0 tag 2\n}\n",
    );
    let r = on_one_endpoint(&s, Level::Flow, h);
    assert_eq!(r.result.rank_finish, vec![ns(1100), 0, 0, 0, ns(2600)]);
    assert_eq!((r.messages.local, r.messages.network), (2, 0));
    let alone = hypercuboid_core::sim::simulate(
        &s,
        &hypercuboid_core::model::ModelSpec::LogGops(h),
        &SimOptions::default(),
    )
    .unwrap();
    assert_eq!(alone.rank_finish, r.result.rank_finish);
}

#[test]
fn contention_on_a_shared_link_shows_as_queued_time_and_utilisation() {
    let topo = mlfm();
    let n = net(&topo, "min", 1);
    // Ranks 1, 2, 3 each send 64 KiB to rank 4 at once: they share rank 4's ejection link.
    let mut g = String::from("num_ranks 5\n");
    for r in 1..4 {
        g += &format!("rank {r} {{\nl0: send 65536b to 4 tag {r}\n}}\n");
    }
    g += "rank 4 {\nl0: recv 65536b from 1 tag 1\nl1: recv 65536b from 2 tag 2\nl2: recv 65536b from 3 tag 3\n}\n";
    let s = read_goal(&g);
    for level in [Level::Packet, Level::Flow] {
        let r = run(&s, &n, level, host(ns(100), 1 << 20));
        // Endpoints 1, 2, 3 share a router: the link from it toward endpoint 4's router and
        // endpoint 4's ejection link both carry the three messages, and are the busiest.
        let top = &r.links[0];
        assert_eq!(top.bytes, 3 * 65536, "{level:?}");
        let ej = r.links.iter().find(|l| l.kind == "ejection").unwrap();
        assert_eq!((ej.b.as_str(), ej.bytes), ("endpoint 4", 3 * 65536));
        assert_eq!(ej.utilisation, top.utilisation);
        // Three messages through one 100 Gb/s link: at least 3 · 5.24 µs.
        assert!(
            r.result.completion > 3 * ns(5243),
            "{level:?} {}",
            r.result.completion
        );
        assert!(
            top.utilisation > 0.9 && top.utilisation <= 1.0,
            "{level:?} {}",
            top.utilisation
        );
        assert!(r.messages.queued_sum > 0);
    }
}

#[test]
fn runs_are_identical_run_to_run_and_for_any_thread_count() {
    let topo = generate("slimfly:q=5").unwrap();
    let s = recursive_doubling(64, 4096);
    let mut first = None;
    for threads in [1usize, 2, 1, 2] {
        let n = net(&topo, "ugal", threads);
        let mut st = setup(Level::Packet, host(ns(200), 1024));
        st.mapping = Mapping::Random { seed: 3 };
        let r = simulate_on_network(&s, &n, &st, &SimOptions::default()).unwrap();
        let key = (
            r.result.rank_finish.clone(),
            r.links.clone(),
            r.messages.clone(),
        );
        match &first {
            None => first = Some(key),
            Some(k) => assert_eq!(&key, k, "threads {threads}"),
        }
    }
}

#[test]
fn bad_placements_are_refused_naming_the_accepted_values() {
    let topo = mlfm();
    let n = net(&topo, "min", 1);
    let s = recursive_doubling(64, 8);
    let err = |st: &NetworkSetup| match simulate_on_network(&s, &n, st, &SimOptions::default()) {
        Err(SimError::Network(e)) => e.to_string(),
        other => panic!("expected a network error, got {other:?}"),
    };
    let endpoints = topo.num_endpoints();
    let mut st = setup(Level::Packet, host(0, 8));
    if endpoints < 64 {
        assert_eq!(
            err(&st),
            format!(
                "invalid rank count 64: the network has {endpoints} endpoints × 1 rank per endpoint = \
                 {endpoints} slots (raise --ranks-per-endpoint or take a larger topology)"
            )
        );
    }
    st.ranks_per_endpoint = 64;
    st.mapping = Mapping::Explicit(vec![0; 63]);
    assert_eq!(
        err(&st),
        "invalid mapping file of 63 lines: it needs one endpoint per rank: 64 lines"
    );
    let mut v = vec![0u32; 64];
    v[5] = endpoints as u32;
    st.mapping = Mapping::Explicit(v);
    assert_eq!(
        err(&st),
        format!(
            "invalid mapping file line 6: endpoint {endpoints}: the network has endpoints 0 to {}",
            endpoints - 1
        )
    );
    st.ranks_per_endpoint = 1;
    st.mapping = Mapping::Explicit((0..64).map(|r| r / 2).collect());
    if endpoints >= 64 {
        assert_eq!(
            err(&st),
            "invalid mapping file line 2: endpoint 0: endpoint 0 appears more than 1 time (the \
             ranks per endpoint); duplicates are refused"
        );
    }
    assert_eq!(
        Mapping::parse("snake").unwrap_err().to_string(),
        "invalid mapping 'snake': accepted: linear, round_robin, random[:seed=K], file:PATH"
    );
    assert_eq!(
        Level::parse("fluid").unwrap_err().to_string(),
        "invalid level 'fluid': accepted: packet, flow"
    );
    let ugal = net(&topo, "ugal", 1);
    let mut st = setup(Level::Flow, host(0, 8));
    st.ranks_per_endpoint = 64;
    match simulate_on_network(&s, &ugal, &st, &SimOptions::default()) {
        Err(SimError::Network(e)) => assert!(
            e.to_string()
                .starts_with("invalid routing ugal: the flow level routes min or inr"),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn mappings_place_ranks_as_documented() {
    assert_eq!(Mapping::Linear.place(6, 4, 2).unwrap(), [0, 0, 1, 1, 2, 2]);
    assert_eq!(
        Mapping::RoundRobin.place(6, 4, 2).unwrap(),
        [0, 1, 2, 0, 1, 2]
    );
    let r = Mapping::Random { seed: 9 }.place(8, 4, 2).unwrap();
    let mut count = [0; 4];
    for &e in &r {
        count[e as usize] += 1;
    }
    assert_eq!(count, [2, 2, 2, 2]);
    assert_eq!(Mapping::Random { seed: 9 }.place(8, 4, 2).unwrap(), r);
    assert_ne!(Mapping::Random { seed: 10 }.place(8, 4, 2).unwrap(), r);
}
