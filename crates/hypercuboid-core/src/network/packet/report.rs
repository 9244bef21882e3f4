//! What a run counts as it goes ([`Stats`], one per part) and the [`Report`] built from it.
//!
//! Building a report is a pure function of the run: it adds up the parts' counters on a copy,
//! reads the sources without changing them (a synthetic source's packets generated but not
//! injected by the end are counted by replaying its generation on a copy of the random
//! stream), and leaves the engine as it was, so that a run may go on after a report and give
//! the same results as one that produced none.
//!
//! # Windows
//! Synthetic traffic is measured in its window `[warmup, duration)`: packets generated,
//! delivered (latency, hops, indirect paths) and sent on every link in it. An exchange or the
//! messages of an external source are measured over the whole run, `[0, completion)`, where
//! completion is the time the last packet was delivered. Throughputs are fractions of the
//! injection capacity of the endpoints that send at all over the window.

use super::part::Part;
use super::source::{Feed, Source};
use crate::network::stats::{Histogram, Report};
use crate::units::Time;

/// The counters of one part of a run.
#[derive(Clone, Debug)]
pub(super) struct Stats {
    /// Events handled.
    pub(super) events: u64,
    /// Packets injected into the network.
    pub(super) injected: u64,
    /// Packets delivered.
    pub(super) delivered_total: u64,
    /// Injected minus delivered by this part (negative in a part that delivers more
    /// packets than it injects).
    pub(super) in_flight: i64,
    /// When a packet was last delivered (the time of the event that delivered it).
    pub(super) last_delivery: Time,
    /// Packets delivered in the window.
    pub(super) delivered: u64,
    /// Packets generated in the window and injected.
    pub(super) generated: u64,
    /// Packets delivered in the window over an indirect path.
    pub(super) indirect: u64,
    /// Latencies of the packets delivered in the window.
    pub(super) latency: Histogram,
    /// Hops of the packets delivered in the window.
    pub(super) hops: Vec<u64>,
    /// When the last packet's tail reached its destination.
    pub(super) completion: Time,
}

impl Stats {
    /// Zero counters.
    pub(super) fn new() -> Stats {
        Stats {
            events: 0,
            injected: 0,
            delivered_total: 0,
            in_flight: 0,
            last_delivery: 0,
            delivered: 0,
            generated: 0,
            indirect: 0,
            latency: Histogram::new(),
            hops: Vec::new(),
            completion: 0,
        }
    }

    /// Adds the counters of another part of the same run.
    pub(super) fn merge(&mut self, o: &Stats) {
        self.events += o.events;
        self.injected += o.injected;
        self.delivered_total += o.delivered_total;
        self.in_flight += o.in_flight;
        self.delivered += o.delivered;
        self.generated += o.generated;
        self.indirect += o.indirect;
        self.latency.merge(&o.latency);
        if self.hops.len() < o.hops.len() {
            self.hops.resize(o.hops.len(), 0);
        }
        for (a, b) in self.hops.iter_mut().zip(&o.hops) {
            *a += b;
        }
        self.completion = self.completion.max(o.completion);
        self.last_delivery = self.last_delivery.max(o.last_delivery);
    }
}

/// The report of a run whose parts are `parts`, stopped at `end`; `traffic` names what fed it,
/// `wall` is the wall-clock time it took.
pub(super) fn build<const V: usize, S: Source>(
    parts: &[Part<'_, V, S>],
    traffic: &str,
    end: Time,
    wall: f64,
) -> Report {
    let p0 = &parts[0];
    let topo = p0.net.topo;
    let r = p0.r;
    let mut st = p0.stats.clone();
    for o in &parts[1..] {
        st.merge(&o.stats);
    }
    let feed = p0.source.feed();
    let (w0, w1) = match feed {
        Feed::Synthetic(s) => (s.warmup, s.duration),
        Feed::Exchange(_) | Feed::External => (0, st.completion.max(1)),
    };
    // Every endpoint as the part that simulates it sees it: the packets its source holds
    // (generated or posted before the end, not injected), the generation it replays, and
    // the injection capacity of the endpoints that send over the window, in packets.
    let window = (w1 - w0) as f64;
    let mut source_queued = 0u64;
    let mut generated = st.generated;
    let mut capacity = 0.0;
    for e in 0..p0.nics.len() {
        let part = &parts[p0.owner[p0.ep_router[e] as usize] as usize];
        let nic = &part.nics[e];
        let ser = p0.inp[r.endpoint_port(e)].ser as Time;
        let (queued, gen) = part.source.backlog(&nic.ep, nic.next, end, ser);
        source_queued += queued;
        generated += gen;
        if part.source.sends(e, &nic.ep) {
            capacity += window / ser as f64;
        }
    }
    let frac = |x: u64| {
        if capacity > 0.0 {
            x as f64 / capacity
        } else {
            0.0
        }
    };
    let (offered, completion, eff, dims) = match feed {
        Feed::Synthetic(s) => (s.load, None, None, None),
        Feed::Exchange(x) => {
            let per_node = x.total_bytes() as f64 / x.nodes.max(1) as f64;
            let bw = topo.endpoint_link(0).bandwidth_gbps / 8000.0; // bytes per ps
            let t = st.completion.max(1) as f64;
            (1.0, Some(st.completion), Some(per_node / t / bw), x.dims)
        }
        Feed::External => (frac(generated), Some(st.completion), None, None),
    };
    let spec = r.spec();
    Report {
        routing: spec.to_string(),
        vc_scheme: r.scheme().name(),
        vcs: p0.v,
        traffic: traffic.to_string(),
        offered,
        generated: frac(generated),
        accepted: frac(st.delivered),
        latency: st.latency,
        hops: st.hops,
        indirect: st.indirect,
        delivered: st.delivered,
        generated_packets: generated,
        injected_total: st.injected,
        delivered_total: st.delivered_total,
        in_flight: st.in_flight.max(0) as u64,
        source_queued,
        window: (w0, w1),
        end_time: end,
        events: st.events,
        wall_seconds: wall,
        threads: parts.len(),
        port_packets: {
            let mut v = Vec::new();
            port_packets(parts, &mut v);
            v
        },
        port_ser: p0.outp.iter().map(|p| p.ser as Time).collect(),
        completion,
        effective_throughput: eff,
        dims,
    }
}

/// Packets every port (output side, by global port id) has sent in the measurement window, in
/// every part of a run, into `out` (resized to the number of ports).
pub(super) fn port_packets<const V: usize, S: Source>(
    parts: &[Part<'_, V, S>],
    out: &mut Vec<u64>,
) {
    out.clear();
    out.resize(parts[0].outp.len(), 0);
    for p in parts {
        for (a, o) in out.iter_mut().zip(&p.outp) {
            *a += o.sent;
        }
    }
}
