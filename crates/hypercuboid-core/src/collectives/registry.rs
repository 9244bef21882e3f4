//! The collective algorithms, one entry each.
//!
//! Every algorithm is one [`Entry`]: its names and parameters (a [`Form`] of the one spec
//! grammar, [`crate::spec`]), how its spec is read into the collective's typed algorithm, how it
//! is prepared for a problem and how each rank's program is built, its closed-form cost where
//! one exists, the guarantees its schedules make and the examples every test verifies. The
//! entry is the only place an algorithm is named: the parser, the accepted names in errors,
//! the Python binding and the CLI all read the tables ([`COLLECTIVES`] and each collective's
//! `ALGORITHMS`), so adding an algorithm is adding an entry.
//!
//! A collective ([`Family`]) brings the typed algorithm (an enum of the algorithms and their
//! parameters), the problem it works on (ranks, count, dtype, ...), what preparing a problem
//! yields for the rank builders, and the schedule metadata. An algorithm that needs more than
//! the problem (the alltoall scheduler needs the topology) reads it from the [`Context`], and
//! says so ([`Needs`]) so that a missing topology is a clear error.

use crate::schedule::{Meta, PeerRule, Program, Rank, RankClass, ScheduleBuilder, ScheduleError};
use crate::spec::{self, Form, Spec};
use crate::topology::Topology;
use crate::units::Time;

/// A collective and the types its algorithms work with.
pub trait Family: Sized + 'static {
    /// The collective's name (`allreduce`).
    const NAME: &'static str;
    /// What its specs are called in errors (`allreduce algorithm`).
    const WHAT: &'static str;
    /// An algorithm with its parameters.
    type Algorithm: Clone + std::fmt::Debug + PartialEq;
    /// What the algorithm is asked to do: ranks, count, dtype, ...
    type Problem;
    /// What preparing a problem yields for building each rank's program (a plan, nothing).
    type Prepared;
    /// The cost model of the collective's closed forms.
    type CostModel;
    /// The algorithms, in the order lists and errors give them.
    fn algorithms() -> &'static [&'static Entry<Self>];
    /// The number of ranks of a problem.
    fn nranks(problem: &Self::Problem) -> u32;
    /// Checks a problem before any algorithm sees it (rank count, dtype, sizes).
    fn validate(problem: &Self::Problem) -> Result<(), ScheduleError>;
    /// The entry of an algorithm.
    fn entry(alg: &Self::Algorithm) -> &'static Entry<Self>;
    /// The schedule metadata of `alg` on `problem`.
    fn meta(alg: &Self::Algorithm, problem: &Self::Problem) -> Meta;
    /// Classes of ranks that run one program each up to their peers, whose peers follow
    /// rules, for algorithms that know them ([`RankClasses`]); [`generate`] then builds one
    /// program per class, checks the class's other listed ranks against it and pushes every
    /// rank by its class ([`ScheduleBuilder::push_classes`]). `None` (the default): rank by
    /// rank.
    fn rank_classes(
        alg: &Self::Algorithm,
        prepared: &Self::Prepared,
        problem: &Self::Problem,
    ) -> Option<RankClasses> {
        let _ = (alg, prepared, problem);
        None
    }
}

/// [`RankClasses::class_of`]: writes the classes of ranks `first..first + out.len()` into
/// `out`.
pub type ClassFn = Box<dyn Fn(Rank, &mut [u32])>;

/// A partition of a problem's ranks into classes whose ranks run one program up to their
/// peers ([`Family::rank_classes`]).
pub struct RankClasses {
    /// The classes of ranks `first..first + out.len()` (indices into `classes`), written
    /// into `out` by `class_of(first, out)`: a cheap function, asked for blocks of ranks in
    /// rank order (one call per block keeps the call out of the per-rank loop).
    pub class_of: ClassFn,
    /// Each class's ranks to build (the first: the class's program) and to check against it
    /// (the others), and its rules: op `i` of a rank `r` of the class talks to
    /// `rules[i].apply(r, nranks)` (`Const(ANY_SOURCE)` for local ops). A class with no rank
    /// lists none.
    pub classes: Vec<ClassDecl>,
}

impl std::fmt::Debug for RankClasses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankClasses")
            .field("classes", &self.classes)
            .finish_non_exhaustive()
    }
}

