//! The steppable packet engine: messages injected by the caller (exact delivery times on an
//! idle network, contention), stepping in small increments against one large step, thread
//! counts, and reports that change nothing.

use crate::common::{msg, t0, SIGMA, ZERO_LOAD_CASES};
use hypercuboid_core::network::rng::SplitMix64;
use hypercuboid_core::network::{
    Delivery, Engine, ExchangeSpec, Injection, NetParams, Network, NicOrder, Pattern, Report,
    RoutingSpec, Synthetic, TrafficSpec, Workload,
};
use hypercuboid_core::topology::{generate, Topology};
use hypercuboid_core::units::{ns, us, Time};

fn network<'t>(topo: &'t Topology, routing: &str, threads: usize) -> Network<'t> {
    let p = NetParams {
        threads,
        ..NetParams::default()
    };
    Network::new(topo, &RoutingSpec::parse(routing).unwrap(), p).unwrap()
}

/// Synthetic `traffic` (resolved with seed 1 on `n`'s routes) at `load`, `duration` long
/// after `warmup`.
fn synthetic(
    traffic: TrafficSpec,
    n: &Network<'_>,
    load: f64,
    duration: Time,
    warmup: Time,
) -> Synthetic {
    let mut s = Synthetic::new(traffic.resolve(n.topology(), n.routes(), 1).unwrap(), load);
    s.duration = duration;
    s.warmup = warmup;
    s
}

/// A message `token` delivered at `time`.
fn delivered(time: Time, token: u64) -> Delivery {
    Delivery { time, token }
}

/// A report without what measures the engine rather than the network.
fn network_only(mut r: Report) -> Report {
    r.wall_seconds = 0.0;
    r.events = 0;
    r.threads = 0;
    r
}

/// A report without its wall-clock time.
fn no_wall(mut r: Report) -> Report {
    r.wall_seconds = 0.0;
    r
}

#[test]
fn a_message_on_an_idle_network_takes_the_zero_load_latency() {
    // The cases of network_engine.rs.
    for (spec, src, dst, hops) in ZERO_LOAD_CASES {
        let topo = generate(spec).unwrap();
        for routing in ["min", "ugal"] {
            let n = network(&topo, routing, 1);
            assert_eq!(n.zero_load_latency(hops as u32), t0(hops));
            assert_eq!(
                n.params().zero_load_latency(&topo, hops as u32),
                Ok(t0(hops))
            );
            // (bytes, packets): a partial packet is a packet, an empty message is one.
            for (bytes, packets) in [(0, 1), (1, 1), (256, 1), (257, 2), (7680, 30)] {
                for at in [0, ns(1000) + 7] {
                    let mut e = n.external();
                    e.inject(&msg(at, src, dst, bytes, 42)).unwrap();
                    let got = e.finish().unwrap().to_vec();
                    let want = at + t0(hops) + (packets - 1) * SIGMA;
                    assert_eq!(
                        got,
                        vec![delivered(want, 42)],
                        "{spec} {routing}: {bytes} B at {at}"
                    );
                    let rep = e.report();
                    assert_eq!(rep.delivered_total, packets);
                    assert_eq!(rep.completion, Some(want));
                    assert_eq!(rep.latency.max(), t0(hops), "no queueing at zero load");
                    assert_eq!(rep.hops[hops as usize], packets);
                    assert_eq!((rep.in_flight, rep.source_queued), (0, 0));
                    assert_eq!(rep.traffic, "external");
                }
            }
        }
    }
}

#[test]
fn messages_of_one_endpoint_go_back_to_back_in_start_order() {
    let topo = generate("mlfm:h=4").unwrap();
    let n = network(&topo, "min", 1);
    let mut e = n.external();
    // Injected out of order: the one that starts first goes first; two that start together go
    // in the order they were injected.
    e.inject(&msg(ns(100), 0, 1, 256, 3)).unwrap(); // 0 hops, 1 packet
    e.inject(&msg(0, 0, 4, 30 * 256, 1)).unwrap(); // 2 hops, 30 packets
    e.inject(&msg(0, 0, 20, 256, 2)).unwrap(); // 2 hops, 1 packet
    let got = e.finish().unwrap().to_vec();
    // Message 1 leaves in [0, 30σ), message 2 at 30σ, message 3 (ready at 100 ns, but the
    // endpoint is busy) at 31σ; message 3 has no router hop to make and arrives first.
    assert_eq!(
        got,
        vec![
            delivered(31 * SIGMA + t0(0), 3),
            delivered(t0(2) + 29 * SIGMA, 1),
            delivered(30 * SIGMA + t0(2), 2),
        ]
    );
}

