//! The seed's Figure 3: the largest instance of each family whose router radix fits a given
//! radix, with its cost per endpoint (closed forms, checked against the generators in tests).

use super::dragonfly::Dragonfly;
use super::fattree::FatTree;
use super::galois::prime_power;
use super::hyperx::HyperX;
use super::mlfm::Mlfm;
use super::oft::Oft;
use super::polarfly::PolarFly;
use super::slimfly::{Concentration, SlimFly};
use super::Size;

/// One family's largest instance within a router radix.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRow {
    /// Family label, e.g. `Slim Fly (p=floor)`.
    pub label: &'static str,
    /// Spec string of the instance.
    pub spec: String,
    /// Its size.
    pub size: Size,
    /// Its diameter in router hops between endpoint routers (closed form).
    pub diameter: u32,
}

/// Labels of the rows [`largest_within_radix`] returns, in order.
pub const LABELS: [&str; 9] = [
    "OFT",
    "MLFM",
    "Slim Fly (p=floor)",
    "Slim Fly (p=ceil)",
    "PolarFly (p=ceil)",
    "2D HyperX",
    "Dragonfly",
    "2-level fat tree",
    "3-level fat tree",
];

/// For every family of [`LABELS`], the instance with the most endpoints whose router radix is at
/// most `radix` (families with no such instance are left out). Balanced configurations: OFT
/// p = k, MLFM h = l = p, 2D HyperX p = s − 1, Dragonfly a = 2p = 2h, full-bisection fat trees.
pub fn largest_within_radix(radix: u32) -> Vec<CompareRow> {
    let mut rows = Vec::new();
    let mut push = |label: &'static str, spec: String, size: Size, diameter: u32| {
        rows.push(CompareRow {
            label,
            spec,
            size,
            diameter,
        })
    };
    if let Some(k) = (3..=radix / 2)
        .rev()
        .find(|&k| prime_power(k as u64 - 1).is_some())
    {
        push(
            "OFT",
            format!("oft:k={k}"),
            Oft::new(k).size().expect("valid k"),
            2,
        );
    }
    if radix / 2 >= 2 {
        let h = radix / 2;
        push(
            "MLFM",
            format!("mlfm:h={h}"),
            Mlfm::new(h).size().expect("valid h"),
            2,
        );
    }
    for (label, p) in [
        ("Slim Fly (p=floor)", Concentration::Floor),
        ("Slim Fly (p=ceil)", Concentration::Ceil),
    ] {
        let best = (3..=radix)
            .filter_map(|q| {
                let s = SlimFly {
                    p,
                    ..SlimFly::new(q)
                }
                .size()
                .ok()?;
                (s.router_radix <= radix).then_some((q, s))
            })
            .max_by_key(|(_, s)| s.endpoints);
        if let Some((q, s)) = best {
            push(
                label,
                format!("slimfly:q={q},p={}", s.router_radix - s.network_radix),
                s,
                2,
            );
        }
    }
    let best = (2..=radix)
        .filter_map(|q| {
            let s = PolarFly::new(q).size().ok()?;
            (s.router_radix <= radix).then_some((q, s))
        })
        .max_by_key(|(_, s)| s.endpoints);
    if let Some((q, s)) = best {
        push("PolarFly (p=ceil)", format!("polarfly:q={q}"), s, 2);
    }
    if radix >= 3 {
        let side = radix / 3 + 1;
        // (A family too large to build at this radix has no row, as Slim Fly's q do not.)
        if let Ok(s) = HyperX::new(&[side, side]).size() {
            push(
                "2D HyperX",
                format!("hyperx:s={side}x{side},p={}", side - 1),
                s,
                2,
            );
        }
    }
    if radix >= 3 {
        let p = (radix + 1) / 4;
        if p >= 1 {
            if let Ok(s) = Dragonfly::balanced(p).size() {
                push("Dragonfly", format!("dragonfly:p={p}"), s, 3);
            }
        }
    }
    let k = radix - radix % 2;
    if k >= 2 {
        for (label, levels, diameter) in [("2-level fat tree", 2, 2), ("3-level fat tree", 3, 4)] {
            if let Ok(s) = FatTree::new(k, levels).size() {
                push(label, format!("fattree:k={k},levels={levels}"), s, diameter);
            }
        }
    }
    rows
}
