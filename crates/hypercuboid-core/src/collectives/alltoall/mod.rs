//! Alltoall algorithms (personalised all-to-all exchange, `MPI_Alltoall`): per-rank schedules.
//!
//! Rank `i`'s `input` holds `N` blocks of `count` elements, block `j` for rank `j`; every rank
//! `j`'s `output` ends with rank `i`'s block `j` at block position `i`. The schedule's metadata
//! is [`Meta::alltoall`]: [`crate::schedule::Collective::Alltoall`] carries the block (`count`
//! here, MPI's `sendcount`) and both buffers have `N × count` elements. The verifier checks
//! every output element symbolically: rank `j`'s element `i·count + e` must be exactly rank
//! `i`'s input element `j·count + e`.
//!
//! Every generator builds the program of **one rank alone** in time proportional to that
//! rank's own ops ([`program`]); [`generate`] builds all ranks.
//!
//! # What every generated schedule guarantees
//! - `Slot::Input` is only read. The rank's own block is a local `copy` (MPI libraries copy it
//!   too, or send it to themselves), issued first with no dependencies.
//! - `nranks = 1`: that one copy. `count = 0`: no ops at all.
//! - Sound with every send synchronous (`eager_limit = 0`): matched, deadlock-free, race-free,
//!   and the data check above (`tests/integration/alltoall_verified.rs`, every N in 1..=128).
//! - Messages between one pair of ranks never share a tag while both can be in flight: the
//!   linear algorithms send one message per pair (tag 0), the Bruck algorithms tag each step.
//!
//! # The algorithms and where they come from
//! | name | from |
//! |---|---|
//! | `linear` | LAM/MPI: post every receive and send, wait for all |
//! | `linear_shifted` (`scattered`) | MPICH's medium-message algorithm, in blocks of `block` requests |
//! | `pairwise` | MPICH's long-message algorithm: XOR partners for N a power of two, else rank ± i |
//! | `bruck`, `k_bruck:k=K` | MPICH's short-message Bruck algorithm and its radix-k form (`k_brucks`) |
//! | `linear_sync` | Open MPI's linear algorithm with at most `max` requests outstanding |
//! | `scheduled` | Faraj and Yuan's contention-free phases of a topology, kept apart by [`sync`] |
//!
//! `scheduled` needs the machine: its spec names the topology (`topo=tree:fig1`), or a caller
//! passes it (and the rank → machine mapping) in the [`Context`]; its `prepare` builds the
//! phase table, the synchronisations and every rank's steps once ([`Prepared::Scheduled`]).
//! The phase tables themselves (the Faraj–Yuan scheduler for trees, a heuristic elsewhere, and
//! their checks) are in [`phases`]; the `MPI_Alltoall` routine generator is [`routine`].

pub mod bruck;
pub mod cost;
pub mod linear;
pub mod linear_shifted;
pub mod linear_sync;
pub mod pairwise;
pub mod phases;
pub mod routine;
pub mod scheduled;
pub mod sync;

use super::registry::{self, Context, Entry, Family};
use crate::schedule::{Dtype, Meta, Program, Rank, ScheduleError, Slice, Slot};
use std::borrow::Cow;

/// The alltoall collective: its algorithms ([`ALGORITHMS`], one [`Entry`] each), its problem
/// ([`AlltoallSpec`]) and its schedules' metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alltoall;

/// Every alltoall algorithm, in the order lists and errors give them.
pub static ALGORITHMS: &[&Entry<Alltoall>] = &[
    &linear::ENTRY,
    &linear_shifted::ENTRY,
    &pairwise::ENTRY,
    &bruck::ENTRY,
    &bruck::K_ENTRY,
    &linear_sync::ENTRY,
    &scheduled::ENTRY,
];

/// An alltoall algorithm with its parameters. [`Algorithm::parse`] reads the specs users type
/// (through the entries of [`ALGORITHMS`]) and [`Algorithm::name`] prints them back.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// `linear`: LAM/MPI's algorithm; see [`linear`].
    Linear,
    /// `linear_shifted:block=B` (MPICH's `scattered`): see [`linear_shifted`].
    LinearShifted {
        /// Peers per block of posted requests (MPICH's `MPIR_CVAR_ALLTOALL_THROTTLE`).
        block: u32,
    },
    /// `pairwise`: MPICH's pairwise exchange; see [`pairwise`].
    Pairwise,
    /// `bruck`: MPICH's Bruck algorithm (radix 2); see [`bruck`].
    Bruck,
    /// `k_bruck:k=K`: the radix-k Bruck algorithm; see [`bruck`].
    KBruck {
        /// The radix, 2 ..= [`bruck::MAX_K`].
        k: u32,
    },
    /// `linear_sync:max=M`: Open MPI's linear algorithm with at most `max` receives and `max`
    /// sends outstanding; see [`linear_sync`].
    LinearSync {
        /// Requests outstanding in each direction.
        max: u32,
    },
    /// `scheduled:topo=SPEC,sync=S,mapping=FILE`: the contention-free phases of the topology
    /// the ranks run on; see [`scheduled`].
    Scheduled {
        /// The topology spec (`None`: the caller's [`Context`] gives it).
        topo: Option<String>,
        /// How the phases are kept apart.
        sync: sync::Sync,
        /// A file with the machine of every rank (`None`: linear, or the caller's).
        mapping: Option<String>,
    },
}

