//! SimGrid platform XML (`<platform version="4.1">`): export a topology so that SimGrid and
//! SMPI (`smpirun -platform`) run on it, and import a SimGrid user's platform.
//!
//! # Export ([`to_simgrid`])
//! One zone with `routing="Floyd"` (SimGrid computes the shortest paths over the routes we
//! declare): a `<host>` per endpoint (`speed="1Gf"`: a topology has no compute speed), a
//! `<router>` per router, a `<link>` per link with `bandwidth="…Gbps"` (bits per second, as
//! ours) and `latency="…ps"` and `sharing_policy="SPLITDUPLEX"` (each direction has the
//! whole bandwidth, as in our networks), and a one-link `<route>` per link with
//! `direction="UP"` (SimGrid gives the reverse route the link's `DOWN` half). Names: the
//! topology's router and endpoint names where it has them and they are unique, else `r<i>`
//! and `e<j>`; links are `l<i>` (router links) and `el<j>` (endpoint links). Parallel links
//! between two routers become one SimGrid link with their bandwidths summed (a SimGrid route
//! between two netpoints is unique), and need equal latencies.
//!
//! # Import ([`from_simgrid`])
//! The subset: a platform of one zone with `routing` `Full`, `Floyd`, `Dijkstra` or
//! `DijkstraCache` holding `<host>`, `<router>`, `<link>` and `<route>`/`<link_ctn>`, or of one
//! `<cluster>` (flat: no `topology=` attribute), directly under `<platform>` or in one zone.
//! `<prop>` and `<config>` are ignored. A route's links are a path from `src` to `dst`:
//! consecutive links share a node, and nodes no host or router names become routers of their
//! own (`x<k>`). A host with one link to a router is an endpoint of that router; any other
//! host (linked to several links, or to another host) becomes a router with one endpoint on a
//! loopback link of [`LOOPBACK_GBPS`] and no latency. A link's bandwidth is taken per
//! direction whatever its `sharing_policy` (`SHARED` splits it between the two directions in
//! SimGrid; `FATPIPE` gives it to every flow). A cluster becomes one router with its hosts
//! attached by their private links; its backbone's latency is split between the two private
//! links of every path (the path's latency is SimGrid's), and its backbone bandwidth, which a
//! graph cannot represent, is kept in the topology's parameters (`bb_bw`) only.
//! Routes between zones, `<zoneRoute>`, `<bypassRoute>`, other cluster topologies and
//! anything else give an error that names the element and its line.

use super::error::TopologyError;
use super::graph::{LinkParams, Topology};
use crate::units::Time;
use std::collections::HashMap;
use std::fmt::Write;

/// The bandwidth (Gb/s) of the link that joins an endpoint to the router a host becomes when
/// the host is not attached by one link to one router.
pub const LOOPBACK_GBPS: f64 = 1.0e6;

/// The SimGrid platform version written and the lowest read.
pub const PLATFORM_VERSION: &str = "4.1";

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c => o.push(c),
        }
    }
    o
}

/// Names of the netpoints: the topology's where they are all unique, else indexed.
fn netpoint_names(topo: &Topology) -> (Vec<String>, Vec<String>) {
    let r = topo.num_routers();
    let n = topo.num_endpoints();
    let routers: Option<Vec<String>> = (0..r)
        .map(|i| topo.router_name(i).map(str::to_string))
        .collect();
    let hosts: Option<Vec<String>> = (0..n)
        .map(|e| topo.endpoint_name(e).map(str::to_string))
        .collect();
    let routers = routers.unwrap_or_else(|| (0..r).map(|i| format!("r{i}")).collect());
    let hosts = hosts.unwrap_or_else(|| (0..n).map(|e| format!("e{e}")).collect());
    let mut seen = std::collections::HashSet::new();
    let unique = routers
        .iter()
        .chain(&hosts)
        .all(|s| !s.is_empty() && seen.insert(s.as_str()));
    if unique {
        (routers, hosts)
    } else {
        (
            (0..r).map(|i| format!("r{i}")).collect(),
            (0..n).map(|e| format!("e{e}")).collect(),
        )
    }
}

