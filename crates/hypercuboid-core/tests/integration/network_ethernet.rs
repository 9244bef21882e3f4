//! The Ethernet switch model (`switch=ethernet`): its spec keys and their errors, exact
//! zero-load timings of store-and-forward frames, head-of-line blocking under PAUSE
//! back-pressure, determinism, and the refusals (flow level, engine parameters the model
//! sets).

use crate::common;

use common::*;
use hypercuboid_core::model::{Level, LogGopsModel};
use hypercuboid_core::network::{
    Delivery, FlowEngine, Injection, NetParams, Network, NetworkError, RoutingSpec,
};
use hypercuboid_core::sim::{simulate_on_network, NetworkSetup, SimOptions};
use hypercuboid_core::topology::{generate, Ethernet, SwitchModel, Topology};
use hypercuboid_core::units::{ns, us, Time};

/// A frame of 1538 bytes on the wire at 100 Mb/s: 123.04 µs.
const SIGMA: Time = 123_040_000;
/// The presets' link latency.
const L: Time = 50_000;
/// The Ethernet switch's forwarding delay by default.
const S: Time = 4_000_000;

/// A short frame of `payload` bytes at 100 Mb/s: 80 ns a byte of its `max(payload + 78, 84)`
/// wire bytes.
fn short(payload: u64) -> Time {
    (payload + 78).max(84) * 80_000
}

fn topo(spec: &str) -> Topology {
    generate(spec).unwrap()
}

fn network(t: &Topology, threads: usize) -> Network<'_> {
    let p = NetParams {
        threads,
        ..NetParams::default()
    };
    Network::new(t, &RoutingSpec::parse("min").unwrap(), p).unwrap()
}

/// Every delivery of `msgs` injected at once, run to the end.
fn run(net: &Network<'_>, msgs: &[Injection]) -> Vec<Delivery> {
    let mut e = net.external();
    for m in msgs {
        e.inject(m).unwrap();
    }
    e.finish().unwrap().to_vec()
}

fn spec_err(text: &str) -> String {
    generate(text).unwrap_err().to_string()
}

#[test]
fn the_switch_model_is_a_key_of_the_tree_spec() {
    let t = topo("tree:fig5b,switch=ethernet");
    assert_eq!(t.switch(), SwitchModel::Ethernet(Ethernet::default()));
    assert_eq!(t.name(), "tree:fig5b,switch=ethernet");
    assert_eq!(
        t.params().last(),
        Some(&("switch".to_string(), "ethernet".to_string()))
    );
    // The default is virtual cut-through, and the topology is the one it was.
    let vct = topo("tree:fig5b");
    assert_eq!(vct.switch(), SwitchModel::Vct);
    assert_eq!(vct.name(), "tree:fig5b");
    assert_eq!(topo("tree:fig5b,switch=vct"), vct);
    // Everything but the switch model is the same graph.
    assert_eq!(t.links(), vct.links());
    assert_eq!(t.endpoint_routers(), vct.endpoint_routers());
    let e = topo("tree:fig1,switch=ethernet,buffer=2,mtu=9000,delay=1us");
    assert_eq!(
        e.switch(),
        SwitchModel::Ethernet(Ethernet {
            mtu: 9000,
            buffer_frames: 2,
            latency: us(1),
        })
    );
    assert_eq!(
        e.name(),
        "tree:fig1,switch=ethernet,buffer=2,mtu=9000,delay=1us"
    );
    // Every generator takes it too, and keeps its graph.
    let ft = topo("fattree:k=4,bw=1,switch=ethernet");
    assert_eq!(ft.name(), "fattree:k=4,levels=2,bw=1,switch=ethernet");
    assert_eq!(ft.switch(), SwitchModel::Ethernet(Ethernet::default()));
    assert_eq!(ft.links(), topo("fattree:k=4,bw=1").links());
}

#[test]
fn bad_switch_keys_name_the_value_and_the_accepted_ones() {
    assert_eq!(
        spec_err("tree:fig5b,switch=wifi"),
        "invalid topology spec 'tree:fig5b,switch=wifi': switch=wifi: accepted: vct, ethernet"
    );
    assert_eq!(
        spec_err("tree:fig5b,buffer=4"),
        "invalid topology spec 'tree:fig5b,buffer=4': buffer=4: only switch=ethernet takes it \
         (the vct switch's buffers, packets and latency are the simulator's --buffer, \
         --packet-size and --switch-latency)"
    );
    assert_eq!(
        spec_err("tree:fig5b,switch=ethernet,mtu=100"),
        "invalid topology spec 'tree:fig5b,switch=ethernet,mtu=100': mtu=100: accepted: 576 \
         to 9000 bytes"
    );
    assert_eq!(
        spec_err("tree:fig5b,switch=ethernet,buffer=0"),
        "invalid topology spec 'tree:fig5b,switch=ethernet,buffer=0': buffer=0: accepted: one \
         frame at least"
    );
    assert_eq!(
        spec_err("tree:fig1,x=1"),
        "invalid topology spec 'tree:fig1,x=1': unknown key 'x' for tree; accepted: bw, lat, switch, \
         buffer, mtu, delay"
    );
}

