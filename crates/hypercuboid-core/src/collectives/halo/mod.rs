//! Halo exchanges of a 3-D Cartesian decomposition (Ludwig's lattice-Boltzmann halos, seed
//! "halo-exchange-lattice-boltzmann", chapters 1–2): per-rank schedules that update each rank's
//! local array (its subdomain plus a halo of width 1) in place.
//!
//! What the schedules compute, the decomposition (`MPI_Cart_create` order, `MPI_Dims_create`
//! default, subdomains differing by at most one site) and the local array's layout are
//! defined in [`crate::schedule::halo`] (re-exported here): the verifier checks that definition
//! over every element. The D3Q19 velocity order that `halo_reduced` uses is
//! [`crate::lattice::d3q19`], the crate's one table of it.
//!
//! # The algorithms
//! | name | what |
//! |---|---|
//! | `halo_blocking` (`blocking`) | Ludwig's `lb_halo_via_copy`: x, then y, then z; each phase packs the two planes (with the halos received in earlier phases), posts 2 receives and 2 sends, waits for all 4, unpacks: edges and corners arrive by forwarding in 6 messages |
//! | `halo_nonblocking` (`nonblocking`) | the seed's 26-message version: pack every face, edge and corner, post 26 receives and 26 synchronous sends (`MPI_Issend`) at once, one wait for all, unpack (`unpack=on_arrival`: each buffer as its receive completes) |
//! | `halo_reduced` (`reduced`) | what a D3Q19 pull-streaming step reads: 18 neighbours (no corners), per face the 5 distributions that cross it, per edge the 1 |
//!
//! # Packing
//! Packing and unpacking are ops of the schedule ([`crate::schedule::OpKind::Pack`] and
//! [`crate::schedule::OpKind::Unpack`]): a 3-D box of the local array (with a value mask for
//! the reduced halo) to or from a contiguous scratch slice, one op per message, charged by the
//! simulator as a copy of its bytes (the seed's timings include the copies). Send buffers are
//! `scratch 0`, receive buffers `scratch 1`, one slice per direction. Messages are tagged with
//! the index of the direction they travel in ([`DIRECTIONS`]), so that two ranks that are
//! neighbours in several directions (2 ranks on a periodic axis) and a rank that is its own
//! neighbour (1 rank on a periodic axis) tell them apart. Directions without a neighbour (a
//! non-periodic boundary) have no message; their halo sites are left to the application.
//!
//! # Work between start and end
//! With a kernel time per site (`HaloProblem::kernel`), the schedule also computes: after the
//! exchange, every site (`overlap=off`), or, for the non-blocking and reduced exchanges with
//! `overlap=on`, the interior sites (those that need no halo data) between posting the messages
//! and waiting for them and the boundary shell after the unpacks (the seed's chapter 6).
//!
//! Every generator builds the program of one rank alone in time proportional to its own ops.

pub mod blocking;
pub mod nonblocking;
pub mod reduced;

use super::registry::{self, Context, Entry, Family};
use crate::schedule::{Dtype, Meta, OpId, Program, Rank, Region, ScheduleError, Slice, Slot};
use crate::spec::{Choice, Choices, Key, Spec};
use crate::units::Time;

pub use crate::schedule::halo::{
    dims_create, direction_index, format_triple, order, side_box, Decomposition, HaloSpec,
    HaloStencil, DIRECTIONS,
};

/// The halo-exchange collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Halo;

/// Every halo algorithm, in the order lists and errors give them.
pub static ALGORITHMS: &[&Entry<Halo>] = &[&blocking::ENTRY, &nonblocking::ENTRY, &reduced::ENTRY];

/// When the unpacks of the non-blocking exchange run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unpack {
    /// After one wait for every message (the seed's version).
    AtEnd,
    /// Each buffer as soon as its receive completes (the seed's "further study").
    OnArrival,
}

/// The values of the key `unpack`, the default first.
pub const UNPACKS: Choices<Unpack> = Choices::new(
    "unpack",
    &[
        Choice::new(
            "at_end",
            Unpack::AtEnd,
            "after one wait for every message (the seed's version)",
        ),
        Choice::new(
            "on_arrival",
            Unpack::OnArrival,
            "each buffer as soon as its receive completes",
        ),
    ],
);

/// The values of the key `overlap` (`off` is the default; listed as the messages always have).
const OVERLAPS: Choices<bool> = Choices::new(
    "overlap",
    &[
        Choice::new(
            "on",
            true,
            "compute the interior sites while the messages are in flight",
        ),
        Choice::new("off", false, "compute every site after the exchange"),
    ],
);