impl Algorithm {
    /// The algorithm's entry in [`ALGORITHMS`].
    pub fn entry(&self) -> &'static Entry<Alltoall> {
        match self {
            Algorithm::Linear => &linear::ENTRY,
            Algorithm::LinearShifted { .. } => &linear_shifted::ENTRY,
            Algorithm::Pairwise => &pairwise::ENTRY,
            Algorithm::Bruck => &bruck::ENTRY,
            Algorithm::KBruck { .. } => &bruck::K_ENTRY,
            Algorithm::LinearSync { .. } => &linear_sync::ENTRY,
            Algorithm::Scheduled { .. } => &scheduled::ENTRY,
        }
    }

    /// The spec users type, which [`Algorithm::parse`] reads back to the same algorithm
    /// (`linear_shifted:block=32`, `k_bruck:k=4`).
    pub fn name(&self) -> Cow<'static, str> {
        let base = self.entry().form.name;
        match self {
            Algorithm::LinearShifted { block } => format!("{base}:block={block}").into(),
            Algorithm::KBruck { k } => format!("{base}:k={k}").into(),
            Algorithm::LinearSync { max } => format!("{base}:max={max}").into(),
            Algorithm::Scheduled {
                topo,
                sync,
                mapping,
            } => {
                let mut items = Vec::new();
                if let Some(t) = topo {
                    items.push(format!("topo={}", t.replace(',', ";")));
                }
                items.push(format!("sync={}", sync.name()));
                if let Some(m) = mapping {
                    items.push(format!("mapping={m}"));
                }
                format!("{base}:{}", items.join(",")).into()
            }
            _ => base.into(),
        }
    }

    /// Parses a spec: an entry of [`ALGORITHMS`] by name or alias, with its parameters
    /// (`pairwise`, `scattered:block=8`, `k_bruck:k=4`).
    pub fn parse(text: &str) -> Result<Algorithm, ScheduleError> {
        registry::parse::<Alltoall>(text.trim())
    }

    /// The names users type, in the order of [`ALGORITHMS`].
    pub fn accepted() -> Vec<String> {
        registry::accepted::<Alltoall>()
    }
}

crate::name_display::display_by_name!(Algorithm);

/// What building an alltoall needs beyond its spec, once per problem. A topology-aware entry
/// adds its own variant (a phase table).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Prepared {
    /// Nothing: the program follows from the spec alone.
    Plain,
    /// The algorithm's one parameter, checked: `linear_shifted`'s block, the Bruck radix,
    /// `linear_sync`'s window.
    Param(u32),
    /// `scheduled`'s phases, synchronisations and every rank's steps.
    Scheduled(std::sync::Arc<scheduled::Plan>),
}

impl Family for Alltoall {
    registry::family_items!(Alltoall, "alltoall", problem: AlltoallSpec, delegated);
}

/// [`Entry::prepare`] of the algorithms that need nothing beyond the spec.
fn plain(_: &Algorithm, _: &AlltoallSpec, _: &Context<'_>) -> Result<Prepared, ScheduleError> {
    Ok(Prepared::Plain)
}

/// The element count per rank pair a caller that names none gets (one element: latency).
pub const DEFAULT_COUNT: u64 = 1;
/// The element type a caller that names none gets.
pub const DEFAULT_DTYPE: Dtype = Dtype::Float64;

/// What an alltoall works on: `nranks` ranks, each sending `count` elements of `dtype` to every
/// rank (itself included).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AlltoallSpec {
    /// Number of ranks (1 ..= [`MAX_RANKS`]).
    pub nranks: u32,
    /// Elements each rank sends to each rank (MPI's `sendcount`; 0 is legal: no ops).
    pub count: u64,
    /// Element type (any numeric dtype; not the opaque `byte`: use `uint8`).
    pub dtype: Dtype,
}

impl AlltoallSpec {
    /// A spec; see [`AlltoallSpec::validate`] for what is accepted.
    pub const fn new(nranks: u32, count: u64, dtype: Dtype) -> AlltoallSpec {
        AlltoallSpec {
            nranks,
            count,
            dtype,
        }
    }

