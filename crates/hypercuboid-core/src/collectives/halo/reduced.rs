//! `halo_reduced` (`reduced`): only what a D3Q19 pull-streaming step reads. A site next to a
//! face pulls the distributions whose velocity points into the subdomain from the halo: 5 per
//! face and 1 per edge, none from the corners ([`crate::lattice::d3q19::crossing`]). The
//! exchange is the non-blocking one (all messages posted at once, one wait) restricted to the
//! 18 face and edge neighbours, each message carrying those distributions of its sites
//! ([`crate::schedule::Region`] value masks): of the 19 values per site, a face sends 5 and an
//! edge 1. The saving over the full exchange is [`saving`].
//!
//! It needs 19 values per site (the schedule's values are the D3Q19 distributions in the order
//! of [`crate::lattice::d3q19::VELOCITIES`]).

use super::{build_posted, prepare, Algorithm, Halo, HaloSpec, OVERLAP_KEY};
use crate::collectives::registry::{Entry, Needs};
use crate::lattice::d3q19;
use crate::schedule::halo::{order, DIRECTIONS};
use crate::schedule::Rank;
use crate::spec::Form;

/// The `halo_reduced` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Halo> = Entry {
    form: Form::named(
        "halo_reduced",
        "what a D3Q19 stream step reads: 18 neighbours, 5 distributions per face and 1 \
         per edge, posted at once (needs 19 values per site)",
    )
    .with_aliases(&["reduced"])
    .with_keys(&[OVERLAP_KEY]),
    parse: |spec| {
        Ok(Algorithm::Reduced {
            overlap: super::overlap_key(spec)?,
        })
    },
    needs: Needs::Nothing,
    prepare,
    build: |p, problem, rank, out| build_posted(p, problem, rank, out, d3q19::crossing, p.unpack),
    cost: None,
    guarantees: &[],
    examples: &["halo_reduced", "halo_reduced:overlap=on"],
};

/// Values rank `rank` sends per exchange: `(full, reduced)`, the 26-direction exchange of every
/// value against the reduced one (directions without a neighbour send nothing in both).
pub fn saving(spec: &HaloSpec, rank: Rank) -> (u64, u64) {
    let (mut full, mut reduced) = (0u64, 0u64);
    let n = spec.decomp.subdomain(rank);
    for d in DIRECTIONS {
        if spec.decomp.neighbour(rank, d).is_none() {
            continue;
        }
        let sites: u64 = (0..3)
            .map(|a| if d[a] == 0 { n[a] as u64 } else { 1 })
            .product();
        full += sites * spec.values as u64;
        let m = d3q19::crossing([-d[0], -d[1], -d[2]]);
        debug_assert_eq!(m.count_ones(), [0, 5, 1, 0][order(d) as usize]);
        reduced += sites * m.count_ones() as u64;
    }
    (full, reduced)
}