/// A halo algorithm with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// `halo_blocking`.
    Blocking,
    /// `halo_nonblocking:unpack=at_end|on_arrival,overlap=off|on`.
    Nonblocking {
        /// When buffers are unpacked.
        unpack: Unpack,
        /// Whether the interior is computed between start and end.
        overlap: bool,
    },
    /// `halo_reduced:overlap=off|on`.
    Reduced {
        /// Whether the interior is computed between start and end.
        overlap: bool,
    },
}

impl Algorithm {
    /// The registry entry.
    pub fn entry(&self) -> &'static Entry<Halo> {
        match self {
            Algorithm::Blocking => &blocking::ENTRY,
            Algorithm::Nonblocking { .. } => &nonblocking::ENTRY,
            Algorithm::Reduced { .. } => &reduced::ENTRY,
        }
    }

    /// The spec that reads back to this algorithm (`halo_nonblocking:unpack=on_arrival`);
    /// default keys are left out.
    pub fn name(&self) -> String {
        let base = self.entry().form.name;
        let mut items = Vec::new();
        match *self {
            Algorithm::Blocking => {}
            Algorithm::Nonblocking { unpack, overlap } => {
                if unpack == Unpack::OnArrival {
                    items.push("unpack=on_arrival");
                }
                if overlap {
                    items.push("overlap=on");
                }
            }
            Algorithm::Reduced { overlap } => {
                if overlap {
                    items.push("overlap=on");
                }
            }
        }
        if items.is_empty() {
            base.to_string()
        } else {
            format!("{base}:{}", items.join(","))
        }
    }

    /// Reads an algorithm from its spec (`halo_blocking`, `nonblocking:unpack=on_arrival`).
    pub fn parse(text: &str) -> Result<Algorithm, ScheduleError> {
        registry::parse::<Halo>(text.trim())
    }

    /// The accepted names, for errors and help.
    pub fn accepted() -> Vec<String> {
        registry::accepted::<Halo>()
    }

    /// The halo values the algorithm fills.
    pub fn stencil(&self) -> HaloStencil {
        match self {
            Algorithm::Reduced { .. } => HaloStencil::D3Q19,
            _ => HaloStencil::Full,
        }
    }

    fn overlap(&self) -> bool {
        match *self {
            Algorithm::Blocking => false,
            Algorithm::Nonblocking { overlap, .. } | Algorithm::Reduced { overlap } => overlap,
        }
    }
}

crate::name_display::display_by_name!(Algorithm);

/// The `overlap` key of the non-blocking exchanges.
pub(crate) const OVERLAP_KEY: Key = Key::new(
    "overlap",
    "on: with a kernel time per site, compute the interior sites between posting the messages \
     and waiting for them, the boundary shell after; off (default): every site after the \
     exchange",
);

pub(crate) fn overlap_key(spec: &Spec) -> Result<bool, ScheduleError> {
    Ok(spec
        .value("overlap", |v| OVERLAPS.read(v))?
        .unwrap_or(false))
}

/// Default values per site (D3Q19).
pub const DEFAULT_VALUES: u32 = 19;
/// Default element type (8-byte values).
pub const DEFAULT_DTYPE: Dtype = Dtype::Float64;

/// What a halo exchange is asked to do: the decomposition, the values per site and their type,
/// and the kernel time per site for schedules that also compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HaloProblem {
    /// The decomposition.
    pub decomp: Decomposition,
    /// Values per site (19 for D3Q19).
    pub values: u32,
    /// Type of a value.
    pub dtype: Dtype,
    /// Compute time per lattice site update (0: the schedule only exchanges).
    pub kernel: Time,
}

impl HaloProblem {
    /// A problem with the default values (19 float64 per site) and no kernel.
    pub fn new(decomp: Decomposition) -> HaloProblem {
        HaloProblem {
            decomp,
            values: DEFAULT_VALUES,
            dtype: DEFAULT_DTYPE,
            kernel: 0,
        }
    }

    /// The element type of `bytes`-byte values: 8 float64, 4 float32, 2 int16, 1 uint8.
    pub fn dtype_of_bytes(bytes: u64) -> Result<Dtype, ScheduleError> {
        match bytes {
            8 => Ok(Dtype::Float64),
            4 => Ok(Dtype::Float32),
            2 => Ok(Dtype::Int16),
            1 => Ok(Dtype::Uint8),
            _ => Err(ScheduleError::BadParameter {
                name: "bytes".into(),
                value: bytes.to_string(),
                reason: "bytes per value; accepted: 1, 2, 4, 8".into(),
            }),
        }
    }

    /// The halo exchange `alg` performs on this problem.
    pub fn spec(&self, alg: &Algorithm) -> Result<HaloSpec, ScheduleError> {
        HaloSpec::new(self.decomp, self.values, alg.stencil())
    }
}

