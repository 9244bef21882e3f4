//! `halo_blocking` (`blocking`): Ludwig's `lb_halo_via_copy` (seed, chapter 2.4.1), dimension
//! by dimension. For x, then y, then z: pack the two planes one site inside each face, post
//! the two receives and the two sends, wait for all four, unpack the two halo planes. A plane
//! of a later dimension includes the halo sites received in earlier ones, so edges and corners
//! arrive by forwarding: 6 messages in all, 3 waits.
//!
//! Along an earlier axis, a plane takes the halo site on a side only where the rank has a
//! neighbour on that side; across a non-periodic boundary the halo is not the exchange's, and
//! forwarding it would overwrite another rank's untouched halo.
//!
//! # Ops
//! Per phase (on each side with a neighbour): 2 packs, one after the other, the first after the
//! previous phase's unpacks; 2 receives after those unpacks; 2 sends, the first after the
//! packs, the second after the first starts; 2 unpacks, the first after the phase's 4 messages
//! (the seed's `MPI_Waitall`), the second after the first. Send buffers
//! are `scratch 0` and receive buffers `scratch 1`, reused by every phase.

use super::{finish_compute, opposite, prepare, tag, Algorithm, Halo, HaloSpec, Prepared};
use crate::collectives::registry::{Entry, Needs};
use crate::schedule::halo::side_box;
use crate::schedule::{OpId, Program, Rank, Region, Slice, Slot};
use crate::spec::Form;

/// The `halo_blocking` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Halo> = Entry {
    form: Form::named(
        "halo_blocking",
        "dimension by dimension, 2 messages and a wait per dimension, edges and corners \
         forwarded: 6 messages (Ludwig's lb_halo_via_copy)",
    )
    .with_aliases(&["blocking"]),
    parse: |_| Ok(Algorithm::Blocking),
    needs: Needs::Nothing,
    prepare,
    build: |p, problem, rank, out| {
        let last = build(p, rank, out);
        finish_compute(p, problem, rank, out, None, &last, &[]);
    },
    cost: None,
    guarantees: &[],
    examples: &["halo_blocking"],
};

/// The region of phase `axis` on side `d` (a unit vector along `axis`): the plane one site
/// inside (`halo` false) or the halo plane, spanning the halo sites of earlier axes on the
/// sides where the rank has a neighbour.
pub fn phase_region(spec: &HaloSpec, rank: Rank, axis: usize, d: [i8; 3], halo: bool) -> Region {
    let n = spec.decomp.subdomain(rank);
    let (mut origin, mut extent) = side_box(n, d, halo);
    for b in 0..axis {
        let mut lo = [0i8; 3];
        lo[b] = -1;
        let mut hi = [0i8; 3];
        hi[b] = 1;
        let has_lo = spec.decomp.neighbour(rank, lo).is_some();
        let has_hi = spec.decomp.neighbour(rank, hi).is_some();
        origin[b] = if has_lo { 0 } else { 1 };
        extent[b] = n[b] + u32::from(has_lo) + u32::from(has_hi);
    }
    Region {
        slot: Slot::Output,
        dims: spec.local_dims(rank),
        origin,
        extent,
        values: Region::ALL_VALUES,
    }
}

/// Writes the three phases; returns the last phase's unpacks and every send.
fn build(p: &Prepared, rank: Rank, out: &mut Program) -> Vec<OpId> {
    let spec = &p.spec;
    let mut prev: Vec<OpId> = Vec::new();
    let mut sends_all = Vec::new();
    for axis in 0..3 {
        // (direction, neighbour there) for the two sides that have one
        let sides: Vec<([i8; 3], Rank)> = [-1i8, 1]
            .iter()
            .filter_map(|&side| {
                let mut d = [0i8; 3];
                d[axis] = side;
                spec.decomp.neighbour(rank, d).map(|q| (d, q))
            })
            .collect();
        if sides.is_empty() {
            continue;
        }
        // copy the planes one site inside each face into the send buffers
        let mut so = 0u64;
        let mut sbufs = Vec::new();
        let mut last_pack: Option<OpId> = None;
        for &(d, _) in &sides {
            let plane = phase_region(spec, rank, axis, d, false);
            let sbuf = Slice::new(Slot::Scratch(0), so, plane.len());
            so += plane.len();
            let pk = out.pack(plane, sbuf);
            match last_pack {
                Some(q) => out.requires(pk, q),
                None => out.requires_all(pk, &prev),
            }
            last_pack = Some(pk);
            sbufs.push(sbuf);
        }
        // post the receives of the halo planes (each neighbour sent towards -d)
        let mut ro = 0u64;
        let mut phase_msgs = Vec::new();
        let mut unpack_of = Vec::new();
        for &(d, peer) in &sides {
            let halo = phase_region(spec, rank, axis, d, true);
            let rbuf = Slice::new(Slot::Scratch(1), ro, halo.len());
            ro += halo.len();
            let r = out.recv(peer, tag(opposite(d)), rbuf);
            out.requires_all(r, &prev);
            phase_msgs.push(r);
            unpack_of.push((rbuf, halo));
        }
        // post the sends, then wait for all four (MPI_Waitall) and unpack
        let mut prev_send: Option<OpId> = None;
        for (&(d, peer), &sbuf) in sides.iter().zip(&sbufs) {
            let s = out.send(peer, tag(d), sbuf);
            match prev_send {
                None => out.requires(s, last_pack.expect("a phase with sends has packs")),
                Some(q) => out.irequires(s, q),
            }
            prev_send = Some(s);
            phase_msgs.push(s);
            sends_all.push(s);
        }
        let mut unpacks: Vec<OpId> = Vec::new();
        for (buf, halo) in unpack_of {
            let u = out.unpack(buf, halo);
            match unpacks.last() {
                None => out.requires_all(u, &phase_msgs),
                Some(&q) => out.requires(u, q),
            }
            unpacks.push(u);
        }
        prev = unpacks;
    }
    prev.extend(sends_all);
    prev
}
