//! A schedule on a network: [`simulate_on_network`] runs the engine on a
//! [`NetworkModel`] and reports, beside the usual result, what the network carried: the
//! load of every link and the time each message spent queued against its zero-load time.

use super::{simulate_with_state, SimError, SimOptions, SimResult};
use crate::model::{Level, LogGopsModel, Mapping, MessageRecord, MessageTotals, NetworkModel};
use crate::network::{Network, NicOrder};
use crate::schedule::Schedule;
use crate::units::Time;

/// How a schedule runs on a network (the [`Network`] itself is given separately).
#[derive(Clone, Debug, PartialEq)]
pub struct NetworkSetup {
    /// Packet or flow level.
    pub level: Level,
    /// The hosts' costs (`L` and `G` only between ranks of one endpoint).
    pub host: LogGopsModel,
    /// Where the ranks run.
    pub mapping: Mapping,
    /// Ranks per endpoint (cores per node).
    pub ranks_per_endpoint: u32,
    /// Keep one record per network message.
    pub record_messages: bool,
    /// Sample the links' traffic over time ([`NetworkRun::timeline`]).
    pub sample_links: bool,
    /// How a NIC orders its messages' packets (packet level).
    pub nic: NicOrder,
}

impl Default for NetworkSetup {
    fn default() -> Self {
        NetworkSetup {
            level: Level::Packet,
            host: LogGopsModel::default(),
            mapping: Mapping::Linear,
            ranks_per_endpoint: 1,
            record_messages: false,
            sample_links: false,
            nic: NicOrder::default(),
        }
    }
}

/// The load of one directed link over the run.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkLoad {
    /// Its two ends, as the topology names them (`router 3`, `endpoint 12` when it names
    /// none), in the direction of the traffic.
    pub a: String,
    pub b: String,
    /// `network` (router to router), `injection` (endpoint to router) or `ejection`.
    pub kind: &'static str,
    /// Bytes it carried (at packet level, whole packets).
    pub bytes: u64,
    /// Fraction of the run (0 to the completion time) it was busy sending.
    pub utilisation: f64,
    /// Its index: the routing's port (global id) for network and ejection links, the number
    /// of ports plus the endpoint for injection links.
    pub link: usize,
}

/// The utilisation of the busiest links over time.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkTimeline {
    /// The end of each interval (ps); the first starts at 0.
    pub times: Vec<Time>,
    /// For each of the busiest links sampled (an index into [`NetworkRun::links`]), its
    /// utilisation in each interval.
    pub links: Vec<(usize, Vec<f64>)>,
}

/// How many of the busiest links a timeline follows.
pub const TIMELINE_LINKS: usize = 8;

/// A schedule's run on a network.
#[derive(Clone, Debug, PartialEq)]
pub struct NetworkRun {
    /// What every simulation reports.
    pub result: SimResult,
    /// Every directed link that carried something, busiest first (ties in link order).
    pub links: Vec<LinkLoad>,
    /// Mean utilisation over the router-to-router links (all of them, idle ones included).
    pub mean_network_utilisation: f64,
    /// Totals over the messages.
    pub messages: MessageTotals,
    /// One record per network message, if asked for, in delivery order.
    pub records: Vec<MessageRecord>,
    /// Packets delivered (packet level) or flows (flow level), and the engine's events.
    pub wire_units: u64,
    pub wire_events: u64,
    /// The rank → endpoint placement.
    pub placement: Vec<u32>,
    /// The busiest links' utilisation over time, when sampled (at packet level only the
    /// links that leave a router: network and ejection links).
    pub timeline: Option<LinkTimeline>,
}

fn router_name(net: &Network<'_>, r: usize) -> String {
    net.topology()
        .router_name(r)
        .map_or_else(|| format!("router {r}"), str::to_string)
}

fn endpoint_name(net: &Network<'_>, e: usize) -> String {
    net.topology()
        .endpoint_name(e)
        .map_or_else(|| format!("endpoint {e}"), str::to_string)
}