/// The topology as a SimGrid platform (version 4.1, one Floyd zone); see the module's
/// documentation. Errors: parallel links of different latencies.
pub fn to_simgrid(topo: &Topology) -> Result<String, TopologyError> {
    let (routers, hosts) = netpoint_names(topo);
    // Parallel links: one SimGrid link per router pair, bandwidths summed.
    let mut pairs: HashMap<(u32, u32), usize> = HashMap::new();
    let mut merged: Vec<(u32, u32, f64, Time, usize)> = Vec::new();
    for (i, l) in topo.links().iter().enumerate() {
        let key = (l.a.min(l.b), l.a.max(l.b));
        match pairs.get(&key) {
            Some(&m) => {
                let prev = &mut merged[m];
                if prev.3 != l.latency {
                    return Err(TopologyError::Export {
                        format: "simgrid",
                        reason: format!(
                            "links {} and {i} join routers {} and {} with different latencies \
                             ({} ps and {} ps); a SimGrid route between two netpoints is one path",
                            prev.4, l.a, l.b, prev.3, l.latency
                        ),
                    });
                }
                prev.2 += l.bandwidth_gbps;
            }
            None => {
                pairs.insert(key, merged.len());
                merged.push((l.a, l.b, l.bandwidth_gbps, l.latency, i));
            }
        }
    }
    let mut o = String::new();
    o.push_str("<?xml version='1.0'?>\n");
    o.push_str("<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
    let _ = writeln!(o, "<platform version=\"{PLATFORM_VERSION}\">");
    let _ = writeln!(
        o,
        "  <!-- hypercuboid topology {}: {} routers, {} endpoints, {} links -->",
        esc(topo.name()).replace("--", "- -"),
        topo.num_routers(),
        topo.num_endpoints(),
        topo.num_links()
    );
    if merged.len() != topo.num_links() {
        let _ = writeln!(
            o,
            "  <!-- parallel links merged: {} SimGrid links for {} links -->",
            merged.len(),
            topo.num_links()
        );
    }
    o.push_str("  <zone id=\"hypercuboid\" routing=\"Floyd\">\n");
    for h in &hosts {
        let _ = writeln!(o, "    <host id=\"{}\" speed=\"1Gf\"/>", esc(h));
    }
    for r in &routers {
        let _ = writeln!(o, "    <router id=\"{}\"/>", esc(r));
    }
    let link = |o: &mut String, id: &str, p: LinkParams| {
        let _ = writeln!(
            o,
            "    <link id=\"{id}\" bandwidth=\"{}Gbps\" latency=\"{}ps\" \
             sharing_policy=\"SPLITDUPLEX\"/>",
            p.bandwidth_gbps, p.latency
        );
    };
    for e in 0..topo.num_endpoints() {
        link(&mut o, &format!("el{e}"), topo.endpoint_link(e));
    }
    for (i, &(_, _, bw, lat, _)) in merged.iter().enumerate() {
        let p = LinkParams {
            bandwidth_gbps: bw,
            latency: lat,
        };
        link(&mut o, &format!("l{i}"), p);
    }
    let route = |o: &mut String, src: &str, dst: &str, id: &str| {
        let _ = writeln!(
            o,
            "    <route src=\"{}\" dst=\"{}\"><link_ctn id=\"{id}\" direction=\"UP\"/></route>",
            esc(src),
            esc(dst)
        );
    };
    for (e, h) in hosts.iter().enumerate() {
        route(
            &mut o,
            h,
            &routers[topo.endpoint_router(e)],
            &format!("el{e}"),
        );
    }
    for (i, &(a, b, ..)) in merged.iter().enumerate() {
        route(
            &mut o,
            &routers[a as usize],
            &routers[b as usize],
            &format!("l{i}"),
        );
    }
    o.push_str("  </zone>\n</platform>\n");
    Ok(o)
}

/// A SimGrid bandwidth (`125MBps`, `10Gbps`, `1KiBps`; a bare number is bytes per second)
/// in Gb/s. SimGrid's units (`xbt_parse_get_bandwidth`): `Bps` (bytes) and `bps` (bits) with
/// the prefixes k, M, G, T, P, E, Z, Y (powers of 1000) and Ki, Mi, Gi, Ti, ... (powers of
/// 1024).
pub fn parse_bandwidth(text: &str) -> Result<f64, String> {
    let (value, unit) = split_number(text)?;
    let (prefix, bits) = if let Some(p) = unit.strip_suffix("Bps") {
        (p, false)
    } else if let Some(p) = unit.strip_suffix("bps") {
        (p, true)
    } else if unit.is_empty() {
        ("", false)
    } else {
        return Err(format!(
            "unknown unit '{unit}'; accepted: Bps or bps with a prefix k, M, G, T, Ki, Mi, Gi, ..."
        ));
    };
    let scale = prefix_scale(prefix).ok_or_else(|| {
        format!(
            "unknown unit '{unit}'; accepted: Bps or bps with a prefix k, M, G, T, Ki, Mi, Gi, ..."
        )
    })?;
    // In Gb/s: the bits per second over 10^9, computed so that `NGbps` reads back N exactly.
    let per_gbit = if bits { 1.0 } else { 8.0 };
    let gbps = match scale {
        Scale::Decimal(k) => value * per_gbit * 1000f64.powi(k - 3),
        Scale::Binary(k) => value * per_gbit * 1024f64.powi(k) / 1e9,
    };
    if !(gbps.is_finite() && gbps > 0.0) {
        return Err("a bandwidth must be finite and positive".into());
    }
    Ok(gbps)
}

/// A SimGrid time (`50us`, `1.5ms`, `100ps`; a bare number is seconds) in picoseconds,
/// rounded. SimGrid's units (`xbt_parse_get_time`): w, d, h, m, s, ms, us, ns, ps.
pub fn parse_latency(text: &str) -> Result<Time, String> {
    let (value, unit) = split_number(text)?;
    let ps_per = match unit {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" => 1e6,
        "ms" => 1e9,
        "s" | "" => 1e12,
        "m" => 60e12,
        "h" => 3600e12,
        "d" => 86400e12,
        "w" => 604800e12,
        _ => {
            return Err(format!(
                "unknown unit '{unit}'; accepted: ps, ns, us, ms, s"
            ))
        }
    };
    let ps = (value * ps_per).round();
    if !(0.0..=u64::MAX as f64).contains(&ps) {
        return Err("a latency must be 0 or more and finite".into());
    }
    Ok(ps as Time)
}

enum Scale {
    Decimal(i32),
    Binary(i32),
}

fn prefix_scale(p: &str) -> Option<Scale> {
    const DEC: [&str; 9] = ["", "k", "M", "G", "T", "P", "E", "Z", "Y"];
    const BIN: [&str; 8] = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"];
    if let Some(k) = DEC.iter().position(|&d| d == p) {
        return Some(Scale::Decimal(k as i32));
    }
    BIN.iter()
        .position(|&b| b == p)
        .map(|k| Scale::Binary(k as i32 + 1))
}

fn split_number(text: &str) -> Result<(f64, &str), String> {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == '+'
                || c == '-'
                || ((c == 'e' || c == 'E')
                    && t[i + 1..]
                        .starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+')))
        })
        .map_or(t.len(), |(i, _)| i);
    let value: f64 = t[..end]
        .parse()
        .map_err(|_| format!("'{t}' does not start with a number"))?;
    Ok((value, &t[end..]))
}