    /// Elements of each rank's input and output buffers (`nranks × count`), if they fit.
    pub fn buffer_len(&self) -> Option<u64> {
        self.count.checked_mul(self.nranks as u64)
    }

    /// Checks that the spec can be generated: 1 ..= [`MAX_RANKS`] ranks, buffers of
    /// `nranks × count` elements whose byte size fits in a `u64`, and a numeric dtype.
    pub fn validate(&self) -> Result<(), ScheduleError> {
        ScheduleError::check_nranks(self.nranks as u64, "an alltoall")?;
        ScheduleError::refuse_byte(
            self.dtype,
            "an alltoall moves typed elements (byte marks size-only schedules); \
             accepted: int8, int16, int32, int64, uint8, uint16, uint32, uint64, \
             float32, float64 (uint8 for bytes)",
        )?;
        let bytes = self
            .buffer_len()
            .and_then(|e| e.checked_mul(self.dtype.size() as u64));
        if bytes.is_none() {
            return Err(ScheduleError::BadParameter {
                name: "count".into(),
                value: self.count.to_string(),
                reason: format!(
                    "{} ranks x {} elements of {} ({} bytes each) exceed 2^64 - 1 bytes",
                    self.nranks,
                    self.count,
                    self.dtype,
                    self.dtype.size()
                ),
            });
        }
        Ok(())
    }

    /// The schedule metadata of `alg` on this (valid) spec.
    pub fn meta(&self, alg: &Algorithm) -> Meta {
        Meta::alltoall(
            self.nranks,
            self.count,
            self.dtype,
            format!("alltoall {}", alg.name()),
        )
        .expect("a validated spec's buffers fit in a u64")
    }

    /// Block `b` (the one for or from rank `b`) of `slot`.
    fn block(&self, slot: Slot, b: u32) -> Slice {
        Slice::new(slot, b as u64 * self.count, self.count)
    }

    /// Blocks `lo .. lo + len` of `slot`, contiguous.
    fn blocks(&self, slot: Slot, lo: u32, len: u32) -> Slice {
        Slice::new(slot, lo as u64 * self.count, len as u64 * self.count)
    }
}

/// Builds rank `rank`'s program with `f` after the copy of its own block, unless the problem
/// is trivial: `count = 0` has no ops, one rank has only the copy.
fn with_own_copy(
    spec: &AlltoallSpec,
    rank: Rank,
    out: &mut Program,
    f: impl FnOnce(&AlltoallSpec, Rank, &mut Program),
) {
    if spec.count == 0 {
        return;
    }
    out.copy(
        spec.block(Slot::Input, rank),
        spec.block(Slot::Output, rank),
    );
    if spec.nranks > 1 {
        f(spec, rank, out)
    }
}

/// `(r + d) mod n` for `d` in `-n ..= n`.
fn shift(r: Rank, d: i64, n: u32) -> Rank {
    (r as i64 + d).rem_euclid(n as i64) as Rank
}

registry::entry_points!(Alltoall, AlltoallSpec);

/// Reads a whole-number key `key` of `spec` in `lo ..= hi`, or `default`.
fn whole_key(
    spec: &crate::spec::Spec,
    key: &str,
    lo: u32,
    hi: u32,
    default: u32,
) -> Result<u32, ScheduleError> {
    Ok(spec
        .value(key, |v| {
            let x: u32 = v.parse().map_err(|_| "not a whole number".to_string())?;
            if (lo..=hi).contains(&x) {
                Ok(x)
            } else {
                Err(format!("{key} is {lo} ..= {hi}"))
            }
        })?
        .unwrap_or(default))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for text in [
            "linear",
            "linear_shifted:block=32",
            "pairwise",
            "bruck",
            "k_bruck:k=4",
            "linear_sync:max=8",
            "scheduled:topo=tree:fig1,sync=pairwise-reduced",
            "scheduled:topo=fattree:k=4;levels=2,sync=none,mapping=m.txt",
            "scheduled:sync=barrier",
        ] {
            let a = Algorithm::parse(text).unwrap();
            assert_eq!(a.name(), text);
            assert_eq!(Algorithm::parse(&a.name()).unwrap(), a);
        }
        assert_eq!(
            Algorithm::parse("scattered").unwrap(),
            Algorithm::LinearShifted { block: 32 }
        );
        assert_eq!(
            Algorithm::parse("k_bruck").unwrap(),
            Algorithm::KBruck { k: 2 }
        );
    }

    #[test]
    fn shifts_wrap() {
        assert_eq!(shift(0, -1, 5), 4);
        assert_eq!(shift(4, 1, 5), 0);
        assert_eq!(shift(2, 5, 5), 2);
        assert_eq!(shift(2, -5, 5), 2);
    }
}