#[test]
fn an_interleaving_nic_sends_one_packet_of_each_ready_message_in_turn() {
    let topo = generate("mlfm:h=4").unwrap();
    let n = network(&topo, "min", 1);
    let mut e = n.external_with(NicOrder::Interleave);
    // Two messages ready at 0 (to two endpoints 2 hops away) share the NIC packet by packet;
    // a third, ready at 100 ns (5 packets in), joins the turn behind them.
    e.inject(&msg(0, 0, 4, 30 * 256, 1)).unwrap(); // 30 packets
    e.inject(&msg(0, 0, 20, 10 * 256, 2)).unwrap(); // 10 packets
    e.inject(&msg(ns(100), 0, 1, 2 * 256, 3)).unwrap(); // 0 hops, 2 packets
    let got = e.finish().unwrap().to_vec();
    // Slot k starts at kσ. Slots 0-4 alternate 1, 2, 1, 2, 1. At slot 5 (102.4 ns) message 3
    // is ready: the turn goes 2, 1, 3, 2, 1, 3 (slot 10, its last), then 2 and 1 alternate
    // from slot 11: message 2's tenth packet is slot 21, message 1's thirtieth slot 41.
    assert_eq!(
        got,
        vec![
            delivered(10 * SIGMA + t0(0), 3),
            delivered(21 * SIGMA + t0(2), 2),
            delivered(41 * SIGMA + t0(2), 1),
        ]
    );
}

#[test]
fn two_messages_contend_for_a_link() {
    // Endpoints 0 and 1 share router 0 and its single minimal path to endpoint 4: their
    // packets alternate on the first link (input ports at one time in port order), so the
    // last of the 60 packets leaves 59σ after the first, endpoint 1's.
    let topo = generate("mlfm:h=4").unwrap();
    let n = network(&topo, "min", 1);
    let mut e = n.external();
    e.inject(&msg(0, 0, 4, 30 * 256, 10)).unwrap();
    e.inject(&msg(0, 1, 4, 30 * 256, 11)).unwrap();
    let got = e.finish().unwrap().to_vec();
    assert_eq!(
        got,
        vec![
            delivered(t0(2) + 58 * SIGMA, 10),
            delivered(t0(2) + 59 * SIGMA, 11),
        ]
    );
    let rep = e.report();
    assert_eq!(rep.delivered_total, 60);
    assert_eq!(rep.latency.min(), t0(2));
    assert!(
        rep.latency.max() > t0(2),
        "queueing behind the other message"
    );
    // Alone, each message takes the zero-load time.
    let mut alone = n.external();
    alone.inject(&msg(0, 1, 4, 30 * 256, 11)).unwrap();
    assert_eq!(alone.finish().unwrap(), [delivered(t0(2) + 29 * SIGMA, 11)]);
}

/// Messages between random endpoints at random times in the first `span`, sizes up to 8 KB.
fn messages(topo: &Topology, count: usize, span: Time, seed: u64) -> Vec<Injection> {
    let n = topo.num_endpoints() as u64;
    let mut g = SplitMix64::new(seed);
    let mut v: Vec<Injection> = (0..count)
        .map(|k| {
            let src = g.below(n);
            let dst = (src + 1 + g.below(n - 1)) % n;
            msg(
                g.below(span),
                src as u32,
                dst as u32,
                g.below(8192),
                k as u64,
            )
        })
        .collect();
    v.sort_by_key(|m| m.at);
    v
}