mod import;
pub use import::from_simgrid;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{generate, Link};

    /// The graph, endpoints and link parameters of a topology (what a round trip keeps).
    fn shape(t: &Topology) -> (Vec<Link>, Vec<u32>, Vec<LinkParams>, usize) {
        (
            t.links().to_vec(),
            t.endpoint_routers().to_vec(),
            (0..t.num_endpoints()).map(|e| t.endpoint_link(e)).collect(),
            t.num_routers(),
        )
    }

    #[test]
    fn round_trip_keeps_graph_bandwidths_and_latencies() {
        for spec in [
            "tree:fig1",
            "slimfly:q=5",
            "dragonfly:p=2",
            "torus:dims=3x4",
            "fullmesh:n=3,bw=50",
            "fattree:k=4,levels=2",
        ] {
            let t = generate(spec).unwrap();
            let xml = to_simgrid(&t).unwrap();
            let back = from_simgrid(&xml, "p.xml").unwrap();
            assert_eq!(shape(&back), shape(&t), "{spec}");
            assert_eq!(back.family(), "simgrid");
            // Exported twice: the same text.
            assert_eq!(
                to_simgrid(&back)
                    .unwrap()
                    .lines()
                    .skip(4)
                    .collect::<Vec<_>>(),
                xml.lines().skip(4).collect::<Vec<_>>(),
                "{spec}"
            );
        }
    }

    #[test]
    fn export_writes_floyd_zone_hosts_links_routes() {
        let t = generate("fullmesh:n=3,bw=50").unwrap();
        let xml = to_simgrid(&t).unwrap();
        assert!(xml.contains("<platform version=\"4.1\">"));
        assert!(xml.contains("<zone id=\"hypercuboid\" routing=\"Floyd\">"));
        assert!(xml.contains("<host id=\"e0\" speed=\"1Gf\"/>"));
        assert!(xml.contains(
            "<link id=\"l0\" bandwidth=\"50Gbps\" latency=\"50000ps\" sharing_policy=\"SPLITDUPLEX\"/>"
        ), "{xml}");
        assert!(xml.contains(
            "<route src=\"r0\" dst=\"r1\"><link_ctn id=\"l0\" direction=\"UP\"/></route>"
        ));
    }

    const CLUSTER: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" suffix=".lab" radical="0-3" speed="1Gf"
           bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us"/>
