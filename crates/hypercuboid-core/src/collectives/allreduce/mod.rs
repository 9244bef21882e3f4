//! Allreduce algorithms: per-rank schedules and their closed-form costs.
//!
//! Every generator builds the program of **one rank alone** in time proportional to that rank's
//! own ops ([`program`]), so that an MPI back end can build only its own rank; [`generate`]
//! builds all ranks into a [`Schedule`] by calling it once per rank with one reused [`Program`].
//!
//! # What every generated schedule guarantees
//! - `Slot::Input` is only read; it holds the rank's contribution. The result ends in
//!   `Slot::Output` on every rank. Temporaries live in `Slot::Scratch(k)`.
//! - `nranks = 1`: one copy of the input to the output. `count = 0`: no ops at all.
//! - Reductions are fused receive-reduces where the destination already holds the rank's running
//!   value. Where it does not yet (the first reduction into a fresh output), the message is
//!   received into the output and the rank's input is reduced into it by a separate `reduce` op;
//!   this costs the same op count as an initial copy plus a fused receive, but moves no extra
//!   data and puts no copy on the critical path.
//! - No buffer is written while a send reading it is in flight (the writer `requires` the send),
//!   and no buffer is read before the receive writing it completes. Receives are posted as soon
//!   as their buffer allows, independently of the rank's sends.
//! - Tags differ between the steps and phases of an algorithm, so no two messages that can be in
//!   flight at once on one `(source, destination)` channel share a tag. Each module documents its
//!   tags. Tags wrap modulo 2^31 only past 2^31 steps (a ring of more than 2^30 ranks).
//! - Operand order: lower ranks' contributions are kept on the left wherever the algorithm
//!   allows it, so that every rank computes the same expression. Verified for every N ≤ 256
//!   (`tests/integration/allreduce_verified.rs`, `tests/integration/allreduce_rm_verified.rs`):
//!
//!   | algorithm | identical bits on every rank | rank order (non-commutative op) |
//!   |---|---|---|
//!   | `tree`, `recursive_doubling`, `rabenseifner` | yes | yes |
//!   | `recursive_multiplying:…` (every enumerated schedule) | yes | yes |
//!   | `ring` | yes | a rotation of rank order per chunk |
//!   | `elimination` | yes | only for a power of two and N = 3 |
//!   | `mpich_recursive_multiplying:k=K` | yes | only for N a power of K (MPICH's own order) |
//!   | `ring_rotate` | only for N ≤ 2 | no (the coursework's per-rank rotation) |
//!
//!   See each module. Pinning the order costs storage in `recursive_doubling`: which side of
//!   each exchange a rank is on is part of its program, so its ranks share no program shape
//!   (the schedule's shape sharing keys on everything but peers).
//!
//! Costs: [`cost`] has the closed forms and the model under which the simulator must equal them.

pub mod cost;
pub mod elimination;
pub mod mpich_recursive_multiplying;
pub mod rabenseifner;
pub mod recursive_doubling;
pub mod recursive_multiplying;
pub mod ring;
pub mod ring_rotate;
pub mod tree;

pub use recursive_multiplying::{ScheduleString, ScheduleStringError, Stage};

use super::registry::{self, ClassDecl, Context, Entry, Family, Guarantee, Property, RankClasses};
use crate::schedule::{Dtype, Meta, PeerRule, Program, Rank, ReduceOp, ScheduleError, Slice, Slot};
use std::borrow::Cow;

/// The allreduce collective: its algorithms ([`ALGORITHMS`], one [`Entry`] each), its
/// problem ([`AllreduceSpec`]) and its schedules' metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allreduce;