/// One class of [`RankClasses`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassDecl {
    /// Ranks of the class: the first builds its program, the others are checked against it.
    pub ranks: Vec<Rank>,
    /// Each op's peer rule.
    pub rules: Vec<PeerRule>,
}

/// The [`Entry`] of an algorithm without parameters: its [`Form::named`] from its name and
/// summary, parsed to `$algorithm`, needing nothing beyond the problem, prepared by the
/// family's `plain` (in scope where it is used), built by `$build` behind the family's
/// `$guard` (which handles the trivial problems), with the closed-form cost
/// `$formula` computed by `$time`, its guarantees, and its name as its one example.
macro_rules! keyless_entry {
    (
        $name:literal => $algorithm:expr, build: $guard:ident($build:expr),
        summary: $summary:expr,
        cost: $formula:expr => $time:expr,
        guarantees: $guarantees:expr $(,)?
    ) => {
        $crate::collectives::registry::Entry {
            form: $crate::spec::Form::named($name, $summary),
            parse: |_| Ok($algorithm),
            needs: $crate::collectives::registry::Needs::Nothing,
            prepare: plain,
            build: |_, spec, rank, out| $guard(spec, rank, out, $build),
            cost: Some($crate::collectives::registry::Cost {
                formula: $formula,
                time: $time,
            }),
            guarantees: $guarantees,
            examples: &[$name],
        }
    };
}
pub(crate) use keyless_entry;

/// The `build` of an [`Entry`] whose `prepare` yields `$prepared`: takes the binding out of the
/// prepared value (any other variant is unreachable: the entry's own `prepare` made it) and
/// builds with `$build($arg, ..)` behind the family's `$guard`, which handles the trivial
/// problems.
macro_rules! prepared_build {
    ($prepared:pat => $guard:ident($build:ident, $arg:expr)) => {
        |p, spec, rank, out| {
            let $prepared = p else {
                unreachable!("prepared by prepare")
            };
            $guard(spec, rank, out, |spec, rank, out| {
                $build($arg, spec, rank, out)
            })
        }
    };
}
pub(crate) use prepared_build;

/// The items every [`Family`] impl spells the same way, inside `impl Family for $family`:
/// `NAME` and `WHAT` (`$name` and "`$name` algorithm"), the module's `Algorithm` and
/// `Prepared`, the postal cost model, the module's `ALGORITHMS` and each algorithm's own
/// `entry()`. With `problem: $problem` only the problem type; with `problem: $problem,
/// delegated` also `nranks`, `validate` and `meta` as the problem's own field and methods.
macro_rules! family_items {
    ($family:ty, $name:literal, problem: $problem:ty) => {
        const NAME: &'static str = $name;
        const WHAT: &'static str = concat!($name, " algorithm");
        type Algorithm = Algorithm;
        type Problem = $problem;
        type Prepared = Prepared;
        type CostModel = $crate::model::PostalModel;

        fn algorithms() -> &'static [&'static Entry<$family>] {
            ALGORITHMS
        }

        fn entry(alg: &Algorithm) -> &'static Entry<$family> {
            alg.entry()
        }
    };
    ($family:ty, $name:literal, problem: $problem:ty, delegated) => {
        $crate::collectives::registry::family_items!($family, $name, problem: $problem);

        fn nranks(problem: &$problem) -> u32 {
            problem.nranks
        }

        fn validate(problem: &$problem) -> Result<(), ScheduleError> {
            problem.validate()
        }

        fn meta(alg: &Algorithm, problem: &$problem) -> Meta {
            problem.meta(alg)
        }
    };
}
pub(crate) use family_items;

/// A family's module-level `program` and `generate`, for callers with no [`Context`] to give
/// (no topology): [`program`] and [`generate`] of `$family` on a `$problem`, with the module's
/// `Algorithm`.
macro_rules! entry_points {
    ($family:ty, $problem:ty) => {
        /// The program of rank `rank` alone, written into `out` (cleared first), in time
        /// proportional to its own ops, dependencies sorted
        /// ([`Program::normalize`](crate::schedule::Program::normalize)): equal to
        /// `generate(alg, problem)?.program(rank)`.
        pub fn program(
            alg: &Algorithm,
            problem: &$problem,
            rank: $crate::schedule::Rank,
            out: &mut $crate::schedule::Program,
        ) -> Result<(), $crate::schedule::ScheduleError> {
            $crate::collectives::registry::program::<$family>(
                alg,
                problem,
                &$crate::collectives::registry::Context::default(),
                rank,
                out,
            )
        }

        /// The schedule of every rank
        /// ([`registry::generate`](crate::collectives::registry::generate)).
        pub fn generate(
            alg: &Algorithm,
            problem: &$problem,
        ) -> Result<$crate::schedule::Schedule, $crate::schedule::ScheduleError> {
            $crate::collectives::registry::generate::<$family>(
                alg,
                problem,
                &$crate::collectives::registry::Context::default(),
            )
        }
    };
}
pub(crate) use entry_points;