/// Injects every message, then advances in steps of `step` (one step to the end when
/// `None`) and finishes; the deliveries in the order they were returned and the report.
fn run_stepped(
    mut e: Engine<'_>,
    msgs: &[Injection],
    step: Option<Time>,
) -> (Vec<Delivery>, Report) {
    for m in msgs {
        e.inject(m).unwrap();
    }
    let mut got = Vec::new();
    if let Some(step) = step {
        let mut t = 0;
        while e.next_time().is_some() {
            t += step;
            let d = e.advance_to(t).unwrap();
            assert!(
                d.iter().all(|x| x.time < t),
                "delivered before the time advanced to"
            );
            got.extend_from_slice(d);
            assert_eq!(e.now(), t);
        }
    }
    got.extend_from_slice(e.finish().unwrap());
    (got, e.report())
}

/// Advances to each message's start and injects it there (as a schedule simulator does),
/// then finishes.
fn run_lock_step(mut e: Engine<'_>, msgs: &[Injection]) -> (Vec<Delivery>, Report) {
    let mut got = Vec::new();
    for m in msgs {
        got.extend_from_slice(e.advance_to(m.at).unwrap());
        e.inject(m).unwrap();
    }
    got.extend_from_slice(e.finish().unwrap());
    (got, e.report())
}

#[test]
fn stepping_gives_the_deliveries_and_report_of_one_step() {
    for (spec, routing) in [("slimfly:q=5", "ugal"), ("mlfm:h=4", "inr")] {
        let topo = generate(spec).unwrap();
        let n = network(&topo, routing, 1);
        let msgs = messages(&topo, 3000, us(20), 5);
        let (one, r1) = run_stepped(n.external(), &msgs, None);
        assert_eq!(one.len(), msgs.len(), "every message delivered once");
        let mut tokens: Vec<u64> = one.iter().map(|d| d.token).collect();
        tokens.sort_unstable();
        assert_eq!(tokens, (0..msgs.len() as u64).collect::<Vec<_>>());
        assert!(one.windows(2).all(|w| w[0] <= w[1]), "by time, then token");
        assert!(
            r1.latency.max() > 2 * r1.latency.min(),
            "{spec}: contention"
        );
        assert_eq!(r1.completion, Some(one.last().unwrap().time));
        for step in [ns(37), ns(1000) + 1, us(7)] {
            let (many, r2) = run_stepped(n.external(), &msgs, Some(step));
            assert_eq!(many, one, "{spec} {routing}: steps of {step} ps");
            // The run ends where the steps went, past the last event.
            let mut r2 = no_wall(r2);
            assert!(r2.end_time >= r1.end_time);
            r2.end_time = r1.end_time;
            assert_eq!(
                r2,
                no_wall(r1.clone()),
                "{spec} {routing}: steps of {step} ps"
            );
        }
        // Injected as the engine reaches each start, not all at once.
        let (lock, r3) = run_lock_step(n.external(), &msgs);
        assert_eq!(lock, one, "{spec} {routing}: lock-step");
        assert_eq!(network_only(r3), network_only(r1.clone()));
    }
}

#[test]
fn threads_do_not_change_the_deliveries() {
    let topo = generate("slimfly:q=5").unwrap();
    let msgs = messages(&topo, 3000, us(20), 9);
    let (one, r1) = run_stepped(network(&topo, "ugal", 1).external(), &msgs, None);
    assert_eq!(one.len(), msgs.len());
    for threads in [2, 3] {
        let n = network(&topo, "ugal", threads);
        assert_eq!(*n.partition().0.iter().max().unwrap() as usize, threads - 1);
        let (d, r) = run_stepped(n.external(), &msgs, None);
        assert_eq!(d, one, "{threads} threads");
        assert_eq!(
            network_only(r),
            network_only(r1.clone()),
            "{threads} threads"
        );
        // Windows cut short by small steps, and injections as the engine goes.
        let (d, r) = run_stepped(n.external(), &msgs, Some(ns(333)));
        assert_eq!(d, one, "{threads} threads, steps");
        assert_eq!(r.threads, threads);
        let (d, _) = run_lock_step(n.external(), &msgs);
        assert_eq!(d, one, "{threads} threads, lock-step");
    }
}