#[test]
fn the_model_sets_frames_buffers_and_latency_and_refuses_other_values() {
    let t = topo("tree:fig5a,switch=ethernet");
    let net = network(&t, 1);
    let p = net.params();
    assert_eq!(p.packet_bytes, 1460);
    assert_eq!(p.buffer_bytes, 8 * 1460);
    assert_eq!(p.switch_latency, S);
    assert_eq!(net.serialisation(0.1), SIGMA);
    let min = RoutingSpec::parse("min").unwrap();
    let refused = |p: NetParams| Network::new(&t, &min, p).unwrap_err().to_string();
    assert_eq!(
        refused(NetParams {
            packet_bytes: 512,
            ..NetParams::default()
        }),
        "invalid packet size 512 B: the switch model of tree:fig5a,switch=ethernet sets it \
         (topology key mtu); leave the simulator's default"
    );
    assert_eq!(
        refused(NetParams {
            buffer_bytes: 4096,
            ..NetParams::default()
        }),
        "invalid buffer 4096 B: the switch model of tree:fig5a,switch=ethernet sets it \
         (topology key buffer); leave the simulator's default"
    );
    // The flow level has no frames nor PAUSE: it refuses the model.
    let e = FlowEngine::new(&t, net.routes(), net.params().clone()).unwrap_err();
    assert!(matches!(e, NetworkError::Unsupported { .. }));
    assert_eq!(
        e.to_string(),
        "the flow level cannot run on tree:fig5a,switch=ethernet: its switch model is \
         ethernet (store-and-forward frames, PAUSE back-pressure), which flows do not have: \
         use the packet level"
    );
}

#[test]
fn zero_load_store_and_forward_adds_a_frame_per_switch() {
    // fig5b: n0 on s0, n8 on s1 (one switch-to-switch hop), n1 on s0 (none).
    let t = topo("tree:fig5b,switch=ethernet");
    let net = network(&t, 1);
    // One switch: 2L + (S + σ) + σ; two switches: 3L + 2(S + σ) + σ.
    assert_eq!(net.zero_load_latency(0), 2 * L + S + 2 * SIGMA);
    assert_eq!(net.zero_load_latency(1), 3 * L + 2 * (S + SIGMA) + SIGMA);
    assert_eq!(
        NetParams::default().zero_load_latency(&t, 1).unwrap(),
        3 * L + 2 * (S + SIGMA) + SIGMA
    );
    // 10 frames (14 600 B) to n8 from 1 ms: the first frame's latency, then 9 more
    // serialisations; 1461 B are a full frame and one of 1 byte (79 bytes on the wire), which
    // each switch holds until the full one has left; an empty message is a frame of 84 bytes.
    let start = us(1000);
    let d = run(
        &net,
        &[
            msg(start, 0, 8, 14_600, 1),
            msg(start, 9, 1, 1461, 2),
            msg(start, 2, 3, 0, 3),
        ],
    );
    assert_eq!(
        d,
        [
            Delivery {
                time: start + 2 * L + S + 2 * short(0),
                token: 3
            },
            Delivery {
                time: start + 3 * L + 2 * (S + SIGMA) + SIGMA + short(1),
                token: 2
            },
            Delivery {
                time: start + 3 * L + 2 * (S + SIGMA) + 10 * SIGMA,
                token: 1
            },
        ]
    );
    // The same under virtual cut-through with the engine's 256-byte packets.
    let vct = topo("tree:fig5b");
    let net = network(&vct, 1);
    let sigma = NetParams::default().serialisation(0.1);
    assert_eq!(sigma, 20_480_000);
    let d = run(&net, &[msg(start, 0, 8, 14_600, 1)]);
    assert_eq!(
        d[0].time,
        start + 3 * L + 2 * ns(100) + sigma + 57 * sigma,
        "58 packets of 256 B, cut through"
    );
}