/// What an algorithm needs beyond its problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing.
    Nothing,
    /// The topology the ranks run on (and their mapping onto its endpoints).
    Topology,
}

/// What the caller knows beyond the problem: the machine the schedule is for.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context<'a> {
    /// The topology the ranks run on.
    pub topology: Option<&'a Topology>,
    /// The endpoint of every rank (`None`: rank `r` on endpoint `r`).
    pub mapping: Option<&'a [u32]>,
}

/// A property of a generated schedule that the verifier decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    /// Every rank evaluates the same expression up to the order of the two operands of each
    /// `⊕`: bitwise-identical results for a commutative operator (a floating-point sum). The
    /// verifier's `same_order_commutative`.
    SameBitsCommutative,
    /// Every rank evaluates the same expression: identical results for any operator. The
    /// verifier's `same_order_noncommutative`.
    SameExpression,
    /// The expression is the reduction in rank order, `x₀ ⊕ x₁ ⊕ … ⊕ x_{N−1}`: right for a
    /// non-commutative operator. The verifier's `canonical_order`.
    RankOrder,
}

impl Property {
    /// Every property, in the order lists give them.
    pub const ALL: [Property; 3] = [
        Property::SameBitsCommutative,
        Property::SameExpression,
        Property::RankOrder,
    ];

    /// A short name (`same_bits`, `same_expression`, `rank_order`).
    pub const fn name(self) -> &'static str {
        match self {
            Property::SameBitsCommutative => "same_bits",
            Property::SameExpression => "same_expression",
            Property::RankOrder => "rank_order",
        }
    }
}

/// A promise an algorithm makes about its schedules: `property` holds for every schedule of
/// `N` ranks where `holds(algorithm, N)` (it may also hold elsewhere). Every schedule is also
/// sound: matched, deadlock-free with synchronous sends, race-free and correct.
pub struct Guarantee<F: Family> {
    /// The property.
    pub property: Property,
    /// When it holds, in words (`always`, `N ≤ 2`, `N a power of k`).
    pub when: &'static str,
    /// When it holds.
    pub holds: fn(&F::Algorithm, u32) -> bool,
}

impl<F: Family> std::fmt::Debug for Guarantee<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guarantee")
            .field("property", &self.property)
            .field("when", &self.when)
            .finish_non_exhaustive()
    }
}

/// [`Cost::time`]: the time of an algorithm on a problem under the model.
pub type CostFn<F> = fn(
    &<F as Family>::Algorithm,
    &<F as Family>::Problem,
    &<F as Family>::CostModel,
) -> Result<Time, ScheduleError>;

/// [`Entry::prepare`]: checks what an algorithm needs of a valid problem and prepares it.
pub type PrepareFn<F> = fn(
    &<F as Family>::Algorithm,
    &<F as Family>::Problem,
    &Context<'_>,
) -> Result<<F as Family>::Prepared, ScheduleError>;

/// A closed form of an algorithm's time.
pub struct Cost<F: Family> {
    /// The formula in words, and where it is exact.
    pub formula: &'static str,
    /// The time of the algorithm on a problem under the model; an error says why there is
    /// none for this problem.
    pub time: CostFn<F>,
}

impl<F: Family> std::fmt::Debug for Cost<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cost")
            .field("formula", &self.formula)
            .finish_non_exhaustive()
    }
}

/// One algorithm: everything that names, reads, builds and describes it.
pub struct Entry<F: Family> {
    /// Names, parameters (keys, positional argument), one line of summary and an example.
    pub form: Form,
    /// Reads the algorithm from a spec checked against `form`.
    pub parse: fn(&Spec) -> Result<F::Algorithm, ScheduleError>,
    /// What it needs beyond the problem.
    pub needs: Needs,
    /// Checks what the algorithm needs of a valid problem (a schedule string that fits, a
    /// radix in range, a topology) and prepares what every rank's program is built from.
    pub prepare: PrepareFn<F>,
    /// Writes the program of one rank of a valid, prepared problem into an empty program.
    pub build: fn(&F::Prepared, &F::Problem, Rank, &mut Program),
    /// The closed-form cost, if any.
    pub cost: Option<Cost<F>>,
    /// What its schedules guarantee.
    pub guarantees: &'static [Guarantee<F>],
    /// Specs of this algorithm that the tests generate and verify over many rank counts.
    pub examples: &'static [&'static str],
}