#[test]
fn stepped_workloads_match_a_run() {
    // Synthetic traffic and an exchange advanced in steps give the report of `Network::run`,
    // with one thread and with three.
    let topo = generate("slimfly:q=5").unwrap();
    let s = synthetic(
        TrafficSpec::Uniform,
        &network(&topo, "ugal", 1),
        0.7,
        us(20),
        us(4),
    );
    let a2a = ExchangeSpec::AllToAll {
        bytes: 512,
        interleave: true,
    };
    let plan = a2a.plan(&topo, 256, 1).unwrap();
    for w in [Workload::Synthetic(s), Workload::Exchange(plan)] {
        let base = network_only(network(&topo, "ugal", 1).run(&w, "w").unwrap());
        for threads in [1, 3] {
            let n = network(&topo, "ugal", threads);
            let mut e = n.engine(&w, "w").unwrap();
            let mut t = 0;
            while e.next_time().is_some() && t < us(20) {
                t += ns(777);
                assert!(e.advance_to(t).unwrap().is_empty(), "no messages");
            }
            e.finish().unwrap();
            let mut r = network_only(e.report());
            // The run ends where the steps went if they went past its last event.
            assert!(r.end_time >= base.end_time);
            r.end_time = base.end_time;
            assert_eq!(r, base, "{threads} threads");
        }
    }
}

#[test]
fn injections_ahead_change_no_report() {
    // A synthetic NIC that injects a packet also injects those that follow while it holds a
    // credit, up to 150 ns ahead but never past the end of the step being run. Steps of 1 ns
    // leave it no room (a packet takes 20.48 ns on the link), so they run the engine that
    // injects every packet at an event of its own; steps of 1 µs let it run ahead. Reports in
    // the middle of the run and at its end are the same, on one thread and on two, and the
    // one in the middle counts the packets of a run that ends there: none injected ahead.
    let topo = generate("slimfly:q=5").unwrap();
    for threads in [1, 2] {
        let n = network(&topo, "min", threads);
        let s = synthetic(TrafficSpec::Uniform, &n, 0.6, us(6), us(1));
        let reports = |step: Time| {
            let w = Workload::Synthetic(s.clone());
            let mut e = n.engine(&w, "uniform").unwrap();
            let (mut t, mut mid) = (0, None);
            while t < us(6) {
                t += step;
                e.advance_to(t).unwrap();
                if t == us(3) {
                    mid = Some(network_only(e.report()));
                }
            }
            e.finish().unwrap();
            (mid.expect("a report at 3 us"), network_only(e.report()))
        };
        let (fine_mid, fine_end) = reports(ns(1));
        let (coarse_mid, coarse_end) = reports(us(1));
        assert_eq!(coarse_mid, fine_mid, "{threads} threads, at 3 us");
        assert_eq!(coarse_end, fine_end, "{threads} threads, at the end");
        let mut short = s.clone();
        short.duration = us(3);
        let r = n.run(&Workload::Synthetic(short), "uniform").unwrap();
        let counts = |r: &Report| (r.injected_total, r.delivered_total, r.in_flight);
        assert!(r.in_flight > 0 && r.injected_total > 0);
        assert_eq!(counts(&coarse_mid), counts(&r), "{threads} threads");
    }
}