/// What preparing a problem yields: the halo exchange.
#[derive(Clone, Copy, Debug)]
pub struct Prepared {
    /// The exchange.
    pub spec: HaloSpec,
    /// Whether the interior is computed between start and end.
    pub overlap: bool,
    /// When the non-blocking exchange unpacks.
    pub unpack: Unpack,
}

impl Family for Halo {
    registry::family_items!(Halo, "halo", problem: HaloProblem);

    fn nranks(problem: &HaloProblem) -> u32 {
        problem.decomp.nranks()
    }

    fn validate(problem: &HaloProblem) -> Result<(), ScheduleError> {
        Decomposition::new(
            problem.decomp.lattice,
            problem.decomp.dims,
            problem.decomp.periodic,
        )?;
        ScheduleError::refuse_byte(
            problem.dtype,
            "a halo exchange moves typed values; accepted: float64, float32, int16, \
             uint8 (bytes 8, 4, 2, 1)",
        )?;
        HaloSpec::new(problem.decomp, problem.values, HaloStencil::Full).map(|_| ())
    }

    fn meta(alg: &Algorithm, problem: &HaloProblem) -> Meta {
        let spec = problem
            .spec(alg)
            .expect("prepare checked the problem for the algorithm");
        Meta::halo(spec, problem.dtype, format!("halo {}", alg.name()))
    }
}

/// Prepares any halo algorithm: its exchange must be valid for the problem.
pub(crate) fn prepare(
    alg: &Algorithm,
    problem: &HaloProblem,
    _: &Context<'_>,
) -> Result<Prepared, ScheduleError> {
    Ok(Prepared {
        spec: problem.spec(alg)?,
        overlap: alg.overlap(),
        unpack: match alg {
            Algorithm::Nonblocking { unpack, .. } => *unpack,
            _ => Unpack::AtEnd,
        },
    })
}

registry::entry_points!(Halo, HaloProblem);

/// The negated direction.
pub const fn opposite(d: [i8; 3]) -> [i8; 3] {
    [-d[0], -d[1], -d[2]]
}

/// The tag of a message travelling in direction `d` (from its sender).
pub fn tag(d: [i8; 3]) -> i32 {
    direction_index(d) as i32
}

/// One message of an exchange posted at once (non-blocking, reduced): the box sent towards
/// `dir` and the one received from `-dir`'s opposite side, with their scratch slices.
struct Message {
    dir: [i8; 3],
    peer: Rank,
    region: Region,
    buf: Slice,
}

/// The messages rank `rank` sends (towards each direction with a neighbour and values to
/// send) and receives (from each such direction), with their buffers laid out one after the
/// other in `scratch 0` (sends) and `scratch 1` (receives), in [`DIRECTIONS`] order.
/// `mask(d)`: the values of the receiver's halo at direction `d` the exchange fills.
fn messages(
    spec: &HaloSpec,
    rank: Rank,
    mask: impl Fn([i8; 3]) -> u64,
) -> (Vec<Message>, Vec<Message>) {
    let (mut sends, mut recvs) = (Vec::new(), Vec::new());
    for d in DIRECTIONS {
        // send towards d: the receiver's halo at -d takes mask(-d)
        push_message(&mut sends, spec, rank, d, false, mask(opposite(d)));
        push_message(&mut recvs, spec, rank, d, true, mask(d));
    }
    (sends, recvs)
}

/// Appends to `list` the message `rank` sends towards `d` (`recv`: receives from `d`) with
/// the halo values `m`, if there are any and `rank` has a neighbour there; its buffer follows
/// the list's last one in `scratch 0` (sends) or `scratch 1` (receives).
fn push_message(
    list: &mut Vec<Message>,
    spec: &HaloSpec,
    rank: Rank,
    d: [i8; 3],
    recv: bool,
    m: u64,
) {
    if m == 0 {
        return;
    }
    if let Some(peer) = spec.decomp.neighbour(rank, d) {
        let region = spec.region(rank, Slot::Output, d, recv, m);
        let at = list.last().map_or(0, |x| x.buf.offset + x.buf.len);
        let buf = Slice::new(Slot::Scratch(recv as u16), at, region.len());
        list.push(Message {
            dir: d,
            peer,
            region,
            buf,
        });
    }
}