impl<F: Family> std::fmt::Debug for Entry<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("collective", &F::NAME)
            .field("form", &self.form)
            .field("needs", &self.needs)
            .field("cost", &self.cost.as_ref().map(|c| c.formula))
            .field(
                "guarantees",
                &self
                    .guarantees
                    .iter()
                    .map(|g| (g.property, g.when))
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl<F: Family> Entry<F> {
    /// When `property` is promised (`never` when it is not).
    pub fn when(&self, property: Property) -> &'static str {
        self.guarantees
            .iter()
            .find(|g| g.property == property)
            .map_or("never promised", |g| g.when)
    }

    /// Whether `property` is promised for `alg` on `nranks` ranks.
    pub fn promises(&self, property: Property, alg: &F::Algorithm, nranks: u32) -> bool {
        self.guarantees
            .iter()
            .any(|g| g.property == property && (g.holds)(alg, nranks))
    }
}

/// `always`, for [`Guarantee::holds`].
pub fn always<A>(_: &A, _: u32) -> bool {
    true
}

/// The forms of a collective's algorithms.
pub fn forms<F: Family>() -> Vec<&'static Form> {
    F::algorithms().iter().map(|e| &e.form).collect()
}

/// The names a collective's algorithms accept, with their positional arguments
/// (`recursive_multiplying:SCHEDULE`), for errors and help.
pub fn accepted<F: Family>() -> Vec<String> {
    spec::accepted(F::algorithms(), |e| &e.form)
}

/// Reads an algorithm of collective `F` from its spec (`ring`,
/// `mpich_recursive_multiplying:k=4`, `recursive_multiplying:a8,a3,a4`).
pub fn parse<F: Family>(text: &str) -> Result<F::Algorithm, ScheduleError> {
    let (entry, spec) = spec::parse(F::WHAT, F::algorithms(), |e| &e.form, text)?;
    (entry.parse)(&spec)
}

/// Checks the problem and what `alg` needs, and prepares it.
pub fn prepare<F: Family>(
    alg: &F::Algorithm,
    problem: &F::Problem,
    ctx: &Context<'_>,
) -> Result<F::Prepared, ScheduleError> {
    F::validate(problem)?;
    let entry = F::entry(alg);
    if entry.needs == Needs::Topology && ctx.topology.is_none() {
        return Err(ScheduleError::BadParameter {
            name: F::WHAT.into(),
            value: entry.form.name.into(),
            reason: format!(
                "{} places the ranks' messages on the links of a topology: give the topology \
                 the ranks run on",
                entry.form.name
            ),
        });
    }
    (entry.prepare)(alg, problem, ctx)
}

/// The program of rank `rank` alone, written into `out` (cleared first), in time proportional
/// to its own ops, with its dependencies sorted ([`Program::normalize`]): equal to
/// `generate(..)?.program(rank)`.
pub fn program<F: Family>(
    alg: &F::Algorithm,
    problem: &F::Problem,
    ctx: &Context<'_>,
    rank: Rank,
    out: &mut Program,
) -> Result<(), ScheduleError> {
    F::validate(problem)?;
    let n = F::nranks(problem);
    if rank >= n {
        return Err(ScheduleError::BadParameter {
            name: "rank".into(),
            value: rank.to_string(),
            reason: format!("the {} has ranks 0..{n}", F::NAME),
        });
    }
    let prepared = prepare::<F>(alg, problem, ctx)?;
    out.clear();
    (F::entry(alg).build)(&prepared, problem, rank, out);
    out.normalize();
    Ok(())
}

