//! Fat trees: full-bisection folded Clos networks of radix-k routers (`fattree`), and
//! Petrini–Vanneschi k-ary n-trees (`karyntree`).
//!
//! # Full-bisection fat tree (`fattree:k=K,levels=L`)
//! With h = K/2: K pods, each an h-ary (L − 1)-tree (L − 1 levels of h^(L−2) routers, h
//! endpoints on each leaf), under h^(L−1) core routers with all K ports down, one to each pod.
//! N = 2h^L, R = (2L − 1)h^(L−1); every router has radix K. Two levels (seed section 2.2.1):
//! N = K²/2, R = 3K/2. Three levels (Al-Fares et al.): N = K³/4, R = 5K²/4. Every
//! endpoint has as many uplinks above it as endpoints below: full bisection.
//!
//! Inside a pod, router (l, w) (level l, word w of L − 2 base-h digits) links to the routers
//! (l + 1, w′) with w′ equal to w except digit l; the top router of a pod, word w, links its
//! up-port j to core w·h + j.
//!
//! Order: level-major (leaves, …, cores), pod-major within a level; endpoints leaf by leaf.
//! Coordinates (level, pod, index in pod); cores have pod = K (no pod).
//!
//! # k-ary n-tree (`karyntree:k=K,n=N`)
//! N levels of K^(N−1) routers; router (l, w) links to (l + 1, w′), w′ equal to w except digit
//! l; leaves carry K endpoints. N = K^N endpoints, radix 2K (top routers use K ports).
//! Coordinates (level, word).

use super::error::{at_least, param_err, TopologyError};
use super::graph::{check_size, kv, Builder, LinkParams, Topology};
use super::Size;

/// A full-bisection fat tree of radix-k routers with `levels` levels.
#[derive(Clone, Debug, PartialEq)]
pub struct FatTree {
    /// Router radix (even, ≥ 2).
    pub k: u32,
    /// Levels of routers (2 to 4).
    pub levels: u32,
    /// Every link's bandwidth and latency.
    pub link: LinkParams,
}

/// A k-ary n-tree.
#[derive(Clone, Debug, PartialEq)]
pub struct KaryNTree {
    /// Arity (≥ 2): endpoints per leaf, up- and down-ports per router.
    pub k: u32,
    /// Levels (≥ 1).
    pub n: u32,
    /// Every link's bandwidth and latency.
    pub link: LinkParams,
}

fn pow(b: u64, e: u32) -> u128 {
    (0..e).fold(1u128, |a, _| a.saturating_mul(b as u128))
}

fn kind_names(levels: u32) -> Vec<String> {
    (0..levels)
        .map(|l| match l {
            0 => "leaf".to_string(),
            l if l + 1 == levels => "core".to_string(),
            1 if levels == 3 => "aggregation".to_string(),
            l => format!("level{l}"),
        })
        .collect()
}

impl FatTree {
    /// Full-bisection fat tree of radix k with `levels` levels.
    pub fn new(k: u32, levels: u32) -> FatTree {
        FatTree {
            k,
            levels,
            link: LinkParams::default(),
        }
    }

    /// Closed-form size.
    pub fn size(&self) -> Result<Size, TopologyError> {
        if self.k < 2 || self.k % 2 == 1 {
            return Err(param_err(
                "fattree",
                "k",
                self.k,
                "the router radix must be even and >= 2",
            ));
        }
        if !(2..=4).contains(&self.levels) {
            return Err(param_err(
                "fattree",
                "levels",
                self.levels,
                "accepted: 2, 3 or 4",
            ));
        }
        let h = self.k as u64 / 2;
        let l = self.levels;
        let n = 2 * pow(h, l);
        let r = (2 * l as u128 - 1) * pow(h, l - 1);
        let links = 2 * (l as u128 - 1) * pow(h, l);
        check_size("fattree", r, n, links)?;
        Ok(Size {
            routers: r as u64,
            endpoints: n as u64,
            links: links as u64,
            router_radix: self.k,
            network_radix: self.k,
        })
    }

    /// Builds the topology.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let size = self.size()?;
        let h = self.k / 2;
        let l = self.levels;
        let pods = self.k;
        let per_pod = pow(h as u64, l - 2) as u32; // routers per level per pod
        let per_level = pods * per_pod;
        let kinds = kind_names(l);
        let kinds: Vec<&str> = kinds.iter().map(|s| s.as_str()).collect();
        let mut b = Builder::new("fattree", &kinds, &["level", "pod", "index"], self.link);
        b.reserve(&size);
        for level in 0..l - 1 {
            for pod in 0..pods {
                for w in 0..per_pod {
                    let r = b.router(level as u8, &[level, pod, w]);
                    if level == 0 {
                        b.endpoints(r, h);
                    }
                }
            }
        }
        let cores = per_pod * h;
        for c in 0..cores {
            b.router((l - 1) as u8, &[l - 1, pods, c]);
        }
        let idx = |level: u32, pod: u32, w: u32| level * per_level + pod * per_pod + w;
        for pod in 0..pods {
            for level in 0..l - 2 {
                let digit = pow(h as u64, level) as u32;
                for w in 0..per_pod {
                    let base = w - (w / digit) % h * digit;
                    for j in 0..h {
                        b.link(idx(level, pod, w), idx(level + 1, pod, base + j * digit));
                    }
                }
            }
            for w in 0..per_pod {
                for j in 0..h {
                    b.link(idx(l - 2, pod, w), (l - 1) * per_level + w * h + j);
                }
            }
        }
        b.finish(kv(&[("k", self.k.to_string()), ("levels", l.to_string())]))
    }
}

impl KaryNTree {
    /// The k-ary n-tree.
    pub fn new(k: u32, n: u32) -> KaryNTree {
        KaryNTree {
            k,
            n,
            link: LinkParams::default(),
        }
    }

    /// Closed-form size.
    pub fn size(&self) -> Result<Size, TopologyError> {
        at_least("karyntree", "k", self.k, 2, "")?;
        at_least("karyntree", "n", self.n, 1, " level")?;
        let per_level = pow(self.k as u64, self.n - 1);
        let r = self.n as u128 * per_level;
        let n = pow(self.k as u64, self.n);
        let links = (self.n as u128 - 1) * n;
        check_size("karyntree", r, n, links)?;
        Ok(Size {
            routers: r as u64,
            endpoints: n as u64,
            links: links as u64,
            router_radix: if self.n > 1 { 2 * self.k } else { self.k },
            network_radix: if self.n > 2 {
                2 * self.k
            } else if self.n == 2 {
                self.k
            } else {
                0
            },
        })
    }

    /// Builds the topology.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let size = self.size()?;
        let (k, n) = (self.k, self.n);
        let per_level = pow(k as u64, n - 1) as u32;
        let kinds = kind_names(n.max(1));
        let kinds: Vec<&str> = kinds.iter().map(|s| s.as_str()).collect();
        let mut b = Builder::new("karyntree", &kinds, &["level", "word"], self.link);
        b.reserve(&size);
        for level in 0..n {
            for w in 0..per_level {
                let r = b.router(level as u8, &[level, w]);
                if level == 0 {
                    b.endpoints(r, k);
                }
            }
        }
        for level in 0..n - 1 {
            let digit = pow(k as u64, level) as u32;
            for w in 0..per_level {
                let base = w - (w / digit) % k * digit;
                for j in 0..k {
                    b.link(
                        level * per_level + w,
                        (level + 1) * per_level + base + j * digit,
                    );
                }
            }
        }
        b.finish(kv(&[("k", k.to_string()), ("n", n.to_string())]))
    }
}
