//! Random switched trees for tests and benchmarks: a shape, a number of machines and a seed
//! give one [`TreeDescription`] (deterministic).

use crate::spec::SpecError;
use crate::topology::tree::TreeDescription;
use crate::topology::{LinkParams, TopologyError};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The shapes of [`random_tree`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A random recursive tree of switches, machines on random switches.
    Random,
    /// Switches in a chain, machines on random switches.
    Chain,
    /// One central switch with the other switches linked to it; some machines on the centre.
    Star,
    /// A deep tree: mostly a chain with short side branches, machines mostly at the ends.
    Deep,
    /// A random recursive tree with switches that hold no machine (leaf switches included).
    Sparse,
}

/// Every shape, in order.
pub const SHAPES: [Shape; 5] = [
    Shape::Random,
    Shape::Chain,
    Shape::Star,
    Shape::Deep,
    Shape::Sparse,
];

impl Shape {
    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Random => "random",
            Shape::Chain => "chain",
            Shape::Star => "star",
            Shape::Deep => "deep",
            Shape::Sparse => "sparse",
        }
    }
}

/// Most machines (and switches) of [`try_random_tree`].
pub const MAX_RANDOM: usize = 1 << 16;

/// [`random_tree`] of the shape named `shape`, refusing an unknown shape and a count of
/// machines or switches outside 1 ..= [`MAX_RANDOM`].
pub fn try_random_tree(
    machines: usize,
    switches: usize,
    shape: &str,
    seed: u64,
) -> Result<TreeDescription, TopologyError> {
    let Some(s) = SHAPES.iter().copied().find(|s| s.name() == shape) else {
        return Err(TopologyError::Spec(SpecError::UnknownName {
            what: "random tree shape",
            name: shape.to_string(),
            accepted: SHAPES.iter().map(|s| s.name().to_string()).collect(),
        }));
    };
    for (name, value) in [("machines", machines), ("switches", switches)] {
        if value == 0 || value > MAX_RANDOM {
            return Err(TopologyError::Parameter {
                family: "random tree",
                name,
                value: value.to_string(),
                reason: format!("a random tree has 1 to {MAX_RANDOM} {name}"),
            });
        }
    }
    Ok(random_tree(machines, switches, s, seed))
}

/// A random tree of `machines` machines (≥ 1) on `switches` switches (≥ 1) of `shape`:
/// switches `s0 …`, machines `n0 …` attached in machine order.
pub fn random_tree(machines: usize, switches: usize, shape: Shape, seed: u64) -> TreeDescription {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let switches = switches.max(1);
    let mut links = Vec::new();
    let mut parent = vec![0usize; switches];
    for (s, slot) in parent.iter_mut().enumerate().skip(1) {
        *slot = match shape {
            Shape::Random | Shape::Sparse => rng.random_range(0..s),
            Shape::Chain => s - 1,
            Shape::Star => 0,
            Shape::Deep => {
                if rng.random_range(0..4) == 0 {
                    rng.random_range(0..s)
                } else {
                    s - 1
                }
            }
        };
    }
    let name = |p: &str, i: usize| format!("{p}{i}");
    for (s, &p) in parent.iter().enumerate().skip(1) {
        links.push((name("s", p), name("s", s), LinkParams::default()));
    }
    let leaf: Vec<bool> = (0..switches)
        .map(|s| (0..switches).all(|c| c == 0 || parent[c] != s || c == s))
        .collect();
    let holders: Vec<usize> = match shape {
        Shape::Sparse => {
            // Only about half the switches (never all the leaves) hold machines.
            let mut h: Vec<usize> = (0..switches).filter(|_| rng.random_bool(0.5)).collect();
            if h.is_empty() {
                h.push(switches - 1);
            }
            h
        }
        Shape::Deep => {
            let mut h: Vec<usize> = (0..switches).filter(|&s| leaf[s]).collect();
            h.push(0);
            h
        }
        _ => (0..switches).collect(),
    };
    for m in 0..machines {
        let s = holders[rng.random_range(0..holders.len())];
        links.push((name("n", m), name("s", s), LinkParams::default()));
    }
    TreeDescription {
        name: format!("random-{}-{machines}-{switches}-{seed}", shape.name()),
        switches: (0..switches).map(|s| name("s", s)).collect(),
        machines: (0..machines).map(|m| name("n", m)).collect(),
        links,
    }
}
