//! Phases for any topology (issue 15, section 6): first-fit packing of the AAPC messages under
//! a deterministic minimal routing ([`super::route`]), improved by iterated greedy and tabu
//! search.
//!
//! Every message is routed; the load of a directed link is the number of AAPC messages that
//! use it, and the largest load is the lower bound on the number of phases (each phase carries
//! at most one message per link; the messages through one link are a clique of the conflict
//! graph). Then:
//! 1. **First fit**, messages taken in order of the largest load on their path (descending:
//!    messages through the bottleneck first), the sum of the loads on their path (descending),
//!    the ring order of the pair `(d − s) mod |M|`, then `s`; each goes to the first phase in
//!    which none of its links is taken yet (a bit set of phases per directed link). This is a
//!    largest-first colouring of the message–link conflict graph without building the graph.
//! 2. **Iterated greedy** (Culberson's): [`ITERATED_ROUNDS`] rounds re-pack the messages phase
//!    by phase, the phases in reverse order, largest first or shuffled; the members of a phase
//!    stay free of each other, so no round needs more phases than the last.
//! 3. **Tabu search**, repeatedly, until it fails or reaches the bound: empty the last phase by
//!    placing its messages one at a time where they displace the fewest others, the displaced
//!    ones waiting their turn and barred for a while from the phase they left
//!    ([`TABU_MOVES`] moves per attempt).
//!
//! Stops as soon as the bound is reached. Random choices come from fixed seeds: the result is
//! deterministic.

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
    // Then try to empty the last phase again and again by tabu search.
    let mut rng = ChaCha8Rng::seed_from_u64(TABU_SEED);
    while best.phases as u64 > load {
        match tabu_drop_last(&best, path_of, routes.num_directed_links(), &mut rng) {
            Some(fewer) => best = fewer,
            None => break,
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

/// Moves tried per attempt to empty the last phase.
pub const TABU_MOVES: usize = 200_000;

/// Seed of the tabu search's tie-breaking.
const TABU_SEED: u64 = 0x0007_ab00;

const FREE: u32 = u32::MAX;

/// Tabu search for a packing with one phase fewer: the messages of the last phase are
/// re-placed one at a time, each into the phase where it displaces the fewest others (ties at
/// random), the displaced ones waiting their turn; a message may not return to a phase it was
/// displaced from for a while (its tabu tenure). `None` when [`TABU_MOVES`] moves do not
/// place every message.
fn tabu_drop_last<'a>(
    from: &Packing,
    path_of: impl Fn(usize) -> &'a [u32],
    links: usize,
    rng: &mut ChaCha8Rng,
) -> Option<Packing> {
    use rand::RngExt;
    let k = from.phases - 1;
    if k == 0 {
        return None;
    }
    // occupant[link * k + phase]: the message using the link in the phase.
    let mut occupant = vec![FREE; links * k];
    let mut phase = from.phase.clone();
    let mut pending: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    for (i, &p) in phase.iter().enumerate() {
        if p as usize >= k {
            pending.push_back(i);
        } else {
            for &l in path_of(i) {
                occupant[l as usize * k + p as usize] = i as u32;
            }
        }
    }
    let mut tabu: rustc_hash::FxHashMap<(u32, u32), usize> = Default::default();
    let mut seen: Vec<u32> = Vec::new();
    for step in 0..TABU_MOVES {
        let Some(u) = pending.pop_front() else {
            return Some(Packing { phase, phases: k });
        };
        let path = path_of(u);
        // The phase that displaces the fewest messages (not tabu for u).
        let (mut best, mut best_cost, mut ties) = (usize::MAX, usize::MAX, 0u32);
        for p in 0..k {
            if tabu
                .get(&(u as u32, p as u32))
                .is_some_and(|&until| until > step)
            {
                continue;
            }
            seen.clear();
            for &l in path {
                let o = occupant[l as usize * k + p];
                if o != FREE && !seen.contains(&o) {
                    seen.push(o);
                }
            }
            let cost = seen.len();
            if cost < best_cost {
                (best, best_cost, ties) = (p, cost, 1);
            } else if cost == best_cost {
                ties += 1;
                if rng.random_range(0..ties) == 0 {
                    best = p;
                }
            }
        }
        if best == usize::MAX {
            pending.push_back(u);
            continue;
        }
        for &l in path {
            let o = occupant[l as usize * k + best];
            if o != FREE {
                for &m in path_of(o as usize) {
                    occupant[m as usize * k + best] = FREE;
                }
                let tenure = 7 + rng.random_range(0..10usize) + pending.len() / 2;
                tabu.insert((o, best as u32), step + tenure);
                pending.push_back(o as usize);
            }
        }
        for &l in path {
            occupant[l as usize * k + best] = u as u32;
        }
        phase[u] = best as u32;
    }
    None
}
