//! Results of a simulation: throughput, latency distribution, hops, link utilisation.

use super::routing::Routes;
use crate::units::Time;

/// A log-linear histogram of latencies in picoseconds: exact below 256 ps, then 256 buckets
/// per power of two (relative error below 0.4 %).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

const SUB_BITS: u32 = 8;
const SUB: u64 = 1 << SUB_BITS;

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Histogram {
        Histogram {
            counts: vec![0; (64 - SUB_BITS as usize + 1) * SUB as usize],
            n: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    #[inline]
    fn bucket(v: u64) -> usize {
        if v < SUB {
            v as usize
        } else {
            let k = 63 - v.leading_zeros(); // >= SUB_BITS
            let shift = k - SUB_BITS;
            ((k - SUB_BITS + 1) as u64 * SUB + ((v >> shift) - SUB)) as usize
        }
    }

    /// Lower bound and width of bucket `b`.
    fn range(b: usize) -> (u64, u64) {
        let b = b as u64;
        if b < SUB {
            (b, 1)
        } else {
            let k = b / SUB - 1 + SUB_BITS as u64;
            let shift = k - SUB_BITS as u64;
            (((b % SUB) + SUB) << shift, 1 << shift)
        }
    }

    /// Records `v`.
    #[inline]
    pub fn add(&mut self, v: u64) {
        self.counts[Self::bucket(v)] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.n += other.n;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Exact mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// Smallest value (0 when empty).
    pub fn min(&self) -> u64 {
        if self.n == 0 {
            0
        } else {
            self.min
        }
    }

    /// Largest value.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The `q` quantile (0 ≤ q ≤ 1): the midpoint of the bucket holding the ⌈q·n⌉-th value,
    /// clamped to [min, max] (0 when empty).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, w) = Self::range(b);
                return (lo + w / 2).clamp(self.min, self.max);
            }
        }
        self.max
    }
}

/// Packets through one directed router-to-router link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkUse {
    /// Router the link leaves.
    pub from: u32,
    /// Router the link enters.
    pub to: u32,
    /// Index of the link in the topology.
    pub link: u32,
    /// Packets sent in the measurement window.
    pub packets: u64,
    /// Fraction of the window the link was busy sending.
    pub utilisation: f64,
}

/// Utilisation of the links over the measurement window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkUtilisation {
    /// Mean over the directed router-to-router links (0 without any).
    pub mean: f64,
    /// Largest over the directed router-to-router links (0 without any).
    pub max: f64,
    /// Mean over the endpoint links (injection side of their ports).
    pub endpoint_mean: f64,
}

/// What one simulation measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Routing in canonical spec form.
    pub routing: String,
    /// VC scheme (`hop`, `phase`, `none`).
    pub vc_scheme: &'static str,
    /// VCs per network port.
    pub vcs: usize,
    /// Traffic or exchange name.
    pub traffic: String,
    /// Offered load (fraction of injection bandwidth; exchanges: 1; external messages: the
    /// packets they asked for, as `generated`).
    pub offered: f64,
    /// Packets generated in the window as a fraction of injection bandwidth.
    pub generated: f64,
    /// Packets delivered in the window as a fraction of injection bandwidth.
    pub accepted: f64,
    /// Latencies (generation to delivery of the tail) of the packets delivered in the window.
    pub latency: Histogram,
    /// Router-to-router hops of the packets delivered in the window (`hops[h]`).
    pub hops: Vec<u64>,
    /// Packets delivered in the window that took an indirect path.
    pub indirect: u64,
    /// Packets delivered in the window.
    pub delivered: u64,
    /// Packets generated in the window.
    pub generated_packets: u64,
    /// Packets injected into the network in the whole run.
    pub injected_total: u64,
    /// Packets delivered in the whole run.
    pub delivered_total: u64,
    /// Packets still in the network (or its buffers) when the run stopped.
    pub in_flight: u64,
    /// Packets generated (or queued by an exchange or the caller) but not yet injected
    /// (source queues) when the run stopped.
    pub source_queued: u64,
    /// Measurement window `[start, end)` in ps.
    pub window: (Time, Time),
    /// Time at which the run stopped (ps).
    pub end_time: Time,
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds of the run.
    pub wall_seconds: f64,
    /// Threads the run used (parts of the network simulated side by side).
    pub threads: usize,
    /// Packets sent per port (output side) in the window, indexed by global port id.
    pub port_packets: Vec<u64>,
    /// Serialisation time of one packet per port (ps).
    pub port_ser: Vec<Time>,
    /// Exchange and external messages: when the last packet was delivered (ps; an exchange
    /// starts at 0, so this is the time it takes).
    pub completion: Option<Time>,
    /// Exchange: data per node / completion time, as a fraction of the injection bandwidth.
    pub effective_throughput: Option<f64>,
    /// Exchange: torus dimensions (nn).
    pub dims: Option<[u32; 3]>,
}