/// The schedule of every rank: by classes where the family declares them and every listed
/// rank of every class runs its class's program ([`Family::rank_classes`],
/// [`ScheduleBuilder::push_classes`]), else one rank at a time into a [`ScheduleBuilder`] with
/// one reused [`Program`]. Both give the same schedule.
pub fn generate<F: Family>(
    alg: &F::Algorithm,
    problem: &F::Problem,
    ctx: &Context<'_>,
) -> Result<crate::schedule::Schedule, ScheduleError> {
    let prepared = prepare::<F>(alg, problem, ctx)?;
    let n = F::nranks(problem);
    let build = F::entry(alg).build;
    let what = || format!("the {} {} on {n} ranks", F::NAME, F::entry(alg).form.name);
    crate::resources::check(
        what,
        (n as u64).saturating_mul(crate::resources::SCHEDULE_BYTES_PER_RANK),
        WAY_OUT,
    )?;
    let mut builder = ScheduleBuilder::new(n as u64, F::meta(alg, problem))?;
    if let Some(rc) = F::rank_classes(alg, &prepared, problem) {
        if let Some((templates, index)) =
            class_templates(&rc, n, |r, p| build(&prepared, problem, r, p))
        {
            // The family's classes of a block of ranks, as indices into `templates`.
            let none = templates.len() as u32;
            // Where each class with ranks keeps its index (the others come after), the
            // family's classes need no mapping.
            let same = index
                .iter()
                .enumerate()
                .all(|(c, &i)| i as usize == c || i == none && c >= none as usize);
            let class_of = |first: Rank, out: &mut [u32]| {
                (rc.class_of)(first, out);
                if !same {
                    for c in out {
                        *c = index.get(*c as usize).copied().unwrap_or(none);
                    }
                }
            };
            builder.push_classes(&templates, class_of, n)?;
            return builder.finish();
        }
    }
    let mut p = Program::new();
    for rank in 0..n {
        p.clear();
        build(&prepared, problem, rank, &mut p);
        if rank == 0 {
            // Every rank has a program of its own: about as many ops as rank 0's each.
            let per_rank = (p.len() as u64).saturating_mul(crate::resources::SCHEDULE_BYTES_PER_OP);
            crate::resources::check(
                what,
                (n as u64).saturating_mul(
                    per_rank.saturating_add(crate::resources::SCHEDULE_BYTES_PER_RANK),
                ),
                WAY_OUT,
            )?;
        }
        if (rank as u64).is_multiple_of(crate::cancel::EVERY) {
            crate::cancel::check()?;
        }
        builder.push(&mut p)?;
    }
    builder.finish()
}

/// What a user can do about a schedule too large for the memory.
const WAY_OUT: &str = "generate fewer ranks";

/// The class of rank `r` in `rc`.
fn class_of(rc: &RankClasses, r: Rank) -> usize {
    let mut c = [0];
    (rc.class_of)(r, &mut c);
    c[0] as usize
}

/// The program of each class of `rc` that has ranks, built from its first listed rank, and
/// for each declared class its index among them (one past the last for a class without
/// ranks), if every listed rank is of its class and runs its class's program
/// ([`RankClass::admits`]); `None` if one does not.
fn class_templates(
    rc: &RankClasses,
    n: u32,
    mut build: impl FnMut(Rank, &mut Program),
) -> Option<(Vec<RankClass>, Vec<u32>)> {
    let mut templates = Vec::new();
    let mut index = Vec::with_capacity(rc.classes.len());
    let mut q = Program::new();
    for (c, decl) in rc.classes.iter().enumerate() {
        let Some(&first) = decl.ranks.first() else {
            index.push(u32::MAX);
            continue;
        };
        if decl.ranks.iter().any(|&r| r >= n) {
            return None;
        }
        let mut p = Program::new();
        build(first, &mut p);
        let class = RankClass::new(p, first, decl.rules.clone());
        let all = decl.ranks.iter().all(|&r| {
            class_of(rc, r) == c && {
                q.clear();
                build(r, &mut q);
                class.admits(&mut q, r, n)
            }
        });
        if !all {
            return None;
        }
        index.push(templates.len() as u32);
        templates.push(class);
    }
    let none = templates.len() as u32;
    for i in &mut index {
        if *i == u32::MAX {
            *i = none;
        }
    }
    Some((templates, index))
}