/// Writes the exchange that posts every message at once, as the seed's
/// `lb_halo_via_copy_nonblocking_start` does for planes, then edges, then corners: post the
/// group's receives, pack its buffers one after the other, post its sends one after the other
/// as soon as the buffers are filled; then (`end`) wait for every receive and unpack the
/// buffers one after the other (or each as its receive completes), and the sends complete. With
/// a kernel, the computes around it.
pub(crate) fn build_posted(
    p: &Prepared,
    problem: &HaloProblem,
    rank: Rank,
    out: &mut Program,
    mask: impl Fn([i8; 3]) -> u64,
    unpack: Unpack,
) {
    let spec = &p.spec;
    let (sends, recvs) = messages(spec, rank, mask);
    let mut recv_ops = Vec::with_capacity(recvs.len());
    let mut send_ops = Vec::with_capacity(sends.len());
    let mut last_pack: Option<OpId> = None;
    let mut last_send: Option<OpId> = None;
    for group in 1..=3 {
        let started = last_send;
        for m in recvs.iter().filter(|m| order(m.dir) == group) {
            // the message travelled in direction -d from the neighbour at d
            let r = out.recv(m.peer, tag(opposite(m.dir)), m.buf);
            if let Some(s) = started {
                out.irequires(r, s);
            }
            recv_ops.push(r);
        }
        let group_sends: Vec<&Message> = sends.iter().filter(|m| order(m.dir) == group).collect();
        let mut prev: Option<OpId> = None;
        for m in &group_sends {
            let pk = out.pack(m.region, m.buf);
            match (prev, started) {
                (Some(q), _) => out.requires(pk, q),
                (None, Some(s)) => out.irequires(pk, s),
                (None, None) => {}
            }
            prev = Some(pk);
        }
        last_pack = prev.or(last_pack);
        let mut prev_send: Option<OpId> = None;
        for m in &group_sends {
            let s = out.send(m.peer, tag(m.dir), m.buf);
            match prev_send {
                None => out.requires(s, prev.expect("a group with sends has packs")),
                Some(q) => out.irequires(s, q),
            }
            prev_send = Some(s);
            send_ops.push(s);
        }
        last_send = prev_send.or(last_send);
    }
    let interior = if p.overlap && problem.kernel > 0 {
        let c = out.compute(problem.kernel * interior_sites(spec, rank));
        if let Some(pk) = last_pack {
            out.requires(c, pk);
        }
        for &x in send_ops.iter().chain(&recv_ops) {
            out.irequires(c, x);
        }
        Some(c)
    } else {
        None
    };
    let mut unpacks: Vec<OpId> = Vec::with_capacity(recvs.len());
    // Unpacks in the order the receives were posted (planes, edges, corners).
    let mut order_of: Vec<usize> = (0..recvs.len()).collect();
    order_of.sort_by_key(|&k| order(recvs[k].dir));
    let posted: Vec<(&Message, OpId)> = order_of
        .iter()
        .zip(&recv_ops)
        .map(|(&k, &r)| (&recvs[k], r))
        .collect();
    for (m, r) in posted {
        let u = out.unpack(m.buf, m.region);
        match (unpack, unpacks.last()) {
            (Unpack::OnArrival, _) => out.requires(u, r),
            // One wait for every receive (the seed's MPI_Waitany loop), then the unpacks one
            // after the other (the CPU runs them in order anyway; a chain keeps the
            // dependencies linear in the messages).
            (Unpack::AtEnd, None) => out.requires_all(u, &recv_ops),
            (Unpack::AtEnd, Some(&prev)) => out.requires(u, prev),
        }
        if let Some(c) = interior {
            out.requires(u, c);
        }
        unpacks.push(u);
    }
    finish_compute(p, problem, rank, out, interior, &unpacks, &send_ops);
}

/// Sites of `rank`'s subdomain that need no halo data (at least one site from every face).
pub fn interior_sites(spec: &HaloSpec, rank: Rank) -> u64 {
    spec.decomp
        .subdomain(rank)
        .iter()
        .map(|&n| n.saturating_sub(2) as u64)
        .product()
}

/// Sites of `rank`'s subdomain.
pub fn sites(spec: &HaloSpec, rank: Rank) -> u64 {
    spec.decomp
        .subdomain(rank)
        .iter()
        .map(|&n| n as u64)
        .product()
}

/// With a kernel: the compute after the exchange (every site, or the boundary shell after the
/// interior computed during it), after every unpack and send.
fn finish_compute(
    p: &Prepared,
    problem: &HaloProblem,
    rank: Rank,
    out: &mut Program,
    interior: Option<OpId>,
    last: &[OpId],
    sends: &[OpId],
) {
    if problem.kernel == 0 {
        return;
    }
    let all = sites(&p.spec, rank);
    let n = match interior {
        Some(_) => all - interior_sites(&p.spec, rank),
        None => all,
    };
    let c = out.compute(problem.kernel * n);
    out.requires_all(c, last);
    out.requires_all(c, sends);
    if let Some(i) = interior {
        out.requires(c, i);
    }
}

#[cfg(test)]
mod tests;