impl Report {
    /// Mean hops of the delivered packets.
    pub fn hops_avg(&self) -> f64 {
        let n: u64 = self.hops.iter().sum();
        if n == 0 {
            return 0.0;
        }
        self.hops
            .iter()
            .enumerate()
            .map(|(h, &c)| h as f64 * c as f64)
            .sum::<f64>()
            / n as f64
    }

    /// Fraction of the delivered packets that took an indirect path.
    pub fn indirect_fraction(&self) -> f64 {
        if self.delivered == 0 {
            0.0
        } else {
            self.indirect as f64 / self.delivered as f64
        }
    }

    /// Utilisation of every directed router-to-router link, in port order.
    pub fn link_uses(&self, routes: &Routes) -> Vec<LinkUse> {
        let w = (self.window.1 - self.window.0).max(1) as f64;
        (0..routes.num_ports())
            .filter_map(|p| {
                let (from, to) = routes.port_ends(p)?;
                Some(LinkUse {
                    from,
                    to,
                    link: routes.port_link(p).unwrap_or(u32::MAX),
                    packets: self.port_packets[p],
                    utilisation: self.port_packets[p] as f64 * self.port_ser[p] as f64 / w,
                })
            })
            .collect()
    }

    /// Mean and largest utilisation of the directed router-to-router links, and the mean of
    /// the endpoint links ([`Report::link_uses`], [`Report::endpoint_utilisation`]).
    pub fn utilisation(&self, routes: &Routes) -> LinkUtilisation {
        let uses = self.link_uses(routes);
        let n = uses.len().max(1) as f64;
        LinkUtilisation {
            mean: uses.iter().map(|u| u.utilisation).sum::<f64>() / n,
            max: uses.iter().map(|u| u.utilisation).fold(0.0, f64::max),
            endpoint_mean: self.endpoint_utilisation(routes),
        }
    }

    /// Packets delivered per wall-clock second of the run (0 when it took no measurable
    /// time): the engine's speed.
    pub fn packets_per_second(&self) -> f64 {
        if self.wall_seconds > 0.0 {
            self.delivered_total as f64 / self.wall_seconds
        } else {
            0.0
        }
    }

    /// The `k` most utilised directed links, busiest first (ties by port order).
    pub fn top_links(&self, routes: &Routes, k: usize) -> Vec<LinkUse> {
        let mut v = self.link_uses(routes);
        v.sort_by(|a, b| b.utilisation.total_cmp(&a.utilisation));
        v.truncate(k);
        v
    }

    /// Mean utilisation of the endpoint links (the output side of their ports, toward the
    /// endpoint) over the window.
    pub fn endpoint_utilisation(&self, routes: &Routes) -> f64 {
        let w = (self.window.1 - self.window.0).max(1) as f64;
        let mut s = 0.0;
        let mut n = 0usize;
        for p in 0..routes.num_ports() {
            if routes.port_endpoint(p).is_some() {
                s += self.port_packets[p] as f64 * self.port_ser[p] as f64 / w;
                n += 1;
            }
        }
        if n == 0 {
            0.0
        } else {
            s / n as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_round_trip() {
        for v in [0u64, 1, 255, 256, 257, 511, 512, 1000, 520_480, 1 << 40] {
            let b = Histogram::bucket(v);
            let (lo, w) = Histogram::range(b);
            assert!(
                lo <= v && v < lo + w,
                "{v}: bucket {b} = [{lo}, {})",
                lo + w
            );
            assert!(w == 1 || (w as f64) / (lo as f64) <= 1.0 / 256.0 + 1e-12);
        }
    }

    #[test]
    fn quantiles() {
        let mut h = Histogram::new();
        for v in 1..=100u64 {
            h.add(v);
        }
        assert_eq!(h.quantile(0.5), 50);
        assert_eq!(h.quantile(0.99), 99);
        assert_eq!(h.quantile(1.0), 100);
        assert_eq!(h.mean(), 50.5);
        assert_eq!(h.min(), 1);
    }
}
