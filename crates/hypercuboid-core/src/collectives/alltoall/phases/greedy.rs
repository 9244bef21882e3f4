//! Phases for any topology (issue 15, section 6): first-fit packing of the AAPC messages under
//! deterministic minimal routing ([`super::route`]), most constrained messages first.
//!
//! Every message is routed; the load of a directed link is the number of AAPC messages that
//! use it, and the largest load is the lower bound on the number of phases (each phase carries
//! at most one message per link). Messages are then taken in order of
//! 1. the largest load on their path, descending (messages through the bottleneck first),
//! 2. the sum of the loads on their path, descending,
//! 3. the ring order of the pair, `(d − s) mod |M|` ascending, then `s`,
//!
//! and each goes to the first phase in which none of its links is taken yet (a bit set of
//! phases per directed link). This is a largest-first colouring of the message–link conflict
//! graph without building the graph. The result is deterministic.

use super::check::link_loads;
use super::{LinkRoutes, PhaseError, PhaseTable, MAX_GREEDY_MACHINES};
use crate::topology::Topology;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The heuristic's phases and its lower bound.
#[derive(Clone, Debug)]
pub struct GreedyPhases {
    /// The phases.
    pub table: PhaseTable,
    /// The largest directed-link load: no schedule has fewer phases.
    pub load: u64,
}

/// First-fit phases of the AAPC on `topo` under `routes` (see the module).
pub fn greedy(topo: &Topology, routes: &LinkRoutes) -> Result<GreedyPhases, PhaseError> {
    let n = topo.num_endpoints();
    if n < 2 {
        return Err(PhaseError::TooFewMachines {
            topology: topo.name().to_string(),
            machines: n,
        });
    }
    if n > MAX_GREEDY_MACHINES {
        return Err(PhaseError::TooManyMachines {
            topology: topo.name().to_string(),
            machines: n,
            limit: MAX_GREEDY_MACHINES,
            method: "greedy",
        });
    }
    let loads = link_loads(routes);
    let load = loads.iter().copied().max().unwrap_or(0);
    let n32 = n as u32;
    // Every message's path, CSR.
    let mut offsets = Vec::with_capacity(n * (n - 1) + 1);
    let mut links: Vec<u32> = Vec::new();
    let mut pairs = Vec::with_capacity(n * (n - 1));
    let mut path = Vec::new();
    offsets.push(0usize);
    for s in 0..n32 {
        for d in 0..n32 {
            if s != d {
                routes.route_into(s, d, &mut path);
                links.extend_from_slice(&path);
                offsets.push(links.len());
                pairs.push((s, d));
            }
        }
    }
    let path_of = |i: usize| &links[offsets[i]..offsets[i + 1]];
    let mut order: Vec<(u64, u64, u32, u32, usize)> = (0..pairs.len())
        .map(|i| {
            let p = path_of(i);
            let max = p.iter().map(|&l| loads[l as usize]).max().unwrap_or(0);
            let sum = p.iter().map(|&l| loads[l as usize]).sum();
            let (s, d) = pairs[i];
            (max, sum, (d + n32 - s) % n32, s, i)
        })
        .collect();
    order.sort_unstable_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    let first: Vec<usize> = order.iter().map(|o| o.4).collect();
    let mut best = first_fit(&first, path_of, routes.num_directed_links(), load);
    // Iterated greedy (Culberson): re-pack phase by phase in a new order of the phases; the
    // members of a phase stay free of each other, so no round uses more phases than the last.
    let mut rng = ChaCha8Rng::seed_from_u64(ITERATED_SEED);
    for round in 0..ITERATED_ROUNDS {
        if best.phases as u64 <= load {
            break;
        }
        let mut classes: Vec<Vec<usize>> = vec![Vec::new(); best.phases];
        for (i, &p) in best.phase.iter().enumerate() {
            classes[p as usize].push(i);
        }
        match round % 3 {
            0 => classes.reverse(),
            1 => classes.sort_by_key(|c| std::cmp::Reverse(c.len())),
            _ => classes.shuffle(&mut rng),
        }
        let next_order: Vec<usize> = classes.into_iter().flatten().collect();
        let next = first_fit(&next_order, path_of, routes.num_directed_links(), load);
        if next.phases <= best.phases {
            best = next;
        }
    }
    let placed: Vec<(u32, u32, u32)> = {
        let mut v: Vec<(u32, u32, u32)> = best
            .phase
            .iter()
            .enumerate()
            .map(|(i, &p)| (p, pairs[i].0, pairs[i].1))
            .collect();
        v.sort_unstable();
        v
    };
    let phases = best.phases;
    Ok(GreedyPhases {
        table: PhaseTable::from_sorted(n32, phases, placed.into_iter()),
        load,
    })
}

/// Rounds of iterated greedy after the first packing.
pub const ITERATED_ROUNDS: usize = 200;

/// Seed of the shuffled rounds (fixed: the result is deterministic).
const ITERATED_SEED: u64 = 0x05ee_da2a;

/// A packing: the phase of every message and the number of phases.
struct Packing {
    phase: Vec<u32>,
    phases: usize,
}

/// First-fit of the messages in `order` (indices whose paths `path_of` gives) into phases,
/// `hint` the expected number of phases (sizes the bit sets).
fn first_fit<'a>(
    order: &[usize],
    path_of: impl Fn(usize) -> &'a [u32],
    links: usize,
    hint: u64,
) -> Packing {
    // Phases taken per directed link, as bit sets of 64-phase words.
    let words = (hint as usize).div_ceil(64).max(1);
    let mut taken: Vec<Vec<u64>> = vec![vec![0u64; words]; links];
    let mut phase_of = vec![0u32; order.len()];
    let mut phases = 0usize;
    for &i in order {
        let p = path_of(i);
        let mut w = 0usize;
        let phase = loop {
            let mut busy = 0u64;
            for &l in p {
                busy |= taken[l as usize].get(w).copied().unwrap_or(0);
            }
            if busy != u64::MAX {
                break w * 64 + busy.trailing_ones() as usize;
            }
            w += 1;
        };
        for &l in p {
            let t = &mut taken[l as usize];
            if t.len() <= phase / 64 {
                t.resize(phase / 64 + 1, 0);
            }
            t[phase / 64] |= 1u64 << (phase % 64);
        }
        phases = phases.max(phase + 1);
        phase_of[i] = phase as u32;
    }
    Packing {
        phase: phase_of,
        phases,
    }
}