/// Declares the algorithms from one list: each line is an algorithm's module (its file here,
/// which holds its `ENTRY`) and its variant of [`Algorithm`] with the variant's doc. The enum,
/// [`ALGORITHMS`] (in the list's order) and [`Algorithm::entry`] all come from the list, so an
/// algorithm is added by its file, its `pub mod` line and one line of the list.
macro_rules! algorithms {
    ($(
        $(#[$doc:meta])*
        $module:ident => $variant:ident
            $(($($tuple:ty),*))?
            $({$($(#[$fdoc:meta])* $field:ident: $fty:ty),* $(,)?})?
    ),* $(,)?) => {
        /// Every allreduce algorithm, in the order lists and errors give them.
        pub static ALGORITHMS: &[&Entry<Allreduce>] = &[$(&$module::ENTRY),*];

        /// An allreduce algorithm with its parameters. [`Algorithm::parse`] reads the specs
        /// users type (through the entries of [`ALGORITHMS`]) and [`Algorithm::name`] prints
        /// them back.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Algorithm {
            $(
                $(#[$doc])*
                $variant $(($($tuple),*))? $({$($(#[$fdoc])* $field: $fty),*})?,
            )*
        }

        impl Algorithm {
            /// The algorithm's entry in [`ALGORITHMS`].
            pub fn entry(&self) -> &'static Entry<Allreduce> {
                match self {
                    $(Algorithm::$variant { .. } => &$module::ENTRY,)*
                }
            }
        }
    };
}

algorithms! {
    /// `ring_rotate`: the coursework's ring (its Alg. 1): P − 1 rounds, each passing the whole
    /// running vector to the next rank, which reduces its own input into it.
    ring_rotate => RingRotate,
    /// `ring`: reduce-scatter then allgather around the ring, in chunks of count / P (the
    /// bandwidth-optimal ring of MPICH and NCCL).
    ring => Ring,
    /// `tree`: binomial-tree reduce to rank 0, then binomial broadcast (the coursework's Alg. 2,
    /// for any P).
    tree => Tree,
    /// `recursive_doubling`: pairwise exchange with MPICH's collapse/expand fix for a
    /// non-power-of-two P (Ruefenacht et al., Algorithm 1).
    recursive_doubling => RecursiveDoubling,
    /// `rabenseifner`: reduce-scatter by recursive halving, allgather by recursive doubling,
    /// MPICH's fold for a non-power of two; see [`rabenseifner`].
    rabenseifner => Rabenseifner,
    /// `elimination`: recursive doubling reached by Rabenseifner–Träff 3-2 and 2-1 eliminations;
    /// see [`elimination`].
    elimination => Elimination,
    /// `recursive_multiplying:SCHEDULE` (or the bare schedule, e.g. `a8,a3,a4`): the mixed-radix
    /// recursive multiplying of Ruefenacht et al. with collapse/expand and merge stages; see
    /// [`recursive_multiplying`].
    recursive_multiplying => RecursiveMultiplying(ScheduleString),
    /// `mpich_recursive_multiplying:k=K` (default `k = 2`): MPICH's single-radix recursive
    /// multiplying; see [`mpich_recursive_multiplying`].
    mpich_recursive_multiplying => MpichRecursiveMultiplying {
        /// The radix, 2 ..= 65536.
        k: u32,
    },
}

impl Algorithm {
    /// The spec users type, which [`Algorithm::parse`] reads back to the same algorithm: the
    /// entry's name with the parameters (`mpich_recursive_multiplying:k=2`,
    /// `recursive_multiplying:a8,a3,a4`).
    pub fn name(&self) -> Cow<'static, str> {
        let base = self.entry().form.name;
        match self {
            Algorithm::RecursiveMultiplying(s) => format!("{base}:{s}").into(),
            Algorithm::MpichRecursiveMultiplying { k } => format!("{base}:k={k}").into(),
            _ => base.into(),
        }
    }

    /// Parses a spec: an entry of [`ALGORITHMS`] by name or alias, with its parameters
    /// (`ring`, `mpich_recursive_multiplying:k=4`, `recursive_multiplying:a8,a3,a4`). A bare
    /// schedule string (`a8,a3,a4`, `c6m2,a2,a2,e6m2`: a stage letter then a digit) is read as
    /// `recursive_multiplying` with it.
    pub fn parse(text: &str) -> Result<Algorithm, ScheduleError> {
        let t = text.trim();
        if recursive_multiplying::looks_like_schedule(t) {
            return Ok(Algorithm::RecursiveMultiplying(ScheduleString::parse(t)?));
        }
        registry::parse::<Allreduce>(t)
    }

    /// The names users type, with their positional arguments
    /// (`recursive_multiplying:SCHEDULE`), in the order of [`ALGORITHMS`].
    pub fn accepted() -> Vec<String> {
        registry::accepted::<Allreduce>()
    }
}

crate::name_display::display_by_name!(Algorithm);

/// What building an allreduce needs beyond its spec, once per problem.
#[derive(Clone, Debug)]
pub enum Prepared {
    /// Nothing: the program follows from the spec alone.
    Plain,
    /// MPICH's radix.
    Radix(u32),
    /// Recursive multiplying's plan for the number of ranks.
    Plan(recursive_multiplying::Plan),
}

impl Family for Allreduce {
    registry::family_items!(Allreduce, "allreduce", problem: AllreduceSpec, delegated);

    fn rank_classes(
        alg: &Algorithm,
        prepared: &Prepared,
        spec: &AllreduceSpec,
    ) -> Option<RankClasses> {
        if spec.count == 0 || spec.nranks < 2 {
            return None;
        }
        let n = spec.nranks;
        // One class of every rank (recursive doubling, radix-2 recursive multiplying on a
        // power of two: peers `rank XOR 2^k`), checked on ranks 0, N/2 and N − 1.
        let one = |rules: Vec<PeerRule>| RankClasses {
            class_of: Box::new(|_, out| out.fill(0)),
            classes: vec![ClassDecl {
                ranks: vec![0, n / 2, n - 1],
                rules,
            }],
        };
        match (alg, prepared) {
            (Algorithm::Tree, _) => Some(tree::classes(spec)),
            _ if !n.is_power_of_two() => None,
            (Algorithm::RecursiveDoubling, _) => Some(one(recursive_doubling::rules(n))),
            (Algorithm::RecursiveMultiplying(_), Prepared::Plan(plan)) => {
                recursive_multiplying::radix2_rules(plan).map(one)
            }
            _ => None,
        }
    }
}

/// The guarantees of an algorithm whose ranks all evaluate one expression, in rank order where
/// `rank_order` holds (`when` says where in words).
const fn one_expression(
    when: &'static str,
    rank_order: fn(&Algorithm, u32) -> bool,
) -> [Guarantee<Allreduce>; 3] {
    [
        Guarantee {
            property: Property::SameBitsCommutative,
            when: "always",
            holds: registry::always,
        },
        Guarantee {
            property: Property::SameExpression,
            when: "always",
            holds: registry::always,
        },
        Guarantee {
            property: Property::RankOrder,
            when,
            holds: rank_order,
        },
    ]
}

/// The guarantees of an algorithm whose ranks all evaluate `x₀ ⊕ x₁ ⊕ … ⊕ x_{N−1}`.
const IN_RANK_ORDER: [Guarantee<Allreduce>; 3] = one_expression("always", registry::always);

/// [`Entry::prepare`] of the algorithms that need nothing beyond the spec.
fn plain(_: &Algorithm, _: &AllreduceSpec, _: &Context<'_>) -> Result<Prepared, ScheduleError> {
    Ok(Prepared::Plain)
}

/// Builds rank `rank`'s program with `f`, unless the problem is trivial: `count = 0` has no
/// ops, one rank copies its input to its output.
fn unless_trivial(
    spec: &AllreduceSpec,
    rank: Rank,
    out: &mut Program,
    f: impl FnOnce(&AllreduceSpec, Rank, &mut Program),
) {
    if spec.count == 0 {
        return;
    }
    if spec.nranks == 1 {
        out.copy(
            whole(Slot::Input, spec.count),
            whole(Slot::Output, spec.count),
        );
        return;
    }
    f(spec, rank, out)
}

/// The element count a caller that names none gets (one element per rank: latency).
pub const DEFAULT_COUNT: u64 = 1;
/// The element type a caller that names none gets.
pub const DEFAULT_DTYPE: Dtype = Dtype::Float64;
/// The reduction operator a caller that names none gets.
pub const DEFAULT_OP: ReduceOp = ReduceOp::Sum;

/// What an allreduce works on: `nranks` ranks each contributing `count` elements of `dtype`,
/// combined with `op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AllreduceSpec {
    /// Number of ranks (1 ..= [`MAX_RANKS`]).
    pub nranks: u32,
    /// Elements in each rank's vector (0 is legal: no ops).
    pub count: u64,
    /// Element type (any numeric dtype; not the opaque `byte`).
    pub dtype: Dtype,
    /// Reduction operator.
    pub op: ReduceOp,
}

impl AllreduceSpec {
    /// A spec; see [`AllreduceSpec::validate`] for what is accepted.
    pub const fn new(nranks: u32, count: u64, dtype: Dtype, op: ReduceOp) -> AllreduceSpec {
        AllreduceSpec {
            nranks,
            count,
            dtype,
            op,
        }
    }

    /// Bytes of each rank's vector (`count × dtype size`), if it fits in a `u64`.
    pub fn bytes(&self) -> Option<u64> {
        self.count.checked_mul(self.dtype.size() as u64)
    }

    /// Checks that the spec can be generated: 1 ..= [`MAX_RANKS`] ranks, a vector whose byte size
    /// fits in a `u64`, and a numeric dtype (`byte` has no arithmetic to reduce with).
    pub fn validate(&self) -> Result<(), ScheduleError> {
        ScheduleError::check_nranks(self.nranks as u64, "an allreduce")?;
        ScheduleError::refuse_byte(
            self.dtype,
            "an allreduce needs a numeric dtype to reduce; accepted: int8, int16, \
             int32, int64, uint8, uint16, uint32, uint64, float32, float64",
        )?;
        if self.bytes().is_none() {
            return Err(ScheduleError::BadParameter {
                name: "count".into(),
                value: self.count.to_string(),
                reason: format!(
                    "{} elements of {} ({} bytes each) exceed 2^64 - 1 bytes",
                    self.count,
                    self.dtype,
                    self.dtype.size()
                ),
            });
        }
        Ok(())
    }

    /// The schedule metadata of `alg` on this spec.
    pub fn meta(&self, alg: &Algorithm) -> Meta {
        Meta::allreduce(
            self.count,
            self.dtype,
            self.op,
            format!("allreduce {}", alg.name()),
        )
    }
}

/// The block `i` of `count` elements split into `parts` blocks as evenly as possible:
/// `(offset, len)`. The first `count % parts` blocks have one element more than the others, so
/// sizes differ by at most one (count = 10, parts = 4: 3, 3, 2, 2). Requires `i < parts`.
pub fn block(count: u64, parts: u64, i: u64) -> (u64, u64) {
    debug_assert!(i < parts);
    let q = count / parts;
    let r = count % parts;
    let offset = i * q + i.min(r);
    let len = q + u64::from(i < r);
    (offset, len)
}

registry::entry_points!(Allreduce, AllreduceSpec);

/// All `count` elements of `slot`.
const fn whole(slot: Slot, count: u64) -> Slice {
    Slice::new(slot, 0, count)
}

/// A step index as a message tag: the index itself below 2^31, wrapped modulo 2^31 above (only
/// a ring of more than 2^30 ranks gets there; messages 2^31 steps apart are never in flight
/// together).
fn tag(step: u64) -> i32 {
    (step & (i32::MAX as u64)) as i32
}

/// ⌊log2 n⌋ for n ≥ 1.
const fn floor_log2(n: u32) -> u32 {
    31 - n.leading_zeros()
}

/// ⌈log2 n⌉ for n ≥ 1.
const fn ceil_log2(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs() {
        assert_eq!(floor_log2(1), 0);
        assert_eq!(floor_log2(6), 2);
        assert_eq!(floor_log2(8), 3);
        assert_eq!(floor_log2(u32::MAX), 31);
        assert_eq!(ceil_log2(1), 0);
        assert_eq!(ceil_log2(2), 1);
        assert_eq!(ceil_log2(6), 3);
        assert_eq!(ceil_log2(8), 3);
        assert_eq!(ceil_log2(u32::MAX), 32);
    }

    #[test]
    fn blocks_cover_the_vector() {
        for count in 0..40u64 {
            for parts in 1..12u64 {
                let mut next = 0;
                for i in 0..parts {
                    let (o, l) = block(count, parts, i);
                    assert_eq!(o, next);
                    assert!(l == count / parts || l == count / parts + 1);
                    next = o + l;
                }
                assert_eq!(next, count);
            }
        }
        let huge = u64::MAX;
        assert_eq!(block(huge, 3, 2), (2 * (huge / 3), huge / 3));
    }

    #[test]
    fn tags_wrap() {
        assert_eq!(tag(5), 5);
        assert_eq!(tag(i32::MAX as u64), i32::MAX);
        assert_eq!(tag(1 << 31), 0);
    }
}