#[test]
fn a_report_changes_nothing() {
    // Synthetic traffic mid-run, beyond saturation so that the sources hold packets: the
    // report replays the sources' generation (random draws) on copies; asking for it twice,
    // or not at all, leaves the rest of the run the same.
    let topo = generate("slimfly:q=5").unwrap();
    for threads in [1, 2] {
        let n = network(&topo, "min", threads);
        let w = Workload::Synthetic(synthetic(TrafficSpec::Worst, &n, 0.9, us(40), us(4)));
        let mut quiet = n.engine(&w, "worst").unwrap();
        quiet.advance_to(us(30)).unwrap();
        quiet.finish().unwrap();
        let quiet = no_wall(quiet.report());

        let mut asked = n.engine(&w, "worst").unwrap();
        asked.advance_to(us(30)).unwrap();
        let a = no_wall(asked.report());
        let b = no_wall(asked.report());
        assert_eq!(a, b, "two reports of the same moment");
        // Beyond its buffers, an endpoint holds packets: the report counts them by replay.
        assert!(a.source_queued > 1000, "{}", a.source_queued);
        assert!(a.generated_packets > a.injected_total);
        assert_eq!(a.end_time, us(30));
        asked.finish().unwrap();
        let after = no_wall(asked.report());
        assert_eq!(after, quiet, "{threads} threads");
        assert_eq!(after, no_wall(asked.report()));
        assert_eq!(after.end_time, us(40));
    }
    // Messages: a report between steps changes neither deliveries nor the final report.
    let n = network(&topo, "ugal", 1);
    let msgs = messages(&topo, 500, us(5), 3);
    let (d1, r1) = run_stepped(n.external(), &msgs, Some(us(1)));
    let mut e = n.external();
    for m in &msgs {
        e.inject(m).unwrap();
    }
    let mut d2 = Vec::new();
    let mut t = 0;
    while e.next_time().is_some() {
        t += us(1);
        d2.extend_from_slice(e.advance_to(t).unwrap());
        let r = no_wall(e.report());
        assert_eq!(r, no_wall(e.report()));
        assert_eq!(r.delivered_total + r.in_flight, r.injected_total);
        assert_eq!(r.generated_packets, r.injected_total);
    }
    d2.extend_from_slice(e.finish().unwrap());
    assert_eq!(d2, d1);
    assert_eq!(no_wall(e.report()), no_wall(r1));
}

#[test]
fn next_time_says_how_far_nothing_happens() {
    let topo = generate("mlfm:h=4").unwrap();
    let n = network(&topo, "min", 1);
    let mut e = n.external();
    assert_eq!(e.next_time(), None);
    assert_eq!(e.now(), 0);
    e.inject(&msg(us(5), 0, 4, 256, 7)).unwrap();
    assert_eq!(e.next_time(), Some(us(5)));
    assert!(e.advance_to(us(5)).unwrap().is_empty());
    assert_eq!(e.now(), us(5));
    // Once its last packet has left the last router, the delivery is known but held back
    // until the engine passes its time.
    let done = us(5) + t0(2);
    assert!(e.advance_to(done).unwrap().is_empty());
    assert_eq!(e.next_time(), Some(done));
    assert_eq!(e.advance_to(done + 1).unwrap(), [delivered(done, 7)]);
    assert_eq!(e.next_time(), None);
    // Going back does nothing.
    assert!(e.advance_to(us(1)).unwrap().is_empty());
    assert_eq!(e.now(), done + 1);
}

#[test]
fn bad_injections_are_refused_with_their_value() {
    let topo = generate("mlfm:h=4").unwrap(); // 80 endpoints
    let n = network(&topo, "min", 1);
    let mut e = n.external();
    e.advance_to(us(1)).unwrap();
    for (m, text) in [
        (
            msg(us(2), 80, 1, 8, 0),
            "invalid message source 80: the network has endpoints 0 to 79",
        ),
        (
            msg(us(2), 0, 99, 8, 0),
            "invalid message destination 99: the network has endpoints 0 to 79",
        ),
        (
            msg(us(2), 3, 3, 8, 0),
            "invalid message destination 3: a message goes to another endpoint than its source",
        ),
        (
            msg(500_000, 0, 1, 8, 0),
            "invalid message start 500 ns: the engine has advanced to 1.000 us; a message \
             starts at or after it",
        ),
        (
            msg(us(2), 0, 1, u64::MAX, 0),
            "invalid message size 18446744073709551615: more than 2^32 packets in one message",
        ),
    ] {
        assert_eq!(e.inject(&m).unwrap_err().to_string(), text);
    }
    assert_eq!(e.next_time(), None, "nothing was queued");
    let w = Workload::Synthetic(Synthetic::new(Pattern::Uniform, 0.5));
    let mut busy = n.engine(&w, "worst").unwrap();
    assert_eq!(
        busy.inject(&msg(0, 0, 1, 8, 5)).unwrap_err().to_string(),
        "invalid injection of message 5: only an engine made by Network::external takes \
         messages; this one runs a workload"
    );
    let p = NetParams {
        packet_bytes: 0,
        ..NetParams::default()
    };
    assert_eq!(
        p.zero_load_latency(&topo, 2).unwrap_err().to_string(),
        "invalid packet size 0 B: a packet needs at least 1 byte"
    );
}