#[test]
fn a_paused_input_holds_frames_for_an_idle_port_behind_a_congested_one() {
    // fig5a: one switch. n0 and n1 send 40 frames each to n2; n0 then 1 frame to n3, whose
    // port is idle. With buffers of 1000 frames nothing pauses: n0's frame to n3 follows
    // its 40 frames at line rate. With the 8-frame buffers of the model, n2's output queue
    // fills, the frames for n2 at the head of n0's input wait for it, the input fills and
    // PAUSE stops n0's NIC: the frame to n3 waits behind them (head-of-line blocking).
    let frames = 40u64;
    let msgs = [
        msg(0, 0, 2, frames * 1460, 0),
        msg(0, 1, 2, frames * 1460, 1),
        msg(0, 0, 3, 1460, 2),
    ];
    let to_n3 = |d: &[Delivery]| d.iter().find(|d| d.token == 2).unwrap().time;
    let to_n2 = |d: &[Delivery]| d.iter().filter(|d| d.token < 2).map(|d| d.time).max();

    let big = topo("tree:fig5a,switch=ethernet,buffer=1000");
    let d = run(&network(&big, 1), &msgs);
    // Frame 41 of n0 starts at 40σ and crosses the idle path.
    assert_eq!(to_n3(&d), 40 * SIGMA + 2 * L + S + 2 * SIGMA);
    // n2's link carries 80 frames back to back from the first one's arrival.
    let n2_done = 2 * L + S + 81 * SIGMA;
    assert_eq!(to_n2(&d), Some(n2_done));

    let small = topo("tree:fig5a,switch=ethernet");
    let d = run(&network(&small, 1), &msgs);
    // The congested link is as busy as before: PAUSE costs the flows that cause it nothing.
    assert_eq!(to_n2(&d), Some(n2_done));
    // The innocent frame waits until n0's last frame for n2 has left the input: n2's link
    // sends the two inputs' frames alternately, so that is after about 2·40 − 8 (the output
    // queue) frame times, and at the latest when n2's link is done.
    let t = to_n3(&d);
    // Exactly: n0's NIC, paused, injects it at 71σ instead of 40σ.
    assert_eq!(t, 71 * SIGMA + 2 * L + S + 2 * SIGMA);
    assert!(
        t > 70 * SIGMA && t <= n2_done,
        "n0 -> n3 delivered at {t} ps, expected within (70σ, {n2_done}]"
    );
}

#[test]
fn runs_are_deterministic_for_any_thread_count() {
    // An uncoordinated alltoall of 10 frames per pair on fig5b: every source posts to every
    // destination in LAM's order at once.
    let t = topo("tree:fig5b,switch=ethernet");
    let mut msgs = Vec::new();
    for s in 0..32u32 {
        for d in 0..32u32 {
            if s != d {
                msgs.push(msg(0, s, d, 14_600, (s * 32 + d) as u64));
            }
        }
    }
    let one = run(&network(&t, 1), &msgs);
    assert_eq!(one.len(), 32 * 31);
    assert_eq!(one, run(&network(&t, 1), &msgs));
    assert_eq!(one, run(&network(&t, 2), &msgs));
    // The bottleneck links (s0 to the other switches, 8·24 messages each way over the
    // star's three links) bound it from below.
    let last = one.iter().map(|d| d.time).max().unwrap();
    assert!(last > 192 * 10 * SIGMA, "{last}");
}

#[test]
fn a_schedule_on_the_ethernet_model_is_exact_on_an_idle_network() {
    // One eager message of 8 KB (6 frames) between two machines on different switches of
    // fig5c (n0 on s0, n31 on s3: three switch-to-switch hops), host overhead o each side.
    let t = topo("tree:fig5c,switch=ethernet");
    let net = network(&t, 1);
    let o = us(10);
    let host = LogGopsModel {
        overhead: o,
        gap: ns(10),
        eager_limit: 1 << 20,
        ..LogGopsModel::default()
    };
    let goal = "num_ranks 32\nrank 0 {\nl0: send 8192b to 31 tag 1\n}\nrank 31 {\nl0: recv 8192b from 0 tag 1\n}\n";
    let setup = NetworkSetup {
        level: Level::Packet,
        host,
        ..NetworkSetup::default()
    };
    let r = simulate_on_network(&read_goal(goal), &net, &setup, &SimOptions::default()).unwrap();
    // Five full frames and one of 8192 − 5·1460 = 892 bytes.
    let wire = 5 * L + 4 * (S + SIGMA) + 5 * SIGMA + short(892);
    assert_eq!(short(892), 77_600_000);
    assert_eq!(r.result.completion, o + wire + o);
    assert_eq!(r.messages.transfer_sum, wire as u128);
    // The flow level refuses the model.
    let flow = NetworkSetup {
        level: Level::Flow,
        ..setup
    };
    assert_eq!(
        simulate_on_network(&read_goal(goal), &net, &flow, &SimOptions::default())
            .unwrap_err()
            .to_string(),
        "the flow level cannot run on tree:fig5c,switch=ethernet: its switch model is \
         ethernet (store-and-forward frames, PAUSE back-pressure), which flows do not have: \
         use the packet level"
    );
}
