//! Phase × link occupancy: how many messages of each phase use each directed link (the data
//! of `hypercuboid alltoall phases --plot`). A contention-free table has only 0 and 1.

use super::{LinkRoutes, PhaseError, PhaseTable};
use crate::topology::Topology;

/// Largest occupancy matrix built (directed links × phases).
pub const MAX_CELLS: usize = 1 << 26;

/// Messages per (directed link, phase), for the directed links some message uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// The directed links shown (ids of [`super::route`]), in id order: router-to-router
    /// links, then each machine's send and receive links.
    pub links: Vec<u32>,
    /// Their names, `from->to`.
    pub names: Vec<String>,
    /// Number of phases (columns).
    pub phases: usize,
    /// Row-major `links.len() × phases` counts.
    pub counts: Vec<u16>,
}

/// The occupancy of `table` on `topo` under `routes`.
pub fn occupancy(
    topo: &Topology,
    routes: &LinkRoutes,
    table: &PhaseTable,
) -> Result<Occupancy, PhaseError> {
    let phases = table.num_phases();
    let nl = routes.num_directed_links();
    let n = routes.num_endpoints() as u32;
    let mut used = vec![false; nl];
    let mut path = Vec::new();
    for ms in table.iter() {
        for &(s, d) in ms {
            if s < n && d < n && s != d {
                routes.route_into(s, d, &mut path);
                for &l in &path {
                    used[l as usize] = true;
                }
            }
        }
    }
    let links: Vec<u32> = (0..nl as u32).filter(|&l| used[l as usize]).collect();
    let cells = links.len().saturating_mul(phases);
    if cells > MAX_CELLS {
        return Err(PhaseError::TooLarge {
            what: format!(
                "an occupancy of {} directed links x {phases} phases = {cells} cells",
                links.len()
            ),
            limit: format!("{MAX_CELLS} cells"),
        });
    }
    let mut row = vec![u32::MAX; nl];
    for (i, &l) in links.iter().enumerate() {
        row[l as usize] = i as u32;
    }
    let mut counts = vec![0u16; cells];
    for (p, ms) in table.iter().enumerate() {
        for &(s, d) in ms {
            if s < n && d < n && s != d {
                routes.route_into(s, d, &mut path);
                for &l in &path {
                    let c = &mut counts[row[l as usize] as usize * phases + p];
                    *c = c.saturating_add(1);
                }
            }
        }
    }
    let names = links.iter().map(|&l| routes.name(topo, l)).collect();
    Ok(Occupancy {
        links,
        names,
        phases,
        counts,
    })
}