</platform>
"#;

    #[test]
    fn a_four_host_cluster_is_a_star() {
        let t = from_simgrid(CLUSTER, "c.xml").unwrap();
        assert_eq!(
            (t.num_routers(), t.num_endpoints(), t.num_links()),
            (1, 4, 0)
        );
        assert_eq!(t.router_name(0), Some("node-c_router.lab"));
        assert_eq!(t.endpoint_name(3), Some("node-3.lab"));
        // 125 MB/s = 1 Gb/s; 50 us private + half the 500 us backbone.
        let p = t.endpoint_link(2);
        assert_eq!(p.bandwidth_gbps, 1.0);
        assert_eq!(p.latency, 300_000_000);
        assert!(t.params().contains(&("bb_bw".into(), "18Gbps".into())));
    }

    #[test]
    fn full_routing_paths_through_an_unnamed_switch() {
        let xml = r#"<platform version="4.1"><zone id="z" routing="Full">
  <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><host id="c" speed="1Gf"/>
  <link id="la" bandwidth="10Gbps" latency="1us"/>
  <link id="lb" bandwidth="10Gbps" latency="2us"/>
  <link id="lc" bandwidth="20Gbps" latency="3us"/>
  <route src="a" dst="b"><link_ctn id="la"/><link_ctn id="lb"/></route>
  <route src="a" dst="c"><link_ctn id="la"/><link_ctn id="lc"/></route>
  <route src="b" dst="c"><link_ctn id="lb"/><link_ctn id="lc"/></route>
</zone></platform>"#;
        let t = from_simgrid(xml, "full.xml").unwrap();
        assert_eq!(
            (t.num_routers(), t.num_endpoints(), t.num_links()),
            (1, 3, 0)
        );
        assert_eq!(t.router_name(0), Some("x0"));
        assert_eq!(t.endpoint_link(2).bandwidth_gbps, 20.0);
        assert_eq!(t.endpoint_link(1).latency, 2_000_000);
    }

    #[test]
    fn hosts_linked_to_hosts_become_routers() {
        let xml = r#"<platform version="4.1"><zone id="z" routing="Floyd">
  <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
  <link id="ab" bandwidth="1GBps" latency="0"/>
  <route src="a" dst="b"><link_ctn id="ab"/></route>
</zone></platform>"#;
        let t = from_simgrid(xml, "two.xml").unwrap();
        assert_eq!(
            (t.num_routers(), t.num_endpoints(), t.num_links()),
            (2, 2, 1)
        );
        assert_eq!(t.links()[0].bandwidth_gbps, 8.0);
        assert_eq!(t.endpoint_link(0).bandwidth_gbps, LOOPBACK_GBPS);
    }

    #[test]
    fn bad_platforms_name_the_line() {
        let err = |xml: &str| from_simgrid(xml, "p.xml").unwrap_err().to_string();
        assert_eq!(
            err("<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Floyd\">\n</platform>"),
            "cannot read p.xml: line 3: expected 'zone' tag, not 'platform' at 3:1"
        );
        assert_eq!(
            err("<platform version=\"3\"/>"),
            "cannot read p.xml: line 1: platform version \"3\"; accepted: 4.1 (SimGrid's \
             simgrid_update_xml converts older files)"
        );
        assert_eq!(
            err("<platform version=\"4.1\">\n <zone id=\"z\" routing=\"Cluster\"/></platform>"),
            "cannot read p.xml: line 2: zone routing 'Cluster' is not read; accepted: Full, \
             Floyd, Dijkstra, DijkstraCache"
        );
        assert_eq!(
            err(
                "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n\n<link id=\"l\" \
                 bandwidth=\"3parsecs\"/></zone></platform>"
            ),
            "cannot read p.xml: line 3: bandwidth=\"3parsecs\": unknown unit 'parsecs'; \
             accepted: Bps or bps with a prefix k, M, G, T, Ki, Mi, Gi, ..."
        );
        assert!(err(CLUSTER
            .replace("<cluster", "<cluster topology=\"TORUS\"")
            .as_str())
        .ends_with("line 4: cluster topology=\"TORUS\" is not read; accepted: FLAT"));
        let bus = r#"<platform version="4.1"><zone id="z" routing="Full">
<host id="a" speed="1"/><host id="b" speed="1"/><host id="c" speed="1"/>
<link id="la" bandwidth="1Bps"/><link id="lb" bandwidth="1Bps"/><link id="lc" bandwidth="1Bps"/>
<link id="bb" bandwidth="1Bps"/>
<route src="a" dst="b"><link_ctn id="la"/><link_ctn id="bb"/><link_ctn id="lb"/></route>
<route src="a" dst="c"><link_ctn id="la"/><link_ctn id="bb"/><link_ctn id="lc"/></route>
<route src="b" dst="c"><link_ctn id="lb"/><link_ctn id="bb"/><link_ctn id="lc"/></route>
</zone></platform>"#;
        assert!(
            err(bus).starts_with("cannot read p.xml: line 7: route b -> c: link 'lc'"),
            "{}",
            err(bus)
        );
        assert_eq!(
            err(
                "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n<host id=\"a\" \
                 speed=\"1\"/>\n<router id=\"a\"/></zone></platform>"
            ),
            "cannot read p.xml: line 3: netpoint 'a' is declared twice"
        );
        assert_eq!(
            err(
                "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n<link id=\"l\" \
                 bandwidth=\"1Bps\"/>\n\n<link id=\"l\" bandwidth=\"1Bps\"/></zone></platform>"
            ),
            "cannot read p.xml: line 4: link 'l' is declared twice"
        );
    }

    #[test]
    fn units_as_simgrid_reads_them() {
        assert_eq!(parse_bandwidth("125MBps").unwrap(), 1.0);
        assert_eq!(parse_bandwidth("100Gbps").unwrap(), 100.0);
        assert_eq!(parse_bandwidth("1KiBps").unwrap(), 8192.0 / 1e9);
        assert_eq!(parse_bandwidth("1e9").unwrap(), 8.0);
        assert_eq!(parse_latency("1.5us").unwrap(), 1_500_000);
        assert_eq!(parse_latency("2").unwrap(), 2_000_000_000_000);
        assert!(parse_bandwidth("0Bps").is_err());
        assert!(parse_latency("-1s").is_err());
    }
}
