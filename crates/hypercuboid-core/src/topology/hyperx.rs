//! HyperX (generalised hypercube): the Cartesian product of n full meshes (diameter-two seed,
//! section 2.1.1; Ahn et al., SC09). Diameter n.
//!
//! Router (c₀, …, c_{n−1}), c_i < s_i, has index c₀ + s₀(c₁ + s₁(c₂ + …)) (dimension 0
//! fastest) and links to every router that differs from it in exactly one coordinate: network
//! radix Σ(s_i − 1). p endpoints per router, default min(s_i) − 1, the seed's balanced 2D
//! HyperX (r/3 ports to each dimension and to endpoints: R = (r/3 + 1)², N = (r/3)(r/3 + 1)²).

use super::error::{param_err, TopologyError};
use super::graph::{check_size, kv, Builder, LinkParams, Topology};
use super::Size;

/// An n-dimensional HyperX.
#[derive(Clone, Debug, PartialEq)]
pub struct HyperX {
    /// Size of every dimension (each ≥ 2), at least one dimension.
    pub sizes: Vec<u32>,
    /// Endpoints per router.
    pub p: u32,
    /// Every link's bandwidth and latency.
    pub link: LinkParams,
}

const FAMILY: &str = "hyperx";

/// `8x8x4` for a list of sizes.
pub(crate) fn dims_text(sizes: &[u32]) -> String {
    sizes
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

/// The routers of a grid of `sizes` (their product, saturating) with `p` endpoints each, or
/// the error for no dimension, one below `min` or `p` < 1 (`key` names the sizes, `example`
/// is a valid value).
pub(crate) fn grid_routers(
    family: &'static str,
    (key, example, min): (&'static str, &str, u32),
    sizes: &[u32],
    p: u32,
) -> Result<u128, TopologyError> {
    if sizes.is_empty() || sizes.iter().any(|&s| s < min) {
        return Err(param_err(
            family,
            key,
            dims_text(sizes),
            format!("every dimension needs size >= {min}, e.g. {key}={example}"),
        ));
    }
    if p < 1 {
        return Err(param_err(family, "p", p, "must be >= 1"));
    }
    Ok(sizes
        .iter()
        .try_fold(1u128, |a, &s| a.checked_mul(s as u128))
        .unwrap_or(u128::MAX))
}

impl HyperX {
    /// The balanced HyperX with these sizes (p = min(s_i) − 1).
    pub fn new(sizes: &[u32]) -> HyperX {
        HyperX {
            sizes: sizes.to_vec(),
            p: sizes.iter().copied().min().unwrap_or(2).saturating_sub(1),
            link: LinkParams::default(),
        }
    }

    /// Closed-form size.
    pub fn size(&self) -> Result<Size, TopologyError> {
        let r = grid_routers(FAMILY, ("s", "8x8", 2), &self.sizes, self.p)?;
        let rn: u64 = self.sizes.iter().map(|&s| s as u64 - 1).sum();
        check_size(
            FAMILY,
            r,
            r.saturating_mul(self.p as u128),
            r.saturating_mul(rn as u128) / 2,
        )?;
        let r = r as u64;
        Ok(Size {
            routers: r,
            endpoints: r * self.p as u64,
            links: r * rn / 2,
            router_radix: rn as u32 + self.p,
            network_radix: rn as u32,
        })
    }

    /// Builds the topology.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let size = self.size()?;
        // every other router of the same row in each dimension (a full mesh per dimension)
        let b = build_grid(
            FAMILY,
            &self.sizes,
            self.p,
            self.link,
            &size,
            |ci, s, to| to.extend(ci + 1..s),
        );
        b.finish(kv(&[
            ("s", dims_text(&self.sizes)),
            ("p", self.p.to_string()),
        ]))
    }
}

/// The routers of an n-dimensional grid of `sizes` (dimension 0 varies fastest in the router
/// numbering, coordinates recorded as `d0, d1, …`), `p` endpoints on each, and links: for every
/// router and dimension, `forward(coordinate, extent, &mut to)` lists the coordinates along that
/// dimension to link to (each link listed once, by one of its two routers).
pub(super) fn build_grid(
    family: &'static str,
    sizes: &[u32],
    p: u32,
    link: LinkParams,
    size: &Size,
    mut forward: impl FnMut(u32, u32, &mut Vec<u32>),
) -> Builder {
    let n = sizes.len();
    let names: Vec<String> = (0..n).map(|i| format!("d{i}")).collect();
    let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    let mut b = Builder::new(family, &["router"], &names, link);
    b.reserve(size);
    let mut stride = vec![1u32; n];
    for i in 1..n {
        stride[i] = stride[i - 1] * sizes[i - 1];
    }
    let mut c = vec![0u32; n];
    for r in 0..size.routers as u32 {
        let mut x = r;
        for (ci, &s) in c.iter_mut().zip(sizes) {
            *ci = x % s;
            x /= s;
        }
        b.router(0, &c);
        b.endpoints(r, p);
    }
    let mut to = Vec::new();
    for r in 0..size.routers as u32 {
        let mut x = r;
        for (&s, &st) in sizes.iter().zip(&stride) {
            let ci = x % s;
            x /= s;
            to.clear();
            forward(ci, s, &mut to);
            for &cj in &to {
                // r's coordinate along this dimension goes from ci to cj
                b.link(r, r - ci * st + cj * st);
            }
        }
    }
    b
}