/// What the binding and the CLI know of an algorithm of any collective.
#[derive(Clone, Debug)]
pub struct AlgorithmInfo {
    /// Names, parameters, summary, example.
    pub form: &'static Form,
    /// Whether it needs a topology.
    pub needs: Needs,
    /// The closed form, if any.
    pub cost: Option<&'static str>,
    /// `(property, when)` for every promised property.
    pub guarantees: Vec<(Property, &'static str)>,
}

/// A collective and its algorithms, for the binding and the CLI.
#[derive(Clone, Copy, Debug)]
pub struct CollectiveInfo {
    /// `allreduce`.
    pub name: &'static str,
    /// One line of description.
    pub summary: &'static str,
    /// Its algorithms.
    pub algorithms: fn() -> Vec<AlgorithmInfo>,
}

/// The descriptions of a collective's algorithms.
pub fn infos<F: Family>() -> Vec<AlgorithmInfo> {
    F::algorithms()
        .iter()
        .map(|e| AlgorithmInfo {
            form: &e.form,
            needs: e.needs,
            cost: e.cost.as_ref().map(|c| c.formula),
            guarantees: e.guarantees.iter().map(|g| (g.property, g.when)).collect(),
        })
        .collect()
}

/// Every collective with generators.
pub const COLLECTIVES: &[CollectiveInfo] = &[
    CollectiveInfo {
        name: crate::collectives::allreduce::Allreduce::NAME,
        summary: "every rank ends with the reduction of every rank's vector",
        algorithms: infos::<crate::collectives::allreduce::Allreduce>,
    },
    CollectiveInfo {
        name: crate::collectives::alltoall::Alltoall::NAME,
        summary: "every rank j ends with rank i's block j at block i, for every rank i",
        algorithms: infos::<crate::collectives::alltoall::Alltoall>,
    },
    CollectiveInfo {
        name: crate::collectives::halo::Halo::NAME,
        summary: "every rank's halo ends with its neighbours' boundary sites (3-D decomposition)",
        algorithms: infos::<crate::collectives::halo::Halo>,
    },
];

/// The collective named `name`.
pub fn collective(name: &str) -> Result<&'static CollectiveInfo, ScheduleError> {
    COLLECTIVES
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(|| ScheduleError::UnknownName {
            what: "collective",
            name: name.to_string(),
            accepted: COLLECTIVES.iter().map(|c| c.name.to_string()).collect(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Slice, Slot, ANY_SOURCE};

    /// Even ranks send to `rank XOR 1`, odd ranks receive from it.
    fn build(r: Rank, p: &mut Program) {
        if r.is_multiple_of(2) {
            p.send(r ^ 1, 0, Slice::new(Slot::Input, 0, 1));
        } else {
            p.recv(r ^ 1, 0, Slice::new(Slot::Output, 0, 1));
        }
    }

    fn even_odd(ranks: [Vec<Rank>; 3], rules: Vec<PeerRule>) -> RankClasses {
        let [even, odd, none] = ranks;
        RankClasses {
            class_of: Box::new(|first, out| {
                for (r, c) in (first..).zip(out) {
                    *c = r % 2;
                }
            }),
            classes: vec![
                ClassDecl {
                    ranks: even,
                    rules: rules.clone(),
                },
                ClassDecl {
                    ranks: none,
                    rules: Vec::new(),
                },
                ClassDecl { ranks: odd, rules },
            ],
        }
    }

    #[test]
    fn class_templates_check_every_listed_rank() {
        let xor = vec![PeerRule::Xor(1)];
        // Class 1 lists no rank: it maps past the templates (an error if a rank is of it).
        let rc = even_odd([vec![0, 6], vec![], vec![]], xor.clone());
        let (t, index) = class_templates(&rc, 8, build).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(index, [0, 1, 1]);
        assert_eq!(t[0].rank(), 0);
        // A listed rank of another class, past the last rank, or whose program differs (rank
        // 1 of class 0 by the class function is odd: class 1) or whose peer breaks the rule.
        for ranks in [vec![0, 1], vec![0, 8], vec![8]] {
            let rc = even_odd([ranks, vec![], vec![]], xor.clone());
            assert!(class_templates(&rc, 8, build).is_none());
        }
        let rc = even_odd([vec![0, 2], vec![], vec![]], vec![PeerRule::Shift(1)]);
        assert!(class_templates(&rc, 8, build).is_some());
        let rc = even_odd([vec![0, 2], vec![], vec![]], vec![PeerRule::Const(1)]);
        assert!(class_templates(&rc, 8, build).is_none());
        let rc = even_odd(
            [vec![0], vec![], vec![]],
            vec![PeerRule::Xor(1), PeerRule::Const(ANY_SOURCE)],
        );
        assert!(class_templates(&rc, 8, build).is_none());
    }
}