/// Runs `s` on `net` as `setup` says.
pub fn simulate_on_network(
    s: &Schedule,
    net: &Network<'_>,
    setup: &NetworkSetup,
    opts: &SimOptions,
) -> Result<NetworkRun, SimError> {
    let model = NetworkModel::new(
        net,
        setup.level,
        setup.host,
        &setup.mapping,
        setup.ranks_per_endpoint,
        s.nranks(),
    )
    .map_err(|e| SimError::Network(Box::new(e)))?
    .record_messages(setup.record_messages)
    .sample_links(setup.sample_links)
    .nic_order(setup.nic);
    let (result, mut st) = simulate_with_state(s, &model, opts)?;
    st.sample(true);
    let span = result.completion.max(1) as f64;
    let routes = net.routes();
    let np = routes.num_ports();
    let ne = net.topology().num_endpoints();
    // Bytes and busy time per link: router ports by global id, then injection links.
    let mut bytes = vec![0u64; np + ne];
    let mut busy = vec![0f64; np + ne];
    let (units, events);
    match (st.packet_engine(), st.flow_engine()) {
        (Some(e), _) => {
            let rep = e.report();
            let pb = net.params().packet_bytes as u64;
            for p in 0..np {
                bytes[p] = rep.port_packets[p] * pb;
                busy[p] = (rep.port_packets[p] * rep.port_ser[p]) as f64;
            }
            for (e, &n) in st.injected_packets().iter().enumerate() {
                let ser = net.serialisation(net.topology().endpoint_link(e).bandwidth_gbps);
                bytes[np + e] = n * pb;
                busy[np + e] = (n * ser) as f64;
            }
            units = rep.delivered_total;
            events = rep.events;
        }
        (None, Some(f)) => {
            for (l, (&b, &c)) in f.link_bytes().iter().zip(f.capacity()).enumerate() {
                bytes[l] = b as u64;
                busy[l] = if c > 0.0 { b / c } else { 0.0 };
            }
            units = f.flows_started;
            events = f.events;
        }
        (None, None) => unreachable!("a network state has an engine"),
    }
    let mut links = Vec::new();
    let mut net_util = 0.0;
    let mut net_links = 0usize;
    for l in 0..np + ne {
        let u = busy[l] / span;
        let (a, b, kind) = if l >= np {
            let e = l - np;
            (
                endpoint_name(net, e),
                router_name(net, net.topology().endpoint_router(e)),
                "injection",
            )
        } else if let Some((x, y)) = routes.port_ends(l) {
            net_util += u;
            net_links += 1;
            (
                router_name(net, x as usize),
                router_name(net, y as usize),
                "network",
            )
        } else {
            let e = routes.port_endpoint(l).expect("an endpoint port") as usize;
            (
                router_name(net, routes.port_router(l) as usize),
                endpoint_name(net, e),
                "ejection",
            )
        };
        if bytes[l] > 0 {
            links.push(LinkLoad {
                a,
                b,
                kind,
                bytes: bytes[l],
                utilisation: u,
                link: l,
            });
        }
    }
    links.sort_by(|x, y| y.utilisation.total_cmp(&x.utilisation));
    let timeline = st.samples.as_ref().map(|smp| {
        let packet = st.packet_engine().is_some();
        let mut follow = Vec::new();
        for (i, x) in links.iter().enumerate() {
            if follow.len() == TIMELINE_LINKS {
                break;
            }
            if x.link >= smp.counts.first().map_or(0, Vec::len) {
                continue;
            }
            // Busy time per unit of the counter: a packet's serialisation, or 1 / capacity.
            let per = if packet {
                routes_ser(net, x.link)
            } else {
                let f = st.flow_engine().expect("flow level");
                1.0 / f.capacity()[x.link]
            };
            let mut u = Vec::with_capacity(smp.times.len());
            let (mut t0, mut c0) = (0, 0.0);
            for (k, &t) in smp.times.iter().enumerate() {
                let c = smp.counts[k][x.link];
                u.push(if t > t0 {
                    ((c - c0) * per / (t - t0) as f64).min(1.0)
                } else {
                    0.0
                });
                (t0, c0) = (t, c);
            }
            follow.push((i, u));
        }
        LinkTimeline {
            times: smp.times.clone(),
            links: follow,
        }
    });
    Ok(NetworkRun {
        result,
        links,
        mean_network_utilisation: if net_links == 0 {
            0.0
        } else {
            net_util / net_links as f64
        },
        messages: st.totals.clone(),
        records: st.records.clone(),
        wire_units: units,
        wire_events: events,
        placement: model.placement().to_vec(),
        timeline,
    })
}

/// The serialisation time of one packet on port `p` (ps).
fn routes_ser(net: &Network<'_>, p: usize) -> f64 {
    let r = net.routes();
    let bw = match r.port_link(p) {
        Some(l) => net.topology().links()[l as usize].bandwidth_gbps,
        None => {
            let e = r
                .port_endpoint(p)
                .expect("a port is a link or an endpoint's");
            net.topology().endpoint_link(e as usize).bandwidth_gbps
        }
    };
    net.params().serialisation(bw) as f64
}
